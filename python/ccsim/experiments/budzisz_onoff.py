"""Coexistence paper, Figs 5 and 10: 29 delay-based flows and one NewReno flow that is on from 200 s
to 275 s, 40 Mbit/s (Table I; [Budzisz09] in ``docs/bibliography.md``, Sections II-A.4 and III-B.4).

The paper's claims are about three periods: before the NewReno flow (delay-based only), while it is
on, and after it left. Each variant is run three times with the same seed and a different summary
window (150-200 s, 225-275 s, 400-500 s); the runs are deterministic, so they are one run seen through
three windows. The set-up is ``budzisz``'s (access 100 Mbit/s with U[5, 30] ms, 500-packet drop-tail
queue, 960 B payload, ns-2 profile, 125 us send jitter, starts U[0, 2] s).

* ``budzisz_fig5``: mPERT (p' realised, the reading the claims use; p' = g(delta) as a sensitivity,
  also with slow start off for the mPERT flows, which the paper sets aside). Paper: the queue does not
  fall back below 0.5 delta_max after the NewReno flow leaves, and the loss rate stays high.
* ``budzisz_fig10``: HD (p_max 0.05; 0.02 and 0.005 as sensitivity). Paper: the queue stays below
  delta_th without the NewReno flow; while it is on, the HD flows behave as loss-based and it competes
  fairly. A model row sets Theorem 1's case for the 29 HD flows (p_max against p*(delta_th)) beside
  whether each run's queue drains.

Figures: the bottleneck's queueing delay and drops per second over the 500 s of one run per variant
(seed as the sweep), with the on period shaded. ``--quick``: 100 s runs with the
NewReno flow on from 30 s to 50 s (windows 15-30, 35-50, 70-100 s), every variant.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ccsim import fluid
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


def base_document(algorithm: str, params: dict[str, Any], timing: dict[str, Any] = FULL,
                  flow_tcp: dict[str, Any] | None = None) -> dict[str, Any]:
    """The on/off dumbbell; ``flow_tcp`` is the delay flows' own ``[flows.tcp]`` table (slow start off)."""
    access = {"access_delay": {"uniform": ["5ms", "30ms"]}}
    on, off = timing["on"]
    delay = dict(access, name="delay", algorithm=algorithm, count=N_DELAY, params=dict(params), start={"uniform": ["0s", "2s"]})
    if flow_tcp:
        delay["tcp"] = dict(flow_tcp)
    return {
        "run": {"duration": f"{timing['duration']}s", "sample_interval": "1s", "seed": SEED},
        "topology": {"kind": "dumbbell", "bottleneck_rate": f"{RATE_MBIT}Mbit", "bottleneck_delay": "5ms",
                     "queue": f"{queue_pkts(RATE_MBIT)}pkt", "access_rate": "100Mbit"},
        "tcp": {"profile": "ns2", "mss": f"{MSS_BYTES}B", "header": "40B", "send_jitter": JITTER, "rwnd": RWND},
        "flows": [
            delay,
            dict(access, name="tcp", algorithm="newreno", count=1, active=[[f"{on}s", f"{off}s"]]),
        ],
    }


def _plan(name: str, algorithm: str, variants: list[tuple[str, dict[str, Any], dict[str, Any]]], quick: bool) -> SweepPlan:
    timing = QUICK if quick else FULL
    points = []
    for label, params, flow_tcp in variants:
        for a, b in timing["windows"].values():
            points.append({"flows[0].name": label, "flows[0].params": dict(params), "flows[0].tcp": dict(flow_tcp),
                           "run.measure": [f"{a}s", f"{b}s"]})
    return SweepPlan(name=name, base=base_document(algorithm, variants[0][1], timing), explicit_points=points, repetitions=1,
                     seed=SEED, budget=None)


