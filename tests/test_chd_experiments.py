"""The CHD paper's experiments (Hayes & Armitage 2010, Figs 5-9): the set-ups of Section V and the
coexistence metric (issue 28: each flow's goodput over the part of the window it is on)."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from ccsim import experiments
from ccsim.experiments import chd


def _seconds(text: str) -> float:
    return float(str(text).rstrip("s"))


@pytest.mark.parametrize("name", ["chd_fig7", "chd_fig8", "chd_fig9"])
def test_coexistence_is_four_80_s_flows_at_20_s_intervals(name):
    """Section V-C: "four flows transmitting for 80 s each, and starting up at 20 s intervals"."""
    base = experiments.get(name).plan().base
    flows = [(f["algorithm"], _seconds(f["start"]), _seconds(f["stop"])) for f in base["flows"]]
    assert flows == [("hd", 0, 80), ("newreno", 20, 100), ("newreno", 40, 120), ("hd", 60, 140)]
    assert _seconds(base["run"]["duration"]) == 140
    assert [_seconds(t) for t in base["run"]["measure"]] == [20, 120]  # while NewReno competes with a delay flow


@pytest.mark.parametrize("name, repetitions", [("chd_fig5", 10), ("chd_fig6", 10), ("chd_fig7", 10), ("chd_fig8", 1), ("chd_fig9", 10)])
def test_repetitions_are_the_papers(name, repetitions):
    """Section V: "Each experiment is repeated 10 times"; Fig. 8 is one run."""
    assert experiments.get(name).plan().repetitions == repetitions


def _fake_coexistence(rates_bps: dict[int, float]) -> SimpleNamespace:
    """A sweep of one run of the full Fig. 7 plan in which flow i sends ``rates_bps[i]`` whenever it
    is on: the summary columns as the engine computes them (window average, and average while on)."""
    plan = experiments.get("chd_fig7").plan()
    lo, hi = (_seconds(t) for t in plan.base["run"]["measure"])
    rows = []
    for i, f in enumerate(plan.base["flows"]):
        on_s = max(0.0, min(hi, _seconds(f["stop"])) - max(lo, _seconds(f["start"])))
        rows.append({"run_id": "r0", "flows[0].algorithm": "hd", "flow": i, "goodput_bps": rates_bps[i] * on_s / (hi - lo),
                     "goodput_active_bps": rates_bps[i], "active_s": on_s})
    return SimpleNamespace(plan=plan, flows=pd.DataFrame(rows))


def test_coexistence_shares_take_each_flow_over_the_time_it_is_on():
    """The first delay flow stops at 80 s inside the 20-120 s window: its share is its rate while on,
    not its rate diluted over the whole window (the bug of issue 28 halved it)."""
    s = chd.coexistence_shares(_fake_coexistence({0: 2e6, 1: 4e6, 2: 4e6, 3: 2e6})).iloc[0]
    assert s["delay_bps"] == pytest.approx(2e6)
    assert s["reno_bps"] == pytest.approx(4e6)
    # the link's goodput over the window: 60 s of each delay flow, 80 s of each NewReno flow, over 100 s
    assert s["total_bps"] == pytest.approx((2 * 2e6 * 60 + 2 * 4e6 * 80) / 100)


def test_homogeneous_utilisation_is_over_the_whole_experiment():
    """Fig. 6's utilisation claim is judged over 0-100 s (all delivered bytes over the run), the
    fairness claims over the window in which all three flows share the link."""
    plan = experiments.get("chd_fig6").plan()
    assert _seconds(plan.base["run"]["duration"]) == 100
    assert [_seconds(t) for t in plan.base["run"]["measure"]] == [42, 60]
    runs = pd.DataFrame({"run_id": ["a"], "flows[0].algorithm": ["chd"], "jain_index": [0.99], "total_goodput_bps": [9e6]})
    # each flow delivers 5 Mbit/s for its 60 s: 3 x 37.5 MB over 100 s is 90 % of the link
    flows = pd.DataFrame({"run_id": ["a"] * 3, "bytes_delivered": [37.5e6] * 3, "rtt_p95_ms": [50.0, 60.0, 70.0],
                          "rtt_p50_ms": [45.0, 46.0, 80.0]})
    stats = chd.homogeneous_stats(SimpleNamespace(plan=plan, runs=runs, flows=flows)).iloc[0]
    assert stats["util"] == pytest.approx(0.9)
    assert stats["util_window"] == pytest.approx(0.9)
    assert stats["rtt_p95_ms"] == pytest.approx(60.0) and stats["rtt_p50_ms"] == pytest.approx(46.0)


def test_shares_over_another_window_agree_with_the_summary_over_its_own(tmp_path):
    """F7w re-runs the repetitions for a second window; over the summary's own window it must give
    the summary's on-time shares (same runs, same seeds)."""
    pytest.importorskip("ccsim._core")
    from ccsim.sweep import run_sweep

    sweep = run_sweep(experiments.get("chd_fig7").plan(quick=True), tmp_path / "fig7", jobs=1, progress=False)
    lo, hi = (_seconds(t) for t in sweep.plan.base["run"]["measure"])
    summary = chd.coexistence_shares(sweep).set_index("algorithm").sort_index()
    series = chd.shares_over(sweep, lo, hi).set_index("algorithm").sort_index()
    assert list(series.index) == ["chd", "hd"]
    for column in ("delay_bps", "reno_bps"):
        assert series[column].to_numpy() == pytest.approx(summary[column].to_numpy(), rel=0.02)
    assert chd.both_reno_window(sweep) == (20.0, 50.0)  # quick: NewReno flows 10-50 and 20-60 s
