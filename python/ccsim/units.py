"""Strict unit parsing and formatting for scenario values.

Scenario files carry physical quantities as strings with a unit; the engine wants integers in
canonical units. Parsing is strict on purpose: ``tc`` reads ``mbps`` as *megabytes* per second, so a
lenient parser would turn a typo into a factor-of-8 error that no one notices. Each unit has exactly
one spelling; a near miss is rejected with the spelling we expect.

=========== ======================================= ======================== ===================
quantity    accepted units (case-sensitive)         canonical value          examples
=========== ======================================= ======================== ===================
rate        ``bit`` ``kbit`` ``Mbit`` ``Gbit``      int bit/s                ``10Mbit`` ``1.5Mbit``
            (SI, x1000; "per second" is implied)                             ``500kbit``
time        ``ns`` ``us`` ``ms`` ``s``              int nanoseconds          ``20ms`` ``1.5s``
size        ``B`` ``kB`` ``MB`` ``GB`` (x1000),     int bytes                ``1448B`` ``10MB``
            ``KiB`` ``MiB`` ``GiB`` (x1024)                                  ``64MiB``
queue limit a size, or packets ``pkt``              (int, "bytes" | "pkts")  ``84pkt`` ``150kB``
probability a plain number in [0, 1], or a percent  float                    ``0.01`` ``"1%"``
=========== ======================================= ======================== ===================

Rules:

* The number is written in decimal, digits with an optional fractional part (``1.5``); no sign, no
  exponent, no ``_`` separators, and **no space** between number and unit (``10 Mbit`` is rejected
  with a hint: one spelling per value keeps files greppable and diffs clean).
* A bare number is an error for rates, times and sizes: the message names the units expected.
* The value must come out as a whole number of canonical units (``1.5ns`` and ``0.5B`` are errors).
* Values must be below 2**63 (they travel to the engine as signed 64-bit integers).

The ``format_*`` functions print a canonical value back in the shortest exact spelling (for rates and
times, at most three decimals in the largest unit that is >= 1), so ``parse(format(x)) == x`` for every
non-negative integer ``x``: a Scenario dumped to TOML loads back to the same model.
"""

from __future__ import annotations

import difflib
import math
import re
from decimal import Decimal, localcontext
from typing import Literal

from ccsim.errors import UnitError

__all__ = [
    "RATE_UNITS",
    "TIME_UNITS",
    "SIZE_UNITS",
    "parse_rate",
    "parse_time",
    "parse_size",
    "parse_queue_limit",
    "parse_probability",
    "format_rate",
    "format_time",
    "format_size",
    "format_queue_limit",
    "format_probability",
]

RATE_UNITS: dict[str, int] = {"bit": 1, "kbit": 10**3, "Mbit": 10**6, "Gbit": 10**9}
TIME_UNITS: dict[str, int] = {"ns": 1, "us": 10**3, "ms": 10**6, "s": 10**9}
SIZE_UNITS: dict[str, int] = {
    "B": 1,
    "kB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
}
PACKET_UNIT = "pkt"

_BASE_NAMES = {"bit": "bit/s", "ns": "nanoseconds", "B": "bytes"}
_MAX_VALUE = 2**63 - 1
_QUANTITY = re.compile(r"(?P<number>[0-9]+(?:\.[0-9]+)?)(?P<unit>.*)", re.DOTALL)
_BARE_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")

