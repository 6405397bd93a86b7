"""The whole ``ccsim run`` of a dumbbell with many flows: wall and CPU seconds, peak memory.

    python benchmarks/many_flows_run.py                          # 10,000 flows for 10 s, 100,000 for 1 s
    python benchmarks/many_flows_run.py --flows 10000 --seconds 10 --python BEFORE/bin/python --python AFTER/bin/python
    python benchmarks/many_flows_run.py --flows 10000 --seconds 10 --plots     # with the default figures

The scenario is the engine benchmark's (``bench_dumbbell``): 1 Gbit/s, 5 ms each way, an
833-packet drop-tail queue, N NewReno flows with the default TCP settings, 1 Gbit/s access links,
100 ms sampling. Each point runs ``python -m ccsim.cli -q run SCENARIO --no-plots`` (``--plots``: without
``--no-plots``) in a fresh
process (Python start-up, the scenario's checks, the cost estimate, the run, the tables and the run
directory), once per ``--python`` and repetition, interleaved; the table gives the median. Numbers
are recorded in docs/performance.md ("Many flows through ``ccsim run``"). Not part of the test
suite.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAD = """[run]
duration = "{seconds}s"
sample_interval = "100ms"
seed = 1

[topology]
kind = "dumbbell"
bottleneck_rate = "1Gbit"
bottleneck_delay = "5ms"
queue = "833pkt"
access_rate = "1Gbit"
"""
MAX_COUNT = 10_000  # flows one [[flows]] entry may expand to


def scenario(flows: int, seconds: float) -> str:
    text = HEAD.format(seconds=f"{seconds:g}")
    for k, start in enumerate(range(0, flows, MAX_COUNT)):
        text += f'\n[[flows]]\nalgorithm = "newreno"\ncount = {min(MAX_COUNT, flows - start)}\nname = "g{k}"\n'
    return text


def run_once(python: str, path: Path, out: Path, plots: bool) -> tuple[float, float, float]:
    """(wall s, CPU s, peak RSS MiB) of one ``ccsim run`` in a fresh process."""
    started = time.perf_counter()
    command = [python, "-m", "ccsim.cli", "-q", "run", str(path), "--force", "--out", str(out)] + ([] if plots else ["--no-plots"])
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)  # this child's own usage
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"{python}: ccsim run failed ({child.returncode})")
    return time.perf_counter() - started, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, nargs="*", help="flow counts (default: 10000 and 100000)")
    parser.add_argument("--seconds", type=float, nargs="*", help="simulated seconds per flow count (default: 10 and 1)")
    parser.add_argument("--python", action="append", help="an installation's interpreter (repeatable; default: this one)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--plots", action="store_true", help="the default figures too (the command without --no-plots)")
    args = parser.parse_args()
    flows = args.flows or [10_000, 100_000]
    seconds = args.seconds or ([10.0, 1.0] if not args.flows else [10.0] * len(flows))
    if len(seconds) != len(flows):
        parser.error("--seconds: give one per --flows value")
    pythons = args.python or [sys.executable]
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs; median of {args.repeat}\n")
    print("| python | flows | simulated s | wall s | CPU s | peak RSS MiB |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        for n, secs in zip(flows, seconds):
            path = Path(tmp) / f"flows{n}.toml"
            path.write_text(scenario(n, secs))
            runs: dict[str, list[tuple[float, float, float]]] = {p: [] for p in pythons}
            for _ in range(args.repeat):
                for p in pythons:
                    runs[p].append(run_once(p, path, Path(tmp) / "out", args.plots))
            for p in pythons:
                wall, cpu, rss = (statistics.median(r[i] for r in runs[p]) for i in range(3))
                print(f"| {p} | {n:,} | {secs:g} | {wall:.2f} | {cpu:.2f} | {rss:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
