"""A link's loss process in the scenario file: Bernoulli (a probability or a schedule) and the
Gilbert-Elliott model of bursty loss (issue 30): parsed strictly, resolved for the engine, written
back, run, and refused by the testbed whose delay line draws independent losses."""

import pandas as pd
import pytest
from click.testing import CliRunner

from ccsim.cli import cli
from ccsim.errors import ScenarioError
from ccsim.kernel.plan import plan_from_resolved
from ccsim.scenario import Scenario

BASE = """
[run]
duration = "20s"
[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbit"
bottleneck_delay = "20ms"
queue = "84pkt"
loss = {loss}
[[flows]]
name = "flow0"
algorithm = "newreno"
"""
GE = '{ model = "gilbert_elliott", p_good_to_bad = 0.002, p_bad_to_good = 0.25, loss_good = 0, loss_bad = "100%" }'


def test_a_gilbert_elliott_link_resolves_to_its_model_and_back():
    s = Scenario.from_toml_str(BASE.format(loss=GE))
    link = s.resolve()["topology"]["bottleneck"]
    assert link["loss_model"] == {"kind": "gilbert_elliott", "p_good_to_bad": 0.002, "p_bad_to_good": 0.25, "loss_good": 0.0, "loss_bad": 1.0}
    assert (link["loss_rate"], link["loss_changes"]) == (0.0, [])
    assert s.resolve()["topology"]["reverse"]["loss_model"] == {"kind": "bernoulli"}
    again = Scenario.from_toml_str(s.to_toml())
    assert again.resolve()["topology"]["bottleneck"] == link
    plain = Scenario.from_toml_str(BASE.format(loss="0.01")).resolve()["topology"]["bottleneck"]
    assert plain["loss_model"] == {"kind": "bernoulli"} and plain["loss_rate"] == 0.01


@pytest.mark.parametrize("loss, field, reason", [
    ('{ model = "gilbert_elliott", p_good_to_bad = 0.01, p_bad_to_good = 0, loss_good = 0, loss_bad = 1 }',
     "topology.loss.p_bad_to_good", "above 0"),
    ('{ model = "gilbert_elliott", p_good_to_bad = 0.01, p_bad_to_good = 0.3, loss_good = 0, loss_bad = 1.5 }',
     "topology.loss.loss_bad", "outside [0, 1]"),
    ('{ model = "gilbert_elliott", p_good_to_bad = 0.01, p_bad_to_good = 0.3, loss_good = 0 }',
     "topology.loss.loss_bad", "required"),
    ('{ model = "gilbert_elliott", p_good_to_bad = 0.01, p_bad_to_good = 0.3, loss_good = 0, loss_bad = 1, h = 2 }',
     "topology.loss.h", "unknown key"),
    ('{ model = "markov", p = 0.1 }', "topology.loss.model", "gilbert_elliott"),
])
def test_a_bad_model_is_one_line_naming_the_key(tmp_path, loss, field, reason):
    with pytest.raises(ScenarioError) as e:
        Scenario.from_toml_str(BASE.format(loss=loss))
    assert e.value.field == field and reason in e.value.reason
    path = tmp_path / "bad.toml"
    path.write_text(BASE.format(loss=loss))
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(path), "--out", str(out), "--no-plots"])
    assert result.exit_code == 2 and field in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_bursty_losses_run_and_are_counted_as_random_drops(tmp_path):
    path = tmp_path / "ge.toml"
    path.write_text(BASE.format(loss=GE))
    out = tmp_path / "ge"
    result = CliRunner().invoke(cli, ["-q", "run", str(path), "--out", str(out), "--no-plots"])
    assert result.exit_code == 0, result.output
    links = pd.read_parquet(out / "link_summary.parquet").set_index("link")
    assert links.at["bottleneck", "drops_random"] > 0
    assert links.at["reverse", "drops_random"] == 0


def test_the_testbed_refuses_gilbert_elliott_loss():
    doc = Scenario.from_toml_str(BASE.format(loss=GE)).resolve()
    with pytest.raises(ScenarioError) as e:
        plan_from_resolved(doc, ["newreno"])
    assert e.value.field == "topology.bottleneck.loss_model"
