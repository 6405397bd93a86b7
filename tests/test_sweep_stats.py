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
