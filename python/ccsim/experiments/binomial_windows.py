"""Binomial congestion control paper, Figs 7-15: window evolution of concurrent flows and impulse responses.

Bansal & Balakrishnan, "Binomial congestion control algorithms", IEEE INFOCOM 2001 ([Bansal01] in
``docs/bibliography.md``), Sections 3.2 and 3.3. The set-up is ``binomial``'s (ns-2 profile, RED with
Q = b x RTT, min_th 0.2 Q, max_th 0.8 Q, 1 KB packets, RTT 50 ms, starts U[0, 2] s, ten runs per point,
IIAD and SQRT with alpha 1, beta 0.6). The paper shows one run's congestion windows per figure and says
what they show in words; the claims measure those words over ten runs and the figures draw repetition 0.

* ``binomial_fig7`` (Figs 7, 8, 15): two flows started at U[0, 2] s, window over time; IIAD + IIAD and
  IIAD + TCP at b = 1.5 Mbit/s ("quickly achieve the same slopes", "window values quickly become
  similar"), SQRT + TCP at 3 Mbit/s (SQRT's variations "markedly smaller than TCP", larger than IIAD's).
  20 s, throughput over the paper's 10-20 s.
* ``binomial_fig9`` (Figs 9, 10, 11, 14): a long-running flow and an impulse (a second flow with slow
  start) joining it: IIAD meets IIAD, TCP meets IIAD, IIAD meets TCP (1.5 Mbit/s), TCP meets SQRT
  (3 Mbit/s); "converge to their fair bandwidth share". The paper gives no start time for the impulse;
  we take 20 s (as its Figs 12-13), 40 s runs, shares over 30-40 s (the 10-20 s after the start, the
  paper's own window length).
* ``binomial_fig12`` (Figs 12, 13): b = 9 Mbit/s; a TCP flow joining 15 long-lived IIAD flows at 20 s
  (n = 16), and an IIAD flow joining 5 TCP flows at 20 s (n = 6); "grabs its fair share". 40 s runs,
  shares over 30-40 s.

Tolerance for "fair" (stated before the runs): the mean over ten runs of the throughput ratio within
[0.67, 1.5], as ``binomial_fig6``. ``--quick``: two repetitions, the same points.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ccsim.experiments.binomial import IIAD, QUICK_REPETITIONS, REPETITIONS, SEED, SOURCE, base_document, flow, red_queue
from ccsim.experiments.helpers import pyplot, save_figure
from ccsim.experiments.registry import Claim, Experiment, Verdict, register
from ccsim.experiments.traces import point_runs
from ccsim.sweep import SweepPlan

SQRT = {"preset": "sqrt"}
RTT_MS = 50
LO, HI = 0.67, 1.5  # "fair": mean ratio in this band (as binomial_fig6)
IMPULSE_S = 20  # the impulse's start (the paper's Figs 12-13; not given for Figs 9-11 and 14)
IMPULSE_RUN_S, IMPULSE_WINDOW = 40, ["30s", "40s"]

# (figure, first flow, second flow, rate in Mbit/s); the flows' names identify the point in the results
PAIRS = [
    ("Fig. 7", ("iiad", "binomial", IIAD), ("iiad2", "binomial", IIAD), 1.5),
    ("Fig. 8", ("iiad", "binomial", IIAD), ("tcp", "newreno", {}), 1.5),
    ("Fig. 15", ("sqrt", "binomial", SQRT), ("tcp", "newreno", {}), 3.0),
]
# (figure, long-running flow, impulse, rate in Mbit/s)
IMPULSES = [
    ("Fig. 9", ("iiad", "binomial", IIAD), ("iiad_new", "binomial", IIAD), 1.5),
    ("Fig. 10", ("iiad", "binomial", IIAD), ("tcp_new", "newreno", {}), 1.5),
    ("Fig. 11", ("tcp", "newreno", {}), ("iiad_new", "binomial", IIAD), 1.5),
    ("Fig. 14", ("sqrt", "binomial", SQRT), ("tcp_new", "newreno", {}), 3.0),
]
# (figure, incumbents, how many, newcomer, rate in Mbit/s)
MANY = [
    ("Fig. 12", ("iiad", "binomial", IIAD), 15, ("tcp_new", "newreno", {}), 9.0),
    ("Fig. 13", ("tcp", "newreno", {}), 5, ("iiad_new", "binomial", IIAD), 9.0),
]


def _point(rate_mbit: float, first: tuple, second: tuple, count: int = 1, second_start: str | None = None) -> dict[str, Any]:
    p = {"topology.bottleneck_rate": f"{rate_mbit:g}Mbit", "topology.queue": red_queue(rate_mbit * 1e6, RTT_MS),
         "flows[0].name": first[0], "flows[0].algorithm": first[1], "flows[0].params": dict(first[2]), "flows[0].count": count,
         "flows[1].name": second[0], "flows[1].algorithm": second[1], "flows[1].params": dict(second[2])}
    if second_start:
        p["flows[1].start"] = second_start
    return p


def _plan(name: str, points: list[dict[str, Any]], duration_s: int, window: list[str], quick: bool) -> SweepPlan:
    doc = base_document("1.5Mbit", 1.5e6, RTT_MS, [flow("iiad", "binomial", IIAD), flow("tcp", "newreno")])
    doc["run"].update({"duration": f"{duration_s}s", "measure": list(window)})
    return SweepPlan(name=name, base=doc, explicit_points=points, repetitions=QUICK_REPETITIONS if quick else REPETITIONS, seed=SEED)


def build_fig7(quick: bool = False) -> SweepPlan:
    return _plan("binomial_fig7", [_point(r, a, b) for _, a, b, r in PAIRS], 20, ["10s", "20s"], quick)


def build_fig9(quick: bool = False) -> SweepPlan:
    return _plan("binomial_fig9", [_point(r, a, b, second_start=f"{IMPULSE_S}s") for _, a, b, r in IMPULSES],
                 IMPULSE_RUN_S, IMPULSE_WINDOW, quick)


def build_fig12(quick: bool = False) -> SweepPlan:
    return _plan("binomial_fig12", [_point(r, a, b, count=n, second_start=f"{IMPULSE_S}s") for _, a, n, b, r in MANY],
                 IMPULSE_RUN_S, IMPULSE_WINDOW, quick)


def _label(value: Any) -> str:
    return str(value).strip('"')


def shares(sweep: Any) -> pd.DataFrame:
    """Per run: the point's two flow names, the second flow's goodput over the mean goodput of the
    first group's flows (``ratio``), and the second flow's goodput over its fair share b/n."""
    rows = []
    for run_id, g in sweep.flows.groupby("run_id", sort=False):
        first, second = _label(g["flows[0].name"].iloc[0]), _label(g["flows[1].name"].iloc[0])
        names = g["name"].astype(str)
        group = g[names.str.startswith(first) & (names != second)]["goodput_bps"].astype(float)
        other = float(g[names == second]["goodput_bps"].iloc[0])
        total = float(g["goodput_bps"].astype(float).sum())
        rows.append({"run_id": run_id, "pair": f"{first}+{second}", "ratio": other / group.mean() if group.mean() > 0 else np.inf,
                     "share": other / (total / len(g)) if total > 0 else np.nan})
    return pd.DataFrame(rows)


def ratio_claim(figure: str, first: str, second: str, what: str) -> tuple[Any, Any]:
    """(ours, verdict) for the mean ratio second/first of one point against [LO, HI]."""

    def stats(sweep: Any) -> tuple[float, float, int]:
        t = shares(sweep)
        v = t[t["pair"] == f"{first}+{second}"]["ratio"].replace([np.inf], np.nan).dropna().to_numpy(float)
        if v.size == 0:
            raise LookupError(f"no {first}+{second} runs in this sweep")
        ci = 1.96 * v.std(ddof=1) / np.sqrt(v.size) if v.size > 1 else 0.0
        return float(v.mean()), float(ci), int(v.size)

    def ours(sweep: Any) -> str:
        m, ci, n = stats(sweep)
        return f"{what} {m:.2f} +- {ci:.2f} (mean, 95 % CI of {n} runs)"

    def verdict(sweep: Any) -> Verdict:
        m, _, _ = stats(sweep)
        return Verdict(LO <= m <= HI, f"{what} {m:.2f}, tolerance [{LO:g}, {HI:g}]")

    return ours, verdict


def _cwnd_variation(result: Any, name_prefix: str, t0: float, t1: float) -> float:
    """Coefficient of variation (std / mean) of the congestion window of the first flow whose name
    starts with ``name_prefix``, over [t0, t1] s of one run's samples."""
    names = result.summary.set_index("flow")["name"].astype(str)
    flow_id = next(f for f, n in names.items() if n.startswith(name_prefix))
    f = result.flows
    w = f[(f["flow"] == flow_id) & (f["time_s"] >= t0) & (f["time_s"] <= t1)]["cwnd_pkts"].to_numpy(float)
    return float(w.std() / w.mean()) if w.size and w.mean() > 0 else np.nan


