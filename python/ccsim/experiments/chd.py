"""Hayes & Armitage, "Improved coexistence and loss tolerance for delay based TCP congestion control"
(IEEE LCN 2010; [Hayes10] in docs/bibliography.md), Figs 5-9 (Fig. 4 is ``chd_loss_sweep``).

The testbed of Section V: FreeBSD 9 hosts (profile ``freebsd9``), 10 Mbit/s bottleneck, 40 ms base
RTT (20 ms each way), 84-packet drop-tail queue, Bernoulli loss on the data path only; "each
experiment is repeated 10 times" (Section V), so 10 repetitions here (Fig. 8: one run, as shown).

* ``chd_fig5`` / ``chd_fig6`` (Section V-B): three flows of one algorithm, 60 s each, starting at 0,
  20 and 40 s; no random loss (Fig. 5) or 1 % (Fig. 6); 4 s goodput averages. Paper: all algorithms
  share fairly among themselves; at 1 % NewReno and HD cannot use the capacity, CHD uses more and
  shares evenly. Fairness is judged while all three flows share the link (42-60 s), utilisation over
  the paper's whole experiment (0-100 s).
* ``chd_fig7`` / ``chd_fig9`` (Section V-C): "four flows transmitting for 80 s each, and starting up
  at 20 s intervals": delay-based (HD or CHD), NewReno, NewReno, delay-based, starting at 0, 20, 40
  and 60 s; no loss (Fig. 7) or 1 % (Fig. 9); 20 s averages. Shares are measured over 20-120 s,
  every second of which has a NewReno flow competing with a delay-based one, each flow's goodput
  over the part of that window it is on. Paper: HD does not compete well with NewReno; CHD gains a
  fairer share, "more than 50 % improvement" over HD (abstract, conclusions); at 1 % HD and NewReno
  share fairly, CHD uses capacity NewReno cannot, not at NewReno's expense.
* ``chd_fig8``: one run of the Fig. 7 experiment at 1 s averages (the dynamics).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ccsim.experiments.helpers import pyplot, save_figure
from ccsim.experiments.registry import Claim, Experiment, Verdict, register
from ccsim.experiments.traces import point_runs
from ccsim.sweep import SweepPlan

SOURCE = ("D. A. Hayes, G. Armitage, \"Improved coexistence and loss tolerance for delay based TCP congestion "
          "control\", IEEE LCN 2010")
SEED = 2010
CAPACITY_BPS = 10e6
REPETITIONS = 10  # Section V: "Each experiment is repeated 10 times"
QUICK_REPETITIONS = 2
ALGO_PATHS = ["flows[0].algorithm", "flows[3].algorithm"]


def _doc(loss: float, flows: list[dict[str, Any]], duration_s: int, measure: tuple[float, float]) -> dict[str, Any]:
    return {
        "run": {"duration": f"{duration_s}s", "sample_interval": "1s", "seed": SEED, "measure": [f"{measure[0]:g}s", f"{measure[1]:g}s"]},
        "topology": {"kind": "dumbbell", "bottleneck_rate": "10Mbit", "bottleneck_delay": "20ms", "queue": "84pkt", "loss": loss},
        "tcp": {"profile": "freebsd9"},
        "flows": flows,
    }


def _flow(name: str, algorithm: str, start: int, stop: int) -> dict[str, Any]:
    return {"name": name, "algorithm": algorithm, "count": 1, "start": f"{start}s", "stop": f"{stop}s"}


def _seconds(text: str) -> float:
    return float(str(text).rstrip("s"))


def _window(sweep: Any) -> tuple[float, float]:
    lo, hi = sweep.plan.base["run"]["measure"]
    return _seconds(lo), _seconds(hi)


# --- homogeneous sharing, Figs 5 and 6 ------------------------------------------------------------

HOMO_ALGOS = ["newreno", "hd", "chd"]
Q_TH_MS = 30.0  # HD's and CHD's q_th (Section V): the paper's "less than 70 ms (40 ms + q_th)"
BASE_RTT_MS = 40.0


def homogeneous_plan(loss: float, name: str):
    def build(quick: bool = False) -> SweepPlan:
        scale = 0.5 if quick else 1.0  # quick: 30 s flows starting 10 s apart
        step, length = int(20 * scale), int(60 * scale)
        flows = [_flow(f"f{i}", "newreno", i * step, i * step + length) for i in range(3)]
        points = [{f"flows[{i}].algorithm": a for i in range(3)} for a in HOMO_ALGOS]
        # the summary window: all three running, from 2 s after the last start (its slow start is over)
        window = (2 * step + 2, length)
        return SweepPlan(name=name, base=_doc(loss, flows, 2 * step + length, window), explicit_points=points,
                         repetitions=QUICK_REPETITIONS if quick else REPETITIONS, seed=SEED)

    return build


def _binned_runs(sweep: Any, bin_s: float) -> pd.DataFrame:
    """Goodput per flow in ``bin_s`` bins of repetition 0 of every point (re-run for the time series),
    with the point's delay-based algorithm."""
    frames = []
    for overrides, result in point_runs(sweep).values():
        f = result.flows
        f = f.assign(bin=(np.floor((f["time_s"] - 1e-9) / bin_s) * bin_s + bin_s / 2))
        g = f.groupby(["flow", "bin"], as_index=False)["goodput_bps"].mean()
        frames.append(g.assign(algorithm=overrides["flows[0].algorithm"]))
    return pd.concat(frames, ignore_index=True)


