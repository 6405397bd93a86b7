"""Runs per second of a sweep with --jobs 1 and --jobs 2, each in a fresh process.

    python benchmarks/sweep_jobs.py [PLAN] [--repeat N]      # default examples/sweep_loss.toml, 3

Prints, per job count, the median over the repeats of
- the whole process (Python start-up, imports, plan, runs, consolidation): wall and CPU seconds
  (CPU includes the workers), and runs per wall-clock second of the whole command;
- the run phase only: from the call of ``run_sweep`` to the last run's part file (worker start-up
  included, imports and the final consolidation not), as runs per wall-clock second;
- the serial parts, which a second job cannot shorten: start-up (Python, imports, reading the
  plan: wall time before ``run_sweep``) and the end (consolidation: from the last run to the
  return of ``run_sweep``).

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
import json, resource, sys, time
def cpu(who):
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime
try:
    from ccsim.result import defer_pandas_in_pyarrow
except ImportError:  # a ccsim older than this script
    defer_pandas_in_pyarrow = lambda: None
from ccsim.sweep import run_sweep
from ccsim.sweep.plan import SweepPlan
plan = SweepPlan.from_toml(sys.argv[1])
defer_pandas_in_pyarrow()  # as `ccsim sweep` does
last = []
cpu_last = []
def on_run(_):
    last.append(time.perf_counter())
    cpu_last.append(cpu(resource.RUSAGE_SELF))
cpu_start = cpu(resource.RUSAGE_SELF)
start = time.perf_counter()
result = run_sweep(plan, sys.argv[2], jobs=int(sys.argv[3]), progress=False, on_run=on_run)
end = time.perf_counter()
print(json.dumps({"runs": len(result.executed), "phase_s": max(last) - start, "end_s": end - max(last), "start": time.time() - (end - start),
                  "cpu_startup": cpu_start, "cpu_phase": cpu_last[-1] - cpu_start, "cpu_end": cpu(resource.RUSAGE_SELF) - cpu_last[-1],
                  "cpu_workers": cpu(resource.RUSAGE_CHILDREN)}))
"""


def one(plan: str, jobs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="ccsim-sweep-jobs-") as tmp:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        launched = time.time()
        out = subprocess.run([sys.executable, "-c", CHILD, plan, str(Path(tmp) / "sweep"), str(jobs)],
                             check=True, capture_output=True, text=True)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"runs": doc["runs"], "wall_s": wall, "cpu_s": cpu, "phase_s": doc["phase_s"],
            "startup_s": doc["start"] - launched, "end_s": doc["end_s"], "cpu_startup": doc["cpu_startup"],
            "cpu_phase": doc["cpu_phase"], "cpu_end": doc["cpu_end"], "cpu_workers": doc["cpu_workers"]}


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
    print("| jobs | runs | wall s | CPU s | runs/s (whole command) | run phase s | runs/s (run phase) | start-up s | end s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    med = {}
    for jobs, samples in rows.items():
        m = {k: statistics.median(s[k] for s in samples) for k in samples[0]}
        med[jobs] = m
        print(f"| {jobs} | {m['runs']:.0f} | {m['wall_s']:.2f} | {m['cpu_s']:.2f} | {m['runs'] / m['wall_s']:.1f} | "
              f"{m['phase_s']:.2f} | {m['runs'] / m['phase_s']:.1f} | {m['startup_s']:.2f} | {m['end_s']:.2f} |")
    print()
    print("CPU seconds (load-insensitive, unlike wall time), medians: | jobs | start-up (sweep process) | run phase, sweep process | "
          "workers (all) | end (consolidation) |")
    for jobs, m in med.items():
        print(f"| {jobs} | {m['cpu_startup']:.2f} | {m['cpu_phase']:.2f} | {m['cpu_workers']:.2f} | {m['cpu_end']:.2f} |")
    # On two idle cores: the serial parts run alone; with two jobs the run phase takes at least
    # half the CPU of the workers and the sweep process together, and at least each one's share.
    serial = {j: m["cpu_startup"] + m["cpu_end"] for j, m in med.items()}
    runs1 = med[1]["cpu_phase"] + med[1]["cpu_workers"]
    runs2 = max(med[2]["cpu_workers"] / 2, med[2]["cpu_phase"], (med[2]["cpu_workers"] + med[2]["cpu_phase"]) / 2)
    ideal1, ideal2 = serial[1] + runs1, serial[2] + runs2
    print(f"on two idle cores (CPU-bound, no waiting): jobs 1 {ideal1:.2f} s, jobs 2 {ideal2:.2f} s: whole command "
          f"{ideal1 / ideal2:.2f}x; run phase {runs1 / runs2:.2f}x (serial part {serial[1]:.2f} s)")
    print(f"jobs 2 / jobs 1, runs per second: whole command {med[1]['wall_s'] / med[2]['wall_s']:.2f}x, "
          f"run phase {med[1]['phase_s'] / med[2]['phase_s']:.2f}x; CPU of jobs 2 - jobs 1: {med[2]['cpu_s'] - med[1]['cpu_s']:+.2f} s")


if __name__ == "__main__":
    main()
