"""``ccsim report DIR``: one self-contained HTML page for a run or a sweep directory.

The page (``DIR/report.html``) embeds every figure as a base64 PNG, holds the summary tables, the
scenario TOML, the ccsim version and git revision, the seed (run) or the plan (sweep), and for a
directory written by ``ccsim reproduce`` the experiment's claims table (paper value vs ours). It
loads nothing from anywhere else (no CDN, no fonts, no JavaScript), so it can be mailed or archived
alone and opens in any browser.

The report is derived data: ``report.html`` is regenerated every time ``ccsim report`` runs, and
replacing it needs no ``--force``. Nothing else in the directory is written or changed; figures are
rendered in a temporary directory and embedded.

What kind of directory it is is decided by its files: ``meta.json`` = a run (``ccsim run``),
``sweep.json`` = a sweep (``ccsim sweep`` / ``ccsim reproduce``); ``experiment.json`` next to
``sweep.json`` names the registered experiment whose figures and claims are added.
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from ccsim import experiments
from ccsim._version import __version__
from ccsim.errors import CcsimError
from ccsim.files import read_json
from ccsim.outdir import is_owned, record_files
from ccsim.experiments import EXPERIMENT_FILE, Experiment
from ccsim.binning import nice_bin_s
from ccsim.precision import fmt_percentile, is_percentile_column
from ccsim.result import Result, bottleneck_name, git_revision, run_summary_shown
from ccsim.text import safe_html, safe_text
from ccsim.sweep import load_sweep

__all__ = [
    "REPORT_FILE",
    "EXPERIMENT_FILE",
    "detect_kind",
    "run_report_html",
    "sweep_report_html",
    "write_report",
    "nice_bin_s",
]

REPORT_FILE = "report.html"
# Rows a table of the page shows: a table of every flow and link of a 10,000-flow run made a 14 MB
# page; past this the table shows its first rows and names the file that holds them all.
MAX_TABLE_ROWS = 200
RUN_MARKER = "meta.json"
SWEEP_MARKER = "sweep.json"


# ---------------------------------------------------------------------------------------------------
# Entry points


def detect_kind(directory: str | Path) -> str:
    """``"run"`` or ``"sweep"`` from the files in ``directory``; CcsimError if neither."""
    directory = Path(directory)
    if not directory.is_dir():
        raise CcsimError(f"{directory}: no such directory")
    if (directory / SWEEP_MARKER).is_file():
        return "sweep"
    if (directory / RUN_MARKER).is_file():
        return "run"
    raise CcsimError(f"{directory}: neither a run directory ({RUN_MARKER}) nor a sweep directory ({SWEEP_MARKER})")


def write_report(directory: str | Path, experiment: str | Experiment | None = None) -> Path:
    """Writes ``directory/report.html`` (replacing an earlier one) and returns its path.

    ``experiment`` (a registered name or an Experiment) adds that experiment's figures and claims to a
    sweep report; by default it is read from ``experiment.json`` when present.
    """
    directory = Path(directory)
    kind = detect_kind(directory)
    if kind == "run":
        if experiment is not None:
            raise CcsimError(f"{directory}: --experiment applies to sweep directories only")
        page = run_report_html(directory)
    else:
        page = sweep_report_html(directory, experiment=experiment)
    path = directory / REPORT_FILE
    tmp = path.with_name(f".{REPORT_FILE}.{os.getpid()}.tmp")
    tmp.write_text(page, encoding="utf-8")
    os.replace(tmp, path)
    if is_owned(directory):
        record_files(directory, [REPORT_FILE], skip_known=True)
    return path


# ---------------------------------------------------------------------------------------------------
# A run


def run_report_html(directory: str | Path) -> str:
    """The report page of a run directory (written by ``ccsim run`` / ``Result.save``)."""
    from ccsim import plots  # lazy: start-up time (matplotlib)

    directory = Path(directory)
    result = Result.load(directory)
    meta = result.meta
    resolved = result.scenario
    window = plots.measure_window_s(resolved)
    names = [f["name"] for f in resolved.get("flows", [])]
    duration_s = resolved.get("duration_ns", 0) / 1e9
    bin_s = nice_bin_s(duration_s)
    flows = plots.active_rows(result.flows, resolved)

    figures: list[tuple[str, bytes]] = []
    with tempfile.TemporaryDirectory(prefix="ccsim-report-") as tmp:
        made: list[tuple[str, Path]] = []
        if not flows.empty:
            capacity = result.run_summary.get("bottleneck_rate_bps")
            made += [
                (f"Goodput per flow, {bin_s:g} s averages over the per-interval samples; dotted: the bottleneck's rate",
                 plots.plot_goodput(flows, tmp, window, names, bin_s=bin_s, capacity_bps=capacity)),
                ("Total goodput, each flow's part stacked (Flent's totals plot)", plots.plot_totals(flows, tmp, window, names, capacity)),
                ("Goodput per sample interval, distribution per flow in the measurement window",
                 plots.plot_box(flows, tmp, "goodput_bps", names, window)),
                # every sample, not bin means: averaging a sawtooth over bins draws a zigzag
                ("Congestion window per flow, every sample interval", plots.plot_cwnd(flows, tmp, window, names)),
            ]
            if flows["flow"].nunique() > 1:
                made.append((f"Jain's fairness index of the flows' goodput in {bin_s:g} s bins", plots.plot_jain_over_time(flows, tmp, bin_s, window)))
        if not result.links.empty:
            made += [
                ("Queueing delay over time (interval means)", plots.plot_queue_delay(result.links, tmp, window)),
            ]
            if not result.delay_hist.empty:  # per-packet samples (an older run directory has none: interval means then)
                made += [
                    ("CDF of the per-packet queueing delay (measurement window)", plots.plot_delay_cdf(result.delay_hist, tmp, "qdelay", window=window)),
                    ("CDF of the per-packet RTT per flow (measurement window)", plots.plot_delay_cdf(result.delay_hist, tmp, "rtt", window=window)),
                ]
            else:
                made.append(("CDF of the queueing delay (interval means, measurement window)", plots.plot_queue_delay_cdf(result.links, tmp, window)))
        scatter = _run_scatter_points(result)
        if not scatter.empty:
            made.append(("Throughput vs 95th-percentile RTT, one point per flow (Pantheon style)",
                         plots.plot_throughput_delay(scatter, tmp, label="label", title="Throughput vs 95th-percentile RTT per flow")))
        figures = [(caption, path.read_bytes()) for caption, path in made]

    title = f"ccsim run: {directory.resolve().name}"
    facts = [
        ("kind", "run"),
        ("directory", str(directory)),
        ("ccsim version (run)", meta.get("ccsim_version")),
        ("git revision (run)", meta.get("git_revision")),
        ("seed", meta.get("seed")),
        ("simulated", f"{duration_s:g} s"),
        ("measurement window", "whole run" if window is None else f"{window[0]:g}-{window[1]:g} s"),
        ("wall time", _fmt_seconds(meta.get("wall_time_s"))),
        ("environment", _environment_text(meta.get("environment"))),
    ]
    body = [_facts_table(facts)]
    shown = run_summary_shown(result.run_summary)
    link_names = list(result.link_summary["link"]) if "link" in result.link_summary else []
    if bottleneck_name(shown, link_names) is not None:  # a row number means nothing to a reader
        shown["bottleneck_link"] = f"{bottleneck_name(shown, link_names)} (row {shown['bottleneck_link']} of the link summary)"
    body.append(_section("Run summary", _dict_table(shown)))
    body.append(_section("Flows (summary window)", _frame_html(result.summary, "summary.parquet", "flows")))
    body.append(_section("Links (summary window)", _frame_html(result.link_summary, "link_summary.parquet", "links")))
    body.append(_section("Figures", _figures_html(figures)))
    body.append(_section("Scenario (TOML as given)", _pre(meta.get("scenario_toml", ""))))
    body.append(_section("Algorithm parameters actually used", _pre(json.dumps(meta.get("algorithm_params", {}), indent=2))))
    body.append(_section("Engine statistics", _dict_table(meta.get("engine_stats", {}))))
    return _page(title, body)


def _run_scatter_points(result: "Result") -> pd.DataFrame:
    from ccsim.plots import MAX_FLOW_LINES  # lazy: matplotlib (the report has imported it by now)

    summary = result.summary
    if summary.empty or not {"goodput_bps", "rtt_p95_ms"} <= set(summary.columns):
        return pd.DataFrame()
    rows = summary.copy()
    if "kind" in rows:
        rows = rows[rows["kind"].fillna("tcp") == "tcp"]
    name = rows["name"].astype(str) if "name" in rows else rows.index.astype(str)
    algo = rows["algorithm"].astype(str) if "algorithm" in rows else ""
    if len(rows) > MAX_FLOW_LINES and "algorithm" in rows:  # a legend of thousands of names: one per algorithm
        counts = algo.map(algo.value_counts())
        rows = rows.assign(label=algo + " (" + counts.map("{:,} flows".format) + ")")
    else:
        rows = rows.assign(label=(name + " (" + algo + ")") if "algorithm" in rows else name)
    return rows[["label", "goodput_bps", "rtt_p95_ms"]].dropna()


# ---------------------------------------------------------------------------------------------------
# A sweep


def sweep_report_html(directory: str | Path, experiment: str | Experiment | None = None) -> str:
    """The report page of a sweep directory; with an experiment, its figures and claims table."""
    from ccsim import plots  # lazy: start-up time (matplotlib)

    directory = Path(directory)
    sweep = load_sweep(directory)
    exp = _experiment_for(directory, experiment)
    plan_doc = _read_json(directory / SWEEP_MARKER)
    grid = _grid(sweep, plan_doc)
    flows = getattr(sweep, "flows", pd.DataFrame())
    runs = getattr(sweep, "runs", pd.DataFrame())
    params = [p for p in grid if p in flows.columns or p in runs.columns]
    numeric = [p for p in params if p in flows and pd.api.types.is_numeric_dtype(flows[p])]

    figures: list[tuple[str, bytes]] = []
    claims_html = ""
    with tempfile.TemporaryDirectory(prefix="ccsim-report-") as tmp:
        made: list[tuple[str, Path]] = []
        if exp is not None:
            exp_dir = Path(tmp) / "experiment"
            exp_dir.mkdir()
            for path in exp.figures(sweep, exp_dir):
                made.append((f"{exp.title}: {_caption_from_name(Path(path).name)}", Path(path)))
            claims_html = _claims_html(exp, sweep)
        else:
            x = numeric[0] if numeric else (params[0] if params else None)
            others = [p for p in params if p != x]
            group = others[0] if others else ("algorithm" if "algorithm" in flows else None)
            if x is not None and not flows.empty:
                made.append((f"Goodput per flow vs {x} (mean and 95 % CI over repetitions and flows)",
                             plots.plot_sweep_goodput(flows, x, tmp, group=group)))
            several = "run_id" in flows and not flows.empty and flows.groupby("run_id").size().max() > 1
            if x is not None and several and not runs.empty and "jain_index" in runs:  # one flow: always 1
                made.append((f"Jain's index per sweep point vs {x} (mean and 95 % CI)",
                             plots.plot_sweep_jain(runs, x, tmp, group=others[0] if others else None)))
            scatter = sweep_scatter_points(flows, params)
            if not scatter.empty:
                made.append(("Throughput vs 95th-percentile RTT: mean per algorithm and sweep point (95 % CI bars)",
                             plots.plot_throughput_delay(scatter, tmp, label="label", annotate="point")))
        figures = [(caption, Path(path).read_bytes()) for caption, path in made]

    title = f"ccsim sweep: {directory.resolve().name}" if exp is None else f"ccsim reproduce: {exp.title}"
    n_runs = len(runs) if runs is not None else 0
    facts = [
        ("kind", "sweep" if exp is None else f"experiment {exp.name}"),
        ("directory", str(directory)),
        ("runs", n_runs),
        ("swept", ", ".join(f"{k} = {_short(v)}" for k, v in grid.items()) or "-"),
        ("repetitions", _plan_attr(sweep, plan_doc, "repetitions")),
        ("seed", _plan_attr(sweep, plan_doc, "seed")),
        ("ccsim version", _first(plan_doc, "ccsim_version") or _current_version()),
        ("git revision", _first(plan_doc, "git_revision") or _report_git_revision()),
    ]
    body = [_facts_table(facts)]
    if exp is not None:
        lines = [f"<p>{safe_html(exp.description)}</p>", f"<p><b>Source:</b> {safe_html(exp.source)}</p>"]
        if _read_json(directory / EXPERIMENT_FILE).get("quick"):
            lines.append("<p class=warn>Quick mode (<code>--quick</code>): fewer points, repetitions and a shorter run; "
                         "values are indicative only.</p>")
        body.append(_section("Experiment", "\n".join(lines)))
        body.append(_section("Claims: the paper's figures and ours", claims_html))
    body.append(_section("Figures", _figures_html(figures)))
    summary = getattr(sweep, "summary", pd.DataFrame())
    body.append(_section("Summary per sweep point", _frame_html(_compact_summary(summary))))
    body.append(_section("Runs", _frame_html(runs, "runs.parquet", "runs")))
    body.append(_section("Base scenario (TOML)", _pre(_base_toml(sweep, plan_doc))))
    body.append(_section("Plan (sweep.json)", _pre(json.dumps(plan_doc, indent=2, default=str))))
    return _page(title, body)


def sweep_scatter_points(flows: pd.DataFrame, params: list[str]) -> pd.DataFrame:
    """Mean goodput and mean 95th-percentile RTT, each with the half-width of its 95 % confidence
    interval (Student t over the repetitions, as every other mean in the report), per algorithm and
    sweep point, for :func:`ccsim.plots.plot_throughput_delay`."""
    if flows.empty or not {"goodput_bps", "rtt_p95_ms"} <= set(flows.columns):
        return pd.DataFrame()
    keys = [p for p in params if p in flows and p != "algorithm" and not p.endswith(".algorithm")]
    by = (["algorithm"] if "algorithm" in flows else []) + keys
    if not by:
        by = ["point_id"] if "point_id" in flows else []
    frame = flows.copy()
    for k in keys:  # unhashable values (tables) become their text
        frame[k] = frame[k].map(_short)
    grouped = frame.groupby(by, sort=False, dropna=False) if by else [((), frame)]
    rows = []
    for key, g in grouped:
        key = key if isinstance(key, tuple) else (key,)
        values = dict(zip(by, key))
        rows.append({
            "label": str(values.get("algorithm", "all")),
            "point": ", ".join(f"{_tail(k)}={values[k]}" for k in keys) or "",
            "goodput_bps": g["goodput_bps"].mean(),
            "rtt_p95_ms": g["rtt_p95_ms"].mean(),
            "goodput_ci_bps": _ci_half_width(g["goodput_bps"]),
            "delay_ci_ms": _ci_half_width(g["rtt_p95_ms"]),
        })
    return pd.DataFrame(rows).dropna(subset=["goodput_bps", "rtt_p95_ms"])


def _ci_half_width(values: pd.Series) -> float:
    """Half-width of the Student-t 95 % CI of the mean (0 for a single value)."""
    from ccsim.sweep_stats import t_quantile  # lazy: keeps the report's import list short

    x = values.dropna()
    return float(t_quantile(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else 0.0


def _experiment_for(directory: Path, experiment: str | Experiment | None) -> Experiment | None:
    if experiment is None:
        doc = _read_json(directory / EXPERIMENT_FILE)
        if not doc.get("name"):
            return None
        experiment = doc["name"]
    return experiments.get(experiment) if isinstance(experiment, str) else experiment


def claim_rows(exp: Experiment, sweep: Any) -> list[dict[str, str]]:
    """The claims table as rows (claim, paper, ours, tolerance, verdict, where, error); a claim that
    cannot be computed (a point missing in --quick) is a row with its error, not a failure."""
    rows = []
    for index, claim in enumerate(exp.claims):
        error = ""
        try:
            ours = claim.ours(sweep)
        except Exception as e:
            ours, error = "n/a", f"{type(e).__name__}: {e}"
        verdict = claim.judge(sweep) if claim.verdict is not None and not error else None
        rows.append({"claim": claim.description, "paper": str(claim.paper), "ours": _short(ours),
                     "tolerance": claim.tolerance, "verdict": str(verdict) if verdict else "",
                     "label": verdict.label if verdict else "informative", "where": claim.where or "", "error": error,
                     "id": claim.id or f"#{index + 1}", "kind": claim.kind, "reason": claim.reason})
    return rows


def _claims_html(exp: Experiment, sweep: Any) -> str:
    rows = []
    for r in claim_rows(exp, sweep):
        rows.append(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"verdict {}\">{}</td><td>{}</td></tr>".format(
                safe_html(r["claim"]), safe_html(r["paper"]), safe_html(r["ours"]), safe_html(r["tolerance"]),
                r["label"].replace(" ", "-"), safe_html(r["verdict"]),
                safe_html(r["where"]) + (f"<br><span class=warn>{safe_html(r['error'])}</span>" if r["error"] else ""),
            )
        )
    return ("<table class=claims><thead><tr><th>claim</th><th>paper</th><th>ours</th><th>tolerance</th>"
            "<th>verdict (tolerance fixed in advance)</th><th>where in the paper</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _grid(sweep: Any, plan_doc: dict[str, Any]) -> dict[str, Any]:
    plan = getattr(sweep, "plan", None)
    grid = getattr(plan, "grid", None)
    if isinstance(grid, dict) and grid:
        return dict(grid)
    for key in ("grid", "parameters", "params"):
        value = _first(plan_doc, key)
        if isinstance(value, dict):
            return dict(value)
    return {}


def _plan_attr(sweep: Any, plan_doc: dict[str, Any], name: str) -> Any:
    value = getattr(getattr(sweep, "plan", None), name, None)
    return value if value is not None else _first(plan_doc, name)


def _base_toml(sweep: Any, plan_doc: dict[str, Any]) -> str:
    plan = getattr(sweep, "plan", None)
    try:
        base = getattr(plan, "base_scenario", None)
    except Exception:  # an invalid base cannot happen for a loaded sweep, but do not fail the report
        base = None
    if base is not None and hasattr(base, "to_toml"):
        return base.to_toml()
    for key in ("base_toml", "scenario_toml", "base"):
        value = _first(plan_doc, key)
        if isinstance(value, str):
            return value
        if isinstance(value, dict):
            return json.dumps(value, indent=2)
    return "(not recorded)"


def _first(doc: dict[str, Any], key: str) -> Any:
    """``doc[key]``, or the same key one level down (``doc["plan"][key]``, ``doc["meta"][key]``)."""
    if key in doc:
        return doc[key]
    for value in doc.values():
        if isinstance(value, dict) and key in value:
            return value[key]
    return None


KEY_METRICS = (
    "goodput_bps", "rtt_mean_ms", "rtt_p95_ms", "retransmits", "timeouts", "loss_rate",
    "jain_index", "bottleneck_utilisation", "bottleneck_qdelay_mean_ms", "total_goodput_bps",
    "utilisation", "qdelay_mean_ms", "qdelay_p95_ms",
)


def _compact_summary(summary: pd.DataFrame) -> pd.DataFrame:
    """The sweep's long-form summary (point, scope, name, metric, n, mean, CI, percentiles), cut to
    the key metrics, the bottleneck link and mean/CI/median columns; the full table is
    ``summary.parquet``."""
    if summary.empty:
        return summary
    rows = summary
    if "metric" in rows:
        rows = rows[rows["metric"].isin(KEY_METRICS)]
    if "scope" in rows and "name" in rows:
        rows = rows[(rows["scope"] != "link") | (rows["name"] == "bottleneck")]
    drop = [c for c in ("std", "p20", "p80") if c in rows.columns]
    return rows.drop(columns=drop)


# ---------------------------------------------------------------------------------------------------
# HTML pieces

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto; max-width: 1100px;
       padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.5em; border-bottom: 2px solid #446; padding-bottom: .2em; }
h2 { font-size: 1.2em; margin-top: 2em; color: #335; }
table { border-collapse: collapse; font-size: .85em; margin: .5em 0; }
th, td { border: 1px solid #ccd; padding: .25em .5em; text-align: right; vertical-align: top; }
th { background: #eef; }
td:first-child, th:first-child { text-align: left; }
table.facts td { text-align: left; }
table.claims td, table.claims th { text-align: left; }
.scroll { overflow-x: auto; }
pre { background: #f6f6f8; border: 1px solid #dde; padding: .8em; overflow-x: auto; font-size: .85em; }
figure { margin: 1.5em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: .9em; color: #555; }
.warn { color: #a40; }
td.verdict.agrees { color: #161; }
td.verdict.differs { color: #a40; font-weight: bold; }
td.verdict.partly { color: #865; }
footer { margin-top: 3em; font-size: .8em; color: #777; }
"""


