"""Binomial congestion control paper, Figs 6, 16 and 17: IIAD and SQRT against TCP on a RED bottleneck.

Bansal & Balakrishnan, "Binomial congestion control algorithms", IEEE INFOCOM 2001 ([Bansal01] in
``docs/bibliography.md``), Section 3: ns-2, n connections with identical round-trip propagation
delay RTT through one bottleneck of rate b; RED with limit Q = b x RTT (1 KB packets), min_th 0.2 Q,
max_th 0.8 Q, other constants ns-2's; flows start at U[0, 2] s; throughput from 10 s to 20 s; ten
runs per point, mean with 95 % confidence intervals.

* ``binomial_fig6`` (Section 3.2, Fig. 6): b = 1.5 Mbit/s, RTT 50-200 ms, n = 2: the throughput
  ratio of two IIAD connections, and of one IIAD and one TCP connection ("~1 across RTTs").
* ``binomial_fig16`` (Section 3.3, Fig. 16): b = 3 Mbit/s, RTT 50 ms, one TCP and one SQRT, SQRT's
  beta swept; "little variation", TCP loses as beta -> 0 and SQRT as beta -> 1.
* ``binomial_fig17`` (Section 3.5, Fig. 17): b = 50 Mbit/s, RTT 50 ms, n connections split equally
  over k in {0, 0.25, 0.5, 0.75, 1} with l = 1 - k; Jain's index over all n ("close to 1").

Choices where the paper is silent (docs/reproductions/binomial.md): the ns-2 profile (``Agent/TCP/
Sack1``, no delayed ACK) for every flow and NewReno as "TCP/Reno"; binomial flows alpha 1, beta 0.6
(the paper's values) also for the k-values of Fig. 17 (so its k = 0 flows are AIMD with beta 0.6, not
TCP's 0.5); ns-2's first decrease halves (``first_decrease_halves``); Q rounded to whole packets and at
least 4 packets; the receiver window raised to 16 MB (ns-2's ``window_`` of 20 packets would cap
the flows); the RTT split as 2 x bottleneck one-way delay (access delays 0).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ccsim.experiments.helpers import pyplot, save_figure
from ccsim.experiments.registry import Experiment, register
from ccsim.experiments.text_claims import text_claim
from ccsim.sweep import SweepPlan

SEED = 2001
PKT_BYTES = 1000
REPETITIONS = 10  # as the paper
QUICK_REPETITIONS = 2
FIG6_RTTS_MS = [50, 75, 100, 125, 150, 175, 200]
QUICK_FIG6_RTTS_MS = [50, 200]
FIG16_BETAS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
QUICK_FIG16_BETAS = [0.2, 0.6, 0.9]
FIG17_KS = [0.0, 0.25, 0.5, 0.75, 1.0]
FIG17_NS = [5, 10, 20, 40, 60]
QUICK_FIG17_NS = [5]
IIAD = {"preset": "iiad"}
NS2_WINDOW = f"{20 * PKT_BYTES}B"  # sensitivity: ns-2's default window_ of 20 packets left in place


def red_queue(rate_bps: float, rtt_ms: float) -> dict[str, Any]:
    """Section 3: Q = b x RTT in 1 KB packets, min_th 0.2 Q, max_th 0.8 Q."""
    q = max(4, int(round(rate_bps * rtt_ms / 1000 / 8 / PKT_BYTES)))
    return {"kind": "red", "limit": f"{q}pkt", "min_th": "20%", "max_th": "80%"}


def flow(name: str, algorithm: str, params: dict[str, Any] | None = None, count: int = 1) -> dict[str, Any]:
    f = {"name": name, "algorithm": algorithm, "count": count, "start": {"uniform": ["0s", "2s"]}}
    if params:
        f["params"] = dict(params)
    return f


def base_document(rate: str, rate_bps: float, rtt_ms: float, flows: list[dict[str, Any]], quick: bool = False) -> dict[str, Any]:
    return {
        "run": {"duration": "20s", "measure": ["10s", "20s"], "sample_interval": "100ms", "seed": SEED},
        "topology": {"kind": "dumbbell", "bottleneck_rate": rate, "bottleneck_delay": f"{rtt_ms / 2:g}ms",
                     "queue": red_queue(rate_bps, rtt_ms)},
        "tcp": {"profile": "ns2", "mss": f"{PKT_BYTES}B", "rwnd": "16MB"},  # ns-2 window_ 20 pkts would cap the flows
        "flows": flows,
    }


# --- Fig. 6 -----------------------------------------------------------------------------------------

def fig6_points(rtts: list[float]) -> list[dict[str, Any]]:
    pts = []
    for rtt in rtts:
        for other in ("newreno", "binomial"):
            pts.append({"topology.bottleneck_delay": f"{rtt / 2:g}ms", "topology.queue": red_queue(1.5e6, rtt),
                        "flows[1].algorithm": other, "flows[1].params": {} if other == "newreno" else dict(IIAD),
                        "flows[1].name": "tcp" if other == "newreno" else "iiad2"})
    # sensitivity: ns-2's default window_ of 20 packets left in place, at the longest RTT (where it binds)
    rtt = max(rtts)
    pts.append({"topology.bottleneck_delay": f"{rtt / 2:g}ms", "topology.queue": red_queue(1.5e6, rtt), "tcp.rwnd": NS2_WINDOW,
                "flows[1].algorithm": "newreno", "flows[1].params": {}, "flows[1].name": "tcp_rwnd20"})
    return pts


def build_fig6(quick: bool = False) -> SweepPlan:
    return SweepPlan(
        name="binomial_fig6",
        base=base_document("1.5Mbit", 1.5e6, 50, [flow("iiad", "binomial", IIAD), flow("tcp", "newreno")]),
        explicit_points=fig6_points(QUICK_FIG6_RTTS_MS if quick else FIG6_RTTS_MS),
        repetitions=QUICK_REPETITIONS if quick else REPETITIONS,
        seed=SEED,
    )


def _pair_ratios(sweep: Any, x_column: str, x_of: Any) -> pd.DataFrame:
    """Per run: x, the pair (the second flow's name), and the throughput ratio second/first."""
    rows = []
    for run_id, g in sweep.flows.groupby("run_id", sort=False):
        g = g.reset_index(drop=True)
        first = g[g["name"].astype(str).str.startswith(("iiad", "sqrt"))].iloc[0]
        others = g[g.index != first.name]
        second = others.iloc[0]
        rows.append({"run_id": run_id, "x": x_of(g), "pair": str(second["name"]),
                     "ratio": float(second["goodput_bps"]) / float(first["goodput_bps"]) if first["goodput_bps"] > 0 else np.inf})
    return pd.DataFrame(rows)


def _rtt_of(g: pd.DataFrame) -> float:
    return float(str(g["topology.bottleneck_delay"].iloc[0]).strip('"').replace("ms", "")) * 2


def fig6_table(sweep: Any) -> pd.DataFrame:
    return _pair_ratios(sweep, "topology.bottleneck_delay", _rtt_of)


def _ci_table(t: pd.DataFrame) -> pd.DataFrame:
    """Mean, sample std and 95 % CI half-width of ``ratio`` per (pair, x)."""
    def agg(s: pd.Series) -> pd.Series:
        v = s.replace([np.inf], np.nan).dropna().to_numpy(float)
        n = v.size
        sd = float(v.std(ddof=1)) if n > 1 else 0.0
        return pd.Series({"mean": float(v.mean()) if n else np.nan, "std": sd, "ci95": 1.96 * sd / np.sqrt(n) if n else np.nan, "n": n})
    return t.groupby(["pair", "x"])["ratio"].apply(agg).unstack().reset_index()


def _draw_ratio(table: pd.DataFrame, out: Path, xlabel: str, ylabel: str, title: str, filename: str) -> Path:
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(6, 4))
    for pair, g in table.groupby("pair"):
        ax.errorbar(g["x"], g["mean"], yerr=g["ci95"], fmt="o-", capsize=3, label=pair)
    ax.axhline(1.0, color="k", lw=0.5)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    return save_figure(fig, out, filename, dpi=90)


