"""Budgets up front: what a run or a sweep will cost, estimated before it starts, and the limits a
legal but ruinous scenario is refused at (docs/safety.md).

The engine estimates its own cost (``Simulation.estimate_cost``, ``crates/ccsim-core/src/sim/cost.rs``:
events, samples, table values, its memory, each split by the resolved field that drives it); this
module owns the limits, the price of the front end's copy of the tables, and the message. A refusal
is one :class:`~ccsim.errors.BudgetError` naming the key of the scenario to change, with the
estimate; ``budget=None`` (Python) lifts the limits.

The same limits hold while the run goes: the engine counts its events against ``max_events`` and
meters its memory against ``max_memory_bytes`` (and the machine's free memory), and stops the run
with a BudgetError or a ResourceError when it reaches them (``crates/ccsim-core/src/sim/meter.rs``).
``--ignore-budget`` (``Budget(refuse_up_front=False)``) skips the refusal on the estimate, which is
an order of magnitude, not the meter; ``--max-events`` / ``--max-memory`` raise the limits themselves.
"""

from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ccsim.engine import build_simulation
from ccsim.errors import ArgumentError, BudgetError

if TYPE_CHECKING:
    from ccsim.scenario import Scenario

__all__ = ["Budget", "DEFAULT_BUDGET", "Estimate", "estimate", "estimate_simulation", "check", "check_sweep_size",
           "ENGINE_EVENTS_PER_S", "PY_BYTES_PER_CELL", "LIFT_HINT", "RAISE_HINT", "MEMORY_HINT", "format_bytes", "memory_limit",
           "event_limit", "free_memory_bytes", "events_field"]

# Engine throughput on the project's machines (docs/performance.md): 5-10 million events per second
# of CPU for the examples, tables included; the lower figure, so a time estimate errs long.
ENGINE_EVENTS_PER_S = 5e6
# Peak memory of one table value in the front end, on top of the engine's own 8 bytes: the Python
# list the engine hands over, the pandas column and the Parquet writer's buffer. Measured with
# ru_maxrss over runs of 4e6 and 1.5e7 values (50-60 bytes a value, engine included).
PY_BYTES_PER_CELL = 48
LIFT_HINT = ("pass --ignore-budget to start it anyway (it then stops if it really reaches the limit), "
             "or raise the limit with --max-events / --max-memory (budget=None in Python lifts it)")
MEMORY_HINT = "raise the limit with --max-memory SIZE (Budget(max_memory_bytes=...) in Python)"
RAISE_HINT = "raise the limit with --max-events N or --max-events inf (Budget(max_events=...) or budget=None in Python)"


