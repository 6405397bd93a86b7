"""``ccsim.run``: resolve a scenario, check its cost against the budget, drive the engine in chunks,
wrap its output in a Result.

The engine runs with the GIL released inside ``run_until``; stepping it in 1/100ths of the simulated
duration costs nothing measurable and lets a progress bar (and Ctrl-C) get a look in between chunks.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable

from ccsim.budget import (DEFAULT_BUDGET, MEMORY_HINT, PY_BYTES_PER_CELL, RAISE_HINT, Budget, Estimate, check, estimate_simulation,
                          event_limit, events_field, memory_limit)
from ccsim.engine import algorithms, build_simulation, load_core
from ccsim.arguments import path_argument
from ccsim.errors import ArgumentError, BudgetError, ResourceError, ScenarioError
from ccsim.files import MAX_TEXT_BYTES
from ccsim.progress import ProgressBar
from ccsim.result import Result
from ccsim.scenario import Scenario, read_scenario_text

# algorithms, load_core and build_simulation live in ccsim.engine; importable from here as before
__all__ = ["run", "run_toml", "simulate", "algorithms", "load_core", "scenario_source", "build_simulation"]

PROGRESS_CHUNKS = 100
PROGRESS_AFTER_S = 1.0  # show a bar only for runs that take longer than this (wall clock)


def scenario_source(scenario: Scenario | str | Path) -> tuple[Scenario, str]:
    """The validated Scenario and the TOML text it came from (dumped, for a Scenario object).

    A ``Path`` (any ``os.PathLike``) is a file; a ``str`` is a file name too, unless it holds a line
    break, which only TOML text does (``ccsim.run("loss=0.01.toml")`` reads that file). Pass text
    explicitly with :func:`run_toml` / ``Scenario.from_toml_str``.
    """
    if isinstance(scenario, Scenario):
        return scenario, scenario.to_toml()
    if isinstance(scenario, str) and "\n" in scenario:
        return _from_text(scenario), scenario
    if isinstance(scenario, (str, os.PathLike)):
        scenario = path_argument(scenario, "scenario")
        text = read_scenario_text(scenario)
        return Scenario.from_toml_str(text, source=str(scenario)), text
    raise ArgumentError(f"scenario: must be a ccsim.Scenario, a file path (str or pathlib.Path) or, with ccsim.run_toml, "
                        f"TOML text; got {type(scenario).__name__}")


def _from_text(text: str) -> Scenario:
    if len(text) > MAX_TEXT_BYTES:
        raise ScenarioError("<string>", f"too large ({len(text)} characters; the limit is {MAX_TEXT_BYTES})")
    return Scenario.from_toml_str(text)


def run(scenario: Scenario | str | Path, seed: int | None = None, progress: bool = False,
        budget: Budget | None = DEFAULT_BUDGET) -> Result:
    """Simulate ``scenario`` (a Scenario or a TOML file path; see :func:`scenario_source`) and return
    its Result.

    ``seed`` overrides ``run.seed``. With ``progress=True`` a progress bar appears on stderr once the
    run has taken more than a second. A run whose estimated cost exceeds ``budget`` is refused with a
    BudgetError before it starts; ``budget=None`` lifts the limits (docs/safety.md).
    """
    model, toml_text = scenario_source(scenario)
    return simulate(model, toml_text, seed=seed, progress=progress, budget=budget)


def run_toml(text: str, seed: int | None = None, progress: bool = False, budget: Budget | None = DEFAULT_BUDGET) -> Result:
    """:func:`run` for a scenario given as TOML text."""
    if not isinstance(text, str):
        raise ArgumentError(f"text: must be TOML text (str); got {type(text).__name__}")
    return simulate(_from_text(text), text, seed=seed, progress=progress, budget=budget)


def simulate(model: Scenario, toml_text: str, seed: int | None = None, progress: bool = False,
             budget: Budget | None = DEFAULT_BUDGET, announce: Callable[[Estimate], Any] | None = None,
             memory_share: float = 1.0, provenance: bool = True) -> Result:
    """``run`` for a scenario already loaded, with the TOML text to record in ``meta.json``.
    ``announce`` is called with the cost estimate once it has passed the budget, before the run.
    The engine meters the run against ``budget`` as it goes (events, memory; ``memory_share`` of the
    machine's free memory: see :func:`ccsim.budget.memory_limit`). ``provenance=False`` leaves the
    git revision and the package versions out of ``meta`` (a sweep worker, which keeps only the
    summaries, saves looking them up)."""
    if not isinstance(model, Scenario):
        raise ArgumentError(f"model: must be a ccsim.Scenario; got {type(model).__name__}")
    seed = model.run.seed if seed is None else seed
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ScenarioError("seed", f"must be an integer in [0, 2^64), got {seed!r}")
    if budget is not None and not isinstance(budget, Budget):
        raise ArgumentError(f"budget: must be a ccsim.budget.Budget or None; got {type(budget).__name__}")
    started = time.perf_counter()
    cpu_started = time.process_time()
    sim = build_simulation(model, seed)
    cost = check(estimate_simulation(sim), model, budget)
    memory_ceiling = memory_limit(budget, memory_share)
    sim.set_memory_limit(memory_ceiling, PY_BYTES_PER_CELL)
    sim.set_event_limit(event_limit(budget), events_field(cost))
    if announce is not None:
        announce(cost)
    duration_ns = model.run.duration_ns
    step_ns = max(1, -(-duration_ns // PROGRESS_CHUNKS))
    bar = ProgressBar("simulating", duration_ns / 1e9, "s simulated", decimals=1, enabled=progress,
                      delay_s=PROGRESS_AFTER_S, started=started)
    try:
        with bar:
            for t_ns in range(step_ns, duration_ns + step_ns, step_ns):
                sim.run_until(min(t_ns, duration_ns))
                bar.update(min(t_ns, duration_ns) / 1e9)
            raw = sim.finish()
        wall_time_s = time.perf_counter() - started
        # CPU spent by the engine (building, running, collecting tables): what "a run costs" means,
        # apart from Python's start-up and the imports of pandas/pyarrow/matplotlib.
        raw.setdefault("stats", {})["engine_cpu_s"] = time.process_time() - cpu_started
        return Result.from_engine(raw, model, toml_text=toml_text, seed=seed, wall_time_s=wall_time_s, provenance=provenance)
    except BudgetError as e:  # the engine's event ceiling: name the user's key and how to raise it
        raise BudgetError(model.user_field(e.field), f"{e.reason}; {RAISE_HINT}") from None
    except MemoryError as e:  # Python's copy of the tables (the engine raises ResourceError itself)
        if isinstance(e, ResourceError):
            if budget is not None and memory_ceiling == budget.max_memory_bytes:  # the budget, not the machine
                raise ResourceError(f"{e}; {MEMORY_HINT}") from None
            raise
        raise ResourceError(f"out of memory: the run's tables did not fit ({cost.describe()} estimated)") from None
