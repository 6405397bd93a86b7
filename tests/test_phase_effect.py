"""What the 30-flow fairness of issue 8 needed, shown by taking each fix away again.

The set-up is the coexistence paper's 100 Mbit/s case (tests/test_access_queues.py): 30 NewReno flows
whose access links are as fast as the bottleneck. Two mechanisms of real stacks matter there and are
knobs of the TCP machine (docs/profiles.md, "Host send jitter" and "Partial ACKs"):

- ``send_jitter``: without it every segment leaves its host at the instant its ACK arrived; with equal
  packet times a backlogged flow then keeps a fixed phase to the bottleneck's departures and wins the
  freed drop-tail slots again and again (Floyd and Jacobson's phase effect).
- ``partial_ack_rto``: with SACK off, restarting the retransmission timer only at the first partial ACK
  (RFC 6582's impatient variant, ns-2's default) lets a long NewReno recovery end in a timeout; FreeBSD
  and Linux restart it on every partial ACK.
"""

from __future__ import annotations

import ccsim
from ccsim.scenario import Scenario


def _thirty_flows(tcp: dict) -> Scenario:
    return Scenario.from_dict({
        "run": {"duration": "100s", "measure": ["50s", "100s"]},
        "topology": {"bottleneck_rate": "100Mbit", "bottleneck_delay": "5ms", "queue": "1250pkt", "access_rate": "100Mbit"},
        "tcp": tcp,
        "flows": [{"algorithm": "newreno", "count": 30, "access_delay": {"uniform": ["5ms", "30ms"]}}],
    })


def test_without_send_jitter_equal_rate_paths_lock_in_phase() -> None:
    locked = ccsim.run(_thirty_flows({"send_jitter": "0s"}), seed=1)
    jittered = ccsim.run(_thirty_flows({}), seed=1)  # the freebsd9 default, 125 us
    assert jittered.scenario["flows"][0]["traffic"]["tcp"]["send_jitter_ns"] == 125_000
    top_share = locked.summary.goodput_bps.max() / 100e6
    assert locked.run_summary["jain_index"] < 0.6 and top_share > 0.15, (
        f"phase effect gone without jitter? Jain {locked.run_summary['jain_index']:.3f}, top share {top_share:.2f}"
    )
    assert jittered.run_summary["jain_index"] > 0.9


def test_send_jitter_changes_no_other_random_choice() -> None:
    """The jitter has its own random streams: the flows' access delays (drawn from the seed) stay."""
    a = ccsim.run(_thirty_flows({"send_jitter": "0s"}), seed=3)
    b = ccsim.run(_thirty_flows({"send_jitter": "50us"}), seed=3)
    assert list(a.summary.access_delay_ms) == list(b.summary.access_delay_ms)
    assert a.summary.access_delay_ms.nunique() > 20


def test_restarting_the_timer_only_at_the_first_partial_ack_costs_timeouts_without_sack() -> None:
    impatient = ccsim.run(_thirty_flows({"sack": False, "partial_ack_rto": "first"}), seed=1)
    steady = ccsim.run(_thirty_flows({"sack": False}), seed=1)
    assert steady.scenario["flows"][0]["traffic"]["tcp"]["partial_ack_rto"] == "every"
    assert impatient.summary.timeouts.sum() > 5 * max(steady.summary.timeouts.sum(), 1)
    assert steady.summary.timeouts.max() <= 3
