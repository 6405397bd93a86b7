//! # The H-TCP additive-increase law, shared by `htcp` and `delay_aimd`
//!
//! Leith & Shorten, "H-TCP: TCP for high-speed and long-distance networks" (PFLDnet 2004) and
//! draft-leith-tcp-htcp; restated as eq. (2) of Leith et al., "Delay-based AIMD congestion control"
//! (2007). With Δ the time since the last congestion event (backoff) and Δ_L = 1 s:
//!
//! BPF twin (the Linux testbed, `docs/kernel.md`): `python/ccsim/kernel/bpf/htcp_increase.h`.
//!
//! ```text
//! α_raw(Δ) = 1                                   Δ <= Δ_L
//!          = 1 + 10 (Δ − Δ_L) + ((Δ − Δ_L)/2)²    Δ >  Δ_L          (Δ in seconds)
//! ```
//!
//! **Typo in Leith 2007 eq. (2).** The paper prints `α = min[1, 1 + 10(Δ−1) + 0.5(Δ−1)²]`. With `min`
//! the window could never grow faster than one packet per RTT, which contradicts the paper's own
//! Table I; every implementation (Linux `tcp_htcp.c`, FreeBSD `cc_htcp.c`, the ns-3 comment
//! "[0.5(Δ−Δ_L)]²") uses the piecewise form with `((Δ−Δ_L)/2)² = 0.25 (Δ−Δ_L)²`, implemented here
//! ([Leith07] eq. (2); [HTCP-draft] section 3; `docs/algorithms/htcp.md`).
//!
//! Also here: the optional RTT scaling of H-TCP (α_raw · clamp(RTTmin/RTT_ref, 0.1, 2), floored at 1
//! as both reference codes do), the per-ACK byte counting that turns "α packets per RTT" into a per-ACK
//! increment consistent with [`crate::reno::RenoIncrease`] (ABC or per-ACK counting), and a fractional
//! window accumulator so sub-byte increments are not lost.

use std::time::Duration;

use crate::{AckSample, Window};

/// H-TCP's low-speed interval Δ_L in seconds (draft-leith-tcp-htcp; Linux `HZ`, FreeBSD `hz` ticks).
pub const DELTA_L_S: f64 = 1.0;

/// H-TCP's RTT-scaling reference RTT (draft-leith-tcp-htcp; Linux `HZ/10`, FreeBSD `HTCP_RTT_REF`).
pub const RTT_REF_MS: f64 = 100.0;

/// Bounds of the RTT-scaling ratio RTTmin/RTT_ref (Linux `scale` clamped to [4, 80] in 1/8 units of
/// the inverse ratio; FreeBSD `HTCP_MINROWE`/`HTCP_MAXROWE`).
pub const RTT_SCALE_MIN: f64 = 0.1;
pub const RTT_SCALE_MAX: f64 = 2.0;

/// Largest window the real-valued accumulator will hold, in bytes (2^50: about 1 PB, far above any
/// simulated path; keeps every value exactly representable in f64 and u64).
pub const MAX_CWND_BYTES: f64 = (1u64 << 50) as f64;

/// `α_raw(Δ)` of H-TCP (Leith 2007 eq. (2) with the typo fixed, see the module header). `delta_s` is the
/// time since the last congestion event in seconds, `delta_l_s` the low-speed interval Δ_L (1 s).
/// Non-finite or negative inputs give 1.
pub fn alpha_raw(delta_s: f64, delta_l_s: f64) -> f64 {
    if !delta_s.is_finite() || !delta_l_s.is_finite() || delta_s <= delta_l_s {
        return 1.0;
    }
    let x = delta_s - delta_l_s;
    let a = 1.0 + 10.0 * x + (x / 2.0) * (x / 2.0); // (Eq. 2)
    a.min(f64::MAX / 4.0)
}

/// H-TCP RTT scaling ratio `clamp(RTTmin / RTT_ref, 0.1, 2)` (draft-leith-tcp-htcp; Linux
/// `use_rtt_scaling`).
pub fn rtt_scale(min_rtt: Duration, rtt_ref: Duration) -> f64 {
    let r = rtt_ref.as_secs_f64();
    if r <= 0.0 {
        return 1.0;
    }
    (min_rtt.as_secs_f64() / r).clamp(RTT_SCALE_MIN, RTT_SCALE_MAX)
}

/// The scaled increase factor: `max(1, α_raw · scale)` (Linux: integer `factor` made at least 1 after
/// scaling; FreeBSD: `max(1, ...)` after scaling). Without scaling pass `scale = 1`.
pub fn scaled_factor(alpha_raw: f64, scale: f64) -> f64 {
    let f = alpha_raw * scale;
    if f.is_finite() {
        f.max(1.0)
    } else {
        1.0
    }
}

