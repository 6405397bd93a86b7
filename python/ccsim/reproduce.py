"""``ccsim reproduce NAME``: run a registered experiment's sweep, draw its figures, write its report.

It sits above both the experiment registry (``ccsim.experiments``) and the report (``ccsim.report``),
which reads the registry to add an experiment's figures and claims to a sweep's page.
"""

from __future__ import annotations

import json
from pathlib import Path

from ccsim.experiments import EXPERIMENT_FILE, Experiment, get
from ccsim.errors import CcsimError
from ccsim.outdir import record_files, tree_files, writer_lock
from ccsim.report import write_report
from ccsim.sweep import run_sweep
from ccsim.sweep.store import check_sweep_dir

__all__ = ["reproduce", "default_out"]


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
        # what the figures and the report added is ccsim's too: a later --force may replace it
        record_files(out, [EXPERIMENT_FILE, *sorted(set(tree_files(out)) - before)], skip_known=True)
    return out
