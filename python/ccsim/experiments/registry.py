"""The experiment registry: :class:`Experiment` (a paper's figure as code), its :class:`Claim` rows,
and the name -> experiment table that ``ccsim reproduce`` and ``ccsim report`` look names up in."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ccsim.errors import CcsimError

__all__ = ["Claim", "Experiment", "register", "get", "names", "all_experiments", "papers", "of_paper", "EXPERIMENT_FILE"]

EXPERIMENT_FILE = "experiment.json"  # written by `ccsim reproduce`: {"name": ..., "quick": ...}


@dataclass(frozen=True)
class Claim:
    """One row of an experiment's claims table: what the paper says and what we measure.

    ``ours(sweep_result)`` returns the measured value as display text (or a number); ``where`` cites
    the paper's figure, table or section the value comes from. ``tolerance`` states up front how
    close ours must be to count as reproduced; ``verdict(sweep_result)`` returns "reproduced" or
    "differs: <cause>" (None: the row is informative only, e.g. a sensitivity).
    """

    description: str
    paper: str
    ours: Callable[[Any], Any]
    where: str = ""
    tolerance: str = ""
    verdict: Callable[[Any], str] | None = None


@dataclass(frozen=True)
class Experiment:
    """A named experiment: ``plan(quick)`` builds the sweep, ``figures`` draws it, ``claims`` compare."""

    name: str
    title: str
    source: str  # the paper (authors, year, title) or other source reproduced
    description: str
    build_plan: Callable[[bool], Any]  # quick -> SweepPlan
    draw_figures: Callable[[Any, Path], list[Path]]  # (SweepResult, out_dir) -> paths written
    claims: tuple[Claim, ...] = field(default_factory=tuple)
    paper_key: str = ""  # the paper this reproduces, for `ccsim reproduce --paper KEY` (chd, leith, limit)
    figure: str = ""  # the figure or table of that paper ("Fig. 3")

    @property
    def paper(self) -> str:
        return self.source

    def plan(self, quick: bool = False) -> Any:
        """The SweepPlan: the full experiment, or with ``quick`` fewer points/repetitions and shorter runs."""
        return self.build_plan(quick)

    def figures(self, sweep_result: Any, out_dir: str | Path) -> list[Path]:
        """Draws the experiment's figures into ``out_dir`` (deterministic names) and returns their paths."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        return [Path(p) for p in self.draw_figures(sweep_result, out)]


_REGISTRY: dict[str, Experiment] = {}
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def register(experiment: Experiment, replace: bool = False) -> Experiment:
    """Adds ``experiment`` to the registry (a lowercase identifier name, unique unless ``replace``)."""
    if not _NAME.match(experiment.name):
        raise ValueError(f"experiment name {experiment.name!r}: use lowercase letters, digits and underscores")
    if experiment.name in _REGISTRY and not replace:
        raise ValueError(f"experiment {experiment.name!r} is already registered")
    _REGISTRY[experiment.name] = experiment
    return experiment


def get(name: str) -> Experiment:
    """The registered experiment called ``name``; CcsimError listing the known names otherwise."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise CcsimError(f"unknown experiment {name!r}; known: {', '.join(names()) or '(none)'}") from None


def names() -> list[str]:
    """Registered experiment names, sorted."""
    return sorted(_REGISTRY)


def all_experiments() -> list[Experiment]:
    return [_REGISTRY[n] for n in names()]


def papers() -> list[str]:
    """The paper keys of the registered experiments, sorted."""
    return sorted({e.paper_key for e in _REGISTRY.values() if e.paper_key})


def of_paper(key: str) -> list[Experiment]:
    """The registered experiments reproducing paper ``key``; CcsimError naming the known keys otherwise."""
    found = [e for e in all_experiments() if e.paper_key == key]
    if not found:
        raise CcsimError(f"--paper: unknown paper {key!r}; known: {', '.join(papers()) or '(none)'}")
    return found
