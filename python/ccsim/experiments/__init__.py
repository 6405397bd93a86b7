"""The experiment registry: named, reproducible experiments as code.

An :class:`Experiment` bundles what a paper's figure needs: a scenario builder and a sweep
(``plan(quick)`` -> ``ccsim.sweep.SweepPlan``), the figures drawn from the sweep's results
(``figures(sweep_result, out_dir)`` -> the PNG paths written), and ``claims``: the paper's numbers to
compare, each a row (description, paper value, function computing ours from the sweep) shown in the
report. ``ccsim reproduce NAME`` runs one (:func:`reproduce`)::

    >>> from ccsim import experiments
    >>> experiments.names()
    ['chd_loss_sweep', 'red_vs_droptail']
    >>> experiments.reproduce("chd_loss_sweep", out="runs/chd", quick=True)

Register a new one with :func:`register` from a module in this package (imported below) or from
your own code before calling :func:`reproduce`.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ccsim.errors import CcsimError

if TYPE_CHECKING:
    from ccsim.scenario import Scenario

__all__ = ["Claim", "Experiment", "register", "get", "names", "all_experiments", "reproduce", "scenario_with", "default_out"]


@dataclass(frozen=True)
class Claim:
    """One row of an experiment's claims table: what the paper says and what we measure.

    ``ours(sweep_result)`` returns the measured value as display text (or a number); ``where`` cites
    the paper's figure, table or section the value comes from.
    """

    description: str
    paper: str
    ours: Callable[[Any], Any]
    where: str = ""


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


def default_out(name: str, quick: bool = False) -> Path:
    """``runs/reproduce/<name>`` (``<name>-quick`` with ``--quick``)."""
    return Path("runs") / "reproduce" / (f"{name}-quick" if quick else name)


def reproduce(
    name: str | Experiment,
    out: str | Path | None = None,
    *,
    jobs: int | None = None,
    cluster: str | None = None,
    quick: bool = False,
    force: bool = False,
    resume: bool = False,
    progress: bool = True,
) -> Path:
    """Runs the experiment's sweep into ``out`` with a progress bar, draws its figures there and writes
    ``out/report.html`` with the claims table. Returns ``out``.

    The sweep directory follows ``ccsim sweep``'s rules (an existing one is refused unless ``force``
    or ``resume``); ``experiment.json`` records which experiment (and whether ``quick``) so that
    ``ccsim report out`` can redraw the same page later.
    """
    from ccsim.report import EXPERIMENT_FILE, write_report

    try:
        from ccsim.sweep import run_sweep
    except ImportError as e:
        raise CcsimError(f"reproduce needs ccsim.sweep ({e})") from None

    experiment = name if isinstance(name, Experiment) else get(name)
    out = Path(out) if out is not None else default_out(experiment.name, quick)
    plan = experiment.plan(quick)
    sweep_result = run_sweep(plan, out, jobs=jobs, cluster=cluster, resume=resume, progress=progress, force=force)
    doc = {"name": experiment.name, "title": experiment.title, "source": experiment.source, "quick": bool(quick)}
    (out / EXPERIMENT_FILE).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    experiment.figures(sweep_result, out)
    write_report(out, experiment=experiment)
    return out


# ---------------------------------------------------------------------------------------------------
# Helpers for experiment modules

_STEP = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)((?:\[\d+\])*)$")


def scenario_with(base: "Scenario", overrides: dict[str, Any]) -> "Scenario":
    """``base`` with each override applied: keys are dotted paths as in a sweep grid
    (``topology.loss``, ``flows[0].algorithm``, ``topology.queue``), values as written in TOML."""
    from ccsim.scenario import Scenario

    data = tomllib.loads(base.to_toml())
    for path, value in overrides.items():
        _set_path(data, path, value)
    return Scenario.from_dict(data)


def _set_path(data: dict[str, Any], path: str, value: Any) -> None:
    steps: list[str | int] = []
    for part in path.split("."):
        m = _STEP.match(part)
        if not m:
            raise CcsimError(f"{path}: not an override path (expected e.g. topology.loss or flows[0].algorithm)")
        steps.append(m.group(1))
        steps.extend(int(i) for i in re.findall(r"\[(\d+)\]", m.group(2)))
    node: Any = data
    for step in steps[:-1]:
        if isinstance(step, int):
            if not isinstance(node, list) or step >= len(node):
                raise CcsimError(f"{path}: index {step} is out of range")
            node = node[step]
        else:
            node = node.setdefault(step, {})
    last = steps[-1]
    if isinstance(last, int) and (not isinstance(node, list) or last >= len(node)):
        raise CcsimError(f"{path}: index {last} is out of range")
    node[last] = value


def rows_at(frame: Any, column: str, value: Any) -> Any:
    """Rows of ``frame`` whose ``column`` equals ``value`` (floats compared with a tolerance)."""
    import numpy as np

    if column not in frame:
        raise KeyError(f"column {column!r} not in the sweep results")
    if isinstance(value, float):
        return frame[np.isclose(frame[column].astype(float), value, rtol=1e-9, atol=1e-12)]
    return frame[frame[column] == value]


# The experiments shipped with ccsim register themselves on import.
from ccsim.experiments import chd_loss_sweep as _chd_loss_sweep  # noqa: E402,F401
from ccsim.experiments import red_vs_droptail as _red_vs_droptail  # noqa: E402,F401
