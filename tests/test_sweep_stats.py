"""ccsim.sweep_stats.describe without NumPy gives the same bits as NumPy's mean, std(ddof=1) and
percentile did (the sweep's summary table must not change)."""

from __future__ import annotations

import math
import random
import struct

import numpy as np
import pytest

from ccsim.sweep_stats import PERCENTILES, describe, t_quantile


def _numpy_describe(values):
    """The NumPy implementation describe had before (and its result is compared bit for bit)."""
    x = np.asarray([v for v in values if v is not None], dtype=float)
    x = x[np.isfinite(x)]
    n = int(x.size)
    out = {"n": n, "mean": math.nan, "std": math.nan, "ci95_low": math.nan, "ci95_high": math.nan}
    for q in PERCENTILES:
        out[f"p{q}"] = math.nan
    if n == 0:
        return out
    mean = float(x.mean())
    out["mean"] = mean
    if n >= 2:
        std = float(x.std(ddof=1))
        half = t_quantile(0.975, n - 1) * std / math.sqrt(n)
        out.update(std=std, ci95_low=mean - half, ci95_high=mean + half)
    for q, v in zip(PERCENTILES, np.percentile(x, PERCENTILES)):
        out[f"p{q}"] = float(v)
    return out


def _bits(stats):
    return {k: v if k == "n" else struct.pack("<d", v) for k, v in stats.items()}


def _samples(rng: random.Random, n: int) -> list:
    kind = rng.randrange(5)
    if kind == 0:  # magnitudes far apart: the summation order shows in the last bits
        return [rng.uniform(-1, 1) * 10 ** rng.randint(-6, 12) for _ in range(n)]
    if kind == 1:  # counters (int64 columns)
        return [rng.randrange(0, 10 ** rng.randint(1, 15)) for _ in range(n)]
    if kind == 2:  # ties
        return [rng.choice([0.0, 1.5, 2.25, 1e9]) for _ in range(n)]
    if kind == 3:  # goodput-like: close together
        return [9.5e6 + rng.gauss(0, 1e4) for _ in range(n)]
    return [rng.choice([None, math.nan, math.inf, -math.inf, rng.random()]) for _ in range(n)]


@pytest.mark.parametrize("seed", range(4))
def test_describe_matches_numpy_bit_for_bit(seed):
    rng = random.Random(seed)
    sizes = list(range(0, 40)) + [127, 128, 129, 130, 136, 255, 256, 257, 300, 1000, 1031, 2500]
    for n in sizes:
        for _ in range(6):
            values = _samples(rng, n)
            assert _bits(describe(values)) == _bits(_numpy_describe(values)), (n, values[:10])


def test_describe_without_numpy_imported():
    import subprocess
    import sys

    code = ("import sys; from ccsim.sweep_stats import describe; d = describe([1.0, 2.0, 4.0]); "
            "assert 'numpy' not in sys.modules, 'numpy imported'; print(d['p50'], d['mean'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["2.0", repr(7.0 / 3)]


def test_intervals_respect_the_range_of_their_quantity():
    """Counts are never negative, Jain's index is at most 1: the t interval of the mean is cut to the
    quantity's range, in the tables (describe) and in the figures (plots.aggregate) alike."""
    from ccsim.plots import aggregate
    from ccsim.sweep_stats import metric_range

    timeouts = [0.0, 0.0, 1.0, 0.0, 1.0]  # mean 0.4; the plain t interval is [-0.28, 1.08]
    plain = describe(timeouts)
    assert plain["ci95_low"] < 0
    cut = describe(timeouts, metric_range("timeouts"))
    assert cut["ci95_low"] == 0.0 and cut["ci95_high"] == plain["ci95_high"] and cut["mean"] == plain["mean"]
    jain = [1.0, 0.99, 0.7, 1.0]
    assert describe(jain)["ci95_high"] > 1.0
    assert describe(jain, metric_range("jain_index"))["ci95_high"] == 1.0
    import pandas as pd

    for values, metric in ((timeouts, "timeouts"), (jain, "jain_index")):
        mean, low, high = aggregate(pd.Series(values), "ci", metric_range(metric))
        stats = describe(values, metric_range(metric))
        assert (low, high) == pytest.approx((stats["ci95_low"], stats["ci95_high"]))


def test_the_sweep_summary_cuts_its_intervals(tmp_path):
    """The summary table of a real sweep: a point with random loss has queueing delays of 0 in some
    repetitions; no interval of any metric goes below 0."""
    pytest.importorskip("ccsim._core")
    from ccsim.sweep import SweepPlan, run_sweep

    plan = SweepPlan.from_toml_str(
        '[sweep]\nrepetitions = 3\n[base.run]\nduration = "2s"\n[base.topology]\nkind = "dumbbell"\n'
        'bottleneck_rate = "10Mbit"\nbottleneck_delay = "20ms"\nqueue = "84pkt"\n[[base.flows]]\nalgorithm = "newreno"\n'
        '[grid]\n"topology.loss" = [0.02]\n')
    summary = run_sweep(plan, tmp_path / "out", jobs=1, progress=False).table("summary").to_pandas()
    qdelay = summary[summary.metric == "qdelay_p95_ms"]
    assert (qdelay["mean"] - (qdelay["ci95_high"] - qdelay["mean"]) < 0).any()  # the plain interval would cross 0
    assert (summary["ci95_low"].dropna() >= 0).all()
    assert (summary.loc[summary.metric == "jain_index", "ci95_high"].dropna() <= 1).all()


def test_the_console_table_prints_a_cut_interval_as_an_interval(tmp_path):
    """``mean ± half`` would read as going below 0 when the interval was cut there."""
    pytest.importorskip("ccsim._core")
    import pyarrow as pa
    from rich.console import Console

    from ccsim.sweep import SweepPlan
    from ccsim.sweep.console import print_sweep_summary
    from ccsim.sweep.store import TABLES, SweepResult

    plan = SweepPlan.from_toml_str(
        '[sweep]\nrepetitions = 5\n[base.run]\nduration = "2s"\n[base.topology]\nkind = "dumbbell"\n'
        'bottleneck_rate = "10Mbit"\nbottleneck_delay = "20ms"\nqueue = "84pkt"\n[[base.flows]]\nalgorithm = "newreno"\n'
        '[grid]\n"topology.loss" = [0.0, 0.5]\n')
    (p0, _), (p1, _) = plan.points()
    rows = []
    for pid, values in ((p0, [9e6, 9.1e6, 8.9e6, 9e6, 9e6]), (p1, [0.0, 0.0, 1e6, 0.0, 1e6])):
        stats = describe(values, (0.0, math.inf))
        rows.append({"point_id": pid, "scope": "run", "name": "", "metric": "total_goodput_bps", **stats})
    summary = pa.Table.from_pylist(rows)
    result = SweepResult(plan, tmp_path, {name: summary if name == "summary" else pa.table({}) for name in TABLES})
    console = Console(record=True, width=120)
    print_sweep_summary(result, console)
    text = console.export_text()
    assert "9.000 ± 0.0" in text  # not cut: mean ± half
    assert "0.400 [0.000, 1.080]" in text  # cut at 0
