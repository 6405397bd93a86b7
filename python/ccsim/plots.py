"""Default plots of a run: cwnd and goodput per flow, queueing delay per link and its CDF.

Figures are built with the object API (``matplotlib.figure.Figure``, rendered by Agg) rather than
pyplot, so plotting holds no global state and works without a display. Every axis label carries its
unit. Each function takes the DataFrames (or a Result) and an output directory and returns the path
it wrote; the measurement window is shaded when it is not the whole run.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

import matplotlib

matplotlib.use("Agg")  # no display needed; harmless if the embedding application chose another

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

if TYPE_CHECKING:
    from ccsim.result import Result

__all__ = ["active_rows", "plot_cwnd", "plot_goodput", "plot_queue_delay", "plot_queue_delay_cdf", "write_default_plots"]

BOTTLENECK_LINK = "bottleneck"
QUEUED_MS = 1.0  # links whose queueing delay never reaches this are left out of the delay plots
_FIGSIZE = (8.0, 4.5)
_DPI = 120

Window = tuple[float, float] | None  # measurement window in seconds, or None for "whole run"


def write_default_plots(result: "Result", out_dir: str | Path) -> list[Path]:
    """Writes every default plot of ``result`` into ``out_dir``; returns the paths written."""
    window = measure_window_s(result.scenario)
    names = [f["name"] for f in result.scenario.get("flows", [])]
    flows = active_rows(result.flows, result.scenario)
    return [
        plot_cwnd(flows, out_dir, window, names),
        plot_goodput(flows, out_dir, window, names),
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
    start_s = index.map(lambda i: specs[int(i)]["start_ns"] / 1e9 if pd.notna(i) else float("-inf"))
    stop_s = index.map(lambda i: specs[int(i)]["stop_ns"] / 1e9 if pd.notna(i) else float("inf"))
    keep = (flows["time_s"] > start_s) & (flows["time_s"] - interval_s < stop_s)
    return flows[keep.to_numpy(dtype=bool)]


def plot_cwnd(flows: pd.DataFrame, out_dir: str | Path, window: Window = None, names: list[str] | None = None) -> Path:
    """Congestion window of each flow over time, in packets."""
    fig, ax = _figure()
    for flow, rows in _groups(flows, "flow"):
        ax.step(rows["time_s"], rows["cwnd_pkts"], where="post", label=_flow_label(flow, names), linewidth=1)
    _finish_time_axes(ax, "congestion window (packets)", "Congestion window", window)
    return _save(fig, out_dir, "cwnd.png")


def plot_goodput(flows: pd.DataFrame, out_dir: str | Path, window: Window = None, names: list[str] | None = None) -> Path:
    """Goodput of each flow per sample interval, in Mbit/s."""
    fig, ax = _figure()
    for flow, rows in _groups(flows, "flow"):
        ax.plot(rows["time_s"], rows["goodput_bps"] / 1e6, label=_flow_label(flow, names), linewidth=1)
    _finish_time_axes(ax, "goodput (Mbit/s)", "Goodput per sample interval", window)
    return _save(fig, out_dir, "goodput.png")


def plot_queue_delay(links: pd.DataFrame, out_dir: str | Path, window: Window = None) -> Path:
    """Mean queueing delay per sample interval of the bottleneck and any other link that queued."""
    fig, ax = _figure()
    for name, rows in _groups(_queued_links(links), "link"):
        ax.plot(rows["time_s"], rows["qdelay_mean_ms"], label=str(name), linewidth=1)
    _finish_time_axes(ax, "queueing delay (ms, interval mean)", "Queueing delay", window)
    return _save(fig, out_dir, "queue_delay.png")


def plot_queue_delay_cdf(links: pd.DataFrame, out_dir: str | Path, window: Window = None) -> Path:
    """Empirical CDF of the per-interval mean queueing delay, within the measurement window."""
    fig, ax = _figure()
    selected = _queued_links(links)
    if window is not None and not selected.empty:
        selected = selected[(selected["time_s"] >= window[0]) & (selected["time_s"] <= window[1])]
    for name, rows in _groups(selected, "link"):
        delays = np.sort(rows["qdelay_mean_ms"].dropna().to_numpy())
        if delays.size:
            ax.step(delays, np.arange(1, delays.size + 1) / delays.size, where="post", label=str(name))
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
    handles, _ = ax.get_legend_handles_labels()
    if handles:
        ax.legend(loc="best", fontsize="small", ncols=1 + len(handles) // 8)


def _save(fig: Figure, out_dir: str | Path, filename: str) -> Path:
    """Writes via a temporary file so re-plotting a run never leaves a truncated PNG."""
    path = Path(out_dir) / filename
    tmp = path.with_name(f".{filename}.tmp")
    fig.savefig(tmp, dpi=_DPI, format="png", metadata={"Software": None})
    os.replace(tmp, path)
    return path
