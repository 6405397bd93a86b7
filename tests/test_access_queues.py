"""Every queue in the network is finite (issue 8, defect 1): a flow whose access link is as fast as the
bottleneck can no longer park an unbounded window in its own access queue."""

from __future__ import annotations


import pytest

import ccsim
from ccsim.scenario import DEFAULT_ACCESS_QUEUE_PKTS, Scenario


def _equal_rate_scenario(
    access_queue: str | None, flows: int, duration: str, measure: list[str], tcp: dict | None = None
) -> Scenario:
    """The coexistence paper's 100 Mbit/s case: access links as fast as the bottleneck."""
    topology = {"bottleneck_rate": "100Mbit", "bottleneck_delay": "5ms", "queue": "1250pkt", "access_rate": "100Mbit"}
    if access_queue is not None:
        topology["access_queue"] = access_queue
    return Scenario.from_dict({
        "run": {"duration": duration, "measure": measure},
        "topology": topology,
        "tcp": tcp or {},
        "flows": [{"algorithm": "newreno", "count": flows, "access_delay": {"uniform": ["5ms", "30ms"]}}],
    })


def test_an_access_queue_never_holds_more_than_its_limit() -> None:
    """One NewReno flow alone, access rate = bottleneck rate, a bottleneck queue far larger than the
    access queue: slow start pushes a window well beyond the access limit through the access link,
    which (before the limit existed) queued all of it; now its queue stays within the limit and the
    excess is dropped there."""
    for limit in (50, DEFAULT_ACCESS_QUEUE_PKTS):
        scenario = _equal_rate_scenario(f"{limit}pkt" if limit != DEFAULT_ACCESS_QUEUE_PKTS else None, 1, "20s", ["0s", "20s"])
        result = ccsim.run(scenario, seed=1)
        links = result.links
        access = links[links.link == "access:flow0"]
        assert len(access) > 0
        assert access.queue_pkts.max() <= limit
        assert access.drops_queue.sum() > 0, "the window outgrew the access queue: drops must happen there"
        reverse = links[links.link == "reverse_access:flow0"]
        assert reverse.queue_pkts.max() <= limit
        assert result.scenario["topology"]["access_queue"] == {"kind": "droptail", "limit": {"pkts": limit}}


def test_no_flow_parks_seconds_of_data_in_its_own_access_queue() -> None:
    """Issue 8's symptom: 30 NewReno flows without SACK and delayed ACKs, 100 Mbit/s access and
    bottleneck. An access queue too large to fill (what the access links used to have) lets one flow
    queue tens of thousands of packets at its own host (an RTT of seconds, nearly the whole bottleneck);
    the default 1000 packets bound every flow's RTT to the bottleneck queue's 150 ms plus 2 x 1000
    packet times (24 ms each way)."""
    # Without send jitter, as when the defect was found: the jitter (tests/test_phase_effect.py) also
    # breaks the phase lock that let one flow keep its access queue full.
    profile = {"sack": False, "delayed_ack": False, "send_jitter": "0s"}

    def run(access_queue: str | None) -> tuple[float, float, int]:
        result = ccsim.run(_equal_rate_scenario(access_queue, 30, "100s", ["0s", "100s"], profile), seed=1)
        links = result.links
        access = links[links.link.str.startswith("access:")].queue_pkts.max()
        return result.summary.rtt_max_ms.max(), result.summary.goodput_bps.max(), access

    rtt_ms, top_bps, access_pkts = run("100000000pkt")
    assert rtt_ms > 2000 and top_bps > 90e6 and access_pkts > 10 * DEFAULT_ACCESS_QUEUE_PKTS
    rtt_ms, _, access_pkts = run(None)
    assert access_pkts <= DEFAULT_ACCESS_QUEUE_PKTS
    assert rtt_ms < 500, f"a flow's RTT reached {rtt_ms:.0f} ms"
    # Fairness is not claimed here: without send jitter the phase lock still hands one flow most of
    # the link (83 Mbit/s of 100 with SACK off, seed 1), now within a bounded RTT. With the default
    # jitter the 30 flows share fairly (the test below; tests/test_phase_effect.py).


def test_an_unlimited_access_queue_is_no_longer_possible() -> None:
    """The default is written out: no document reaches the engine without a finite access queue."""
    topology = _equal_rate_scenario(None, 2, "1s", ["0s", "1s"]).resolve()["topology"]
    for key in ("access_queue", "reverse_access_queue"):
        assert topology[key] == {"kind": "droptail", "limit": {"pkts": DEFAULT_ACCESS_QUEUE_PKTS}}


@pytest.mark.parametrize("sack", [True, False], ids=["sack", "no_sack"])
def test_thirty_newreno_flows_share_a_100mbit_path_with_equal_access_rate(sack: bool) -> None:
    """Issue 8's must-show: 30 NewReno flows, 100 Mbit/s access and bottleneck (5 ms one way), access
    delays U[5, 30] ms, a 1250-packet bottleneck queue, 100 s; over the last 50 s Jain's index is above
    0.8 and no flow has more than 3 timeouts. It took two fixes (tests/test_phase_effect.py has the
    runs without them): the host's send jitter breaks the phase lock of equal-rate paths, and the
    fast retransmission and every partial ACK restart the retransmission timer as FreeBSD and Linux do
    (with the timer left running, 122 of 127 timeouts were spurious)."""
    result = ccsim.run(_equal_rate_scenario(None, 30, "100s", ["50s", "100s"], {"sack": sack}), seed=1)
    summary = result.summary
    goodputs = sorted(summary.goodput_bps / 1e6)
    jain = result.run_summary["jain_index"]
    assert jain > 0.8, f"Jain {jain:.3f}, goodputs {goodputs[0]:.2f}-{goodputs[-1]:.2f} Mbit/s"
    assert summary.timeouts.max() <= 3, f"timeouts per flow: {sorted(summary.timeouts)}"