def homogeneous_stats(sweep: Any) -> pd.DataFrame:
    """Per run: algorithm; Jain index and link utilisation in the summary window (all three flows
    active); utilisation over the whole experiment (every flow's delivered bytes over the run's
    duration, the paper's 0-100 s); the medians over the flows of their 95th- and 50th-percentile RTT
    in the window."""
    r = sweep.runs
    duration_s = _seconds(sweep.plan.base["run"]["duration"])
    f = sweep.flows
    whole = f.groupby("run_id")["bytes_delivered"].sum() * 8 / duration_s / CAPACITY_BPS
    rtt = f.groupby("run_id")[["rtt_p95_ms", "rtt_p50_ms"]].median().reindex(r["run_id"])
    return pd.DataFrame({"algorithm": r["flows[0].algorithm"].to_numpy(), "jain": r["jain_index"].to_numpy(),
                         "util_window": (r["total_goodput_bps"] / CAPACITY_BPS).to_numpy(),
                         "util": whole.reindex(r["run_id"]).to_numpy(), "rtt_p95_ms": rtt["rtt_p95_ms"].to_numpy(),
                         "rtt_p50_ms": rtt["rtt_p50_ms"].to_numpy()})


def homogeneous_figures(title: str, bin_s: float = 4.0):
    def draw(sweep: Any, out_dir: Path) -> list[Path]:
        plt = pyplot()

        b = _binned_runs(sweep, bin_s)
        algos = [a for a in HOMO_ALGOS if a in set(b["algorithm"])]
        fig, axes = plt.subplots(1, len(algos), figsize=(9, 3), dpi=100, sharey=True, squeeze=False)
        for ax, algo in zip(axes[0], algos):
            for flow, rows in b[b["algorithm"] == algo].groupby("flow"):
                rows = rows[rows["goodput_bps"] > 0]
                ax.plot(rows["bin"], rows["goodput_bps"] / 1e6, marker=".", lw=1, label=f"flow {flow + 1}")
            ax.set_title(f"{algo} (repetition 0)", fontsize=9)
            ax.set_xlabel("time (s)")
        axes[0][0].set_ylabel(f"goodput, {bin_s:g} s averages (Mbit/s)")
        axes[0][0].legend(fontsize=7)
        fig.suptitle(title, fontsize=10)
        return [save_figure(fig, out_dir, "sharing.png")]

    return draw


def _of(stats: pd.DataFrame, algorithm: str) -> pd.DataFrame:
    r = stats[stats["algorithm"] == algorithm]
    if r.empty:
        raise LookupError(f"no {algorithm} runs")
    return r


