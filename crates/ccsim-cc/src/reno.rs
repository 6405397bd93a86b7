//! The Reno window increase shared by NewReno and every algorithm that inherits it (HD, CHD, PERT,
//! TCP Limit's base, ...): slow start and congestion avoidance of RFC 5681, with appropriate byte
//! counting (RFC 3465) as FreeBSD does it (`tcp_do_rfc3465 = 1`, `abc_l_var = 2`).

use crate::{AckSample, Window};

/// Byte-counting state for congestion avoidance (FreeBSD `t_bytes_acked`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RenoIncrease {
    /// Bytes acked in congestion avoidance since cwnd last grew by one MSS (ABC only).
    pub bytes_acked_in_ca: u64,
}

impl RenoIncrease {
    /// RFC 5681 sections 3.1 with RFC 3465: grows `w` for one ACK of new data.
    ///
    /// * Slow start (cwnd <= ssthresh): with ABC, cwnd += min(bytes_acked, L * MSS) (RFC 3465 section
    ///   2.2); without, cwnd += min(bytes_acked, MSS) (RFC 5681 eq. 2).
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
        if w.in_slow_start() {
            let limit = if abc_limit_segments == 0 { mss } else { abc_limit_segments as u64 * mss };
            w.cwnd_bytes = w.cwnd_bytes.saturating_add(ack.bytes_acked.min(limit));
        } else if abc_limit_segments > 0 {
            self.bytes_acked_in_ca += ack.bytes_acked.min(abc_limit_segments as u64 * mss);
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
