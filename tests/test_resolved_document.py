"""The resolved document: complete (no nulls) for every example, checked by the engine, its JSON
Schema current, and printed by `ccsim validate --resolved`."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ccsim.cli import cli
from ccsim.errors import ScenarioError
from ccsim.scenario import Scenario

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))
SCENARIO_EXAMPLES = [p for p in EXAMPLES if "[[flows]]" in p.read_text()]


def _nulls(node, path="$"):
    if node is None:
        yield path
    elif isinstance(node, dict):
        for k, v in node.items():
            yield from _nulls(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _nulls(v, f"{path}[{i}]")


def test_validate_resolved_prints_complete_documents_the_engine_accepts():
    core = pytest.importorskip("ccsim._core")
    result = CliRunner().invoke(cli, ["validate", "--resolved", *map(str, SCENARIO_EXAMPLES)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert len(lines) == len(SCENARIO_EXAMPLES) >= 5
    for line in lines:
        doc = json.loads(line)
        assert doc["ccsim_resolved"] == core.RESOLVED_FORMAT
        assert list(_nulls(doc)) == []
        assert "null" not in line
        core.validate_resolved(line)  # the engine builds a run from the document alone
        core.Simulation(line, 1)


def test_the_engine_names_a_missing_field():
    core = pytest.importorskip("ccsim._core")
    doc = Scenario.from_toml(ROOT / "examples" / "single_flow.toml").resolve()
    del doc["flows"][0]["intervals"]
    with pytest.raises(ScenarioError) as e:
        core.validate_resolved(json.dumps(doc))
    assert e.value.field == "flows[0].intervals"
    assert "missing field" in e.value.reason


def test_engine_errors_name_the_user_s_key():
    data = Scenario.from_toml(ROOT / "examples" / "single_flow.toml").model_dump(mode="json", by_alias=True, exclude_none=True)
    data["flows"] = [{"algorithm": "newreno", "count": 2}, {"algorithm": "newreno", "count": 2, "active": [["1s", "5s"], ["4s", "9s"]]}]
    pytest.importorskip("ccsim._core")
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict(data)
    assert e.value.field == "flows[1].active[1]"  # resolved flows[3].intervals[1]
    assert "in order" in e.value.reason


def test_checked_in_json_schema_is_current():
    core = pytest.importorskip("ccsim._core")
    on_disk = (ROOT / "docs" / "resolved-scenario.schema.json").read_text()
    assert on_disk == core.resolved_schema(), (
        "docs/resolved-scenario.schema.json is stale; regenerate with: "
        "cargo run -q -p ccsim-core --example resolved_schema > docs/resolved-scenario.schema.json"
    )


def test_validate_takes_every_example_including_the_sweep_plan():
    """`ccsim validate examples/*.toml --resolved`: a sweep plan gives one document per point."""
    from ccsim import _core
    from ccsim.sweep import SweepPlan

    plans = [p for p in EXAMPLES if p not in SCENARIO_EXAMPLES]
    assert plans, "the examples include a sweep plan"
    result = CliRunner().invoke(cli, ["validate", *map(str, EXAMPLES), "--resolved"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    points = sum(len(SweepPlan.from_toml(p).points()) for p in plans)
    assert len(lines) == len(SCENARIO_EXAMPLES) + points
    for line in lines:
        document = json.loads(line)
        assert not list(_nulls(document))
        _core.validate_resolved(line)
    plan_lines = CliRunner().invoke(cli, ["validate", str(plans[0]), "--resolved"]).output.splitlines()
    losses = [json.loads(line)["topology"]["bottleneck"]["loss_rate"] for line in plan_lines]
    assert losses == sorted(set(losses)) and len(losses) == len(SweepPlan.from_toml(plans[0]).points())
    plain = CliRunner().invoke(cli, ["validate", str(plans[0])])
    assert plain.exit_code == 0 and plain.output.startswith("ok: sweep plan, ")


def _three_flows() -> Scenario:
    text = (ROOT / "examples" / "single_flow.toml").read_text().replace("count = 1", "count = 3")
    return Scenario.from_toml_str(text)


def test_the_resolved_json_is_the_resolved_document_and_made_once():
    model = _three_flows()
    assert json.loads(model.resolved_json) == model.resolve()
    assert model.resolved_json is model.resolved_json  # cached: a frozen model resolves once


def test_a_copy_with_other_fields_resolves_anew():
    model = _three_flows()
    before = json.loads(model.resolved_json)
    longer = model.model_copy(update={"run": model.run.model_copy(update={"duration_ns": 2 * model.run.duration_ns})})
    after = json.loads(longer.resolved_json)
    assert after["duration_ns"] == 2 * before["duration_ns"]
    assert after == longer.resolve()


def test_resolve_gives_every_flow_its_own_tables():
    # the flows of one `count` are built from one template; a caller changing one changes no other
    doc = _three_flows().resolve()
    doc["flows"][0]["traffic"]["params"]["changed"] = 1.0
    doc["flows"][0]["intervals"][0]["stop_ns"] = 1
    assert "changed" not in doc["flows"][1]["traffic"]["params"]
    assert doc["flows"][2]["intervals"][0]["stop_ns"] != 1
