//! The Reno window increase shared by NewReno and every algorithm that inherits it (HD, CHD, PERT,
//! TCP Limit's base, ...): slow start and congestion avoidance of RFC 5681, with appropriate byte
//! counting (RFC 3465) as FreeBSD does it (`tcp_do_rfc3465 = 1`, `abc_l_var = 2`).

use crate::{AckSample, SlowStartRule, Window};

/// Byte-counting state for congestion avoidance (FreeBSD `t_bytes_acked`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RenoIncrease {
    /// Bytes acked in congestion avoidance since cwnd last grew by one MSS (ABC only).
    pub bytes_acked_in_ca: u64,
}

impl RenoIncrease {
    /// RFC 5681 sections 3.1 with RFC 3465: grows `w` for one ACK of new data.
    ///
    /// * Slow start (cwnd <= ssthresh, or cwnd < ssthresh under [`SlowStartRule::Linux`]): with ABC,
    ///   cwnd += min(bytes_acked, L * MSS) (RFC 3465 section 2.2); without, cwnd += min(bytes_acked,
    ///   MSS) (RFC 5681 eq. 2). Under the Linux rule the increase stops at ssthresh and what is left of
    ///   the ACK's count is counted in congestion avoidance (Linux `tcp_slow_start`,
    ///   `tcp_reno_cong_avoid`).
    /// * Congestion avoidance: with ABC, cwnd += MSS each time a full cwnd of bytes has been acked
    ///   (RFC 3465 section 2.1); without, cwnd += max(MSS*MSS/cwnd, 1) per ACK (RFC 5681 eq. 3).
    ///
    /// Returns the number of bytes added. Does nothing for duplicate ACKs, during recovery, or when the
    /// sender was not cwnd-limited (FreeBSD and Linux both skip growth then).
    pub fn on_ack(&mut self, w: &mut Window, ack: &AckSample, abc_limit_segments: u32) -> u64 {
        if ack.bytes_acked == 0 || ack.in_recovery || !ack.cwnd_limited {
            return 0;
        }
        let mss = w.mss_bytes;
        let before = w.cwnd_bytes;
        let limit = if abc_limit_segments == 0 { mss } else { abc_limit_segments as u64 * mss };
        let mut counted = ack.bytes_acked.min(limit);
        if w.in_slow_start() {
            let grown = w.cwnd_bytes.saturating_add(counted);
            match w.slow_start {
                SlowStartRule::Freebsd => {
                    w.cwnd_bytes = grown;
                    return w.cwnd_bytes - before;
                }
                // Linux tcp_slow_start: stop at ssthresh, the rest of the count goes on to
                // congestion avoidance (tcp_reno_cong_avoid).
                SlowStartRule::Linux => {
                    w.cwnd_bytes = grown.min(w.ssthresh_bytes);
                    counted -= w.cwnd_bytes - before;
                    if counted == 0 {
                        return w.cwnd_bytes - before;
                    }
                }
            }
        }
        if abc_limit_segments > 0 {
            self.bytes_acked_in_ca += counted;
            if self.bytes_acked_in_ca >= w.cwnd_bytes {
                self.bytes_acked_in_ca -= w.cwnd_bytes;
                w.cwnd_bytes = w.cwnd_bytes.saturating_add(mss);
            }
        } else {
            w.cwnd_bytes = w.cwnd_bytes.saturating_add((mss * mss / w.cwnd_bytes.max(1)).max(1));
        }
        w.cwnd_bytes - before
    }

    /// Forget partial byte counts (after a window reduction, as FreeBSD clears t_bytes_acked).
    pub fn reset(&mut self) {
        self.bytes_acked_in_ca = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ack(bytes: u64) -> AckSample {
        AckSample { bytes_acked: bytes, cwnd_limited: true, ..AckSample::default() }
    }

    fn window(cwnd: u64, ssthresh: u64, rule: SlowStartRule) -> Window {
        Window { cwnd_bytes: cwnd, ssthresh_bytes: ssthresh, mss_bytes: MSS, slow_start: rule }
    }

    #[test]
    fn at_ssthresh_freebsd_is_still_in_slow_start_linux_is_not() {
        let mut inc = RenoIncrease::default();
        let mut w = window(10 * MSS, 10 * MSS, SlowStartRule::Freebsd);
        inc.on_ack(&mut w, &ack(2 * MSS), 2);
        assert_eq!(w.cwnd_bytes, 12 * MSS, "FreeBSD: cwnd <= ssthresh is slow start, +L*MSS");
        let mut inc = RenoIncrease::default();
        let mut w = window(10 * MSS, 10 * MSS, SlowStartRule::Linux);
        inc.on_ack(&mut w, &ack(2 * MSS), 2);
        assert_eq!(w.cwnd_bytes, 10 * MSS, "Linux: cwnd == ssthresh is congestion avoidance");
        assert_eq!(inc.bytes_acked_in_ca, 2 * MSS);
    }

    #[test]
    fn linux_slow_start_stops_at_ssthresh_and_counts_the_rest_in_avoidance() {
        // Linux tcp_slow_start: cwnd 9, ssthresh 10, 2 segments acked -> cwnd 10, 1 segment left.
        let mut inc = RenoIncrease::default();
        let mut w = window(9 * MSS, 10 * MSS, SlowStartRule::Linux);
        assert_eq!(inc.on_ack(&mut w, &ack(2 * MSS), 2), MSS);
        assert_eq!(w.cwnd_bytes, 10 * MSS);
        assert_eq!(inc.bytes_acked_in_ca, MSS, "the segment beyond ssthresh is counted in CA");
        // FreeBSD overshoots: cwnd 9 <= 10, +2 segments.
        let mut inc = RenoIncrease::default();
        let mut w = window(9 * MSS, 10 * MSS, SlowStartRule::Freebsd);
        inc.on_ack(&mut w, &ack(2 * MSS), 2);
        assert_eq!(w.cwnd_bytes, 11 * MSS);
        assert_eq!(inc.bytes_acked_in_ca, 0);
    }
}
