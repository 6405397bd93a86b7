"""Unit strings: one spelling per unit, exact integer results, format/parse round trip."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ccsim import units
from ccsim.errors import ScenarioError, UnitError

MAX = 2**63 - 1


@pytest.mark.parametrize(
    "text, bps",
    [
        ("10Mbit", 10_000_000),
        ("1.5Mbit", 1_500_000),
        ("500kbit", 500_000),
        ("1Gbit", 1_000_000_000),
        ("2.5Gbit", 2_500_000_000),
        ("64bit", 64),
        ("0bit", 0),
        ("0.001Mbit", 1_000),
    ],
)
def test_rate_accepts_si_bit_units(text, bps):
    assert units.parse_rate(text) == bps


@pytest.mark.parametrize(
    "text, ns",
    [("20ms", 20_000_000), ("1.5s", 1_500_000_000), ("250us", 250_000), ("7ns", 7), ("0s", 0), ("60s", 60 * 10**9)],
)
def test_time_accepts_ns_us_ms_s(text, ns):
    assert units.parse_time(text) == ns


@pytest.mark.parametrize(
    "text, size",
    [
        ("1448B", 1448),
        ("10MB", 10_000_000),
        ("1.5kB", 1500),
        ("1GB", 10**9),
        ("64MiB", 64 * 2**20),
        ("1KiB", 1024),
        ("2GiB", 2 * 2**30),
        ("0.5KiB", 512),
    ],
)
def test_size_accepts_decimal_and_binary_prefixes(text, size):
    assert units.parse_size(text) == size


@pytest.mark.parametrize(
    "text, limit",
    [("84pkt", (84, "pkts")), ("1pkt", (1, "pkts")), ("150kB", (150_000, "bytes")), ("64KiB", (65536, "bytes"))],
)
def test_queue_limit_in_packets_or_bytes(text, limit):
    assert units.parse_queue_limit(text) == limit


@pytest.mark.parametrize("value, p", [(0, 0.0), (0.01, 0.01), (1, 1.0), ("1%", 0.01), ("0.5%", 0.005), ("100%", 1.0)])
def test_probability_number_or_percent(value, p):
    assert units.parse_probability(value) == pytest.approx(p, abs=0, rel=1e-15)


@pytest.mark.parametrize(
    "parse, text, hint",
    [
        (units.parse_rate, "10Mbps", "write 'Mbit'"),
        (units.parse_rate, "10mbit", "did you mean 'Mbit'"),
        (units.parse_rate, "10Mbitt", "did you mean 'Mbit'"),
        (units.parse_rate, "10Mbit/s", "per second is implied"),
        (units.parse_rate, "10", "no unit"),
        (units.parse_rate, "10 Mbit", "write '10Mbit'"),
        (units.parse_rate, "-1Mbit", "negative"),
        (units.parse_rate, "Mbit", "not a rate"),
        (units.parse_rate, "1e6bit", "unknown unit"),
        (units.parse_rate, "0.5bit", "whole number"),
        (units.parse_rate, "nan", "not a rate"),
        (units.parse_rate, "", "not a rate"),
        (units.parse_time, "ms20", "not a time"),
        (units.parse_time, "20msec", "write 'ms'"),
        (units.parse_time, "2min", "write seconds"),
        (units.parse_time, "1.5ns", "whole number of nanoseconds"),
        (units.parse_time, "20", "no unit: write a time in ns, us, ms or s"),
        (units.parse_time, "+20ms", "not a time"),
        (units.parse_size, "1500b", "write 'B' for bytes"),
        (units.parse_size, "10KB", "'kB' (1000 bytes) or 'KiB'"),
        (units.parse_size, "84pkt", "only accepted for queue limits"),
        (units.parse_size, "1.5B", "whole number of bytes"),
        (units.parse_queue_limit, "84pkts", "write 'pkt'"),
        (units.parse_queue_limit, "84", "no unit"),
        (units.parse_size, "99999999999GiB", "too large"),
    ],
)
def test_malformed_quantities_are_rejected_with_a_hint(parse, text, hint):
    with pytest.raises(UnitError) as e:
        parse(text)
    message = str(e.value)
    assert hint in message
    assert "\n" not in message


@pytest.mark.parametrize("parse", [units.parse_rate, units.parse_time, units.parse_size, units.parse_queue_limit])
@pytest.mark.parametrize("value", [10, 1.5, True, None, ["10Mbit"], float("nan")])
def test_non_strings_are_rejected(parse, value):
    with pytest.raises(UnitError):
        parse(value)


def test_bare_number_names_the_expected_units():
    with pytest.raises(UnitError, match=r"write a rate in bit, kbit, Mbit or Gbit"):
        units.parse_rate(10_000_000)


@pytest.mark.parametrize("value", [-0.1, 1.5, "150%", "-1%", "1", "0.01", True, float("nan"), float("inf"), "1 %"])
def test_bad_probabilities(value):
    with pytest.raises(UnitError):
        units.parse_probability(value)


def test_unit_error_is_a_scenario_error_and_a_value_error():
    with pytest.raises(ScenarioError):
        units.parse_rate("x")
    with pytest.raises(ValueError):
        units.parse_rate("x")


@pytest.mark.parametrize(
    "fmt, value, text",
    [
        (units.format_rate, 10_000_000, "10Mbit"),
        (units.format_rate, 1_500_000, "1.5Mbit"),
        (units.format_rate, 500_000, "500kbit"),
        (units.format_rate, 1_000_000_000, "1Gbit"),
        (units.format_rate, 0, "0bit"),
        (units.format_rate, 1_234_567, "1234567bit"),
        (units.format_rate, 1_234_000, "1234kbit"),
        (units.format_time, 20_000_000, "20ms"),
        (units.format_time, 100_000_000, "100ms"),
        (units.format_time, 1_500_000_000, "1.5s"),
        (units.format_time, 60_000_000_000, "60s"),
        (units.format_time, 0, "0s"),
        (units.format_time, 1, "1ns"),
        (units.format_size, 1448, "1448B"),
        (units.format_size, 52, "52B"),
        (units.format_size, 67_108_864, "64MiB"),
        (units.format_size, 10_000_000, "10MB"),
        (units.format_size, 0, "0B"),
    ],
)
def test_format_prints_the_canonical_spelling(fmt, value, text):
    assert fmt(value) == text


def test_format_queue_limit():
    assert units.format_queue_limit(84, "pkts") == "84pkt"
    assert units.format_queue_limit(150_000, "bytes") == "150kB"


values = st.integers(min_value=0, max_value=MAX)


@given(values)
def test_rate_round_trip(bps):
    assert units.parse_rate(units.format_rate(bps)) == bps


@given(values)
def test_time_round_trip(ns):
    text = units.format_time(ns)
    assert units.parse_time(text) == ns
    number = text.rstrip("nums")
    assert len(number.partition(".")[2]) <= 3


@given(values)
def test_size_round_trip(size):
    assert units.parse_size(units.format_size(size)) == size


@given(st.integers(min_value=0, max_value=MAX), st.sampled_from(["pkts", "bytes"]))
def test_queue_limit_round_trip(value, unit):
    assert units.parse_queue_limit(units.format_queue_limit(value, unit)) == (value, unit)


@given(st.sampled_from(sorted(units.TIME_UNITS.items())), st.integers(min_value=0, max_value=10**9))
def test_integer_with_unit_scales_exactly(unit, n):
    name, mult = unit
    assert units.parse_time(f"{n}{name}") == n * mult


@given(
    st.sampled_from(sorted((k, v) for k, v in units.RATE_UNITS.items() if v >= 1000)),
    st.integers(min_value=0, max_value=10**6),
    st.integers(0, 999),
)
def test_decimal_fraction_scales_exactly(unit, whole, thousandths):
    name, mult = unit
    expected = whole * mult + thousandths * mult // 1000
    assert units.parse_rate(f"{whole}.{thousandths:03d}{name}") == expected


@given(st.floats(min_value=0.0, max_value=1.0))
def test_probability_round_trip(p):
    assert units.parse_probability(units.format_probability(p)) == p
    assert not math.isnan(units.parse_probability(p))
