"""Per-run time series for experiments whose claims need more than a sweep's tables.

A sweep keeps per-interval flow and link tables but not the algorithms' own metrics (RTTmin, RE,
v_target): an experiment that plots those re-runs one repetition of a point (runs are deterministic
per seed, so this is the same run) and keeps the result on the sweep object for the other claims.
"""

from __future__ import annotations

from typing import Any

import ccsim

__all__ = ["point_runs", "metric_series"]


def point_runs(sweep: Any, repetition: int = 0) -> dict[str, Any]:
    """{point_id: (overrides, Result)} for one repetition of every point of the sweep's plan."""
    cache = getattr(sweep, "_ccsim_traces", None)
    if cache is None:
        cache = {}
        try:
            setattr(sweep, "_ccsim_traces", cache)
        except AttributeError:
            pass
    if repetition not in cache:
        plan = sweep.plan
        seed = plan.seed_for(repetition) if plan.seed is not None else None
        cache[repetition] = {p.point_id: (p.overrides, ccsim.run(plan.scenario(p.point_id), seed=seed)) for p in plan.points()}
    return cache[repetition]


def metric_series(result: Any, name: str, flow: int | None = None) -> Any:
    """The ``cc_metrics`` rows of metric ``name`` (time_s, flow, value), optionally of one flow."""
    m = result.cc_metrics
    rows = m[m["name"] == name]
    if flow is not None:
        rows = rows[rows["flow"] == flow]
    return rows[["time_s", "flow", "value"]]