def _page(title: str, body: Iterable[str]) -> str:
    generated = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        "<!DOCTYPE html>\n<html lang=en>\n<head>\n<meta charset=utf-8>\n"
        '<meta name=viewport content="width=device-width, initial-scale=1">\n'
        f"<title>{safe_html(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f"<h1>{safe_html(title)}</h1>\n" + "\n".join(body) +
        f"\n<footer>written by ccsim {safe_html(_current_version())} (ccsim report) at {generated}; "
        "self-contained: figures are embedded PNGs, no external resources.</footer>\n</body>\n</html>\n"
    )


def _section(heading: str, content: str) -> str:
    return f"<section>\n<h2>{safe_html(heading)}</h2>\n{content}\n</section>"


def _figures_html(figures: list[tuple[str, bytes]]) -> str:
    if not figures:
        return "<p>(no figures: the tables were empty)</p>"
    parts = []
    for i, (caption, png) in enumerate(figures, 1):
        data = base64.b64encode(png).decode("ascii")
        parts.append(
            f'<figure class=ccsim-figure id="fig{i}"><img src="data:image/png;base64,{data}" '
            f'alt="{safe_html(caption, quote=True)}"><figcaption>Figure {i}. {safe_html(caption)}</figcaption></figure>'
        )
    return "\n".join(parts)


