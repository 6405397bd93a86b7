"""Rich display in Jupyter: ``Result._repr_html_`` and ``SweepResult._repr_html_`` show the summary
table and the key figure (goodput per flow for a run; goodput against the first swept parameter
for a sweep) instead of one line of text. Every figure is built with the same honest rules as the
command line (docs/reports.md): the busiest link, Jain's flow set named, percentiles to three digits."""

from __future__ import annotations

import base64
import math
import tempfile
from pathlib import Path
from typing import Any

from ccsim.binning import nice_bin_s
from ccsim.precision import fmt_percentile
from ccsim.text import safe_html

__all__ = ["result_html", "sweep_html"]


def _num(value: Any, scale: float = 1.0, fmt: str = "{:.3f}") -> str:
    try:
        x = float(value) * scale
    except (TypeError, ValueError):
        return "-"
    return "-" if math.isnan(x) else fmt.format(x)


def _img(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img style="max-width:100%" src="data:image/png;base64,{data}" alt="{safe_html(path.stem)}">'


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{safe_html(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{safe_html(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table class=ccsim-summary><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def result_html(result: Any, figure: bool = True) -> str:
    """The per-flow summary, the bottleneck and Jain's index with its flows, and goodput per flow."""
    s = result.summary
    r = result.run_summary
    capacity = r.get("bottleneck_rate_bps") or math.nan
    rows = []
    for row in s.to_dict("records"):
        rows.append([
            str(row.get("name", row.get("flow"))), str(row.get("kind", "tcp")), str(row.get("algorithm", "")),
            _num(row.get("goodput_bps"), 1e-6), _num(row.get("goodput_bps"), 100 / capacity, "{:.1f} %"),
            _num(row.get("goodput_active_bps"), 1e-6), _num(row.get("active_s"), 1, "{:g}"),
            _num(row.get("retransmits"), 1, "{:.0f}"), _num(row.get("rtt_mean_ms"), 1, "{:.1f}"),
            fmt_percentile(row.get("rtt_p95_ms")), "yes" if row.get("in_jain") else "no",
        ])
    table = _table(["flow", "kind", "algorithm", "goodput Mbit/s", "share", "while on Mbit/s", "on s", "retx",
                    "RTT mean ms", "RTT p95 ms", "in Jain"], rows)
    links = result.link_summary
    flagged = links[links["bottleneck"]] if "bottleneck" in links else links.iloc[0:0]
    name = str(flagged["link"].iloc[0]) if len(flagged) else "bottleneck"
    counted = list(s.loc[s["in_jain"].astype(bool), "name"]) if "in_jain" in s else []
    facts = (f"<p>bottleneck <b>{safe_html(name)}</b> (the busiest link): utilisation "
             f"{_num(r.get('bottleneck_utilisation'), 100, '{:.1f} %')}, mean queueing delay "
             f"{_num(r.get('bottleneck_qdelay_mean_ms'), 1, '{:.1f} ms')}; Jain index "
             f"{_num(r.get('jain_index'))} over {safe_html(', '.join(map(str, counted)) or 'no flow')}; "
             f"seed {safe_html(str(result.meta.get('seed')))}</p>")
    parts = [f"<div class=ccsim-result><b>ccsim run</b> {safe_html(repr(result))}", table, facts]
    if figure and not result.flows.empty:
        from ccsim import plots  # lazy: start-up time (matplotlib)

        resolved = result.scenario
        with tempfile.TemporaryDirectory(prefix="ccsim-nb-") as tmp:
            path = plots.plot_goodput(plots.active_rows(result.flows, resolved), tmp, plots.measure_window_s(resolved),
                                      [f["name"] for f in resolved.get("flows", [])],
                                      bin_s=nice_bin_s(resolved.get("duration_ns", 0) / 1e9), capacity_bps=r.get("bottleneck_rate_bps"))
            parts.append(_img(path))
    return "\n".join(parts) + "</div>"


def sweep_html(sweep: Any, figure: bool = True) -> str:
    """Mean goodput with its 95 % CI per point (and per flow name), and goodput against the first
    swept parameter."""
    summary = sweep.summary
    parts = [f"<div class=ccsim-sweep><b>ccsim sweep</b> {safe_html(repr(sweep))}"]
    params = list(sweep.plan.parameters)
    if not summary.empty and {"metric", "mean"} <= set(summary.columns):
        rows = summary[(summary["metric"] == "goodput_bps") & (summary.get("scope", "flow") == "flow")]
        table_rows = []
        for row in rows.to_dict("records"):
            ci = f"{_num(row.get('ci95_low'), 1e-6)}-{_num(row.get('ci95_high'), 1e-6)}"
            table_rows.append([*(str(row.get(p, "")) for p in params), str(row.get("name", "")), str(row.get("n", "")),
                               _num(row.get("mean"), 1e-6), ci])
        parts.append(_table([*params, "flow", "runs", "goodput Mbit/s (mean)", "95 % CI"], table_rows))
    numeric = [p for p in params if p in sweep.flows and str(sweep.flows[p].dtype) != "object"]
    if figure and numeric and "goodput_bps" in sweep.flows:
        from ccsim import plots  # lazy: start-up time (matplotlib)

        with tempfile.TemporaryDirectory(prefix="ccsim-nb-") as tmp:
            group = "name" if "name" in sweep.flows and sweep.flows["name"].nunique() > 1 else None
            parts.append(_img(plots.plot_sweep_goodput(sweep.flows, numeric[0], tmp, group=group, bars="ci")))
    return "\n".join(parts) + "</div>"