/// Bytes of this ACK that count towards the additive increase, with the same semantics as
/// [`crate::reno::RenoIncrease`]: with ABC (L > 0) `min(bytes_acked, L·MSS)`; without ABC one MSS per
/// ACK (RFC 5681 per-ACK counting).
pub fn counted_bytes(ack: &AckSample, mss: u64, abc_limit_segments: u32) -> u64 {
    if ack.bytes_acked == 0 {
        0
    } else if abc_limit_segments == 0 {
        mss
    } else {
        ack.bytes_acked.min(abc_limit_segments as u64 * mss)
    }
}

/// A real-valued congestion window kept alongside the machine's integer one, so increments smaller
/// than a byte (α·MSS²/cwnd for large windows) accumulate. When the machine changes cwnd behind the
/// algorithm's back (loss, recovery exit), the next call resynchronises on the machine's value.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FracCwnd {
    value: f64,
    last_written: u64,
}

impl FracCwnd {
    /// Adopts the machine's window if it differs from what this accumulator last wrote.
    pub fn sync(&mut self, w: &Window) {
        if w.cwnd_bytes != self.last_written || !self.value.is_finite() {
            self.value = w.cwnd_bytes as f64;
            self.last_written = w.cwnd_bytes;
        }
    }

    /// The current real-valued window in bytes (after syncing with `w`).
    pub fn get(&mut self, w: &Window) -> f64 {
        self.sync(w);
        self.value
    }

    /// Adds `bytes` (ignored unless finite and positive) and writes the floor to `w`.
    pub fn add(&mut self, w: &mut Window, bytes: f64) {
        self.sync(w);
        if bytes.is_finite() && bytes > 0.0 {
            self.value = (self.value + bytes).min(MAX_CWND_BYTES);
        }
        self.write(w);
    }

    /// Sets the window to `bytes` (clamped to [MSS, MAX_CWND_BYTES]; non-finite values are ignored).
    pub fn set(&mut self, w: &mut Window, bytes: f64) {
        if bytes.is_finite() {
            self.value = bytes.clamp(w.mss_bytes as f64, MAX_CWND_BYTES);
        } else {
            self.sync(w);
        }
        self.write(w);
    }

    fn write(&mut self, w: &mut Window) {
        w.set_cwnd(self.value.floor() as u64);
        self.value = self.value.max(w.cwnd_bytes as f64);
        self.last_written = w.cwnd_bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alpha_raw_is_one_up_to_delta_l_then_quadratic() {
        assert_eq!(alpha_raw(0.0, 1.0), 1.0);
        assert_eq!(alpha_raw(1.0, 1.0), 1.0);
        // Δ = 2 s: 1 + 10·1 + (1/2)² = 11.25
        assert_eq!(alpha_raw(2.0, 1.0), 11.25);
        // Δ = 3 s: 1 + 10·2 + (2/2)² = 22
        assert_eq!(alpha_raw(3.0, 1.0), 22.0);
        // Δ = 1.5 s: 1 + 5 + 0.0625 = 6.0625
        assert_eq!(alpha_raw(1.5, 1.0), 6.0625);
        assert_eq!(alpha_raw(f64::NAN, 1.0), 1.0);
        assert!(alpha_raw(1e300, 1.0).is_finite());
    }

    #[test]
    fn rtt_scale_is_clamped_ratio_to_100ms() {
        let r = Duration::from_millis(100);
        assert_eq!(rtt_scale(Duration::from_millis(50), r), 0.5);
        assert_eq!(rtt_scale(Duration::from_millis(5), r), 0.1);
        assert_eq!(rtt_scale(Duration::from_millis(250), r), 2.0);
        assert_eq!(scaled_factor(1.0, 0.5), 1.0, "floored at 1");
        assert_eq!(scaled_factor(22.0, 0.5), 11.0);
    }

    #[test]
    fn frac_cwnd_accumulates_sub_byte_increments_and_resyncs() {
        let mut w = Window::new(10_000, 1000);
        let mut f = FracCwnd::default();
        for _ in 0..4 {
            f.add(&mut w, 0.3);
        }
        assert_eq!(w.cwnd_bytes, 10_001, "1.2 bytes accumulated");
        w.cwnd_bytes = 5_000; // the machine halves behind our back
        f.add(&mut w, 0.5);
        assert_eq!(w.cwnd_bytes, 5_000);
        f.add(&mut w, 0.5);
        assert_eq!(w.cwnd_bytes, 5_001);
        f.set(&mut w, 10.0);
        assert_eq!(w.cwnd_bytes, 1000, "never below one MSS");
    }
}
