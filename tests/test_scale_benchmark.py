"""benchmarks/scale.py works: its help, its arithmetic, and its smallest point where the benchmark is
built. The numbers it prints are not checked here (docs/performance.md records them with the command)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "scale.py"


def load():
    spec = importlib.util.spec_from_file_location("scale", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["scale"] = module
    spec.loader.exec_module(module)
    return module


def test_help_names_the_grid_options():
    out = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, check=True).stdout
    for option in ("--full", "--flows", "--rates", "--cpu", "--packets"):
        assert option in out


def test_points_last_long_enough_for_the_packets_and_the_table_divides_by_them():
    scale = load()
    # 150,000 packets at 1 Gbit/s (83,333 a second) take 1.8 s; at 100 Gbit/s the 1 s floor holds.
    assert scale.seconds_for(100, 1000, 150_000, 1.0) == 1.8
    assert scale.seconds_for(100, 100_000, 150_000, 1.0) == 1.0
    m = scale.Measured(scale.Point(10_000, 1000, 2.0), packets=1_000, events=4_000, utilisation=0.99, peak_rss_mib=80.0,
                       instructions=3_000_000)
    assert m.per_packet == 3_000
    row = scale.table([m], instructions=True).splitlines()[-1]
    assert row.startswith("| 10,000 | 1 Gbit/s | 2 | 1,000 | 4.00 |") and row.endswith("| 3,000 |  |"), row
    # with the 100-flow point at the same rate, each row gives its cost over that one's
    base = scale.Measured(scale.Point(100, 1000, 2.0), packets=1_000, events=3_800, utilisation=0.99, peak_rss_mib=40.0,
                          instructions=2_000_000)
    rows = scale.table([base, m], instructions=True).splitlines()
    assert rows[-2].endswith("| 2,000 | 1.00 |") and rows[-1].endswith("| 3,000 | 1.50 |"), rows


def _benchmark_binary() -> Path:
    """The benchmark as the test command builds it (`cargo test --profile quick` builds the examples), or
    a release build; skipped when neither exists, failed under CI (the test command always builds it)."""
    for profile in ("quick", "release"):
        binary = ROOT / "target" / profile / "examples" / "bench_dumbbell"
        if binary.exists():
            return binary
    message = "the benchmark is not built (cargo build --profile quick -p ccsim-core --example bench_dumbbell)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def test_the_smallest_point_runs_natively():
    binary = _benchmark_binary()
    done = subprocess.run([sys.executable, str(SCRIPT), "--cpu", "--binary", str(binary), "--flows", "1", "--rates", "--seconds", "0.1"],
                          capture_output=True, text=True, check=True)
    rows = [line for line in done.stdout.splitlines() if line.startswith("| 1 |")]
    assert len(rows) == 1, done.stdout
    packets = int(rows[0].split("|")[4].replace(",", ""))
    assert packets > 1_000, rows[0]  # 1 Gbit/s for 0.1 s, one flow past slow start carries thousands


def test_the_send_jitter_reaches_the_benchmark():
    """--send-jitter-us 0 runs the dumbbell without host departure events: fewer events per packet
    than with the profiles' 125 us, where about every other segment waits for an event of its own."""
    binary = _benchmark_binary()

    def events_per_packet(jitter_us: str) -> float:
        done = subprocess.run([sys.executable, str(SCRIPT), "--cpu", "--binary", str(binary), "--flows", "10", "--rates",
                               "--seconds", "0.2", "--send-jitter-us", jitter_us], capture_output=True, text=True, check=True)
        row = next(line for line in done.stdout.splitlines() if line.startswith("| 10 |"))
        return float(row.split("|")[5])

    without, with_jitter = events_per_packet("0"), events_per_packet("125")
    assert with_jitter > without + 0.2, (without, with_jitter)


def test_a_negative_send_jitter_is_refused():
    done = subprocess.run([sys.executable, str(SCRIPT), "--send-jitter-us", "-1", "--binary", "/nonexistent"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "--send-jitter-us: must be 0 or more" in done.stderr, done.stderr
