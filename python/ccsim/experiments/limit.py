"""Németh, Molnár, Tarján, Szabó, "TCP Limit: a streaming friendly transport protocol" ([Nemeth07] in
docs/bibliography.md).

Experiments (docs/reproductions/limit.md has the set-ups, figures and claims):

* ``limit_fig3``: one flow alone on the Fig. 1 path (5 Mbit/s, 60 ms link latency read as one-way,
  BDP queue of 50 packets of 1500 B, initial ssthresh 25 packets), artificial random loss from 15 s
  on: TCP Limit on NewReno loses utilisation, on Westwood with Faster Recovery keeps it (section
  V-A). The caption's "artificial packet drop" does not give the loss rate: swept over 0.1 % and 1 %.
* ``limit_backlog``: the bound of eq. (7), backlog Q <= (alpha - 1) x BDP whatever the number of
  flows, for 1, 4 and 16 TCP Limit flows on a 10 Mbit/s, 100 ms round-trip path with a BDP queue
  (83 packets; the bound is 8.3 packets), and NewReno for comparison.

Profile ``ns2`` (the paper's simulator), MTU 1500 B as the paper ("the maximal transfer unit is 1500
bytes ... throughout the paper"): mss 1460 B with ns-2's 40 B of headers; receive window 64 MiB
(ns-2's default 20 packets would cap every flow).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import json

import numpy as np
import pandas as pd

from ccsim.experiments.helpers import pyplot, rows_at
from ccsim.experiments.registry import Claim, Experiment, register
from ccsim.experiments.traces import point_runs
from ccsim.sweep import SweepPlan

SOURCE = ("F. Németh, S. Molnár, P. Tarján, R. Szabó, \"TCP Limit: a streaming friendly transport protocol\", BME, c. 2007")
SEED = 2006
ALPHA = 1.1
TCP = {"profile": "ns2", "rwnd": "64MiB", "mss": "1460B"}


# --- Fig. 3 -------------------------------------------------------------------------------------

FIG3 = "limit_fig3"
LOSS_AT_S = 15
LOSS_RATES = [0.001, 0.01]
VARIANTS = {  # label -> (algorithm, params)
    "NewReno": ("newreno", {}),
    "Limit (NewReno)": ("tcp_limit", {}),
    "Limit + Faster Recovery": ("tcp_limit", {"base": "westwood"}),
}
LABEL = "variant"


def fig3_plan(quick: bool = False) -> SweepPlan:
    duration = 30 if quick else 45
    doc = {
        "run": {"duration": f"{duration}s", "sample_interval": "500ms", "seed": SEED, "measure": [f"{LOSS_AT_S + 5}s", f"{duration}s"]},
        "topology": {"kind": "dumbbell", "bottleneck_rate": "5Mbit", "bottleneck_delay": "60ms", "queue": "50pkt"},
        "tcp": dict(TCP, initial_ssthresh="25pkt"),
        "flows": [{"algorithm": "newreno", "count": 1, "name": "tcp"}],
    }
    points = []
    for p in ([0.01] if quick else LOSS_RATES):
        for label, (algo, params) in VARIANTS.items():
            points.append({"topology.loss": [["0s", 0.0], [f"{LOSS_AT_S}s", p]], "flows[0].algorithm": algo,
                           "flows[0].params": dict(params), "flows[0].name": label})
    return SweepPlan(name=FIG3, base=doc, explicit_points=points, repetitions=2 if quick else 5, seed=SEED)


def _fig3_table(sweep: Any):
    """Per run: variant, loss rate and utilisation (goodput / 5 Mbit/s) from 20 s to the end."""
    r = sweep.runs
    return pd.DataFrame({"variant": r["flows[0].name"], "p": r["topology.loss"].map(_final_loss),
                         "after": r["total_goodput_bps"] / 5e6})


def _final_loss(value: Any) -> float:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return float("nan")
    if isinstance(value, (list, tuple)) and value:
        return float(value[-1][1])
    return float(value)


def fig3_figures(sweep: Any, out_dir: Path) -> list[Path]:
    plt = pyplot()

    traces = list(point_runs(sweep).values())
    ps = sorted(set(_final_loss(o["topology.loss"]) for o, _ in traces))
    fig, axes = plt.subplots(1, len(ps), figsize=(7, 3.2), dpi=100, squeeze=False, sharey=True)
    for overrides, result in traces:
        ax = axes[0][ps.index(_final_loss(overrides["topology.loss"]))]
        g = result.flows
        ax.plot(g["time_s"], g["cwnd_pkts"], lw=1, label=overrides["flows[0].name"])
    for ax, p in zip(axes[0], ps):
        ax.axvline(LOSS_AT_S, color="grey", ls=":", lw=1)
        ax.set_title(f"loss {p * 100:g} % from {LOSS_AT_S} s", fontsize=9)
        ax.set_xlabel("time (s)")
    axes[0][0].set_ylabel("cwnd (packets)")
    axes[0][0].legend(fontsize=7)
    fig.suptitle("TCP Limit Fig. 3: random loss from 15 s, with and without Faster Recovery", fontsize=10)
    fig.tight_layout()
    path = out_dir / "cwnd_loss.png"
    fig.savefig(path)
    plt.close(fig)
    return [path]


def _after(sweep: Any, variant: str, p: float) -> np.ndarray:
    t = _fig3_table(sweep)
    rows = rows_at(rows_at(t, "variant", variant), "p", p)
    if rows.empty:
        raise LookupError(f"no {variant} runs at p = {p:g}")
    return rows["after"].to_numpy(dtype=float)


def fig3_util_ours(variant: str, p: float):
    def ours(sweep: Any) -> str:
        a = _after(sweep, variant, p) * 100
        return f"{np.median(a):.0f} % (median of {a.size}, {a.min():.0f}-{a.max():.0f} %)"

    return ours


def fig3_fr_verdict(p: float):
    def verdict(sweep: Any) -> str:
        fr = float(np.median(_after(sweep, "Limit + Faster Recovery", p)))
        return "reproduced" if fr >= 0.9 else f"differs: {fr * 100:.0f} % of the link"

    return verdict


def fig3_degrade_verdict(p: float):
    def verdict(sweep: Any) -> str:
        plain = float(np.median(_after(sweep, "Limit (NewReno)", p)))
        fr = float(np.median(_after(sweep, "Limit + Faster Recovery", p)))
        reno = float(np.median(_after(sweep, "NewReno", p)))
        if plain < fr - 0.05:
            return "reproduced" + (" (and not below NewReno)" if plain >= reno - 0.02 else f" (but below NewReno's {reno * 100:.0f} %)")
        return f"differs: Limit alone {plain * 100:.0f} % vs with FR {fr * 100:.0f} %"

    return verdict


_fig3_claims = []
for _p in LOSS_RATES:
    _fig3_claims += [
        Claim(f"Limit + Faster Recovery, utilisation after the loss starts (p = {_p * 100:g} %)", "keeps full utilisation",
              fig3_util_ours("Limit + Faster Recovery", _p), "Section V-A, Fig. 3(b)", tolerance=">= 90 % of 5 Mbit/s",
              verdict=fig3_fr_verdict(_p)),
        Claim(f"Limit on NewReno, utilisation after the loss starts (p = {_p * 100:g} %)", "degrades (below Fig. 3(b))",
              fig3_util_ours("Limit (NewReno)", _p), "Section V-A, Fig. 3(a)",
              tolerance="at least 5 points below Limit + Faster Recovery", verdict=fig3_degrade_verdict(_p)),
        Claim(f"NewReno, utilisation after the loss starts (p = {_p * 100:g} %)", "not shown",
              fig3_util_ours("NewReno", _p), "-"),
    ]

register(Experiment(
    name=FIG3,
    title="TCP Limit alone under random loss, with and without Westwood Faster Recovery (Németh et al., Fig. 3)",
    source=SOURCE + "; Section V-A, Fig. 3",
    description="One flow on the Fig. 1 path (5 Mbit/s, 60 ms each way, 50-packet BDP queue, initial ssthresh 25 "
                "packets), ns-2 profile with 1500 B packets; Bernoulli loss from 15 s at p = 0.1 % and 1 % (the "
                "paper gives no rate); NewReno, TCP Limit on NewReno, TCP Limit on Westwood (Faster Recovery); "
                "45 s, 5 repetitions; utilisation over 20 s to the end. --quick: p = 1 %, 30 s, 2 repetitions.",
    build_plan=fig3_plan,
    draw_figures=fig3_figures,
    paper_key="limit",
    figure="Fig. 3",
    claims=tuple(_fig3_claims),
))


# --- backlog bound, eq. (7) ---------------------------------------------------------------------

BACKLOG = "limit_backlog"
FLOW_COUNTS = [1, 4, 16]
BDP_PKTS = 10e6 * 0.100 / 8 / 1500  # 83.3
BOUND_PKTS = (ALPHA - 1) * BDP_PKTS  # 8.3
COUNT_PATH = "flows[0].count"
ALGO_PATH = "flows[0].algorithm"


def backlog_plan(quick: bool = False) -> SweepPlan:
    duration = 30 if quick else 90
    doc = {
        "run": {"duration": f"{duration}s", "measure": [f"{duration // 3}s", f"{duration}s"], "sample_interval": "100ms", "seed": SEED},
        "topology": {"kind": "dumbbell", "bottleneck_rate": "10Mbit", "bottleneck_delay": "50ms", "queue": "83pkt"},
        "tcp": dict(TCP),
        "flows": [{"algorithm": "tcp_limit", "count": 1, "start": {"uniform": ["0s", "2s"]}}],
    }
    return SweepPlan(name=BACKLOG, base=doc, grid={ALGO_PATH: ["tcp_limit", "newreno"], COUNT_PATH: [1, 4] if quick else FLOW_COUNTS},
                     repetitions=1 if quick else 3, seed=SEED)


PKT_MS = 1500 * 8 / 10e6 * 1e3  # 1.2 ms to serve one 1500 B packet at 10 Mbit/s


def _queues(sweep: Any):
    """Per run: mean and 95th-percentile bottleneck backlog in packets over the measured window
    (queueing delay of the packets served / the time to serve one packet), and utilisation."""
    b = sweep.links[sweep.links["link"] == "bottleneck"]
    return pd.DataFrame({"algorithm": b[ALGO_PATH], "flows": b[COUNT_PATH].astype(int),
                         "mean": b["qdelay_mean_ms"] / PKT_MS, "p95": b["qdelay_p95_ms"] / PKT_MS, "util": b["utilisation"]})


def backlog_figures(sweep: Any, out_dir: Path) -> list[Path]:
    plt = pyplot()

    t = _queues(sweep).groupby(["algorithm", "flows"]).mean(numeric_only=True).reset_index()
    fig, ax = plt.subplots(figsize=(6, 3.2), dpi=100)
    for algo, g in t.groupby("algorithm"):
        ax.plot(g["flows"], g["mean"], marker="o", label=f"{algo}: mean")
        ax.plot(g["flows"], g["p95"], marker="x", ls="--", label=f"{algo}: 95th percentile")
    ax.axhline(BOUND_PKTS, color="grey", ls=":", label=f"eq. (7): (alpha-1) BDP = {BOUND_PKTS:.1f} pkts")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("number of flows")
    ax.set_ylabel("bottleneck queue (packets)")
    ax.set_title("TCP Limit backlog bound, 10 Mbit/s, 100 ms, 83-packet queue")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = out_dir / "backlog.png"
    fig.savefig(path)
    plt.close(fig)
    return [path]


def backlog_ours(n: int):
    def ours(sweep: Any) -> str:
        t = _queues(sweep)
        lim = t[(t["algorithm"] == "tcp_limit") & (t["flows"] == n)]
        reno = t[(t["algorithm"] == "newreno") & (t["flows"] == n)]
        if lim.empty:
            raise LookupError(f"no {n}-flow tcp_limit runs")
        text = f"mean {lim['mean'].mean():.1f}, 95th pct {lim['p95'].mean():.1f} pkts; utilisation {lim['util'].mean() * 100:.0f} %"
        if not reno.empty:
            text += f" (NewReno: mean {reno['mean'].mean():.1f} pkts)"
        return text

    return ours


def backlog_verdict(n: int):
    def verdict(sweep: Any) -> str:
        t = _queues(sweep)
        lim = t[(t["algorithm"] == "tcp_limit") & (t["flows"] == n)]
        mean = float(lim["mean"].mean())
        return "reproduced" if mean <= 1.5 * BOUND_PKTS else f"differs: mean backlog {mean:.1f} pkts = {mean / BOUND_PKTS:.1f} x the bound"

    return verdict


register(Experiment(
    name=BACKLOG,
    title="TCP Limit backlog bound Q <= (alpha - 1) BDP for any number of flows (Németh et al., eq. 7)",
    source=SOURCE + "; Section IV, eqs. (3)-(7)",
    description="1, 4 and 16 TCP Limit flows (and NewReno for comparison), starts uniform in [0, 2] s, 10 Mbit/s, "
                "50 ms each way, 83-packet (BDP) drop-tail queue, ns-2 profile with 1500 B packets; 90 s, queue "
                "measured over 30-90 s, 3 repetitions. The paper derives the bound for equal RTTs in a fluid "
                "model; it shows no simulation of it. --quick: 1 and 4 flows, 30 s, 1 repetition.",
    build_plan=backlog_plan,
    draw_figures=backlog_figures,
    paper_key="limit",
    figure="eq. (7)",
    claims=tuple(
        Claim(f"bottleneck backlog with {n} TCP Limit flow(s)", f"<= {BOUND_PKTS:.1f} packets ((alpha-1) x BDP)",
              backlog_ours(n), "Section IV, eq. (7)", tolerance="time-mean backlog <= 1.5 x the bound",
              verdict=backlog_verdict(n))
        for n in FLOW_COUNTS
    ),
))


# --- Fig. 1 -------------------------------------------------------------------------------------

FIG1 = "limit_fig1"
CBR_STOP_S = 8.0


def fig1_plan(quick: bool = False) -> SweepPlan:
    doc = {
        "run": {"duration": "15s", "sample_interval": "100ms", "seed": SEED},
        "topology": {"kind": "dumbbell", "bottleneck_rate": "5Mbit", "bottleneck_delay": "60ms", "queue": "50pkt"},
        "tcp": dict(TCP, initial_ssthresh="25pkt"),
        "flows": [{"algorithm": "tcp_limit", "count": 1, "name": "tcp", "params": {"forced_decrease": False}},
                  {"kind": "cbr", "rate": "1Mbit", "payload": "1000B", "name": "cbr", "stop": f"{CBR_STOP_S:g}s"}],
    }
    # Fig. 1 is shown with the simple algorithm (section III presents it first); the extended one beside it
    return SweepPlan(name=FIG1, base=doc, grid={FORCED_PATH: [False, True]}, repetitions=1, seed=SEED)


FORCED_PATH = "flows[0].params.forced_decrease"


def _fig1_trace(sweep: Any, forced: bool = False):
    """(time-indexed frame of cwnd_pkts, cwe_re_pkts, limit_pkts, holding) of the TCP flow, and the result."""
    result = next(r for o, r in point_runs(sweep).values() if bool(o.get(FORCED_PATH)) == forced)
    f = result.flows[result.flows["flow"] == 0].set_index("time_s")[["cwnd_pkts"]]
    m = result.cc_metrics
    p = m[m["flow"] == 0].pivot_table(index="time_s", columns="name", values="value")
    mss = 1460.0
    t = f.join(pd.DataFrame({"cwe_re_pkts": p["cwe_re_bytes"] / mss, "limit_pkts": p["limit_bytes"] / mss, "holding": p["holding"]}))
    return t, result


def fig1_figures(sweep: Any, out_dir: Path) -> list[Path]:
    plt = pyplot()

    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2), dpi=100, sharey=True)
    for ax, forced in zip(axes, (False, True)):
        t, _ = _fig1_trace(sweep, forced)
        ax.plot(t.index, t["cwnd_pkts"], lw=1.2, label="cwnd")
        ax.plot(t.index, t["cwe_re_pkts"], lw=1, label="CWE(RE)")
        ax.plot(t.index, t["limit_pkts"], lw=1, ls="--", label="alpha CWE(RE)")
        ax.axvline(CBR_STOP_S, color="grey", ls=":", lw=1, label="CBR leaves")
        ax.set_xlabel("time (s)")
        ax.set_title("extended algorithm (forced decreases)" if forced else "simple algorithm (as Fig. 1)", fontsize=9)
    axes[0].set_ylabel("packets")
    axes[0].legend(fontsize=7)
    fig.suptitle("TCP Limit Fig. 1: 5 Mbit/s, 60 ms, 1 Mbit/s CBR until 8 s", fontsize=10)
    fig.tight_layout()
    path = out_dir / "cwnd_re.png"
    fig.savefig(path)
    plt.close(fig)
    return [path]


def _first_hold(t) -> float:
    """The time from which cwnd stays within 2 % of its value when the CBR leaves (the flat part)."""
    before = t[t.index <= CBR_STOP_S]["cwnd_pkts"]
    level = float(before.iloc[-1])
    off = before[(before - level).abs() > 0.02 * level]
    return float(off.index[-1]) + 0.1 if not off.empty else float(before.index[0])


def _flat_again(t) -> float:
    """First time after the CBR leaves at which cwnd reaches 95 % of its maximum over the rest."""
    after = t[t.index > CBR_STOP_S]["cwnd_pkts"]
    top = after.max()
    return float(after[after >= 0.95 * top].index[0])


def _flat_spread(t) -> float:
    w = t[(t.index > 5.0) & (t.index <= CBR_STOP_S)]["cwnd_pkts"]
    return float((w.max() - w.min()) / w.mean())


register(Experiment(
    name=FIG1,
    title="TCP Limit: cwnd held once RE stops growing, grows again when the CBR leaves (Németh et al., Fig. 1)",
    source=SOURCE + "; Section III, Fig. 1",
    description="One TCP Limit flow, 5 Mbit/s, 60 ms each way, 50-packet (BDP) queue, initial ssthresh 25 packets, "
                "and 1 Mbit/s of CBR until 8 s; ns-2 profile, 1500 B packets; 15 s, one run (as the paper). The claims "
                "use the simple algorithm of section III, which the paper presents with Fig. 1 "
                "(forced_decrease = false); the extended algorithm is drawn beside it.",
    build_plan=fig1_plan,
    draw_figures=fig1_figures,
    paper_key="limit",
    figure="Fig. 1",
    claims=(
        Claim("cwnd stops growing when the path saturates", "about 4 s", lambda s: f"flat (within 2 %) from {_first_hold(_fig1_trace(s)[0]):.1f} s",
              "Section III, Fig. 1", tolerance="within 1 s of 4 s",
              verdict=lambda s: "reproduced" if abs(_first_hold(_fig1_trace(s)[0]) - 4.0) <= 1.0 else "differs"),
        Claim("cwnd constant while the CBR runs (5-8 s)", "kept constant", lambda s: f"spread {_flat_spread(_fig1_trace(s)[0]) * 100:.1f} % of its mean",
              "Fig. 1", tolerance="max - min within 2 % of the mean",
              verdict=lambda s: "reproduced" if _flat_spread(_fig1_trace(s)[0]) <= 0.02 else "differs"),
        Claim("after the CBR leaves, cwnd grows and is constant again", "about 9.5 s",
              lambda s: f"within 5 % of its new level at {_flat_again(_fig1_trace(s)[0]):.1f} s", "Fig. 1",
              tolerance="within 1 s of 9.5 s",
              verdict=lambda s: "reproduced" if abs(_flat_again(_fig1_trace(s)[0]) - 9.5) <= 1.0 else "differs"),
        Claim("losses of the TCP flow", "none shown", lambda s: f"{int(_fig1_trace(s)[1].summary['retransmits'].iloc[0])} retransmissions", "Fig. 1"),
        Claim("extended algorithm, cwnd spread while the CBR runs (5-8 s)", "not shown",
              lambda s: f"{_flat_spread(_fig1_trace(s, True)[0]) * 100:.1f} % (forced decreases: alone beside a CBR, RE = NL)", "-"),
    ),
))
