"""Two runs side by side: ``ccsim compare DIR_A DIR_B``.

The usual pair is a simulator run and a kernel run of one scenario (``ccsim run FILE`` and ``ccsim
testbed run FILE``), but any two run directories compare: two seeds, two TCP profiles, two versions
of an algorithm. Flows are matched by name. Per flow: goodput, its share of the bottleneck's
capacity, mean and 95th-percentile RTT, the flow's queueing delay (mean RTT less its minimum),
retransmits and timeouts; for the bottleneck: utilisation, mean and 95th-percentile queueing delay
and queue drops. Every figure comes with B's difference from A in percent. The figures overlay both
runs' cwnd and RTT per flow (A solid, B dashed).

Both runs are summarised over their own measurement windows (``run.measure``), counts included
(retransmits, timeouts and drops inside the window, in both backends); every row names the window
it covers. The scenarios may differ, and the fields where they do are listed with the table, so a
comparison of two different set-ups is never silent about it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ccsim.errors import ArgumentError
from ccsim.text import safe_csv_cell
from ccsim.outdir import write_directory
from ccsim.result import Result

__all__ = ["Comparison", "compare_runs", "bottleneck_link", "run_label", "scenario_differences", "write_comparison"]

# (column of the summary, label, factor to the unit in the label)
FLOW_METRICS: tuple[tuple[str, str, float], ...] = (
    ("goodput_bps", "goodput (Mbit/s)", 1e-6),
    ("share", "share of the bottleneck (%)", 100.0),
    ("rtt_mean_ms", "RTT mean (ms)", 1.0),
    ("rtt_p95_ms", "RTT p95 (ms)", 1.0),
    ("queueing_ms", "queueing delay: RTT mean - min (ms)", 1.0),
    ("retransmits", "retransmits", 1.0),
    ("timeouts", "timeouts", 1.0),
)
LINK_METRICS: tuple[tuple[str, str, float], ...] = (
    ("utilisation", "utilisation (%)", 100.0),
    ("qdelay_mean_ms", "queueing delay mean (ms)", 1.0),
    ("qdelay_p95_ms", "queueing delay p95 (ms)", 1.0),
    ("drops_queue", "queue drops", 1.0),
)
CSV_FILE = "compare.csv"
# fields of the resolved scenarios that differ between two runs of the same set-up by design
_SAME_SETUP_FIELDS = {"seed"}


@dataclass
class Comparison:
    """B against A: one row per (scope, metric) with both values, B's difference in percent (NaN
    where A is 0 or either is missing) and the window the values cover, and notes on what differs
    between the set-ups."""

    label_a: str
    label_b: str
    rows: pd.DataFrame
    notes: list[str] = field(default_factory=list)

    def condensed(self, max_flows: int) -> pd.DataFrame:
        """The rows to show on a console: all of them up to ``max_flows`` flows; beyond, per metric
        the median over the flows of A's and of B's values (and B's difference between the two
        medians), then the bottleneck's rows. compare.csv keeps every flow."""
        flows = self.rows[self.rows["scope"] != "bottleneck"]
        count = flows["scope"].nunique()
        if count <= max_flows:
            return self.rows
        medians = flows.groupby("metric", sort=False)[["a", "b"]].median().reset_index()
        medians["diff_pct"] = [_difference_pct(a, b) for a, b in zip(medians["a"], medians["b"])]
        medians.insert(0, "scope", f"median of {count:,} flows")
        if "window" in flows:
            medians["window"] = flows["window"].iloc[0]
        return pd.concat([medians, self.rows[self.rows["scope"] == "bottleneck"]], ignore_index=True)


def run_label(result: Result, directory: Path) -> str:
    """``kernel (DIR)``, ``kernel, builtin reno (DIR)`` or ``simulator (DIR)``."""
    backend = result.meta.get("backend", "simulator")
    builtin = (result.meta.get("kernel") or {}).get("builtin_algorithm")
    return f"{backend}{', builtin ' + str(builtin) if builtin else ''} ({directory.name})"


