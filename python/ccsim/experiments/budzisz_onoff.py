"""Coexistence paper, Figs 5 and 10: 29 delay-based flows and one NewReno flow that is on from 200 s
to 275 s, 40 Mbit/s (Table I; [Budzisz09] in ``docs/bibliography.md``, Sections II-A.4 and III-B.4).

The paper's claims are about three periods: before the NewReno flow (delay-based only), while it is
on, and after it left. Each variant is run three times with the same seed and a different summary
window (150-200 s, 225-275 s, 400-500 s); the runs are deterministic, so they are one run seen through
three windows. The set-up is ``budzisz``'s (access 100 Mbit/s with U[5, 30] ms, 500-packet drop-tail
queue, 960 B payload, ns-2 profile, 125 us send jitter, starts U[0, 2] s).

* ``budzisz_fig5``: mPERT (both readings of p'). Paper: the queue does not fall back below
  0.5 delta_max after the NewReno flow leaves, and the loss rate stays high.
* ``budzisz_fig10``: HD (p_max 0.05; 0.02 as sensitivity). Paper: the queue returns below delta_th
  after the NewReno flow leaves; while it is on, the HD flows behave as loss-based and it competes
  fairly.

Figures: the bottleneck's queueing delay and drops per second over the 500 s of one run per variant
(seed as the sweep), with the on period shaded. ``--quick``: 100 s runs with the
NewReno flow on from 30 s to 50 s (windows 15-30, 35-50, 70-100 s), both variants.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ccsim.experiments.budzisz import HD_PARAMS, JITTER, MPERT_PARAMS, MSS_BYTES, RWND, SEED, queue_pkts
from ccsim.experiments.helpers import pyplot, save_figure
from ccsim.experiments.registry import Experiment, register
from ccsim.experiments.text_claims import text_claim
from ccsim.sweep import SweepPlan

RATE_MBIT = 40
N_DELAY = 29
FAIR_BPS = RATE_MBIT * 1e6 / 30
FULL = {"duration": 500, "on": (200, 275), "windows": {"before": (150, 200), "on": (225, 275), "after": (400, 500)}}
QUICK = {"duration": 100, "on": (30, 50), "windows": {"before": (15, 30), "on": (35, 50), "after": (70, 100)}}


def base_document(algorithm: str, params: dict[str, Any], timing: dict[str, Any] = FULL) -> dict[str, Any]:
    access = {"access_delay": {"uniform": ["5ms", "30ms"]}}
    on, off = timing["on"]
    return {
        "run": {"duration": f"{timing['duration']}s", "sample_interval": "1s", "seed": SEED},
        "topology": {"kind": "dumbbell", "bottleneck_rate": f"{RATE_MBIT}Mbit", "bottleneck_delay": "5ms",
                     "queue": f"{queue_pkts(RATE_MBIT)}pkt", "access_rate": "100Mbit"},
        "tcp": {"profile": "ns2", "mss": f"{MSS_BYTES}B", "header": "40B", "send_jitter": JITTER, "rwnd": RWND},
        "flows": [
            dict(access, name="delay", algorithm=algorithm, count=N_DELAY, params=dict(params), start={"uniform": ["0s", "2s"]}),
            dict(access, name="tcp", algorithm="newreno", count=1, active=[[f"{on}s", f"{off}s"]]),
        ],
    }


def _plan(name: str, algorithm: str, variants: list[tuple[str, dict[str, Any]]], quick: bool) -> SweepPlan:
    timing = QUICK if quick else FULL
    points = []
    for label, params in variants:
        for a, b in timing["windows"].values():
            points.append({"flows[0].name": label, "flows[0].params": dict(params), "run.measure": [f"{a}s", f"{b}s"]})
    return SweepPlan(name=name, base=base_document(algorithm, variants[0][1], timing), explicit_points=points, repetitions=1,
                     seed=SEED, budget=None)


MPERT_VARIANTS = [("mpert", dict(MPERT_PARAMS, p_prime="realised")), ("mpert_g", dict(MPERT_PARAMS, p_prime="probability"))]
HD_VARIANTS = [("hd", dict(HD_PARAMS)), ("hd_pmax0.02", dict(HD_PARAMS, p_max=0.02))]


def build_fig5(quick: bool = False) -> SweepPlan:
    return _plan("budzisz_fig5", "mpert", MPERT_VARIANTS, quick)


def build_fig10(quick: bool = False) -> SweepPlan:
    return _plan("budzisz_fig10", "hd", HD_VARIANTS, quick)


def periods(sweep: Any) -> pd.DataFrame:
    """Per (variant, period): mean queueing delay, loss rate, and the NewReno flow's goodput."""
    runs = sweep.runs.set_index("run_id")
    links = sweep.links[sweep.links["link"] == "bottleneck"].set_index("run_id")
    rows = []
    for run_id, f in sweep.flows.groupby("run_id", sort=False):
        variant = str(f["flows[0].name"].iloc[0]).strip('"')
        start = float(runs.loc[run_id, "measure_start_s"])
        timing = FULL if float(runs.loc[run_id, "duration_s"]) == FULL["duration"] else QUICK
        period = next(k for k, (a, _) in timing["windows"].items() if np.isclose(a, start))
        tcp = f[f["name"].astype(str) == "tcp"]["goodput_bps"]
        rows.append({"variant": variant, "period": period, "qdelay_ms": float(runs.loc[run_id, "bottleneck_qdelay_mean_ms"]),
                     "loss_rate": float(links.loc[run_id, "loss_rate"]),
                     "tcp_share": float(tcp.iloc[0]) / FAIR_BPS if len(tcp) else np.nan})
    return pd.DataFrame(rows)


