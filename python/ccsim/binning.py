"""Bin widths for time series: a round width giving about 40 bins over a run, shared by the report
and the notebook display so both average over the same bins."""

from __future__ import annotations

import math

__all__ = ["nice_bin_s"]


def nice_bin_s(duration_s: float, target_bins: int = 40) -> float:
    """A round bin width (0.1, 0.2, 0.5, 1, 2, 5, ... s) giving about ``target_bins`` bins."""
    if not duration_s or duration_s <= 0:
        return 1.0
    raw = duration_s / target_bins
    exponent = math.floor(math.log10(raw))
    for step in (1, 2, 5, 10):
        width = step * 10**exponent
        if width >= raw:
            return float(f"{width:.3g}")
    return float(10 ** (exponent + 1))