def homo_ours(algorithm: str):
    def ours(sweep: Any) -> str:
        r = _of(homogeneous_stats(sweep), algorithm)
        return f"Jain {r['jain'].median():.3f} (median of {len(r)})"

    return ours


def homo_fair_verdict(algorithm: str):
    def verdict(sweep: Any) -> Verdict:
        j = float(_of(homogeneous_stats(sweep), algorithm)["jain"].median())
        return Verdict(j >= 0.9, f"median Jain {j:.3f} (rule >= 0.9)")

    return verdict


def _utilisations(sweep: Any, column: str) -> pd.Series:
    return homogeneous_stats(sweep).groupby("algorithm")[column].median()


def homo_util_ours(column: str):
    def ours(sweep: Any) -> str:
        u = _utilisations(sweep, column)
        return "; ".join(f"{a} {u[a] * 100:.0f} %" for a in HOMO_ALGOS if a in u)

    return ours


def homo_loss_verdict(sweep: Any) -> Verdict:
    s = _utilisations(sweep, "util")
    gap = min(s["chd"] - s["newreno"], s["chd"] - s["hd"]) * 100
    return Verdict(gap >= 10, f"CHD {gap:+.0f} points above the higher of NewReno and HD (rule >= +10)")


def homo_rtt_ours(column: str = "rtt_p95_ms", label: str = "95th"):
    def ours(sweep: Any) -> str:
        s = homogeneous_stats(sweep).groupby("algorithm")[column].median()
        return "; ".join(f"{a} {s[a]:.0f} ms" for a in HOMO_ALGOS if a in s) + f" ({label}-percentile RTT, median over flows and runs)"

    return ours


def homo_rtt_verdict(sweep: Any) -> Verdict:
    s = homogeneous_stats(sweep).groupby("algorithm")["rtt_p95_ms"].median()
    worst = max(float(s["hd"]), float(s["chd"]))
    bound = BASE_RTT_MS + Q_TH_MS
    return Verdict(worst < bound, f"HD and CHD at most {worst:.0f} ms (rule < {bound:.0f} ms)")


_FAIR_REASON = ("Section V-B: \"all CC algorithms share quite fairly among themselves\"; judged by Jain's index while all "
                "three flows share the link (from 2 s after the third starts to the first's end), >= 0.9 for 'quite fairly'")


def _homo_claims(loss: bool) -> tuple[Claim, ...]:
    fig = "F6" if loss else "F5"
    claims = [
        Claim(f"{a}: sharing among three {a} flows while all three are active", "fair" if not loss or a == "chd" else "fair (and low use)",
              homo_ours(a), "Fig. 6" if loss else "Fig. 5", tolerance="median Jain index >= 0.9", verdict=homo_fair_verdict(a),
              id=f"{fig}{'abc'[i]}", reason=_FAIR_REASON)
        for i, a in enumerate(HOMO_ALGOS)
    ]
    if loss:
        claims.append(Claim(
            "utilisation at 1 % loss over the whole experiment (0-100 s): CHD above NewReno and HD",
            "NewReno and HD \"unable to utilise the available capacity\", CHD uses more", homo_util_ours("util"),
            "Section V-B, Fig. 6", tolerance="median utilisation of CHD at least 10 points above both", verdict=homo_loss_verdict,
            id="F6d", reason="Section V-B describes Fig. 6, the whole 100 s experiment, so utilisation is all delivered bytes over "
                             "0-100 s; 'unable to utilise' against 'more' read as a gap of at least 10 points of the link"))
        claims.append(Claim(
            "utilisation at 1 % loss while all three flows are active (42-60 s)", "(the window used before issue 28)",
            homo_util_ours("util_window"), "Fig. 6", id="F6s", kind="sensitivity",
            reason="shows how the window moves F6d: with three flows on, three NewReno flows' loss-limited rates add up to most of the link"))
    else:
        claims.append(Claim(
            "RTT of HD and CHD flows against NewReno's", "NewReno's feedback loop \"up to 140 ms, compared with less than 70 ms "
            "(40 ms + q_th)\" for HD and CHD", homo_rtt_ours(), "Section V-B, Fig. 5",
            tolerance="median (over flows and runs) of the flows' 95th-percentile RTT in 42-60 s below 70 ms for HD and for CHD",
            verdict=homo_rtt_verdict, id="F5d",
            reason="Section V-B bounds the delay-based flows' RTT by 40 ms + q_th = 70 ms; the 95th percentile tests 'less than' "
                   "without letting single samples decide"))
        claims.append(Claim(
            "median RTT of the flows while all three are active (42-60 s)", "(F5d with the median instead of the 95th percentile)",
            homo_rtt_ours("rtt_p50_ms", "50th"), "Section V-B", id="F5s", kind="sensitivity",
            reason="shows whether F5d's bound is missed by the typical RTT or only by its upper tail"))
    return tuple(claims)


