"""One sanitising rule for user strings in everything ccsim writes for people (docs/safety.md, "User
strings in output"): no raw control or bidi character in figures (nor in matplotlib's warnings about
them), report.html or SVGs; no spreadsheet formula in compare.csv."""

from __future__ import annotations

import csv
import warnings
from pathlib import Path

import pytest
import tomli_w
from click.testing import CliRunner

from ccsim.cli import cli
from ccsim.text import safe_csv_cell, safe_text

NAMES = ["good\u202egnp.exe", "a\x1b]0;x\x07b", '=HYPERLINK("x")']
RAW = ("\u202e", "\x1b", "\x07")

SCENARIO = tomli_w.dumps({
    "run": {"duration": "1s"},
    "topology": {"kind": "dumbbell", "bottleneck_rate": "10Mbit", "bottleneck_delay": "20ms", "queue": "84pkt"},
    "flows": [{"algorithm": "newreno", "name": name} for name in NAMES],
})


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory) -> Path:
    pytest.importorskip("ccsim._core")
    base = tmp_path_factory.mktemp("hygiene")
    scenario = base / "hostile.toml"
    scenario.write_text(SCENARIO)
    out = base / "run"
    outcome = CliRunner().invoke(cli, ["run", str(scenario), "--out", str(out), "--no-plots"])
    assert outcome.exit_code == 0, outcome.output
    return out


def test_the_scenario_really_holds_the_raw_names(hostile_run: Path) -> None:
    import ccsim

    assert list(ccsim.Result.load(hostile_run).summary["name"]) == NAMES


def test_figures_and_their_warnings_hold_no_raw_control_character(hostile_run: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcome = CliRunner().invoke(cli, ["plot", str(hostile_run), "--format", "svg"])
        report = CliRunner().invoke(cli, ["report", str(hostile_run)])  # draws its own figures too
    assert outcome.exit_code == 0 and report.exit_code == 0, outcome.output + report.output
    messages = [str(w.message) for w in caught]
    assert not [m for m in messages if any(c in m for c in RAW)], messages
    svgs = sorted(hostile_run.glob("*.svg"))
    assert svgs
    for path in svgs:
        text = path.read_text(encoding="utf-8")
        assert not any(c in text for c in RAW), path.name
    assert any("good\\u202egnp.exe" in p.read_text(encoding="utf-8") for p in svgs)  # shown, escaped


def test_report_html_holds_no_raw_control_character(hostile_run: Path) -> None:
    outcome = CliRunner().invoke(cli, ["report", str(hostile_run)])
    assert outcome.exit_code == 0, outcome.output
    page = (hostile_run / "report.html").read_text(encoding="utf-8")
    assert not any(c in page for c in RAW)
    assert "good\\u202egnp.exe" in page and "a\\x1b]0;x\\x07b" in page


def test_compare_csv_writes_no_formula_and_no_raw_character(hostile_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    outcome = CliRunner().invoke(cli, ["compare", str(hostile_run), str(hostile_run), "--out", str(out), "--no-plots"])
    assert outcome.exit_code == 0, outcome.output
    with open(out / "compare.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    cells = [cell for row in rows for cell in row]
    assert not any(c in cell for cell in cells for c in RAW)
    assert not [cell for cell in cells if cell.startswith(("=", "+", "@")) or (cell.startswith("-") and not _number(cell))]
    assert "'=HYPERLINK(\"x\")" in cells and "good\\u202egnp.exe" in cells


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_the_rule() -> None:
    assert safe_text("good\u202egnp.exe") == "good\\u202egnp.exe"
    assert safe_text("a\nb", keep="\n") == "a\nb" and safe_text("a\nb") == "a\\x0ab"
    assert [safe_csv_cell(v) for v in ("=1+1", "+1", "-x", "@SUM(A1)", "ok", "\x1b=1")] == \
        ["'=1+1", "'+1", "'-x", "'@SUM(A1)", "ok", "\\x1b=1"]
    assert safe_csv_cell(-1.5) == -1.5 and safe_csv_cell(None) is None


def test_the_notebook_view_holds_no_raw_control_character(hostile_run: Path) -> None:
    import ccsim

    page = ccsim.Result.load(hostile_run)._repr_html_()
    assert not any(c in page for c in RAW) and "good\\u202egnp.exe" in page