def _run_of(sweep: Any, first: str, second: str) -> Any:
    for overrides, result in point_runs(sweep).values():
        if _label(overrides.get("flows[0].name")) == first and _label(overrides.get("flows[1].name")) == second:
            return result
    raise LookupError(f"no {first}+{second} point in this sweep")


def fig15_variation(sweep: Any) -> dict[str, float]:
    """Window variation (10-20 s, repetition 0): SQRT and TCP of Fig. 15, IIAD of Fig. 8."""
    sqrt_tcp, iiad_tcp = _run_of(sweep, "sqrt", "tcp"), _run_of(sweep, "iiad", "tcp")
    return {"sqrt": _cwnd_variation(sqrt_tcp, "sqrt", 10, 20), "tcp": _cwnd_variation(sqrt_tcp, "tcp", 10, 20),
            "iiad": _cwnd_variation(iiad_tcp, "iiad", 10, 20)}


def fig15_ours(sweep: Any) -> str:
    v = fig15_variation(sweep)
    return f"window std/mean over 10-20 s (repetition 0): IIAD {v['iiad']:.2f}, SQRT {v['sqrt']:.2f}, TCP {v['tcp']:.2f}"


def fig15_verdict(sweep: Any) -> Verdict:
    v = fig15_variation(sweep)
    ok = v["iiad"] < v["sqrt"] < v["tcp"]
    return Verdict(ok, f"IIAD {v['iiad']:.2f} < SQRT {v['sqrt']:.2f} < TCP {v['tcp']:.2f} {'holds' if ok else 'does not hold'}")


