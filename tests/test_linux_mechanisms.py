"""The Linux mechanisms of the TCP machine (docs/linux-tcp.md) in whole runs: one flow on the
single-flow path (10 Mbit/s, 40 ms base RTT, 84-packet queue) under the `linux` profile with all five
knobs on, at 1 % random loss. What the mechanisms guarantee, not that they beat the FreeBSD-like
machine: the flow does not collapse, every byte arrives, every lost segment is retransmitted, and the
run is a pure function of scenario and seed."""

from __future__ import annotations

import math

import pytest

import ccsim
from ccsim.scenario import Scenario

ALL_KNOBS = {
    "slow_start_rule": "linux",
    "recovery_window": "prr",
    "rto_estimator": "linux",
    "delayed_ack_rule": "linux",
    "loss_detection": "rack_tlp",
}
# freebsd9's values of the same knobs (its timer is FreeBSD's own, docs/profiles.md).
OFF = {"slow_start_rule": "freebsd", "recovery_window": "rfc6675", "rto_estimator": "freebsd",
       "delayed_ack_rule": "rfc5681", "loss_detection": "dupack"}
MSS = 1448


def single_flow(tcp: dict, loss: float = 0.01, transfer: str | None = None, duration: str = "60s") -> Scenario:
    flow = {"algorithm": "newreno", "params": {"halve_from": "cwnd"}}
    if transfer:
        flow["bytes"] = transfer
    return Scenario.from_dict({
        "run": {"duration": duration},
        "topology": {"kind": "dumbbell", "bottleneck_rate": "10Mbit", "bottleneck_delay": "20ms", "queue": "84pkt",
                     "loss": loss, "access_rate": "1Gbit"},
        "tcp": {"profile": "linux", **tcp},
        "flows": [flow],
    })


def mathis_bps(rtt_s: float, p: float) -> float:
    """Mathis et al. with C = sqrt(3/2): a delayed-ACK receiver with byte counting (docs/validation.md)."""
    return math.sqrt(1.5) * MSS * 8 / (rtt_s * math.sqrt(p))


def test_the_knobs_reach_the_resolved_document() -> None:
    (flow,) = single_flow(ALL_KNOBS).resolve()["flows"]
    tcp = flow["traffic"]["tcp"]
    assert {k: tcp[k] for k in ALL_KNOBS} == ALL_KNOBS
    (flow,) = single_flow({}).resolve()["flows"]
    assert {k: flow["traffic"]["tcp"][k] for k in ALL_KNOBS} == ALL_KNOBS, "the linux profile turns them all on"
    (flow,) = single_flow({"profile": "freebsd9"}).resolve()["flows"]
    assert {k: flow["traffic"]["tcp"][k] for k in OFF} == OFF, "freebsd9 (the default) has FreeBSD's rules"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_no_collapse_at_one_percent_loss(seed: int) -> None:
    s = ccsim.run(single_flow(ALL_KNOBS), seed=seed).summary.iloc[0]
    theory = mathis_bps(s.rtt_mean_ms / 1e3, 0.01)
    assert 0.6 * theory <= s.goodput_bps <= 1.4 * theory, f"{s.goodput_bps / 1e6:.2f} Mbit/s vs Mathis {theory / 1e6:.2f}"
    assert s.timeouts <= 5


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_byte_arrives_and_every_lost_segment_is_retransmitted(seed: int) -> None:
    s = ccsim.run(single_flow(ALL_KNOBS, transfer="2MB"), seed=seed).summary.iloc[0]
    assert s.completed
    assert s.bytes_delivered == 2_000_000
    # A dropped segment (original or retransmission) is only repaired by sending it again.
    assert s.retransmits >= s.drops_random + s.drops_queue > 0


def test_runs_are_deterministic_and_the_knobs_change_the_run() -> None:
    a = ccsim.run(single_flow(ALL_KNOBS), seed=7).summary.iloc[0]
    b = ccsim.run(single_flow(ALL_KNOBS), seed=7).summary.iloc[0]
    off = ccsim.run(single_flow(OFF), seed=7).summary.iloc[0]
    cols = ["goodput_bps", "retransmits", "fast_retransmits", "timeouts", "rtt_mean_ms"]
    assert a[cols].tolist() == b[cols].tolist()
    assert a[cols].tolist() != off[cols].tolist()