for _name, _loss, _fig in (("chd_fig5", 0.0, "Fig. 5"), ("chd_fig6", 0.01, "Fig. 6")):
    register(Experiment(
        name=_name,
        title=f"CHD: homogeneous sharing of three flows, {'no random loss' if not _loss else '1 % random loss'} (Hayes & Armitage 2010, {_fig})",
        source=SOURCE + f"; Section V-B, {_fig}",
        description="Three flows of one algorithm (NewReno, HD or CHD), 60 s each, starting at 0, 20 and 40 s, on the "
                    f"testbed path (10 Mbit/s, 40 ms, 84 packets), random loss {_loss * 100:g} %; freebsd9 profile; "
                    f"{REPETITIONS} repetitions (Section V). Fairness (Jain's index) and RTT over 42-60 s, when all three "
                    "are active; utilisation over the whole experiment (0-100 s). --quick: 30 s flows 10 s apart, "
                    f"{QUICK_REPETITIONS} repetitions.",
        build_plan=homogeneous_plan(_loss, _name),
        draw_figures=homogeneous_figures(f"CHD {_fig}: three flows, loss {_loss * 100:g} %, 4 s averages"),
        paper_key="chd",
        figure=_fig,
        claims=_homo_claims(_loss > 0),
    ))


# --- coexistence, Figs 7-9 ----------------------------------------------------------------------

DELAY_ALGOS = ["hd", "chd"]
ROLES = ["hd", "newreno", "newreno", "hd"]  # the paper's order; the delay-based two are set per point
DELAY_FLOWS = (0, 3)
RENO_FLOWS = (1, 2)


def coexistence_plan(loss: float, name: str, repetitions: int):
    def build(quick: bool = False) -> SweepPlan:
        scale = 0.5 if quick else 1.0  # quick: 40 s flows 10 s apart
        step, length = int(20 * scale), int(80 * scale)  # Section V-C: 80 s each, at 20 s intervals
        flows = [_flow(f"{'delay' if r != 'newreno' else 'newreno'}{i}", r, i * step, i * step + length) for i, r in enumerate(ROLES)]
        points = [{ALGO_PATHS[0]: a, ALGO_PATHS[1]: a} for a in DELAY_ALGOS]
        # from the first NewReno start to the last NewReno stop (20-120 s): every second of it has a
        # NewReno flow competing with a delay-based one
        window = (step, 2 * step + length)
        return SweepPlan(name=name, base=_doc(loss, flows, 3 * step + length, window), explicit_points=points,
                         repetitions=(1 if quick else repetitions), seed=SEED)

    return build


def coexistence_shares(sweep: Any) -> pd.DataFrame:
    """Per run: the delay-based algorithm; the mean over the delay-based flows and over the NewReno
    flows of each flow's goodput over the part of the measured window it is on (``goodput_active_bps``:
    the first delay flow stops, the second starts, inside the window); the link's goodput over the
    whole window (``total_bps``)."""
    rows = []
    for run_id, r in sweep.flows.groupby("run_id"):
        on = dict(zip(r["flow"], r["goodput_active_bps"]))
        rows.append({"algorithm": str(r["flows[0].algorithm"].iloc[0]),
                     "delay_bps": float(np.mean([on.get(i, 0.0) for i in DELAY_FLOWS])),
                     "reno_bps": float(np.mean([on.get(i, 0.0) for i in RENO_FLOWS])),
                     "total_bps": float(r["goodput_bps"].sum())})
    return pd.DataFrame(rows)


