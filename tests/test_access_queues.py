"""Every queue in the network is finite (issue 8, defect 1): a flow whose access link is as fast as the
bottleneck can no longer park an unbounded window in its own access queue."""

from __future__ import annotations

import time

import ccsim
from ccsim.scenario import DEFAULT_ACCESS_QUEUE_PKTS, Scenario


def _equal_rate_scenario(access_queue: str | None, flows: int, duration: str, measure: list[str]) -> Scenario:
    """The coexistence paper's 100 Mbit/s case: access links as fast as the bottleneck."""
    topology = {"bottleneck_rate": "100Mbit", "bottleneck_delay": "5ms", "queue": "1250pkt", "access_rate": "100Mbit"}
    if access_queue is not None:
        topology["access_queue"] = access_queue
    return Scenario.from_dict({
        "run": {"duration": duration, "measure": measure},
        "topology": topology,
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
