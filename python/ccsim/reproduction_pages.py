"""The reproduction pages (``docs/reproductions/PAPER.md``), written by the runs that made them.

A page is rendered from two inputs, never edited by hand:

* the **template** ``python/ccsim/experiments/pages/PAPER.md``: the prose (set-ups, causes found),
  with placeholders where numbers, tables and figures go;
* the **record** ``docs/reproductions/data/PAPER.json``: what one full run at one ccsim commit
  measured (every claim row of every experiment, the figures it drew) and the verdicts of the same
  experiments in ``--quick`` mode, which the test suite re-computes to notice a stale page.

``ccsim reproduce --paper P --write-pages`` runs the full and the quick experiments and writes both
the record and the page; ``--render-pages`` re-renders the pages from their records after a template
edit; ``--check-pages`` re-runs and lists every difference from the record (and every page that
differs from its rendering). Placeholders:

``{{header}}`` the generated-page notice, commit and command; ``{{tally}}`` the paper's tally;
``{{experiments}}`` a table of its experiments; ``{{setup:EXP}}`` an experiment's set-up (its
description in code); ``{{figures:EXP}}`` its figures; ``{{claims:EXP}}`` its claims table;
``{{ours:EXP:ID}}`` / ``{{verdict:EXP:ID}}`` one claim's value or verdict; ``{{command:EXP}}`` the
command that runs it; in the README's template ``{{tallies}}`` the table of every paper's tally.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from ccsim.errors import CcsimError

__all__ = [
    "TEMPLATES", "DATA_DIR", "source_revision", "record_paper", "write_page", "render_page", "render_readme",
    "tally", "page_problems", "quick_problems", "full_problems", "write_pages", "render_pages",
]

TEMPLATES = Path(__file__).parent / "experiments" / "pages"
DATA_DIR = "data"  # under the pages directory: one PAPER.json per paper
README = "README.md"
# The code whose change can change a number on a page (the pages' templates and docs cannot).
SOURCE_PATHS = ["crates", "python/ccsim", "Cargo.toml", "Cargo.lock", "pyproject.toml",
                ":(exclude)python/ccsim/experiments/pages"]
_PLACEHOLDER = re.compile(r"\{\{([a-z]+)(?::([A-Za-z0-9_]+))?(?::([A-Za-z0-9_#.-]+))?\}\}")


def source_revision(root: Path | None = None) -> dict[str, Any]:
    """The git commit that last changed the engine or front-end code of the checkout ccsim runs from
    (``commit`` None outside a git checkout) and whether that code has uncommitted changes. Docs-only
    commits do not move it, so a page regenerated after committing the pages names the same commit."""
    root = root if root is not None else Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%H", "--", *SOURCE_PATHS],
                                capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no", "--", *SOURCE_PATHS],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return {"commit": None, "dirty": False}
    return {"commit": commit or None, "dirty": bool(dirty)}


def _label_counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["label"]] = counts.get(r["label"], 0) + 1
    return counts


def tally(record: dict[str, Any]) -> dict[str, Any]:
    """Counts over the paper's full-run rows: its own claims (``paper``: reproduced, partly, not, not
    judged), the model-against-simulator checks (``model``) apart, and sensitivity rows (never judged)."""
    rows = [r for e in record["experiments"] for r in e["claims"]]
    paper = [r for r in rows if r.get("kind", "paper") == "paper" and r["label"] != "informative"]
    model = [r for r in rows if r.get("kind") == "model" and r["label"] != "informative"]
    c, m = _label_counts(paper), _label_counts(model)
    return {"claims": len(paper), "reproduced": c.get("agrees", 0), "partly": c.get("partly", 0), "not": c.get("differs", 0),
            "not_judged": c.get("not judged", 0), "model": len(model), "model_agree": m.get("agrees", 0),
            "sensitivity": sum(1 for r in rows if r.get("kind") == "sensitivity"),
            "informative": sum(1 for r in rows if r.get("kind", "paper") != "sensitivity" and r["label"] == "informative")}


def tally_sentence(record: dict[str, Any]) -> str:
    t = tally(record)
    text = f"{t['reproduced']} of {t['claims']} paper claims reproduced, {t['partly']} partly, {t['not']} not"
    if t["not_judged"]:
        text += f", {t['not_judged']} not judged"
    extra = []
    if t["model"]:
        extra.append(f"model checks: {t['model_agree']} of {t['model']} agree")
    if t["sensitivity"]:
        extra.append(f"{t['sensitivity']} sensitivity row{'s' if t['sensitivity'] > 1 else ''}, not counted")
    return text + (f" ({'; '.join(extra)})" if extra else "")


def record_paper(paper: str, experiments: list[Any], full_out: Path, quick_out: Path, command: str,
                 revision: dict[str, Any]) -> dict[str, Any]:
    """The record of one paper from a full run in ``full_out/<experiment>`` and a quick run in
    ``quick_out/<experiment>`` (``ccsim reproduce --paper``'s directories)."""
    entries = []
    for exp in experiments:
        rows = json.loads((full_out / exp.name / "claims.json").read_text(encoding="utf-8"))
        quick = json.loads((quick_out / exp.name / "claims.json").read_text(encoding="utf-8"))
        figures = sorted((p.name for p in (full_out / exp.name).glob("*.png")), key=_natural)
        entries.append({
            "name": exp.name, "title": exp.title, "figure": exp.figure, "source": exp.source, "description": exp.description,
            "figures": [f"{paper}/{_figure_name(paper, exp.name, f)}" for f in figures],
            "claims": rows,
            "quick": {r["id"]: r["label"] for r in quick},
        })
    return {"paper": paper, "ccsim_commit": revision["commit"], "uncommitted_changes": revision["dirty"], "command": command,
            "experiments": entries}


def _figure_name(paper: str, experiment: str, filename: str) -> str:
    """The figure's name in the pages directory: as drawn when it already names its paper (an
    experiment that draws several of the paper's figures names each), else prefixed with the experiment."""
    return filename if filename.startswith(paper + "_") else f"{experiment}_{filename}"


def _natural(name: str) -> list[Any]:
    """Sort key putting fig7 before fig15."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _claims_table(entry: dict[str, Any]) -> str:
    lines = ["| id | claim | paper | ours | rule, fixed before the run | verdict |", "| --- | --- | --- | --- | --- | --- |"]
    for r in entry["claims"]:
        paper = r["paper"] + (f" ({r['where']})" if r.get("where") else "")
        rule = r.get("tolerance") or "-"
        if r.get("reason"):
            rule += f"; why: {r['reason']}"
        kind = r.get("kind", "paper")
        verdict = r["verdict"] or ("shown, not judged" if r["label"] == "informative" else r["label"])
        if kind != "paper":
            verdict = f"{kind}: {verdict}"
        ours = r["ours"] + (f" ({r['error']})" if r.get("error") else "")
        lines.append(f"| {_cell(r['id'])} | {_cell(r['claim'])} | {_cell(paper)} | {_cell(ours)} | {_cell(rule)} | {_cell(verdict)} |")
    return "\n".join(lines)


def _experiments_table(record: dict[str, Any]) -> str:
    lines = ["| experiment | paper figure | the paper's claims in the full run |", "| --- | --- | --- |"]
    for e in record["experiments"]:
        c = _label_counts([r for r in e["claims"] if r.get("kind", "paper") == "paper"])
        parts = [f"{c[k]} {w}" for k, w in (("agrees", "reproduced"), ("partly", "partly"), ("differs", "not reproduced"),
                                              ("not judged", "not judged"), ("informative", "informative")) if c.get(k)]
        model = _label_counts([r for r in e["claims"] if r.get("kind") == "model" and r["label"] != "informative"])
        if model:
            parts.append(f"model checks: {model.get('agrees', 0)} of {sum(model.values())} agree")
        sensitivity = sum(1 for r in e["claims"] if r.get("kind") == "sensitivity")
        if sensitivity:
            parts.append(f"{sensitivity} sensitivity row{'s' if sensitivity > 1 else ''}")
        lines.append(f"| `{e['name']}` | {e['figure'] or '-'} | {', '.join(parts) or 'informative only'} |")
    return "\n".join(lines)


def _header(record: dict[str, Any]) -> str:
    commit = (record["ccsim_commit"] or "unknown (not a git checkout)")[:12]
    if record["uncommitted_changes"]:
        commit += " with uncommitted changes"
    return (f"<!-- Generated by `{record['command']}` from python/ccsim/experiments/pages/{record['paper']}.md and "
            f"data/{record['paper']}.json; edit those and regenerate, never this page. -->\n\n"
            f"Every number, table, figure and verdict on this page comes from one full run at ccsim commit "
            f"`{commit}` (`{record['command']}`). The verdict rules are fixed in code before the run "
            f"(python/ccsim/experiments/); the test suite re-runs every experiment in `--quick` mode and fails "
            f"when a verdict differs from the one recorded with this page.")


def render_page(template: str, record: dict[str, Any], where: str = "template") -> str:
    """The page: ``template`` with every placeholder replaced from ``record``; CcsimError naming an
    unknown placeholder, experiment or claim id."""
    experiments = {e["name"]: e for e in record["experiments"]}

    def claim(name: str, cid: str) -> dict[str, Any]:
        for r in experiment(name)["claims"]:
            if r["id"] == cid:
                return r
        raise CcsimError(f"{where}: experiment {name!r} has no claim {cid!r}")

    def experiment(name: str | None) -> dict[str, Any]:
        if name not in experiments:
            raise CcsimError(f"{where}: no experiment {name!r} in the record of {record['paper']!r}")
        return experiments[name]

    def replace(m: re.Match[str]) -> str:
        key, name, cid = m.group(1), m.group(2), m.group(3)
        if key == "header":
            return _header(record)
        if key == "tally":
            return f"**{tally_sentence(record)}.**"
        if key == "experiments":
            return _experiments_table(record)
        if key == "setup":
            return experiment(name)["description"]
        if key == "figures":
            return "\n\n".join(f"![{experiment(name)['figure'] or name}]({f})" for f in experiment(name)["figures"])
        if key == "claims":
            return _claims_table(experiment(name))
        if key == "command":
            return f"`ccsim reproduce {experiment(name)['name']}`"
        if key in ("ours", "verdict") and cid is not None:
            r = claim(name or "", cid)
            return r["ours"] if key == "ours" else (r["verdict"] or r["label"])
        raise CcsimError(f"{where}: unknown placeholder {m.group(0)!r}")

    text = _PLACEHOLDER.sub(replace, template)
    if "{{" in text:
        raise CcsimError(f"{where}: malformed placeholder near {text[text.index('{{'):][:40]!r}")
    return text.rstrip("\n") + "\n"


def _records(pages_dir: Path) -> dict[str, dict[str, Any]]:
    data = pages_dir / DATA_DIR
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(data.glob("*.json"))} if data.is_dir() else {}


def render_readme(pages_dir: Path) -> str:
    """The README of the pages directory from its template, with ``{{tallies}}`` the table of every
    recorded paper's tally."""
    lines = ["| paper | page | tally of the full run | commit |", "| --- | --- | --- | --- |"]
    for paper, record in _records(pages_dir).items():
        lines.append(f"| {paper} | [{paper}.md]({paper}.md) | {tally_sentence(record)} | `{(record['ccsim_commit'] or 'unknown')[:12]}` |")
    template = (TEMPLATES / README).read_text(encoding="utf-8")
    return template.replace("{{tallies}}", "\n".join(lines)).rstrip("\n") + "\n"


def _write_text(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def write_page(pages_dir: Path, record: dict[str, Any], full_out: Path) -> Path:
    """Writes the record, the paper's figures (replacing those the previous record listed) and the
    rendered page into ``pages_dir``; returns the page's path. Rendering is checked before anything
    is written. The README's tallies are :func:`write_pages`'s to write, once for all papers."""
    paper = record["paper"]
    template_path = TEMPLATES / f"{paper}.md"
    if not template_path.is_file():
        raise CcsimError(f"--write-pages: no page template for paper {paper!r} ({template_path})")
    page = render_page(template_path.read_text(encoding="utf-8"), record, where=str(template_path))
    (pages_dir / DATA_DIR).mkdir(parents=True, exist_ok=True)
    (pages_dir / paper).mkdir(exist_ok=True)
    old = _records(pages_dir).get(paper)
    for f in (old or {}).get("experiments", []):
        for fig in f["figures"]:
            if (pages_dir / fig).is_file():
                (pages_dir / fig).unlink()
    for e in record["experiments"]:
        for src in sorted((full_out / e["name"]).glob("*.png")):
            shutil.copyfile(src, pages_dir / paper / _figure_name(paper, e["name"], src.name))
    _write_text(pages_dir / DATA_DIR / f"{paper}.json", json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    _write_text(pages_dir / f"{paper}.md", page)
    return pages_dir / f"{paper}.md"


def render_pages(pages_dir: Path) -> list[Path]:
    """Re-renders every recorded paper's page (and the README) from its record and template."""
    written = []
    for paper, record in _records(pages_dir).items():
        template_path = TEMPLATES / f"{paper}.md"
        _write_text(pages_dir / f"{paper}.md", render_page(template_path.read_text(encoding="utf-8"), record, where=str(template_path)))
        written.append(pages_dir / f"{paper}.md")
    if (TEMPLATES / README).is_file():
        _write_text(pages_dir / README, render_readme(pages_dir))
    return written


def page_problems(pages_dir: Path) -> list[str]:
    """Every page (and the README) that differs from what its template and record render: a hand
    edit, or a template changed without re-rendering. Also a record made from uncommitted code, and
    a template without a record."""
    problems = []
    records = _records(pages_dir)
    for template in sorted(TEMPLATES.glob("*.md")):
        if template.name != README and template.stem not in records:
            problems.append(f"{template.stem}: no record {pages_dir / DATA_DIR / (template.stem + '.json')}: run ccsim reproduce --paper {template.stem} --write-pages")
    for paper, record in records.items():
        page = pages_dir / f"{paper}.md"
        template = TEMPLATES / f"{paper}.md"
        if not template.is_file():
            problems.append(f"{paper}: a record without a template ({template})")
            continue
        expected = render_page(template.read_text(encoding="utf-8"), record, where=str(template))
        if not page.is_file() or page.read_text(encoding="utf-8") != expected:
            problems.append(f"{page}: differs from its rendering (edited by hand, or the template changed): run ccsim reproduce --render-pages")
        if record["uncommitted_changes"]:
            problems.append(f"{paper}: recorded from code with uncommitted changes: regenerate from a clean checkout")
        for e in record["experiments"]:
            for fig in e["figures"]:
                if not (pages_dir / fig).is_file():
                    problems.append(f"{paper}: figure {fig} is missing")
    if records and (TEMPLATES / README).is_file():
        readme = pages_dir / README
        if not readme.is_file() or readme.read_text(encoding="utf-8") != render_readme(pages_dir):
            problems.append(f"{readme}: differs from its rendering: run ccsim reproduce --render-pages")
    return problems


def _compare(pages_dir: Path, out: Path, papers: list[str] | None, quick: bool) -> list[str]:
    problems = []
    for paper, record in _records(pages_dir).items():
        if papers is not None and paper not in papers:
            continue
        for e in record["experiments"]:
            path = out / e["name"] / "claims.json"
            if not path.is_file():
                problems.append(f"{paper}: {e['name']} was not run")
                continue
            rows = {r["id"]: r for r in json.loads(path.read_text(encoding="utf-8"))}
            recorded = e["quick"] if quick else {r["id"]: r for r in e["claims"]}
            for cid in sorted(set(rows) | set(recorded)):
                if cid not in rows or cid not in recorded:
                    problems.append(f"{paper}: {e['name']} claim {cid}: {'new' if cid in rows else 'gone'} since the page was written")
                    continue
                if quick:
                    if rows[cid]["label"] != recorded[cid]:
                        problems.append(f"{paper}: {e['name']} claim {cid}: --quick verdict now {rows[cid]['label']!r}, "
                                        f"recorded {recorded[cid]!r}: the page is stale, regenerate it")
                else:
                    for key in ("ours", "label", "verdict"):
                        if rows[cid][key] != recorded[cid][key]:
                            problems.append(f"{paper}: {e['name']} claim {cid}: {key} now {rows[cid][key]!r}, on the page {recorded[cid][key]!r}")
    return problems


def quick_problems(pages_dir: Path, quick_out: Path, papers: list[str] | None = None) -> list[str]:
    """Every claim whose verdict in the quick run in ``quick_out/<experiment>`` differs from the one
    recorded with its page."""
    return _compare(pages_dir, quick_out, papers, quick=True)


def full_problems(pages_dir: Path, full_out: Path, papers: list[str] | None = None) -> list[str]:
    """Every claim whose value or verdict in the full run in ``full_out/<experiment>`` differs from its page."""
    return _compare(pages_dir, full_out, papers, quick=False)


def write_pages(papers: list[str], pages_dir: Path, full_out: Path, quick_out: Path) -> list[Path]:
    """Records and renders each paper from finished full and quick runs (``reproduce_many``'s
    directories), then the README's tallies. Each record names the command that regenerates its page
    alone, so ``--all`` and ``--paper`` write the same pages."""
    from ccsim import experiments as registry  # lazy: the registry imports pandas

    if not pages_dir.is_dir():
        raise CcsimError(f"--pages: {pages_dir} is not a directory (the repository's docs/reproductions)")
    revision = source_revision()
    written = []
    for paper in papers:
        command = f"ccsim reproduce --paper {paper} --write-pages"
        record = record_paper(paper, registry.of_paper(paper), full_out, quick_out, command, revision)
        written.append(write_page(pages_dir, record, full_out))
    if (TEMPLATES / README).is_file():
        _write_text(pages_dir / README, render_readme(pages_dir))
    return written