def draw_fig6(sweep: Any, out_dir: Path) -> list[Path]:
    t = _ci_table(fig6_table(sweep))
    t.to_csv(out_dir / "fig6_ratios.csv", index=False, float_format="%.4g")
    return [_draw_ratio(t, out_dir, "RTT (ms)", "throughput ratio other / IIAD", "IIAD vs TCP and vs IIAD, b = 1.5 Mbit/s (Fig. 6)",
                        "fig6_ratio.png"), out_dir / "fig6_ratios.csv"]


def ratio_band(table_of: Any, pair: str, lo: float, hi: float, what: str):
    def ours(sweep: Any) -> str:
        t = _ci_table(table_of(sweep))
        t = t[t["pair"] == pair]
        if t.empty:
            raise LookupError(f"no {pair} runs in this sweep")
        ok = bool(((t["mean"] >= lo) & (t["mean"] <= hi)).all())
        parts = "; ".join(f"{x:g}: {m:.2f} +- {c:.2f}" for x, m, c in zip(t["x"], t["mean"], t["ci95"]))
        return f"{what} {parts} | tolerance: mean in [{lo:g}, {hi:g}] at every point | {'HOLDS' if ok else 'FAILS'}"

    return ours


# --- Fig. 16 ----------------------------------------------------------------------------------------

def build_fig16(quick: bool = False) -> SweepPlan:
    betas = QUICK_FIG16_BETAS if quick else FIG16_BETAS
    return SweepPlan(
        name="binomial_fig16",
        base=base_document("3Mbit", 3e6, 50, [flow("sqrt", "binomial", {"preset": "sqrt"}), flow("tcp", "newreno")]),
        grid={"flows[0].params.beta": list(betas)},
        repetitions=QUICK_REPETITIONS if quick else REPETITIONS,
        seed=SEED,
    )


def fig16_table(sweep: Any) -> pd.DataFrame:
    return _pair_ratios(sweep, "flows[0].params.beta", lambda g: float(g["flows[0].params.beta"].iloc[0]))