SLOW_START_OFF = {"slow_start": False}  # the paper sets slow start aside (Section III: "we do not consider the issue of slow start")
# (label, the delay flows' params, their own [flows.tcp] table)
MPERT_VARIANTS = [("mpert", dict(MPERT_PARAMS, p_prime="realised"), {}), ("mpert_g", dict(MPERT_PARAMS, p_prime="probability"), {}),
                  ("mpert_g_noss", dict(MPERT_PARAMS, p_prime="probability"), SLOW_START_OFF)]
HD_VARIANTS = [("hd", dict(HD_PARAMS), {}), ("hd_pmax0.02", dict(HD_PARAMS, p_max=0.02), {}), ("hd_pmax0.005", dict(HD_PARAMS, p_max=0.005), {})]


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


def draw(sweep: Any, out_dir: Path, algorithm: str, variants: list[tuple[str, dict[str, Any], dict[str, Any]]], filename: str, title: str) -> list[Path]:
    plt = pyplot()

    import ccsim  # lazy: the time series come from one run per variant (the sweep keeps summaries only)
    from ccsim.scenario import Scenario  # lazy: as above

    periods(sweep).to_csv(out_dir / "periods.csv", index=False, float_format="%.5g")
    quick = float(sweep.runs["duration_s"].iloc[0]) != FULL["duration"]
    timing = QUICK if quick else FULL
    have = set(periods(sweep)["variant"])
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
    for label, params, flow_tcp in variants:
        if label not in have:
            continue
        result = ccsim.run(Scenario.from_dict(base_document(algorithm, params, timing, flow_tcp)), seed=SEED)
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


DELTA_MAX_HALF_MS = 0.5 * MPERT_PARAMS["delta_max_init_ms"]  # mPERT's compete-mode threshold, 50 ms


def stays_high(variant: str, judged: bool = True):
    """Fig. 5a's shape: the queue below 0.5 delta_max before the NewReno flow (mPERT in delay mode) and
    not back below it after the flow has left. ``judged`` False: the same line, SHOWN (a sensitivity)."""

    def ours(sweep: Any) -> str:
        before, on, after = (_value(sweep, variant, p, "qdelay_ms") for p in ("before", "on", "after"))
        ok = before < DELTA_MAX_HALF_MS <= after
        return (f"mean queueing delay before {before:.1f} ms, on {on:.1f} ms, after {after:.1f} ms | tolerance: before < 50 ms "
                f"<= after (0.5 delta_max) | {'HOLDS' if ok else 'FAILS'}")

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
        ok = before < HD_PARAMS["q_th_ms"] and after < HD_PARAMS["q_th_ms"]
        return (f"mean queueing delay before {before:.1f} ms, on {on:.1f} ms, after {after:.1f} ms | tolerance: before and after "
                f"< 20 ms (delta_th) | {'HOLDS' if ok else 'FAILS'}")

    return ours


def tcp_fair(variant: str):
    def ours(sweep: Any) -> str:
        share = _value(sweep, variant, "on", "tcp_share")
        ok = 0.5 <= share <= 2.0
        return f"NewReno goodput {share:.2f} x the fair share (40 Mbit/s / 30) | tolerance: 0.5-2 | {'HOLDS' if ok else 'FAILS'}"

    return ours


def both_rules(variant: str):
    """B7 and B8 side by side for one HD p_max: does the queue drain, and is the NewReno flow's share fair?"""

    def ours(sweep: Any) -> str:
        before, after = (_value(sweep, variant, p, "qdelay_ms") for p in ("before", "after"))
        share = _value(sweep, variant, "on", "tcp_share")
        drains = before < HD_PARAMS["q_th_ms"] and after < HD_PARAMS["q_th_ms"]
        fair = 0.5 <= share <= 2.0
        return (f"queue before {before:.1f} ms, after {after:.1f} ms ({'drains' if drains else 'does not drain'}: B7's rule "
                f"{'holds' if drains else 'fails'}); NewReno while on {share:.2f} x fair (B8's rule {'holds' if fair else 'fails'})"
                f" | SHOWN (HD's p_max is not in the paper)")

    return ours


