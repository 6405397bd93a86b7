"""Hayes & Armitage, "Improved coexistence and loss tolerance for delay based TCP congestion control"
(IEEE LCN 2010; [Hayes10] in docs/bibliography.md), Figs 5-9 (Fig. 4 is ``chd_loss_sweep``).

The testbed of Section V: FreeBSD 9 hosts (profile ``freebsd9``), 10 Mbit/s bottleneck, 40 ms base
RTT (20 ms each way), 84-packet drop-tail queue, Bernoulli loss on the data path only.

* ``chd_fig5`` / ``chd_fig6``: three flows of one algorithm, 60 s each, starting at 0, 20 and 40 s;
  no random loss (Fig. 5) or 1 % (Fig. 6); 4 s goodput averages. Paper: all algorithms share fairly
  among themselves; at 1 % NewReno and HD cannot use the capacity, CHD uses more and shares evenly.
* ``chd_fig7`` / ``chd_fig9``: coexistence in a lightly multiplexed path: delay-based (HD or CHD),
  NewReno, NewReno, delay-based, starting at 0, 20, 40 and 60 s, 60 s each; no loss (Fig. 7) or
  1 % (Fig. 9); 20 s averages. Paper: HD does not compete well with NewReno; CHD gains a fairer
  share, "more than 50 % improvement" over HD (abstract, conclusions); at 1 % CHD uses capacity
  NewReno cannot, not at NewReno's expense.
* ``chd_fig8``: one run of the Fig. 7 experiment at 1 s averages (the dynamics).

Repetitions: the paper does not say for Figs 5-9 (Fig. 4 used 10): 5 here, 1 for Fig. 8 (one run).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ccsim.experiments.helpers import pyplot, save_figure
from ccsim.experiments.registry import Claim, Experiment, register
from ccsim.experiments.traces import point_runs
from ccsim.sweep import SweepPlan

SOURCE = ("D. A. Hayes, G. Armitage, \"Improved coexistence and loss tolerance for delay based TCP congestion "
          "control\", IEEE LCN 2010")
SEED = 2010
CAPACITY_BPS = 10e6
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


# --- homogeneous sharing, Figs 5 and 6 ------------------------------------------------------------

HOMO_ALGOS = ["newreno", "hd", "chd"]


def homogeneous_plan(loss: float, name: str):
    def build(quick: bool = False) -> SweepPlan:
        scale = 0.5 if quick else 1.0  # quick: 30 s flows starting 10 s apart
        step, length = int(20 * scale), int(60 * scale)
        flows = [_flow(f"f{i}", "newreno", i * step, i * step + length) for i in range(3)]
        points = [{f"flows[{i}].algorithm": a for i in range(3)} for a in HOMO_ALGOS]
        # measured while all three run, from 2 s after the last start (its slow start is over)
        window = (2 * step + 2, length)
        return SweepPlan(name=name, base=_doc(loss, flows, 2 * step + length, window), explicit_points=points,
                         repetitions=1 if quick else 5, seed=SEED)

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
    """Per run: algorithm, Jain index and utilisation in the measured window (all three flows active)."""
    r = sweep.runs
    return pd.DataFrame({"algorithm": r["flows[0].algorithm"], "jain": r["jain_index"],
                         "util": r["total_goodput_bps"] / CAPACITY_BPS})


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


def homo_ours(algorithm: str):
    def ours(sweep: Any) -> str:
        s = homogeneous_stats(sweep)
        r = s[s["algorithm"] == algorithm]
        if r.empty:
            raise LookupError(f"no {algorithm} runs")
        return f"Jain {r['jain'].median():.3f}, utilisation {r['util'].median() * 100:.0f} % (median of {len(r)})"

    return ours


def homo_fair_verdict(algorithm: str):
    def verdict(sweep: Any) -> str:
        s = homogeneous_stats(sweep)
        j = float(s[s["algorithm"] == algorithm]["jain"].median())
        return "reproduced" if j >= 0.9 else f"differs: Jain {j:.3f}"

    return verdict


def homo_loss_verdict(sweep: Any) -> str:
    s = homogeneous_stats(sweep).groupby("algorithm")["util"].median()
    if s["chd"] > s["newreno"] + 0.1 and s["chd"] > s["hd"] + 0.1:
        return "reproduced"
    return f"differs: utilisation CHD {s['chd'] * 100:.0f} %, HD {s['hd'] * 100:.0f} %, NewReno {s['newreno'] * 100:.0f} %"


def _homo_claims(loss: bool) -> tuple[Claim, ...]:
    claims = [
        Claim(f"{a}: sharing among three {a} flows (all active)", "fair" if not loss or a == "chd" else "fair (and low use)",
              homo_ours(a), "Fig. 6" if loss else "Fig. 5", tolerance="median Jain index >= 0.9", verdict=homo_fair_verdict(a))
        for a in HOMO_ALGOS
    ]
    if loss:
        claims.append(Claim("utilisation at 1 % loss: CHD above NewReno and HD", "NewReno and HD cannot use the capacity, CHD uses more",
                            lambda s: "; ".join(f"{k} {v * 100:.0f} %" for k, v in homogeneous_stats(s).groupby("algorithm")["util"].median().items()),
                            "Section V-B, Fig. 6", tolerance="CHD at least 10 points above both", verdict=homo_loss_verdict))
    return tuple(claims)


for _name, _loss, _fig in (("chd_fig5", 0.0, "Fig. 5"), ("chd_fig6", 0.01, "Fig. 6")):
    register(Experiment(
        name=_name,
        title=f"CHD: homogeneous sharing of three flows, {'no random loss' if not _loss else '1 % random loss'} (Hayes & Armitage 2010, {_fig})",
        source=SOURCE + f"; Section V-B, {_fig}",
        description="Three flows of one algorithm (NewReno, HD or CHD), 60 s each, starting at 0, 20 and 40 s, on the "
                    f"testbed path (10 Mbit/s, 40 ms, 84 packets), random loss {_loss * 100:g} %; freebsd9 profile; "
                    "5 repetitions (not given); fairness and utilisation over 42-60 s, when all three are active. "
                    "--quick: 30 s flows 10 s apart, 2 repetitions.",
        build_plan=homogeneous_plan(_loss, _name),
        draw_figures=homogeneous_figures(f"CHD {_fig}: three flows, loss {_loss * 100:g} %, 4 s averages"),
        paper_key="chd",
        figure=_fig,
        claims=_homo_claims(_loss > 0),
    ))


# --- coexistence, Figs 7-9 ----------------------------------------------------------------------

DELAY_ALGOS = ["hd", "chd"]


def coexistence_plan(loss: float, name: str, repetitions: int):
    def build(quick: bool = False) -> SweepPlan:
        scale = 0.5 if quick else 1.0
        step, length = int(20 * scale), int(60 * scale)
        roles = ["hd", "newreno", "newreno", "hd"]
        flows = [_flow(f"{'delay' if r != 'newreno' else 'newreno'}{i}", r, i * step, i * step + length) for i, r in enumerate(roles)]
        points = [{ALGO_PATHS[0]: a, ALGO_PATHS[1]: a} for a in DELAY_ALGOS]
        window = (2 * step, step + length)  # both NewReno flows running (40-80 s)
        return SweepPlan(name=name, base=_doc(loss, flows, 3 * step + length, window), explicit_points=points,
                         repetitions=(1 if quick else repetitions), seed=SEED)

    return build


def coexistence_shares(sweep: Any) -> pd.DataFrame:
    """Per run: the delay-based algorithm, the mean goodput of its flows and of the NewReno flows in
    the measured window (both NewReno flows running, 40-80 s at full scale; the second delay flow
    starts at 60 s and is averaged over its own part of the window)."""
    base = sweep.plan.base
    lo = float(base["run"]["measure"][0].rstrip("s"))
    hi = float(base["run"]["measure"][1].rstrip("s"))
    f = sweep.flows
    rows = []
    for run_id, r in f.groupby("run_id"):
        by = dict(zip(r["flow"], r["goodput_bps"]))
        start3 = float(base["flows"][3]["start"].rstrip("s"))
        late = by.get(3, 0.0) * (hi - lo) / max(hi - start3, 1e-9)  # its goodput over the time it was on
        delay = [by.get(0, 0.0), late]
        reno = [by.get(1, 0.0), by.get(2, 0.0)]
        rows.append({"algorithm": str(r["flows[0].algorithm"].iloc[0]), "delay_bps": float(np.mean(delay)),
                     "reno_bps": float(np.mean(reno)), "total_bps": float(sum(by.values()))})
    return pd.DataFrame(rows)


def coexistence_figures(title: str, bin_s: float):
    def draw(sweep: Any, out_dir: Path) -> list[Path]:
        plt = pyplot()

        mean = _binned_runs(sweep, bin_s)
        fig, axes = plt.subplots(1, 2, figsize=(9, 3), dpi=100, sharey=True)
        for ax, algo in zip(axes, DELAY_ALGOS):
            for flow, rows in mean[mean["algorithm"] == algo].groupby("flow"):
                rows = rows[rows["goodput_bps"] > 0]
                label = f"{algo if flow in (0, 3) else 'newreno'} (flow {flow + 1})"
                ax.plot(rows["bin"], rows["goodput_bps"] / 1e6, marker="o" if flow in (0, 3) else "x", lw=1, label=label)
            ax.set_title(f"{algo} with NewReno (repetition 0)", fontsize=9)
            ax.set_xlabel("time (s)")
        axes[0].set_ylabel(f"goodput, {bin_s:g} s averages (Mbit/s)")
        axes[0].legend(fontsize=7)
        fig.suptitle(title, fontsize=10)
        return [save_figure(fig, out_dir, "coexistence.png")]

    return draw


def coex_ours(sweep: Any) -> str:
    s = coexistence_shares(sweep).groupby("algorithm")[["delay_bps", "reno_bps"]].median()
    return "; ".join(f"{a}: delay flows {r.delay_bps / 1e6:.2f}, NewReno flows {r.reno_bps / 1e6:.2f} Mbit/s" for a, r in s.iterrows())


def coex_improvement(sweep: Any) -> float:
    s = coexistence_shares(sweep).groupby("algorithm")["delay_bps"].median()
    return float(s["chd"] / s["hd"] - 1) * 100


def coex_improvement_ours(sweep: Any) -> str:
    return f"CHD {coex_improvement(sweep):+.0f} % over HD (median goodput of the delay flows while both NewReno flows run)"


def coex_improvement_verdict(sweep: Any) -> str:
    v = coex_improvement(sweep)
    return "reproduced" if v > 50 else f"differs: {v:+.0f} %"


def coex_hd_ours(sweep: Any) -> str:
    s = coexistence_shares(sweep)
    r = s[s["algorithm"] == "hd"]
    if r.empty:
        raise LookupError("no hd runs")
    return f"HD flows get {float((r['delay_bps'] / r['reno_bps']).median()):.2f} x the NewReno flows' goodput (median of {len(r)})"


def coex_hd_verdict(sweep: Any) -> str:
    s = coexistence_shares(sweep)
    r = s[s["algorithm"] == "hd"]
    ratio = float((r["delay_bps"] / r["reno_bps"]).median())
    return "reproduced" if ratio < 0.5 else f"differs: HD gets {ratio:.2f} of NewReno's goodput"


def coex_loss_verdict(sweep: Any) -> str:
    s = coexistence_shares(sweep).groupby("algorithm")[["delay_bps", "reno_bps", "total_bps"]].median()
    more = s.loc["chd", "total_bps"] > s.loc["hd", "total_bps"] * 1.1
    not_at_expense = s.loc["chd", "reno_bps"] >= 0.8 * s.loc["hd", "reno_bps"]
    if more and not_at_expense:
        return "reproduced"
    return (f"differs: total {s.loc['chd', 'total_bps'] / 1e6:.2f} vs {s.loc['hd', 'total_bps'] / 1e6:.2f} Mbit/s, NewReno with CHD "
            f"{s.loc['chd', 'reno_bps'] / 1e6:.2f} vs with HD {s.loc['hd', 'reno_bps'] / 1e6:.2f}")


_COEX_DESC = ("Four flows on the testbed path (10 Mbit/s, 40 ms, 84 packets): delay-based (HD or CHD), NewReno, NewReno, "
              "delay-based, starting at 0, 20, 40 and 60 s, 60 s each; freebsd9 profile; random loss {loss}. Shares are "
              "measured over 40-80 s (both NewReno flows running). {reps} --quick: 30 s flows 10 s apart, 1 repetition.")

register(Experiment(
    name="chd_fig7",
    title="CHD vs HD coexisting with NewReno, no random loss (Hayes & Armitage 2010, Fig. 7)",
    source=SOURCE + "; Section V-C, Fig. 7; abstract and conclusions",
    description=_COEX_DESC.format(loss="0 %", reps="5 repetitions (not given), 20 s averages."),
    build_plan=coexistence_plan(0.0, "chd_fig7", 5),
    draw_figures=coexistence_figures("CHD Fig. 7: delay / NewReno / NewReno / delay, no loss, 20 s averages", 20.0),
    paper_key="chd",
    figure="Fig. 7",
    claims=(
        Claim("goodput of the delay-based and NewReno flows while both NewReno flows run", "HD does not compete well; CHD fairer",
              coex_ours, "Section V-C, Fig. 7"),
        Claim("HD's goodput relative to NewReno's", "HD does not compete very well", coex_hd_ours,
              "Fig. 7(a)", tolerance="HD below half of NewReno's (median)", verdict=coex_hd_verdict),
        Claim("CHD's improvement over HD in sharing with NewReno", "more than 50 %", coex_improvement_ours,
              "Abstract; Section VII", tolerance="> +50 %", verdict=coex_improvement_verdict),
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
        Claim("goodput of the delay-based and NewReno flows while both NewReno flows run (one run)",
              "NewReno captures most of the capacity when it starts; CHD reclaims some, HD little", coex_ours, "Fig. 8"),
    ),
))

register(Experiment(
    name="chd_fig9",
    title="CHD vs HD coexisting with NewReno at 1 % random loss (Hayes & Armitage 2010, Fig. 9)",
    source=SOURCE + "; Section V-C, Fig. 9",
    description=_COEX_DESC.format(loss="1 %", reps="5 repetitions (not given), 20 s averages."),
    build_plan=coexistence_plan(0.01, "chd_fig9", 5),
    draw_figures=coexistence_figures("CHD Fig. 9: delay / NewReno / NewReno / delay, 1 % loss, 20 s averages", 20.0),
    paper_key="chd",
    figure="Fig. 9",
    claims=(
        Claim("goodput of the delay-based and NewReno flows while both NewReno flows run", "HD and NewReno share fairly, both low",
              coex_ours, "Fig. 9(a)"),
        Claim("CHD uses capacity NewReno cannot, not at NewReno's expense", "yes",
              lambda s: "; ".join(f"{a}: total {r.total_bps / 1e6:.2f} Mbit/s, NewReno flows {r.reno_bps / 1e6:.2f}"
                                  for a, r in coexistence_shares(s).groupby("algorithm")[["total_bps", "reno_bps"]].median().iterrows()),
              "Section V-C, Fig. 9(b)", tolerance="total with CHD >= 1.1 x with HD and NewReno's goodput >= 0.8 x",
              verdict=coex_loss_verdict),
    ),
))
