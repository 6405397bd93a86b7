"""How the engine's cost per packet scales with the number of flows and the link rate.

Runs the engine's dumbbell benchmark (``crates/ccsim-core/examples/bench_dumbbell.rs``: N NewReno
flows, 10 ms base RTT, a one-BDP drop-tail queue, access links at the bottleneck's rate, sampling
every 100 ms, the hosts' 125 us send jitter of the TCP profiles unless ``--send-jitter-us`` says otherwise) over a grid of flow counts at 1 Gbit/s and of link rates at 100 flows, and prints a
Markdown table.

With valgrind on the PATH each point runs under ``valgrind --tool=callgrind`` and the table gives
**instructions per bottleneck packet**: the instructions of ``Simulation::finish`` (the event loop,
the sampling and the assembly of the results; not the building of the JSON document nor of the
network) over the packets the bottleneck carried. Instruction counts do not depend on the load of
the machine. Without valgrind (or with ``--cpu``) each point runs natively and the table gives the
CPU seconds of the whole process (user + sys) and CPU nanoseconds per bottleneck packet.

    python benchmarks/scale.py              # the default grid: a few minutes under valgrind
    python benchmarks/scale.py --full       # flows up to 100,000 and 100 Gbit/s (much longer)
    python benchmarks/scale.py --cpu        # CPU seconds, even where valgrind is installed
    python benchmarks/scale.py --flows 100 10000 --rates 1000   # chosen points (rates in Mbit/s)
    python benchmarks/scale.py --send-jitter-us 0               # the dumbbell before the hosts' send jitter

Each point simulates long enough for about ``--packets`` bottleneck packets (default 150,000), and
at least ``--min-seconds`` (default 1 s: a hundred RTTs, past slow start at 1 Gbit/s). Numbers and
the commands that produced them are recorded in docs/performance.md ("Scaling with flows and link
rate"). This script is not part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = "bench_dumbbell"
DEFAULT_FLOWS = [1, 10, 100, 1_000, 10_000]
FULL_FLOWS = DEFAULT_FLOWS + [100_000]
DEFAULT_RATES_MBPS = [10, 100, 1_000, 10_000]
FULL_RATES_MBPS = DEFAULT_RATES_MBPS + [100_000]
PACKET_BITS = 1500 * 8


@dataclass
class Point:
    flows: int
    rate_mbps: float
    seconds: float
    send_jitter_us: float = 125.0


@dataclass
class Measured:
    point: Point
    packets: int
    events: int
    utilisation: float
    peak_rss_mib: float
    instructions: int | None = None
    cpu_s: float | None = None

    @property
    def per_packet(self) -> float:
        if self.packets == 0:
            return float("nan")
        if self.instructions is not None:
            return self.instructions / self.packets
        return (self.cpu_s or 0.0) * 1e9 / self.packets


def build(cargo: str) -> Path:
    """Builds the benchmark in release mode and returns its path."""
    subprocess.run([cargo, "build", "--quiet", "--release", "-p", "ccsim-core", "--example", EXAMPLE], cwd=ROOT, check=True)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "release" / "examples" / EXAMPLE


def seconds_for(flows: int, rate_mbps: float, packets: int, min_seconds: float) -> float:
    """Simulated time for about `packets` bottleneck packets at full utilisation, at least `min_seconds`."""
    per_second = rate_mbps * 1e6 / PACKET_BITS
    return round(max(packets / per_second, min_seconds), 3)


def parse(stdout: str) -> dict[str, str]:
    return dict(re.findall(r"(\w+)=([^\s]+)", stdout))


def run_point(binary: Path, point: Point, valgrind: str | None) -> Measured:
    args = [str(binary), str(point.flows), f"{point.seconds:g}", "100", f"{point.rate_mbps:g}", f"{point.send_jitter_us:g}"]
    instructions = cpu_s = None
    if valgrind:
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [valgrind, "--tool=callgrind", "--toggle-collect=ccsim_core::sim::Simulation::finish",
                   f"--callgrind-out-file={tmp}/callgrind.out", *args]
            done = subprocess.run(cmd, capture_output=True, text=True, check=True)
        found = re.search(r"Collected : (\d+)", done.stderr)
        if not found:
            raise SystemExit(f"callgrind printed no instruction count for {point}:\n{done.stderr[-2000:]}")
        instructions = int(found.group(1))
    else:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(args, capture_output=True, text=True, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    v = parse(done.stdout)
    return Measured(point, int(float(v["bottleneck_packets"])), int(v["events"]), float(v["utilisation"]),
                    float(v["peak_rss_mib"]), instructions, cpu_s)


def rate_label(mbps: float) -> str:
    return f"{mbps / 1000:g} Gbit/s" if mbps >= 1000 else f"{mbps:g} Mbit/s"


def table(rows: list[Measured], instructions: bool) -> str:
    """The Markdown table; `x 100 flows` is a point's cost per packet over that of 100 flows at the
    same link rate (the issue's flatness measure: at most 1.5 at 10,000 flows), when that point ran."""
    unit = "instructions / packet" if instructions else "CPU ns / packet"
    cost = "" if instructions else " CPU s |"
    base = {m.point.rate_mbps: m.per_packet for m in rows if m.point.flows == 100}
    lines = [f"| flows | link rate | simulated s | bottleneck packets | events / packet | utilisation | peak RSS MiB |{cost} {unit} | x 100 flows |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |" + (" ---: |" if not instructions else "") + " ---: | ---: |"]
    for m in rows:
        p = m.point
        extra = f" {m.cpu_s:.2f} |" if not instructions else ""
        ratio = f"{m.per_packet / base[p.rate_mbps]:.2f}" if p.rate_mbps in base else ""
        lines.append(f"| {p.flows:,} | {rate_label(p.rate_mbps)} | {p.seconds:g} | {m.packets:,} | {m.events / max(m.packets, 1):.2f} "
                     f"| {m.utilisation:.3f} | {m.peak_rss_mib:.0f} |{extra} {m.per_packet:,.0f} | {ratio} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See the module docstring and docs/performance.md.")
    ap.add_argument("--full", action="store_true", help="flows up to 100,000 and rates up to 100 Gbit/s (long under valgrind)")
    ap.add_argument("--flows", type=int, nargs="*", help="flow counts at --flow-rate (default 1 10 100 1000 10000; none: no flow sweep)")
    ap.add_argument("--rates", type=float, nargs="*", help="link rates in Mbit/s at 100 flows (default 10 100 1000 10000; none: no rate sweep)")
    ap.add_argument("--flow-rate", type=float, default=1000.0, help="link rate of the flow sweep, Mbit/s (default 1000)")
    ap.add_argument("--packets", type=int, default=150_000, help="bottleneck packets to aim for per point (default 150000)")
    ap.add_argument("--min-seconds", type=float, default=1.0, help="shortest simulated time of a point (default 1)")
    ap.add_argument("--seconds", type=float, help="simulated time of every point (overrides --packets and --min-seconds)")
    ap.add_argument("--send-jitter-us", type=float, default=125.0,
                    help="the hosts' send jitter, microseconds (default 125, the profiles' value; 0: the dumbbell as the "
                         "issue measured it, before the jitter existed, with no host departure events)")
    ap.add_argument("--cpu", action="store_true", help="measure CPU seconds natively even where valgrind is installed")
    ap.add_argument("--binary", type=Path, help="a built bench_dumbbell (default: build it with cargo)")
    ap.add_argument("--cargo", default="cargo")
    args = ap.parse_args(argv)
    if not args.send_jitter_us >= 0:
        ap.error(f"--send-jitter-us: must be 0 or more (got {args.send_jitter_us:g})")

    flows = args.flows if args.flows is not None else (FULL_FLOWS if args.full else DEFAULT_FLOWS)
    rates = args.rates if args.rates is not None else (FULL_RATES_MBPS if args.full else DEFAULT_RATES_MBPS)
    valgrind = None if args.cpu else shutil.which("valgrind")
    binary = args.binary or build(args.cargo)

    def point(n: int, rate: float) -> Point:
        seconds = args.seconds or seconds_for(n, rate, args.packets, args.min_seconds)
        return Point(n, rate, seconds, args.send_jitter_us)

    points = [point(n, args.flow_rate) for n in flows]
    points += [point(100, r) for r in rates if not (r == args.flow_rate and 100 in flows)]
    what = "instructions per bottleneck packet (callgrind)" if valgrind else "CPU seconds of the whole process"
    print(f"# {what}; {len(points)} points", file=sys.stderr)
    rows = []
    for p in points:
        started = time.monotonic()
        rows.append(run_point(binary, p, valgrind))
        print(f"  {p.flows} flows, {rate_label(p.rate_mbps)}, {p.seconds:g} s: {time.monotonic() - started:.0f} s", file=sys.stderr)
    print(table(rows, instructions=valgrind is not None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