def bottleneck_link(link_summary: pd.DataFrame) -> pd.Series | None:
    """The bottleneck's row of a link summary: the link the engine flagged as the busiest, or the link
    named "bottleneck" (the testbed's tables and older results have no flag)."""
    if link_summary.empty or "link" not in link_summary:
        return None
    if "bottleneck" in link_summary and link_summary["bottleneck"].dtype == bool:
        rows = link_summary[link_summary["bottleneck"]]
    else:
        rows = link_summary[link_summary["link"] == "bottleneck"]
    return None if rows.empty else rows.iloc[0]


def scenario_differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The paths (``topology.loss``, ``flows[0].algorithm``) where two resolved scenarios differ,
    apart from the seed."""
    out: list[str] = []

    def walk(x: Any, y: Any, path: str) -> None:
        if x == y:  # nothing below differs (one comparison in C; the flows of a large run are most of it)
            return
        if isinstance(x, dict) and isinstance(y, dict):
            for key in sorted(set(x) | set(y), key=str):
                if path == "" and key in _SAME_SETUP_FIELDS:
                    continue
                walk(x.get(key), y.get(key), f"{path}.{key}" if path else str(key))
        elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for i, (u, v) in enumerate(zip(x, y)):
                walk(u, v, f"{path}[{i}]")
        elif x != y:
            out.append(path)

    walk(a, b, "")
    return out


def _flow_table(result: Result) -> pd.DataFrame:
    """The summary's TCP flows by name, with the share of the bottleneck and the queueing delay added."""
    summary = result.summary
    if summary.empty or "name" not in summary:
        return pd.DataFrame()
    if "kind" in summary:
        summary = summary[summary["kind"] == "tcp"]
    table = summary.set_index("name").copy()
    capacity = result.run_summary.get("bottleneck_rate_bps")
    table["share"] = table["goodput_bps"] / capacity if capacity else math.nan
    table["queueing_ms"] = table["rtt_mean_ms"] - table["rtt_min_ms"]
    return table


def measure_window(result: Result) -> str:
    """The summary window a run's summaries cover, as ``10-20 s``."""
    scenario = result.scenario
    start, end = scenario.get("measure_start_ns"), scenario.get("measure_end_ns")
    if not isinstance(start, int) or not isinstance(end, int):
        return "unknown window"
    return f"{start / 1e9:g}-{end / 1e9:g} s"


def _whole_run_counts(result: Result) -> bool:
    """A simulator run written before its summary counted retransmits and timeouts over the window
    (its summary has no ``retransmits_run``) whose window is not the whole run."""
    scenario = result.scenario
    windowed = scenario.get("measure_start_ns", 0) > 0 or scenario.get("measure_end_ns") != scenario.get("duration_ns")
    backend = result.meta.get("backend", "simulator")
    return backend == "simulator" and windowed and "retransmits_run" not in result.summary


def _difference_pct(a: float, b: float) -> float:
    if not (isinstance(a, (int, float)) and isinstance(b, (int, float))) or math.isnan(a) or math.isnan(b) or a == 0:
        return math.nan
    return (b - a) / abs(a) * 100.0


def _row(scope: str, label: str, a: Any, b: Any, factor: float, window: str) -> dict[str, Any]:
    va = float(a) * factor if a is not None and not pd.isna(a) else math.nan
    vb = float(b) * factor if b is not None and not pd.isna(b) else math.nan
    return {"scope": scope, "metric": label, "a": va, "b": vb, "diff_pct": _difference_pct(va, vb), "window": window}


def _values_of(table: pd.DataFrame, names: list[Any], columns: list[str]) -> list[list[Any]]:
    """Each column's values for ``names``, in that order: one selection of the rows, then a list per
    column (a lookup per value, ``table.at[name, column]``, took seconds at 10,000 flows)."""
    if not table.index.is_unique:  # .loc would give a flow's duplicates as more rows: look each up
        return [[table.at[name, column] for name in names] for column in columns]
    rows = table.loc[names]
    return [rows[column].tolist() for column in columns]


