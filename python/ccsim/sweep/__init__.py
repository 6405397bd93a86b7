"""Parameter sweeps: a base scenario, a grid of overrides, repetitions; one Parquet dataset out.

``run_sweep(plan, out_dir)`` runs every (point, repetition) on a local process pool or a Dask cluster
and writes the dataset (docs/sweeps.md). The package is split by job:

- ``plan``: :class:`SweepPlan` (TOML plans, grid / explicit points, override paths, the seed rule);
- ``execution``: :func:`run_sweep`, :func:`execute_run`, the local pool and Dask executors, resume;
- ``store``: the sweep directory, part files, the consolidated Parquet tables, :func:`load_sweep`;
- ``console``: :func:`print_sweep_summary`.
"""

from __future__ import annotations

from ccsim.sweep.console import point_table, print_sweep_summary
from ccsim.sweep.execution import execute_run, run_sweep
from ccsim.sweep.plan import SEED_RULE, SweepPlan, SweepPoint, SweepRun, apply_override, parse_path
from ccsim.sweep.store import SweepResult, consolidate, load_sweep, summarize

__all__ = [
    "SweepPlan",
    "SweepPoint",
    "SweepRun",
    "SweepResult",
    "run_sweep",
    "load_sweep",
    "execute_run",
    "print_sweep_summary",
    "SEED_RULE",
    "parse_path",
    "apply_override",
    "consolidate",
    "summarize",
    "point_table",
]
