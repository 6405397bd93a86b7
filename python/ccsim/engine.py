"""The compiled engine ``ccsim._core``: loading it, its algorithm catalogue, its check of a scenario,
building a Simulation, the revision built into it.

The one door to the extension for the rest of the package (``scenario``, ``runner``, ``result``,
``sweep``, ``cli``; ``tests/test_python_import_graph.py`` fails on another); it imports nothing heavy,
so ``ccsim validate`` and ``ccsim list`` stay quick. The models of :mod:`ccsim.scenario` work without
the extension (pure-Python use): :func:`known_algorithms` is then None and :func:`check_scenario`
checks nothing.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType
from typing import Any, Protocol

from ccsim.errors import CcsimError, ScenarioError

__all__ = ["load_core", "algorithms", "known_algorithms", "check_scenario", "build_simulation", "built_revision"]


class ResolvedScenario(Protocol):
    """What the engine needs of a :class:`ccsim.scenario.Scenario` (named here without importing it:
    the scenario module imports this one)."""

    @property
    def resolved_json(self) -> str: ...

    def user_field(self, engine_field: str) -> str: ...


def load_core() -> ModuleType:
    """The compiled engine, or a CcsimError saying how to build it."""
    core, error = _import_core()
    if core is None:
        raise CcsimError(f"the compiled engine ccsim._core is not available ({error}); build it with `pip install -e .`")
    return core


@functools.cache
def _import_core() -> tuple[ModuleType | None, str]:
    """The extension and "", or None and why it could not be imported."""
    try:
        return importlib.import_module("ccsim._core"), ""
    except ImportError as e:
        return None, str(e)


def algorithms() -> list[dict[str, Any]]:
    """Every built-in algorithm: name, summary, reference, params (name, unit, default, range, doc)."""
    return list(load_core().algorithms())


@functools.cache
def known_algorithms() -> tuple[str, ...] | None:
    """Names registered in the engine, or None when the extension is not importable."""
    core, _ = _import_core()
    return None if core is None else tuple(a["name"] for a in core.algorithms())


def check_scenario(scenario: ResolvedScenario) -> None:
    """The engine's own check of the resolved document (``_core.validate_resolved``: its types and
    invariants, the algorithms' parameters), its error named by the user's key; nothing when the
    extension is not importable."""
    core, _ = _import_core()
    if core is None:
        return
    try:
        core.validate_resolved(scenario.resolved_json)
    except ScenarioError as e:
        raise e.with_field(scenario.user_field(e.field)) from None


def validate_resolved_json(document: str) -> None:
    """The engine's check of a resolved document given as JSON text (a recorded ``meta.json``'s),
    raising ScenarioError with the engine's field; nothing when the extension is not importable."""
    core, _ = _import_core()
    if core is not None:
        core.validate_resolved(document)


def build_simulation(scenario: ResolvedScenario, seed: int) -> Any:
    """An engine Simulation for ``scenario``; the engine re-validates and raises ScenarioError."""
    return load_core().Simulation(scenario.resolved_json, seed)


def built_revision() -> str | None:
    """The commit built into the extension (for an installed wheel), or None (no extension, or one
    built before the revision was built in)."""
    revision = getattr(_import_core()[0], "GIT_REVISION", None)
    return revision if isinstance(revision, str) and revision else None
