"""Statistics across repetitions for sweeps: mean, Student-t 95 % confidence interval, percentiles.

No SciPy dependency: the t quantile is found by bisection on the t distribution's CDF, written with
the regularized incomplete beta function (continued fraction, Numerical Recipes 6.4). Accurate to
~1e-10, which is far below the resolution anyone reads a confidence interval at.
"""

from __future__ import annotations

import functools
import math
from typing import Sequence

import numpy as np

__all__ = ["t_quantile", "describe", "PERCENTILES"]

PERCENTILES = (20, 50, 80)  # as the CHD paper (Hayes & Armitage 2010) reports its box plots


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


def describe(values: Sequence[float]) -> dict[str, float]:
    """n, mean, std (n-1), 95 % t interval of the mean, p20/p50/p80 (linear interpolation) of the
    finite values; NaN where undefined (the interval needs n >= 2)."""
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
