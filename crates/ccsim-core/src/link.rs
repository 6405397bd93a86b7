//! A unidirectional link: an output queue served FIFO at a fixed rate, then a fixed propagation delay.
//!
//! Service is computed eagerly: when a packet is admitted its transmission start and its arrival at
//! the far end follow from the link's busy horizon, because a FIFO work-conserving server with a fixed
//! rate has no later choice to make. So each packet costs one event per hop (its arrival), and the
//! link keeps its packets in an in-transit line ordered by arrival time, with only the head in the
//! global event queue. The queue occupancy seen by an arrival (what a drop-tail or RED decision needs)
//! is the set of admitted packets whose transmission has not started yet.

use std::collections::VecDeque;
use std::time::Duration;

use ccsim_cc::{Rng, Time};

use crate::histogram::Histogram;
use crate::loss_schedule::LossSchedule;
use crate::packet::Packet;
use crate::queue::{QueueDiscipline, QueueState};

/// Room for one more entry in `q`, fallibly. Up to four entries, one at a time: an access link
/// that never holds more than a packet or two at once (most of them) keeps that many slots, not the
/// four of the amortised growth (docs/performance.md, "Memory per flow"); then it doubles as usual.
#[inline]
fn reserve_one<T>(q: &mut VecDeque<T>) -> bool {
    q.len() < q.capacity() || grow_one(q)
}

#[cold]
fn grow_one<T>(q: &mut VecDeque<T>) -> bool {
    if q.capacity() < 4 { q.try_reserve_exact(1) } else { q.try_reserve(1) }.is_ok()
}

/// Why a packet did not make it onto the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drop {
    Queue,
    Random,
}

/// Counters of one link over one sampling interval (reset after each sample) or the summary window.
#[derive(Clone, Debug, Default)]
pub struct LinkCounters {
    pub arrivals: u64,
    pub drops_queue: u64,
    pub drops_random: u64,
    /// Early (AQM) drops, a subset of `drops_queue` (RED's probabilistic drops; 0 for drop-tail).
    pub drops_early: u64,
    pub tx_bytes: u64,
    pub departures: u64,
    pub qdelay_sum_ns: u128,
    pub qdelay_max_ns: u64,
}

pub struct Link {
    pub name: String,
    pub rate_bps: u64,
    pub delay: Duration,
    /// Random loss probability over time (constant unless the scenario changes it).
    loss: LossSchedule,
    discipline: Box<dyn QueueDiscipline>,
    rng: Rng,
    /// End of the last scheduled transmission.
    busy_until: Time,
    /// Admitted packets not yet on the wire: (transmission start, wire bytes).
    waiting: VecDeque<(Time, u32)>,
    waiting_bytes: u64,
    /// Packets on or past the wire, with their arrival time at the far end (non-decreasing).
    in_transit: VecDeque<(Time, Packet)>,
    pub interval: LinkCounters,
    pub window: LinkCounters,
    /// Queueing delays of departures inside the summary window.
    pub qdelay_hist: Histogram,
}

impl Link {
    pub fn new(name: String, rate_bps: u64, delay: Duration, loss: LossSchedule, mut discipline: Box<dyn QueueDiscipline>, rng: Rng) -> Link {
        discipline.attach(rate_bps);
        Link {
            name,
            rate_bps,
            delay,
            loss,
            discipline,
            rng,
            busy_until: Time::ZERO,
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            in_transit: VecDeque::new(),
            interval: LinkCounters::default(),
            window: LinkCounters::default(),
            qdelay_hist: Histogram::default(),
        }
    }

    /// Serialisation time of `bytes` at this link's rate, rounded up to the nanosecond.
    pub fn tx_time(&self, bytes: u32) -> Duration {
        let bits = bytes as u128 * 8 * 1_000_000_000;
        Duration::from_nanos(bits.div_ceil(self.rate_bps as u128) as u64)
    }

    /// Forget packets whose transmission has started by `now`.
    fn advance(&mut self, now: Time) {
        while let Some(&(start, bytes)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.waiting.pop_front();
            self.waiting_bytes -= bytes as u64;
        }
    }

    pub fn queue_state(&mut self, now: Time) -> QueueState {
        self.advance(now);
        let idle_since = if self.waiting.is_empty() && self.busy_until <= now { Some(self.busy_until) } else { None };
        QueueState { pkts: self.waiting.len() as u64, bytes: self.waiting_bytes, idle_since }
    }

