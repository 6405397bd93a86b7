"""Statistics across repetitions for sweeps: mean, Student-t 95 % confidence interval, percentiles.

No SciPy dependency: the t quantile is found by bisection on the t distribution's CDF, written with
the regularized incomplete beta function (continued fraction, Numerical Recipes 6.4). Accurate to
~1e-10, which is far below the resolution anyone reads a confidence interval at.

No NumPy either (``ccsim sweep`` then imports pyarrow without it: about 0.1 s of start-up): the
sums, standard deviation and percentiles repeat NumPy's floating-point operations in the same
order (``x.mean()``, ``x.std(ddof=1)``, ``np.percentile(x, q)`` with its default linear method), so
the summary table is byte-identical to the one NumPy gave (tests/test_sweep_stats.py compares them).
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

__all__ = ["t_quantile", "describe", "metric_range", "PERCENTILES", "AT_MOST_ONE"]

PERCENTILES = (20, 50, 80)  # as the CHD paper (Hayes & Armitage 2010) reports its box plots
# Every quantity the sweep tables summarise is a count, a rate, a time, a delay or a fraction: none is
# negative, and these are also at most 1 (docs/sweeps.md, "Intervals").
AT_MOST_ONE = frozenset({"jain_index", "loss_rate"})


def metric_range(metric: str) -> tuple[float, float]:
    """The values ``metric`` (a column of the sweep tables) can take: [0, 1] for Jain's index and loss
    rates, [0, inf) for everything else (counts, rates, times, delays, utilisation)."""
    return (0.0, 1.0) if metric in AT_MOST_ONE else (0.0, math.inf)


def _betacf(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    ln_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    front = math.exp(ln_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def _t_cdf(t: float, df: float) -> float:
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


@functools.lru_cache(maxsize=256)
def t_quantile(p: float, df: int) -> float:
    """The p quantile of Student's t with ``df`` degrees of freedom (p in (0.5, 1))."""
    if df < 1:
        return math.nan
    lo, hi = 0.0, 1.0
    while _t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12:
            break
    return 0.5 * (lo + hi)


def _pairwise_sum(x: Sequence[float], lo: int, n: int) -> float:
    """NumPy's sum of ``x[lo:lo + n]`` (float64, contiguous): pairwise summation, eight running sums
    in blocks of at most 128 values (numpy/_core/src/umath/loops_utils.h.src, pairwise_sum)."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += x[i]
        return res
    if n <= 128:
        r = list(x[lo:lo + 8])
        i = 8
        end = n - n % 8
        while i < end:
            for j in range(8):
                r[j] += x[lo + i + j]
            i += 8
        res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for k in range(i, n):
            res += x[lo + k]
        return res
    half = n // 2
    half -= half % 8
    return _pairwise_sum(x, lo, half) + _pairwise_sum(x, lo + half, n - half)


def _sum(x: Sequence[float]) -> float:
    """``np.add.reduce(x)``: the identity 0.0 plus the pairwise sum of every value."""
    return 0.0 + _pairwise_sum(x, 0, len(x))


def _percentile(ordered: Sequence[float], q: float) -> float:
    """``np.percentile(x, q)``, linear method, of the sorted values (numpy/lib/_function_base_impl.py:
    the virtual index (n - 1) * q / 100, its floor and the next, then _lerp)."""
    n = len(ordered)
    virtual = (n - 1) * (q / 100)
    previous = float(math.floor(virtual))
    if virtual >= n - 1:  # NumPy takes the last value (index -1) for both neighbours
        previous = -1.0
    following = previous + 1.0 if previous != -1.0 else -1.0
    a, b = ordered[int(previous)], ordered[int(following)]
    gamma = virtual - previous
    diff = b - a
    if gamma >= 0.5:
        return b - diff * (1 - gamma)
    return a + diff * gamma


def describe(values: Sequence[float], bounds: tuple[float, float] = (-math.inf, math.inf)) -> dict[str, float]:
    """n, mean, std (n-1), 95 % t interval of the mean, p20/p50/p80 (linear interpolation) of the
    finite values; NaN where undefined (the interval needs n >= 2). The interval is cut to
    ``bounds``, the range of the quantity (:func:`metric_range`): the mean of counts cannot be
    negative, so neither is its interval's lower end (timeouts 0.4 gave [-0.28, 1.08], now [0, 1.08])."""
    x = [float(v) for v in values if v is not None]
    x = [v for v in x if math.isfinite(v)]
    n = len(x)
    out = {"n": n, "mean": math.nan, "std": math.nan, "ci95_low": math.nan, "ci95_high": math.nan}
    for q in PERCENTILES:
        out[f"p{q}"] = math.nan
    if n == 0:
        return out
    mean = _sum(x) / n
    out["mean"] = mean
    if n >= 2:
        deviations = [v - mean for v in x]
        std = math.sqrt(_sum([d * d for d in deviations]) / (n - 1))
        half = t_quantile(0.975, n - 1) * std / math.sqrt(n)
        out.update(std=std, ci95_low=max(bounds[0], mean - half), ci95_high=min(bounds[1], mean + half))
    ordered = sorted(x)
    for q in PERCENTILES:
        out[f"p{q}"] = _percentile(ordered, q)
    return out
