"""``ccsim.run``: resolve a scenario, drive the engine in chunks, wrap its output in a Result.

The engine runs with the GIL released inside ``run_until``; stepping it in 1/100ths of the simulated
duration costs nothing measurable and lets a progress bar (and Ctrl-C) get a look in between chunks.
"""

from __future__ import annotations

import time
from pathlib import Path

from ccsim.engine import algorithms, build_simulation, load_core
from ccsim.errors import ScenarioError
from ccsim.progress import ProgressBar
from ccsim.result import Result
from ccsim.scenario import Scenario, load_scenario, read_scenario_text

# algorithms, load_core and build_simulation live in ccsim.engine; importable from here as before
__all__ = ["run", "simulate", "algorithms", "load_core", "scenario_source", "build_simulation"]

PROGRESS_CHUNKS = 100
PROGRESS_AFTER_S = 1.0  # show a bar only for runs that take longer than this (wall clock)


def scenario_source(scenario: Scenario | str | Path) -> tuple[Scenario, str]:
    """The validated Scenario and the TOML text it came from (dumped, for a Scenario object)."""
    if isinstance(scenario, Scenario):
        return scenario, scenario.to_toml()
    if isinstance(scenario, str) and ("\n" in scenario or "=" in scenario):
        return load_scenario(scenario), scenario
    text = read_scenario_text(scenario)
    return Scenario.from_toml_str(text, source=str(scenario)), text


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
    bar = ProgressBar("simulating", duration_ns / 1e9, "s simulated", decimals=1, enabled=progress,
                      delay_s=PROGRESS_AFTER_S, started=started)
    with bar:
        for t_ns in range(step_ns, duration_ns + step_ns, step_ns):
            sim.run_until(min(t_ns, duration_ns))
            bar.update(min(t_ns, duration_ns) / 1e9)
        raw = sim.finish()
    wall_time_s = time.perf_counter() - started
    # CPU spent by the engine (building, running, collecting tables): what "a run costs" means,
    # apart from Python's start-up and the imports of pandas/pyarrow/matplotlib.
    raw.setdefault("stats", {})["engine_cpu_s"] = time.process_time() - cpu_started
    return Result.from_engine(raw, model, toml_text=toml_text, seed=seed, wall_time_s=wall_time_s)
