"""Coexistence paper, Section IV: the fluid model's low-delay equilibrium beside packet-level HD runs.

Budzisz et al. 2009 ([Budzisz09] in ``docs/bibliography.md``), Section III property (i) ("the network
stabilises in Region A when only delay-based flows are present") and Section IV (Theorem 1, Fig. 6):
30 HD flows alone on Table I's dumbbell (access 100 Mbit/s, U[5, 30] ms; bottleneck 10-100 Mbit/s,
5 ms, 500 x rate/40 Mbit/s packets; 960 B payload; delta_min 5 ms, delta_th 20 ms, delta_max 100 ms,
p_max 0.05 as in ``budzisz_fig8``), 100 s, summary over 50-100 s, 3 repetitions. For each run,
``ccsim.fluid`` computes the equilibria from that run's own base RTTs (2 x (access delay + 5 ms)) and
HD's parameters, and the page sets the stable delta_1* beside the measured mean queueing delay.
``--quick``: 10 and 40 Mbit/s, 30 s, one repetition.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ccsim import fluid
from ccsim.experiments.budzisz import HD_PARAMS, JITTER, MSS_BYTES, RWND, SEED, queue_pkts
from ccsim.experiments.helpers import pyplot, save_figure
from ccsim.experiments.registry import Experiment, register
from ccsim.experiments.text_claims import text_claim
from ccsim.sweep import SweepPlan

NAME = "budzisz_fluid"
RATES_MBIT = [10, 40, 70, 100]
QUICK_RATES_MBIT = [10, 40]
N_FLOWS = 30
BOTTLENECK_DELAY_S = 0.005
PKT_BYTES = MSS_BYTES + 40
FIGURE_RATE_MBIT = 40  # the equilibrium figure is drawn for the first run at this rate


def base_document(duration_s: int = 100) -> dict[str, Any]:
    return {
        "run": {"duration": f"{duration_s}s", "measure": [f"{duration_s // 2}s", f"{duration_s}s"], "sample_interval": "1s", "seed": SEED},
        "topology": {"kind": "dumbbell", "bottleneck_rate": "40Mbit", "bottleneck_delay": "5ms", "queue": f"{queue_pkts(40)}pkt",
                     "access_rate": "100Mbit"},
        "tcp": {"profile": "ns2", "mss": f"{MSS_BYTES}B", "header": "40B", "send_jitter": JITTER, "rwnd": RWND},
        "flows": [{"name": "hd", "algorithm": "hd", "count": N_FLOWS, "params": dict(HD_PARAMS),
                   "access_delay": {"uniform": ["5ms", "30ms"]}, "start": {"uniform": ["0s", "2s"]}}],
    }


def build_plan(quick: bool = False) -> SweepPlan:
    rates = QUICK_RATES_MBIT if quick else RATES_MBIT
    return SweepPlan(
        name=NAME,
        base=base_document(30 if quick else 100),
        explicit_points=[{"topology.bottleneck_rate": f"{r}Mbit", "topology.queue": f"{queue_pkts(r)}pkt"} for r in rates],
        repetitions=1 if quick else 3,
        seed=SEED,
        budget=None,
    )


def comparison(sweep: Any) -> pd.DataFrame:
    """Per run: rate, the fluid equilibria (ms) from the run's base RTTs, the measured mean queueing delay."""
    g = fluid.HdProbability.from_params(HD_PARAMS)
    runs = sweep.runs.set_index("run_id")
    rows = []
    for run_id, f in sweep.flows.groupby("run_id", sort=False):
        rate_bps = float(runs.loc[run_id, "bottleneck_rate_bps"])
        rtts = 2 * (f["access_delay_ms"].to_numpy(float) / 1e3 + BOTTLENECK_DELAY_S)
        eq = fluid.equilibria(g, rate_bps / (8 * PKT_BYTES), rtts)
        p_th = float(fluid.p_star(g.q_th, rate_bps / (8 * PKT_BYTES), rtts))
        stable = [e.delta_s * 1e3 for e in eq if e.stable]  # Theorem 1: none when p*(delta_th) > p_max
        unstable = [e.delta_s * 1e3 for e in eq if not e.stable]
        rows.append({"run_id": run_id, "rate_mbit": rate_bps / 1e6, "fluid_delta1_ms": stable[0] if stable else np.nan,
                     "fluid_delta2_ms": unstable[0] if unstable else np.nan, "p_star_th": p_th,
                     "measured_qdelay_ms": float(runs.loc[run_id, "bottleneck_qdelay_mean_ms"]),
                     "utilisation": float(runs.loc[run_id, "bottleneck_utilisation"])})
    return pd.DataFrame(rows)


