//! # The two-region delay backoff probability g(q) shared by HD and CHD
//!
//! Budzisz, Stanojević, Schlote, Shorten, Baker, "On the fair coexistence of loss- and delay-based
//! TCP" (2009), section III, Fig. 6 ("per-packet back-off probability as a function of observed
//! delay"); Hayes & Armitage, "Improved coexistence and loss tolerance for delay based TCP congestion
//! control" (LCN 2010), Fig. 1 and eq. (1)/(2). Keys [Budzisz09], [Hayes10] in `docs/bibliography.md`.
//!
//! BPF twin (the Linux testbed, `docs/kernel.md`): `python/ccsim/kernel/bpf/delay_probability.h`.
//!
//! ```text
//! g(q) = 0                                   q <= q_min
//!      = p_max (q - q_min) / (q_th - q_min)   q_min < q < q_th      region A, rising
//!      = p_max                               q == q_th
//!      = p_max (q_max - q) / (q_max - q_th)   q_th < q <= q_max     region B, falling
//!      = 0                                   q > q_max
//! ```
//!
//! `q` is the queueing delay estimate (RTT - RTTmin) and `q_max` the largest queueing delay observed
//! (FreeBSD `maxrtt - minrtt`, a lifetime maximum), so g = 0 exactly at a new maximum.
//!
//! Differences from the FreeBSD code (`cc_hd.c`, `cc_chd.c`, `should_backoff`):
//! * FreeBSD computes an integer threshold `((RANDOM_MAX/100)*pmax_pct/(qth-qmin))*(q-qmin)` and
//!   compares `random()` against it; here p is an `f64` and the caller compares a uniform [0, 1)
//!   draw with it. The integer truncations change p by less than 1e-8; the quantisation
//!   that matters, q in whole 1 ms ticks, is available through [`quantise_to_ticks`].
//! * Region B when `q_max <= q_th` would divide by zero (FreeBSD cannot reach it because
//!   q <= q_max always holds there); here any `q > q_max` gives 0 first, so the division only runs with
//!   `q_max > q >= q_th`, and the result is clamped to [0, p_max].
//!
//! The rising half, [`rising_ramp`], is the RED-like law PERT and mPERT use ([Budzisz09] §II, Fig. 1).

use std::time::Duration;

/// Where a queueing delay falls on the two-region curve (for tracing and tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Region {
    /// q <= q_min: no delay backoff, and (CHD) no draw at all.
    BelowMin,
    /// q_min < q < q_th.
    A,
    /// q == q_th.
    Threshold,
    /// q_th < q <= q_max.
    B,
    /// q > q_max (only possible with a q_max that is not the running maximum).
    AboveMax,
}

/// The two-region backoff probability function of Budzisz et al. Fig. 6.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoRegion {
    pub q_min: Duration,
    pub q_th: Duration,
    /// Probability at q == q_th, in [0, 1].
    pub p_max: f64,
}

/// Reads the `q_min_ms` and `q_th_ms` parameters shared by HD and CHD and checks q_min < q_th.
pub fn read_thresholds(p: &crate::params::ParamReader) -> Result<(Duration, Duration), crate::CcError> {
    let q_min = p.millis("q_min_ms");
    let q_th = p.millis("q_th_ms");
    if q_min >= q_th {
        return Err(p.invalid("q_min_ms", format!("must be < q_th_ms ({} ms)", p.f64("q_th_ms"))));
    }
    Ok((q_min, q_th))
}

impl TwoRegion {
    pub fn region(&self, q: Duration, q_max: Duration) -> Region {
        if q <= self.q_min {
            Region::BelowMin
        } else if q < self.q_th {
            Region::A
        } else if q == self.q_th {
            Region::Threshold
        } else if q > q_max {
            Region::AboveMax
        } else {
            Region::B
        }
    }

