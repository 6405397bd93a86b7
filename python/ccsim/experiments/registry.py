"""The experiment registry: :class:`Experiment` (a paper's figure as code), its :class:`Claim` rows,
and the name -> experiment table that ``ccsim reproduce`` and ``ccsim report`` look names up in."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ccsim.errors import CcsimError

__all__ = ["Claim", "Verdict", "CLAIM_KINDS", "within", "Experiment", "register", "get", "names", "all_experiments", "papers", "of_paper",
           "EXPERIMENT_FILE"]

EXPERIMENT_FILE = "experiment.json"  # written by `ccsim reproduce`: {"name": ..., "quick": ...}


@dataclass(frozen=True)
class Verdict:
    """Whether a claim holds in our runs: ``holds`` None when it cannot be judged; ``reason`` says
    by how much, against which tolerance. ``partly`` (with ``holds`` False) marks a claim whose
    declared partial rule holds (e.g. the direction right, the size outside the tolerance): the
    rule is part of the claim's tolerance, stated before the run."""

    holds: bool | None
    reason: str
    partly: bool = False

    @property
    def label(self) -> str:
        if self.partly and self.holds is False:
            return "partly"
        return {True: "agrees", False: "differs", None: "not judged"}[self.holds]

    def __str__(self) -> str:
        return f"{self.label}: {self.reason}" if self.reason else self.label

    @classmethod
    def from_text(cls, text: str) -> "Verdict":
        """A verdict written as text: "reproduced[: detail]" or "agrees..." holds, "partly[: why]" holds
        in part, "differs[: cause]" does not; anything else cannot be judged."""
        head, _, reason = text.partition(":")
        word = head.strip().split(" ")[0]
        if word == "partly":
            return cls(False, reason.strip(), partly=True)
        holds = {"reproduced": True, "agrees": True, "differs": False}.get(word)
        if holds is True and head.strip() not in ("reproduced", "agrees"):
            reason = (head.strip().partition(" ")[2] + (": " + reason.strip() if reason else "")).strip()
        return cls(holds, reason.strip() if holds is not None else text)


CLAIM_KINDS = ("paper", "model", "sensitivity")


@dataclass(frozen=True)
class Claim:
    """One row of an experiment's claims table: what the paper says, what we measure, and whether
    the two agree.

    ``ours(sweep_result)`` returns the measured value as display text (or a number); ``where`` cites
    the paper's figure, table or section the value comes from; ``tolerance`` states up front how close
    ours must be (docs/reports.md); ``verdict(sweep_result)`` returns a :class:`Verdict`, or the text
    "reproduced[: detail]" / "partly: <why>" / "differs: <cause>" (a claim without one is informative
    only, e.g. a sensitivity, and shows "not judged").

    ``id`` names the row on the generated pages (``{{ours:EXPERIMENT:ID}}``) and in the recorded
    verdicts; ``kind`` says what is compared: ``"paper"`` (a claim of the paper, counted in its tally),
    ``"model"`` (an analytic model against the simulator, counted apart) or ``"sensitivity"`` (a row
    that shows how a result moves with a setting, never counted); ``reason`` is the one line tying the
    metric, window and tolerance to the paper's text, fixed before the run.
    """

    description: str
    paper: str
    ours: Callable[[Any], Any]
    where: str = ""
    verdict: Callable[[Any], "Verdict | str"] | None = None
    tolerance: str = ""
    id: str = ""
    kind: str = "paper"
    reason: str = ""

    def __post_init__(self) -> None:
        if self.kind not in CLAIM_KINDS:
            raise ValueError(f"claim {self.description!r}: kind {self.kind!r} is not one of {', '.join(CLAIM_KINDS)}")

    def judge(self, sweep: Any) -> Verdict:
        if self.verdict is None:
            return Verdict(None, "no tolerance set for this claim")
        try:
            verdict = self.verdict(sweep)
        except Exception as e:  # a point missing in --quick: the row says so, the report still renders
            return Verdict(None, f"{type(e).__name__}: {e}")
        return verdict if isinstance(verdict, Verdict) else Verdict.from_text(str(verdict))


def within(measure: Callable[[Any], float], paper_value: float, tolerance: float, unit: str) -> Callable[[Any], Verdict]:
    """A verdict: ``measure(sweep)`` within ``tolerance`` (same unit) of ``paper_value``."""

    def verdict(sweep: Any) -> Verdict:
        x = float(measure(sweep))
        diff = x - paper_value
        return Verdict(abs(diff) <= tolerance, f"{diff:+.1f} {unit} from the paper (tolerance \u00b1{tolerance:g} {unit})")

    return verdict


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
    paper_key: str = ""  # the paper this reproduces, for `ccsim reproduce --paper KEY` (chd, leith, limit, budzisz, binomial)
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
