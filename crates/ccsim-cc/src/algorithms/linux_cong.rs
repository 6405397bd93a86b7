//! Linux's window-growth helpers of `net/ipv4/tcp_cong.c`, shared by the algorithms written after
//! Linux modules (`cubic`, `vegas`): `tcp_slow_start`, `tcp_cong_avoid_ai` and `tcp_reno_cong_avoid`,
//! in whole segments as Linux counts them, and the packet count an ACK delivers (Linux's
//! `acked_sacked`, `tp->delivered` before and after the ACK).
//!
//! No BPF twin: a BPF program calls the kernel's own helpers (the `tcp_slow_start`,
//! `tcp_cong_avoid_ai` and `tcp_reno_cong_avoid` kfuncs) that this module writes in Rust.
//!
//! The window stays in bytes ([`Window`]); Linux's `snd_cwnd += n` is `cwnd_bytes += n * MSS` here, so
//! a window the machine left at a fraction of a segment keeps that fraction. Linux's
//! `tp->snd_cwnd_cnt` lives in [`CongAvoidCount`], owned by the algorithm (the seam gives an algorithm
//! no socket); the algorithms clear it where Linux does (`tcp_init_cwnd_reduction`, `tcp_enter_loss`).

use crate::{AckSample, Window};

/// Linux's `tp->snd_cwnd_cnt`: segments acknowledged in congestion avoidance since cwnd last grew.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CongAvoidCount(pub u64);

/// Linux `tcp_in_slow_start`: cwnd < ssthresh. The Linux modules use it whatever the stack's
/// [`crate::SlowStartRule`]: their rules are written against it (Vegas, for one, sets ssthresh =
/// cwnd to leave slow start, which FreeBSD's `cwnd <= ssthresh` would read as still in slow start,
/// and its window would stop growing there).
pub fn in_slow_start(w: &Window) -> bool {
    w.cwnd_bytes < w.ssthresh_bytes
}

/// cwnd in whole segments (Linux `tcp_snd_cwnd`), at least one.
pub fn cwnd_segments(w: &Window) -> u64 {
    (w.cwnd_bytes / w.mss_bytes).max(1)
}

/// Linux `tcp_slow_start`: cwnd += acked segments, not beyond ssthresh; returns the segments left
/// over for congestion avoidance. No ABC limit: Linux counts every delivered segment.
pub fn slow_start(w: &mut Window, acked: u64) -> u64 {
    let grown = w.cwnd_bytes.saturating_add(acked.saturating_mul(w.mss_bytes)).min(w.ssthresh_bytes).max(w.cwnd_bytes);
    let used = (grown - w.cwnd_bytes).div_ceil(w.mss_bytes);
    w.cwnd_bytes = grown;
    acked.saturating_sub(used)
}

/// The opening of Linux's `cong_avoid` hooks (`tcp_reno_cong_avoid`, `cubictcp_cong_avoid`):
/// nothing unless cwnd-limited (`tcp_is_cwnd_limited`), then slow start takes what it can; the
/// segments left for congestion avoidance, or None when slow start used them all (outside slow
/// start the hook goes on even with none, as Linux's does).
pub fn left_after_slow_start(w: &mut Window, ack: &AckSample, acked: u64) -> Option<u64> {
    if !ack.cwnd_limited {
        return None;
    }
    if !in_slow_start(w) {
        return Some(acked);
    }
    let left = slow_start(w, acked);
    (left > 0).then_some(left)
}

impl CongAvoidCount {
    /// Linux `tcp_cong_avoid_ai(tp, w, acked)`: one segment more per `per` segments acked. Credit
    /// gathered while `per` was larger is first turned into one segment, as Linux does.
    pub fn add(&mut self, w: &mut Window, per: u64, acked: u64) {
        let per = per.max(1);
        if self.0 >= per {
            self.0 = 0;
            w.cwnd_bytes = w.cwnd_bytes.saturating_add(w.mss_bytes);
        }
        self.0 += acked;
        if self.0 >= per {
            let grow = self.0 / per;
            self.0 -= grow * per;
            w.cwnd_bytes = w.cwnd_bytes.saturating_add(grow.saturating_mul(w.mss_bytes));
        }
    }

    /// Linux `tcp_reno_cong_avoid`: nothing unless cwnd-limited; slow start, then one segment per
    /// window of segments acked.
    pub fn reno(&mut self, w: &mut Window, ack: &AckSample, acked: u64) {
        if let Some(acked) = left_after_slow_start(w, ack, acked) {
            self.add(w, cwnd_segments(w), acked);
        }
    }
}

/// Segments an ACK delivered, cumulatively or by SACK, each counted once (Linux `acked_sacked` =
/// `tp->delivered` after the ACK less before), from the [`AckSample::delivered_bytes`] counter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Delivered {
    last_bytes: u64,
}

impl Delivered {
    /// Segments (rounded up) delivered since the previous call.
    pub fn take(&mut self, ack: &AckSample, mss: u64) -> u64 {
        let new = ack.delivered_bytes.saturating_sub(self.last_bytes);
        self.last_bytes = self.last_bytes.max(ack.delivered_bytes);
        new.div_ceil(mss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SlowStartRule;

    const MSS: u64 = 1000;

    fn window(cwnd: u64, ssthresh: u64) -> Window {
        Window { cwnd_bytes: cwnd * MSS, ssthresh_bytes: ssthresh * MSS, mss_bytes: MSS, slow_start: SlowStartRule::Freebsd, pacing_rate_bytes_per_s: u64::MAX }
    }

    #[test]
    fn slow_start_is_linux_cwnd_below_ssthresh_whatever_the_stack_rule() {
        let w = window(10, 10);
        assert!(w.in_slow_start(), "FreeBSD's rule: cwnd <= ssthresh");
        assert!(!in_slow_start(&w), "Linux's: cwnd < ssthresh");
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_returns_the_rest() {
        let mut w = window(9, 10);
        assert_eq!(slow_start(&mut w, 3), 2, "one segment to reach ssthresh, two left");
        assert_eq!(w.cwnd_bytes, 10 * MSS);
        let mut w = window(4, u64::MAX / MSS);
        assert_eq!(slow_start(&mut w, 5), 0, "no ABC limit: five segments acked, five more");
        assert_eq!(w.cwnd_bytes, 9 * MSS);
    }

    #[test]
    fn cong_avoid_ai_grows_one_segment_per_w_acked_and_applies_old_credit_first() {
        let mut w = window(10, 5);
        let mut c = CongAvoidCount::default();
        c.add(&mut w, 10, 9);
        assert_eq!((w.cwnd_bytes, c.0), (10 * MSS, 9));
        c.add(&mut w, 10, 12);
        assert_eq!((w.cwnd_bytes, c.0), (12 * MSS, 1), "21 counted: two segments, one left");
        // Credit 8 gathered at w = 10 meets w = 4: one segment at once, then the count restarts.
        let mut c = CongAvoidCount(8);
        c.add(&mut w, 4, 1);
        assert_eq!((w.cwnd_bytes, c.0), (13 * MSS, 1));
    }
}