@dataclass(frozen=True)
class Budget:
    """The limits of one run (events, memory) and of one sweep (runs). The defaults are about two
    orders of magnitude above the examples and the registered experiments.

    ``refuse_up_front``: refuse a run whose estimate, or a sweep whose size, is over the limits before
    it starts. False (``--ignore-budget``) starts it anyway; the engine still stops a run that really
    processes more than ``max_events`` events or holds more than ``max_memory_bytes``. ``math.inf``
    lifts a limit."""

    max_events: float = 1e9  # about 3 minutes of engine CPU at ENGINE_EVENTS_PER_S
    max_memory_bytes: float = 4 * 2**30
    max_sweep_runs: int = 100_000
    refuse_up_front: bool = True

    def __post_init__(self) -> None:
        # A NaN limit would compare False against every estimate and lift the limit silently; a
        # string would fail later, inside the run, as a bare TypeError.
        for name in ("max_events", "max_memory_bytes", "max_sweep_runs"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value > 0:
                raise ArgumentError(f"{name}: must be a number > 0, or math.inf for no limit; got {value!r}")
        if not isinstance(self.refuse_up_front, bool):
            raise ArgumentError(f"refuse_up_front: must be True or False; got {self.refuse_up_front!r}")


DEFAULT_BUDGET = Budget()


@dataclass(frozen=True)
class Estimate:
    """The estimated cost of one run (see the engine's ``cost.rs`` for the model)."""

    events: float
    samples: float
    table_cells: float
    web_transfers: float
    memory_bytes: float
    # (resolved field, events, memory bytes) for each field that drives a part of the cost
    drivers: tuple[tuple[str, float, float], ...]

    @property
    def cpu_s(self) -> float:
        """Engine CPU time at the measured rate."""
        return self.events / ENGINE_EVENTS_PER_S

    def describe(self) -> str:
        """``4.2e+09 events (~14 min of engine CPU), 37 GB of memory``."""
        return f"{_count(self.events)} events (~{_duration(self.cpu_s)} of engine CPU), {format_bytes(self.memory_bytes)} of memory"


def estimate_simulation(sim: Any) -> Estimate:
    """The estimate of an engine ``Simulation`` that has not run yet."""
    raw = sim.estimate_cost()
    drivers = tuple(
        (d["field"], float(d["events"]), float(d["engine_bytes"]) + PY_BYTES_PER_CELL * float(d["cells"]))
        for d in raw["drivers"]
    )
    cells = float(raw["series_cells"]) + float(raw["summary_cells"])
    return Estimate(
        events=float(raw["events"]),
        samples=float(raw["samples"]),
        table_cells=cells,
        web_transfers=float(raw["web_transfers"]),
        memory_bytes=float(raw["engine_bytes"]) + PY_BYTES_PER_CELL * cells,
        drivers=drivers,
    )


def estimate(scenario: "Scenario") -> Estimate:
    """The estimate for ``scenario`` (builds the engine's Simulation, which also validates it)."""
    return estimate_simulation(build_simulation(scenario, scenario.run.seed))


def check(cost: Estimate, scenario: "Scenario", budget: Budget | None = DEFAULT_BUDGET) -> Estimate:
    """``cost`` if it is within ``budget`` (``None``: no limit); else a BudgetError naming the key of
    ``scenario`` that drives the largest part of what is over. A budget that does not refuse up front
    passes every estimate (the engine meters the run against it instead)."""
    if budget is None or not budget.refuse_up_front:
        return cost
    over = []
    if cost.events > budget.max_events:
        over.append((1, f"{_count(budget.max_events)} events"))
    if cost.memory_bytes > budget.max_memory_bytes:
        over.append((2, f"{format_bytes(budget.max_memory_bytes)} of memory"))
    if not over:
        return cost
    which = over[0][0]  # events first: a run that takes forever is refused for that
    total = cost.events if which == 1 else cost.memory_bytes
    field, part = max(((f, e if which == 1 else m) for f, e, m in cost.drivers), key=lambda d: d[1])
    key = scenario.user_field(field)
    limits = " and ".join(text for _, text in over)
    share = f"{100 * part / total:.0f} %" if total > 0 and math.isfinite(total) else "most"
    raise BudgetError(
        key,
        f"over the run budget: estimated {cost.describe()}, above the limit of {limits} "
        f"({share} of the {'events' if which == 1 else 'memory'} from this key); {LIFT_HINT}",
    )


def check_sweep_size(points: int, repetitions: int, budget: Budget | None, field: str) -> None:
    """A plan of ``points`` x ``repetitions`` runs, refused before its points are expanded if that is
    more than ``budget.max_sweep_runs``; the error names ``field`` (the grid or the points), or
    ``sweep.repetitions`` when the points alone are within the limit."""
    if budget is None or not budget.refuse_up_front:
        return
    runs = points * repetitions
    if runs > budget.max_sweep_runs:
        raise BudgetError(
            field if points > budget.max_sweep_runs else "sweep.repetitions",
            f"over the sweep budget: {_count(points)} points x {repetitions} repetitions = {_count(runs)} runs, "
            f"above the limit of {_count(budget.max_sweep_runs)} runs; {LIFT_HINT}",
        )


def memory_limit(budget: Budget | None, share: float = 1.0) -> float | None:
    """What a run may take as it grows, metered by the engine (``Simulation.set_memory_limit``): the
    budget's memory, and never more than 80 % of what the machine has free now (the free memory, and
    the address-space limit of ``ulimit -v``), so a run whose budget was lifted, or one the estimate
    misjudged, ends with a ResourceError instead of being killed or aborted. ``share``: the part of
    the free memory this run may count on (``1/jobs`` for one of ``jobs`` sweep workers running at
    once on this machine). None: nothing known."""
    limits = [budget.max_memory_bytes] if budget is not None and math.isfinite(budget.max_memory_bytes) else []
    free = free_memory_bytes()
    if free is not None:
        limits.append(0.8 * free * share)
    return min(limits) if limits else None


def event_limit(budget: Budget | None) -> int | None:
    """How many events a run may process before the engine stops it: the budget's ``max_events``
    (None: no limit)."""
    if budget is None or not math.isfinite(budget.max_events):
        return None
    return max(0, int(budget.max_events))


def events_field(cost: Estimate) -> str:
    """The resolved field that drives most of the estimated events (``duration_ns`` if none does)."""
    if not cost.drivers:
        return "duration_ns"
    return max(cost.drivers, key=lambda d: d[1])[0]


def free_memory_bytes() -> float | None:
    """Memory this process can still take: the system's available memory (Linux ``MemAvailable``),
    and the room left under ``RLIMIT_AS`` (``ulimit -v``): the limit minus the **resident** memory.
    Not minus the address space in use (``VmSize``): the engine's allocator (mimalloc) reserves a
    1 GiB arena at import when the limit allows it, which the run's own allocations then fill
    without growing the address space; counted as used, it made the room under ``ulimit -v 2000000``
    (587 MB) barely more than under ``ulimit -v 1000000`` (506 MB, no arena), refusing ordinary runs.
    None where neither is known."""
    candidates = []
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    candidates.append(float(line.split()[1]) * 1024)
                    break
    except OSError:
        pass
    try:
        import resource  # lazy: POSIX only

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            with open("/proc/self/statm", encoding="ascii") as f:  # size resident shared ... (pages)
                used = float(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            candidates.append(max(0.0, soft - used))
    except (ImportError, OSError, ValueError):
        pass
    return min(candidates) if candidates else None


def format_bytes(n: float) -> str:
    """``4.0 GiB``, ``37 TiB``, ``812 kiB``."""
    if not math.isfinite(n):
        return "unbounded"
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("kiB", 2**10)):
        if n >= size:
            value = n / size
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.3g} {unit}" if value < 1000 else f"{value:.2e} {unit}"
    return f"{n:.0f} B"


def _count(n: float) -> str:
    """``812``, ``4.2e+09``."""
    return f"{n:.0f}" if n < 1e6 else f"{n:.2g}"


def _duration(seconds: float) -> str:
    """``0.4 s``, ``14 min``, ``3.2e+05 years``."""
    if not math.isfinite(seconds):
        return "forever"
    for unit, size in (("years", 365 * 86400), ("days", 86400), ("h", 3600), ("min", 60), ("s", 1)):
        if seconds >= size:
            value = seconds / size
            return f"{value:.1f} {unit}" if value < 10 else f"{_count(value)} {unit}"
    return f"{seconds:.1g} s"
