"""The kernel twins' fixed-point helpers, built for the host, against the Rust functions they replace.

bpf/ccsim_fixed.h and the algorithm helpers it underlies compile without the kernel (-DCCSIM_HOST);
tests/kernel/fixed_check.c runs them on a table of inputs. The expected values are the Rust unit
tests' own (cited per case) and, over sweeps, the Rust formulas evaluated in f64 here; each
tolerance is the error the fixed-point scale allows (docs/kernel.md, "Fixed point").
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BPF = ROOT / "python" / "ccsim" / "kernel" / "bpf"
Q16, Q32 = 2**16, 2**32


@pytest.fixture(scope="module")
def fixed(tmp_path_factory):
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"no C compiler ({cc}) -- CI must run the fixed-point tests")
        pytest.skip(f"no C compiler ({cc})")
    exe = tmp_path_factory.mktemp("fixed") / "fixed_check"
    subprocess.run([cc, "-O2", "-Wall", "-Werror", "-DCCSIM_HOST", f"-I{BPF}", "-o", str(exe),
                    str(ROOT / "tests" / "kernel" / "fixed_check.c")], check=True)

    def run(*calls: tuple) -> list[int]:
        text = "".join(" ".join(str(x) for x in c) + "\n" for c in calls)
        out = subprocess.run([str(exe)], input=text, capture_output=True, text=True, check=True).stdout
        return [int(x) for x in out.split()]

    return run


# -- ccsim_fixed.h ----------------------------------------------------------------------------------

def test_mul_q32_rounds_down_and_keeps_64_bits(fixed):
    cases = [(1448, Q32 // 2), (2**40 + 12345, 4252017623), (2**63, Q32 // 4), (123456789, 3 * Q32 + 5), (0, Q32)]
    got = fixed(*[("mul_q32", a, f) for a, f in cases])
    assert got == [a * f // Q32 for a, f in cases]


def test_mul_div_is_exact_beyond_64_bit_products(fixed):
    cases = [(123456789012, Q16, 10**6), (2**40, 10**6, 2**20), (5, 7, 0), (2**50, 3 * 2**13, 2**16 + 1)]
    got = fixed(*[("mul_div", *c) for c in cases])
    assert got == [a * b // c if c else 0 for a, b, c in cases]


def test_32_bit_microsecond_times_difference_across_the_wrap(fixed):
    wrap_ns = 2**32 * 1000
    cases = [(wrap_ns + 5_000_000, wrap_ns - 3_000_000), (70 * 60 * 10**9, 0), (10**9, 10**9)]
    assert fixed(*[("since32", a, b) for a, b in cases]) == [8_000, 70 * 60 * 10**6, 0]


# -- htcp_increase.h against crates/ccsim-cc/src/algorithms/htcp_increase.rs -------------------------

def _alpha_raw(delta_s: float, delta_l_s: float) -> float:
    """Rust htcp_increase::alpha_raw."""
    if delta_s <= delta_l_s:
        return 1.0
    x = delta_s - delta_l_s
    return 1.0 + 10.0 * x + (x / 2.0) * (x / 2.0)


def test_htcp_alpha_raw_matches_the_rust_unit_tests(fixed):
    # htcp_increase.rs tests: alpha_raw(0)=1, (1)=1, (2)=11.25, (3)=22, (1.5)=6.0625, with D_L = 1 s
    got = fixed(*[("alpha_raw", int(d * 1e6), 10**6) for d in (0.0, 1.0, 2.0, 3.0, 1.5)])
    assert [g / Q16 for g in got] == [1.0, 1.0, 11.25, 22.0, 6.0625]


@pytest.mark.parametrize("delta_l_s", [1.0, 0.25])
def test_htcp_alpha_raw_sweep_within_the_stated_error(fixed, delta_l_s):
    deltas = [i * 0.0371 for i in range(0, 1700, 7)] + [600.0, 3600.0]
    got = fixed(*[("alpha_raw", int(round(d * 1e6)), int(delta_l_s * 1e6)) for d in deltas])
    for d, g in zip(deltas, got):
        want = _alpha_raw(d, delta_l_s)
        x = max(d - delta_l_s, 0.0)
        # the linear term and the square each round down by less than 2^-16; the square over whole
        # milliseconds of D - D_L adds less than x / 2000
        assert abs(g / Q16 - want) <= x / 2000 + 3 / Q16, (d, g / Q16, want)


def test_htcp_rtt_scale_and_factor_match_the_rust_unit_tests(fixed):
    # htcp_increase.rs tests: rtt_scale(50, 100 ms) = 0.5, (5 ms) = 0.1 (clamped), (250 ms) = 2
    # (clamped); scaled_factor(1, 0.5) = 1 (floored), (22, 0.5) = 11
    s50, s5, s250 = fixed(("rtt_scale", 50_000, 100_000), ("rtt_scale", 5_000, 100_000), ("rtt_scale", 250_000, 100_000))
    assert s50 / Q16 == 0.5 and s250 / Q16 == 2.0
    assert abs(s5 / Q16 - 0.1) < 1 / Q16
    f1, f22 = fixed(("scaled_factor", Q16, Q16 // 2), ("scaled_factor", 22 * Q16, Q16 // 2))
    assert f1 == Q16 and f22 == 11 * Q16


def test_htcp_rtt_scale_sweep(fixed):
    rtts = [1_000 * i for i in range(1, 400, 3)]
    got = fixed(*[("rtt_scale", r, 100_000) for r in rtts])
    for r, g in zip(rtts, got):
        assert abs(g / Q16 - min(max(r / 100_000, 0.1), 2.0)) < 1 / Q16, r


def test_slow_start_stops_at_ssthresh_only_under_the_linux_rule(fixed):
    # Rust reno.rs linux_slow_start_stops_at_ssthresh_and_counts_the_rest_in_avoidance (MSS 1000):
    # cwnd 9, ssthresh 10, 2 segments acked -> Linux 10 and one segment left for CA; FreeBSD 11.
    assert fixed(("slow_start_cwnd", 9_000, 10_000, 2_000, 1), ("slow_start_left", 9_000, 10_000, 2_000, 1)) == [10_000, 1_000]
    assert fixed(("slow_start_cwnd", 9_000, 10_000, 2_000, 0), ("slow_start_left", 9_000, 10_000, 2_000, 0)) == [11_000, 0]
    # well below ssthresh both rules take the whole count
    assert fixed(("slow_start_cwnd", 5_000, 10_000, 2_000, 1), ("slow_start_left", 5_000, 10_000, 2_000, 1)) == [7_000, 0]


def test_fractional_window_accumulates_below_a_byte(fixed):
    # Rust FracCwnd test: 10_000 bytes + 0.6 + 0.6 accumulates to 10_001 ("1.2 bytes accumulated")
    six_tenths = int(0.6 * Q16)
    assert fixed(("frac_add", 10_000, six_tenths, six_tenths)) == [10_001]
    assert fixed(("frac_add", 10_000, 3 * Q16 + 1, 0)) == [10_003]


# -- reno_loss.h against loss_ssthresh in crates/ccsim-cc/src/reno.rs ---------------------------------

FLIGHT, CWND, PIPE = 0, 1, 2   # Rust HalveFrom
HOLD, RECOMPUTE = 0, 1         # Rust RepeatedTimeout
UNSET = 2**64 - 1              # ssthresh "arbitrarily high"


def test_reno_loss_rule_matches_the_rust_unit_tests(fixed):
    # reno.rs loss_halves_the_chosen_amount_with_a_floor_of_two_segments: cwnd 11 500, FlightSize
    # 18 000, pipe 16 000, MSS 1000, a fast retransmit (backoff 0)
    fr = [("reno_loss", h, HOLD, 11_500, UNSET, 1000, 0, 18_000, 16_000) for h in (FLIGHT, PIPE, CWND)]
    floor = [("reno_loss", CWND, HOLD, 3_000, UNSET, 1000, 0, 3_000, 3_000),
             ("reno_loss", FLIGHT, HOLD, 11_500, UNSET, 1000, 0, 3_000, 3_000)]
    assert fixed(*fr, *floor) == [9_000, 8_000, 5_000, 2_000, 2_000]
    # a_repeated_timeout_holds_or_recomputes_as_asked: cwnd 1 MSS, ssthresh 9 MSS after a first expiry
    held = [("reno_loss", h, HOLD, 1000, 9000, 1000, 2, 4000, 4000) for h in (FLIGHT, CWND, PIPE)]
    other = [("reno_loss", CWND, RECOMPUTE, 1000, 9000, 1000, 2, 4000, 4000),
             ("reno_loss", FLIGHT, RECOMPUTE, 1000, 9000, 1000, 2, 4000, 4000),
             ("reno_loss", FLIGHT, HOLD, 1000, 9000, 1000, 1, 4000, 4000),
             ("reno_loss", FLIGHT, HOLD, 1000, UNSET, 1000, 2, 4000, 4000)]
    assert fixed(*held, *other) == [9000, 9000, 9000, 2000, 2000, 2000, 2000]


# -- delay_probability.h against crates/ccsim-cc/src/algorithms/delay_probability.rs ----------------

def _two_region(q: float, q_max: float, q_min: float, q_th: float, p_max: float) -> float:
    """Rust TwoRegion::probability."""
    if q <= q_min:
        return 0.0
    if q < q_th:
        return p_max * (q - q_min) / (q_th - q_min)
    if q == q_th:
        return p_max
    if q > q_max or q_max <= q_th:
        return 0.0
    return p_max * (q_max - q) / (q_max - q_th)


def test_two_region_probability_sweep(fixed):
    q_min, q_th, p_max = 5_000, 30_000, int(0.02 * Q32)
    cases = [(q, q_max) for q_max in (20_000, 30_000, 90_000) for q in range(0, 100_000, 777)]
    got = fixed(*[("two_region", q_min, q_th, p_max, (q << 32) | q_max) for q, q_max in cases])
    for (q, q_max), g in zip(cases, got):
        want = _two_region(q, q_max, q_min, q_th, p_max / Q32)
        assert abs(g / Q32 - want) <= 1 / Q32, (q, q_max)


def test_quantise_to_ticks_as_freebsd_h_ertt(fixed):
    # Rust quantise_to_ticks: floor(d / tick) + 1 ticks; tick 0 leaves d alone
    assert fixed(("quantise", 0, 1000), ("quantise", 999, 1000), ("quantise", 1000, 1000), ("quantise", 1234, 0)) == [
        1000, 1000, 2000, 1234]


# -- westwood_filter.h against WestwoodPlusBw in crates/ccsim-cc/src/algorithms/rate_estimators.rs ---

def test_westwood_sample_is_bytes_over_the_window(fixed):
    cases = [(14480, 50_001), (125_000, 100_000), (1, 10**6), (10**9, 40_000)]
    got = fixed(*[("ww_sample", bk, d) for bk, d in cases])
    for (bk, d), g in zip(cases, got):
        assert g == (bk << 16) * 10**6 // d  # Rust: bk as f64 / secs, here rounded down in Q16


def test_westwood_cascaded_ewma_matches_the_rust_filter(fixed):
    def rust(samples):  # WestwoodPlusBw::filter
        ns = est = 0.0
        for s in samples:
            if ns == 0.0 and est == 0.0:
                ns = est = s
            else:
                ns = (7 * ns + s) / 8
                est = (7 * est + ns) / 8
        return est

    for samples in ([1.25e6, 1.25e6, 1.25e6], [1.0e6, 2.0e6, 0.5e6], [3.3e4, 1.2e6, 9.0e5]):
        (g,) = fixed(("ww_filter", *[int(s * Q16) for s in samples]))
        assert abs(g / Q16 - rust(samples)) < 3 / Q16


def test_westwood_bw_rttmin_floor_and_product(fixed):
    # bw_rttmin_bytes: max(BWE * RTTmin, 2 MSS), no rounding to whole segments
    got = fixed(("ww_bwrtt", int(1.25e6 * Q16), 40_000, 1448), ("ww_bwrtt", int(1e4 * Q16), 40_000, 1448),
                ("ww_bwrtt", int(123456.5 * Q16), 123_457, 1000))
    assert got == [50_000, 2 * 1448, int(123456.5 * 0.123457)]


# -- binomial_power.h against f64::powf, which binomial.rs calls ------------------------------------

@pytest.mark.parametrize("x", [0.0, 0.5, 1.0, 1.5, 2.0])
def test_binomial_power_within_its_stated_error(fixed, x):
    windows = [1.0, 1.5, 2.0, 3.7, 10.0, 33.3, 100.0, 1234.5, 65000.0]
    got = fixed(*[("pow_q16", int(w * Q16), int(x * Q32)) for w in windows])
    inv = fixed(*[("inv_pow_q32", int(w * Q16), int((x + 1) * Q32)) for w in windows])
    bound = (x + 1) * 2**-16 * math.log(2) + 2**-25  # binomial_power.h
    for w, g, i in zip(windows, got, inv):
        assert abs(g / Q16 - w**x) <= bound * w**x + 1 / Q16, (w, x)
        want = w ** -(x + 1)
        assert abs(i / Q32 - want) <= ((x + 2) * 2**-16 * math.log(2) + 2**-25) * want + 1 / Q32, (w, x)


def test_binomial_log2(fixed):
    ws = [1.0, 2.0, 3.0, 100.0, 2.0**20 + 1]
    got = fixed(*[("log2_q16", int(w * Q16)) for w in ws])
    for w, g in zip(ws, got):
        assert 0 <= math.log2(w) - g / Q16 < 2 / Q16, w


# -- loss_interval.h against IntervalEstimator in crates/ccsim-cc/src/algorithms/loss_interval.rs ---

def _rust_mean_interval(intervals: list[float], open_: float) -> float | None:
    """IntervalEstimator::mean_interval after closing ``intervals`` (oldest first), with ``open_``."""
    weights = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2]
    history = list(reversed(intervals))[:8]
    k = len(history)
    if k == 0:
        return None

    def interval(i):
        return open_ if i == 0 else history[i - 1]

    tot0 = sum(interval(i) * weights[i] for i in range(k))
    tot1 = sum(interval(i) * weights[i - 1] for i in range(1, k + 1))
    return max(tot0, tot1) / sum(weights[:k])


@pytest.mark.parametrize("seed, events, open_", [(10, 3, 5), (100, 8, 0), (7, 12, 400), (1, 1, 1), (50, 0, 9)])
def test_tfrc_mean_interval(fixed, seed, events, open_):
    (got,) = fixed(("li_mean", seed, events, open_))
    want = _rust_mean_interval([seed + e for e in range(events)], open_)
    if want is None:
        assert got == 2**64 - 1
    else:
        assert abs(got / Q16 - want) < 1 / Q16


# -- tcp_limit_fixed.h (rate_estimators.rs: WindowedRate's exact filter, TustinFilter) ------------------

@pytest.mark.parametrize("tau_us", [40_000, 41_250, 500_000])
def test_tcp_limit_decay_factor_within_its_stated_error(fixed, tau_us):
    """e^(-dt/tau) of the exact RE filter: relative error below 1.1e-5 (docs/kernel.md)."""
    dts = [0, 1, 17, 1_200, tau_us // 3, tau_us, 2 * tau_us + 7, 10 * tau_us, 30 * tau_us]
    got = fixed(*[("tl_exp_neg", dt, tau_us) for dt in dts])
    for dt, g in zip(dts, got):
        want = math.exp(-dt / tau_us)
        assert abs(g / Q32 - want) <= want * 1.1e-5 + 2**-32, (dt, g / Q32, want)
    assert fixed(("tl_exp_neg", 64 * tau_us, tau_us)) == [0]


def test_tcp_limit_exact_filter_piece_moves_towards_the_window_rate(fixed):
    """Rust WindowedRate::integrate: est <- w + (est - w) f, from above and from below."""
    cases = [(1_000_000 * Q16, 1_250_000 * Q16, Q32 // 3), (9 * Q16, 2 * Q16, Q32 // 2), (5, 5, 123), (7 * Q16, 0, 0)]
    got = fixed(*[("tl_decay", e, w, f) for e, w, f in cases])
    for (e, w, f), g in zip(cases, got):
        assert abs(g - (w + (e - w) * f / Q32)) <= 1


def test_tcp_limit_tustin_coefficient_and_rates(fixed):
    """a_k = (2 tau - dt)/(2 tau + dt) (rate_estimators.rs TustinFilter::step); rate and CWE in Q16."""
    cases = [(0, 500_000), (1_200, 500_000), (250_000, 500_000), (1_000_000, 500_000)]
    got = fixed(*[("tl_tustin_a", dt, tau) for dt, tau in cases])
    assert got == [(2 * tau - dt) * Q32 // (2 * tau + dt) for dt, tau in cases]
    # 2896 bytes acked 2.4 ms after the last ACK: 1206666.67 B/s; 1.25e6 B/s over RTTmin 40 ms = 50000 B
    assert fixed(("tl_rate", 2896, 2400), ("tl_cwe", 1_250_000 * Q16, 40_000)) == [2896 * Q16 * 10**6 // 2400, 50_000 * Q16]
