"""``ccsim testbed run``: one scenario on the namespace testbed, as a Result like the simulator's."""

from __future__ import annotations

import hashlib
import platform
import time
from typing import Callable
from pathlib import Path

from ccsim.engine import algorithms
from ccsim.errors import CcsimError, ScenarioError
from ccsim.kernel.build import build, ported_algorithms, program_hashes
from ccsim.kernel.check import missing_prerequisites
from ccsim.kernel.concurrency import TestbedBusyError, TestbedLock, other_testbeds
from ccsim.kernel.collect import tables_from_measurements
from ccsim.kernel.health import verdict
from ccsim.kernel.plan import default_serialise, not_reproduced, plan_from_resolved
from ccsim.kernel.testbed import run_testbed
from ccsim.result import Result, git_revision
from ccsim._version import __version__
from ccsim.runner import scenario_source
from ccsim.scenario import Scenario

__all__ = ["run_kernel"]


# what a run does when another testbed run holds the machine's lock (ccsim.kernel.concurrency)
BESIDE_OTHERS = ("refuse", "wait", "run")


def run_kernel(scenario: Scenario | str | Path, seed: int | None = None, progress: bool = False,
               builtin: str | None = None, serialise: bool | None = None, beside_others: str = "refuse",
               warn: Callable[[str], None] | None = None) -> Result:
    """Runs ``scenario`` on the namespace testbed (root, BPF struct_ops) and returns its Result.

    The scenario is checked (and refused, one line naming the feature) before anything is set up.
    ``builtin`` (e.g. ``"reno"``) runs every flow with that algorithm of the kernel itself instead of
    the scenario's twins: the reference a twin is compared with. ``serialise`` gives every frame its
    transmission time at the bottleneck, as the simulator's link (docs/kernel.md, "The testbed");
    None: serialised if a flow runs a twin of ``plan.SERIALISED_BY_DEFAULT`` (tcp_limit).
    ``beside_others`` says what to do when another testbed run holds the machine's lock: ``"refuse"``
    (a TestbedBusyError naming it), ``"wait"`` for it to end, or ``"run"`` beside it (recorded).
    ``warn`` receives, before anything is set up, one line per setting the testbed runs otherwise
    (plan.not_reproduced); they are kept in meta.json's ``kernel.not_reproduced``.
    """
    if beside_others not in BESIDE_OTHERS:
        raise CcsimError(f"beside_others: one of {', '.join(BESIDE_OTHERS)}, got {beside_others!r}")
    model, toml_text = scenario_source(scenario)
    seed = model.run.seed if seed is None else seed
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ScenarioError("seed", f"must be an integer in [0, 2^64), got {seed!r}")
    doc = model.resolve()
    plan = plan_from_resolved(doc, ported_algorithms(), builtin=builtin)
    named = not_reproduced(doc, builtin)
    for line in named:
        if warn is not None:
            warn(line)
    serialise_reason = "given" if serialise is not None else default_serialise(plan)
    serialise = bool(serialise_reason) if serialise is None else serialise
    missing = missing_prerequisites()
    if missing:
        raise CcsimError(f"kernel testbed: this machine lacks {missing[0].what} ({missing[0].fix}); see `ccsim testbed check`")
    with TestbedLock() as lock:
        try:
            lock.acquire(str(scenario) if isinstance(scenario, Path) else "(a scenario given as text)", wait=beside_others == "wait")
        except TestbedBusyError:
            if beside_others != "run":
                raise
        concurrent = {"lock_held_by_another_run": lock.holder() if not lock.held else None,
                      "other_testbeds_at_start": other_testbeds()}
        built = build()
        started = time.perf_counter()
        measurements = run_testbed(plan, built, algorithms(), seed, progress=progress, builtin=builtin,
                                   serialise=serialise)
        wall = time.perf_counter() - started
        concurrent["other_testbeds_at_end"] = other_testbeds()
    tables, run_summary = tables_from_measurements(measurements)
    meta = {
        "backend": "kernel",
        "ccsim_version": __version__,
        "git_revision": git_revision(),
        "seed": seed,
        "scenario": doc,
        "scenario_toml": toml_text,
        "algorithm_params": {f.name: {"algorithm": f.algorithm, "params": measurements.params_used.get(f.index, {})}
                             for f in plan.flows},
        "kernel": {
            "release": platform.release(),
            "version": platform.version(),
            "program_sha256": {} if builtin else program_hashes(built, [f.algorithm for f in plan.flows]),
            "builtin_algorithm": builtin,
            "serialise": serialise,
            "serialise_reason": serialise_reason,
            "not_reproduced": named,  # "given", a twin's reason (by default), or None
            "loader_sha256": hashlib.sha256(built.loader.read_bytes()).hexdigest(),
            "registrations": measurements.registrations,
            "bottleneck_tbf_rate_bps": measurements.tbf_rate_bps,
            "delay_line": measurements.delayline_totals,
            "sender_errors": measurements.sender_errors,
            "concurrency": concurrent,
            "health": verdict(measurements, concurrent),
        },
        "engine_stats": {},
        "wall_time_s": wall,
    }
    return Result(tables, run_summary, meta)
