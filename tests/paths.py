"""Scenario builders shared by the whole-run tests: the papers' paths, as plain scenario dicts."""

from __future__ import annotations

from typing import Any

import ccsim
from ccsim.scenario import Scenario


def single_flow(loss: float = 0.0, duration: str = "60s", tcp: dict[str, Any] | None = None, algorithm: str = "newreno",
                params: dict[str, Any] | None = None) -> Scenario:
    """The CHD paper's path: 10 Mbit/s, 40 ms base RTT, 84-packet drop-tail, one flow."""
    flow: dict[str, Any] = {"algorithm": algorithm}
    if params:
        flow["params"] = params
    return Scenario.from_dict({
        "run": {"duration": duration},
        "topology": {"kind": "dumbbell", "bottleneck_rate": "10Mbit", "bottleneck_delay": "20ms",
                     "queue": "84pkt", "loss": loss},
        "tcp": tcp or {},
        "flows": [flow],
    })


def mean_over_seeds(scenario: Scenario, seeds: range, column: str = "goodput_bps") -> float:
    values = [ccsim.run(scenario, seed=s).summary[column].iloc[0] for s in seeds]
    return sum(values) / len(values)
