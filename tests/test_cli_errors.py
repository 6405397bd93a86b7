"""CLI error handling: exit status 2, one line naming the field, nothing written on failure."""

import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ccsim.cli import cli

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SINGLE = (EXAMPLES / "single_flow.toml").read_text()

BAD_SCENARIOS = [
    # (id, scenario text, field named in the message)
    ("unknown key", SINGLE.replace('kind = "dumbbell"', 'kind = "dumbbell"\nbandwidth = "1Mbit"'), "topology.bandwidth"),
    ("zero rate", SINGLE.replace('bottleneck_rate = "10Mbit"', 'bottleneck_rate = "0Mbit"'), "topology.bottleneck_rate"),
    ("Mbps", SINGLE.replace('bottleneck_rate = "10Mbit"', 'bottleneck_rate = "10Mbps"'), "topology.bottleneck_rate"),
    ("queue of 0", SINGLE.replace('queue = "84pkt"', 'queue = "0pkt"'), "topology.queue"),
    ("zero duration", SINGLE.replace('duration = "60s"', 'duration = "0s"'), "run.duration"),
    ("malformed unit", SINGLE.replace('bottleneck_delay = "20ms"', 'bottleneck_delay = "ms20"'), "topology.bottleneck_delay"),
    ("loss of 1", SINGLE.replace("loss = 0.0 ", "loss = 1.0 "), "topology.loss"),
    ("start after end", SINGLE.replace('start = "0s"', 'start = "70s"'), "flows[0].start"),
    ("stop before start", SINGLE.replace('start = "0s"', 'start = "30s"').replace('stop = "60s"', 'stop = "10s"'),
     "flows[0].stop"),
    ("no flows", SINGLE.split("[[flows]]")[0], "flows"),
    ("unknown profile", SINGLE.replace("[tcp]", '[tcp]\nprofile = "freebsd"'), "tcp.profile"),
    ("unknown flow profile", SINGLE + '[flows.tcp]\nprofile = "ns4"\n', "flows[0].tcp.profile"),
    ("bad TOML", SINGLE.replace('duration = "60s"', "duration = "), "bad.toml"),
    # the engine's type check inside a kind-tagged object of the resolved document (issue 31)
    ("u32 overflow", re.sub(r"(?m)^abc = \d+", "abc = 9223372036854775807", SINGLE), "tcp.abc"),
]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bad.toml"
    path.write_text(text)
    return path


def _one_error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    return lines[0]


@pytest.mark.parametrize("setting, field", [
    ("tcp.abc=9223372036854775807", "tcp.abc"),
    ("flows[0].tcp.abc=4294967296", "flows[0].tcp.abc"),
    ("tcp.dupack_threshold=4294967296", "tcp.dupack_threshold"),
])
def test_an_engine_type_error_names_the_key_set(tmp_path, setting, field):
    # issue 31: was "flows[0].traffic: invalid value: ... expected u32 at line 1 column 1725"
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(EXAMPLES / "single_flow.toml"), "--set", setting, "--out", str(out)])
    assert result.exit_code == 2, result.output
    line = _one_error_line(result)
    assert line.startswith(f"error: {field}: invalid value: integer "), line
    assert line.endswith("expected u32"), line
    assert not out.exists()


def test_bad_scenarios_really_differ_from_the_example():
    for _, text, _ in BAD_SCENARIOS:
        assert text != SINGLE


@pytest.mark.parametrize("text, field", [b[1:] for b in BAD_SCENARIOS], ids=[b[0] for b in BAD_SCENARIOS])
def test_run_rejects_bad_scenario_with_one_line_and_no_output(tmp_path, monkeypatch, text, field):
    monkeypatch.chdir(tmp_path)
    scenario = _write(tmp_path, text)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(scenario), "--out", str(out)])
    assert result.exit_code == 2, result.output
    line = _one_error_line(result)
    assert line.startswith(f"error: {field if field != 'bad.toml' else scenario}: ")
    assert not out.exists()
    assert not (tmp_path / "runs").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml"]


@pytest.mark.parametrize("text, field", [b[1:] for b in BAD_SCENARIOS], ids=[b[0] for b in BAD_SCENARIOS])
def test_run_with_default_out_leaves_nothing(tmp_path, monkeypatch, text, field):
    monkeypatch.chdir(tmp_path)
    _write(tmp_path, text)
    result = CliRunner().invoke(cli, ["run", "bad.toml"])
    assert result.exit_code == 2, result.output
    _one_error_line(result)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml"]


