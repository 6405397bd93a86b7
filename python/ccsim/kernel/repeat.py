"""``ccsim testbed run --repeat N``: the same scenario N times, and the spread of each summary metric.

A kernel run is not reproducible draw for draw (the machine's timing, the kernel's coin), so one run
says little about the next. The N runs are written as ``run-01`` ... ``run-NN`` (each a whole run
directory, for ``ccsim compare`` and ``ccsim report``) with ``repeats.csv``: per flow and for the
bottleneck, each metric's value in every run, its mean, minimum, maximum and max-min spread in
percent of the mean. Run i uses seed + i - 1 (the random loss's), as a simulator sweep over seeds.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["FLOW_METRICS", "LINK_METRICS", "spread_rows", "run_name"]

# (summary column, label, scale): what the summary table shows
FLOW_METRICS = [
    ("goodput_bps", "goodput (Mbit/s)", 1e-6),
    ("rtt_mean_ms", "RTT mean (ms)", 1.0),
    ("rtt_p95_ms", "RTT p95 (ms)", 1.0),
    ("retransmits", "retransmits", 1.0),
    ("timeouts", "timeouts", 1.0),
]
LINK_METRICS = [
    ("utilisation", "utilisation (%)", 100.0),
    ("qdelay_mean_ms", "queueing delay mean (ms)", 1.0),
    ("drops_queue", "queue drops", 1.0),
]


def run_name(i: int, n: int) -> str:
    """``run-01`` ... (the width of n's digits, at least two)."""
    return f"run-{i:0{max(2, len(str(n)))}d}"


def _stats(scope: str, label: str, values: list[float]) -> dict[str, Any]:
    finite = [v for v in values if not math.isnan(v)]
    mean = sum(finite) / len(finite) if finite else math.nan
    lo, hi = (min(finite), max(finite)) if finite else (math.nan, math.nan)
    return {"scope": scope, "metric": label, "runs": len(finite), "mean": mean, "min": lo, "max": hi,
            "spread_pct": (hi - lo) / abs(mean) * 100 if finite and mean else math.nan,
            "values": values}


def spread_rows(results: list[Any]) -> list[dict[str, Any]]:
    """Per flow (by name) and for the bottleneck: each metric over the runs ``results`` (Results)."""
    rows = []
    names = list(results[0].summary["name"])
    for name in names:
        for column, label, scale in FLOW_METRICS:
            values = []
            for r in results:
                row = r.summary[r.summary["name"] == name]
                values.append(float(row.iloc[0][column]) * scale if len(row) and row.iloc[0][column] is not None else math.nan)
            rows.append(_stats(str(name), label, values))
    for column, label, scale in LINK_METRICS:
        values = []
        for r in results:
            link = r.link_summary[r.link_summary["link"] == "bottleneck"]
            values.append(float(link.iloc[0][column]) * scale if len(link) else math.nan)
        rows.append(_stats("bottleneck", label, values))
    return rows