    /// Offers a packet to the link. On success returns `Ok(Some(arrival))` when the in-transit line was
    /// empty: the caller must then schedule a delivery event at that time.
    pub fn enqueue(&mut self, now: Time, mut pkt: Packet, in_window: bool) -> Result<Option<Time>, Drop> {
        self.interval.arrivals += 1;
        if in_window {
            self.window.arrivals += 1;
        }
        let loss_rate = self.loss.at(now);
        if loss_rate > 0.0 && self.rng.bernoulli(loss_rate) {
            self.interval.drops_random += 1;
            if in_window {
                self.window.drops_random += 1;
            }
            return Err(Drop::Random);
        }
        let state = self.queue_state(now);
        let early_before = self.discipline.early_drops();
        if !self.discipline.admit(now, pkt.wire_bytes as u64, state, &mut self.rng) {
            let early = (self.discipline.early_drops() > early_before) as u64;
            self.interval.drops_queue += 1;
            self.interval.drops_early += early;
            if in_window {
                self.window.drops_queue += 1;
                self.window.drops_early += early;
            }
            return Err(Drop::Queue);
        }
        let start = self.busy_until.max(now);
        let end = start + self.tx_time(pkt.wire_bytes);
        self.busy_until = end;
        if start > now {
            self.waiting.push_back((start, pkt.wire_bytes));
            self.waiting_bytes += pkt.wire_bytes as u64;
        }
        // The queueing delay (start - now) is recorded when the packet is delivered.
        pkt.enqueued_at = now;
        let arrival = end + self.delay;
        let was_empty = self.in_transit.is_empty();
        self.in_transit.push_back((arrival, pkt));
        Ok(if was_empty { Some(arrival) } else { None })
    }

    /// The queue's limit as (packets, bytes), for the cost estimate.
    pub fn queue_limit(&self) -> (Option<u64>, Option<u64>) {
        self.discipline.limit()
    }

    /// Room for one more packet, or false when memory for it cannot be had: the queue limit and the
    /// link's bandwidth-delay product come from the user, so their growth is a fallible allocation
    /// (an error that ends the run) rather than an abort of the process.
    #[inline]
    pub fn try_reserve_one(&mut self) -> bool {
        reserve_one(&mut self.in_transit) && reserve_one(&mut self.waiting)
    }

    /// The queue discipline's average queue (RED), if it keeps one.
    pub fn average_queue(&self) -> Option<f64> {
        self.discipline.average_queue()
    }

    /// Time at which the head of the in-transit line arrives, if any.
    pub fn head_arrival(&self) -> Option<Time> {
        self.in_transit.front().map(|(t, _)| *t)
    }

    /// Removes the head packet (its arrival time must be `now`) and records its departure statistics.
    pub fn deliver_head(&mut self, now: Time, in_window: bool) -> Packet {
        let (t, pkt) = self.in_transit.pop_front().expect("delivery event with an empty link");
        debug_assert_eq!(t, now);
        let tx = self.tx_time(pkt.wire_bytes);
        let depart_end = Time(now.0 - self.delay.as_nanos() as u64);
        let start = Time(depart_end.0 - tx.as_nanos() as u64);
        let qdelay = start.0.saturating_sub(pkt.enqueued_at.0);
        for c in [&mut self.interval].into_iter().chain(if in_window { Some(&mut self.window) } else { None }) {
            c.departures += 1;
            c.tx_bytes += pkt.wire_bytes as u64;
            c.qdelay_sum_ns += qdelay as u128;
            c.qdelay_max_ns = c.qdelay_max_ns.max(qdelay);
        }
        if in_window {
            self.qdelay_hist.record(qdelay);
        }
        pkt
    }

    /// How many packets the link holds (queued, on the wire, propagating).
    pub fn packets_held(&self) -> usize {
        self.in_transit.len()
    }

    /// Packets admitted but not yet delivered at the far end (queued, on the wire, propagating).
    pub fn packets_inside(&self) -> impl Iterator<Item = &Packet> {
        self.in_transit.iter().map(|(_, p)| p)
    }

    /// Test hook for the conservation check: silently loses the most recently admitted packet.
    #[doc(hidden)]
    pub fn debug_lose_packet(&mut self) -> bool {
        if self.in_transit.len() < 2 {
            return false; // keep the head, whose delivery event is scheduled
        }
        self.in_transit.pop_back().is_some()
    }
}
