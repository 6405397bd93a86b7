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
use crate::random_loss::LinkLoss;
use crate::packet::{Packet, SackBlocks};
use crate::queue::{Discipline, QueueDiscipline, QueueState};

/// Serialisation time at a fixed rate: ceil(bytes * 8e9 / rate) ns, the formula the link has
/// always used, without its 128-bit division on every packet. With 8e9 = q * rate + r,
/// ceil(bytes * 8e9 / rate) = bytes * q + ceil(bytes * r / rate): one multiplication when the rate
/// divides 8e9 (1 Gbit/s: 8 ns a byte; 10 and 100 Mbit/s), and one 64-bit division otherwise. Any
/// product that would overflow 64 bits takes the 128-bit formula, so the result is the same for
/// every size and rate (tested against it).
#[derive(Clone, Copy, Debug)]
pub struct TxTime {
    rate_bps: u64,
    /// q and r above.
    ns_per_byte: u64,
    rem: u64,
}

const BIT_NS_PER_BYTE: u64 = 8 * 1_000_000_000;

impl TxTime {
    /// `rate_bps` > 0 (`Scenario::validate` checks every link's rate).
    pub fn new(rate_bps: u64) -> TxTime {
        TxTime { rate_bps, ns_per_byte: BIT_NS_PER_BYTE / rate_bps, rem: BIT_NS_PER_BYTE % rate_bps }
    }

    #[inline]
    pub fn ns(&self, bytes: u32) -> u64 {
        let b = bytes as u64;
        if let Some(whole) = b.checked_mul(self.ns_per_byte) {
            if self.rem == 0 {
                return whole;
            }
            if let Some(part) = b.checked_mul(self.rem) {
                if let Some(t) = whole.checked_add(part.div_ceil(self.rate_bps)) {
                    return t;
                }
            }
        }
        Self::by_division(bytes, self.rate_bps)
    }

    /// The formula itself, in 128 bits.
    pub fn by_division(bytes: u32, rate_bps: u64) -> u64 {
        (bytes as u128 * BIT_NS_PER_BYTE as u128).div_ceil(rate_bps as u128) as u64
    }
}

/// Room for one more entry in `q`, fallibly (see [`grow_one`]).
#[inline]
pub(crate) fn reserve_one<T>(q: &mut VecDeque<T>) -> bool {
    q.len() < q.capacity() || grow_one(q)
}

