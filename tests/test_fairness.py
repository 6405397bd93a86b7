"""Whole-run behaviour of competing NewReno flows and of seeds."""

from __future__ import annotations

import hashlib

import ccsim


def test_three_staggered_newreno_flows_share_fairly() -> None:
    """Three flows starting at 0/20/40 s, 60 s each, on the CHD path: Jain's index over 45-60 s."""
    for seed in (1, 2):
        result = ccsim.run("examples/three_flows.toml", seed=seed)
        assert result.run_summary["measure_start_s"] == 45 and result.run_summary["measure_end_s"] == 60
        jain = result.run_summary["jain_index"]
        assert jain > 0.95, f"seed {seed}: Jain {jain:.3f}, goodputs {list(result.summary.goodput_bps)}"
        assert result.run_summary["bottleneck_utilisation"] > 0.9


def test_a_newly_started_flow_takes_its_share() -> None:
    """The third flow (from 40 s) is not starved: its 45-60 s goodput is at least half a fair share."""
    result = ccsim.run("examples/three_flows.toml", seed=1)
    third = result.summary.set_index("name").loc["third", "goodput_bps"]
    assert third > 0.5 * 10e6 / 3


def _digest(result: ccsim.Result) -> str:
    return hashlib.sha256(result.flows.to_csv().encode() + result.links.to_csv().encode()).hexdigest()


def test_different_seeds_give_different_runs_when_randomness_matters() -> None:
    text = open("examples/single_flow.toml").read().replace("loss = 0.0", "loss = 0.01")
    a, b, c = (ccsim.run(text, seed=s) for s in (5, 5, 6))
    assert _digest(a) == _digest(b)
    assert _digest(a) != _digest(c)