def _draw_windows(sweep: Any, out_dir: Path, points: list[tuple[str, str, str, str]], stem: str, impulse: bool) -> list[Path]:
    """One PNG per paper figure: the congestion windows of repetition 0 (every flow of small points;
    at most five of a large group, as the paper shows)."""
    plt = pyplot()
    shares(sweep).to_csv(out_dir / f"{stem}_shares.csv", index=False, float_format="%.4g")
    paths = []
    for figure, first, second, caption in points:
        result = _run_of(sweep, first, second)
        names = result.summary.set_index("flow")["name"].astype(str)
        shown = [f for f, n in names.items() if n.startswith(first) and n != second][:5] + [f for f, n in names.items() if n == second]
        fig, ax = plt.subplots(figsize=(6, 3.2))
        for flow_id in shown:
            g = result.flows[result.flows["flow"] == flow_id]
            ax.plot(g["time_s"], g["cwnd_pkts"], lw=0.8, label=names[flow_id])
        if impulse:
            ax.axvline(IMPULSE_S, color="k", lw=0.5, ls="--")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("congestion window (packets)")
        ax.set_title(f"{caption} ({figure})", fontsize=9)
        ax.legend(fontsize=7, ncol=2)
        path = save_figure(fig, out_dir, f"{stem}_{figure.replace('Fig. ', 'fig')}_cwnd.png", dpi=80)
        paths.append(path)
    return paths + [out_dir / f"{stem}_shares.csv"]


