"""NewReno without SACK on the single-flow path (examples/single_flow.toml with a 28-packet queue): the
sender must not collapse into a cycle of overshoot and timeouts (issue 8, defect 2). Halving the
sequence span at a loss, which the RFC 6582 window inflation blows up to several windows, gave 53 %
goodput, 39 timeouts and 4,530 retransmissions in 60 s; the rule is in `tcp/sender.rs` (`in_flight`) and
docs/choices.md."""

from __future__ import annotations

import pytest

import ccsim
from ccsim.scenario import Scenario

SEEDS = range(1, 6)


def single_flow(sack: bool) -> Scenario:
    return Scenario.from_dict({
        "run": {"duration": "60s"},
        "topology": {"kind": "dumbbell", "bottleneck_rate": "10Mbit", "bottleneck_delay": "20ms", "queue": "28pkt",
                     "loss": 0.0, "access_rate": "1Gbit"},
        "tcp": {"mss": "1460B", "header": "42B", "initial_window": 10, "sack": sack, "delayed_ack": False, "abc": 0,
                "min_rto": "1s", "initial_rto": "1s", "rwnd": "64MiB"},
        "flows": [{"algorithm": "newreno", "params": {"halve_from": "flight"}}],
    })


@pytest.mark.parametrize("seed", SEEDS)
def test_sack_off_goodput_is_within_10_percent_of_sack_on_with_few_timeouts(seed: int) -> None:
    on = ccsim.run(single_flow(True), seed=seed).summary.iloc[0]
    off = ccsim.run(single_flow(False), seed=seed).summary.iloc[0]
    assert off.goodput_bps >= 0.9 * on.goodput_bps, \
        f"SACK off {off.goodput_bps / 1e6:.2f} vs on {on.goodput_bps / 1e6:.2f} Mbit/s"
    assert off.timeouts < 5, f"{off.timeouts} timeouts without SACK"