def shares_over(sweep: Any, lo_s: float, hi_s: float) -> pd.DataFrame:
    """As :func:`coexistence_shares` (without the link total) over another window, ``lo_s``-``hi_s``,
    from the 1 s goodput series of every repetition (re-run: the sweep keeps one summary window)."""
    base = sweep.plan.base
    on = [(max(lo_s, _seconds(f["start"])), min(hi_s, _seconds(f["stop"]))) for f in base["flows"]]
    rows = []
    for rep in range(sweep.plan.repetitions):
        for overrides, result in point_runs(sweep, rep).values():
            f = result.flows
            rate = {i: float(f[(f["flow"] == i) & (f["time_s"] > a) & (f["time_s"] <= b)]["goodput_bps"].mean()) for i, (a, b) in enumerate(on)}
            rows.append({"algorithm": overrides[ALGO_PATHS[0]], "delay_bps": float(np.mean([rate[i] for i in DELAY_FLOWS])),
                         "reno_bps": float(np.mean([rate[i] for i in RENO_FLOWS]))})
    return pd.DataFrame(rows)


def both_reno_window(sweep: Any) -> tuple[float, float]:
    """The time both NewReno flows run (40-100 s at full scale)."""
    flows = sweep.plan.base["flows"]
    return _seconds(flows[RENO_FLOWS[1]]["start"]), _seconds(flows[RENO_FLOWS[0]]["stop"])


def coex_improvement_both_reno(sweep: Any) -> str:
    lo, hi = both_reno_window(sweep)
    s = shares_over(sweep, lo, hi).groupby("algorithm")[["delay_bps", "reno_bps"]].median()
    gain = (s.loc["chd", "delay_bps"] / s.loc["hd", "delay_bps"] - 1) * 100
    return (f"CHD {gain:+.0f} % over HD over {lo:g}-{hi:g} s (delay flows {s.loc['chd', 'delay_bps'] / 1e6:.2f} vs "
            f"{s.loc['hd', 'delay_bps'] / 1e6:.2f} Mbit/s, NewReno flows {s.loc['chd', 'reno_bps'] / 1e6:.2f} vs "
            f"{s.loc['hd', 'reno_bps'] / 1e6:.2f})")


def coexistence_figures(title: str, bin_s: float):
    def draw(sweep: Any, out_dir: Path) -> list[Path]:
        plt = pyplot()

        mean = _binned_runs(sweep, bin_s)
        fig, axes = plt.subplots(1, 2, figsize=(9, 3), dpi=100, sharey=True)
        for ax, algo in zip(axes, DELAY_ALGOS):
            for flow, rows in mean[mean["algorithm"] == algo].groupby("flow"):
                rows = rows[rows["goodput_bps"] > 0]
                label = f"{algo if flow in DELAY_FLOWS else 'newreno'} (flow {flow + 1})"
                ax.plot(rows["bin"], rows["goodput_bps"] / 1e6, marker="o" if flow in DELAY_FLOWS else "x", lw=1, label=label)
            ax.set_title(f"{algo} with NewReno (repetition 0)", fontsize=9)
            ax.set_xlabel("time (s)")
        axes[0].set_ylabel(f"goodput, {bin_s:g} s averages (Mbit/s)")
        axes[0].legend(fontsize=7)
        fig.suptitle(title, fontsize=10)
        return [save_figure(fig, out_dir, "coexistence.png")]

    return draw


def _share_ratio(sweep: Any, algorithm: str) -> float:
    """Median over runs of the delay-based flows' goodput over the NewReno flows' (each while on)."""
    r = _of(coexistence_shares(sweep), algorithm)
    return float((r["delay_bps"] / r["reno_bps"]).median())


