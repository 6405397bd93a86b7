"""Figures printed with the precision they have: delay percentiles come from the engine's log-linear
histogram (crates/ccsim-core/src/histogram.rs), whose estimate is within 1/64 (1.6 %) of the true
value, so they are shown to three significant digits, never to the microsecond their float suggests."""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["PERCENTILE_RELATIVE_ERROR", "is_percentile_column", "fmt_percentile"]

PERCENTILE_RELATIVE_ERROR = 1 / 64
_PERCENTILE = re.compile(r"(^|_)p\d{2}(_|$)")


def is_percentile_column(name: object) -> bool:
    """A summary column holding a histogram percentile (``rtt_p95_ms``, ``qdelay_p50_ms``, ...)."""
    return isinstance(name, str) and bool(_PERCENTILE.search(name))


def fmt_percentile(value: Any, unit: str = "") -> str:
    """Three significant digits (``140.509184`` -> ``141``, ``0.51234`` -> ``0.512``), ``-`` for
    a missing value."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return "-"
    if math.isnan(x):
        return "-"
    rounded = float(f"{x:.3g}")  # 9.996 -> 10.0: count the digits after rounding
    if rounded == 0:
        text = "0"
    else:
        digits = max(0, 2 - math.floor(math.log10(abs(rounded))))
        text = f"{rounded:.{digits}f}"
    return f"{text} {unit}".rstrip() if unit else text
