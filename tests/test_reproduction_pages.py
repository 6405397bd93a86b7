"""The reproduction pages (issue 28): written by the runs, checked against a fresh --quick run and
against their own rendering, so that a stale or hand-edited page fails the suite."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ccsim import experiments, reproduction_pages
from ccsim.cli import cli
from ccsim.errors import CcsimError
from ccsim.experiments.registry import CLAIM_KINDS, Claim, Verdict

PAGES = Path(__file__).resolve().parents[1] / "docs" / "reproductions"


@pytest.fixture(scope="module")
def core():
    return pytest.importorskip("ccsim._core")


def test_every_page_is_what_its_template_and_record_render():
    assert reproduction_pages.page_problems(PAGES) == []


def test_a_verdict_changed_by_hand_on_a_page_is_caught(tmp_path):
    pages = tmp_path / "reproductions"
    shutil.copytree(PAGES, pages)
    record = json.loads(next((pages / "data").glob("*.json")).read_text())
    page = pages / f"{record['paper']}.md"
    text = page.read_text()
    judged = next(r for e in record["experiments"] for r in e["claims"] if r["verdict"] and r["verdict"] in text)
    flipped = judged["verdict"].replace("differs", "agrees", 1) if judged["label"] == "differs" else "differs: edited"
    page.write_text(text.replace(judged["verdict"], flipped, 1))
    assert any("differs from its rendering" in p for p in reproduction_pages.page_problems(pages))


def test_a_record_changed_by_hand_no_longer_matches_its_page(tmp_path):
    pages = tmp_path / "reproductions"
    shutil.copytree(PAGES, pages)
    path = next((pages / "data").glob("*.json"))
    record = json.loads(path.read_text())
    row = record["experiments"][0]["claims"][0]
    row["ours"] = row["ours"] + " (edited)"
    path.write_text(json.dumps(record))
    assert any("differs from its rendering" in p for p in reproduction_pages.page_problems(pages))


def _record(labels: list[tuple[str, str, str]]) -> dict:
    rows = [{"id": f"C{i}", "claim": f"claim {i}", "paper": "p", "ours": f"{i}", "tolerance": "t", "verdict": v, "label": lab,
             "where": "", "error": "", "kind": kind, "reason": "r"} for i, (lab, v, kind) in enumerate(labels, 1)]
    return {"paper": "x", "ccsim_commit": "abc", "uncommitted_changes": False, "command": "ccsim reproduce --paper x --write-pages",
            "experiments": [{"name": "x_fig1", "title": "t", "figure": "Fig. 1", "source": "s", "description": "the set-up",
                             "figures": ["x/x_fig1_a.png"], "claims": rows, "quick": {r["id"]: r["label"] for r in rows}}]}


def test_the_tally_counts_paper_claims_apart_from_model_checks_and_sensitivity_rows():
    record = _record([("agrees", "agrees", "paper"), ("partly", "partly: sign only", "paper"), ("differs", "differs: x", "paper"),
                      ("agrees", "agrees", "model"), ("informative", "", "sensitivity"), ("differs", "differs", "model")])
    t = reproduction_pages.tally(record)
    assert (t["claims"], t["reproduced"], t["partly"], t["not"]) == (3, 1, 1, 1)
    assert (t["model"], t["model_agree"], t["sensitivity"]) == (2, 1, 1)
    assert reproduction_pages.tally_sentence(record).startswith("1 of 3 paper claims reproduced, 1 partly, 1 not")


def test_placeholders_render_and_unknown_ones_are_refused():
    record = _record([("agrees", "agrees: within 1", "paper")])
    page = reproduction_pages.render_page("{{header}}\n{{setup:x_fig1}} {{ours:x_fig1:C1}} {{verdict:x_fig1:C1}}\n{{claims:x_fig1}}", record)
    assert "the set-up 1 agrees: within 1" in page and "| C1 | claim 1 |" in page and "`abc`" in page
    for bad in ("{{nope}}", "{{claims:x_fig9}}", "{{ours:x_fig1:C7}}", "{{claims:x_fig1"):
        with pytest.raises(CcsimError):
            reproduction_pages.render_page(bad, record)


def test_quick_verdicts_that_differ_from_the_record_are_named(tmp_path):
    record = _record([("agrees", "agrees", "paper"), ("differs", "differs", "paper")])
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.json").write_text(json.dumps(record))
    run = tmp_path / "run" / "x_fig1"
    run.mkdir(parents=True)
    rows = [dict(r) for r in record["experiments"][0]["claims"]]
    rows[1]["label"] = "agrees"
    (run / "claims.json").write_text(json.dumps(rows))
    problems = reproduction_pages.quick_problems(tmp_path, tmp_path / "run")
    assert len(problems) == 1 and "claim C2" in problems[0] and "'agrees'" in problems[0]
    rows[1]["label"] = "differs"
    (run / "claims.json").write_text(json.dumps(rows))
    assert reproduction_pages.quick_problems(tmp_path, tmp_path / "run") == []
    rows[0]["ours"] = "other"
    (run / "claims.json").write_text(json.dumps(rows))
    assert any("ours now 'other'" in p for p in reproduction_pages.full_problems(tmp_path, tmp_path / "run"))


@pytest.mark.parametrize("paper", experiments.papers())
def test_every_judged_paper_claim_declares_its_id_rule_and_reason(paper):
    """Issue 28, build 3: each verdict rule is declared with the claim, with a reason tied to the paper."""
    missing = []
    for exp in experiments.of_paper(paper):
        ids = [c.id for c in exp.claims]
        assert len(set(ids)) == len(ids), f"{exp.name}: claim ids repeat: {ids}"
        for c in exp.claims:
            assert c.kind in CLAIM_KINDS
            if c.verdict is not None and not (c.id and c.tolerance and c.reason):
                missing.append(f"{exp.name}: {c.description}")
    assert missing == []


def test_a_partly_verdict_is_its_own_label():
    assert Verdict.from_text("partly: the sign holds").label == "partly"
    assert Verdict(False, "x", partly=True).label == "partly" and Verdict(True, "x", partly=True).label == "agrees"
    with pytest.raises(ValueError):
        Claim("d", "p", lambda s: 1, kind="best-of")


def test_write_pages_refuses_quick_and_needs_a_paper(tmp_path):
    runner = CliRunner()
    r = runner.invoke(cli, ["reproduce", "--write-pages", "--paper", "chd", "--quick", "--pages", str(tmp_path)])
    assert r.exit_code == 2 and "--write-pages" in r.stderr
    r = runner.invoke(cli, ["reproduce", "chd_fig5", "--write-pages", "--pages", str(tmp_path)])
    assert r.exit_code == 2 and "--paper KEY or --all" in r.stderr
    r = runner.invoke(cli, ["reproduce", "--check-pages", "--paper", "chd", "--pages", str(tmp_path / "nope")])
    assert r.exit_code == 2 and "--pages" in r.stderr
    assert not (tmp_path / "nope").exists()