# Spellings people commonly reach for, mapped to the hint we give. Keys are compared lowercased.
_RATE_HINTS = {
    "bps": "'bps' is ambiguous (tc reads it as bytes per second); write bits as 'bit'",
    "kbps": "'kbps' is ambiguous (tc reads it as kilobytes per second); write 'kbit' for kilobits per second",
    "mbps": "'Mbps' is ambiguous (tc reads it as megabytes per second); write 'Mbit' for megabits per second",
    "gbps": "'Gbps' is ambiguous (tc reads it as gigabytes per second); write 'Gbit' for gigabits per second",
    "bit/s": "write 'bit' (per second is implied)",
    "kbit/s": "write 'kbit' (per second is implied)",
    "mbit/s": "write 'Mbit' (per second is implied)",
    "gbit/s": "write 'Gbit' (per second is implied)",
}
_TIME_HINTS = {
    "sec": "write 's'",
    "secs": "write 's'",
    "msec": "write 'ms'",
    "msecs": "write 'ms'",
    "usec": "write 'us'",
    "usecs": "write 'us'",
    "µs": "write 'us'",
    "nsec": "write 'ns'",
    "nsecs": "write 'ns'",
    "m": "minutes are not accepted; write seconds, e.g. '120s'",
    "min": "minutes are not accepted; write seconds, e.g. '120s'",
    "h": "hours are not accepted; write seconds, e.g. '3600s'",
}
_SIZE_HINTS = {
    "b": "write 'B' for bytes (bits are not a size unit)",
    "kb": "write 'kB' (1000 bytes) or 'KiB' (1024 bytes)",
    "kib": "write 'KiB'",
    "mb": "write 'MB' (10^6 bytes) or 'MiB' (2^20 bytes)",
    "gb": "write 'GB' (10^9 bytes) or 'GiB' (2^30 bytes)",
    "byte": "write 'B'",
    "bytes": "write 'B'",
    "pkt": "packets are only accepted for queue limits; write a size such as '1448B'",
    "pkts": "packets are only accepted for queue limits; write a size such as '1448B'",
}
_PACKET_HINTS = {"pkts": "write 'pkt'", "packet": "write 'pkt'", "packets": "write 'pkt'", "p": "write 'pkt'"}


def _describe(units: dict[str, int]) -> str:
    names = list(units)
    return ", ".join(names[:-1]) + " or " + names[-1]


def _parse(
    text: object,
    units: dict[str, int],
    what: str,
    example: str,
    hints: dict[str, str],
) -> tuple[int, str]:
    """Parses ``<number><unit>`` against ``units``; returns (canonical value, unit as written)."""
    expected = f"write a {what} in {_describe(units)}, e.g. '{example}'"
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise UnitError("", f"expected a {what} string such as '{example}', got {type(text).__name__}")
    if not isinstance(text, str):
        raise UnitError("", f"{text!r} has no unit: {expected}")
    raw = text
    if _BARE_NUMBER.fullmatch(raw.strip()):
        raise UnitError("", f"'{raw}' has no unit: {expected}")
    if raw.startswith("-"):
        raise UnitError("", f"'{raw}' is negative: a {what} must be >= 0")
    if raw != raw.strip() or " " in raw or "\t" in raw:
        squeezed = "".join(raw.split())
        raise UnitError("", f"'{raw}' contains a space: write '{squeezed}'")
    m = _QUANTITY.fullmatch(raw)
    if m is None:
        raise UnitError("", f"'{raw}' is not a {what}: {expected}")
    number, unit = m.group("number"), m.group("unit")
    if unit not in units:
        raise UnitError("", f"'{raw}': {_unit_hint(unit, units, hints, expected)}")
    with localcontext() as ctx:
        ctx.prec = 100
        value = Decimal(number) * units[unit]
    if value != value.to_integral_value():
        raise UnitError("", f"'{raw}' is not a whole number of {_BASE_NAMES.get(next(iter(units)), 'units')}")
    result = int(value)
    if result > _MAX_VALUE:
        raise UnitError("", f"'{raw}' is too large")
    return result, unit


def _unit_hint(unit: str, units: dict[str, int], hints: dict[str, str], expected: str) -> str:
    if unit == "":
        return f"missing unit: {expected}"
    if unit.lower() in hints:
        return hints[unit.lower()]
    for name in units:
        if name.lower() == unit.lower():
            return f"unknown unit '{unit}'; did you mean '{name}'? (units are case-sensitive)"
    close = difflib.get_close_matches(unit, list(units), n=1, cutoff=0.75)
    if close:
        return f"unknown unit '{unit}'; did you mean '{close[0]}'?"
    return f"unknown unit '{unit}': {expected}"


def parse_rate(text: object) -> int:
    """``'10Mbit'`` -> 10_000_000 (bit/s)."""
    return _parse(text, RATE_UNITS, "rate", "10Mbit", _RATE_HINTS)[0]


def parse_time(text: object) -> int:
    """``'20ms'`` -> 20_000_000 (ns)."""
    return _parse(text, TIME_UNITS, "time", "20ms", _TIME_HINTS)[0]


