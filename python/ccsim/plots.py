"""Plots of runs and sweeps.

Default plots of a run (written by ``ccsim run`` / ``ccsim plot``; file names are stable):
``cwnd.png``, ``goodput.png``, ``queue_delay.png``, ``queue_delay_cdf.png``.

Further plots (used by ``ccsim report`` and the experiments, ``conventions.md``, "Plots people
expect"): per-flow goodput and cwnd with binned averages (``goodput_binned_<bin>s.png``,
``cwnd_binned_<bin>s.png``), Jain's index over time (``jain.png``) or per sweep point
(``jain_vs_<param>.png``), the Pantheon-style throughput vs 95th-percentile delay scatter
(``throughput_delay.png``), goodput vs a swept parameter with 95 % CI or 20/50/80th percentile bars
and an optional theory curve such as Mathis et al. (``goodput_vs_<param>.png``), and queueing-delay
CDFs of several configurations on one axis (``queue_delay_cdf_compare.png``).

Figures are built with the object API (``matplotlib.figure.Figure``, rendered by Agg) rather than
pyplot, so plotting holds no global state and works without a display. Every axis label carries its
unit. Each function takes the DataFrames (or a Result) and an output directory and returns the path
it wrote; the measurement window is shaded when it is not the whole run.

The file's format follows its name: ``.png`` (150 dpi), ``.pdf`` or ``.svg`` (vector, for a paper);
inside ``with figure_format("pdf"):`` every default ``.png`` name is written as ``.pdf`` instead
(``ccsim plot DIR --format pdf``). Another suffix is refused, never written as PNG bytes.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Iterable, Iterator, Protocol

import matplotlib

matplotlib.use("Agg")  # no display needed; harmless if the embedding application chose another

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ccsim.errors import CcsimError
from ccsim.text import sanitise_figure
from ccsim.sweep_stats import metric_range, t_quantile

__all__ = [
    "active_rows",
    "aggregate",
    "binned",
    "figure_format",
    "FIGURE_FORMATS",
    "jain_index",
    "mathis_bps",
    "plot_box",
    "plot_cwnd",
    "plot_delay_cdf",
    "plot_totals",
    "plot_goodput",
    "plot_jain_over_time",
    "plot_queue_delay",
    "plot_queue_delay_cdf",
    "plot_queue_delay_cdf_compare",
    "plot_runs_overlaid",
    "plot_sweep_goodput",
    "plot_sweep_jain",
    "plot_throughput_delay",
    "safe_name",
    "series_style",
    "write_default_plots",
]

BOTTLENECK_LINK = "bottleneck"
QUEUED_MS = 1.0  # links whose queueing delay never reaches this are left out of the delay plots
# More flows than this and a per-flow plot draws their spread instead of a line each (one legend
# column: beyond it lines and names can no longer be told apart, and 10,000 lines took minutes).
MAX_FLOW_LINES = 16
_FIGSIZE = (8.0, 4.5)
_DPI = 150
# suffix -> Matplotlib format, and the metadata that would make two identical figures differ (dates,
# software versions): left out, so a figure is a function of its data.
FIGURE_FORMATS = {".png": "png", ".pdf": "pdf", ".svg": "svg"}
_NO_METADATA = {"png": {"Software": None}, "pdf": {"Creator": None, "Producer": None, "CreationDate": None},
                "svg": {"Creator": None, "Date": None}}
# Okabe & Ito's colour-blind-safe palette (yellow last: faint on white), each colour with its own
# line style and marker as a second cue, so series stay apart in grey print and for readers who
# cannot tell red from green.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#000000", "#F0E442")
LINESTYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def series_style(i: int) -> dict[str, Any]:
    """Colour, line style and marker of the ``i``-th series of a figure (repeats after 8 x 4)."""
    return {"color": PALETTE[i % len(PALETTE)], "linestyle": LINESTYLES[(i + i // len(PALETTE)) % len(LINESTYLES)],
            "marker": MARKERS[i % len(MARKERS)]}


_default_format: ContextVar[str] = ContextVar("ccsim_figure_format", default="png")


@contextmanager
def figure_format(fmt: str) -> Iterator[None]:
    """Within the block, plots whose file name ends in ``.png`` are written as ``fmt`` (png, pdf, svg)."""
    suffix = "." + str(fmt).lower().lstrip(".")
    if suffix not in FIGURE_FORMATS:
        raise CcsimError(f"format: {fmt!r} is not a figure format (choose from png, pdf, svg)")
    token = _default_format.set(FIGURE_FORMATS[suffix])
    try:
        yield
    finally:
        _default_format.reset(token)

Window = tuple[float, float] | None  # measurement window in seconds, or None for "whole run"


class RunTables(Protocol):
    """What the default plots read from a run: a :class:`ccsim.result.Result` (which saves its plots
    through this module, so this module names the shape it needs instead of importing it)."""

    flows: pd.DataFrame
    links: pd.DataFrame

    @property
    def scenario(self) -> dict[str, Any]: ...


def write_default_plots(result: RunTables, out_dir: str | Path) -> list[Path]:
    """Writes every default plot of ``result`` into ``out_dir``; returns the paths written."""
    window = measure_window_s(result.scenario)
    names = [f["name"] for f in result.scenario.get("flows", [])]
    flows = active_rows(result.flows, result.scenario)
    capacity = getattr(result, "run_summary", {}).get("bottleneck_rate_bps")
    return [
        plot_cwnd(flows, out_dir, window, names),
        plot_goodput(flows, out_dir, window, names, capacity_bps=capacity),
        plot_queue_delay(result.links, out_dir, window),
        plot_queue_delay_cdf(result.links, out_dir, window),
    ]


def measure_window_s(resolved: dict) -> Window:
    """The summary window of a resolved scenario in seconds, or None when it spans the whole run."""
    start_ns = resolved.get("measure_start_ns", 0)
    end_ns = resolved.get("measure_end_ns", resolved.get("duration_ns"))
    if start_ns == 0 and end_ns == resolved.get("duration_ns"):
        return None
    return start_ns / 1e9, end_ns / 1e9


def active_rows(flows: pd.DataFrame, resolved: dict) -> pd.DataFrame:
    """Only the sample intervals that overlap each flow's [start, stop]: the engine samples every flow
    over the whole run, and a flat line before a flow starts or after it stops is noise."""
    specs = resolved.get("flows", [])
    if flows.empty or "flow" not in flows or not specs:
        return flows
    interval_s = resolved.get("sample_interval_ns", 0) / 1e9
    index = flows["flow"]
    if not pd.api.types.is_integer_dtype(index):
        index = index.map({f["name"]: i for i, f in enumerate(specs)})
    # Each flow's first start and last stop, taken by the row's flow number from two arrays (a Python
    # call per row took seconds at 10,000 flows); the extra last entry, for a row whose flow the
    # scenario does not name, keeps the row.
    spans = [(f["intervals"][0]["start_ns"] / 1e9, f["intervals"][-1]["stop_ns"] / 1e9) if f.get("intervals")
             else (-np.inf, np.inf) for f in specs]
    start, stop = np.array(spans + [(-np.inf, np.inf)], dtype=float).T
    number = index.to_numpy(dtype=float, na_value=np.nan)
    number = np.where(np.isnan(number), len(specs), number).astype(np.int64)
    time_s = flows["time_s"].to_numpy(dtype=float)
    return flows[(time_s > start[number]) & (time_s - interval_s < stop[number])]


def plot_cwnd(
    flows: pd.DataFrame,
    out_dir: str | Path,
    window: Window = None,
    names: list[str] | None = None,
    bin_s: float | None = None,
) -> Path:
    """Congestion window of each flow over time, in packets.

    With ``bin_s`` the per-interval samples are drawn faintly and the average over bins of ``bin_s``
    seconds on top (file ``cwnd_binned_<bin_s>s.png``); without it, ``cwnd.png``.
    """
    return _plot_per_flow(flows, out_dir, window, names, bin_s, column="cwnd_pkts", scale=1.0, step=True,
                          ylabel="congestion window (packets)", title="Congestion window", stem="cwnd")


def plot_goodput(
    flows: pd.DataFrame,
    out_dir: str | Path,
    window: Window = None,
    names: list[str] | None = None,
    bin_s: float | None = None,
    capacity_bps: float | None = None,
) -> Path:
    """Goodput of each flow per sample interval, in Mbit/s, with the bottleneck's rate as a dotted
    line when ``capacity_bps`` is given. A sample can exceed it: goodput counts bytes when they reach
    the receiver in order, and data held behind a lost packet becomes in order all at once when the
    retransmission arrives (the bottleneck's own utilisation stays at or below 1 in those intervals);
    the figure then says so under its axes (:data:`ABOVE_CAPACITY_NOTE`).

    With ``bin_s`` the per-interval goodput is drawn faintly and its average over bins of ``bin_s``
    seconds on top (file ``goodput_binned_<bin_s>s.png``); without it, ``goodput.png``.
    """
    return _plot_per_flow(flows, out_dir, window, names, bin_s, column="goodput_bps", scale=1e-6, step=False,
                          ylabel="goodput (Mbit/s)", title="Goodput per sample interval", stem="goodput",
                          binned_title="Goodput", capacity_bps=capacity_bps, above_capacity_note=ABOVE_CAPACITY_NOTE)


ABOVE_CAPACITY_NOTE = ("Samples above the bottleneck rate: goodput counts bytes when they reach the receiver in order, "
                       "so data held behind a lost packet\nis counted all at once when its retransmission arrives "
                       "(the bottleneck itself never carries more than its rate).")


def _plot_per_flow(
    flows: pd.DataFrame,
    out_dir: str | Path,
    window: Window,
    names: list[str] | None,
    bin_s: float | None,
    *,
    column: str,
    scale: float,
    step: bool,
    ylabel: str,
    title: str,
    stem: str,
    binned_title: str | None = None,
    capacity_bps: float | None = None,
    above_capacity_note: str | None = None,
) -> Path:
    """One line per flow of ``column`` x ``scale`` over time; with ``bin_s``, faint samples under bin
    means. More than MAX_FLOW_LINES flows: their spread over time instead (:func:`_plot_flow_spread`).
    ``above_capacity_note`` is written under the axes when a sample exceeds ``capacity_bps``."""
    fig, ax = _figure()
    if "flow" in flows and flows["flow"].nunique() > MAX_FLOW_LINES:
        count = _plot_flow_spread(ax, flows, column=column, scale=scale, step=step, bin_s=bin_s)
        title, binned_title = f"{title}: {count:,} flows", f"{binned_title or title}: {count:,} flows"
    else:
        _plot_flow_lines(ax, flows, names, column=column, scale=scale, step=step, bin_s=bin_s)
    if capacity_bps:
        ax.axhline(capacity_bps * scale, color="grey", linestyle=":", linewidth=1, label="bottleneck rate")
        if above_capacity_note and column in flows and (flows[column] > capacity_bps).any():
            ax.annotate(above_capacity_note, xy=(0, 0), xycoords="axes fraction", xytext=(0, -32), textcoords="offset points",
                        va="top", ha="left", fontsize="x-small", color="0.3", annotation_clip=False)
    heading = title if bin_s is None else f"{binned_title or title} ({bin_s:g} s averages)"
    _finish_time_axes(ax, ylabel, heading, window)
    return _save(fig, out_dir, f"{stem}.png" if bin_s is None else f"{stem}_binned_{bin_s:g}s.png")


def _plot_flow_lines(ax, flows: pd.DataFrame, names: list[str] | None, *, column: str, scale: float, step: bool,
                     bin_s: float | None) -> None:
    """A line per flow of ``column`` x ``scale``; with ``bin_s``, faint samples under bin means."""
    for i, (flow, rows) in enumerate(_groups(flows, "flow")):
        label = _flow_label(flow, names)
        cue = series_style(i)
        color = cue["color"]
        faint = bin_s is not None
        style = dict(color=color, linestyle="-" if faint else cue["linestyle"], linewidth=0.6 if faint else 1.1,
                     alpha=0.3 if faint else 1.0, label=None if faint else label)
        if step:
            ax.step(rows["time_s"], rows[column] * scale, where="post", **style)
        else:
            ax.plot(rows["time_s"], rows[column] * scale, **style)
        if faint:
            mids, means = binned(rows, column, bin_s)
            ax.plot(mids, means * scale, color=color, linestyle=cue["linestyle"], marker=cue["marker"], markersize=3.5,
                    linewidth=1.6, label=f"{label} ({bin_s:g} s mean)")


def _plot_flow_spread(ax, flows: pd.DataFrame, *, column: str, scale: float, step: bool, bin_s: float | None,
                      color: str = PALETTE[0], linestyle: str = "-", name: str = "{} of the flows") -> int:
    """The flows' values of ``column`` x ``scale`` at each sample time: the median, the band from the
    10th to the 90th percentile, and the largest (``name`` formats each label); with ``bin_s``, of
    each flow's mean over bins of ``bin_s`` seconds. Returns the number of flows."""
    rows = flows[["flow", "time_s", column]].dropna()
    if bin_s is not None:  # each flow's mean over a bin, at the bin's middle (the bins of `binned`)
        middles = (_bin_index(rows["time_s"], bin_s) + 0.5) * bin_s
        rows = rows.assign(time_s=middles).groupby(["flow", "time_s"], as_index=False)[column].mean()
    by_time = rows.groupby("time_s")[column]
    spread = by_time.quantile([0.1, 0.5, 0.9]).unstack().sort_index() * scale
    largest = by_time.max().sort_index() * scale
    times = spread.index.to_numpy()
    steps = step and bin_s is None  # a sample holds over its interval; bin means are points
    ax.fill_between(times, spread[0.1], spread[0.9], color=color, alpha=0.25, linewidth=0,
                    label=name.format("10th-90th percentile"), step="post" if steps else None)
    largest_colour = PALETTE[5] if color == PALETTE[0] else color
    for values, style in ((spread[0.5], dict(color=color, linestyle=linestyle, linewidth=1.4, label=name.format("median"))),
                          (largest, dict(color=largest_colour, linestyle=":", linewidth=1.0, label=name.format("largest")))):
        if steps:
            ax.step(times, values, where="post", **style)
        else:
            ax.plot(times, values, **style)
    return int(rows["flow"].nunique())


def plot_runs_overlaid(
    runs: list[tuple[str, pd.DataFrame]],
    out_dir: str | Path,
    *,
    column: str,
    scale: float,
    ylabel: str,
    title: str,
    filename: str,
) -> Path:
    """Several runs' per-flow series of ``column`` x ``scale`` on one axis (``ccsim compare``): a
    colour per flow, a line style per run (the first solid). ``runs`` holds (label, flows table with
    ``time_s``, ``flow``, ``name``) pairs; flows are matched by name, so the same flow has the same
    colour in every run."""
    fig, ax = _figure()
    colours: dict[str, str] = {}
    many = any("name" in flows and flows["name"].nunique() > MAX_FLOW_LINES for _, flows in runs)
    for r, (label, flows) in enumerate(runs):
        if many:  # each run's spread over its flows (a colour per run), not a line per flow
            if not flows.empty:
                _plot_flow_spread(ax, flows.assign(flow=flows["name"]), column=column, scale=scale, step=False,
                                  bin_s=None, color=PALETTE[r % len(PALETTE)], linestyle=LINESTYLES[r % len(LINESTYLES)],
                                  name=f"{label}, {{}} of {flows['name'].nunique():,} flows")
            continue
        for flow, rows in _groups(flows, "name"):
            colour = colours.setdefault(str(flow), PALETTE[len(colours) % len(PALETTE)])
            ax.plot(rows["time_s"], rows[column] * scale, color=colour, linestyle=LINESTYLES[r % len(LINESTYLES)],
                    linewidth=1.0, label=f"{flow} ({label})")
    _finish_time_axes(ax, ylabel, title, None)
    return _save(fig, out_dir, filename)


def plot_totals(
    flows: pd.DataFrame,
    out_dir: str | Path,
    window: Window = None,
    names: list[str] | None = None,
    capacity_bps: float | None = None,
    filename: str = "totals.png",
) -> Path:
    """Flent's "totals" plot: each flow's goodput per sample interval stacked, so the top edge is the
    total goodput, with the bottleneck's rate as a dotted line. An interval where a flow has no row
    (before it starts, after it ends) counts as zero for it."""
    fig, ax = _figure()
    if not flows.empty and flows["flow"].nunique() > MAX_FLOW_LINES:  # parts too thin to see: the total alone
        total = flows.groupby("time_s")["goodput_bps"].sum().sort_index() / 1e6
        ax.fill_between(total.index.to_numpy(), total.to_numpy(), step="post", color=PALETTE[0], alpha=0.35, linewidth=0)
        ax.plot(total.index, total, color="black", linewidth=0.8, drawstyle="steps-post",
                label=f"total of {flows['flow'].nunique():,} flows")
    elif not flows.empty:
        wide = flows.pivot_table(index="time_s", columns="flow", values="goodput_bps", aggfunc="sum").fillna(0.0).sort_index()
        labels = [_flow_label(f, names) for f in wide.columns]
        colors = [series_style(i)["color"] for i in range(len(labels))]
        stacks = ax.stackplot(wide.index.to_numpy(), (wide.to_numpy().T / 1e6), labels=labels, colors=colors, alpha=0.85,
                              step="post")
        for i, poly in enumerate(stacks):  # hatching: a second cue beside colour
            poly.set_hatch(("", "//", "..", "\\\\", "xx", "--", "++", "oo")[i % 8])
            poly.set_edgecolor("white")
        ax.plot(wide.index, wide.sum(axis=1) / 1e6, color="black", linewidth=0.8, drawstyle="steps-post", label="total")
    if capacity_bps:
        ax.axhline(capacity_bps / 1e6, color="grey", linestyle=":", linewidth=1.2, label="bottleneck rate")
    _finish_time_axes(ax, "goodput (Mbit/s, stacked)", "Total goodput and each flow's part", window)
    return _save(fig, out_dir, filename)


def plot_box(
    flows: pd.DataFrame,
    out_dir: str | Path,
    column: str = "goodput_bps",
    names: list[str] | None = None,
    window: Window = None,
    scale: float = 1e-6,
    ylabel: str = "goodput per sample interval (Mbit/s)",
    filename: str | None = None,
) -> Path:
    """Flent-style box plot: the distribution of ``column`` over each flow's sample intervals
    (within the measurement window): box = quartiles, line = median, diamond = mean, whiskers = 1.5
    IQR, outliers as dots. File: ``box_<column>.png`` unless ``filename`` is given."""
    fig, ax = _figure()
    rows = flows if window is None or flows.empty else flows[(flows["time_s"] > window[0]) & (flows["time_s"] <= window[1])]
    groups = [(f, v * scale) for f, v in _column_per_group(rows, "flow", column)]
    groups = [(f, v) for f, v in groups if v.size]
    if len(groups) > MAX_FLOW_LINES:  # a box per flow is unreadable: every interval of them all, and their means
        count = len(groups)
        groups = [(f"every interval of the {count:,} flows", np.concatenate([v for _, v in groups])),
                  (f"the {count:,} flows' means", np.array([v.mean() for _, v in groups]))]
    if groups:
        parts = ax.boxplot([v for _, v in groups], showmeans=True, patch_artist=True, widths=0.6,
                           meanprops={"marker": "D", "markerfacecolor": "white", "markeredgecolor": "black", "markersize": 5},
                           medianprops={"color": "black"}, flierprops={"marker": ".", "markersize": 3, "alpha": 0.5})
        for i, box in enumerate(parts["boxes"]):
            box.set_facecolor(series_style(i)["color"])
            box.set_alpha(0.75)
        ax.set_xticks(range(1, len(groups) + 1), [_flow_label(f, names) for f, _ in groups])
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    span = "whole run" if window is None else f"{window[0]:g}-{window[1]:g} s"
    ax.set_title(f"Distribution per flow ({span})")
    return _save(fig, out_dir, filename or f"box_{safe_name(column)}.png")


def binned(rows: pd.DataFrame, column: str, bin_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Averages of ``column`` over consecutive time bins of ``bin_s`` seconds: (bin midpoints, means).

    A sample at ``time_s`` covers the interval ending there, so it belongs to bin ``ceil(t/bin) - 1``.
    """
    if bin_s is None or bin_s <= 0:
        raise ValueError(f"bin width must be positive, got {bin_s!r}")
    if rows.empty:
        return np.array([]), np.array([])
    index = _bin_index(rows["time_s"], bin_s)
    means = pd.Series(rows[column].to_numpy(dtype=float)).groupby(index).mean()
    mids = (means.index.to_numpy(dtype=float) + 0.5) * bin_s
    return mids, means.to_numpy()


def _bin_index(times: pd.Series, bin_s: float) -> np.ndarray:
    """The bin of each sample time: a sample covers the interval ending at it, so ``ceil(t/bin) - 1``
    (never below 0; the tolerance keeps a time on a bin's edge in the bin it ends)."""
    return np.maximum(np.ceil(times.to_numpy(dtype=float) / bin_s - 1e-9) - 1, 0).astype(np.int64)


def jain_index(values: Iterable[float]) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2); 1 for equal shares, 1/n when one takes all."""
    x = np.asarray(list(values), dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0 or not np.any(x):
        return float("nan")
    return float(x.sum() ** 2 / (x.size * np.square(x).sum()))


def plot_jain_over_time(flows: pd.DataFrame, out_dir: str | Path, bin_s: float, window: Window = None) -> Path:
    """Jain's index of the flows' mean goodput in bins of ``bin_s`` seconds (flows active in the bin)."""
    fig, ax = _figure()
    if not flows.empty and "flow" in flows:
        index = _bin_index(flows["time_s"], bin_s)
        per_bin = flows.assign(_bin=index).groupby(["_bin", "flow"])["goodput_bps"].mean()
        jain = per_bin.groupby(level="_bin").apply(jain_index)
        counts = per_bin.groupby(level="_bin").size()
        mids = (jain.index.to_numpy(dtype=float) + 0.5) * bin_s
        ax.plot(mids, jain.to_numpy(), marker="o", markersize=3, linewidth=1.4, label=f"Jain index ({bin_s:g} s bins)")
        if counts.max() > 1:
            ax.plot(mids, 1.0 / counts.to_numpy(), linestyle=":", color="grey", linewidth=1, label="1/n (one flow takes all)")
    _finish_time_axes(ax, "Jain's fairness index (dimensionless)", "Fairness over time", window)
    ax.set_ylim(0, 1.05)
    return _save(fig, out_dir, "jain.png")


def plot_throughput_delay(
    points: pd.DataFrame,
    out_dir: str | Path,
    label: str = "label",
    title: str = "Throughput vs 95th-percentile delay",
    filename: str = "throughput_delay.png",
    delay_column: str = "rtt_p95_ms",
    annotate: str | None = None,
) -> Path:
    """Pantheon-style scatter: goodput (y, Mbit/s) against the 95th-percentile RTT (x, ms, inverted so
    that "better" is up and to the right). One marker per row of ``points`` (columns ``label``,
    ``goodput_bps``, ``delay_column``; optional ``goodput_ci_bps`` and ``delay_ci_ms`` are drawn as
    95 % confidence-interval bars, the convention of every mean ccsim plots). Rows sharing a label
    share a colour and marker and are named in the legend; with ``annotate``, each marker also gets
    that column's text, placed at alternating offsets so neighbours do not overprint. The axes leave
    room around the outermost points (none is clipped at an edge)."""
    fig, ax = _figure()
    if not points.empty:
        n = 0
        for i, (name, rows) in enumerate(points.groupby(label, sort=False)):
            # the intervals stop at zero (neither goodput nor a delay is negative), as in the tables
            xerr = _bars_from_zero(rows[delay_column], rows["delay_ci_ms"]) if "delay_ci_ms" in rows else None
            yerr = _bars_from_zero(rows["goodput_bps"], rows["goodput_ci_bps"]) / 1e6 if "goodput_ci_bps" in rows else None
            ax.errorbar(rows[delay_column], rows["goodput_bps"] / 1e6, xerr=xerr, yerr=yerr, fmt=series_style(i)["marker"],
                        color=series_style(i)["color"], markersize=6, capsize=3, linewidth=1, label=str(name))
            if annotate is not None and annotate in rows:
                for _, row in rows.iterrows():
                    dx, dy = ((6, 5), (6, -11), (-6, 5), (-6, -11))[n % 4]
                    ax.annotate(str(row[annotate]), (row[delay_column], row["goodput_bps"] / 1e6), textcoords="offset points",
                                xytext=(dx, dy), ha="left" if dx > 0 else "right", fontsize="x-small")
                    n += 1
        top = (points["goodput_bps"] + (points["goodput_ci_bps"] if "goodput_ci_bps" in points else 0)).max() / 1e6
        ax.set_ylim(0, top * 1.18 if top > 0 else 1)
        ax.margins(x=0.12)
        ax.invert_xaxis()
    else:
        ax.set_ylim(bottom=0)
    ax.set_xlabel("95th-percentile round-trip time (ms, axis reversed: better →)")
    ax.set_ylabel("goodput (Mbit/s)")
    ax.set_title(title)
    _legend(ax)
    return _save(fig, out_dir, filename)


def _bars_from_zero(centre: pd.Series, half: pd.Series) -> np.ndarray:
    """Error bars (below, above) of ``centre`` +- ``half``, the lower one cut at zero."""
    centre, half = centre.to_numpy(dtype=float), half.to_numpy(dtype=float)
    return np.array([np.minimum(half, np.maximum(centre, 0.0)), half])


def mathis_bps(p: float | np.ndarray, mss_bytes: float, rtt_s: float, c: float = float(np.sqrt(1.5))) -> np.ndarray:
    """Mathis et al. (1997): B = MSS/RTT * C/sqrt(p), C = sqrt(3/2), in bit/s (inf at p = 0)."""
    p = np.asarray(p, dtype=float)
    with np.errstate(divide="ignore"):
        return 8.0 * mss_bytes / rtt_s * c / np.sqrt(p)


def _t95(n: int) -> float:
    """Two-sided 95 % Student t quantile for n samples (n - 1 degrees of freedom), as the sweep's
    summary computes it (ccsim.sweep_stats)."""
    return t_quantile(0.975, n - 1)


def aggregate(values: pd.Series, bars: str, bounds: tuple[float, float] = (-np.inf, np.inf)) -> tuple[float, float, float]:
    """(centre, low, high) of ``values``: mean and 95 % CI (``bars="ci"``), cut to ``bounds``, the
    quantity's range (``sweep_stats.metric_range``, as the sweep's tables), or median and 20th/80th
    percentiles (``bars="percentiles"``, the CHD paper's convention)."""
    x = values.dropna().to_numpy(dtype=float)
    if x.size == 0:
        return float("nan"), float("nan"), float("nan")
    if bars == "percentiles":
        low, mid, high = np.percentile(x, [20, 50, 80])
        return float(mid), float(low), float(high)
    if bars != "ci":
        raise ValueError(f"bars must be 'ci' or 'percentiles', got {bars!r}")
    mean = float(x.mean())
    if x.size < 2:
        return mean, mean, mean
    half = _t95(x.size) * float(x.std(ddof=1)) / np.sqrt(x.size)
    return mean, max(bounds[0], mean - half), min(bounds[1], mean + half)


def plot_sweep_goodput(
    flows: pd.DataFrame,
    param: str,
    out_dir: str | Path,
    group: str | None = "algorithm",
    bars: str = "ci",
    theory: "tuple[str, callable] | None" = None,
    capacity_bps: float | None = None,
    xlabel: str | None = None,
    xscale: float = 1.0,
    value: str = "goodput_bps",
    title: str | None = None,
    filename: str | None = None,
) -> Path:
    """Goodput against a swept parameter, one line per ``group`` value, with error bars: 95 % CI of
    the mean (``bars="ci"``) or 20th-50th-80th percentiles (``bars="percentiles"``).

    ``flows`` has one row per flow per run (``SweepResult.flows``). ``theory = (label, f)`` adds a
    curve f(x) in bit/s; ``capacity_bps`` draws the link rate and caps the y axis just above it.
    ``xscale`` multiplies the parameter for display (100 for a probability shown in %).
    File: ``goodput_vs_<param>.png`` unless ``filename`` is given.
    """
    fig, ax = _figure()
    groups = [(None, flows)] if group is None or group not in flows else list(flows.groupby(group, sort=False))
    categorical = param in flows and not pd.api.types.is_numeric_dtype(flows[param])
    categories = list(dict.fromkeys(str(v) for v in flows[param])) if categorical else []
    xs_all: list[float] = []
    for i, (name, rows) in enumerate(groups):
        if param not in rows or value not in rows:
            continue
        keys = rows[param].astype(str) if categorical else rows[param]
        stats = [(k, *aggregate(r[value], bars, metric_range(value))) for k, r in rows.groupby(keys, sort=not categorical)]
        if not stats:
            continue
        if categorical:
            x = np.array([categories.index(k) for k, *_ in stats], dtype=float)
            offset = (i - (len(groups) - 1) / 2) * 0.08  # keep the groups' bars apart
        else:
            x = np.array([float(k) for k, *_ in stats]) * xscale
            offset = 0.0
            xs_all.extend(np.array([float(k) for k, *_ in stats]))
        mid, low, high = (np.array(v, dtype=float) for v in list(zip(*stats))[1:])
        cue = series_style(i)
        ax.errorbar(x + offset, mid / 1e6, yerr=[(mid - low) / 1e6, (high - mid) / 1e6], fmt=cue["marker"],
                    linestyle="none" if categorical else cue["linestyle"], capsize=3, markersize=4 + 1.5 * (i % 3),
                    markerfacecolor="none" if i % 2 else cue["color"], linewidth=1.2, color=cue["color"],
                    label=str(name) if name is not None else "goodput")
    if categorical:
        ax.set_xticks(range(len(categories)), categories)
        ax.set_xlim(-0.5, len(categories) - 0.5)
    if theory is not None and xs_all:
        label, f = theory
        lo, hi = min(xs_all), max(xs_all)
        grid = np.linspace(lo, hi, 200)
        grid = grid[grid > 0]
        if grid.size:
            ax.plot(grid * xscale, np.asarray(f(grid), dtype=float) / 1e6, linestyle="--", color="black", linewidth=1, label=label)
    if not categorical and _wants_log_axis(xs_all):
        # loss rates 0, 0.0001, ..., 0.05 on a linear axis crush the small ones into the origin: a
        # log axis that stays linear below the smallest non-zero value (so 0 is still drawn)
        ax.set_xscale("symlog", linthresh=min(v for v in xs_all if v > 0) * xscale, linscale=0.5)
    if capacity_bps:
        ax.axhline(capacity_bps / 1e6, color="grey", linestyle=":", linewidth=1, label="link rate")
        ax.set_ylim(0, capacity_bps / 1e6 * 1.08)
    else:
        ax.set_ylim(bottom=0)
    ax.set_xlabel(xlabel or param)
    ax.set_ylabel("goodput (Mbit/s)" if value == "goodput_bps" else value)
    how = "mean, 95 % CI" if bars == "ci" else "median, 20th-80th percentile"
    ax.set_title(title or f"Goodput vs {param} ({how})")
    _legend(ax)
    return _save(fig, out_dir, filename or f"goodput_vs_{safe_name(param)}.png")


def plot_sweep_jain(
    runs: pd.DataFrame,
    param: str,
    out_dir: str | Path,
    group: str | None = None,
    xlabel: str | None = None,
    xscale: float = 1.0,
    filename: str | None = None,
) -> Path:
    """Jain's index per sweep point (mean and 95 % CI over repetitions), from ``SweepResult.runs``.
    A categorical parameter (strings) is drawn with one tick per value."""
    fig, ax = _figure()
    groups = [(None, runs)] if group is None or group not in runs else list(runs.groupby(group, sort=False))
    categorical = param in runs and not pd.api.types.is_numeric_dtype(runs[param])
    categories: list[str] = []
    if categorical:
        categories = list(dict.fromkeys(str(v) for v in runs[param]))
    for i, (name, rows) in enumerate(groups):
        if "jain_index" not in rows or param not in rows:
            continue
        keys = rows[param].astype(str) if categorical else rows[param]
        stats = [(k, *aggregate(r["jain_index"], "ci", metric_range("jain_index"))) for k, r in rows.groupby(keys, sort=not categorical)]
        if not stats:
            continue
        if categorical:
            x = np.array([categories.index(k) for k, *_ in stats], dtype=float)
        else:
            x = np.array([float(k) for k, *_ in stats]) * xscale
        mid, low, high = (np.array(v, dtype=float) for v in list(zip(*stats))[1:])
        cue = series_style(i)
        ax.errorbar(x, mid, yerr=[mid - low, high - mid], fmt=cue["marker"], linestyle="none" if categorical else cue["linestyle"],
                    capsize=3, markersize=5, color=cue["color"], label=str(name) if name is not None else "Jain index")
    if categorical:
        ax.set_xticks(range(len(categories)), categories)
        ax.set_xlim(-0.5, len(categories) - 0.5)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel(xlabel or param)
    ax.set_ylabel("Jain's fairness index (dimensionless)")
    ax.set_title(f"Jain's index per sweep point (mean, 95 % CI)")
    _legend(ax)
    return _save(fig, out_dir, filename or f"jain_vs_{safe_name(param)}.png")


def plot_queue_delay_cdf_compare(
    delays_ms: dict[str, np.ndarray],
    out_dir: str | Path,
    title: str = "Queueing delay CDF",
    xlabel: str = "queueing delay (ms, interval mean)",
    filename: str = "queue_delay_cdf_compare.png",
    means: dict[str, float] | None = None,
) -> Path:
    """Empirical CDFs of several delay samples on one axis (e.g. drop-tail vs RED), mean marked.

    ``means``: the mean to mark and print per curve when it is not the samples' own (the per-packet
    mean of the runs, which a table beside the figure also shows: the mean of interval means weighs
    a quiet interval like a busy one and would disagree with it)."""
    fig, ax = _figure()
    for i, (name, values) in enumerate(delays_ms.items()):
        x = np.sort(np.asarray(values, dtype=float)[np.isfinite(values)])
        if x.size:
            cue = series_style(i)
            color = cue["color"]
            if means is not None and name in means:
                mean, what = float(means[name]), "per-packet mean"
            else:
                mean, what = float(x.mean()), "mean"
            ax.step(x, np.arange(1, x.size + 1) / x.size, where="post", color=color, linestyle=cue["linestyle"],
                    label=f"{name} ({what} {mean:.1f} ms)")
            ax.axvline(mean, color=color, linestyle=":", linewidth=1)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("fraction of sample intervals")
    ax.set_xlim(left=0)
    ax.set_ylim(0, 1.02)
    ax.set_title(title)
    _legend(ax)
    return _save(fig, out_dir, filename)


def _wants_log_axis(xs: list[float]) -> bool:
    """Non-negative values whose non-zero ones span a factor of 20 or more (a loss sweep): a log axis."""
    positive = [v for v in xs if v > 0]
    return bool(positive) and min(xs) >= 0 and max(positive) / min(positive) >= 20


def safe_name(text: str) -> str:
    """A file-name-safe form of an override path: ``flows[0].algorithm`` -> ``flows0_algorithm``."""
    out = "".join(c if c.isalnum() else "_" for c in str(text))
    while "__" in out:
        out = out.replace("__", "_")
    return out.strip("_") or "param"


def plot_queue_delay(links: pd.DataFrame, out_dir: str | Path, window: Window = None) -> Path:
    """Mean queueing delay per sample interval of the bottleneck and any other link that queued."""
    fig, ax = _figure()
    for i, (name, rows) in enumerate(_groups(_queued_links(links), "link")):
        cue = series_style(i)
        ax.plot(rows["time_s"], rows["qdelay_mean_ms"], label=str(name), linewidth=1, color=cue["color"], linestyle=cue["linestyle"])
    _finish_time_axes(ax, "queueing delay (ms, interval mean)", "Queueing delay", window)
    return _save(fig, out_dir, "queue_delay.png")


def plot_delay_cdf(
    delay_hist: pd.DataFrame,
    out_dir: str | Path,
    what: str = "qdelay",
    names: Iterable[str] | None = None,
    window: Window = None,
    filename: str | None = None,
) -> Path:
    """CDF of per-packet delays (Flent's and Pantheon's convention), from the engine's histograms
    (``Result.delay_hist``; each value within 1.6 % of the sample's): ``what = "qdelay"`` one curve
    per link that queued (queueing delay of every packet it sent), ``"rtt"`` one per TCP flow (every
    RTT sample). ``names`` limits the curves. File: ``<what>_cdf_per_packet.png``."""
    fig, ax = _figure()
    rows = delay_hist[delay_hist["what"] == what] if not delay_hist.empty and "what" in delay_hist else delay_hist.iloc[0:0]
    count = 0
    if "name" in rows:
        rows = rows[rows["name"].notna() if names is None else rows["name"].isin(set(names))]
        if what == "qdelay" and not rows.empty:  # a link that never queued: a line at 0
            rows = rows[~(rows.groupby("name", sort=False)["value_ms"].transform("max") < QUEUED_MS)]
        count = rows["name"].nunique()
    if count > MAX_FLOW_LINES:  # too many to tell apart: every sample of them all in one curve
        pooled = rows.groupby("value_ms", as_index=False)["count"].sum()
        curves = [(f"all {count:,} {'flows' if what == 'rtt' else 'links'}", pooled)]
    else:
        curves = list(rows.groupby("name", sort=False)) if count else []
    for i, (name, g) in enumerate(curves):
        g = g.sort_values("value_ms")
        counts = g["count"].to_numpy(dtype=float)
        cue = series_style(i)
        ax.step(np.r_[0.0, g["value_ms"].to_numpy()], np.r_[0.0, np.cumsum(counts) / counts.sum()], where="post",
                color=cue["color"], linestyle=cue["linestyle"], label=f"{name} ({int(counts.sum())} samples)")
    span = "whole run" if window is None else f"{window[0]:g}-{window[1]:g} s"
    quantity = "queueing delay" if what == "qdelay" else "round-trip time"
    ax.set_xlabel(f"{quantity} (ms, per packet)")
    ax.set_ylabel("fraction of packets" if what == "qdelay" else "fraction of RTT samples")
    ax.set_xlim(left=0)
    ax.set_ylim(0, 1.02)
    ax.set_title(f"CDF of the per-packet {quantity} ({span})")
    _legend(ax)
    return _save(fig, out_dir, filename or f"{what}_cdf_per_packet.png")


def plot_queue_delay_cdf(links: pd.DataFrame, out_dir: str | Path, window: Window = None) -> Path:
    """Empirical CDF of the per-interval mean queueing delay, within the measurement window."""
    fig, ax = _figure()
    selected = _queued_links(links)
    if window is not None and not selected.empty:
        selected = selected[(selected["time_s"] >= window[0]) & (selected["time_s"] <= window[1])]
    for i, (name, rows) in enumerate(_groups(selected, "link")):
        delays = np.sort(rows["qdelay_mean_ms"].dropna().to_numpy())
        if delays.size:
            cue = series_style(i)
            ax.step(delays, np.arange(1, delays.size + 1) / delays.size, where="post", label=str(name),
                    color=cue["color"], linestyle=cue["linestyle"])
    ax.set_xlabel("queueing delay (ms, interval mean)")
    ax.set_ylabel("fraction of sample intervals")
    ax.set_ylim(0, 1.02)
    span = "whole run" if window is None else f"{window[0]:g}-{window[1]:g} s"
    ax.set_title(f"Queueing delay CDF ({span})")
    _legend(ax)
    return _save(fig, out_dir, "queue_delay_cdf.png")


# ---------------------------------------------------------------------------------------------------


def _figure():
    fig = Figure(figsize=_FIGSIZE, layout="constrained")
    ax = fig.subplots()
    ax.grid(True, alpha=0.3)
    return fig, ax


def _flow_label(flow: object, names: list[str] | None) -> str:
    """The engine identifies flows by index in the time series; show the scenario's name."""
    if names is not None and isinstance(flow, (int, np.integer)) and 0 <= int(flow) < len(names):
        return names[int(flow)]
    return str(flow)


def _groups(frame: pd.DataFrame, key: str) -> Iterable[tuple[object, pd.DataFrame]]:
    if frame.empty or key not in frame:
        return []
    return ((name, rows.sort_values("time_s")) for name, rows in frame.groupby(key, sort=False))


def _column_per_group(frame: pd.DataFrame, key: str, column: str) -> list[tuple[object, np.ndarray]]:
    """``column``'s values of each group of ``key`` in time order, without its missing values: what
    ``[(k, rows[column].dropna().to_numpy()) for k, rows in _groups(frame, key)]`` gives (groups in
    order of first appearance), from one sort of the whole frame instead of one per group (10,000
    flows took seconds)."""
    if frame.empty or key not in frame:
        return []
    codes, keys = pd.factorize(frame[key], sort=False)
    order = np.lexsort((frame["time_s"].to_numpy(), codes))  # by group, then time; stable
    codes, values = codes[order], frame[column].to_numpy()[order]
    present = (codes >= 0) & ~pd.isna(values)  # a row without a key is in no group, as in groupby
    codes, values = codes[present], values[present]
    cuts = np.searchsorted(codes, np.arange(1, len(keys)))
    return [(k, v) for k, v in zip(keys.tolist(), np.split(values, cuts))]


def _queued_links(links: pd.DataFrame) -> pd.DataFrame:
    """The bottleneck, plus any other link whose queueing delay ever reached QUEUED_MS."""
    if links.empty or "link" not in links:
        return links
    queued = links.groupby("link", sort=False)["qdelay_max_ms"].max()
    keep = {name for name, peak in queued.items() if peak >= QUEUED_MS or name == BOTTLENECK_LINK}
    return links[links["link"].isin(keep)]


def _finish_time_axes(ax, ylabel: str, title: str, window: Window) -> None:
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.set_ylim(bottom=0)
    if window is not None:
        ax.axvspan(window[0], window[1], color="grey", alpha=0.12, label="measurement window")
    _legend(ax)


def _legend(ax) -> None:
    """The legend outside the axes, on the right: it can never hide a data point (constrained layout
    shrinks the axes to make room)."""
    handles, _ = ax.get_legend_handles_labels()
    if handles:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, fontsize="small",
                  ncols=1 + len(handles) // 16, frameon=False)


def _save(fig: Figure, out_dir: str | Path, filename: str) -> Path:
    """Writes in the format the file name asks for, via a temporary file so re-plotting a run never
    leaves a truncated figure."""
    path = Path(out_dir) / filename
    if path.suffix.lower() == ".png" and _default_format.get() != "png":
        path = path.with_suffix("." + _default_format.get())
    fmt = FIGURE_FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise CcsimError(f"{path}: {path.suffix or 'no suffix'} is not a figure format (name it .png, .pdf or .svg)")
    tmp = path.with_name(f".{path.name}.tmp")
    sanitise_figure(fig)  # flow names and labels: no raw control or bidi character (ccsim.text)
    with matplotlib.rc_context({"svg.hashsalt": "ccsim", "pdf.compression": 6}):
        fig.savefig(tmp, dpi=_DPI, format=fmt, metadata=_NO_METADATA[fmt])
    os.replace(tmp, path)
    return path
