"""Validation grows linearly with the scenario: work counted in Python function calls and returns
(``sys.setprofile`` events, the same on any machine and under any load), never timed.

Before: the name of each unnamed ``[[flows]]`` entry summed the counts of every entry before it
(30,000 entries took 59 s), and each flow's packet was compared with every queue (flows x hops on a
parking lot)."""

from __future__ import annotations

import sys

import ccsim

HOP = '{ rate = "10Mbit", delay = "1ms", queue = "50pkt" }'


def _document(flows: int, hops: int | None = None) -> str:
    if hops is None:
        topology = '[topology]\nkind = "dumbbell"\nbottleneck_rate = "10Mbit"\nbottleneck_delay = "20ms"\nqueue = "84pkt"\n'
        flow = '[[flows]]\nalgorithm = "newreno"\n'
    else:
        topology = f'[topology]\nkind = "parking_lot"\nhops = [{", ".join([HOP] * hops)}]\n'
        flow = f'[[flows]]\nalgorithm = "newreno"\npath = [0, {hops - 1}]\n'
    return '[run]\nduration = "1s"\n' + topology + flow * flows


def _work(text: str) -> int:
    """Python calls, returns and C calls made while loading and validating ``text``."""
    events = 0

    def count(frame, event, arg):
        nonlocal events
        events += 1

    sys.setprofile(count)
    try:
        ccsim.Scenario.from_toml_str(text)
    finally:
        sys.setprofile(None)
    return events


def test_validation_is_linear_in_flows_entries() -> None:
    small, large = _work(_document(500)), _work(_document(1000))
    # linear: twice the entries, twice the work (was 3.5x at these sizes, and growing)
    assert large / small < 2.1, (small, large)


def test_parking_lot_hops_cost_the_same_whatever_the_number_of_flows() -> None:
    """What 30 more hops cost does not grow with the flows (was 41,000 events more with 500 flows,
    71,000 with 1,000)."""
    extra_500 = _work(_document(500, 40)) - _work(_document(500, 10))
    extra_1000 = _work(_document(1000, 40)) - _work(_document(1000, 10))
    assert extra_1000 < 1.1 * extra_500, (extra_500, extra_1000)