def _value(sweep: Any, variant: str, period: str, column: str) -> float:
    t = periods(sweep)
    sub = t[(t["variant"] == variant) & (t["period"] == period)]
    if sub.empty:
        raise LookupError(f"no {variant} run for the {period} period in this sweep")
    return float(sub[column].mean())


def draw(sweep: Any, out_dir: Path, algorithm: str, variants: list[tuple[str, dict[str, Any]]], filename: str, title: str) -> list[Path]:
    plt = pyplot()

    import ccsim  # lazy: the time series come from one run per variant (the sweep keeps summaries only)
    from ccsim.scenario import Scenario  # lazy: as above

    periods(sweep).to_csv(out_dir / "periods.csv", index=False, float_format="%.5g")
    quick = float(sweep.runs["duration_s"].iloc[0]) != FULL["duration"]
    timing = QUICK if quick else FULL
    have = set(periods(sweep)["variant"])
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
    for label, params in variants:
        if label not in have:
            continue
        result = ccsim.run(Scenario.from_dict(base_document(algorithm, params, timing)), seed=SEED)
        b = result.links[result.links["link"] == "bottleneck"]
        ax1.plot(b["time_s"], b["qdelay_mean_ms"], lw=0.8, label=label)
        ax2.plot(b["time_s"], b["drops_queue"], lw=0.8, label=label)
    for ax in (ax1, ax2):
        ax.axvspan(*timing["on"], color="0.9")
    ax1.set_ylabel("queueing delay (ms)")
    ax2.set_ylabel("drops per second")
    ax2.set_xlabel("time (s); NewReno flow on in the shaded period")
    ax1.set_title(title, fontsize=10)
    ax1.legend(fontsize=8)
    path = save_figure(fig, out_dir, filename, dpi=90)
    return [path, out_dir / "periods.csv"]


def stays_high(variant: str):
    def ours(sweep: Any) -> str:
        before, on, after = (_value(sweep, variant, p, "qdelay_ms") for p in ("before", "on", "after"))
        ok = after >= 0.5 * MPERT_PARAMS["delta_max_init_ms"]
        return (f"mean queueing delay before {before:.1f} ms, on {on:.1f} ms, after {after:.1f} ms | tolerance: after >= 50 ms "
                f"(0.5 delta_max) | {'HOLDS' if ok else 'FAILS'}")

    return ours


def loss_stays(variant: str):
    def ours(sweep: Any) -> str:
        before, on, after = (_value(sweep, variant, p, "loss_rate") * 100 for p in ("before", "on", "after"))
        ok = after > 0.5 * on
        return (f"loss before {before:.3f} %, on {on:.3f} %, after {after:.3f} % | tolerance: after > half the on-period loss "
                f"| {'HOLDS' if ok else 'FAILS'}")

    return ours