WIRE_BYTES = MSS_BYTES + 40  # Table I: 1000 B packets
BOTTLENECK_DELAY_S = 0.005


def _hd_alone_p_star(sweep: Any) -> float:
    """p*(delta_th) of the 29 HD flows alone (Section IV): the back-off rate they need at delta_th to
    fill the link; Theorem 1: a low-delay equilibrium exists iff p_max is above it."""
    f = sweep.flows
    first = f[f["run_id"] == f["run_id"].iloc[0]]
    delay = first[first["name"].astype(str) != "tcp"]
    rtts = 2 * (delay["access_delay_ms"].to_numpy(float) / 1e3 + BOTTLENECK_DELAY_S)
    return float(fluid.p_star(HD_PARAMS["q_th_ms"] / 1e3, RATE_MBIT * 1e6 / (8 * WIRE_BYTES), rtts))


def fluid_says_which_drains(sweep: Any) -> str:
    """Theorem 1 against the runs: for each HD p_max run, the model's case (an equilibrium below
    delta_th iff p_max > p*(delta_th)) and whether the queue after the NewReno flow is below delta_th."""
    p_star = _hd_alone_p_star(sweep)
    parts, ok = [], True
    for label, params, _ in HD_VARIANTS:
        try:
            after = _value(sweep, label, "after", "qdelay_ms")
        except LookupError:
            continue
        predicted = params["p_max"] > p_star
        ok &= predicted == (after < HD_PARAMS["q_th_ms"])
        parts.append(f"p_max {params['p_max']:g}: {'equilibrium' if predicted else 'none'}, after {after:.1f} ms")
    return (f"p*(delta_th) = {p_star:.4f} for the 29 HD flows; {'; '.join(parts)} | tolerance: the queue after the NewReno flow "
            f"is below delta_th exactly where the model has an equilibrium | {'HOLDS' if ok else 'FAILS'}")


SOURCE = ("L. Budzisz, R. Stanojevic, A. Schlote, R. Shorten, F. Baker, \"On the fair coexistence of loss- and delay-based "
          "TCP\", Hamilton Institute preprint 2009, IEEE/ACM ToN 19(6) 2011; Table I")

FIG5 = register(Experiment(
    name="budzisz_fig5",
    paper_key="budzisz",
    figure="Fig. 5",
    title="On/off: 29 mPERT + 1 NewReno on from 200 s to 275 s (Budzisz et al. 2009, Fig. 5)",
    source=SOURCE + ", Section II-A.4, Fig. 5",
    description="29 mPERT flows (p' realised; p' = g(delta) with and without the mPERT flows' slow start) and one NewReno "
                "flow active 200-275 s on 40 Mbit/s, 500 s; queueing delay and loss before (150-200 s), during (225-275 s) "
                "and after (400-500 s).",
    build_plan=build_fig5,
    draw_figures=lambda sweep, out: draw(sweep, out, "mpert", MPERT_VARIANTS, "fig5_onoff.png",
                                         "29 mPERT + 1 NewReno (on in the shaded period), 40 Mbit/s (Fig. 5)"),
    claims=(
        text_claim("mPERT (p' realised): the queue rises with the NewReno flow and does not fall back below 0.5 delta_max after "
                   "it leaves", "does not reduce back below 50 % of delta_max", stays_high("mpert"), "Section II-A.4, Fig. 5a",
                   tolerance="before < 50 ms <= after (0.5 delta_max)", id="B5",
                   reason="\"does not reduce back below this 50 % threshold once the loss-based flow leaves\": below it before "
                   "(150-200 s), not below it after (400-500 s); p' realised as in B1"),
        text_claim("mPERT (p' realised): loss rate stays high after it leaves", "stays high", loss_stays("mpert"),
                   "Section II-A.4, Fig. 5b", tolerance="after > half the on-period loss", id="B6",
                   reason="Fig. 5b's loss after the flow leaves (400-500 s) as high as while it is on (225-275 s): more than half of it"),
        text_claim("mPERT, the other reading p' = g(delta): B5's rule", "does not reduce back below 50 % of delta_max",
                   stays_high("mpert_g"), "Section II-A.4, Fig. 5a", tolerance="before < 50 ms <= after (B5's rule)", id="B5-g",
                   kind="sensitivity", reason="the second reading of p': a sensitivity row"),
        text_claim("mPERT, p' = g(delta), slow start off for the mPERT flows: B5's rule", "does not reduce back below 50 % of delta_max",
                   stays_high("mpert_g_noss"), "Section II-A.4, Fig. 5a; Section III sets slow start aside",
                   tolerance="before < 50 ms <= after (B5's rule)", id="B5-g-noss", kind="sensitivity",
                   reason="with slow start on, the p' = g flows' slow start fills the queue before the NewReno flow comes"),
    ),
))

