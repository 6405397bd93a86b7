//! FreeBSD's retransmission timer (`rto_estimator = "freebsd"`), as FreeBSD 9.x computes it:
//! `tcp_xmit_timer` (sys/netinet/tcp_input.c), `TCP_REXMTVAL` (tcp_var.h), `TCPT_RANGESET`
//! (tcp_timer.h) and `tcp_timer_rexmt` (tcp_timer.c).
//!
//! * RTT samples in whole ticks of `timer_granularity_ns` (hz = 1000: 1 ms): with the timestamp
//!   option, `ticks - tsecr + 1`, the tick boundaries crossed plus one.
//! * `t_srtt` is 32 x SRTT and `t_rttvar` 16 x RTTVAR, in ticks (`TCP_RTT_SHIFT` 5,
//!   `TCP_RTTVAR_SHIFT` 4); the first sample sets SRTT = rtt and RTTVAR = rtt / 2, later ones are
//!   taken "to origin 0" (rtt - 1) with gains 1/8 and 1/4 (`TCP_DELTA_SHIFT` 2).
//! * `TCP_REXMTVAL` = max(`t_rttmin`, SRTT + 4 RTTVAR) in whole ticks, and `TCPT_RANGESET` adds
//!   `tcp_rexmit_slop` (200 ms, `TCPTV_CPU_VAR` = hz / 5) and bounds the result below by
//!   max(`t_rttmin`, rtt + 2 ticks) and above by the maximum RTO (`TCPTV_REXMTMAX`, 64 s). `t_rttmin`
//!   is `tcp_rexmit_min` (30 ms, `TCPTV_MIN` = hz / 33): here the scenario's minimum RTO.
//! * At an expiry (`tcp_timer_rexmt`) the timer becomes `TCP_REXMTVAL` x `tcp_backoff[shift]`
//!   (1, 2, 4, ... 512), plus the slop, bounded by [`t_rttmin`, max]; after more than three
//!   expiries (`TCP_MAXRXTSHIFT / 4`) the smoothed RTT is dropped (folded into RTTVAR) so that the
//!   next sample starts afresh.
//! * Before any sample the timer is the initial RTO (`TCPTV_RTOBASE`), with `t_rttvar` set so that
//!   `TCP_REXMTVAL` equals it (`tcp_newtcpcb`).

use std::time::Duration;

use ccsim_cc::Time;

const RTT_SHIFT: u32 = 5;
const RTTVAR_SHIFT: u32 = 4;
const DELTA_SHIFT: u32 = 2;
/// `tcp_backoff[]` of tcp_timer.c.
const BACKOFF: [i64; 13] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 512, 512, 512];
/// `TCP_MAXRXTSHIFT / 4`: beyond this many expiries the smoothed RTT is dropped.
const RTT_INVALIDATE: u32 = 12 / 4;
/// `tcp_rexmit_slop`'s default, `TCPTV_CPU_VAR` (hz / 5).
pub const REXMIT_SLOP: Duration = Duration::from_millis(200);

/// FreeBSD's timer state of one connection, in ticks.
#[derive(Clone, Debug)]
pub struct FreebsdRto {
    tick_ns: u64,
    t_srtt: i64,
    t_rttvar: i64,
    t_rttmin: i64,
    slop: i64,
    max: i64,
    /// The timer's current value (`t_rxtcur`), in ticks.
    t_rxtcur: i64,
    /// Expiries since the last sample (`t_rxtshift`).
    t_rxtshift: u32,
}

impl FreebsdRto {
    pub fn new(initial_rto: Duration, min_rto: Duration, max_rto: Duration, tick: Duration) -> FreebsdRto {
        let tick_ns = (tick.as_nanos() as u64).max(1);
        let ticks = |d: Duration| (d.as_nanos() as u64 / tick_ns) as i64;
        let base = ticks(initial_rto);
        FreebsdRto {
            tick_ns,
            t_srtt: 0,
            t_rttvar: (base << RTTVAR_SHIFT) / 4,
            t_rttmin: ticks(min_rto),
            slop: ticks(REXMIT_SLOP),
            max: ticks(max_rto),
            t_rxtcur: base,
            t_rxtshift: 0,
        }
    }

    /// `TCP_REXMTVAL`: max(t_rttmin, SRTT + 4 RTTVAR) in ticks.
    fn rexmtval(&self) -> i64 {
        self.t_rttmin.max(((self.t_srtt >> (RTT_SHIFT - DELTA_SHIFT)) + self.t_rttvar) >> DELTA_SHIFT)
    }

    /// `TCPT_RANGESET`: the value plus the slop, bounded below by `min` and above by the maximum.
    fn rangeset(&self, value: i64, min: i64) -> i64 {
        let tv = value + self.slop;
        if tv < min {
            min
        } else if tv > self.max {
            self.max
        } else {
            tv
        }
    }

    /// `tcp_xmit_timer` for an ACK at `now` echoing a segment sent at `sent`.
    pub fn sample(&mut self, sent: Time, now: Time) {
        let rtt = (now.as_nanos() / self.tick_ns) as i64 - (sent.as_nanos() / self.tick_ns) as i64 + 1;
        if self.t_srtt != 0 {
            let mut delta = ((rtt - 1) << DELTA_SHIFT) - (self.t_srtt >> (RTT_SHIFT - DELTA_SHIFT));
            self.t_srtt += delta;
            if self.t_srtt <= 0 {
                self.t_srtt = 1;
            }
            delta = delta.abs() - (self.t_rttvar >> (RTTVAR_SHIFT - DELTA_SHIFT));
            self.t_rttvar += delta;
            if self.t_rttvar <= 0 {
                self.t_rttvar = 1;
            }
        } else {
            self.t_srtt = rtt << RTT_SHIFT;
            self.t_rttvar = rtt << (RTTVAR_SHIFT - 1);
        }
        self.t_rxtshift = 0;
        self.t_rxtcur = self.rangeset(self.rexmtval(), self.t_rttmin.max(rtt + 2));
    }

