"""The compiled engine ``ccsim._core``: loading it, its algorithm catalogue, building a Simulation.

The one door to the extension for the rest of the package (``runner``, ``result``, ``sweep``, ``cli``);
it imports nothing heavy, so ``ccsim validate`` and ``ccsim list`` stay quick.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ccsim.errors import CcsimError

if TYPE_CHECKING:
    from ccsim.scenario import Scenario

__all__ = ["load_core", "algorithms", "build_simulation"]


def load_core() -> ModuleType:
    """The compiled engine, or a CcsimError saying how to build it."""
    try:
        return importlib.import_module("ccsim._core")
    except ImportError as e:
        raise CcsimError(f"the compiled engine ccsim._core is not available ({e}); build it with `pip install -e .`") from None


def algorithms() -> list[dict[str, Any]]:
    """Every built-in algorithm: name, summary, reference, params (name, unit, default, range, doc)."""
    return list(load_core().algorithms())


def build_simulation(scenario: "Scenario", seed: int) -> Any:
    """An engine Simulation for ``scenario``; the engine re-validates and raises ScenarioError."""
    return load_core().Simulation(scenario.resolved_json, seed)
