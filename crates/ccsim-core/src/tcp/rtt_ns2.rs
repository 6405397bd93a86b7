//! ns-2's retransmission timer (`rto_estimator = "ns2"`): the arithmetic of `TcpAgent` in ns-2.35
//! tcp/tcp.cc, for the papers that ran `Agent/TCP/Sack1` and `Agent/TCP/Newreno`.
//!
//! * Timing (`output`, `newack` with `timestamps_ false`, the ns-2 default): one segment at a time is
//!   timed. Timing starts when new data is sent and no segment is being timed; the sample is taken
//!   when the ACK covers that segment. A retransmission episode (fast retransmit or timeout,
//!   `reset_rtx_timer`) cancels the timing, so a retransmitted segment never gives a sample (Karn).
//! * `rtt_update`: the sample in whole ticks of `tcpTick_` (the number of tick boundaries crossed
//!   between sending and the ACK, at least 1); `t_srtt_` holds 8 x srtt and `t_rttvar_` 4 x rttvar in
//!   ticks, updated with shifts (gains 1/8 and 1/4); the first sample sets srtt = rtt, rttvar = rtt/2;
//!   `t_rtxcur_` = (srtt + 4 rttvar) in whole ticks (`rttvar_exp_ = 2`), rounded down.
//! * `rtt_timeout`: `minrto_` x backoff when `t_rtxcur_` is below `minrto_` (the `rfc2988_` order:
//!   clamp, then back off), else `t_rtxcur_` x backoff; at most `maxrto_`; at least two ticks.
//! * `rtt_backoff`: the multiplier doubles while below 64 or while the timeout is below `maxrto_`;
//!   beyond 8 the smoothed RTT is dropped (folded into rttvar), so the next sample starts afresh.
//! * `rtt_init`: `t_rtxcur_ = rtxcur_init_` (the initial RTO, 3 s in ns-2.35), no srtt.
//!
//! Simplifications (docs/profiles.md): ns-2 draws a per-agent clock phase `boot_time_` uniformly in
//! one tick; here every flow's tick grid starts at time 0, which moves a sample by at most one tick.
//! ns-2 keeps the difference in a 16-bit `short`; here it is 64-bit (equal below 327 s at 10 ms ticks).

use std::time::Duration;

use ccsim_cc::Time;

/// `T_SRTT_BITS`, `T_RTTVAR_BITS`, `rttvar_exp_` of ns-default.tcl.
const SRTT_BITS: u32 = 3;
const RTTVAR_BITS: u32 = 2;
const RTTVAR_EXP: u32 = 2;
/// `rttvar_init_` (12 s): only ever visible through the backoff fold, kept for fidelity.
const RTTVAR_INIT_NS: u64 = 12_000_000_000;

/// ns-2's timer state of one connection.
#[derive(Clone, Debug)]
pub struct Ns2Rto {
    tick_ns: u64,
    min_rto_ns: u64,
    max_rto_ns: u64,
    /// 8 x srtt in ticks (`t_srtt_`); 0 = no estimate.
    t_srtt: i64,
    /// 4 x rttvar in ticks (`t_rttvar_`).
    t_rttvar: i64,
    /// srtt + 4 rttvar in ns, whole ticks (`t_rtxcur_`).
    rtxcur_ns: u64,
    /// The backoff multiplier (`t_backoff_`): 1, 2, 4, ...
    backoff: u64,
    /// Consecutive expiries since the last valid sample (for the algorithm's loss event).
    expiries: u32,
    /// The timed segment: (sequence number its ACK must reach, send time) (`rtt_seq_`, `rtt_ts_`).
    timed: Option<(u64, Time)>,
}

impl Ns2Rto {
    pub fn new(initial_rto: Duration, min_rto: Duration, max_rto: Duration, tick: Duration) -> Ns2Rto {
        let tick_ns = (tick.as_nanos() as u64).max(1);
        Ns2Rto {
            tick_ns,
            min_rto_ns: min_rto.as_nanos() as u64,
            max_rto_ns: max_rto.as_nanos() as u64,
            t_srtt: 0,
            t_rttvar: ((RTTVAR_INIT_NS / tick_ns) as i64) << RTTVAR_BITS,
            rtxcur_ns: initial_rto.as_nanos() as u64,
            backoff: 1,
            expiries: 0,
            timed: None,
        }
    }

    /// New data `[.., seq_end)` leaves at `now` (`output` with `seqno > maxseq_`): timed if no segment is.
    pub fn on_new_data(&mut self, seq_end: u64, now: Time) {
        if self.timed.is_none() {
            self.timed = Some((seq_end, now));
        }
    }