    /// `tcp_timer_rexmt`: the timer expired.
    pub fn on_timeout(&mut self) {
        self.t_rxtshift = (self.t_rxtshift + 1).min(BACKOFF.len() as u32 - 1);
        let rexmt = self.rexmtval() * BACKOFF[self.t_rxtshift as usize];
        self.t_rxtcur = self.rangeset(rexmt, self.t_rttmin);
        if self.t_rxtshift > RTT_INVALIDATE {
            self.t_rttvar += self.t_srtt >> RTT_SHIFT;
            self.t_srtt = 0;
        }
    }

    /// The timer's value (`t_rxtcur`).
    pub fn rto(&self) -> Duration {
        Duration::from_nanos(self.t_rxtcur as u64 * self.tick_ns)
    }

    /// Expiries since the last valid sample (`t_rxtshift`).
    pub fn expiries(&self) -> u32 {
        self.t_rxtshift
    }

    /// SRTT (`t_srtt / 32` ticks), once there is one.
    pub fn srtt(&self) -> Option<Duration> {
        (self.t_srtt > 0).then(|| Duration::from_nanos((self.t_srtt as u64 * self.tick_ns) >> RTT_SHIFT))
    }

    /// RTTVAR (`t_rttvar / 16` ticks).
    pub fn rttvar(&self) -> Duration {
        Duration::from_nanos((self.t_rttvar.max(0) as u64 * self.tick_ns) >> RTTVAR_SHIFT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    /// FreeBSD 9's defaults at hz = 1000: initial RTO 3 s, t_rttmin 30 ms, maximum 64 s.
    fn freebsd() -> FreebsdRto {
        FreebsdRto::new(ms(3000), ms(30), ms(64_000), ms(1))
    }

    #[test]
    fn the_timer_is_srtt_plus_four_rttvar_plus_the_slop_in_whole_ticks() {
        let mut e = freebsd();
        assert_eq!(e.rto(), ms(3000), "TCPTV_RTOBASE before any sample");
        // Sent at 0.4 ms, acked at 100.2 ms: 100 tick boundaries crossed, rtt = 101 ticks.
        e.sample(Time(400_000), Time(100_200_000));
        assert_eq!(e.srtt(), Some(ms(101)), "the first sample: SRTT = rtt");
        assert_eq!(e.rttvar(), Duration::from_micros(50_500), "RTTVAR = rtt / 2");
        // SRTT + 4 RTTVAR = 101 + 202 = 303 ticks, plus the 200 ms slop.
        assert_eq!(e.rto(), ms(503));
        // A steady path: rtt 101 ticks each time (origin 0: 100). SRTT moves to 100, RTTVAR decays
        // towards 0: the timer tends to SRTT + 200 ms, not RFC 6298's max(200 ms, SRTT).
        for k in 0..200u64 {
            let t = 1_000_000_000 + k * 200_000_000;
            e.sample(Time(t), Time(t + 100_000_000));
        }
        let srtt = e.srtt().unwrap();
        assert!(srtt >= ms(100) && srtt < Duration::from_micros(100_250), "{srtt:?}: 32 x SRTT settles within a tick/4");
        assert_eq!(e.rto(), ms(300), "100 ms + 4 x 0 + 200 ms slop");
    }

    #[test]
    fn the_floor_is_t_rttmin_and_two_ticks_above_the_sample() {
        // A 1 ms path with a 0 ms slop would give 2-3 ticks: the floor is max(t_rttmin, rtt + 2).
        let mut e = FreebsdRto::new(ms(3000), ms(30), ms(64_000), ms(1));
        e.slop = 0;
        e.sample(Time(0), Time(1_000_000));
        assert_eq!(e.rto(), ms(30), "t_rttmin (tcp_rexmit_min, 30 ms)");
        let mut f = FreebsdRto::new(ms(3000), ms(0), ms(64_000), ms(1));
        f.slop = 0;
        f.sample(Time(0), Time(1_000_000)); // rtt = 2 ticks: SRTT 2 + 4 x 1 = 6 ticks
        assert_eq!(f.rto(), ms(6));
        f.sample(Time(10_000_000), Time(10_000_000)); // rtt = 1 tick: floor rtt + 2 = 3 ticks
        assert!(f.rto() >= ms(3));
    }

    #[test]
    fn expiries_back_off_rexmtval_then_add_the_slop_and_drop_srtt_after_three() {
        let mut e = freebsd();
        e.sample(Time(0), Time(100_000_000)); // rtt 101 ticks: REXMTVAL 303
        e.on_timeout();
        assert_eq!(e.rto(), ms(2 * 303 + 200), "REXMTVAL x 2, then the slop");
        e.on_timeout();
        e.on_timeout();
        assert_eq!(e.rto(), ms(8 * 303 + 200));
        assert_eq!(e.expiries(), 3);
        assert!(e.srtt().is_some(), "kept through three expiries");
        e.on_timeout();
        assert_eq!(e.srtt(), None, "dropped after more than TCP_MAXRXTSHIFT / 4");
        for _ in 0..10 {
            e.on_timeout();
        }
        assert_eq!(e.rto(), ms(64_000), "TCPTV_REXMTMAX");
        e.sample(Time(100_000_000_000), Time(100_050_000_000));
        assert_eq!(e.expiries(), 0, "a valid sample ends the backoff");
    }
}