def coex_ours(sweep: Any) -> str:
    s = coexistence_shares(sweep).groupby("algorithm")[["delay_bps", "reno_bps", "total_bps"]].median()
    return "; ".join(f"{a}: delay flows {r.delay_bps / 1e6:.2f}, NewReno flows {r.reno_bps / 1e6:.2f}, link {r.total_bps / 1e6:.2f} Mbit/s"
                     for a, r in s.iterrows())


def coex_improvement(sweep: Any) -> float:
    s = coexistence_shares(sweep).groupby("algorithm")["delay_bps"].median()
    return float(s["chd"] / s["hd"] - 1) * 100


def coex_improvement_ours(sweep: Any) -> str:
    return f"CHD {coex_improvement(sweep):+.0f} % over HD (median per-flow goodput of the delay-based flows)"


def coex_improvement_verdict(sweep: Any) -> Verdict:
    v = coex_improvement(sweep)
    return Verdict(v > 50, f"{v:+.0f} % (rule > +50 %; partly if > 0)", partly=v > 0)


def coex_share_gain(sweep: Any) -> float:
    return (_share_ratio(sweep, "chd") / _share_ratio(sweep, "hd") - 1) * 100


def ratio_ours(algorithm: str, against: str = "NewReno"):
    def ours(sweep: Any) -> str:
        n = len(_of(coexistence_shares(sweep), algorithm))
        return f"{algorithm.upper()} flows get {_share_ratio(sweep, algorithm):.2f} x the {against} flows' goodput (median of {n})"

    return ours


def coex_hd_verdict(sweep: Any) -> Verdict:
    ratio = _share_ratio(sweep, "hd")
    return Verdict(ratio < 0.5, f"HD at {ratio:.2f} x NewReno (rule < 0.5)")


def coex_chd_below_reno_verdict(sweep: Any) -> Verdict:
    ratio = _share_ratio(sweep, "chd")
    return Verdict(ratio < 1.0, f"CHD at {ratio:.2f} x NewReno (rule < 1)")


def coex_fair_verdict(sweep: Any) -> Verdict:
    ratio = _share_ratio(sweep, "hd")
    return Verdict(0.8 <= ratio <= 1.25, f"HD at {ratio:.2f} x NewReno (rule 0.8-1.25)")


def coex_chd_above_reno_verdict(sweep: Any) -> Verdict:
    ratio = _share_ratio(sweep, "chd")
    return Verdict(ratio > 1.0, f"CHD at {ratio:.2f} x NewReno (rule > 1)")


def coex_loss_ours(sweep: Any) -> str:
    s = coexistence_shares(sweep).groupby("algorithm")[["total_bps", "reno_bps"]].median()
    return "; ".join(f"with {a}: link {r.total_bps / 1e6:.2f} Mbit/s, NewReno flows {r.reno_bps / 1e6:.2f}" for a, r in s.iterrows())


def coex_loss_verdict(sweep: Any) -> Verdict:
    s = coexistence_shares(sweep).groupby("algorithm")[["reno_bps", "total_bps"]].median()
    more = s.loc["chd", "total_bps"] / s.loc["hd", "total_bps"]
    reno = s.loc["chd", "reno_bps"] / s.loc["hd", "reno_bps"]
    return Verdict(more >= 1.1 and reno >= 0.8, f"link {more:.2f} x, NewReno flows {reno:.2f} x their goodput with HD "
                                                f"(rule >= 1.1 x and >= 0.8 x)")


def first_contest(sweep: Any) -> dict[str, tuple[float, float]]:
    """{algorithm: (NewReno's, the delay flow's goodput)} in the one run, averaged over the first
    NewReno flow's first 20 s (one step: it competes with the first delay flow alone)."""
    base = sweep.plan.base
    lo, hi = _seconds(base["flows"][1]["start"]), _seconds(base["flows"][2]["start"])
    b = _binned_runs(sweep, 1.0)
    b = b[(b["bin"] > lo) & (b["bin"] < hi)]
    return {a: (float(g[g["flow"] == 1]["goodput_bps"].mean()), float(g[g["flow"] == 0]["goodput_bps"].mean()))
            for a, g in b.groupby("algorithm")}


