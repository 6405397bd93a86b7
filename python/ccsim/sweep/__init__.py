"""Parameter sweeps: a base scenario, a grid of overrides, repetitions; one Parquet dataset out.

``run_sweep(plan, out_dir)`` runs every (point, repetition) on a local process pool or a Dask cluster
and writes the dataset (docs/sweeps.md). The package is split by job:

- ``plan``: :class:`SweepPlan` (TOML plans, grid / explicit points, override paths, the seed rule);
- ``execution``: :func:`run_sweep`, :func:`execute_run`, the local pool and Dask executors, resume;
- ``store``: the sweep directory, part files, the consolidated Parquet tables, :func:`load_sweep`;
- ``console``: :func:`print_sweep_summary`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

# Imported on first use: reading and checking a plan (``plan``) needs neither pandas nor pyarrow, so a
# refused plan is refused quickly; running and storing (``execution``, ``store``) load them.
_HOME = {
    "SweepPlan": "plan", "SweepPoint": "plan", "SweepRun": "plan", "SEED_RULE": "plan", "parse_path": "plan",
    "apply_override": "plan", "run_sweep": "execution", "execute_run": "execution", "SweepResult": "store",
    "load_sweep": "store", "consolidate": "store", "summarize": "store", "print_sweep_summary": "console",
    "point_table": "console",
}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        value = getattr(importlib.import_module(f"ccsim.sweep.{_HOME[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ccsim.sweep' has no attribute {name!r}")
