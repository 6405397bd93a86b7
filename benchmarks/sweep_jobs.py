"""Runs per second of a sweep with --jobs 1 and --jobs 2, each in a fresh process.

    python benchmarks/sweep_jobs.py [PLAN] [--repeat N] [--python PYTHON ...]   # default examples/sweep_loss.toml, 3

Runs ``ccsim -q sweep PLAN --out DIR --jobs J`` (the command itself, ``ccsim.cli.main``, in a fresh
process, with its call of ``run_sweep`` timed) and prints, per job count, the median over the
repeats of
- the whole process (Python start-up, imports, plan, runs, consolidation, the printed summary):
  wall and CPU seconds (CPU includes the workers), and runs per wall-clock second;
- the run phase only: from the call of ``run_sweep`` to the last run's result (worker start-up
  included, imports and the final consolidation not), as runs per wall-clock second;
- the serial parts, which a second job cannot shorten: start-up (Python, imports, reading the
  plan: wall time before ``run_sweep``) and the end (consolidation and the printed summary).

``--python`` runs another installation's interpreter; given twice (before and after), both are run
interleaved, so a change in the machine's load hits both alike.
On a shared machine quote the ratio of medians, the CPU seconds and the load average it prints.
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
import json, os, resource, sys, time
def cpu(who=resource.RUSAGE_SELF):
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime
plan, out, jobs, report = sys.argv[1:5]
forks = []
os.register_at_fork(after_in_parent=lambda: forks.append(1))
marks, last = {}, []
import ccsim.sweep  # the package only (the plan's module loads on first use)
def run_sweep(*args, **kwargs):  # the command's own call, timed: what ccsim.cli calls
    from ccsim.sweep.execution import run_sweep as real
    def on_run(_):
        last.append((time.perf_counter(), cpu()))
    marks["start"] = (time.perf_counter(), cpu(), time.time())
    return real(*args, on_run=on_run, **kwargs)
ccsim.sweep.run_sweep = run_sweep
from ccsim.cli import main
try:
    main(["-q", "sweep", plan, "--out", out, "--jobs", jobs])
except SystemExit as e:
    assert not e.code, e.code
end, cpu_end = time.perf_counter(), cpu()
(start, cpu_start, start_epoch), (last_t, last_cpu) = marks["start"], max(last)
with open(report, "w") as f:
    json.dump({"runs": len(last), "phase_s": last_t - start, "end_s": end - last_t, "start": start_epoch,
               "cpu_startup": cpu_start, "cpu_phase": last_cpu - cpu_start, "cpu_end": cpu_end - last_cpu,
               "cpu_workers": cpu(resource.RUSAGE_CHILDREN), "forked": len(forks)}, f)
"""


def one(plan: str, jobs: int, python: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="ccsim-sweep-jobs-") as tmp:
        report = Path(tmp) / "report.json"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        launched = time.time()
        subprocess.run([python, "-c", CHILD, plan, str(Path(tmp) / "sweep"), str(jobs), str(report)],
                       check=True, capture_output=True, text=True)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        doc = json.loads(report.read_text())
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"runs": doc["runs"], "wall_s": wall, "cpu_s": cpu, "phase_s": doc["phase_s"],
            "startup_s": doc["start"] - launched, "end_s": doc["end_s"], "cpu_startup": doc["cpu_startup"],
            "cpu_phase": doc["cpu_phase"], "cpu_end": doc["cpu_end"], "cpu_workers": doc["cpu_workers"],
            "forked": doc["forked"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("plan", nargs="?", default="examples/sweep_loss.toml")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--python", action="append", help="the interpreter whose ccsim to measure (repeat it for an A/B, "
                        "run interleaved) [default: this one]")
    args = parser.parse_args()
    pythons = args.python or [sys.executable]
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs; {args.plan}; median of {args.repeat}")
    rows: dict[str, dict[int, list[dict[str, float]]]] = {p: {} for p in pythons}
    for _ in range(args.repeat):  # interleaved, so a change in the machine's load hits all alike
        for python in pythons:
            for jobs in (1, 2):
                rows[python].setdefault(jobs, []).append(one(args.plan, jobs, python))
    for python in pythons:
        report(python, rows[python])


def report(python: str, rows: dict[int, list[dict[str, float]]]) -> None:
    print(f"\n{python}")
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
          "forked workers (all) | end (consolidation, summary) | processes forked |")
    for jobs, m in med.items():
        print(f"| {jobs} | {m['cpu_startup']:.3f} | {m['cpu_phase']:.3f} | {m['cpu_workers']:.3f} | {m['cpu_end']:.3f} | {m['forked']:.0f} |")
    # On two idle cores: the serial parts run alone; with two jobs the run phase takes at least half
    # the CPU of the workers and the sweep process together, and at least the sweep process's own
    # and one worker's (their average) share.
    serial = {j: m["cpu_startup"] + m["cpu_end"] for j, m in med.items()}
    runs1 = med[1]["cpu_phase"] + med[1]["cpu_workers"]
    m2 = med[2]
    runs2 = max(m2["cpu_workers"] / max(m2["forked"], 1), m2["cpu_phase"], (m2["cpu_workers"] + m2["cpu_phase"]) / 2)
    ideal1, ideal2 = serial[1] + runs1, serial[2] + runs2
    print(f"on two idle cores (CPU-bound, no waiting): jobs 1 {ideal1:.2f} s, jobs 2 {ideal2:.2f} s: whole command "
          f"{ideal1 / ideal2:.2f}x; run phase {runs1 / runs2:.2f}x (serial part {serial[1]:.2f} s)")
    print(f"jobs 2 / jobs 1, runs per second: whole command {med[1]['wall_s'] / med[2]['wall_s']:.2f}x, "
          f"run phase {med[1]['phase_s'] / med[2]['phase_s']:.2f}x; CPU of jobs 2 - jobs 1: {med[2]['cpu_s'] - med[1]['cpu_s']:+.2f} s")


if __name__ == "__main__":
    main()