def first_contest_ours(sweep: Any) -> str:
    return "; ".join(f"with {a}: NewReno {r / 1e6:.2f}, {a} {d / 1e6:.2f} Mbit/s" for a, (r, d) in sorted(first_contest(sweep).items()))


def first_contest_verdict(sweep: Any) -> Verdict:
    c = first_contest(sweep)
    most = all(r > CAPACITY_BPS / 2 for r, _ in c.values())
    reclaims = c["chd"][1] > c["hd"][1]
    parts = f"NewReno above half the link with both: {'yes' if most else 'no'}; CHD above HD: {'yes' if reclaims else 'no'}"
    return Verdict(most and reclaims, parts + " (rule: both; partly: one)", partly=most or reclaims)


_WINDOW_REASON = ("the paper does not say over which time its coexistence results are taken; 20-120 s is every second a "
                  "NewReno flow competes with a delay-based one (Section V-C's four 80 s flows), each flow's goodput over "
                  "the part of it the flow is on")
_COEX_DESC = ("Four flows on the testbed path (10 Mbit/s, 40 ms, 84 packets): delay-based (HD or CHD), NewReno, NewReno, "
              "delay-based, starting at 0, 20, 40 and 60 s, 80 s each (Section V-C); freebsd9 profile; random loss {loss}. "
              "Shares are measured over 20-120 s, while a NewReno flow competes with a delay-based one, each flow's goodput "
              "over the part of that window it is on. {reps} --quick: 40 s flows 10 s apart, 1 repetition.")

register(Experiment(
    name="chd_fig7",
    title="CHD vs HD coexisting with NewReno, no random loss (Hayes & Armitage 2010, Fig. 7)",
    source=SOURCE + "; Section V-C, Fig. 7; abstract and conclusions",
    description=_COEX_DESC.format(loss="0 %", reps=f"{REPETITIONS} repetitions (Section V), 20 s averages."),
    build_plan=coexistence_plan(0.0, "chd_fig7", REPETITIONS),
    draw_figures=coexistence_figures("CHD Fig. 7: delay / NewReno / NewReno / delay, no loss, 20 s averages", 20.0),
    paper_key="chd",
    figure="Fig. 7",
    claims=(
        Claim("goodput of the delay-based and NewReno flows, 20-120 s", "HD does not compete well; CHD fairer",
              coex_ours, "Section V-C, Fig. 7", id="F7a", reason="the values the judged rows below compare"),
        Claim("HD's goodput relative to NewReno's", "HD \"does not compete very well with NewReno\"", ratio_ours("hd"),
              "Fig. 7(a)", tolerance="median HD / NewReno per-flow goodput < 0.5", verdict=coex_hd_verdict, id="F7b",
              reason=_WINDOW_REASON + "; 'not very well' read as less than half of NewReno's goodput"),
        Claim("CHD's improvement over HD in sharing with NewReno", "more than 50 %", coex_improvement_ours,
              "Abstract; Section VII", tolerance="> +50 %; partly: above 0 (CHD's flows get more than HD's)",
              verdict=coex_improvement_verdict, id="F7c",
              reason=_WINDOW_REASON + "; the conclusions' 'improvements of over 50 % over those achieved by HD' read as "
                                      "the delay flows' goodput with CHD over that with HD"),
        Claim("CHD's goodput relative to NewReno's", "\"NewReno still has a higher share of the available capacity than CHD\"",
              ratio_ours("chd"), "Section V-C, Fig. 7(b)", tolerance="median CHD / NewReno per-flow goodput < 1",
              verdict=coex_chd_below_reno_verdict, id="F7d", reason=_WINDOW_REASON),
        Claim("CHD's improvement over HD in the share ratio (delay / NewReno goodput)", "(another reading of F7c's 50 %)",
              lambda s: f"{coex_share_gain(s):+.0f} % (ratio with CHD over ratio with HD)", "Abstract", id="F7s",
              kind="sensitivity", reason="'ability to share capacity with NewReno' read as the delay/NewReno ratio instead of goodput"),
        Claim("CHD's improvement over HD while both NewReno flows run", "(F7c over another window)", coex_improvement_both_reno,
              "Abstract", id="F7w", kind="sensitivity",
              reason="F7c's metric over 40-100 s, when two NewReno flows compete with one or two delay-based flows: how much the "
                     "unnamed window moves the result"),
    ),
))

