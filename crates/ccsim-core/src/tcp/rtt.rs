//! RTT measurement of one connection.
//!
//! * The RFC 6298 estimator (SRTT, RTTVAR, RTO) with Karn's rule, exponential backoff and the
//!   configured minimum and maximum; or, with `rto_estimator = "linux"`, Linux's (`tcp::linux_rto`).
//! * Raw per-ACK samples for the algorithms: lifetime minimum and maximum (never smoothed, never
//!   decayed, as FreeBSD h_ertt) and per-round minimum and maximum.

use std::time::Duration;

use crate::tcp::linux_rto::LinuxRto;

/// RFC 6298 retransmission-timer state. The estimator's arithmetic is in whole nanoseconds
/// (`u64`), not `Duration`: the same values (a `Duration` divided by 2, 4 or 8 is the floor of its
/// nanoseconds divided so, since a second is a multiple of 8 ns), at a fraction of the instructions
/// per ACK (docs/performance.md, "Instructions per packet").
#[derive(Clone, Debug)]
pub struct RttEstimator {
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
    /// Number of consecutive expiries without a fresh sample; the timer runs at rto * 2^backoff.
    pub backoff: u32,
    /// Lifetime minimum and maximum sample (read on every ACK, changed by few); their nanoseconds
    /// are what each new sample is compared with.
    pub min: Option<Duration>,
    pub max: Option<Duration>,
    min_ns: u64,
    max_ns: u64,
    /// Linux's estimator state, when `rto_estimator = "linux"`.
    linux: Option<LinuxRto>,
}

/// Nanoseconds of `d`, saturating at `u64::MAX` (584 years).
fn ns(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

impl RttEstimator {
    pub fn new(initial_rto: Duration, min_rto: Duration, max_rto: Duration) -> RttEstimator {
        RttEstimator {
            srtt: None,
            srtt_ns: 0,
            rttvar_ns: 0,
            rto_ns: ns(initial_rto),
            min_rto_ns: ns(min_rto),
            max_rto_ns: ns(max_rto),
            granularity_ns: 1_000_000,
            backoff: 0,
            min: None,
            max: None,
            min_ns: u64::MAX,
            max_ns: 0,
            linux: None,
        }
    }

    /// Computes the RTO as Linux does (`tcp::linux_rto`) instead of RFC 6298.
    pub fn use_linux_rule(&mut self) {
        self.linux = Some(LinuxRto::default());
    }

    /// Sets the clock granularity G (RFC 6298 section 2), 1 ms unless the scenario says otherwise.
    pub fn set_granularity(&mut self, g: Duration) {
        self.granularity_ns = ns(g);
    }

    /// SRTT, once there is a sample.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }

    /// RTTVAR (RFC 6298), or Linux's `rttvar` (4 times the deviation it tracks, divided by 4).
    pub fn rttvar(&self) -> Duration {
        Duration::from_nanos(self.rttvar_ns)
    }

    /// Records a raw sample for the algorithms (lifetime min/max) without touching the RTO estimator;
    /// `n` is `r` in nanoseconds (the caller has both).
    #[inline]
    pub fn observe(&mut self, r: Duration, n: u64) {
        debug_assert_eq!(n, ns(r));
        if self.min.is_none() || n < self.min_ns {
            self.min_ns = n;
            self.min = Some(r);
        }
        if self.max.is_none() || n > self.max_ns {
            self.max_ns = n;
            self.max = Some(r);
        }
    }

    /// RFC 6298 section 2.2/2.3: folds a valid sample into SRTT/RTTVAR, recomputes RTO and, since
    /// the sample came from a segment that was not retransmitted (Karn), clears the backoff (5.7).
    /// `snd_una` (after this ACK) and `snd_nxt` delimit Linux's rounds; RFC 6298 ignores them.
    pub fn update_rto(&mut self, r: Duration, snd_una: u64, snd_nxt: u64) {
        self.update_rto_ns(r, ns(r), snd_una, snd_nxt);
    }

    /// `update_rto` with the sample also in nanoseconds (`r_ns`), as the sender has it.
    #[inline]
    pub fn update_rto_ns(&mut self, r: Duration, r_ns: u64, snd_una: u64, snd_nxt: u64) {
        debug_assert_eq!(r_ns, ns(r));
        if let Some(linux) = &mut self.linux {
            let rto = linux.sample(r, snd_una, snd_nxt, Duration::from_nanos(self.min_rto_ns));
            let srtt = linux.srtt();
            self.srtt = Some(srtt);
            self.srtt_ns = ns(srtt);
            self.rttvar_ns = ns(linux.rttvar());
            self.rto_ns = ns(rto).min(self.max_rto_ns); // tcp_bound_rto; RTO >= SRTT + min RTO already
            self.backoff = 0;
            return;
        }
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

    /// The current timer value: RTO doubled per expiry (RFC 6298 5.5), capped at the maximum.
    pub fn rto(&self) -> Duration {
        Duration::from_nanos(self.rto_ns())
    }

    /// `rto()` in nanoseconds.
    #[inline]
    pub fn rto_ns(&self) -> u64 {
        let factor = 1u64 << self.backoff.min(30);
        self.rto_ns.saturating_mul(factor).min(self.max_rto_ns)
    }

    /// RFC 6298 5.5: back off the timer after an expiry.
    pub fn on_timeout(&mut self) {
        self.backoff = self.backoff.saturating_add(1);
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
        let mut e = RttEstimator::new(ms(1000), ms(200), ms(60_000));
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
        let mut e = RttEstimator::new(ms(1000), ms(200), ms(60_000));
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
        let mut e = RttEstimator::new(ms(1000), ms(200), ms(120_000));
        e.use_linux_rule();
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
