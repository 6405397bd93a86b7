//! The sending host between TCP and its access link: send jitter (`tcp.send_jitter_ns`).
//!
//! A real sender does not put a segment on the wire at the instant its ACK arrives: interrupt
//! moderation, softirq and scheduler latency add a small, variable delay. In a simulator without it,
//! flows whose access rate equals the bottleneck's keep a fixed phase to the bottleneck's departures,
//! and a drop-tail queue then drops the same flows again and again (Floyd and Jacobson, "On Traffic
//! Phase Effects in Packet-Switched Gateways", 1992).
//!
//! Each segment leaves after a delay drawn uniformly from [0, max], never before the segment sent
//! before it (a host's transmit queue keeps order). The draws come from the flow's own random stream,
//! so the jitter changes no other random choice of the run.
//!
//! ns-2's answer to the same problem, `Agent/TCP overhead_`, is not this model: its delay is per
//! send opportunity, not per segment. `TcpAgent::send_much` (tcp.cc) with `overhead_` > 0 arms the
//! delayed-send timer (`delsnd_timer_`, uniform in [0, overhead_]) instead of sending; while the
//! timer is pending, ACKs send nothing; at its expiry `send_much(force = 1)` sends everything the
//! window then allows, back to back. docs/profiles.md compares the two.

use std::collections::VecDeque;
use ccsim_cc::{Rng, Time};

use crate::link::reserve_one;
use crate::packet::Packet;

/// Segments a flow's TCP has sent that have not yet left its host.
pub(crate) struct SendJitter {
    /// The bound plus one nanosecond, as a float: a uniform draw in [0, 1) times this, truncated,
    /// is uniform over [0, max] ns.
    span_ns: f64,
    rng: Rng,
    /// (departure time, segment), departures non-decreasing.
    held: VecDeque<(Time, Packet)>,
    last_departure: Time,
}

impl SendJitter {
    /// `None` when the host adds no delay (`max_ns` = 0): segments go straight to the access link.
    pub fn new(max_ns: u64, rng: Rng) -> Option<SendJitter> {
        (max_ns > 0).then(|| SendJitter { span_ns: (max_ns + 1) as f64, rng, held: VecDeque::new(), last_departure: Time::ZERO })
    }

    /// Holds `pkt`, sent by TCP at `now`; returns its departure time if it is the new head (the loop
    /// then schedules one event for it), `None` if an earlier segment's event will release it.
    pub fn hold(&mut self, now: Time, pkt: &Packet) -> Option<Time> {
        let delay_ns = (self.rng.uniform() * self.span_ns) as u64;
        let departure = Time(now.0.saturating_add(delay_ns)).max(self.last_departure);
        self.last_departure = departure;
        let was_empty = self.held.is_empty();
        if !reserve_one(&mut self.held) {
            self.held.reserve(1); // no memory for the step: the allocator reports it, as for any push
        }
        self.held.push_back((departure, *pkt));
        was_empty.then_some(departure)
    }

    /// The held segment due at `now`, if any.
    pub fn release(&mut self, now: Time) -> Option<Packet> {
        match self.held.front() {
            Some(&(t, _)) if t <= now => self.held.pop_front().map(|(_, p)| p),
            _ => None,
        }
    }

    /// When the next held segment is due.
    pub fn next_departure(&self) -> Option<Time> {
        self.held.front().map(|&(t, _)| t)
    }

    /// The segments still in the host, for the conservation check.
    pub fn held(&self) -> impl Iterator<Item = &Packet> {
        self.held.iter().map(|(_, p)| p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(seq: u64) -> Packet {
        Packet::data(0, seq, 1000, 40, Time::ZERO, false)
    }

    #[test]
    fn no_jitter_means_no_host_stage() {
        assert!(SendJitter::new(0, Rng::new(1, 1)).is_none());
    }

    #[test]
    fn segments_leave_in_order_within_the_bound() {
        let mut h = SendJitter::new(125_000, Rng::new(7, 3)).unwrap();
        let mut departures = Vec::new();
        let mut sent = 0;
        for k in 0..200u64 {
            let now = Time::from_nanos(k * 10_000); // faster than the jitter: segments queue up
            h.hold(now, &seg(k));
            departures.push(now);
            sent += 1;
        }
        let mut last = Time::ZERO;
        let mut released = Vec::new();
        while let Some(t) = h.next_departure() {
            assert!(t >= last, "departures go backwards");
            last = t;
            while let Some(p) = h.release(t) {
                released.push((t, p.seq));
            }
        }
        assert_eq!(released.len(), sent);
        for (k, &(t, seq)) in released.iter().enumerate() {
            assert_eq!(seq, k as u64, "order kept");
            let waited = (t - departures[k]).as_nanos() as u64;
            // Never early; late only by the bound or by waiting behind an earlier segment.
            assert!(t >= departures[k]);
            assert!(waited <= 125_000 || t == released[k.saturating_sub(1)].0);
        }
    }

    #[test]
    fn the_delay_is_spread_over_the_bound() {
        let mut h = SendJitter::new(100_000, Rng::new(3, 9)).unwrap();
        let mut delays = Vec::new();
        for k in 0..2000u64 {
            let now = Time::from_nanos(k * 1_000_000); // far apart: no waiting behind another
            let t = h.hold(now, &seg(k)).expect("head");
            delays.push((t - now).as_nanos() as f64);
            h.release(t).unwrap();
        }
        let mean = delays.iter().sum::<f64>() / delays.len() as f64;
        assert!((mean - 50_000.0).abs() < 3_000.0, "mean delay {mean} ns, want ~50 us");
        assert!(delays.iter().cloned().fold(0.0, f64::max) > 95_000.0);
        assert!(delays.iter().cloned().fold(f64::MAX, f64::min) < 5_000.0);
    }
}