    /// A cumulative ACK up to `ackno` at `now` (`newack`): if it covers the timed segment, the sample
    /// is folded in and the backoff ends. Returns the raw sample, if one was taken.
    pub fn on_ack(&mut self, ackno: u64, now: Time) -> Option<Duration> {
        let (seq_end, sent) = self.timed?;
        if ackno < seq_end {
            return None;
        }
        self.timed = None;
        self.backoff = 1;
        self.expiries = 0;
        let tao = now - sent;
        self.update(tao, sent);
        Some(tao)
    }

    /// A retransmission episode starts (`reset_rtx_timer`): the timed segment is no longer timed.
    pub fn cancel_timing(&mut self) {
        self.timed = None;
    }

    /// `rtt_update` for a sample `tao` of a segment sent at `sent`.
    fn update(&mut self, tao: Duration, sent: Time) {
        let tick = self.tick_ns;
        // Tick boundaries crossed between sending and now (the BSD-style coarse clock).
        let tickoff = sent.as_nanos() % tick;
        let t_rtt = (((tao.as_nanos() as u64 + tickoff) / tick) as i64).max(1);
        if self.t_srtt != 0 {
            let mut delta = t_rtt - (self.t_srtt >> SRTT_BITS);
            self.t_srtt += delta;
            if self.t_srtt <= 0 {
                self.t_srtt = 1;
            }
            if delta < 0 {
                delta = -delta;
            }
            delta -= self.t_rttvar >> RTTVAR_BITS;
            self.t_rttvar += delta;
            if self.t_rttvar <= 0 {
                self.t_rttvar = 1;
            }
        } else {
            self.t_srtt = t_rtt << SRTT_BITS;
            self.t_rttvar = t_rtt << (RTTVAR_BITS - 1);
        }
        let ticks = ((self.t_rttvar << (RTTVAR_EXP + (SRTT_BITS - RTTVAR_BITS))) + self.t_srtt) >> SRTT_BITS;
        self.rtxcur_ns = ticks as u64 * tick;
    }

    /// `rtt_timeout`: the timer value now.
    pub fn rto(&self) -> Duration {
        let base = if self.rtxcur_ns < self.min_rto_ns { self.min_rto_ns } else { self.rtxcur_ns };
        let timeout = base.saturating_mul(self.backoff).min(self.max_rto_ns).max(2 * self.tick_ns);
        Duration::from_nanos(timeout)
    }

    /// The timer expired (`timeout` -> `reset_rtx_timer(0, 1)` -> `rtt_backoff`).
    pub fn on_timeout(&mut self) {
        self.timed = None;
        self.expiries = self.expiries.saturating_add(1);
        if self.backoff < 64 || (self.rto().as_nanos() as u64) < self.max_rto_ns {
            self.backoff = self.backoff.saturating_mul(2);
        }
        if self.backoff > 8 {
            self.t_rttvar += self.t_srtt >> SRTT_BITS;
            self.t_srtt = 0;
        }
    }

    /// Consecutive expiries without a valid sample in between (1 at the first expiry).
    pub fn expiries(&self) -> u32 {
        self.expiries
    }