def parse_size(text: object) -> int:
    """``'64MiB'`` -> 67_108_864 (bytes)."""
    return _parse(text, SIZE_UNITS, "size", "1448B", _SIZE_HINTS)[0]


QueueLimitUnit = Literal["pkts", "bytes"]


def parse_queue_limit(text: object) -> tuple[int, QueueLimitUnit]:
    """``'84pkt'`` -> (84, 'pkts'); ``'150kB'`` -> (150_000, 'bytes')."""
    units = {**SIZE_UNITS, PACKET_UNIT: 1}
    hints = {k: v for k, v in _SIZE_HINTS.items() if k not in ("pkt", "pkts")} | _PACKET_HINTS
    value, unit = _parse(text, units, "queue limit", "84pkt", hints)
    return value, ("pkts" if unit == PACKET_UNIT else "bytes")


def parse_probability(value: object) -> float:
    """A plain number in [0, 1] (``0.01``) or a percent string (``'1%'``) -> float."""
    if isinstance(value, bool):
        raise UnitError("", f"{value!r} is not a probability: write a number in [0, 1] or a percent such as '1%'")
    if isinstance(value, (int, float)):
        p = float(value)
    elif isinstance(value, str):
        m = _QUANTITY.fullmatch(value)
        if value.startswith("-"):
            raise UnitError("", f"'{value}' is negative: a probability must be in [0, 1]")
        if m is None or m.group("unit") != "%":
            raise UnitError("", f"'{value}' is not a probability: write a number in [0, 1] (unquoted) or a percent such as '1%'")
        with localcontext() as ctx:
            ctx.prec = 50
            p = float(Decimal(m.group("number")) / 100)
    else:
        raise UnitError("", f"expected a probability, got {type(value).__name__}")
    if math.isnan(p):
        raise UnitError("", "NaN is not a probability")
    if not 0.0 <= p <= 1.0:
        raise UnitError("", f"{value!r} is outside [0, 1]")
    return p


def _format_decimal(value: int, units: dict[str, int], zero: str) -> str:
    """Shortest exact spelling with at most 3 decimals, in a unit where the number is >= 1."""
    if value < 0:
        raise ValueError(f"cannot format negative value {value}")
    smallest = next(iter(units))
    if value == 0:
        return zero
    candidates = []
    with localcontext() as ctx:
        ctx.prec = 100
        for rank, (name, mult) in enumerate(units.items()):
            number = Decimal(value) / mult
            if number < 1:
                continue
            text = _plain(number)
            decimals = len(text.partition(".")[2])
            if decimals <= 3:
                candidates.append((len(text) + len(name), -rank, text + name))
    if not candidates:
        return f"{value}{smallest}"
    return min(candidates)[2]


def _plain(number: Decimal) -> str:
    """A Decimal in positional notation without trailing zeros (never '1E+1')."""
    text = format(number.normalize(), "f")
    return text


def format_rate(rate_bps: int) -> str:
    """10_000_000 -> ``'10Mbit'``."""
    return _format_decimal(rate_bps, RATE_UNITS, "0bit")


def format_time(time_ns: int) -> str:
    """20_000_000 -> ``'20ms'``; 1_500_000_000 -> ``'1.5s'``."""
    return _format_decimal(time_ns, TIME_UNITS, "0s")


def format_size(size_bytes: int) -> str:
    """Whole numbers only, shortest spelling: 1448 -> ``'1448B'``, 67_108_864 -> ``'64MiB'``."""
    if size_bytes < 0:
        raise ValueError(f"cannot format negative size {size_bytes}")
    if size_bytes == 0:
        return "0B"
    candidates = [
        (len(str(size_bytes // mult)) + len(name), -mult, f"{size_bytes // mult}{name}")
        for name, mult in SIZE_UNITS.items()
        if size_bytes % mult == 0
    ]
    return min(candidates)[2]


def format_queue_limit(value: int, unit: QueueLimitUnit) -> str:
    """(84, 'pkts') -> ``'84pkt'``; (150_000, 'bytes') -> ``'150kB'``."""
    if unit == "pkts":
        return f"{value}{PACKET_UNIT}"
    return format_size(value)


def format_probability(p: float) -> float:
    """Probabilities are written as plain TOML numbers."""
    return float(p)