@pytest.mark.parametrize("text, field", [b[1:] for b in BAD_SCENARIOS], ids=[b[0] for b in BAD_SCENARIOS])
def test_validate_rejects_bad_scenario_with_one_line(tmp_path, text, field):
    scenario = _write(tmp_path, text)
    result = CliRunner().invoke(cli, ["validate", str(scenario)])
    assert result.exit_code == 2, result.output
    assert field in _one_error_line(result)
    assert result.stdout == ""


def test_validate_accepts_the_examples():
    result = CliRunner().invoke(cli, ["validate", str(EXAMPLES / "single_flow.toml")])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "ok: 1 flow, duration 60s"
    result = CliRunner().invoke(cli, ["validate", str(EXAMPLES / "three_flows.toml")])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == "ok: 3 flows, duration 100s"


def test_missing_scenario_file(tmp_path):
    missing = tmp_path / "nope.toml"
    result = CliRunner().invoke(cli, ["run", str(missing), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert _one_error_line(result) == f"error: {missing}: no such file"
    assert not (tmp_path / "out").exists()


def test_existing_output_dir_is_not_overwritten_without_force(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "meta.json").write_text("{}")
    (out / "keep.txt").write_text("precious")
    result = CliRunner().invoke(cli, ["run", str(EXAMPLES / "single_flow.toml"), "--out", str(out)])
    assert result.exit_code == 2, result.output
    line = _one_error_line(result)
    assert str(out) in line and "already exists" in line and "--force" in line
    assert (out / "keep.txt").read_text() == "precious"
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt", "meta.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging directory left


def test_force_does_not_replace_a_directory_that_is_not_a_run(tmp_path):
    out = tmp_path / "home"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    result = CliRunner().invoke(cli, ["run", str(EXAMPLES / "single_flow.toml"), "--out", str(out), "--force"])
    assert result.exit_code == 2, result.output
    assert "not a ccsim run directory" in _one_error_line(result)
    assert (out / "thesis.tex").read_text() == "precious"


def test_output_path_that_is_a_file_is_refused(tmp_path):
    out = tmp_path / "file"
    out.write_text("x")
    result = CliRunner().invoke(cli, ["run", str(EXAMPLES / "single_flow.toml"), "--out", str(out), "--force"])
    assert result.exit_code == 2
    assert "not a directory" in _one_error_line(result)
    assert out.read_text() == "x"


def test_unknown_algorithm_names_the_field(tmp_path):
    pytest.importorskip("ccsim._core")
    scenario = _write(tmp_path, SINGLE.replace('algorithm = "newreno"', 'algorithm = "no_such_cc"'))
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(scenario), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert _one_error_line(result).startswith("error: flows[0].algorithm: unknown algorithm 'no_such_cc' (known: ")
    assert not out.exists()


@pytest.mark.parametrize(
    "params, name",
    [("{ halve_form = \"flight\" }", "halve_form"), ("{ halve_from = \"both\" }", "halve_from")],
    ids=["unknown parameter", "bad value"],
)
def test_engine_rejects_bad_algorithm_parameters(tmp_path, params, name):
    pytest.importorskip("ccsim._core")
    scenario = _write(tmp_path, SINGLE.replace('{ halve_from = "flight" }', params))
    out = tmp_path / "out"
    for argv in (["run", str(scenario), "--out", str(out)], ["validate", str(scenario)]):
        result = CliRunner().invoke(cli, argv)
        assert result.exit_code == 2, result.output
        line = _one_error_line(result)
        assert "flows[0]" in line and name in line, line
        assert not out.exists()


def test_bad_seed_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(cli, ["run", str(EXAMPLES / "single_flow.toml"), "--seed", "-1", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert not (tmp_path / "o").exists()


def test_plot_of_a_directory_that_is_not_a_run(tmp_path):
    result = CliRunner().invoke(cli, ["plot", str(tmp_path)])
    assert result.exit_code == 2
    assert "not a ccsim run directory" in _one_error_line(result)


def test_real_process_exit_status_and_stderr(tmp_path):
    scenario = _write(tmp_path, SINGLE.replace('queue = "84pkt"', 'queue = "0pkt"'))
    proc = subprocess.run(
        [sys.executable, "-m", "ccsim.cli", "run", str(scenario), "--out", str(tmp_path / "out")],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert proc.stderr == "error: topology.queue: must hold at least 1 packet\n"
    assert proc.stdout == ""
    assert not (tmp_path / "out").exists()
