"""``ccsim.run``: resolve a scenario, drive the engine in chunks, wrap its output in a Result.

The engine runs with the GIL released inside ``run_until``; stepping it in 1/100ths of the simulated
duration costs nothing measurable and lets a progress bar (and Ctrl-C) get a look in between chunks.
"""

from __future__ import annotations

import importlib
import json
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from ccsim.errors import CcsimError, ScenarioError
from ccsim.result import Result
from ccsim.scenario import Scenario, load_scenario, read_scenario_text

__all__ = ["run", "simulate", "algorithms", "load_core", "scenario_source", "build_simulation"]

PROGRESS_CHUNKS = 100
PROGRESS_AFTER_S = 1.0  # show a bar only for runs that take longer than this (wall clock)


def load_core() -> ModuleType:
    """The compiled engine, or a CcsimError saying how to build it."""
    try:
        return importlib.import_module("ccsim._core")
    except ImportError as e:
        raise CcsimError(f"the compiled engine ccsim._core is not available ({e}); build it with `pip install -e .`") from None


def algorithms() -> list[dict[str, Any]]:
    """Every built-in algorithm: name, summary, reference, params (name, unit, default, range, doc)."""
    return list(load_core().algorithms())


def scenario_source(scenario: Scenario | str | Path) -> tuple[Scenario, str]:
    """The validated Scenario and the TOML text it came from (dumped, for a Scenario object)."""
    if isinstance(scenario, Scenario):
        return scenario, scenario.to_toml()
    if isinstance(scenario, str) and ("\n" in scenario or "=" in scenario):
        return load_scenario(scenario), scenario
    text = read_scenario_text(scenario)
    return Scenario.from_toml_str(text, source=str(scenario)), text


def build_simulation(scenario: Scenario, seed: int) -> Any:
    """An engine Simulation for ``scenario``; the engine re-validates and raises ScenarioError."""
    return load_core().Simulation(json.dumps(scenario.resolve()), seed)


def run(scenario: Scenario | str | Path, seed: int | None = None, progress: bool = False) -> Result:
    """Simulate ``scenario`` (a Scenario, a TOML file path or TOML text) and return its Result.

    ``seed`` overrides ``run.seed``. With ``progress=True`` a progress bar appears on stderr once the
    run has taken more than a second.
    """
    model, toml_text = scenario_source(scenario)
    return simulate(model, toml_text, seed=seed, progress=progress)


def simulate(model: Scenario, toml_text: str, seed: int | None = None, progress: bool = False) -> Result:
    """``run`` for a scenario already loaded, with the TOML text to record in ``meta.json``."""
    seed = model.run.seed if seed is None else seed
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ScenarioError("seed", f"must be an integer in [0, 2^64), got {seed!r}")
    started = time.perf_counter()
    cpu_started = time.process_time()
    sim = build_simulation(model, seed)
    duration_ns = model.run.duration_ns
    step_ns = max(1, -(-duration_ns // PROGRESS_CHUNKS))
    with _Progress(enabled=progress, started=started, total_ns=duration_ns) as bar:
        for t_ns in range(step_ns, duration_ns + step_ns, step_ns):
            sim.run_until(min(t_ns, duration_ns))
            bar.update(min(t_ns, duration_ns))
        raw = sim.finish()
    wall_time_s = time.perf_counter() - started
    # CPU spent by the engine (building, running, collecting tables): what "a run costs" means,
    # apart from Python's start-up and the imports of pandas/pyarrow/matplotlib.
    raw.setdefault("stats", {})["engine_cpu_s"] = time.process_time() - cpu_started
    return Result.from_engine(raw, model, toml_text=toml_text, seed=seed, wall_time_s=wall_time_s)


class _Progress:
    """A rich progress bar on stderr that only appears once the run has lasted PROGRESS_AFTER_S."""

    def __init__(self, enabled: bool, started: float, total_ns: int) -> None:
        self._enabled = enabled
        self._started = started
        self._total_s = total_ns / 1e9
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> "_Progress":
        return self

    def update(self, now_ns: int) -> None:
        if not self._enabled:
            return
        if self._bar is None:
            if time.perf_counter() - self._started < PROGRESS_AFTER_S:
                return
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self._bar = Progress(
                TextColumn("simulating"),
                BarColumn(),
                TextColumn("{task.completed:.1f}/{task.total:.1f} s simulated"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._bar.start()
            self._task = self._bar.add_task("run", total=self._total_s, completed=now_ns / 1e9)
        self._bar.update(self._task, completed=now_ns / 1e9)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