FIG10 = register(Experiment(
    name="budzisz_fig10",
    paper_key="budzisz",
    figure="Fig. 10",
    title="On/off: 29 HD + 1 NewReno on from 200 s to 275 s (Budzisz et al. 2009, Fig. 10)",
    source=SOURCE + ", Section III-B.4, Fig. 10",
    description="29 HD flows (p_max 0.05; 0.02 and 0.005 as sensitivity) and one NewReno flow active 200-275 s on 40 Mbit/s, 500 s; queueing delay "
                "before, during and after, and the NewReno flow's goodput against the fair share while it is on.",
    build_plan=build_fig10,
    draw_figures=lambda sweep, out: draw(sweep, out, "hd", HD_VARIANTS, "fig10_onoff.png",
                                         "29 HD + 1 NewReno (on in the shaded period), 40 Mbit/s (Fig. 10)"),
    claims=(
        text_claim("HD: the queue stays below delta_th without the NewReno flow (before it and after it left)",
                   "reverts to delay-based", returns_low("hd"), "Section III-B.4, Fig. 10a",
                   tolerance="before and after < 20 ms (delta_th)", id="B7",
                   reason="\"otherwise they strive ... to keep queuing delay below\" delta_th: the mean over 150-200 s and "
                   "400-500 s, p_max 0.05 as in B3"),
        text_claim("HD: while the NewReno flow is on, it competes fairly", "fair", tcp_fair("hd"), "Section III-B.4",
                   tolerance="0.5-2 x the fair share", id="B8",
                   reason="\"behave as standard TCP flows and compete fairly\": the NewReno flow's goodput over 225-275 s within "
                   "a factor 2 of 40 Mbit/s / 30, p_max 0.05 as in B3"),
        text_claim("HD with p_max 0.02: B7 and B8", "fair, and reverts", both_rules("hd_pmax0.02"), "Section III-B.4 (p_max not given)",
                   tolerance="B7's and B8's rules", id="S-pmax0.02", kind="sensitivity",
                   reason="the paper gives no p_max: B7 and B8 at another value"),
        text_claim("HD with p_max 0.005: B7 and B8", "fair, and reverts", both_rules("hd_pmax0.005"), "Section III-B.4 (p_max not given)",
                   tolerance="B7's and B8's rules", id="S-pmax0.005", kind="sensitivity",
                   reason="the paper gives no p_max: B7 and B8 at the value fairest in B3's mix at 40 Mbit/s (S-pmax)"),
        text_claim("Fluid model (Theorem 1) vs the runs: which p_max lets the queue drain", "an equilibrium below delta_th iff "
                   "p*(delta_th) < p_max", fluid_says_which_drains, "Section IV, Theorem 1", tolerance="the model's case matches the "
                   "run at every p_max", id="M-drain", kind="model",
                   reason="Theorem 1 with the 29 HD flows' own RTTs at 40 Mbit/s against the queue over 400-500 s"),
    ),
))