def draw_fig16(sweep: Any, out_dir: Path) -> list[Path]:
    t = _ci_table(fig16_table(sweep))
    t.to_csv(out_dir / "fig16_ratios.csv", index=False, float_format="%.4g")
    return [_draw_ratio(t, out_dir, "SQRT beta", "throughput ratio TCP / SQRT", "SQRT vs TCP, b = 3 Mbit/s, RTT 50 ms (Fig. 16)",
                        "fig16_ratio.png"), out_dir / "fig16_ratios.csv"]


def fig16_extremes_outcome(t: pd.DataFrame) -> str:
    """N4's outcome line from a ``_ci_table`` of TCP/SQRT against beta (pair "tcp"): "when beta is close
    to 0, TCP AIMD loses and when beta is close to 1, SQR loses" (Section 3.3), so the mean ratio must
    lie below 1 at the smallest beta and above 1 at the largest. A curve that rises without crossing 1
    (one side winning throughout) fails; only one end on its side of 1 is "partly"."""
    t = t[t["pair"] == "tcp"].sort_values("x")
    lo, hi = t.iloc[0], t.iloc[-1]
    tcp_loses, sqrt_loses = bool(lo["mean"] < 1), bool(hi["mean"] > 1)
    outcome = "HOLDS" if tcp_loses and sqrt_loses else (
        f"PARTLY (only {'TCP loses at the smallest beta' if tcp_loses else 'SQRT loses at the largest beta'})"
        if tcp_loses or sqrt_loses else "FAILS")
    return (f"beta {lo['x']:g}: {lo['mean']:.2f} +- {lo['ci95']:.2f}; beta {hi['x']:g}: {hi['mean']:.2f} +- {hi['ci95']:.2f} "
            f"| tolerance: {FIG16_EXTREMES_RULE} | {outcome}")


FIG16_EXTREMES_RULE = ("mean TCP/SQRT below 1 at the smallest beta and above 1 at the largest; "
                       "partly: only one end on its side of 1")


def fig16_trend(sweep: Any) -> str:
    return fig16_extremes_outcome(_ci_table(fig16_table(sweep)))


# --- Fig. 17 ----------------------------------------------------------------------------------------