register(Experiment(
    name="chd_fig8",
    title="CHD vs HD coexisting with NewReno, one run at 1 s averages (Hayes & Armitage 2010, Fig. 8)",
    source=SOURCE + "; Section V-C, Fig. 8",
    description=_COEX_DESC.format(loss="0 %", reps="One run (the paper shows one), 1 s averages."),
    build_plan=coexistence_plan(0.0, "chd_fig8", 1),
    draw_figures=coexistence_figures("CHD Fig. 8: one run, no loss, 1 s averages", 1.0),
    paper_key="chd",
    figure="Fig. 8",
    claims=(
        Claim("goodput of the delay-based and NewReno flows, 20-120 s (one run)", "(Fig. 8 is one run)", coex_ours, "Fig. 8",
              id="F8a", reason="the one run's shares, for comparison with Fig. 7's medians"),
        Claim("the first NewReno flow against the first delay flow, 20-40 s (one run)",
              "NewReno \"quickly captures most of the available capacity\"; HD reclaims little, CHD some", first_contest_ours,
              "Section V-C, Fig. 8", tolerance="NewReno above 5 Mbit/s with both, and CHD's flow above HD's; partly: one of the two",
              verdict=first_contest_verdict, id="F8b",
              reason="Section V-C describes the first NewReno flow's start at 20 s against the first delay flow, alone until "
                     "40 s; 'most of the capacity' read as more than half of the link over those 20 s"),
    ),
))

register(Experiment(
    name="chd_fig9",
    title="CHD vs HD coexisting with NewReno at 1 % random loss (Hayes & Armitage 2010, Fig. 9)",
    source=SOURCE + "; Section V-C, Fig. 9",
    description=_COEX_DESC.format(loss="1 %", reps=f"{REPETITIONS} repetitions (Section V), 20 s averages."),
    build_plan=coexistence_plan(0.01, "chd_fig9", REPETITIONS),
    draw_figures=coexistence_figures("CHD Fig. 9: delay / NewReno / NewReno / delay, 1 % loss, 20 s averages", 20.0),
    paper_key="chd",
    figure="Fig. 9",
    claims=(
        Claim("goodput of the delay-based and NewReno flows, 20-120 s", "HD and NewReno share fairly, both low",
              coex_ours, "Fig. 9(a)", id="F9a", reason="the values the judged rows below compare"),
        Claim("HD's goodput relative to NewReno's at 1 % loss", "HD and NewReno \"share fairly\"", ratio_ours("hd"),
              "Section V-C, Fig. 9(a)", tolerance="median HD / NewReno per-flow goodput within 0.8-1.25",
              verdict=coex_fair_verdict, id="F9b", reason=_WINDOW_REASON + "; 'share fairly' read as within 20 % of parity"),
        Claim("CHD's goodput relative to NewReno's at 1 % loss", "CHD \"captures more of the available capacity than NewReno\"",
              ratio_ours("chd"), "Section V-C, Fig. 9(b)", tolerance="median CHD / NewReno per-flow goodput > 1",
              verdict=coex_chd_above_reno_verdict, id="F9c", reason=_WINDOW_REASON),
        Claim("CHD uses capacity NewReno cannot, not at NewReno's expense", "yes", coex_loss_ours,
              "Section V-C, Fig. 9(b)", tolerance="link goodput with CHD >= 1.1 x with HD, NewReno flows' >= 0.8 x",
              verdict=coex_loss_verdict, id="F9d",
              reason=_WINDOW_REASON + "; 'more capacity' read as 10 % more link goodput, 'not at the expense' as NewReno "
                                      "keeping at least 80 % of its goodput with HD"),
    ),
))
