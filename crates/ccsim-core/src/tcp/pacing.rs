//! Pacing: a departure time per segment from the rate the algorithm sets, as Linux's internal TCP
//! pacing computes it (net/ipv4/tcp_output.c: `tcp_pacing_check`, `tcp_update_skb_after_send`, and
//! `__tcp_transmit_skb` moving `tp->tcp_wstamp_ns` up to the clock).
//!
//! A part of the TCP machine chosen once per connection (docs/internals.md, "The TCP machine's
//! parts"): `Off` unless the algorithm asks for pacing (`ccsim_cc::Needs::pacing`, Linux's
//! `SK_PACING_NEEDED`, which BBR sets), as Linux paces only then or under the fq qdisc. Off, the
//! send loop's open-state fast path runs as before and no pacing event is ever scheduled.
//!
//! The rules: a segment may leave when the clock has reached the pacing clock (`tcp_wstamp_ns`); it
//! leaves at once and moves the clock on by its payload over the rate, less up to half of that as
//! credit for the time the sender was idle past the previous departure ("take into account OS
//! jitter"); the first 10 segments of the connection are not paced (`tp->data_segs_out >= 10`, the
//! sch_fq habit Linux copies). A rate of 0 or `u64::MAX` (Linux's `~0UL`) paces nothing.

use ccsim_cc::Time;

/// The pacing part: off, or the pacing clock.
#[derive(Clone, Debug)]
pub enum Pacing {
    Off,
    On(Pacer),
}

/// The pacing clock of one connection.
#[derive(Clone, Debug, Default)]
pub struct Pacer {
    /// Linux `tp->tcp_wstamp_ns`: the earliest time the next segment may leave.
    next_departure: Time,
    /// Linux `tp->data_segs_out`: data segments sent (the first 10 are not paced).
    segs_out: u64,
    /// The send loop stopped for the pacing clock: the time it waits for (the pacing timer,
    /// Linux `tp->pacing_timer`).
    waiting_until: Option<Time>,
}

/// Segments Linux sends before pacing starts (`tcp_update_skb_after_send`).
const UNPACED_SEGMENTS: u64 = 10;

impl Pacing {
    pub fn new(on: bool) -> Pacing {
        if on {
            Pacing::On(Pacer::default())
        } else {
            Pacing::Off
        }
    }

    /// Linux `tcp_pacing_check`: whether the next segment must wait for the pacing clock; if so
    /// the wait is noted for the pacing timer.
    #[inline]
    pub fn holds(&mut self, now: Time) -> bool {
        match self {
            Pacing::Off => false,
            Pacing::On(p) if p.next_departure > now => {
                p.waiting_until = Some(p.next_departure);
                true
            }
            Pacing::On(p) => {
                p.waiting_until = None;
                false
            }
        }
    }

    /// A segment of `len` payload bytes left at `now` with the pacing rate `rate_bytes_per_s`:
    /// `__tcp_transmit_skb` (the clock moves up to now) then `tcp_update_skb_after_send`.
    #[inline]
    pub fn on_send(&mut self, now: Time, len: u64, rate_bytes_per_s: u64) {
        let Pacing::On(p) = self else { return };
        let prior = p.next_departure;
        p.next_departure = p.next_departure.max(now);
        p.segs_out += 1;
        if rate_bytes_per_s != u64::MAX && rate_bytes_per_s > 0 && p.segs_out >= UNPACED_SEGMENTS {
            let len_ns = (len as u128 * 1_000_000_000 / rate_bytes_per_s as u128).min(u64::MAX as u128) as u64;
            let credit = p.next_departure.0 - prior.0;
            p.next_departure = Time(p.next_departure.0.saturating_add(len_ns - (len_ns / 2).min(credit)));
        }
    }

    /// When the pacing timer is to fire: the send loop waits for the pacing clock.
    #[inline]
    pub fn waiting_until(&self) -> Option<Time> {
        match self {
            Pacing::Off => None,
            Pacing::On(p) => p.waiting_until,
        }
    }

    /// The pacing clock (`tp->tcp_wstamp_ns`), `Time::ZERO` when off.
    pub fn next_departure(&self) -> Time {
        match self {
            Pacing::Off => Time::ZERO,
            Pacing::On(p) => p.next_departure,
        }
    }

    pub fn is_on(&self) -> bool {
        matches!(self, Pacing::On(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    #[test]
    fn off_never_holds_and_keeps_no_clock() {
        let mut p = Pacing::new(false);
        p.on_send(ms(1), 1448, 1000);
        assert!(!p.holds(ms(1)));
        assert_eq!((p.waiting_until(), p.next_departure()), (None, Time::ZERO));
    }

    #[test]
    fn the_first_ten_segments_leave_unpaced_then_each_takes_len_over_rate() {
        let mut p = Pacing::new(true);
        let rate = 1_000_000; // bytes/s: 1000 bytes take 1 ms
        for _ in 0..9 {
            assert!(!p.holds(ms(0)));
            p.on_send(ms(0), 1000, rate);
        }
        assert_eq!(p.next_departure(), ms(0), "nine segments: no pacing yet");
        p.on_send(ms(0), 1000, rate); // the tenth is paced
        assert_eq!(p.next_departure(), ms(1));
        assert!(p.holds(ms(0)));
        assert_eq!(p.waiting_until(), Some(ms(1)));
        assert!(!p.holds(ms(1)));
        assert_eq!(p.waiting_until(), None);
    }

    #[test]
    fn idle_time_past_the_clock_is_credit_for_at_most_half_a_gap() {
        let mut p = Pacing::new(true);
        for _ in 0..10 {
            p.on_send(ms(0), 1000, 1_000_000);
        }
        // Sent 0.3 ms after the clock allowed: 0.3 ms credit, the gap is 0.7 ms.
        p.on_send(Time(1_300_000), 1000, 1_000_000);
        assert_eq!(p.next_departure(), Time(2_000_000));
        // Sent 5 ms late: the credit is capped at half the gap.
        p.on_send(ms(7), 1000, 1_000_000);
        assert_eq!(p.next_departure(), Time(7_500_000));
    }

    #[test]
    fn no_rate_or_an_unlimited_rate_paces_nothing() {
        for rate in [0, u64::MAX] {
            let mut p = Pacing::new(true);
            for _ in 0..20 {
                p.on_send(ms(0), 1000, rate);
            }
            assert!(!p.holds(ms(0)), "rate {rate}");
        }
    }
}
