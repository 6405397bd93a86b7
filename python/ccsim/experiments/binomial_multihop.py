"""Binomial congestion control paper, Figs 18-19: TCP and IIAD across several bottlenecks with web and
CBR background traffic.

Bansal & Balakrishnan, "Binomial congestion control algorithms", IEEE INFOCOM 2001 ([Bansal01] in
``docs/bibliography.md``), Section 3.5: "the topology shown in Figure 18" with HTTP sources (at most five
connections each) and CBR sources, all at ns-2's defaults; Fig. 19 shows the TCP and IIAD windows and
the text says the bandwidth "gets distributed fairly among these sources even in the presence of
multiple bottlenecks".

The figure (its link rates, delays and where the background enters) is lost from our copy of the paper,
so the topology is ours, in the figure's spirit: a parking lot of three 3 Mbit/s hops, 10 ms each
(RTT of the long flows 60 ms plus access), RED on every hop (Q = b x RTT = 23 packets, min_th 0.2 Q,
max_th 0.8 Q, as Section 3); one NewReno and one IIAD flow (alpha 1, beta 0.6) across all three hops,
starting U[0, 2] s; on each hop a web source (Poisson arrivals of 2 transfers/s with Pareto sizes of mean
20 kB, NewReno; about 0.3 Mbit/s, roughly five short HTTP connections in flight) and a 0.3 Mbit/s CBR
stream of 1000 B packets (ns-2's CBR packet size and a tenth of the hop) entering and leaving at that hop.
The ns-2 profile, 1 KB packets, 100 s, throughput over 20-100 s, ten runs. ``--quick``: 40 s, two runs.

Claim tolerance (stated before the runs): TCP/IIAD mean ratio within [0.67, 1.5], as ``binomial_fig6``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ccsim.experiments.binomial import IIAD, PKT_BYTES, QUICK_REPETITIONS, REPETITIONS, SEED, SOURCE
from ccsim.experiments.helpers import pyplot, save_figure
from ccsim.experiments.registry import Claim, Experiment, Verdict, register
from ccsim.experiments.traces import point_runs
from ccsim.sweep import SweepPlan

NAME = "binomial_fig18"
HOPS = 3
HOP_RATE_BPS, HOP_DELAY_MS = 3e6, 10
LONG_RTT_MS = 2 * HOPS * HOP_DELAY_MS
LO, HI = 0.67, 1.5


def _hop_queue() -> dict[str, Any]:
    q = max(4, int(round(HOP_RATE_BPS * LONG_RTT_MS / 1000 / 8 / PKT_BYTES)))
    return {"kind": "red", "limit": f"{q}pkt", "min_th": "20%", "max_th": "80%"}


def document(quick: bool) -> dict[str, Any]:
    duration, measure = (40, ["10s", "40s"]) if quick else (100, ["20s", "100s"])
    start = {"uniform": ["0s", "2s"]}
    flows: list[dict[str, Any]] = [
        {"name": "tcp", "algorithm": "newreno", "count": 1, "path": [0, HOPS - 1], "start": start},
        {"name": "iiad", "algorithm": "binomial", "params": dict(IIAD), "count": 1, "path": [0, HOPS - 1], "start": start},
    ]
    for h in range(HOPS):
        flows.append({"name": f"web{h}", "kind": "web", "algorithm": "newreno", "arrival_rate": 2.0, "size_mean": "20kB",
                      "path": [h, h]})
        flows.append({"name": f"cbr{h}", "kind": "cbr", "rate": f"{HOP_RATE_BPS / 10 / 1e3:g}kbit", "payload": f"{PKT_BYTES - 28}B",
                      "path": [h, h], "start": start})
    return {
        "run": {"duration": f"{duration}s", "measure": measure, "sample_interval": "100ms", "seed": SEED},
        "topology": {"kind": "parking_lot", "hops": [{"rate": f"{HOP_RATE_BPS / 1e6:g}Mbit", "delay": f"{HOP_DELAY_MS}ms",
                                                       "queue": _hop_queue()} for _ in range(HOPS)]},
        "tcp": {"profile": "ns2", "mss": f"{PKT_BYTES}B", "rwnd": "16MB"},
        "flows": flows,
    }


def build_plan(quick: bool = False) -> SweepPlan:
    return SweepPlan(name=NAME, base=document(quick), repetitions=QUICK_REPETITIONS if quick else REPETITIONS, seed=SEED)


def ratios(sweep: Any) -> pd.DataFrame:
    rows = []
    for run_id, g in sweep.flows.groupby("run_id", sort=False):
        by = g.set_index(g["name"].astype(str))["goodput_bps"].astype(float)
        rows.append({"run_id": run_id, "tcp_bps": by["tcp"], "iiad_bps": by["iiad"],
                     "tcp_over_iiad": by["tcp"] / by["iiad"] if by["iiad"] > 0 else np.inf})
    return pd.DataFrame(rows)


def _stats(sweep: Any) -> tuple[float, float, int]:
    v = ratios(sweep)["tcp_over_iiad"].replace([np.inf], np.nan).dropna().to_numpy(float)
    ci = 1.96 * v.std(ddof=1) / np.sqrt(v.size) if v.size > 1 else 0.0
    return float(v.mean()), float(ci), int(v.size)


def ours(sweep: Any) -> str:
    m, ci, n = _stats(sweep)
    r = ratios(sweep)
    return (f"TCP/IIAD {m:.2f} +- {ci:.2f} (mean, 95 % CI of {n} runs); goodput TCP {r['tcp_bps'].mean() / 1e6:.2f}, "
            f"IIAD {r['iiad_bps'].mean() / 1e6:.2f} Mbit/s")


def verdict(sweep: Any) -> Verdict:
    m, _, _ = _stats(sweep)
    return Verdict(LO <= m <= HI, f"TCP/IIAD {m:.2f}, tolerance [{LO:g}, {HI:g}]")


def draw(sweep: Any, out_dir: Path) -> list[Path]:
    plt = pyplot()
    ratios(sweep).to_csv(out_dir / "fig18_ratios.csv", index=False, float_format="%.4g")
    result = next(iter(point_runs(sweep).values()))[1]
    names = result.summary.set_index("flow")["name"].astype(str)
    fig, ax = plt.subplots(figsize=(6, 3.2))
    for flow_id, name in names.items():
        if name in ("tcp", "iiad"):
            g = result.flows[result.flows["flow"] == flow_id]
            ax.plot(g["time_s"], g["cwnd_pkts"], lw=0.8, label=name)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("congestion window (packets)")
    ax.set_title(f"TCP and IIAD across {HOPS} RED hops of 3 Mbit/s with web and CBR background (Figs 18-19)", fontsize=8)
    ax.legend(fontsize=7)
    path = save_figure(fig, out_dir, "fig19_cwnd.png", dpi=80)
    return [path, out_dir / "fig18_ratios.csv"]


register(Experiment(
    name=NAME,
    paper_key="binomial",
    figure="Figs 18, 19",
    title="TCP and IIAD across several bottlenecks with web and CBR background (Bansal & Balakrishnan 2001, Figs 18-19)",
    source=SOURCE + ", Section 3.5, Figs 18-19",
    description="Parking lot of three 3 Mbit/s RED hops (10 ms each); one NewReno and one IIAD flow across all, a web source "
                "and a 0.3 Mbit/s CBR stream on each hop; 100 s, goodput over 20-100 s, 10 runs; windows of run 0. The "
                "paper's topology figure is lost: the numbers are ours.",
    build_plan=build_plan,
    draw_figures=draw,
    claims=(Claim("TCP and IIAD share fairly across multiple bottlenecks (TCP/IIAD)", "distributed fairly", ours,
                  "Section 3.5, Fig. 19", verdict=verdict, tolerance=f"mean ratio in [{LO:g}, {HI:g}]", id="N18",
                  reason="'gets distributed fairly among these sources even in the presence of multiple bottlenecks' read "
                         "with the Fig. 6 band: mean TCP/IIAD of ten runs over 20-100 s within a factor 1.5 either way"),),
))