def returns_low(variant: str):
    def ours(sweep: Any) -> str:
        before, on, after = (_value(sweep, variant, p, "qdelay_ms") for p in ("before", "on", "after"))
        ok = after < HD_PARAMS["q_th_ms"]
        return (f"mean queueing delay before {before:.1f} ms, on {on:.1f} ms, after {after:.1f} ms | tolerance: after < 20 ms "
                f"(delta_th) | {'HOLDS' if ok else 'FAILS'}")

    return ours


def tcp_fair(variant: str):
    def ours(sweep: Any) -> str:
        share = _value(sweep, variant, "on", "tcp_share")
        ok = 0.5 <= share <= 2.0
        return f"NewReno goodput {share:.2f} x the fair share (40 Mbit/s / 30) | tolerance: 0.5-2 | {'HOLDS' if ok else 'FAILS'}"

    return ours


SOURCE = ("L. Budzisz, R. Stanojevic, A. Schlote, R. Shorten, F. Baker, \"On the fair coexistence of loss- and delay-based "
          "TCP\", Hamilton Institute preprint 2009, IEEE/ACM ToN 19(6) 2011; Table I")

FIG5 = register(Experiment(
    name="budzisz_fig5",
    paper_key="budzisz",
    figure="Fig. 5",
    title="On/off: 29 mPERT + 1 NewReno on from 200 s to 275 s (Budzisz et al. 2009, Fig. 5)",
    source=SOURCE + ", Section II-A.4, Fig. 5",
    description="29 mPERT flows (both readings of p') and one NewReno flow active 200-275 s on 40 Mbit/s, 500 s; queueing "
                "delay and loss before (150-200 s), during (225-275 s) and after (400-500 s).",
    build_plan=build_fig5,
    draw_figures=lambda sweep, out: draw(sweep, out, "mpert", MPERT_VARIANTS, "fig5_onoff.png",
                                         "29 mPERT + 1 NewReno (on in the shaded period), 40 Mbit/s (Fig. 5)"),
    claims=(
        text_claim("mPERT (p' realised): queue stays above 0.5 delta_max after the NewReno flow leaves", "does not fall back",
              stays_high("mpert"), "Section II-A.4, Fig. 5a", tolerance="after >= 50 ms (0.5 delta_max)"),
        text_claim("mPERT (p' realised): loss rate stays high after it leaves", "stays high", loss_stays("mpert"),
              "Section II-A.4, Fig. 5b", tolerance="after > half the on-period loss"),
        text_claim("mPERT (p' = g(delta)): queue after it leaves", "does not fall back", stays_high("mpert_g"),
              "Section II-A.4, Fig. 5a", tolerance="after >= 50 ms (0.5 delta_max)"),
    ),
))

FIG10 = register(Experiment(
    name="budzisz_fig10",
    paper_key="budzisz",
    figure="Fig. 10",
    title="On/off: 29 HD + 1 NewReno on from 200 s to 275 s (Budzisz et al. 2009, Fig. 10)",
    source=SOURCE + ", Section III-B.4, Fig. 10",
    description="29 HD flows (p_max 0.05, and 0.02) and one NewReno flow active 200-275 s on 40 Mbit/s, 500 s; queueing delay "
                "before, during and after, and the NewReno flow's goodput against the fair share while it is on.",
    build_plan=build_fig10,
    draw_figures=lambda sweep, out: draw(sweep, out, "hd", HD_VARIANTS, "fig10_onoff.png",
                                         "29 HD + 1 NewReno (on in the shaded period), 40 Mbit/s (Fig. 10)"),
    claims=(
        text_claim("HD: queue back below delta_th after the NewReno flow leaves", "reverts to delay-based", returns_low("hd"),
              "Section III-B.4, Fig. 10a", tolerance="after < 20 ms (delta_th)"),
        text_claim("HD: while the NewReno flow is on, it competes fairly", "fair", tcp_fair("hd"), "Section III-B.4", tolerance="0.5-2 x the fair share"),
        text_claim("HD with p_max 0.02: NewReno's share while on", "fair", tcp_fair("hd_pmax0.02"), "Section III-B.4 (p_max not given)", tolerance="0.5-2 x the fair share"),
    ),
))
