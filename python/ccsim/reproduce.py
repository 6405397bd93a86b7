"""``ccsim reproduce NAME``: run a registered experiment's sweep, draw its figures, write its report.

It sits above both the experiment registry (``ccsim.experiments``) and the report (``ccsim.report``),
which reads the registry to add an experiment's figures and claims to a sweep's page.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from ccsim.experiments import EXPERIMENT_FILE, Experiment, get
from ccsim.errors import CcsimError
from ccsim.outdir import record_files, tree_files, writer_lock
from ccsim.report import claim_rows, write_report
from ccsim.sweep import run_sweep
from ccsim.sweep.store import check_sweep_dir

__all__ = ["reproduce", "reproduce_many", "default_out", "CLAIMS_FILE", "SUMMARY_FILE"]

CLAIMS_FILE = "claims.md"  # the claims table of one experiment, beside its figures
SUMMARY_FILE = "summary.md"  # the verdicts of every experiment of a --paper / --all run


def default_out(name: str, quick: bool = False) -> Path:
    """``runs/reproduce/<name>`` (``<name>-quick`` with ``--quick``)."""
    return Path("runs") / "reproduce" / (f"{name}-quick" if quick else name)


def reproduce(
    name: str | Experiment,
    out: str | Path | None = None,
    *,
    jobs: int | None = None,
    cluster: str | None = None,
    quick: bool = False,
    force: bool = False,
    resume: bool = False,
    progress: bool = True,
) -> Path:
    """Runs the experiment's sweep into ``out`` with a progress bar, draws its figures there and writes
    ``out/report.html`` with the claims table. Returns ``out``.

    The sweep directory follows ``ccsim sweep``'s rules (an existing one is refused unless ``force``
    or ``resume``); ``experiment.json`` records which experiment (and whether ``quick``) so that
    ``ccsim report out`` can redraw the same page later.
    """
    experiment = name if isinstance(name, Experiment) else get(name)
    out = Path(out) if out is not None else default_out(experiment.name, quick)
    plan = experiment.plan(quick)
    check_sweep_dir(out, resume=resume, force=force, plan=plan)  # before creating anything
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise CcsimError(f"{out}: cannot create the output directory ({e.strerror or e.__class__.__name__})") from None
    with writer_lock(out):  # the sweep, the figures and the report: one writer throughout
        sweep_result = run_sweep(plan, out, jobs=jobs, cluster=cluster, resume=resume, progress=progress, force=force)
        doc = {"name": experiment.name, "title": experiment.title, "source": experiment.source, "quick": bool(quick)}
        before = set(tree_files(out))
        (out / EXPERIMENT_FILE).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        experiment.figures(sweep_result, out)
        write_report(out, experiment=experiment)
        write_claims(experiment, sweep_result, out)
        # what the figures and the report added is ccsim's too: a later --force may replace it
        record_files(out, [EXPERIMENT_FILE, *sorted(set(tree_files(out)) - before)], skip_known=True)
    return out


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def claims_markdown(experiment: Experiment, rows: list[dict[str, str]]) -> str:
    lines = [f"## {experiment.name}: {experiment.title}", "",
             "| claim | paper | ours | tolerance | verdict |", "| --- | --- | --- | --- | --- |"]
    for r in rows:
        ours = r["ours"] + (f" ({r['error']})" if r["error"] else "")
        lines.append(f"| {_cell(r['claim'])} | {_cell(r['paper'])} | {_cell(ours)} | {_cell(r['tolerance'])} | {_cell(r['verdict'])} |")
    return "\n".join(lines) + "\n"


def write_claims(experiment: Experiment, sweep_result, out: Path) -> list[dict[str, str]]:
    """Writes ``claims.md`` and ``claims.json`` (the claims table with tolerance and verdict)."""
    rows = claim_rows(experiment, sweep_result)
    (out / CLAIMS_FILE).write_text(claims_markdown(experiment, rows), encoding="utf-8")
    (out / "claims.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    return rows


def reproduce_many(
    experiments: list[Experiment],
    out: str | Path,
    *,
    jobs: int | None = None,
    quick: bool = False,
    force: bool = False,
    resume: bool = False,
    progress: bool = True,
) -> Path:
    """Runs each experiment into ``out/<name>`` and writes ``out/summary.md``: a verdict count per paper
    on top, then every experiment's figures and claims table. Returns ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    sections, counts, walls = [], {}, {}
    for i, experiment in enumerate(experiments, 1):
        if progress:
            print(f"[{i}/{len(experiments)}] {experiment.name}", flush=True)
        start = time.monotonic()
        sub = reproduce(experiment, out / experiment.name, jobs=jobs, quick=quick, force=force, resume=resume, progress=progress)
        walls[experiment.name] = time.monotonic() - start
        rows = json.loads((sub / "claims.json").read_text(encoding="utf-8"))
        key = experiment.paper_key or "other"
        tally = counts.setdefault(key, {"agrees": 0, "partly": 0, "differs": 0, "not judged": 0, "informative": 0})
        for r in rows:
            tally[r["label"]] += 1
        figures = sorted(p.name for p in sub.glob("*.png"))
        sections.append(claims_markdown(experiment, rows)
                        + f"\nFigure {experiment.figure or '-'} of {experiment.source}; wall time {walls[experiment.name]:.0f} s.\n\n"
                        + "".join(f"![{f}]({experiment.name}/{f})\n" for f in figures))
    head = ["# Reproductions" + (" (quick)" if quick else ""), "", "| paper | agrees | partly | differs | not judged | informative | wall time (s) |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for key, t in sorted(counts.items()):
        wall = sum(w for n, w in walls.items() if (get(n).paper_key or "other") == key)
        head.append(f"| {key} | {t['agrees']} | {t['partly']} | {t['differs']} | {t['not judged']} | {t['informative']} | {wall:.0f} |")
    (out / SUMMARY_FILE).write_text("\n".join(head) + "\n\n" + "\n".join(sections), encoding="utf-8")
    return out