def _frame_html(frame: pd.DataFrame | None, source: str | None = None, rows: str = "rows") -> str:
    """``frame`` as an HTML table; past ``MAX_TABLE_ROWS`` rows its first ones and a line naming
    ``source``, the file of the directory that holds every row."""
    if frame is None or frame.empty:
        return "<p>(empty)</p>"
    note = ""
    if source is not None and len(frame) > MAX_TABLE_ROWS:
        note = (f"<p>The first {MAX_TABLE_ROWS:,} of {len(frame):,} {safe_html(rows)}; every row is in "
                f"<code>{safe_html(source)}</code>.</p>")
        frame = frame.head(MAX_TABLE_ROWS)
    shown = frame.copy()
    shown.columns = [safe_text(c, None) for c in shown.columns]
    for column in shown.columns:  # tables and lists in cells (swept queue tables) as compact text
        if shown[column].dtype == object or pd.api.types.is_string_dtype(shown[column].dtype):
            # flow names: no raw control or bidi character (ccsim.text)
            shown[column] = shown[column].map(lambda v: safe_text(_short(v), None), na_action="ignore")
        elif is_percentile_column(column):  # histogram percentiles: the digits they have (ccsim.precision)
            shown[column] = shown[column].map(fmt_percentile)
    table = shown.to_html(index=False, na_rep="-", float_format=_fmt_float, border=0, escape=True)
    return f"{note}<div class=scroll>{table}</div>"