def compare_runs(a: Result, b: Result, label_a: str = "A", label_b: str = "B") -> Comparison:
    """B against A, flow by flow (matched by name) and at the bottleneck. Raises ArgumentError when the
    runs have no TCP flow in common."""
    flows_a, flows_b = _flow_table(a), _flow_table(b)
    common = [name for name in flows_a.index if name in flows_b.index]
    if not common:
        raise ArgumentError(f"{label_b}: no TCP flow of the same name as in {label_a} "
                            f"({', '.join(map(str, flows_a.index[:4])) or 'none'}); nothing to compare")
    rows = []
    window_a, window_b = measure_window(a), measure_window(b)
    window = window_a if window_a == window_b else f"{label_a}: {window_a}; {label_b}: {window_b}"
    columns = [column for column, _, _ in FLOW_METRICS]
    values_a, values_b = _values_of(flows_a, common, columns), _values_of(flows_b, common, columns)
    for i, name in enumerate(common):
        for j, (_, label, factor) in enumerate(FLOW_METRICS):
            rows.append(_row(str(name), label, values_a[j][i], values_b[j][i], factor, window))
    link_a, link_b = bottleneck_link(a.link_summary), bottleneck_link(b.link_summary)
    if link_a is not None and link_b is not None:
        for column, label, factor in LINK_METRICS:
            rows.append(_row("bottleneck", label, link_a.get(column), link_b.get(column), factor, window))
    notes = []
    only = [f"{n} only in {label_a}" for n in flows_a.index if n not in flows_b.index]
    only += [f"{n} only in {label_b}" for n in flows_b.index if n not in flows_a.index]
    if only:
        notes.append("flows not compared: " + ", ".join(map(str, only)))
    for label, result in ((label_a, a), (label_b, b)):
        if _whole_run_counts(result):
            notes.append(f"{label}: retransmits and timeouts over the whole run (written before ccsim counted them over "
                         "the summary window)")
    differ = scenario_differences(a.scenario, b.scenario)
    if differ:
        notes.append("the scenarios differ in " + ", ".join(differ[:8]) + (f" and {len(differ) - 8} more" if len(differ) > 8 else ""))
    return Comparison(label_a, label_b, pd.DataFrame(rows, columns=["scope", "metric", "a", "b", "diff_pct", "window"]), notes)


def _named_series(result: Result) -> pd.DataFrame:
    """The sampled flows table with each flow's name (the table keys flows by index)."""
    flows = result.flows
    summary = result.summary
    if flows.empty or summary.empty:
        return flows
    names = summary.set_index("flow")["name"]
    return flows.assign(name=flows["flow"].map(names))


def write_comparison(comparison: Comparison, a: Result, b: Result, out: Path, force: bool = False,
                     plots: bool = True) -> Path:
    """``out``/compare.csv (the rows, with the two runs' labels as column names) and, with ``plots``,
    cwnd.png and rtt.png (both runs overlaid); written atomically, as a run directory."""

    def write(staging: Path) -> None:
        table = comparison.rows.rename(columns={"a": comparison.label_a, "b": comparison.label_b})
        # flow names and run labels: no raw control character, no spreadsheet formula (ccsim.text)
        table = table.rename(columns=safe_csv_cell)
        for i in range(table.shape[1]):  # by position: the two labels may be the same
            cells = table.iloc[:, i]
            if cells.dtype == object or pd.api.types.is_string_dtype(cells.dtype):
                table.isetitem(i, cells.map(safe_csv_cell, na_action="ignore"))
        table.to_csv(staging / CSV_FILE, index=False, float_format="%.6g")
        if plots:
            from ccsim.plots import plot_runs_overlaid  # lazy: matplotlib

            runs = [(comparison.label_a, _named_series(a)), (comparison.label_b, _named_series(b))]
            plot_runs_overlaid(runs, staging, column="cwnd_pkts", scale=1.0, ylabel="cwnd (packets)",
                               title=f"cwnd: {comparison.label_a} solid, {comparison.label_b} dashed", filename="cwnd.png")
            plot_runs_overlaid(runs, staging, column="rtt_ms", scale=1.0, ylabel="RTT (ms, latest sample)",
                               title=f"RTT: {comparison.label_a} solid, {comparison.label_b} dashed", filename="rtt.png")

    return write_directory(out, force, write, "comparison")
