"""The command line as a researcher uses it: ``--set KEY=VALUE`` (dotted keys as in a sweep grid, values as in
the file), ``--json``, ``-q``/``-v``, ``ccsim list NAME`` and "did you mean" for algorithm names."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from ccsim.cli import cli
from ccsim.errors import ScenarioError
from ccsim.overrides import apply_overrides, parse_override

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SHORT = ["--set", 'run.duration="5s"', "--set", 'flows[0].stop="5s"']


def test_values_parse_as_in_a_file():
    assert parse_override("topology.loss=1%") == ("topology.loss", "1%")
    assert parse_override("topology.loss=0.01") == ("topology.loss", 0.01)
    assert parse_override("flows[0].algorithm=chd") == ("flows[0].algorithm", "chd")
    assert parse_override('flows[0].path=[0, 2]') == ("flows[0].path", [0, 2])
    assert parse_override('tcp.sack=false') == ("tcp.sack", False)
    with pytest.raises(ScenarioError, match="expected KEY=VALUE"):
        parse_override("topology.loss")


def test_run_with_set_loss_and_algorithm(tmp_path):
    pytest.importorskip("ccsim._core")
    out = tmp_path / "run"
    result = CliRunner().invoke(cli, ["run", str(EXAMPLES / "single_flow.toml"), "--out", str(out), "--no-plots",
                                      "--set", "topology.loss=1%", "--set", "flows[0].algorithm=chd", *SHORT])
    assert result.exit_code == 0, result.output
    assert "chd" in result.stdout
    meta = json.loads((out / "meta.json").read_text())
    assert meta["scenario"]["topology"]["bottleneck"]["loss_rate"] == 0.01
    assert meta["scenario"]["duration_ns"] == 5_000_000_000
    assert meta["algorithm_params"]["flow0"]["algorithm"] == "chd"
    # the recorded TOML reproduces the run and names the overrides
    text = meta["scenario_toml"]
    assert '# --set topology.loss="1%"' in text and tomllib.loads(text)["flows"][0]["algorithm"] == "chd"
    # the file's newreno parameter would be unknown to chd: dropped, and the user told so
    assert "parameters for newreno (halve_from) are dropped" in result.stderr


@pytest.mark.parametrize("order", ["algorithm first", "params first"])
def test_set_algorithm_with_its_params_drops_the_old_algorithms_params(tmp_path, order):
    """With a params override for the new algorithm, the file's params for the old one used to be kept
    and refused as ``unknown parameter "halve_from"``, a key the user never typed."""
    pytest.importorskip("ccsim._core")
    sets = ["--set", "flows[0].algorithm=chd", "--set", "flows[0].params.q_th_ms=20"]
    if order == "params first":
        sets = sets[2:] + sets[:2]
    out = tmp_path / "run"
    result = CliRunner().invoke(cli, ["run", str(EXAMPLES / "single_flow.toml"), "--out", str(out), "--no-plots", *sets, *SHORT])
    assert result.exit_code == 0, result.output
    assert "parameters for newreno (halve_from) are dropped" in result.stderr
    meta = json.loads((out / "meta.json").read_text())
    assert meta["algorithm_params"]["flow0"]["algorithm"] == "chd"
    assert meta["algorithm_params"]["flow0"]["params"]["q_th_ms"] == 20
    assert tomllib.loads(meta["scenario_toml"])["flows"][0]["params"] == {"q_th_ms": 20}


@pytest.mark.parametrize("override, message", [
    ("flows[3].algorithm=chd", "--set flows[3].algorithm: flows has 1 entry in the base scenario, no [3]"),
    ("topology.loss=150%", "topology.loss: "),
    ("nonsense", "--set: expected KEY=VALUE"),
])
def test_bad_overrides_are_one_line_and_exit_2(tmp_path, override, message):
    out = tmp_path / "never"
    result = CliRunner().invoke(cli, ["run", str(EXAMPLES / "single_flow.toml"), "--out", str(out), "--set", override])
    assert result.exit_code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_params_kept_when_overridden_too():
    text = (EXAMPLES / "single_flow.toml").read_text()
    model, toml_text, notes = apply_overrides(text, ["flows[0].algorithm=chd", "flows[0].params={p_max = 0.2}"])
    assert notes == [] and tomllib.loads(toml_text)["flows"][0]["params"] == {"p_max": 0.2}


# --- ccsim list NAME, "did you mean" for algorithm names ------------------------------------------

def test_list_one_algorithm():
    pytest.importorskip("ccsim._core")
    result = CliRunner().invoke(cli, ["list", "chd"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("chd ") and "\nnewreno " not in result.stdout and "p_max" in result.stdout


def test_list_unknown_name_suggests_the_lower_case_one():
    pytest.importorskip("ccsim._core")
    result = CliRunner().invoke(cli, ["list", "NewReno"])
    assert result.exit_code == 2
    assert "NewReno: unknown algorithm; did you mean 'newreno'? (names are lower case)" in result.stderr


def test_scenario_algorithm_did_you_mean(tmp_path):
    pytest.importorskip("ccsim._core")
    for wrong, right in (("NewReno", "newreno"), ("newrno", "newreno"), ("CHD", "chd")):
        result = CliRunner().invoke(cli, ["run", str(EXAMPLES / "single_flow.toml"), "--out", str(tmp_path / "x"),
                                          "--set", f"flows[0].algorithm={wrong}"])
        assert result.exit_code == 2
        assert f"flows[0].algorithm: unknown algorithm '{wrong}'; did you mean '{right}'?" in result.stderr, result.stderr


# --- --json, -q, -v ----------------------------------------------------------------------------------

def test_run_json_is_one_document(tmp_path):
    pytest.importorskip("ccsim._core")
    out = tmp_path / "run"
    result = CliRunner().invoke(cli, ["run", str(EXAMPLES / "voip_with_bulk.toml"), "--out", str(out), "--no-plots", "--json",
                                      "--set", 'run.duration="5s"'])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)  # nothing but the document on stdout (NaN written as null)
    assert doc["directory"] == str(out) and doc["run_summary"]["jain_flows"] == 1
    assert [f["name"] for f in doc["flows"]] == ["bulk", "cbr", "call"]
    assert [f["in_jain"] for f in doc["flows"]] == [True, False, False]
    assert sum(link["bottleneck"] for link in doc["links"]) == 1
    assert doc["flows"][0]["owd_mean_ms"] is None


def test_quiet_prints_only_the_directory_and_verbose_logs(tmp_path):
    pytest.importorskip("ccsim._core")
    out = tmp_path / "q"
    quiet = CliRunner().invoke(cli, ["-q", "run", str(EXAMPLES / "single_flow.toml"), "--out", str(out), "--no-plots", *SHORT])
    assert quiet.exit_code == 0 and quiet.stdout == f"{out}\n"
    verbose = CliRunner().invoke(cli, ["-v", "run", str(EXAMPLES / "single_flow.toml"), "--out", str(tmp_path / "v"), "--no-plots", *SHORT])
    assert verbose.exit_code == 0 and "INFO ccsim.cli: simulated" in verbose.stderr
    assert "Jain index" in verbose.stdout


# --- sweep --dry-run -----------------------------------------------------------------------------------

def test_sweep_dry_run_lists_points_and_writes_nothing(tmp_path, monkeypatch):
    pytest.importorskip("ccsim._core")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["sweep", str(EXAMPLES / "sweep_loss.toml"), "--dry-run"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert [line.split(": ", 1)[1] for line in lines[:5]] == [
        "topology.loss=0", "topology.loss=0.0001", "topology.loss=0.001", "topology.loss=0.005", "topology.loss=0.01"]
    assert "5 points x 5 repetitions = 25 runs (seeds 1-5); dry run: nothing run or written" in result.stdout
    assert "estimated engine CPU" in result.stdout
    assert list(tmp_path.iterdir()) == []
    missing = CliRunner().invoke(cli, ["sweep", str(EXAMPLES / "sweep_loss.toml")])
    assert missing.exit_code == 2 and "--out: required" in missing.stderr


def test_summary_table_fits_80_columns(tmp_path):
    pytest.importorskip("ccsim._core")
    result = CliRunner(env={"COLUMNS": "80"}).invoke(cli, ["run", str(EXAMPLES / "voip_with_bulk.toml"), "--out", str(tmp_path / "v"),
                                                           "--no-plots", "--set", 'run.duration="5s"'])
    assert result.exit_code == 0, result.output
    table = [line for line in result.stdout.splitlines() if line.startswith(("┃", "│", "┏", "└"))]
    assert table and all(len(line) <= 80 for line in table)
    assert "…" not in result.stdout  # nothing cut off
    assert any("call" in line and "(voip)" in line for line in table)


def test_sweep_set_is_a_one_value_grid_entry(tmp_path):
    pytest.importorskip("ccsim._core")
    result = CliRunner().invoke(cli, ["sweep", str(EXAMPLES / "sweep_loss.toml"), "--dry-run",
                                      "--set", "flows[0].algorithm=chd", "--set", "flows[0].params={}"])
    assert result.exit_code == 0, result.output
    points = result.stdout.splitlines()[:5]
    assert all(p.endswith("flows[0].algorithm=chd, flows[0].params={}") for p in points), points
    swept = CliRunner().invoke(cli, ["sweep", str(EXAMPLES / "sweep_loss.toml"), "--dry-run", "--set", "topology.loss=1%"])
    assert swept.exit_code == 2 and "--set topology.loss: the plan's grid sweeps this key" in swept.stderr