def draw_figures(sweep: Any, out_dir: Path) -> list[Path]:
    plt = pyplot()

    t = comparison(sweep)
    t.to_csv(out_dir / "fluid_vs_packet.csv", index=False, float_format="%.4g")
    shown = t[np.isclose(t["rate_mbit"], FIGURE_RATE_MBIT)]
    shown = shown if not shown.empty else t  # the paper's 40 Mbit/s when the sweep has it
    first = sweep.flows[sweep.flows["run_id"] == shown["run_id"].iloc[0]]
    rtts = 2 * (first["access_delay_ms"].to_numpy(float) / 1e3 + BOTTLENECK_DELAY_S)
    rate = shown["rate_mbit"].iloc[0]
    paths = [fluid.plot_equilibria(fluid.HdProbability.from_params(HD_PARAMS), rate * 1e6 / (8 * PKT_BYTES), rtts,
                                   out_dir / "fluid_equilibria.png",
                                   title=f"Fluid model, 30 HD flows, {rate:g} Mbit/s (the paper's Fig. 6 for these numbers)")]
    m = t.groupby("rate_mbit").mean(numeric_only=True)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(m.index, m["fluid_delta1_ms"], "o-", label="fluid model: stable delta_1*")
    ax.plot(m.index, m["measured_qdelay_ms"], "s-", label="packet level: mean queueing delay")
    ax.axhline(HD_PARAMS["q_th_ms"], color="k", lw=0.5, ls="--", label="delta_th (end of region A)")
    ax.set_xlabel("bottleneck rate (Mbit/s)")
    ax.set_ylabel("queueing delay (ms)")
    ax.set_title("30 HD flows alone: fluid equilibrium vs simulation", fontsize=10)
    ax.legend(fontsize=8)
    path = save_figure(fig, out_dir, "fluid_vs_packet.png", dpi=90)
    paths += [path, out_dir / "fluid_vs_packet.csv"]
    return paths


TOLERANCE_MS = 5.0


def side_by_side(sweep: Any) -> str:
    """Where the fluid model has a stable equilibrium the measured mean delay must lie within 5 ms of
    it (the model against the simulator)."""
    m = comparison(sweep).groupby("rate_mbit").mean(numeric_only=True)
    parts, ok = [], True
    for r, row in m.iterrows():
        if np.isfinite(row.fluid_delta1_ms):
            ok &= bool(abs(row.measured_qdelay_ms - row.fluid_delta1_ms) <= TOLERANCE_MS)
            parts.append(f"{r:g}: fluid {row.fluid_delta1_ms:.1f} ms, measured {row.measured_qdelay_ms:.1f} ms")
        else:
            parts.append(f"{r:g}: no equilibrium, measured {row.measured_qdelay_ms:.1f} ms (not compared)")
    return f"{'; '.join(parts)} | tolerance: within {TOLERANCE_MS:g} ms of delta_1* where there is one | {'HOLDS' if ok else 'FAILS'}"


def region_a(sweep: Any) -> str:
    """Properties (i) and (A): with only delay-based flows the queue settles below delta_th, unless the
    back-off rate the flows need there, p*(delta_th), is above p_max; then the network is loss-based
    and the queue above delta_th."""
    m = comparison(sweep).groupby("rate_mbit").mean(numeric_only=True)
    parts, ok = [], True
    for r, row in m.iterrows():
        low = bool(row.measured_qdelay_ms < HD_PARAMS["q_th_ms"])
        expected = bool(row.p_star_th < HD_PARAMS["p_max"])
        ok &= low == expected
        parts.append(f"{r:g}: {row.measured_qdelay_ms:.1f} ms (p*(delta_th) {row.p_star_th:.4f} {'<' if expected else '>'} p_max: "
                     f"{'region A' if expected else 'loss-based'})")
    return (f"mean queueing delay {'; '.join(parts)} | tolerance: below 20 ms (delta_th) where p*(delta_th) < p_max, above where not "
            f"| {'HOLDS' if ok else 'FAILS'}")


EXPERIMENT = register(Experiment(
    name=NAME,
    paper_key="budzisz",
    figure="Section IV, Fig. 6",
    title="Coexistence: fluid-model equilibrium vs packet-level HD (Budzisz et al. 2009, Section IV, Fig. 6)",
    source="L. Budzisz, R. Stanojevic, A. Schlote, R. Shorten, F. Baker, \"On the fair coexistence of loss- and delay-based "
           "TCP\", Hamilton Institute preprint 2009, IEEE/ACM ToN 19(6) 2011; Section III (i), Section IV, Theorem 1, Fig. 6",
    description="30 HD flows alone on Table I's dumbbell at 10-100 Mbit/s, 100 s; the fluid model's equilibria from each run's "
                "base RTTs beside the measured mean queueing delay.",
    build_plan=build_plan,
    draw_figures=draw_figures,
    claims=(
        text_claim("Only delay-based flows: the network settles in region A, unless the rate it needs exceeds p_max",
              "delta_1* < delta_th; loss-based if p*(delta_th) > p_max", region_a, "Section III properties (i) and (A); Section IV",
              tolerance="queue below delta_th where p*(delta_th) < p_max, above where not", id="B9",
              reason="property (i) \"stabilises in Region A\" and (A) \"revert to a loss-based network\" when the required "
                     "loss rate is above p_max: the mean queue over 50-100 s of 30 HD flows alone, p_max 0.05 as in B3"),
        text_claim("Fluid model vs simulator: the measured mean queue at the stable delta_1*", "delta_1* of Theorem 1",
              side_by_side, "Section IV", tolerance="within 5 ms of delta_1* where there is one", id="M1", kind="model",
              reason="the model's equilibrium from each run's RTTs against the mean queue over 50-100 s; 5 ms is a quarter of delta_th"),
    ),
))