def _dict_table(values: dict[str, Any]) -> str:
    if not values:
        return "<p>(empty)</p>"
    rows = "".join(
        f"<tr><td>{safe_html(str(k))}</td><td>{safe_html(fmt_percentile(v) if is_percentile_column(k) else _short(v))}</td></tr>"
        for k, v in values.items()
    )
    return f"<table class=facts><tbody>{rows}</tbody></table>"


def _facts_table(facts: list[tuple[str, Any]]) -> str:
    rows = "".join(
        f"<tr><th>{safe_html(k)}</th><td>{safe_html(_short(v) if v is not None else '-')}</td></tr>" for k, v in facts
    )
    return f"<table class=facts><tbody>{rows}</tbody></table>"


def _pre(text: str) -> str:
    return f"<pre>{safe_html(text or '', quote=False, keep=chr(10) + chr(9))}</pre>"


def _fmt_float(x: float) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    # one style for every size: no exponent for large numbers (1e+07 beside 153077.0 read badly),
    # thousands grouped, whole numbers without a ".0"
    if math.isinf(x):
        return str(x)
    if abs(x) >= 1000:
        return f"{x:,.0f}" if float(x).is_integer() or abs(x) >= 1e5 else f"{x:,.1f}"
    if x != 0 and abs(x) < 1e-3:
        return f"{x:.3g}"
    return f"{x:.4f}".rstrip("0").rstrip(".")