/// Room for one more entry in the full line `q` (a link's, a host's held segments), fallibly. One
/// entry, then four: a line that never holds more than a packet at once (most access links, the
/// host of an application-limited flow) keeps one slot, not the four of the amortised growth
/// (docs/performance.md, "Memory per flow"), and one that holds more grows once to four rather than
/// a slot at a time (a reallocation each, on each of 20,000 access links); then it doubles as usual.
#[cold]
fn grow_one<T>(q: &mut VecDeque<T>) -> bool {
    match q.capacity() {
        0 => q.try_reserve_exact(1),
        1..=3 => q.try_reserve_exact(4 - q.len()),
        _ => q.try_reserve(1),
    }
    .is_ok()
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

/// The counts of an interval the summary window takes too (see `Link::window`): the interval's
/// as they stood when the window last took them, or when it opened.
#[derive(Clone, Copy, Debug, Default)]
struct WindowMark {
    arrivals: u64,
    drops_queue: u64,
    drops_random: u64,
    drops_early: u64,
    tx_bytes: u64,
    departures: u64,
}

impl WindowMark {
    fn of(c: &LinkCounters) -> WindowMark {
        WindowMark {
            arrivals: c.arrivals,
            drops_queue: c.drops_queue,
            drops_random: c.drops_random,
            drops_early: c.drops_early,
            tx_bytes: c.tx_bytes,
            departures: c.departures,
        }
    }
}

/// A packet on or past the wire.
#[derive(Clone, Copy, Debug)]
struct InTransit {
    /// Arrival at the far end.
    arrival: Time,
    /// Time it waited for the link, recorded on delivery.
    qdelay_ns: u64,
    pkt: Packet,
}

pub struct Link {
    pub name: String,
    pub rate_bps: u64,
    pub delay: Duration,
    delay_ns: u64,
    tx: TxTime,
    /// The random loss process (`random_loss.rs`).
    loss: LinkLoss,
    discipline: Discipline,
    rng: Rng,
    /// End of the last scheduled transmission.
    busy_until: Time,
    /// Admitted packets not yet on the wire: (transmission start, wire bytes).
    waiting: VecDeque<(Time, u32)>,
    waiting_bytes: u64,
    /// Packets on or past the wire, arrival times non-decreasing.
    in_transit: VecDeque<InTransit>,
    pub interval: LinkCounters,
    /// The summary window's arrivals, drops, bytes and departures (its queueing delays are
    /// `qdelay_hist`'s). Not counted per packet: the interval's counts go into it when a sample
    /// inside the window resets them (`take_interval`) and when the window closes (`close_window`),
    /// less what the interval had counted when the window opened (`window_mark`).
    pub window: LinkCounters,
    window_mark: WindowMark,
    /// The departures of the intervals already taken (`departures`).
    departed: u64,
    /// Queueing delays of departures inside the summary window, except the zero ones (most
    /// departures of a link that rarely queues): those are the window's departures the histogram
    /// has not recorded, added in one step when the results are read (`fold_zero_qdelays`).
    qdelay_hist: Histogram,
}

impl Link {
    /// Bytes a link holds for one packet: its in-transit entry, its waiting entry, and the slot of
    /// its SACK blocks if it is an ACK that carries some (the memory meter's and the cost
    /// estimate's figure).
    pub const HELD_PACKET_BYTES: usize =
        std::mem::size_of::<InTransit>() + std::mem::size_of::<(Time, u32)>() + std::mem::size_of::<SackBlocks>();

    pub fn new(name: String, rate_bps: u64, delay: Duration, loss: LinkLoss, mut discipline: Discipline, rng: Rng) -> Link {
        discipline.attach(rate_bps);
        Link {
            name,
            rate_bps,
            delay,
            delay_ns: delay.as_nanos() as u64,
            tx: TxTime::new(rate_bps),
            loss,
            discipline,
            rng,
            busy_until: Time::ZERO,
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            in_transit: VecDeque::new(),
            interval: LinkCounters::default(),
            window: LinkCounters::default(),
            window_mark: WindowMark::default(),
            departed: 0,
            qdelay_hist: Histogram::default(),
        }
    }

    /// Serialisation time of `bytes` at this link's rate, rounded up to the nanosecond.
    pub fn tx_time(&self, bytes: u32) -> Duration {
        Duration::from_nanos(self.tx.ns(bytes))
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
    #[inline]
    pub fn enqueue(&mut self, now: Time, pkt: Packet) -> Result<Option<Time>, Drop> {
        self.interval.arrivals += 1;
        if !self.loss.lossless_at(now) && self.random_loss(now) {
            self.interval.drops_random += 1;
            return Err(Drop::Random);
        }
        self.advance(now);
        let admitted = match &mut self.discipline {
            // Drop-tail needs only the occupancy: no idle time, no early drops to tell apart.
            Discipline::DropTail(d) => d.admits(self.waiting.len() as u64, self.waiting_bytes, pkt.wire_bytes as u64),
            Discipline::Red(_) => self.admit_red(now, pkt.wire_bytes),
        };
        if let Err(early) = admitted {
            self.interval.drops_queue += 1;
            self.interval.drops_early += early as u64;
            return Err(Drop::Queue);
        }
        Ok(self.place(now, pkt))
    }

    /// Schedules an admitted packet behind the link's busy horizon; its arrival at the far end if
    /// the in-transit line was empty (the caller then schedules the delivery event).
    #[inline(always)]
    fn place(&mut self, now: Time, pkt: Packet) -> Option<Time> {
        let start = self.busy_until.max(now);
        let end = Time(start.0 + self.tx.ns(pkt.wire_bytes));
        self.busy_until = end;
        if start > now {
            self.waiting.push_back((start, pkt.wire_bytes));
            self.waiting_bytes += pkt.wire_bytes as u64;
        }
        let arrival = Time(end.0 + self.delay_ns);
        let was_empty = self.in_transit.is_empty();
        // The queueing delay is recorded when the packet is delivered.
        self.in_transit.push_back(InTransit { arrival, qdelay_ns: start.0 - now.0, pkt });
        if was_empty { Some(arrival) } else { None }
    }

    /// `enqueue` for the common case, with none of its rare branches: a drop-tail link,
    /// lossless now, with room for the entry, that admits the packet. `None` (nothing changed but
    /// the forgetting of started transmissions, which `enqueue` repeats harmlessly) sends the
    /// caller to `enqueue`; otherwise its `Ok` value.
    #[inline(always)]
    pub fn enqueue_admitted(&mut self, now: Time, pkt: &Packet) -> Option<Option<Time>> {
        if !matches!(self.discipline, Discipline::DropTail(_))
            || self.in_transit.len() >= self.in_transit.capacity()
            || !self.loss.lossless_at(now)
        {
            return None;
        }
        self.advance(now);
        let Discipline::DropTail(d) = &self.discipline else { return None };
        if d.admits(self.waiting.len() as u64, self.waiting_bytes, pkt.wire_bytes as u64).is_err() {
            return None;
        }
        self.interval.arrivals += 1;
        Some(self.place(now, *pkt))
    }

    /// A random loss draw (the link may lose a packet now). Out of line: the enqueue of a lossless
    /// link (most of them) stays small.
    #[inline(never)]
    fn random_loss(&mut self, now: Time) -> bool {
        self.loss.lost(now, &mut self.rng)
    }

    /// RED's admission (or any discipline's, through the trait): `Err(early)` when refused,
    /// `early` if the refusal was an early (AQM) drop. `advance` has run. Out of line: the drop-tail
    /// enqueue stays small.
    #[inline(never)]
    fn admit_red(&mut self, now: Time, bytes: u32) -> Result<(), bool> {
        let state = self.queue_state(now);
        let early_before = self.discipline.early_drops();
        if self.discipline.admit(now, bytes as u64, state, &mut self.rng) {
            Ok(())
        } else {
            Err(self.discipline.early_drops() > early_before)
        }
    }

    /// The queue's limit as (packets, bytes), for the cost estimate.
    pub fn queue_limit(&self) -> (Option<u64>, Option<u64>) {
        self.discipline.limit()
    }

    /// Room for one more packet, or false when memory for it cannot be had: the queue limit and the
    /// link's bandwidth-delay product come from the user, so their growth is a fallible allocation
    /// (an error that ends the run) rather than an abort of the process.
    /// `waiting` is kept at least as large as `in_transit` (a waiting packet is also in transit),
    /// so one comparison covers both lines.
    #[inline]
    pub fn try_reserve_one(&mut self) -> bool {
        self.in_transit.len() < self.in_transit.capacity() || self.grow_one()
    }

    #[cold]
    fn grow_one(&mut self) -> bool {
        reserve_one(&mut self.in_transit) && {
            let room = self.in_transit.capacity().saturating_sub(self.waiting.len());
            self.waiting.try_reserve_exact(room).is_ok()
        }
    }

    /// Nothing arrived at or left the link in the interval, nothing waits in it and its discipline
    /// keeps no average: idle, told without the queue's state (`queue_state` would find it empty).
    #[inline]
    pub fn idle_in_interval(&self) -> bool {
        (self.interval.arrivals | self.interval.departures) == 0 && self.waiting.is_empty() && self.average_queue().is_none()
    }

    /// The queue discipline's average queue (RED), if it keeps one.
    pub fn average_queue(&self) -> Option<f64> {
        self.discipline.average_queue()
    }

    /// Time at which the head of the in-transit line arrives, if any.
    pub fn head_arrival(&self) -> Option<Time> {
        self.in_transit.front().map(|p| p.arrival)
    }

    /// Removes the head packet (its arrival time must be `now`) and records its departure statistics.
    #[inline]
    pub fn deliver_head(&mut self, now: Time, in_window: bool) -> Packet {
        let InTransit { arrival, qdelay_ns, pkt } = self.in_transit.pop_front().expect("delivery event with an empty link");
        debug_assert_eq!(arrival, now);
        let c = &mut self.interval;
        c.departures += 1;
        c.tx_bytes += pkt.wire_bytes as u64;
        // A packet that did not wait (most of them on a link that rarely queues) adds nothing to
        // the delay sum or maximum, and nothing to the histogram: `fold_zero_qdelays` adds it.
        if qdelay_ns != 0 {
            c.qdelay_sum_ns += qdelay_ns as u128;
            c.qdelay_max_ns = c.qdelay_max_ns.max(qdelay_ns);
            if in_window {
                self.qdelay_hist.record(qdelay_ns);
            }
        }
        pkt
    }

    /// The summary window opens: what the interval has counted so far is not the window's.
    pub fn open_window(&mut self) {
        self.window_mark = WindowMark::of(&self.interval);
    }

    /// The summary window closes (or the run ends inside it): the interval's counts since the mark
    /// go into the window's.
    pub fn close_window(&mut self) {
        let (now, m, w) = (WindowMark::of(&self.interval), self.window_mark, &mut self.window);
        w.arrivals += now.arrivals - m.arrivals;
        w.drops_queue += now.drops_queue - m.drops_queue;
        w.drops_random += now.drops_random - m.drops_random;
        w.drops_early += now.drops_early - m.drops_early;
        w.tx_bytes += now.tx_bytes - m.tx_bytes;
        w.departures += now.departures - m.departures;
        self.window_mark = now;
    }

    /// The interval's counters, reset for the next interval; `in_window`: the summary window is
    /// open, and takes what the interval counted since its mark.
    pub fn take_interval(&mut self, in_window: bool) -> LinkCounters {
        if in_window {
            self.close_window();
        }
        self.departed += self.interval.departures;
        self.window_mark = WindowMark::default();
        std::mem::take(&mut self.interval)
    }

    /// Packets delivered at the far end over the run so far.
    pub fn departures(&self) -> u64 {
        self.departed + self.interval.departures
    }

    /// Adds the window's departures that waited for nothing to the histogram (those it has not
    /// recorded; the window must be closed).
    pub fn fold_zero_qdelays(&mut self) {
        self.qdelay_hist.record_zeros(self.window.departures - self.qdelay_hist.count());
    }

    /// Queueing delays of departures inside the summary window (`fold_zero_qdelays` must have run
    /// since the window took its last counts).
    pub fn qdelay_hist(&self) -> &Histogram {
        assert_eq!(self.qdelay_hist.count(), self.window.departures, "link {}: queueing delays read before the zero ones were added", self.name);
        &self.qdelay_hist
    }

    /// How many packets the link holds (queued, on the wire, propagating).
    pub fn packets_held(&self) -> usize {
        self.in_transit.len()
    }

    /// Packets admitted but not yet delivered at the far end (queued, on the wire, propagating).
    pub fn packets_inside(&self) -> impl Iterator<Item = &Packet> {
        self.in_transit.iter().map(|p| &p.pkt)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_is_the_128_bit_formula_for_every_size_and_rate() {
        let mut rng = Rng::new(9, 1);
        let mut rates: Vec<u64> = vec![1, 3, 7, 1_000, 56_000, 1_544_000, 7_000_000, 10_000_000, 20_000_000, 100_000_000];
        rates.extend([155_520_000, 622_080_000, 999_999_999, 1_000_000_000, 2_500_000_000, 3_000_000_007]);
        rates.extend([8_000_000_000, 10_000_000_000, 40_000_000_000, 100_000_000_000, 400_000_000_000, u64::MAX]);
        rates.extend((0..200).map(|_| 1 + rng.next_u64() % 200_000_000_000));
        let mut sizes: Vec<u32> = (0..=2_000).collect();
        sizes.extend([9_000, 65_535, 65_536, 1 << 20, 1 << 26, 1 << 31, u32::MAX - 1, u32::MAX]);
        sizes.extend((0..200).map(|_| rng.next_u64() as u32));
        for &rate in &rates {
            let tx = TxTime::new(rate);
            for &b in &sizes {
                assert_eq!(tx.ns(b), TxTime::by_division(b, rate), "{b} bytes at {rate} bit/s");
            }
        }
        assert_eq!(TxTime::new(1_000_000_000).ns(1500), 12_000);
        assert_eq!(TxTime::new(7_000_000).ns(1500), 1_714_286); // 1,714,285.7 rounded up
    }

    /// The window's counts, taken from the intervals' when a sample resets them and at the
    /// window's edges, are what counting each packet while the window is open gives, wherever the
    /// edges and the samples fall; so are the run's departures and the histogram's count.
    #[test]
    fn the_window_counts_what_happened_between_its_edges() {
        use crate::queue::droptail::DropTail;
        let mut rng = Rng::new(5, 2);
        let mut seen = LinkCounters::default();
        for case in 0..40 {
            let drop_tail = Discipline::DropTail(DropTail { limit_pkts: Some(4), limit_bytes: None });
            let mut l = Link::new("l".into(), 10_000_000, Duration::from_millis(2), LinkLoss::bernoulli(crate::loss_schedule::LossSchedule::constant(0.05)), drop_tail, Rng::new(case, 1));
            let (open_at, close_at) = (rng.next_u64() % 300, 300 + rng.next_u64() % 400);
            let (mut want, mut open, mut now, mut delivered) = (LinkCounters::default(), false, 0, 0);
            for step in 0..800u64 {
                now += rng.next_u64() % 1_400_000; // 1040-byte packets take 832 us: queues and drops
                while let Some(a) = l.head_arrival().filter(|&a| a <= Time(now)) {
                    let p = l.deliver_head(a, open);
                    delivered += 1;
                    if open {
                        want.departures += 1;
                        want.tx_bytes += p.wire_bytes as u64;
                    }
                }
                if step == open_at {
                    l.open_window();
                    open = true;
                }
                if step == close_at && case % 4 != 0 {
                    l.close_window();
                    open = false;
                }
                if rng.uniform() < 0.05 {
                    l.take_interval(open); // a sample
                }
                let r = l.enqueue(Time(now), Packet::data(0, step, 1000, 40, Time(now), false));
                if open {
                    want.arrivals += 1;
                    want.drops_queue += (r == Err(Drop::Queue)) as u64;
                    want.drops_random += (r == Err(Drop::Random)) as u64;
                }
            }
            if open {
                l.close_window(); // the run ends inside the window
            }
            l.fold_zero_qdelays();
            let w = &l.window;
            let got = (w.arrivals, w.drops_queue, w.drops_random, w.tx_bytes, w.departures);
            assert_eq!(got, (want.arrivals, want.drops_queue, want.drops_random, want.tx_bytes, want.departures), "case {case}");
            assert_eq!((l.departures(), l.qdelay_hist().count()), (delivered, want.departures), "case {case}");
            seen.drops_queue += want.drops_queue;
            seen.drops_random += want.drops_random;
        }
        assert!(seen.drops_queue > 100 && seen.drops_random > 100, "{seen:?}");
    }
}