    /// g(q) with the running maximum `q_max`. Always finite and in [0, p_max].
    pub fn probability(&self, q: Duration, q_max: Duration) -> f64 {
        let p = match self.region(q, q_max) {
            Region::BelowMin | Region::AboveMax => 0.0,
            // Region A (Budzisz Fig. 6, Hayes Fig. 1): linear from 0 at q_min to p_max at q_th.
            Region::A => rising_ramp(q, self.q_min, self.q_th, self.p_max),
            Region::Threshold => self.p_max,
            // Region B: linear from p_max at q_th down to 0 at q_max. Reached only with
            // q_th < q <= q_max, so the denominator is > 0.
            Region::B => {
                let num = nanos(q_max.saturating_sub(q));
                let den = nanos(q_max.saturating_sub(self.q_th));
                if den > 0.0 {
                    self.p_max * num / den
                } else {
                    0.0
                }
            }
        };
        clamp_probability(p, self.p_max)
    }
}

/// RED-like rising ramp: 0 for q <= lo, p_max·(q − lo)/(hi − lo) for lo < q < hi, p_max for q >= hi.
/// Finite for any input; a degenerate ramp (hi <= lo) is a step at lo.
pub fn rising_ramp(q: Duration, lo: Duration, hi: Duration, p_max: f64) -> f64 {
    if q <= lo {
        0.0
    } else if q >= hi {
        clamp_probability(p_max, p_max)
    } else {
        let p = p_max * nanos(q - lo) / nanos(hi - lo);
        clamp_probability(p, p_max)
    }
}

/// FreeBSD h_ertt style quantisation: a sample becomes `floor(d / tick) + 1` whole ticks (the ERTT
/// sample is `now_ticks - tx_ticks + 1`). `tick == 0` leaves `d` unchanged.
pub fn quantise_to_ticks(d: Duration, tick: Duration) -> Duration {
    let t = tick.as_nanos();
    if t == 0 {
        return d;
    }
    let ticks = d.as_nanos() / t + 1;
    Duration::from_nanos(u64::try_from(ticks.saturating_mul(t)).unwrap_or(u64::MAX))
}

/// Queueing delay `rtt - min_rtt` (never negative), both optionally quantised to ticks first.
pub fn queueing_delay(rtt: Duration, min_rtt: Duration, tick: Duration) -> Duration {
    quantise_to_ticks(rtt, tick).saturating_sub(quantise_to_ticks(min_rtt, tick))
}

/// Milliseconds as `f64`, for metrics.
pub fn millis_f64(d: Duration) -> f64 {
    d.as_nanos() as f64 * 1e-6
}

fn nanos(d: Duration) -> f64 {
    d.as_nanos() as f64
}

