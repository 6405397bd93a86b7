"""Coexistence paper: the fluid model extended to delay-based flows (HD, PERT, mPERT) mixed with
loss-based flows, beside packet-level runs of the paper's Table I set-up.

Budzisz et al. 2009 ([Budzisz09] in ``docs/bibliography.md``) analyse delay-based flows alone (Section
IV: p*(delta) against g(delta)); Sections II-A and III explain the mixes (Figs 3-4, 8-9) in words: with
loss-based flows the drop-tail queue stays near full, where HD's g is near 0 (so HD turns loss-based and
shares fairly) and mPERT's is large (so mPERT's alpha grows and the loss rate with it).
``ccsim.fluid.mixed_equilibrium`` writes that down (the equation is in its module docstring): at
queueing delay delta every flow's window stands where its increase per RTT meets its back-offs; the
drop rate p that makes the windows fill C is the equilibrium loss rate. It is evaluated at the
buffer's delay (500 x rate/40 Mbit/s packets of 1000 B: 100 ms at every rate; the paper's "queue full")
and at each run's measured mean queueing delay (the model given the queue the simulator shows).

Packet level: 20 delay-based + 10 NewReno flows, and 30 NewReno, on Table I's dumbbell (``budzisz``'s
document: access 100 Mbit/s with U[5, 30] ms, bottleneck 5 ms, 960 B payload, ns-2 profile, 125 us send
jitter, starts U[0, 2] s) at 10-100 Mbit/s; HD (p_max 0.05), PERT (the paper's T_min 5 ms, T_max 20 ms,
p_max 0.05), mPERT with p' realised and p' = g(delta). 300 s, summary over 150-300 s, two runs per
point (the 500 s runs of ``budzisz_fig3``/``budzisz_fig8`` differ from these by a few per cent).
The model reads each run's own base RTTs and the algorithms' parameters from the scenario and the
engine's catalogue. ``--quick``: 10 Mbit/s, 30 s, one run.

Tolerance (stated before the runs): the fluid prediction at the full buffer within a factor 2 of the
packet-level mean at every rate, for the TCP/delay per-flow throughput ratio and for the loss ratio of
the mix to 30 NewReno flows. One more row checks the model's assumption for mPERT that the p of
alpha = 1 + p'/p is the drop rate, against the flows' own TFRC loss-event rate (one extra run per rate).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ccsim import fluid
from ccsim.experiments.budzisz import (HD_PARAMS, MPERT_PARAMS, QUICK_DURATION_S, QUICK_RATES_MBIT, RATES_MBIT, SEED, TCP30,
                                       base_document, point, queue_pkts, run_table)
from ccsim.experiments.helpers import pyplot
from ccsim.experiments.registry import Claim, Experiment, Verdict, register
from ccsim.sweep import SweepPlan

NAME = "budzisz_fluid_mixed"
DURATION_S = 300
REPETITIONS = 2
WIRE_BYTES = 1000  # Table I: 1000 B packets on the wire
BOTTLENECK_DELAY_S = 0.005
FACTOR = 2.0
PERT_PARAMS = {"t_min_ms": 5.0, "t_max_ms": 20.0, "p_max": 0.05}  # Table I's T_min, T_max; PERT's p_max
VARIANTS = [("hd", "hd", HD_PARAMS), ("pert", "pert", PERT_PARAMS), ("mpert", "mpert", dict(MPERT_PARAMS, p_prime="realised")),
            ("mpert_g", "mpert", dict(MPERT_PARAMS, p_prime="probability"))]
LABELS = {"hd": "HD", "pert": "PERT", "mpert": "mPERT, p' realised", "mpert_g": "mPERT, p' = g"}


def build_plan(quick: bool = False) -> SweepPlan:
    rates = QUICK_RATES_MBIT if quick else RATES_MBIT
    points = [point(r, v, a, p) for r in rates for v, a, p in VARIANTS] + [point(r, *TCP30) for r in rates]
    return SweepPlan(name=NAME, base=base_document(rates[0], QUICK_DURATION_S if quick else DURATION_S, "hd", HD_PARAMS),
                     explicit_points=points, repetitions=1 if quick else REPETITIONS, seed=SEED, budget=None)


def comparison(sweep: Any) -> pd.DataFrame:
    """Per mixed run: the packet-level TCP/delay ratio, loss rate and queueing delay, and the fluid
    model's, at the full buffer (``_full``) and at the run's measured mean queueing delay (``_measured``).
    Computed once per sweep result (every claim reads it)."""
    cached = getattr(sweep, "_ccsim_fluid_mixed", None)
    if cached is None:
        cached = _comparison(sweep)
        try:
            setattr(sweep, "_ccsim_fluid_mixed", cached)
        except AttributeError:
            pass
    return cached


def _comparison(sweep: Any) -> pd.DataFrame:
    t = run_table(sweep).set_index("run_id")
    params = {v: (a, p) for v, a, p in VARIANTS}
    rows = []
    for run_id, f in sweep.flows.groupby("run_id", sort=False):
        variant = t.loc[run_id, "variant"]
        if variant not in params:
            continue
        rate = float(t.loc[run_id, "rate_mbit"])
        names = f["name"].astype(str)
        mine = names.str.startswith(variant + "-") | (names == variant)
        rtts = 2 * (f["access_delay_ms"].to_numpy(float) / 1e3 + BOTTLENECK_DELAY_S)
        algorithm, p = params[variant]
        population = fluid.DelayPopulation(algorithm, rtts[mine.to_numpy()], p)
        capacity = rate * 1e6 / (8 * WIRE_BYTES)
        full_delay = queue_pkts(rate) / capacity
        measured = float(t.loc[run_id, "qdelay_ms"]) / 1e3
        full = fluid.mixed_equilibrium(capacity, full_delay, rtts[~mine.to_numpy()], population)
        at = fluid.mixed_equilibrium(capacity, measured, rtts[~mine.to_numpy()], population)
        rows.append({"run_id": run_id, "variant": variant, "rate_mbit": rate, "packet_ratio": float(t.loc[run_id, "tcp_over_delay"]),
                     "packet_loss": float(t.loc[run_id, "loss_rate"]), "packet_qdelay_ms": measured * 1e3,
                     "fluid_ratio_full": full.loss_over_delay, "fluid_loss_full": full.loss_rate, "fluid_tcp30_loss_full": full.loss_only_rate,
                     "fluid_alpha_full": full.alpha, "fluid_ratio_measured": at.loss_over_delay, "fluid_loss_measured": at.loss_rate,
                     "fluid_tcp30_loss_measured": at.loss_only_rate})
    c = pd.DataFrame(rows)
    tcp30 = t[t["variant"] == TCP30[0]].groupby("rate_mbit")["loss_rate"].mean()
    c["packet_tcp30_loss"] = c["rate_mbit"].map(tcp30)
    c["packet_loss_ratio"] = c["packet_loss"] / c["packet_tcp30_loss"]
    c["fluid_loss_ratio_full"] = c["fluid_loss_full"] / c["fluid_tcp30_loss_full"]
    c["fluid_loss_ratio_measured"] = c["fluid_loss_measured"] / c["fluid_tcp30_loss_measured"]
    return c


def means(sweep: Any) -> pd.DataFrame:
    return comparison(sweep).drop(columns="run_id").groupby(["variant", "rate_mbit"]).mean()


def draw(sweep: Any, out_dir: Path) -> list[Path]:
    plt = pyplot()
    m = means(sweep)
    m.to_csv(out_dir / "fluid_mixed.csv", float_format="%.4g")
    fig, axes = plt.subplots(1, 2, figsize=(10, 5))
    for i, (v, _, _) in enumerate(VARIANTS):
        if v not in m.index.get_level_values(0):
            continue
        sub = m.loc[v]
        color = f"C{i}"
        for ax, packet, full, measured in ((axes[0], "packet_ratio", "fluid_ratio_full", "fluid_ratio_measured"),
                                           (axes[1], "packet_loss_ratio", "fluid_loss_ratio_full", "fluid_loss_ratio_measured")):
            ax.plot(sub.index, sub[packet], "o", color=color, label=f"{LABELS[v]}: packet level")
            ax.plot(sub.index, sub[full], "-", color=color, label=f"{LABELS[v]}: fluid, queue full")
            ax.plot(sub.index, sub[measured], ":", color=color, label=f"{LABELS[v]}: fluid at the measured delay")
    axes[0].set_ylabel("per-flow throughput NewReno / delay-based")
    axes[1].set_ylabel("loss rate of the mix / of 30 NewReno")
    for ax in axes:
        ax.set_yscale("log")
        ax.set_xlabel("bottleneck rate (Mbit/s)")
        ax.axhline(1.0, color="k", lw=0.5)
    axes[0].set_title("20 delay-based + 10 NewReno (Figs 3, 8)", fontsize=9)
    axes[1].set_title("loss ratio (Figs 4, 9)", fontsize=9)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=4, fontsize=6)
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    path = out_dir / "fluid_mixed.png"
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return [path, out_dir / "fluid_mixed.csv"]


def _claim(variant: str, what: str) -> Claim:
    packet, full, measured = (("packet_ratio", "fluid_ratio_full", "fluid_ratio_measured") if what == "ratio"
                              else ("packet_loss_ratio", "fluid_loss_ratio_full", "fluid_loss_ratio_measured"))
    label = "TCP/delay per flow" if what == "ratio" else "loss of the mix / of 30 NewReno"

    def rows(sweep: Any) -> pd.DataFrame:
        m = means(sweep)
        if variant not in m.index.get_level_values(0):
            raise LookupError(f"no {variant} runs in this sweep")
        return m.loc[variant]

    def ours(sweep: Any) -> str:
        return "; ".join(f"{r:g} Mbit/s: packet {row[packet]:.2f}, fluid {row[full]:.2f} (queue full), {row[measured]:.2f} "
                         f"(at {row['packet_qdelay_ms']:.0f} ms)" for r, row in rows(sweep).iterrows())

    def verdict(sweep: Any) -> Verdict:
        sub = rows(sweep)
        worst = float(np.max(np.abs(np.log(sub[full] / sub[packet]))))
        return Verdict(bool(worst <= np.log(FACTOR)), f"worst fluid/packet factor {np.exp(worst):.2f} (tolerance {FACTOR:g}x)")

    return Claim(f"{LABELS[variant]} + NewReno: fluid vs packet level, {label}", "(the paper's Figs 3-4 / 8-9 in words)", ours,
                 "Sections II-A, III, IV (extended)", verdict=verdict, tolerance=f"fluid at the full buffer within {FACTOR:g}x of "
                 "the packet-level mean at every rate", id=f"M-{variant}-{what}", kind="model",
                 reason="our extension of Section IV's model at the paper's \"queue full\" (100 ms) against the runs' means over "
                        "150-300 s; a factor 2 tells the model's regime, not its decimals")


def tfrc_loss_rates(sweep: Any) -> pd.DataFrame:
    """Per rate of the sweep: one extra run of the mPERT (p' realised) mix with the sweep's duration
    and seed (the sweep keeps no algorithm-internal series), its mPERT flows' own TFRC loss-event rate
    (``cc_metrics`` ``loss_rate``, the p of alpha = 1 + p'/p: 1 / the weighted mean interval between
    loss events) averaged over the flows and the summary window, beside its bottleneck drop fraction,
    the p the fluid model puts into alpha. Computed once per sweep result."""
    cached = getattr(sweep, "_ccsim_fluid_mixed_tfrc", None)
    if cached is not None:
        return cached
    import ccsim  # lazy: as the on/off figures, one run per rate
    from ccsim.scenario import Scenario  # lazy: as above

    duration = int(round(float(sweep.runs["duration_s"].iloc[0])))
    params = dict(MPERT_PARAMS, p_prime="realised")
    rows = []
    for rate in sorted(run_table(sweep).query("variant == 'mpert'")["rate_mbit"].unique()):
        result = ccsim.run(Scenario.from_dict(base_document(rate, duration, "mpert", params)), seed=SEED)
        m = result.cc_metrics
        m = m[(m["name"] == "loss_rate") & (m["time_s"] > duration / 2)]
        links = result.link_summary.set_index("link")
        rows.append({"rate_mbit": rate, "tfrc_loss_rate": float(m.groupby("flow")["value"].mean().mean()),
                     "drop_rate": float(links.loc["bottleneck", "loss_rate"])})
    table = pd.DataFrame(rows)
    try:
        setattr(sweep, "_ccsim_fluid_mixed_tfrc", table)
    except AttributeError:
        pass
    return table


def tfrc_claim() -> Claim:
    def ours(sweep: Any) -> str:
        t = tfrc_loss_rates(sweep)
        return "; ".join(f"{r.rate_mbit:g} Mbit/s: TFRC loss-event rate {r.tfrc_loss_rate * 100:.3f} %, drop fraction "
                         f"{r.drop_rate * 100:.3f} % ({r.drop_rate / r.tfrc_loss_rate:.1f}x)" for r in t.itertuples())

    def verdict(sweep: Any) -> Verdict:
        t = tfrc_loss_rates(sweep)
        worst = float(np.max(np.abs(np.log(t["drop_rate"] / t["tfrc_loss_rate"]))))
        return Verdict(bool(worst <= np.log(FACTOR)), f"worst drop/TFRC factor {np.exp(worst):.2f} (tolerance {FACTOR:g}x)")

    return Claim("mPERT, p' realised: the model's p in alpha = 1 + p'/p (the drop rate) against the flows' own TFRC estimate",
                 "p' and p \"estimated as for TFRC\"", ours, "Section II-A (our model's assumption)", verdict=verdict,
                 tolerance=f"the mPERT flows' mean TFRC loss-event rate within {FACTOR:g}x of the bottleneck's drop fraction at every rate",
                 id="M-mpert-tfrc", kind="model",
                 reason="the model takes the p of alpha as the drop rate; the flows estimate it as TFRC does, over 150-300 s of one "
                        "extra run per rate; a factor 2 as for the other model rows")


EXPERIMENT = register(Experiment(
    name=NAME,
    paper_key="budzisz",
    figure="Section IV extended to mixes (Figs 3-4, 8-9)",
    title="Coexistence: fluid model of HD / PERT / mPERT mixed with NewReno beside packet-level runs (Budzisz et al. 2009)",
    source="L. Budzisz, R. Stanojevic, A. Schlote, R. Shorten, F. Baker, \"On the fair coexistence of loss- and delay-based "
           "TCP\", Hamilton Institute preprint 2009, IEEE/ACM ToN 19(6) 2011; Sections II-A, III, IV",
    description="20 HD / PERT / mPERT (p' realised, p' = g) + 10 NewReno, and 30 NewReno, on Table I's dumbbell at 10-100 Mbit/s, "
                "300 s, 2 runs; the fluid model's equilibrium (queue full, and at the measured delay) from each run's RTTs.",
    build_plan=build_plan,
    draw_figures=draw,
    claims=tuple(_claim(v, what) for v, _, _ in VARIANTS for what in ("ratio", "loss")) + (tfrc_claim(),),
))