def draw_fig7(sweep: Any, out_dir: Path) -> list[Path]:
    return _draw_windows(sweep, out_dir, [
        ("Fig. 7", "iiad", "iiad2", "two IIAD flows, b = 1.5 Mbit/s, RTT 50 ms"),
        ("Fig. 8", "iiad", "tcp", "IIAD and TCP (NewReno), b = 1.5 Mbit/s, RTT 50 ms"),
        ("Fig. 15", "sqrt", "tcp", "SQRT and TCP (NewReno), b = 3 Mbit/s, RTT 50 ms")], "binomial", impulse=False)


def draw_fig9(sweep: Any, out_dir: Path) -> list[Path]:
    return _draw_windows(sweep, out_dir, [
        ("Fig. 9", "iiad", "iiad_new", "an IIAD flow joins a long-running IIAD flow at 20 s, b = 1.5 Mbit/s"),
        ("Fig. 10", "iiad", "tcp_new", "a TCP impulse meets a long-lived IIAD flow, b = 1.5 Mbit/s"),
        ("Fig. 11", "tcp", "iiad_new", "an IIAD impulse meets a long-lived TCP flow, b = 1.5 Mbit/s"),
        ("Fig. 14", "sqrt", "tcp_new", "a TCP impulse meets a long-lived SQRT flow, b = 3 Mbit/s")], "impulse", impulse=True)


def draw_fig12(sweep: Any, out_dir: Path) -> list[Path]:
    return _draw_windows(sweep, out_dir, [
        ("Fig. 12", "iiad", "tcp_new", "TCP joins 15 IIAD flows at 20 s, b = 9 Mbit/s (5 IIAD shown)"),
        ("Fig. 13", "tcp", "iiad_new", "IIAD joins 5 TCP flows at 20 s, b = 9 Mbit/s")], "many", impulse=True)


def _claim(description: str, paper: str, figure: str, first: str, second: str, what: str, where: str, id: str, window: str) -> Claim:
    ours, verdict = ratio_claim(figure, first, second, what)
    return Claim(description, paper, ours, where, verdict=verdict, tolerance=f"mean ratio in [{LO:g}, {HI:g}]", id=id,
                 reason=f"what the paper says of {figure} ({paper}) read with the Fig. 6 fairness band: mean of ten runs over "
                        f"{window} within a factor 1.5 either way (the paper shows one run and states the sharing in words)")


register(Experiment(
    name="binomial_fig7",
    paper_key="binomial",
    figure="Figs 7, 8, 15",
    title="Window evolution of two concurrent flows: IIAD + IIAD, IIAD + TCP, SQRT + TCP (Bansal & Balakrishnan 2001, Figs 7, 8, 15)",
    source=SOURCE + ", Sections 3.2-3.3, Figs 7, 8, 15",
    description="Two flows started at U[0, 2] s on RED (Q = b x RTT), RTT 50 ms: IIAD + IIAD and IIAD + NewReno at 1.5 Mbit/s, "
                "SQRT + NewReno at 3 Mbit/s; 20 s, throughput over 10-20 s, 10 runs; windows of run 0.",
    build_plan=build_fig7,
    draw_figures=draw_fig7,
    claims=(
        _claim("Fig. 7: two IIAD flows share (IIAD2/IIAD)", "share bandwidth well (same slopes)", "Fig. 7", "iiad", "iiad2",
               "IIAD2/IIAD", "Section 3.2, Fig. 7", "N8", "10-20 s"),
        _claim("Fig. 8: IIAD and TCP windows become similar (TCP/IIAD)", "TCP obtains its share", "Fig. 8", "iiad", "tcp",
               "TCP/IIAD", "Section 3.2, Fig. 8", "N9", "10-20 s"),
        _claim("Fig. 15: SQRT and TCP share (TCP/SQRT)", "bandwidth sharing not affected", "Fig. 15", "sqrt", "tcp",
               "TCP/SQRT", "Section 3.3, Fig. 15", "N10", "10-20 s"),
        Claim("Fig. 15: SQRT's window varies more than IIAD's, markedly less than TCP's", "IIAD < SQRT < TCP", fig15_ours,
              "Section 3.3, Figs 8, 15", verdict=fig15_verdict, tolerance="std/mean of cwnd over 10-20 s ordered IIAD < SQRT < TCP",
              id="N11", reason="Section 3.3: SQRT's window variations are 'markedly smaller than TCP' and larger than IIAD's; "
                               "coefficient of variation (the two figures differ in rate) over 10-20 s of repetition 0, as "
                               "the paper's figures show one run"),
    ),
))