fn clamp_probability(p: f64, p_max: f64) -> f64 {
    let hi = if p_max.is_finite() { p_max.clamp(0.0, 1.0) } else { 0.0 };
    if p.is_finite() {
        p.clamp(0.0, hi)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: f64) -> Duration {
        Duration::from_nanos((x * 1e6).round() as u64)
    }

    /// Hayes & Armitage's HD setting: q_min 5 ms, q_th 30 ms, p_max 0.02 (Budzisz's runs: 5/20 ms).
    fn hayes() -> TwoRegion {
        TwoRegion { q_min: ms(5.0), q_th: ms(30.0), p_max: 0.02 }
    }

    #[test]
    fn zero_at_and_below_q_min() {
        let g = hayes();
        assert_eq!(g.probability(ms(0.0), ms(100.0)), 0.0);
        assert_eq!(g.probability(ms(5.0), ms(100.0)), 0.0);
        assert_eq!(g.region(ms(5.0), ms(100.0)), Region::BelowMin);
    }

    #[test]
    fn region_a_rises_linearly_to_p_max() {
        let g = hayes();
        // q = 17.5 ms: 0.02 * 12.5 / 25 = 0.01
        assert!((g.probability(ms(17.5), ms(100.0)) - 0.01).abs() < 1e-12);
        // q = 10 ms: 0.02 * 5 / 25 = 0.004
        assert!((g.probability(ms(10.0), ms(100.0)) - 0.004).abs() < 1e-12);
        assert_eq!(g.region(ms(10.0), ms(100.0)), Region::A);
    }

    #[test]
    fn p_max_exactly_at_q_th() {
        let g = hayes();
        assert_eq!(g.probability(ms(30.0), ms(100.0)), 0.02);
        assert_eq!(g.region(ms(30.0), ms(100.0)), Region::Threshold);
        // q == q_th is p_max even when q_max == q_th (the running maximum sits at q_th).
        assert_eq!(g.probability(ms(30.0), ms(30.0)), 0.02);
    }

    #[test]
    fn region_b_falls_linearly_to_zero_at_q_max() {
        let g = hayes();
        // q = 65 ms, q_max = 100 ms: 0.02 * 35 / 70 = 0.01
        assert!((g.probability(ms(65.0), ms(100.0)) - 0.01).abs() < 1e-12);
        // q = q_max: 0 (a new maximum never backs off)
        assert_eq!(g.probability(ms(100.0), ms(100.0)), 0.0);
        assert_eq!(g.region(ms(65.0), ms(100.0)), Region::B);
    }

    #[test]
    fn zero_above_q_max() {
        let g = hayes();
        assert_eq!(g.probability(ms(101.0), ms(100.0)), 0.0);
        assert_eq!(g.region(ms(101.0), ms(100.0)), Region::AboveMax);
    }

    #[test]
    fn q_max_at_or_below_q_th_never_divides_by_zero() {
        let g = hayes();
        for qmax in [0.0, 10.0, 29.999, 30.0] {
            for q in [30.001, 31.0, 1000.0] {
                let p = g.probability(ms(q), ms(qmax));
                assert_eq!(p, 0.0, "q {q} q_max {qmax}");
            }
        }
    }

    #[test]
    fn degenerate_and_extreme_inputs_stay_in_range() {
        let g = TwoRegion { q_min: ms(30.0), q_th: ms(30.0), p_max: 1.0 };
        assert_eq!(g.probability(ms(30.0), ms(40.0)), 0.0, "q <= q_min wins");
        assert!(g.probability(ms(35.0), ms(40.0)) <= 1.0);
        let g = TwoRegion { q_min: ms(5.0), q_th: ms(30.0), p_max: 1.0 };
        let p = g.probability(Duration::MAX, Duration::MAX);
        assert!(p.is_finite() && (0.0..=1.0).contains(&p));
        assert_eq!(rising_ramp(ms(3.0), ms(5.0), ms(5.0), 0.5), 0.0);
        assert_eq!(rising_ramp(ms(6.0), ms(5.0), ms(5.0), 0.5), 0.5);
    }

    #[test]
    fn freebsd_fixed_point_matches_float_within_quantisation() {
        // Spec 1.2 worked example: pmax 5 %, qmin 5, qth 20, q = 19 ticks: P = 100215892 / 2^31.
        let g = TwoRegion { q_min: ms(5.0), q_th: ms(20.0), p_max: 0.05 };
        let freebsd = 100_215_892.0 / 2_147_483_648.0;
        assert!((g.probability(ms(19.0), ms(100.0)) - freebsd).abs() < 1e-7);
    }

    #[test]
    fn tick_quantisation_adds_one_tick() {
        let tick = ms(1.0);
        assert_eq!(quantise_to_ticks(ms(40.2), tick), ms(41.0));
        assert_eq!(quantise_to_ticks(ms(40.0), tick), ms(41.0));
        assert_eq!(quantise_to_ticks(ms(40.2), Duration::ZERO), ms(40.2));
        // 45.9 - 40.2 = 5.7 ms becomes 46 - 41 = 5 ticks.
        assert_eq!(queueing_delay(ms(45.9), ms(40.2), tick), ms(5.0));
        assert_eq!(queueing_delay(ms(39.0), ms(40.0), Duration::ZERO), Duration::ZERO);
    }
}
