"""``ccsim report`` (and anything else that loads a run directory) on a ``meta.json`` whose fields
have the wrong type: one line naming the field, exit 2, never a traceback from a plot."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ccsim.cli import cli

SCENARIO = """\
[run]
duration = "1s"

[topology]
kind = "dumbbell"
bottleneck_rate = "10Mbit"
bottleneck_delay = "20ms"
queue = "84pkt"

[[flows]]
algorithm = "newreno"
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    pytest.importorskip("ccsim._core")
    base = tmp_path_factory.mktemp("badmeta")
    (base / "s.toml").write_text(SCENARIO)
    outcome = CliRunner().invoke(cli, ["run", str(base / "s.toml"), "--out", str(base / "run"), "--no-plots"])
    assert outcome.exit_code == 0, outcome.output
    return base / "run"


def _set(meta: dict, path: tuple, value: object) -> None:
    for key in path[:-1]:
        meta = meta[key]
    meta[path[-1]] = value


# (where, value, what the one line names); each was a TypeError, KeyError or AttributeError
CASES = [
    (("scenario", "duration_ns"), "x", "scenario.duration_ns"),
    (("scenario", "sample_interval_ns"), None, "scenario.sample_interval_ns"),
    (("scenario", "measure_start_ns"), [], "scenario.measure_start_ns"),
    (("scenario", "measure_end_ns"), {}, "scenario.measure_end_ns"),
    (("scenario", "flows"), "x", "scenario.flows"),
    (("scenario", "flows", 0), None, "scenario.flows[0]"),
    (("scenario", "flows", 0), {}, "scenario.flows[0]"),
    (("engine_stats",), "x", "engine_stats"),
    (("engine_stats",), -1, "engine_stats"),
    (("run_summary", "bottleneck_rate_bps"), "x", "run_summary.bottleneck_rate_bps"),
]


@pytest.mark.parametrize("where, value, named", CASES, ids=[f"{'.'.join(map(str, c[0]))}={c[1]!r}" for c in CASES])
def test_a_wrong_type_in_meta_json_is_one_line_exit_2(run_dir: Path, tmp_path: Path, where, value, named) -> None:
    broken = tmp_path / "run"
    shutil.copytree(run_dir, broken)
    meta = json.loads((broken / "meta.json").read_text())
    _set(meta, where, value)
    (broken / "meta.json").write_text(json.dumps(meta))
    outcome = CliRunner().invoke(cli, ["report", str(broken)])
    assert outcome.exit_code == 2, (outcome.output, outcome.exception)
    lines = outcome.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and f"meta.json: {named}" in lines[0], lines
    assert not (broken / "report.html").exists()


def test_an_older_format_is_checked_by_the_keys_the_front_end_reads(run_dir: Path, tmp_path: Path) -> None:
    broken = tmp_path / "run"
    shutil.copytree(run_dir, broken)
    meta = json.loads((broken / "meta.json").read_text())
    meta["scenario"]["ccsim_resolved"] = 1
    meta["scenario"]["duration_ns"] = "x"
    (broken / "meta.json").write_text(json.dumps(meta))
    outcome = CliRunner().invoke(cli, ["report", str(broken)])
    assert outcome.exit_code == 2 and "meta.json: scenario.duration_ns: must be an integer (got str)" in outcome.output


def test_an_intact_meta_json_still_reports(run_dir: Path, tmp_path: Path) -> None:
    good = tmp_path / "run"
    shutil.copytree(run_dir, good)
    outcome = CliRunner().invoke(cli, ["report", str(good)])
    assert outcome.exit_code == 0, outcome.output
    assert (good / "report.html").is_file()
