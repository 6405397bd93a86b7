//! The Reno window rules shared by NewReno and every algorithm that inherits them:
//! * the increase (NewReno, HD, CHD, PERT, mPERT, TCP Limit's base, ...): slow start and congestion
//!   avoidance of RFC 5681, with appropriate byte counting (RFC 3465) as FreeBSD does it
//!   (`tcp_do_rfc3465 = 1`, `abc_l_var = 2`), [`RenoIncrease`];
//! * the loss rule (NewReno, HD, PERT, mPERT, binomial's timeout): ssthresh = half of FlightSize, cwnd
//!   or the pipe ([`HalveFrom`]) with a floor of two segments, and what a repeated timeout does
//!   ([`RepeatedTimeout`]), [`loss_ssthresh`].
//!
//! BPF twins: `python/ccsim/kernel/bpf/reno_increase.h` and `reno_loss.h`.

use crate::{half_cwnd_segments, half_window, AckSample, LossEvent, LossKind, SlowStartRule, Window};

crate::param_choice! {
    /// What a loss halves (`halve_from`): FlightSize (RFC 5681 eq. (4), RFC 6675 step 4.2), cwnd
    /// (FreeBSD `cc_newreno`, Linux `tcp_reno_ssthresh`) or the RFC 6675 pipe (ns-3: its
    /// `TcpSocketBase::EnterRecovery` hands `GetSsThresh` the pipe after marking the first
    /// unacknowledged segment lost, about FlightSize less the SACKed segments and the lost ones).
    pub enum HalveFrom { Flight = "flight", Cwnd = "cwnd", Pipe = "pipe" }
}

impl HalveFrom {
    /// The amount a loss halves.
    pub fn bytes(self, w: &Window, loss: &LossEvent) -> u64 {
        match self {
            HalveFrom::Flight => loss.bytes_in_flight,
            HalveFrom::Cwnd => w.cwnd_bytes,
            HalveFrom::Pipe => loss.pipe_bytes,
        }
    }
}

/// What a later expiry of the retransmission timer for the same segment (`backoff > 1`) does to
/// ssthresh. The algorithms differ here on purpose (each file's doc comment says which it follows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RepeatedTimeout {
    /// RFC 5681 section 3.1: ssthresh is "held constant" (Linux `tcp_enter_loss` likewise computes
    /// it only on the first expiry, `icsk_ca_state < TCP_CA_Loss`).
    Hold,
    /// FreeBSD: `tcp_timer_rexmt` calls `cc_cong_signal(CC_RTO)` (`sys/netinet/tcp_input.c`) at every
    /// expiry, which recomputes ssthresh from cwnd: 2 segments once cwnd is 1 segment.
    Recompute,
}

/// The Reno loss rule: the new ssthresh after a fast retransmit or a timeout. Half of the
/// [`HalveFrom`] amount with a floor of two segments (RFC 5681 eq. (4)), cwnd halved in whole
/// segments ([`half_cwnd_segments`], FreeBSD and Linux); on a repeated timeout under
/// [`RepeatedTimeout::Hold`] the current ssthresh, unless it is still "arbitrarily high" (no loss yet
/// fixed it: the machine's first expiry always does, so this only guards a window built by hand).
pub fn loss_ssthresh(w: &Window, loss: &LossEvent, halve_from: HalveFrom, repeated: RepeatedTimeout) -> u64 {
    if repeated == RepeatedTimeout::Hold && w.ssthresh_bytes != u64::MAX {
        if let LossKind::Timeout { backoff } = loss.kind {
            if backoff > 1 {
                return w.ssthresh_bytes;
            }
        }
    }
    match halve_from {
        HalveFrom::Cwnd => half_cwnd_segments(w.cwnd_bytes, w.mss_bytes),
        other => half_window(other.bytes(w, loss), w.mss_bytes),
    }
}

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
        Window { cwnd_bytes: cwnd, ssthresh_bytes: ssthresh, mss_bytes: MSS, slow_start: rule, pacing_rate_bytes_per_s: u64::MAX }
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

    fn loss(kind: LossKind, flight: u64, pipe: u64) -> LossEvent {
        LossEvent { now: crate::Time::ZERO, kind, bytes_in_flight: flight, pipe_bytes: pipe, min_rtt: None, srtt: None }
    }

    #[test]
    fn loss_halves_the_chosen_amount_with_a_floor_of_two_segments() {
        let w = window(11_500, u64::MAX, SlowStartRule::Freebsd);
        let fr = loss(LossKind::FastRetransmit, 18_000, 16_000);
        let hold = RepeatedTimeout::Hold;
        assert_eq!(loss_ssthresh(&w, &fr, HalveFrom::Flight, hold), 9_000);
        assert_eq!(loss_ssthresh(&w, &fr, HalveFrom::Pipe, hold), 8_000);
        assert_eq!(loss_ssthresh(&w, &fr, HalveFrom::Cwnd, hold), 5_000, "11.5 segments -> 5 whole segments");
        let small = loss(LossKind::FastRetransmit, 3_000, 3_000);
        assert_eq!(loss_ssthresh(&window(3_000, u64::MAX, SlowStartRule::Freebsd), &small, HalveFrom::Cwnd, hold), 2 * MSS);
        assert_eq!(loss_ssthresh(&w, &small, HalveFrom::Flight, hold), 2 * MSS);
    }

    #[test]
    fn a_repeated_timeout_holds_or_recomputes_as_asked() {
        // After a first expiry set ssthresh to 9 segments and cwnd to one segment.
        let w = window(MSS, 9 * MSS, SlowStartRule::Freebsd);
        let first = loss(LossKind::Timeout { backoff: 1 }, 4 * MSS, 4 * MSS);
        let again = loss(LossKind::Timeout { backoff: 2 }, 4 * MSS, 4 * MSS);
        for h in [HalveFrom::Flight, HalveFrom::Cwnd, HalveFrom::Pipe] {
            assert_eq!(loss_ssthresh(&w, &again, h, RepeatedTimeout::Hold), 9 * MSS, "RFC 5681 3.1 ({h:?})");
        }
        assert_eq!(loss_ssthresh(&w, &again, HalveFrom::Cwnd, RepeatedTimeout::Recompute), 2 * MSS, "FreeBSD: 1 MSS halved, floor 2");
        assert_eq!(loss_ssthresh(&w, &again, HalveFrom::Flight, RepeatedTimeout::Recompute), 2 * MSS);
        assert_eq!(loss_ssthresh(&w, &first, HalveFrom::Flight, RepeatedTimeout::Hold), 2 * MSS, "a first expiry is computed");
        let unset = window(MSS, u64::MAX, SlowStartRule::Freebsd);
        assert_eq!(loss_ssthresh(&unset, &again, HalveFrom::Flight, RepeatedTimeout::Hold), 2 * MSS, "no finite ssthresh to hold");
    }
}
