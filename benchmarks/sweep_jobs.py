"""Runs per second of a sweep with --jobs 1 and --jobs 2, each in a fresh process.

    python benchmarks/sweep_jobs.py [PLAN] [--repeat N]      # default examples/sweep_loss.toml, 3

Prints, per job count, the median over the repeats of
- the whole process (Python start-up, imports, plan, runs, consolidation): wall and CPU seconds
  (CPU includes the workers), and runs per wall-clock second of the whole command;
- the run phase only: from the call of ``run_sweep`` to the last run's part file (worker start-up
  included, imports and the final consolidation not), as runs per wall-clock second.

On a shared machine quote the ratio of medians, and the load average it prints.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import json, sys, time
try:
    from ccsim.result import defer_pandas_in_pyarrow
except ImportError:  # a ccsim older than this script
    defer_pandas_in_pyarrow = lambda: None
from ccsim.sweep import run_sweep
from ccsim.sweep.plan import SweepPlan
plan = SweepPlan.from_toml(sys.argv[1])
defer_pandas_in_pyarrow()  # as `ccsim sweep` does
last = []
start = time.perf_counter()
result = run_sweep(plan, sys.argv[2], jobs=int(sys.argv[3]), progress=False, on_run=lambda _: last.append(time.perf_counter()))
print(json.dumps({"runs": len(result.executed), "phase_s": max(last) - start}))
"""


def one(plan: str, jobs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="ccsim-sweep-jobs-") as tmp:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", CHILD, plan, str(Path(tmp) / "sweep"), str(jobs)],
                             check=True, capture_output=True, text=True)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"runs": doc["runs"], "wall_s": wall, "cpu_s": cpu, "phase_s": doc["phase_s"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("plan", nargs="?", default="examples/sweep_loss.toml")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs; {args.plan}; median of {args.repeat}")
    rows = {}
    for _ in range(args.repeat):  # interleaved, so a change in the machine's load hits both alike
        for jobs in (1, 2):
            rows.setdefault(jobs, []).append(one(args.plan, jobs))
    print("| jobs | runs | wall s | CPU s | runs/s (whole command) | run phase s | runs/s (run phase) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    med = {}
    for jobs, samples in rows.items():
        m = {k: statistics.median(s[k] for s in samples) for k in samples[0]}
        med[jobs] = m
        print(f"| {jobs} | {m['runs']:.0f} | {m['wall_s']:.2f} | {m['cpu_s']:.2f} | {m['runs'] / m['wall_s']:.1f} | "
              f"{m['phase_s']:.2f} | {m['runs'] / m['phase_s']:.1f} |")
    print(f"jobs 2 / jobs 1, runs per second: whole command {med[1]['wall_s'] / med[2]['wall_s']:.2f}x, "
          f"run phase {med[1]['phase_s'] / med[2]['phase_s']:.2f}x")


if __name__ == "__main__":
    main()