def fig17_flows(n: int) -> list[dict[str, Any]]:
    per = max(1, n // len(FIG17_KS))
    return [flow(f"k{k:g}", "binomial", {"preset": "custom", "k": k, "l": 1 - k}, count=per) for k in FIG17_KS]


def build_fig17(quick: bool = False) -> SweepPlan:
    ns = QUICK_FIG17_NS if quick else FIG17_NS
    return SweepPlan(
        name="binomial_fig17",
        base=base_document("50Mbit", 50e6, 50, fig17_flows(ns[0])),
        explicit_points=[fig17_point(n, 0.6) for n in ns] + [fig17_point(ns[0] if quick else 20, 0.5),
                                                           fig17_point(ns[0] if quick else 20, 0.6, late=True),
                                                           dict(fig17_point(ns[0] if quick else 10, 0.6), **{"tcp.rwnd": NS2_WINDOW})],
        repetitions=QUICK_REPETITIONS if quick else REPETITIONS,
        seed=SEED,
    )


LATE_WINDOW = ["80s", "100s"]  # sensitivity: the same mix measured after a long warm-up


def fig17_point(n: int, beta: float, late: bool = False) -> dict[str, Any]:
    """n flows, n/5 per k, every one with decrease factor ``beta`` (0.6 the paper's; 0.5 makes k = 0 TCP);
    ``late``: run 100 s and measure over 80-100 s instead of the paper's 10-20 s."""
    pt: dict[str, Any] = {"run.duration": "100s", "run.measure": list(LATE_WINDOW)} if late else {}
    for i in range(len(FIG17_KS)):
        pt[f"flows[{i}].count"] = n // len(FIG17_KS)
        pt[f"flows[{i}].params.beta"] = beta
    return pt


def fig17_runs(sweep: Any) -> pd.DataFrame:
    """Per run: n, beta, whether measured late (80-100 s) and Jain's index."""
    flows = sweep.flows
    n = flows.groupby("run_id").size().rename("n")
    beta = flows.groupby("run_id")["flows[0].params.beta"].first().astype(float).rename("beta")
    runs = sweep.runs.set_index("run_id")
    late = (runs["measure_start_s"] > 10) if "measure_start_s" in runs else pd.Series(False, index=runs.index)
    if "tcp.rwnd" in flows:
        capped = flows.groupby("run_id")["tcp.rwnd"].first().notna() & (flows.groupby("run_id")["tcp.rwnd"].first().astype(str).str.strip('"') == NS2_WINDOW)
    else:
        capped = pd.Series(False, index=runs.index)
    return runs[["jain_index"]].assign(late=late).join(capped.rename("rwnd20")).fillna({"rwnd20": False}).join(n).join(beta).reset_index()


def fig17_table(sweep: Any, beta: float = 0.6, late: bool = False, rwnd20: bool = False) -> pd.DataFrame:
    t = fig17_runs(sweep)
    t = t[np.isclose(t["beta"], beta) & (t["late"] == late) & (t["rwnd20"].astype(bool) == rwnd20)]
    return t.groupby("n")["jain_index"].agg(["mean", "std", "count"]).reset_index()


def draw_fig17(sweep: Any, out_dir: Path) -> list[Path]:
    plt = pyplot()

    fig17_runs(sweep).groupby(["rwnd20", "late", "beta", "n"])["jain_index"].agg(["mean", "std", "count"]).reset_index().to_csv(
        out_dir / "fig17_jain.csv", index=False, float_format="%.4g")
    t = fig17_table(sweep)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.errorbar(t["n"], t["mean"], yerr=1.96 * t["std"].fillna(0) / np.sqrt(t["count"]), fmt="o-", capsize=3)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("number of connections n (n/5 per k)")
    ax.set_ylabel("Jain's fairness index (10-20 s)")
    ax.set_title("k in {0, .25, .5, .75, 1}, l = 1 - k, b = 50 Mbit/s (Fig. 17)", fontsize=10)
    path = save_figure(fig, out_dir, "fig17_jain.png", dpi=90)
    return [path, out_dir / "fig17_jain.csv"]


def _fig17_sensitivity(sweep: Any, variant: dict[str, Any], runs: str, default_label: str, variant_label: str) -> str:
    """Jain's mean at the variant's first n, beside the default runs' (beta 0.6, 10-20 s, 16 MB window)
    at the same n."""
    varied = fig17_table(sweep, **variant)
    if varied.empty:
        raise LookupError(f"no {runs} runs in this sweep")
    n = int(varied["n"].iloc[0])
    default = fig17_table(sweep)
    default = default[default["n"] == n]
    return (f"n = {n}: Jain {default['mean'].iloc[0]:.3f} {default_label}, {varied['mean'].iloc[0]:.3f} {variant_label} "
            "| SHOWN (no paper value)")


def fig17_beta_claim(sweep: Any) -> str:
    return _fig17_sensitivity(sweep, {"beta": 0.5}, "beta = 0.5", "with beta 0.6", "with beta 0.5")


def fig17_late_claim(sweep: Any) -> str:
    return _fig17_sensitivity(sweep, {"late": True}, "late-window", "over 10-20 s", "over 80-100 s")


def fig17_rwnd_claim(sweep: Any) -> str:
    return _fig17_sensitivity(sweep, {"rwnd20": True}, "rwnd = 20 packet", "with a 16 MB receiver window",
                              "with ns-2's default window_ of 20 packets")


def fig17_claim(sweep: Any) -> str:
    t = fig17_table(sweep)
    ok = bool((t["mean"] >= 0.9).all())
    parts = "; ".join(f"n = {n}: {m:.3f}" for n, m in zip(t["n"], t["mean"]))
    return f"{parts} | tolerance: mean Jain >= 0.9 at every n | {'HOLDS' if ok else 'FAILS'}"


SOURCE = "D. Bansal, H. Balakrishnan, \"Binomial congestion control algorithms\", IEEE INFOCOM 2001; Section 3"

FIG6 = register(Experiment(
    name="binomial_fig6",
    paper_key="binomial",
    figure="Fig. 6",
    title="IIAD vs TCP and vs IIAD over RTT 50-200 ms (Bansal & Balakrishnan 2001, Fig. 6)",
    source=SOURCE,
    description="Two flows (IIAD + NewReno, or IIAD + IIAD) on 1.5 Mbit/s with RED (Q = b x RTT), RTT 50-200 ms, ns-2 "
                "profile, starts U[0, 2] s, throughput over 10-20 s, 10 runs per point; ratio other/IIAD, mean and 95 % CI.",
    build_plan=build_fig6,
    draw_figures=draw_fig6,
    claims=(
        text_claim("IIAD is fair to TCP across RTT (TCP/IIAD)", "~1 at every RTT", ratio_band(fig6_table, "tcp", 0.67, 1.5, "TCP/IIAD"),
              "Section 3.2, Fig. 6", tolerance="mean in [0.67, 1.5] at every RTT", id="N2a",
              reason="'fair' (Section 3.2: 'IIAD is fair to both the IIAD and to TCP across a range of RTT values') read as the mean of ten runs over the paper's 10-20 s within a factor 1.5 either way, at every RTT the figure shows (50-200 ms)"),
        text_claim("IIAD is fair to IIAD across RTT", "~1 at every RTT", ratio_band(fig6_table, "iiad2", 0.67, 1.5, "IIAD/IIAD"),
              "Section 3.2, Fig. 6", tolerance="mean in [0.67, 1.5] at every RTT", id="N2b",
              reason="'fair' (Section 3.2: 'IIAD is fair to both the IIAD and to TCP across a range of RTT values') read as the mean of ten runs over the paper's 10-20 s within a factor 1.5 either way, at every RTT the figure shows (50-200 ms)"),
        text_claim("Sensitivity: TCP/IIAD at the longest RTT with ns-2's window_ of 20 packets", "not stated",
              lambda s: ratio_band(fig6_table, "tcp_rwnd20", 0.67, 1.5, "TCP/IIAD, rwnd 20 pkts")(s).replace("HOLDS", "SHOWN").replace("FAILS", "SHOWN"),
              "Section 3 (window_ not given)", tolerance="none (sensitivity point)", id="S1", kind="sensitivity",
              reason="the paper does not give ns-2's window_; its default (20 packets) binds at 200 ms"),
    ),
))

FIG16 = register(Experiment(
    name="binomial_fig16",
    paper_key="binomial",
    figure="Fig. 16",
    title="SQRT vs TCP as SQRT's beta varies (Bansal & Balakrishnan 2001, Fig. 16)",
    source=SOURCE,
    description="One SQRT and one NewReno flow on 3 Mbit/s, RTT 50 ms, RED (Q = b x RTT); SQRT beta 0.1-0.9; 10 runs per "
                "point; throughput ratio TCP/SQRT over 10-20 s, mean and 95 % CI.",
    build_plan=build_fig16,
    draw_figures=draw_fig16,
    claims=(
        text_claim("Little variation of TCP/SQRT with beta in the middle (0.3-0.7)", "~1",
              lambda s: ratio_band(lambda sw: fig16_table(sw)[lambda t: (t['x'] >= 0.29) & (t['x'] <= 0.71)], "tcp", 0.67, 1.5,
                                   "TCP/SQRT")(s), "Section 3.3, Fig. 16", tolerance="mean in [0.67, 1.5] at every beta in 0.3-0.7", id="N3",
              reason="'we observe little variation in the throughput ratio' away from 'the extremes': the Fig. 6 fairness "
                     "band (ten runs, 10-20 s) at the middle betas 0.3-0.7"),
        text_claim("TCP loses as beta -> 0, SQRT as beta -> 1", "TCP/SQRT below 1 near beta 0, above 1 near beta 1", fig16_trend,
              "Section 3.3, Fig. 16", tolerance=FIG16_EXTREMES_RULE, id="N4",
              reason="'when beta is close to 0, TCP AIMD loses and when beta is close to 1, SQR loses': the sides of 1 at the "
                     "sweep's ends (0.1, 0.9), mean of ten runs over 10-20 s; a rising curve that never crosses 1 fails"),
    ),
))

FIG17 = register(Experiment(
    name="binomial_fig17",
    paper_key="binomial",
    figure="Fig. 17",
    title="Five TCP-compatible binomial algorithms sharing 50 Mbit/s (Bansal & Balakrishnan 2001, Fig. 17)",
    source=SOURCE,
    description="n flows, n/5 each of k = 0, 0.25, 0.5, 0.75, 1 with l = 1 - k (alpha 1, beta 0.6), on 50 Mbit/s, RTT 50 ms, "
                "RED (Q = b x RTT); Jain's index over 10-20 s, 10 runs per n.",
    build_plan=build_fig17,
    draw_figures=draw_fig17,
    claims=(
        text_claim("Jain's index of the mix", "close to 1 at every n (tiny error bars)", fig17_claim, "Section 3.5, Fig. 17", tolerance="mean Jain >= 0.9 at every n",
              id="N5", reason="'close to 1' with '(tiny) error-bars' (Fig. 17 caption): the mean of ten runs over the paper's "
                              "10-20 s at or above 0.9 at every n the sweep runs (5-60)"),
        text_claim("Sensitivity: beta 0.5 for every k (k = 0 is then TCP's AIMD)", "not stated", fig17_beta_claim,
              "Section 3.5 (alpha, beta not given for Fig. 17)", tolerance="none (sensitivity point)", id="S2", kind="sensitivity",
              reason="the paper gives beta 0.6 for IIAD and SQRT only; 0.5 makes the k = 0 flows TCP"),
        text_claim("Sensitivity: the measurement window (paper 10-20 s) vs 80-100 s", "not stated", fig17_late_claim,
              "Section 3 (10-20 s window)", tolerance="none (sensitivity point)", id="S3", kind="sensitivity",
              reason="how much of the 10-20 s gap is the k = 1 flows' start-up (not the paper's window: never judged)"),
        text_claim("Sensitivity: ns-2's default receiver window (window_ 20 packets) left in place", "not stated", fig17_rwnd_claim,
              "Section 3 (window_ not given)", tolerance="none (sensitivity point)", id="S4", kind="sensitivity",
              reason="the paper does not give ns-2's window_; its default of 20 packets would cap every flow of the mix"),
    ),
))


# --- Fig. 5 -----------------------------------------------------------------------------------------

# k to 1.5 (issue 28): above k = 1 the k + l = 0.5 curve has l < 0 and is where the rule is tested hardest
FIG5_KS = [0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5]
QUICK_FIG5_KS = [0.0, 1.5]
FIG5_SUMS = [0.5, 1.0, 1.5]  # k + l below, at and above the TCP-friendly line
FIG5_LATE_SUMS, FIG5_LATE_KS, QUICK_FIG5_LATE_KS = [0.5, 1.0], [1.25, 1.5], [1.5]


def build_fig5(quick: bool = False) -> SweepPlan:
    """One NewReno and one binomial (k, l = s - k) flow, b = 3 Mbit/s, RTT 50 ms, RED; alpha 1, beta 0.6."""
    points = []
    for s in FIG5_SUMS:
        for k in QUICK_FIG5_KS if quick else FIG5_KS:
            params = {"preset": "custom", "k": k, "l": round(s - k, 6), "allow_unstable_l": True}
            points.append({"flows[0].params": params, "flows[0].name": f"s{s:g}"})
    # sensitivity (S6): k > 1, where l < 0 and the increase 1/w^k is slow, measured late in a 100 s run
    for s in FIG5_LATE_SUMS:
        for k in QUICK_FIG5_LATE_KS if quick else FIG5_LATE_KS:
            params = {"preset": "custom", "k": k, "l": round(s - k, 6), "allow_unstable_l": True}
            points.append({"flows[0].params": params, "flows[0].name": f"late_s{s:g}", "run.duration": "100s",
                           "run.measure": list(LATE_WINDOW)})
    return SweepPlan(
        name="binomial_fig5",
        base=base_document("3Mbit", 3e6, 50, [flow("s1", "binomial", {"preset": "custom", "k": 0.0, "l": 1.0}), flow("tcp", "newreno")]),
        explicit_points=points,
        repetitions=QUICK_REPETITIONS if quick else REPETITIONS,
        seed=SEED,
    )


def fig5_table(sweep: Any, late: bool = False) -> pd.DataFrame:
    """Per run: k + l (the binomial flow's name), k, and TCP / binomial throughput; the paper's 10-20 s
    runs, or with ``late`` the S6 runs measured over 80-100 s."""
    rows = []
    for run_id, g in sweep.flows.groupby("run_id", sort=False):
        names = g["name"].astype(str)
        if names.str.startswith("late_").any() != late:
            continue
        binomial = g[names.str.startswith("late_s" if late else "s")].iloc[0]
        tcp = g[names == "tcp"].iloc[0]
        params = g["flows[0].params"].iloc[0]
        k = float(params["k"]) if isinstance(params, dict) else float(__import__("json").loads(params)["k"])
        rows.append({"run_id": run_id, "pair": f"k + l = {str(binomial['name']).removeprefix('late_')[1:]}", "x": k,
                     "ratio": float(tcp["goodput_bps"]) / float(binomial["goodput_bps"]) if binomial["goodput_bps"] > 0 else np.inf})
    return pd.DataFrame(rows)


def draw_fig5(sweep: Any, out_dir: Path) -> list[Path]:
    t = _ci_table(fig5_table(sweep))
    t.to_csv(out_dir / "fig5_ratios.csv", index=False, float_format="%.4g")
    return [_draw_ratio(t, out_dir, "k", "throughput ratio TCP / binomial", "TCP vs binomial (k, l), b = 3 Mbit/s, RTT 50 ms (Fig. 5)",
                        "fig5_ratio.png"), out_dir / "fig5_ratios.csv"]


FIG5_RULE = ("at every k: TCP/binomial below 1 for k + l = 0.5, above 1 for k + l = 1.5, and k + l = 1 the nearest "
             "of the three to 1 (|ln ratio|); partly: so at more than half of the k values")


def fig5_outcome(t: pd.DataFrame) -> str:
    """N1's outcome line from a ``_ci_table`` of Fig. 5 (pairs "k + l = 0.5", "= 1", "= 1.5" against k):
    the caption's rule ("the algorithms that satisfy the k + l rule are the ones for which this ratio is
    closest to unity"; k + l = 0.5 "obtains much higher throughput", k + l = 1.5 much lower) judged at
    each k of the sweep, not on averages over k."""
    m = t.pivot(index="x", columns="pair", values="mean")
    failing = []
    for k, r in m.iterrows():
        lo, one, hi = r["k + l = 0.5"], r["k + l = 1"], r["k + l = 1.5"]
        if not (lo < 1 < hi and abs(np.log(one)) < min(abs(np.log(lo)), abs(np.log(hi)))):
            failing.append(k)
    parts = "; ".join(f"{p}: " + ", ".join(f"{v:.2f}" for v in m[p]) for p in m.columns)
    n = len(m)
    outcome = ("HOLDS" if not failing else
               f"PARTLY (fails at k = {', '.join(f'{k:g}' for k in failing)})" if len(failing) < n / 2 else
               f"FAILS (fails at k = {', '.join(f'{k:g}' for k in failing)})")
    return (f"TCP/binomial at k = {', '.join(f'{k:g}' for k in m.index)}: {parts} | tolerance: {FIG5_RULE} | {outcome}")


def fig5_claim(sweep: Any) -> str:
    return fig5_outcome(_ci_table(fig5_table(sweep)))


def fig5_above_one_claim(sweep: Any) -> str:
    """The k + l = 0.5 curve over k <= 1 and over k > 1 (where l < 0): where the rule holds and where not."""
    t = _ci_table(fig5_table(sweep))
    t = t[t["pair"] == "k + l = 0.5"]
    low, high = t[t["x"] <= 1.0 + 1e-9]["mean"], t[t["x"] > 1.0 + 1e-9]["mean"]
    if high.empty:
        raise LookupError("no k > 1 runs in this sweep")
    return (f"k + l = 0.5: TCP/binomial {low.min():.2f}-{low.max():.2f} for k <= 1, {high.min():.2f}-{high.max():.2f} for k > 1 "
            "| SHOWN (where in k the rule holds)")


def fig5_late_claim(sweep: Any) -> str:
    """k > 1 over the paper's 10-20 s beside 80-100 s of a 100 s run: is the failure start-up?"""
    late, early = _ci_table(fig5_table(sweep, late=True)), _ci_table(fig5_table(sweep))
    if late.empty:
        raise LookupError("no late-window runs in this sweep")
    parts = []
    for (pair, x), m in late.set_index(["pair", "x"])["mean"].items():
        e = early[(early["pair"] == pair) & np.isclose(early["x"], x)]["mean"]
        parts.append(f"{pair}, k = {x:g}: {e.iloc[0]:.2f} over 10-20 s, {m:.2f} over 80-100 s" if len(e) else
                     f"{pair}, k = {x:g}: {m:.2f} over 80-100 s")
    return "; ".join(parts) + " | SHOWN (the paper's window is 10-20 s)"


# --- Fig. 20 ----------------------------------------------------------------------------------------

# Host send jitter: the ns-2 profile's 0, the freebsd9/linux 125 us, and one packet time at 3 Mbit/s
# (2.7 ms, the size of the random overhead_ ns-2 users add against phase effects).
FIG20_JITTERS = ["0s", "125us", "2.7ms"]


def droptail_queue(rate_bps: float, rtt_ms: float) -> str:
    """Section 4: a drop-tail buffer of b x RTT (1 KB packets)."""
    return f"{max(4, int(round(rate_bps * rtt_ms / 1000 / 8 / PKT_BYTES)))}pkt"


def build_fig20(quick: bool = False) -> SweepPlan:
    """One NewReno and one IIAD flow, b = 3 Mbit/s, RTT 50 ms, drop-tail b x RTT against RED; 100 s,
    measured over 20-100 s (the paper shows a time series without a window)."""
    doc = base_document("3Mbit", 3e6, 50, [flow("iiad", "binomial", IIAD), flow("tcp", "newreno")])
    doc["run"].update({"duration": "40s" if quick else "100s", "measure": ["10s", "40s"] if quick else ["20s", "100s"]})
    return SweepPlan(
        name="binomial_fig20",
        base=doc,
        grid={"topology.queue": [droptail_queue(3e6, 50), red_queue(3e6, 50)], "tcp.send_jitter": list(FIG20_JITTERS)},
        repetitions=QUICK_REPETITIONS if quick else REPETITIONS,
        seed=SEED,
    )


def fig20_table(sweep: Any) -> pd.DataFrame:
    rows = []
    for run_id, g in sweep.flows.groupby("run_id", sort=False):
        q = g["topology.queue"].iloc[0]
        kind = "RED" if "red" in str(q).lower() else "drop-tail"
        jitter = str(g["tcp.send_jitter"].iloc[0]).strip('"')
        if jitter != "0s":
            kind += f", jitter {jitter}"  # sensitivity: the ns-2 profile's send jitter is 0
        by = g.set_index(g["name"].astype(str))
        rows.append({"run_id": run_id, "queue": kind, "iiad_bps": float(by.loc["iiad", "goodput_bps"]),
                     "tcp_bps": float(by.loc["tcp", "goodput_bps"]),
                     "loss_iiad": float(by.loc["iiad", "loss_rate"]), "loss_tcp": float(by.loc["tcp", "loss_rate"])})
    return pd.DataFrame(rows)


def fig20_means(sweep: Any) -> pd.DataFrame:
    """Per queue kind: mean goodputs and loss rates, and IIAD/TCP as the ratio of the mean goodputs
    (a NewReno flow can be starved to 0 in a drop-tail run, so per-run ratios can be infinite)."""
    m = fig20_table(sweep).drop(columns="run_id").groupby("queue").mean()
    return m.assign(iiad_over_tcp=m["iiad_bps"] / m["tcp_bps"])


def draw_fig20(sweep: Any, out_dir: Path) -> list[Path]:
    plt = pyplot()

    import ccsim  # lazy: the window time series comes from one run (the sweep keeps summaries only)
    from ccsim.scenario import Scenario  # lazy: as above

    fig20_means(sweep).to_csv(out_dir / "fig20_summary.csv", float_format="%.4g")
    doc = dict(sweep.plan.base)
    doc["topology"] = dict(doc["topology"], queue=droptail_queue(3e6, 50))
    result = ccsim.run(Scenario.from_dict(doc), seed=SEED)
    f = result.flows
    names = result.summary.set_index("flow")["name"]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
    for flow_id, g in f.groupby("flow"):
        ax1.plot(g["time_s"], g["cwnd_pkts"], lw=0.8, label=str(names.get(flow_id, flow_id)))
    b = result.links[result.links["link"] == "bottleneck"]
    ax2.plot(b["time_s"], b["queue_pkts"], lw=0.8, color="k")
    ax1.set_ylabel("cwnd (packets)")
    ax2.set_ylabel("bottleneck queue (packets)")
    ax2.set_xlabel("time (s)")
    ax1.set_title("NewReno and IIAD, drop-tail b x RTT, b = 3 Mbit/s, RTT 50 ms (Fig. 20)", fontsize=10)
    ax1.legend(fontsize=8)
    path = save_figure(fig, out_dir, "fig20_window_queue.png", dpi=90)
    return [path, out_dir / "fig20_summary.csv"]


def fig20_claim(sweep: Any) -> str:
    m = fig20_means(sweep)
    dt = m.loc["drop-tail"]
    ok = dt["iiad_over_tcp"] > 1.2 and dt["loss_tcp"] > dt["loss_iiad"]
    others = "".join(f"; {q}: IIAD/TCP {m.loc[q, 'iiad_over_tcp']:.2f}" for q in m.index if q != "drop-tail")
    return (f"drop-tail: IIAD/TCP {dt['iiad_over_tcp']:.2f}, loss IIAD {dt['loss_iiad'] * 100:.2f} % vs TCP {dt['loss_tcp'] * 100:.2f} %{others} "
            f"| tolerance: IIAD/TCP > 1.2 and TCP's loss rate above IIAD's with drop-tail | {'HOLDS' if ok else 'FAILS'}")


FIG5 = register(Experiment(
    name="binomial_fig5",
    paper_key="binomial",
    figure="Fig. 5",
    title="TCP vs binomial (k, l) for k + l = 0.5, 1, 1.5 (Bansal & Balakrishnan 2001, Fig. 5)",
    source=SOURCE + ", Section 3.1, Fig. 5",
    description="One NewReno and one binomial flow (k in 0-1.5 in steps of 0.25, l = s - k for s = 0.5, 1, 1.5; alpha 1, beta 0.6) on 3 Mbit/s, "
                "RTT 50 ms, RED (Q = b x RTT); throughput ratio TCP/binomial over 10-20 s, 10 runs per point.",
    build_plan=build_fig5,
    draw_figures=draw_fig5,
    claims=(
        text_claim("The k + l rule: TCP/binomial closest to 1 for k + l = 1; binomial gains below, loses above",
                   "closest to 1 for k + l = 1; binomial much higher throughput at 0.5, TCP at 1.5",
                   fig5_claim, "Section 3.1, Fig. 5", tolerance=FIG5_RULE, id="N1",
                   reason="Fig. 5 caption: the k + l = 1 algorithms 'are the ones for which this ratio is closest to unity', "
                          "k + l = 0.5 'much higher throughput', 1.5 much lower; a curve against k, so judged at each k (0-1.5), "
                          "mean of ten runs over 10-20 s"),
        text_claim("The k + l = 0.5 curve for k <= 1 and for k > 1 (l < 0)", "binomial gains (ratio below 1)", fig5_above_one_claim,
                   "Section 3.1, Fig. 5", tolerance="none (sensitivity: where in k)", id="S5", kind="sensitivity",
                   reason="shows the part of the k range where N1's rule fails; not judged apart from N1"),
        text_claim("k > 1 measured late (80-100 s of 100 s runs)", "not stated", fig5_late_claim, "Section 3.1, Fig. 5",
                   tolerance="none (sensitivity: measurement window)", id="S6", kind="sensitivity",
                   reason="whether the k > 1 failures are the slow increase's start-up inside the paper's 10-20 s window"),
    ),
))

FIG20 = register(Experiment(
    name="binomial_fig20",
    paper_key="binomial",
    figure="Fig. 20",
    title="IIAD vs TCP through a drop-tail gateway (Bansal & Balakrishnan 2001, Fig. 20)",
    source=SOURCE + ", Section 4, Fig. 20",
    description="One NewReno and one IIAD flow on 3 Mbit/s, RTT 50 ms, drop-tail of b x RTT (19 packets) against RED, "
                "each with send jitter 0 (ns-2), 125 us and 2.7 ms (one packet time); 100 s, measured over 20-100 s, 10 runs; window and queue time "
                "series of one drop-tail run.",
    build_plan=build_fig20,
    draw_figures=draw_fig20,
    claims=(text_claim("Drop-tail: IIAD takes more than its share, TCP sees the higher drop rate", "IIAD grabs more; unequal drop rates",
                  fig20_claim, "Section 4, Fig. 20", tolerance="IIAD/TCP > 1.2 and TCP's loss rate above IIAD's with drop-tail",
                  id="N6", reason="'IIAD starts grabbing more and more bandwidth' and 'drop rates observed by the two flows ... are "
                                  "not equal': ratio of mean goodputs (20-100 s, ten runs, ns-2's jitter 0) above 1.2 and "
                                  "NewReno's loss rate the higher"),),
))
