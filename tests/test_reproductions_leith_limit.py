"""Causes found while reproducing Leith 2007 and TCP Limit (issue 9), pinned in whole runs."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def core():
    return pytest.importorskip("ccsim._core")


def test_leith_table1_is_eq2_without_the_low_speed_interval():
    """Table I's epochs are H-TCP's eq. (2) with the 1 s low-speed interval left out: every row within
    0.25 s of the model without Delta_L, and about 1 s shorter than the model with it."""
    from ccsim.experiments.leith import TABLE1_PAPER, htcp_epoch_model

    for w, paper in TABLE1_PAPER.items():
        assert abs(htcp_epoch_model(w, delta_l_s=0.0) - paper) <= 0.25, w
        assert 0.6 <= htcp_epoch_model(w) - paper <= 1.1, w
    # beta cancels with the 2(1 - beta) factor: the epoch does not depend on it
    assert htcp_epoch_model(5000, beta=0.8) == pytest.approx(htcp_epoch_model(5000, beta=0.5), abs=0.01)


def test_htcp_epoch_follows_eq2_when_the_rtt_stays_near_rtt_min(core):
    """One htcp flow (linux profile), window at loss about 1000 packets, 0.1 BDP of buffering: the
    simulated epoch is the eq. (2) model's (with Delta_L) within 10 %; with a BDP buffer it is longer
    (the RTT doubles while RTT scaling uses RTTmin)."""
    from types import SimpleNamespace

    from ccsim.experiments import leith
    from ccsim.experiments.traces import point_runs

    sweep = SimpleNamespace(plan=leith.table1_plan(quick=True))  # point_runs runs repetition 0 of each point
    runs = point_runs(sweep)
    assert len(runs) == 4 and all(r is not None for _, r in runs.values())
    small, full = leith.table1_epochs(sweep, 0.1), leith.table1_epochs(sweep, 1.0)
    model = leith.htcp_epoch_model(1000)
    assert abs(small[1000][0] - model) <= 0.1 * model, small
    assert full[1000][0] > 1.15 * model, full


def test_leith_fig6_delta0_decides_the_delay_flows_share(core):
    """One delay flow against three NewReno flows: without a Delta0 rate limit it is starved; with
    Delta0 = 3 s it gets several times more (the paper gives no Delta0; ccsim's default is not changed)."""
    import ccsim
    from ccsim.experiments import leith
    from ccsim.experiments.helpers import scenario_with
    from ccsim.scenario import Scenario

    base = Scenario.from_dict(leith._fig6_doc(40))

    def delay_goodput(delta0_ms):
        r = ccsim.run(scenario_with(base, {leith.GAMMA_PATH: 0.5, leith.DELTA0_PATH: delta0_ms}), seed=1)
        return float(r.summary[r.summary["name"] == "delay"]["goodput_bps"].iloc[0])

    starved, limited = delay_goodput(1), delay_goodput(3000)
    assert starved < 0.5 * leith.FIG6_FAIR_BPS
    assert limited > 3 * starved


def test_tcp_limit_hold_freezes_the_start_up_backlog(core):
    """16 TCP Limit flows on 10 Mbit/s, 100 ms, BDP queue, hold as printed: with slow start off the
    windows grow into the limit and the backlog stays near eq. (7)'s (alpha - 1) BDP = 8.3 packets;
    with slow start on, the overshoot of the start-up is held and the backlog stays several times the
    bound (the hold stops growth, it does not drain: any RTT above alpha RTTmin satisfies it)."""
    import ccsim
    from ccsim.scenario import Scenario

    def backlog(slow_start):
        doc = {
            "run": {"duration": "90s", "measure": ["30s", "90s"], "sample_interval": "1s", "seed": 1},
            "topology": {"kind": "dumbbell", "bottleneck_rate": "10Mbit", "bottleneck_delay": "50ms", "queue": "83pkt"},
            "tcp": {"profile": "ns2", "rwnd": "64MiB", "mss": "1460B", "slow_start": slow_start},
            "flows": [{"algorithm": "tcp_limit", "count": 16, "start": {"uniform": ["0s", "2s"]},
                       "params": {"hold_needs_queue": False}}],
        }
        r = ccsim.run(Scenario.from_dict(doc))
        b = r.link_summary[r.link_summary["link"] == "bottleneck"]
        return float(b["qdelay_mean_ms"].iloc[0]) / 1.2  # 1.2 ms per 1500 B packet at 10 Mbit/s

    bound = 0.1 * 10e6 * 0.1 / 8 / 1500
    grown, overshoot = backlog(False), backlog(True)
    assert grown <= 1.5 * bound, grown
    assert overshoot >= 3 * bound, overshoot


def test_tcp_limit_backlog_follows_the_largest_rtt_min(core):
    """16 TCP Limit flows, slow start off, default hold (with its backlog premise): the standing queue
    is not eq. (7)'s (alpha - 1) BDP but alpha * max_i RTTmin_i - base RTT. A flow that starts on a
    queue already standing measures that queue into its RTTmin, holds only once its RTT exceeds
    alpha times that, and the hold never drains the queue below it (docs/reproductions/limit.md)."""
    import ccsim
    from ccsim.scenario import Scenario

    doc = {
        "run": {"duration": "90s", "measure": ["30s", "90s"], "sample_interval": "1s", "seed": 1},
        "topology": {"kind": "dumbbell", "bottleneck_rate": "10Mbit", "bottleneck_delay": "50ms", "queue": "83pkt"},
        "tcp": {"profile": "ns2", "rwnd": "64MiB", "mss": "1460B", "slow_start": False},
        "flows": [{"algorithm": "tcp_limit", "count": 16, "start": {"uniform": ["0s", "2s"]}}],
    }
    r = ccsim.run(Scenario.from_dict(doc))
    qdelay = float(r.link_summary.loc[r.link_summary["link"] == "bottleneck", "qdelay_mean_ms"].iloc[0])
    rtt_min = r.summary["rtt_min_ms"]
    predicted = 1.1 * rtt_min.max() - rtt_min.min()
    bound_ms = 0.1 * 100.0  # (alpha - 1) * BDP, as queueing delay: 10 ms
    assert rtt_min.max() > 1.1 * rtt_min.min(), "no flow started on a standing queue: the test lost its subject"
    assert qdelay > 2 * bound_ms, qdelay
    assert abs(qdelay - predicted) <= 0.15 * predicted, (qdelay, predicted)
