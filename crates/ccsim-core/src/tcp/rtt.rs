//! RTT measurement of one connection: the raw samples the algorithms read and the retransmission
//! timer, whose estimator is one part chosen once per connection.
//!
//! * Raw per-ACK samples for the algorithms: lifetime minimum and maximum (never smoothed, never
//!   decayed, as FreeBSD h_ertt); the sender keeps the per-round extremes (`tcp::round`).
//! * The RTO estimator (`tcp.rto_estimator`), an enum dispatched here so that the sender asks for
//!   the timeout and reports ACKs, new data, retransmission episodes and expiries without knowing
//!   which estimator runs:
//!   - `rfc6298`: SRTT/RTTVAR with Karn's rule, exponential backoff, the configured minimum and
//!     maximum and clock granularity G (RFC 6298 sections 2 and 5; FreeBSD `tcp_xmit_timer`);
//!   - `linux`: the same smoothing with Linux's per-round deviation (`tcp::linux_rto`,
//!     `tcp_rtt_estimator`, `tcp_set_rto`);
//!   - `ns2`: ns-2's one-timed-segment tick arithmetic (`tcp::rtt_ns2`, tcp.cc `rtt_update`);
//!   - `freebsd`: FreeBSD's tick arithmetic with `tcp_rexmit_slop` (`tcp::rtt_freebsd`,
//!     `tcp_xmit_timer`, `TCPT_RANGESET`).

use std::time::Duration;

use ccsim_cc::Time;

use crate::scenario::RtoEstimator;
use crate::tcp::linux_rto::LinuxRto;
use crate::tcp::rtt_freebsd::FreebsdRto;
use crate::tcp::rtt_ns2::Ns2Rto;

/// Lifetime RTT extremes and the retransmission timer of one connection.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    /// Lifetime minimum and maximum sample (read on every ACK, changed by few); their nanoseconds
    /// are what each new sample is compared with.
    pub min: Option<Duration>,
    pub max: Option<Duration>,
    /// The latest sample given to the algorithms.
    pub latest: Option<Duration>,
    min_ns: u64,
    max_ns: u64,
    timer: RtoTimer,
    /// The estimator's outputs, written whenever it changes (a sample, an expiry) and read on every
    /// ACK without a match over the estimators: SRTT and the timer's value, backoff included.
    srtt: Option<Duration>,
    rto_ns: u64,
}

/// The retransmission-timer estimator, chosen once (`tcp.rto_estimator`).
#[derive(Clone, Debug)]
enum RtoTimer {
    Rfc6298(Smoothed),
    /// Linux keeps its own deviation and writes SRTT, RTTVAR and the RTO into the same state.
    Linux(Smoothed, LinuxRto),
    /// Boxed: a flow whose profile does not use it carries the smaller variants only.
    Ns2(Box<Ns2Rto>),
    Freebsd(FreebsdRto),
}

/// RFC 6298 retransmission-timer state. The arithmetic is in whole nanoseconds (`u64`), not
/// `Duration`: the same values (a `Duration` divided by 2, 4 or 8 is the floor of its nanoseconds
/// divided so, since a second is a multiple of 8 ns), at a fraction of the instructions per ACK
/// (docs/performance.md).
#[derive(Clone, Debug)]
struct Smoothed {
    /// SRTT, also kept as a `Duration` for the readers of every ACK.
    srtt: Option<Duration>,
    srtt_ns: u64,
    rttvar_ns: u64,
    rto_ns: u64,
    min_rto_ns: u64,
    max_rto_ns: u64,
    /// Clock granularity G of RFC 6298 (the simulator's clock is exact; `timer_granularity_ns`, 1 ms
    /// by default, mimics FreeBSD hz = 1000).
    granularity_ns: u64,
    /// Consecutive expiries without a fresh sample; the timer runs at rto * 2^backoff.
    backoff: u32,
}

