"""The console summary of a finished sweep (``ccsim sweep``): one table row per point."""

from __future__ import annotations

import math
from typing import Any, Iterable

from rich.markup import escape
from rich.table import Table

from ccsim.sweep.plan import SweepPlan
from ccsim.sweep.store import SweepResult, swept_columns
from ccsim.text import safe_for_terminal

__all__ = ["print_sweep_summary", "point_table"]


def point_table(plan: SweepPlan) -> Iterable[dict[str, Any]]:
    """One dict per point: point_id and the swept values (for printing)."""
    swept = swept_columns(plan)
    for pid, _ in plan.points():
        yield {"point_id": pid, **{k: v for k, (_, v) in swept[pid].items()}}


def print_sweep_summary(result: SweepResult, console: Any) -> None:
    """Per point: the swept values, mean total goodput with its 95 % interval, bottleneck utilisation.
    Read from the Arrow summary table: printing it does not import pandas."""
    plan = result.plan
    summary = result.table("summary")
    rows = summary.to_pylist() if hasattr(summary, "to_pylist") else summary.to_dict("records")
    run_rows = [row for row in rows if row["scope"] == "run"]
    n = int(max(row["n"] for row in run_rows)) if run_rows else 0
    table = Table(
        title=f"sweep: {len(plan.points())} points x {plan.repetitions} repetitions (seeds {plan.seed}..{plan.seed_for(plan.repetitions - 1)})",
        title_justify="left",
        caption=f"goodput of all flows: mean ± 95 % CI (t, n = {n})",
        caption_justify="left",
    )
    table.add_column("point", no_wrap=True)
    for path in plan.parameters:
        table.add_column(escape(safe_for_terminal(path, limit=60)), justify="right", no_wrap=True)
    table.add_column("goodput Mbit/s", justify="right", no_wrap=True)
    table.add_column("utilisation", justify="right", no_wrap=True)

    by_point: dict[tuple[str, str], dict[str, Any]] = {}
    for row in run_rows:
        by_point.setdefault((row["point_id"], row["metric"]), row)  # the first, as .iloc[0] read it

    def stat(point_id: str, metric: str, column: str) -> float:
        hit = by_point.get((point_id, metric))
        value = None if hit is None else hit[column]
        return math.nan if value is None else float(value)

    for point in point_table(plan):
        pid = point["point_id"]
        mean = stat(pid, "total_goodput_bps", "mean")
        half = stat(pid, "total_goodput_bps", "ci95_high") - mean
        low = stat(pid, "total_goodput_bps", "ci95_low")
        utilisation = stat(pid, "bottleneck_utilisation", "mean")
        goodput = "-" if math.isnan(mean) else f"{mean / 1e6:.3f}" + ("" if math.isnan(half) else f" ± {half / 1e6:.3f}")
        if not math.isnan(half) and mean - low < 0.999 * half:  # cut at 0 (docs/sweeps.md): the interval itself
            goodput = f"{mean / 1e6:.3f} [{low / 1e6:.3f}, {(mean + half) / 1e6:.3f}]"
        table.add_row(
            pid.split("-")[0],
            *[_show_value(point[p]) for p in plan.parameters],
            goodput,
            "-" if math.isnan(utilisation) else f"{utilisation * 100:.1f} %",
        )
    console.print(table)


def _show_value(value: Any) -> str:
    """A plan value as table text: control characters escaped, no rich markup (ccsim.text)."""
    return escape(safe_for_terminal(_plain(value), limit=60))


def _plain(value: Any) -> str:
    if value is None:
        return "(base)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)