    /// The smoothed RTT (`t_srtt_ / 8` ticks), if there is one.
    pub fn srtt(&self) -> Option<Duration> {
        (self.t_srtt > 0).then(|| Duration::from_nanos(self.t_srtt as u64 * self.tick_ns >> SRTT_BITS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    fn ns2() -> Ns2Rto {
        // ns-2.35 defaults: tcpTick_ 10 ms, minrto_ 200 ms, maxrto_ 60 s, rtxcur_init_ 3 s.
        Ns2Rto::new(ms(3000), ms(200), ms(60_000), ms(10))
    }

    /// A segment sent at `sent_ms` and acked at `ack_ms`, fed through timing and ACK.
    fn sample(e: &mut Ns2Rto, seq_end: u64, sent_ms: u64, ack_ms: u64) -> Option<Duration> {
        e.on_new_data(seq_end, Time::from_millis(sent_ms));
        e.on_ack(seq_end, Time::from_millis(ack_ms))
    }

    #[test]
    fn initial_rto_before_any_sample() {
        let e = ns2();
        assert_eq!(e.rto(), ms(3000), "rtxcur_init_");
        assert_eq!(e.srtt(), None);
    }

    #[test]
    fn samples_count_tick_boundaries_crossed() {
        // 45 ms sent at 0: crosses 4 boundaries (10..40) -> 4 ticks. Sent at 7 ms, acked at 52 ms:
        // boundaries 10..50 -> 5 ticks for the same 45 ms.
        let mut a = ns2();
        sample(&mut a, 1000, 0, 45);
        assert_eq!(a.srtt(), Some(ms(40)));
        let mut b = ns2();
        sample(&mut b, 1000, 7, 52);
        assert_eq!(b.srtt(), Some(ms(50)));
        // A sample inside one tick still counts one.
        let mut c = ns2();
        sample(&mut c, 1000, 1, 3);
        assert_eq!(c.srtt(), Some(ms(10)));
    }

    #[test]
    fn first_sample_and_shift_arithmetic_match_tcp_cc() {
        let mut e = ns2();
        // First sample 10 ticks: t_srtt = 80, t_rttvar = 20 (rttvar 5 ticks); rtxcur = (80 + 20*8) >> 3
        // = 30 ticks = 300 ms, above minrto_.
        sample(&mut e, 1000, 0, 100);
        assert_eq!((e.t_srtt, e.t_rttvar), (80, 20));
        assert_eq!(e.rto(), ms(300));
        // Second sample 14 ticks: delta = 14 - 10 = 4; t_srtt = 84; |delta| - (20 >> 2) = -1;
        // t_rttvar = 19; rtxcur = (19*8 + 84) >> 3 = 236 >> 3 = 29 ticks (rounded down).
        sample(&mut e, 2000, 100, 240);
        assert_eq!((e.t_srtt, e.t_rttvar), (84, 19));
        assert_eq!(e.rto(), ms(290));
        assert_eq!(e.srtt(), Some(Duration::from_micros(105_000)), "84/8 ticks");
    }

    #[test]
    fn rto_is_clamped_to_minrto_before_backoff_and_capped_at_maxrto() {
        let mut e = ns2();
        sample(&mut e, 1000, 0, 20); // 2 ticks: rtxcur = (4*8 + 16) >> 3 = 6 ticks = 60 ms -> minrto_
        assert_eq!(e.rto(), ms(200));
        e.on_timeout();
        assert_eq!(e.rto(), ms(400), "minrto_ x 2 (rfc2988_ order)");
        for _ in 0..20 {
            e.on_timeout();
        }
        assert_eq!(e.rto(), ms(60_000), "maxrto_");
    }

    #[test]
    fn at_least_two_ticks() {
        // A tiny minrto_ shows the two-tick floor of rtt_timeout.
        let mut e = Ns2Rto::new(ms(3000), Duration::from_micros(1), ms(60_000), ms(100));
        sample(&mut e, 1000, 0, 1); // 1 tick: rtxcur = (2*8 + 8) >> 3 = 3 ticks = 300 ms
        assert_eq!(e.rto(), ms(300));
        let mut f = Ns2Rto::new(ms(3000), Duration::from_micros(1), ms(60_000), ms(100));
        f.rtxcur_ns = 50_000_000;
        assert_eq!(f.rto(), ms(200), "2 x tcpTick_");
    }

    #[test]
    fn only_one_segment_is_timed_and_a_retransmission_episode_cancels_it() {
        let mut e = ns2();
        e.on_new_data(1000, Time::from_millis(0));
        e.on_new_data(2000, Time::from_millis(5)); // already timing segment 1
        assert_eq!(e.on_ack(1000, Time::from_millis(100)), Some(ms(100)));
        assert_eq!(e.on_ack(2000, Time::from_millis(105)), None, "segment 2 was not timed");
        e.on_new_data(3000, Time::from_millis(110));
        e.cancel_timing();
        assert_eq!(e.on_ack(3000, Time::from_millis(300)), None, "timing cancelled by a fast retransmit");
    }

    #[test]
    fn backoff_beyond_eight_drops_srtt_and_a_valid_sample_ends_backoff() {
        let mut e = ns2();
        sample(&mut e, 1000, 0, 100);
        for _ in 0..3 {
            e.on_timeout();
        }
        assert_eq!(e.backoff, 8);
        assert!(e.srtt().is_some(), "kept up to 8");
        e.on_timeout();
        assert_eq!(e.backoff, 16);
        assert_eq!(e.srtt(), None, "t_srtt_ cleared beyond 8");
        assert_eq!(e.expiries(), 4);
        // The next sample starts afresh (srtt = rtt) and clears the backoff.
        sample(&mut e, 2000, 5000, 5200);
        assert_eq!(e.backoff, 1);
        assert_eq!(e.expiries(), 0);
        assert_eq!(e.srtt(), Some(ms(200)));
        assert_eq!(e.rto(), ms(600), "20 ticks + 4 x 10 ticks");
    }
}