/// Nanoseconds of `d`, saturating at `u64::MAX` (584 years).
fn ns(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

impl Smoothed {
    /// RFC 6298 section 2.2/2.3: folds a valid sample into SRTT/RTTVAR, recomputes RTO and, since
    /// the sample came from a segment that was not retransmitted (Karn), clears the backoff (5.7).
    #[inline]
    fn sample(&mut self, r_ns: u64) {
        if self.srtt.is_none() {
            self.srtt_ns = r_ns;
            self.rttvar_ns = r_ns / 2;
        } else {
            let diff = self.srtt_ns.abs_diff(r_ns);
            self.rttvar_ns = self.rttvar_ns * 3 / 4 + diff / 4;
            self.srtt_ns = self.srtt_ns * 7 / 8 + r_ns / 8;
        }
        self.srtt = Some(Duration::from_nanos(self.srtt_ns));
        let var = self.granularity_ns.max(self.rttvar_ns.saturating_mul(4));
        self.rto_ns = self.srtt_ns.saturating_add(var).clamp(self.min_rto_ns, self.max_rto_ns);
        self.backoff = 0;
    }

    /// Linux's estimator (`tcp::linux_rto`) has folded in a sample: take its SRTT, RTTVAR and RTO.
    fn take_linux(&mut self, linux: &LinuxRto, rto: Duration) {
        let srtt = linux.srtt();
        self.srtt = Some(srtt);
        self.srtt_ns = ns(srtt);
        self.rttvar_ns = ns(linux.rttvar());
        self.rto_ns = ns(rto).min(self.max_rto_ns); // tcp_bound_rto; RTO >= SRTT + min RTO already
        self.backoff = 0;
    }

    /// The current timer value: RTO doubled per expiry (RFC 6298 5.5), capped at the maximum.
    #[inline]
    fn rto_ns(&self) -> u64 {
        let factor = 1u64 << self.backoff.min(30);
        self.rto_ns.saturating_mul(factor).min(self.max_rto_ns)
    }
}

impl RttEstimator {
    /// The estimator `kind` with the initial, minimum and maximum RTO and the clock granularity
    /// (G of RFC 6298, ns-2's `tcpTick_`; Linux ignores it).
    pub fn new(kind: RtoEstimator, initial_rto: Duration, min_rto: Duration, max_rto: Duration, granularity: Duration) -> RttEstimator {
        let smoothed = Smoothed {
            srtt: None,
            srtt_ns: 0,
            rttvar_ns: 0,
            rto_ns: ns(initial_rto),
            min_rto_ns: ns(min_rto),
            max_rto_ns: ns(max_rto),
            granularity_ns: ns(granularity),
            backoff: 0,
        };
        let timer = match kind {
            RtoEstimator::Rfc6298 => RtoTimer::Rfc6298(smoothed),
            RtoEstimator::Linux => RtoTimer::Linux(smoothed, LinuxRto::default()),
            RtoEstimator::Ns2 => RtoTimer::Ns2(Box::new(Ns2Rto::new(initial_rto, min_rto, max_rto, granularity))),
            RtoEstimator::Freebsd => RtoTimer::Freebsd(FreebsdRto::new(initial_rto, min_rto, max_rto, granularity)),
        };
        let mut e = RttEstimator { min: None, max: None, latest: None, min_ns: u64::MAX, max_ns: 0, timer, srtt: None, rto_ns: 0 };
        e.publish();
        e
    }

    /// Records a raw sample for the algorithms (latest, lifetime min/max) without touching the RTO estimator;
    /// `n` is `r` in nanoseconds (the caller has both).
    #[inline]
    pub fn observe(&mut self, r: Duration, n: u64) {
        debug_assert_eq!(n, ns(r));
        self.latest = Some(r);
        if self.min.is_none() || n < self.min_ns {
            self.min_ns = n;
            self.min = Some(r);
        }
        if self.max.is_none() || n > self.max_ns {
            self.max_ns = n;
            self.max = Some(r);
        }
    }

    /// An ACK of new data up to `ackno` (snd_una after it) arrived at `now` with `snd_max` sent;
    /// `sample` is its Karn-valid RTT sample (`r`, and `r` in nanoseconds), if any. RFC 6298 and
    /// Linux fold the sample in (Linux's rounds end at `snd_una` past the round's snd_nxt); ns-2
    /// times its own segment and ignores the echo (`newack` without timestamps).
    #[inline]
    pub fn on_new_ack(&mut self, ackno: u64, snd_max: u64, now: Time, sample: Option<(Duration, u64)>) {
        let changed = match &mut self.timer {
            RtoTimer::Rfc6298(s) => sample.map(|(_, r_ns)| s.sample(r_ns)).is_some(),
            RtoTimer::Linux(s, linux) => sample
                .map(|(r, _)| {
                    let rto = linux.sample(r, ackno, snd_max, Duration::from_nanos(s.min_rto_ns));
                    s.take_linux(linux, rto);
                })
                .is_some(),
            RtoTimer::Ns2(ns2) => ns2.on_ack(ackno, now).is_some(),
            // the echoed send time
            RtoTimer::Freebsd(f) => sample.map(|(r, _)| f.sample(Time(now.0.saturating_sub(r.as_nanos() as u64)), now)).is_some(),
        };
        if changed {
            self.publish();
        }
    }

    /// Writes the estimator's SRTT and timer value where every ACK reads them.
    #[inline]
    fn publish(&mut self) {
        (self.srtt, self.rto_ns) = match &self.timer {
            RtoTimer::Rfc6298(s) | RtoTimer::Linux(s, _) => (s.srtt, s.rto_ns()),
            RtoTimer::Ns2(ns2) => (ns2.srtt(), ns(ns2.rto())),
            RtoTimer::Freebsd(f) => (f.srtt(), ns(f.rto())),
        };
    }

    /// New data ending at `seq_end` left at `now` (ns-2 starts timing it if no segment is timed).
    #[inline]
    pub fn on_new_data(&mut self, seq_end: u64, now: Time) {
        if let RtoTimer::Ns2(ns2) = &mut self.timer {
            ns2.on_new_data(seq_end, now);
        }
    }

    /// A fast retransmission starts an episode: ns-2 stops timing the segment in flight
    /// (`reset_rtx_timer`); the others time every ACK's echo and need nothing.
    pub fn on_retransmission_episode(&mut self) {
        if let RtoTimer::Ns2(ns2) = &mut self.timer {
            ns2.cancel_timing();
        }
    }

    /// The timer expired: back off (RFC 6298 5.5; ns-2 `rtt_backoff`).
    pub fn on_timeout(&mut self) {
        match &mut self.timer {
            RtoTimer::Rfc6298(s) | RtoTimer::Linux(s, _) => s.backoff = s.backoff.saturating_add(1),
            RtoTimer::Ns2(ns2) => ns2.on_timeout(),
            RtoTimer::Freebsd(f) => f.on_timeout(),
        }
        self.publish();
    }

    /// Consecutive expiries of the timer without a valid RTT sample, the latest one included.
    pub fn expiries(&self) -> u32 {
        match &self.timer {
            RtoTimer::Rfc6298(s) | RtoTimer::Linux(s, _) => s.backoff,
            RtoTimer::Ns2(ns2) => ns2.expiries(),
            RtoTimer::Freebsd(f) => f.expiries(),
        }
    }

    /// The smoothed RTT of the estimator, once there is a sample.
    #[inline]
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }

    /// RTTVAR (RFC 6298), Linux's `rttvar` (4 times the deviation it tracks, divided by 4), or
    /// ns-2's none (zero).
    pub fn rttvar(&self) -> Duration {
        match &self.timer {
            RtoTimer::Rfc6298(s) | RtoTimer::Linux(s, _) => Duration::from_nanos(s.rttvar_ns),
            RtoTimer::Ns2(_) => Duration::ZERO,
            RtoTimer::Freebsd(f) => f.rttvar(),
        }
    }

    /// The current timer value, backoff included.
    pub fn rto(&self) -> Duration {
        Duration::from_nanos(self.rto_ns())
    }

    /// `rto()` in nanoseconds.
    #[inline]
    pub fn rto_ns(&self) -> u64 {
        self.rto_ns
    }

    /// When a timer started at `now` expires (`now + rto()`, RFC 6298 5.1 and 5.3), without a
    /// `Duration` on the way (called on every ACK of new data).
    #[inline]
    pub fn deadline_from(&self, now: Time) -> Time {
        Time(now.0.saturating_add(self.rto_ns()))
    }

    /// Folds a sample in as an ACK of new data would (for tests of the estimators).
    #[cfg(test)]
    pub fn update_rto(&mut self, r: Duration, snd_una: u64, snd_nxt: u64) {
        self.on_new_ack(snd_una, snd_nxt, Time::ZERO, Some((r, ns(r))));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn first_sample_then_smoothing_per_rfc6298() {
        let mut e = RttEstimator::new(RtoEstimator::Rfc6298, ms(1000), ms(200), ms(60_000), ms(1));
        assert_eq!(e.rto(), ms(1000), "initial RTO 1 s");
        e.update_rto(ms(100), 0, 0);
        assert_eq!(e.srtt(), Some(ms(100)));
        assert_eq!(e.rttvar(), ms(50));
        assert_eq!(e.rto(), ms(300), "100 + 4*50");
        e.update_rto(ms(200), 0, 0);
        // rttvar = 3/4*50 + 1/4*100 = 62.5; srtt = 7/8*100 + 1/8*200 = 112.5; rto = 112.5 + 250 = 362.5
        assert_eq!(e.rttvar(), Duration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(Duration::from_micros(112_500)));
        assert_eq!(e.rto(), Duration::from_micros(362_500));
    }

    #[test]
    fn minimum_rto_applies_and_backoff_doubles_until_fresh_sample() {
        let mut e = RttEstimator::new(RtoEstimator::Rfc6298, ms(1000), ms(200), ms(60_000), ms(1));
        e.update_rto(ms(10), 0, 0);
        assert_eq!(e.rto(), ms(200), "clamped to min RTO");
        e.on_timeout();
        assert_eq!(e.rto(), ms(400));
        e.on_timeout();
        assert_eq!(e.rto(), ms(800));
        for _ in 0..20 {
            e.on_timeout();
        }
        assert_eq!(e.rto(), ms(60_000), "capped at max RTO");
        e.update_rto(ms(10), 0, 0);
        assert_eq!(e.rto(), ms(200), "a valid sample clears the backoff");
    }

    #[test]
    fn linux_rule_keeps_min_rto_above_srtt_and_backs_off_the_same_way() {
        let mut e = RttEstimator::new(RtoEstimator::Linux, ms(1000), ms(200), ms(120_000), ms(1));
        assert_eq!(e.rto(), ms(1000), "initial RTO 1 s (TCP_TIMEOUT_INIT)");
        e.update_rto(ms(10), 10, 20);
        assert_eq!(e.rto(), ms(210), "10 ms + max(2*10 ms, 200 ms), not RFC 6298's clamp to 200 ms");
        e.update_rto(ms(10), 30, 40);
        assert_eq!(e.srtt(), Some(ms(10)));
        assert_eq!(e.rto(), ms(210));
        e.on_timeout();
        assert_eq!(e.rto(), ms(420));
        for _ in 0..20 {
            e.on_timeout();
        }
        assert_eq!(e.rto(), ms(120_000), "capped at TCP_RTO_MAX 120 s");
        e.update_rto(ms(10), 50, 60);
        assert_eq!(e.rto(), ms(210), "a valid sample clears the backoff");
    }
}