def _short(value: Any) -> str:
    if isinstance(value, float):
        return _fmt_float(value)
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, default=str, separators=(", ", ": "))
    if hasattr(value, "tolist") and not isinstance(value, str):  # numpy arrays / scalars
        return _short(value.tolist())
    return str(value)


def _tail(path: str) -> str:
    return str(path).rsplit(".", 1)[-1]


def _fmt_seconds(value: Any) -> str:
    return "-" if value is None else f"{float(value):.3f} s"


def _caption_from_name(name: str) -> str:
    return Path(name).stem.replace("_", " ")


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = read_json(path)
    except CcsimError:  # optional file (experiment.json): unreadable reads as absent
        return {}
    return value if isinstance(value, dict) else {}


def _environment_text(env: Any) -> str | None:
    """``host, OS, Python 3.11.2; numpy 1.26, ...`` from meta.json's environment (None for older runs)."""
    if not isinstance(env, dict):
        return None
    packages = env.get("packages") if isinstance(env.get("packages"), dict) else {}
    deps = ", ".join(f"{k} {v}" for k, v in packages.items() if v)
    return f"{env.get('host')}, {env.get('os')}, Python {env.get('python')}; {deps}"


def _report_git_revision() -> str | None:
    """The sweep does not record a revision: show the one the report is written from, so labelled."""
    rev = git_revision()
    return None if rev is None else f"{rev} (of the code writing this report)"


def _current_version() -> str:
    return __version__