register(Experiment(
    name="binomial_fig9",
    paper_key="binomial",
    figure="Figs 9, 10, 11, 14",
    title="Impulse responses: a flow joining a long-running one (Bansal & Balakrishnan 2001, Figs 9, 10, 11, 14)",
    source=SOURCE + ", Sections 3.2-3.3, Figs 9, 10, 11, 14",
    description="A long-running flow (start U[0, 2] s) and a second flow starting at 20 s with slow start, RED (Q = b x RTT), "
                "RTT 50 ms: IIAD meets IIAD, TCP meets IIAD, IIAD meets TCP (1.5 Mbit/s), TCP meets SQRT (3 Mbit/s); 40 s, "
                "shares over 30-40 s, 10 runs; windows of run 0.",
    build_plan=build_fig9,
    draw_figures=draw_fig9,
    claims=(
        _claim("Fig. 9: a new IIAD flow catches up with a long-running IIAD flow", "converges to the fair value", "Fig. 9", "iiad",
               "iiad_new", "new/old IIAD", "Section 3.2, Fig. 9", "N12", "30-40 s (10-20 s after the impulse)"),
        _claim("Fig. 10: a TCP impulse and a long-lived IIAD flow converge", "fair share", "Fig. 10", "iiad", "tcp_new",
               "TCP/IIAD", "Section 3.2, Fig. 10", "N13", "30-40 s (10-20 s after the impulse)"),
        _claim("Fig. 11: an IIAD impulse and a long-lived TCP flow converge", "fair share", "Fig. 11", "tcp", "iiad_new",
               "IIAD/TCP", "Section 3.2, Fig. 11", "N14", "30-40 s (10-20 s after the impulse)"),
        _claim("Fig. 14: a TCP impulse and a long-lived SQRT flow converge (faster than with IIAD)", "fair share", "Fig. 14", "sqrt",
               "tcp_new", "TCP/SQRT", "Section 3.3, Fig. 14", "N15", "30-40 s (10-20 s after the impulse)"),
    ),
))

register(Experiment(
    name="binomial_fig12",
    paper_key="binomial",
    figure="Figs 12, 13",
    title="A newcomer among many long-lived flows (Bansal & Balakrishnan 2001, Figs 12, 13)",
    source=SOURCE + ", Section 3.2, Figs 12, 13",
    description="b = 9 Mbit/s, RTT 50 ms, RED (Q = b x RTT = 56 packets): 15 IIAD flows and a NewReno flow from 20 s (n = 16); "
                "5 NewReno flows and an IIAD flow from 20 s (n = 6); 40 s, shares over 30-40 s, 10 runs; windows of run 0.",
    build_plan=build_fig12,
    draw_figures=draw_fig12,
    claims=(
        _claim("Fig. 12: a TCP flow grabs its fair share among 15 IIAD flows (TCP / mean IIAD)", "fair share after about 25 s",
               "Fig. 12", "iiad", "tcp_new", "TCP / mean IIAD", "Section 3.2, Fig. 12", "N16", "30-40 s (10-20 s after the newcomer)"),
        _claim("Fig. 13: an IIAD flow grabs its fair allocation among 5 TCP flows (IIAD / mean TCP)", "fair allocation",
               "Fig. 13", "tcp", "iiad_new", "IIAD / mean TCP", "Section 3.2, Fig. 13", "N17", "30-40 s (10-20 s after the newcomer)"),
    ),
))
