"""Every algorithm's parameters can be set per flow from a scenario; bad ones are one-line errors."""

from __future__ import annotations

import pytest

import ccsim
from ccsim.errors import ScenarioError
from ccsim.scenario import Scenario

ALGORITHMS = {a["name"]: a for a in ccsim.algorithms()}


def scenario(algorithm: str, params: dict) -> Scenario:
    return Scenario.from_dict({
        "run": {"duration": "2s"},
        "topology": {"kind": "dumbbell", "bottleneck_rate": "10Mbit", "bottleneck_delay": "20ms", "queue": "84pkt"},
        "flows": [{"algorithm": "newreno"}, {"algorithm": algorithm, "params": params}],
    })


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_every_parameter_can_be_given_explicitly_per_flow(name: str) -> None:
    params = {p["name"]: p["default"] for p in ALGORITHMS[name]["params"]}
    if name == "binomial":
        params["preset"] = "custom"  # k and l are given explicitly only with the custom preset
    result = ccsim.run(scenario(name, params), seed=1)
    assert result.summary.algorithm.tolist() == ["newreno", name]
    assert result.summary.bytes_delivered.iloc[1] > 0


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_unknown_parameter_is_named(name: str) -> None:
    with pytest.raises(ScenarioError) as e:
        ccsim.run(scenario(name, {"no_such_knob": 1}), seed=1)
    message = str(e.value)
    assert "\n" not in message
    assert "flows[1]" in message and "no_such_knob" in message


def numeric_params():
    for name, info in sorted(ALGORITHMS.items()):
        for p in info["params"]:
            if p["kind"] in ("number", "integer") and p["range"].startswith(("[", "(")):
                yield name, p


@pytest.mark.parametrize("name,param", [(n, p) for n, p in numeric_params()], ids=lambda x: x if isinstance(x, str) else x["name"])
def test_out_of_range_parameter_is_named(name: str, param: dict) -> None:
    low = param["range"].strip("[(").split(",")[0]
    bad = float(low) - 1.0
    with pytest.raises(ScenarioError) as e:
        ccsim.run(scenario(name, {param["name"]: bad}), seed=1)
    message = str(e.value)
    assert "\n" not in message and param["name"] in message and "flows[1]" in message


def test_cli_list_shows_every_algorithm_with_units_and_defaults() -> None:
    from click.testing import CliRunner

    from ccsim.cli import cli

    out = CliRunner().invoke(cli, ["list"]).output
    for name, info in ALGORITHMS.items():
        assert name in out
        for p in info["params"]:
            assert p["name"] in out, f"{name}.{p['name']} missing from `ccsim list`"
