//! The event queue: a priority queue ordered by (time, insertion number), so events at the same instant run in
//! the order they were scheduled (FIFO tie-breaking, as nexosim's priority queue). This is what makes
//! a run a pure function of (scenario, seed).

use ccsim_cc::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The head packet of a link's in-transit line reaches the far end.
    LinkDeliver(u32),
    FlowStart(u32),
    FlowStop(u32),
    /// Lazily checked timers: the flow compares its own deadline when this fires.
    RtoTimer(u32),
    DelayedAck(u32),
    /// A flow's held segment is due to leave its host (`sim/host.rs`).
    HostDepart(u32),
    /// A stream source's next packet is due.
    StreamEmit(u32),
    /// A rate-limited application's next write is due (`sim/app_rate.rs`).
    AppWrite(u32),
    /// A web generator starts its next transfer.
    WebArrival(u32),
    Sample,
    /// Start (true) or end (false) of the summary window.
    Measure(bool),
}

/// An event with its key. The key (time, insertion number) is unique, so any correct priority
/// queue pops the same sequence: the order is that of the key, whatever the structure.
#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    seq: u64,
    event: Event,
}

impl Entry {
    /// (time, seq) as one integer: one wide comparison instead of two chained ones.
    #[inline(always)]
    fn key(&self) -> u128 {
        ((self.time as u128) << 64) | self.seq as u128
    }
}

/// Buckets of the radix heap: one per bit of the 128-bit key, and one for the key equal to `last`.
const BUCKETS: usize = 129;
/// Entries an emptied bucket may keep room for whatever the queue's length.
const SPARE_CAPACITY: usize = 256;

/// A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for the shortest path
/// problem", JACM 1990) on the packed key: a monotone priority queue, which a simulation's clock is
/// (no event is scheduled before the one being handled). Bucket i holds the entries whose key
/// first differs from the last popped key (`last`) at bit i - 1, so every entry of a bucket is
/// smaller than every entry of the buckets above it. Scheduling is a bit scan and a push; popping
/// takes the smallest entry of the lowest non-empty bucket, makes its key the new `last` and
/// spreads the rest of that bucket over the buckets below. Each entry moves down a few times in its
/// life instead of paying a heap's log n comparisons on every pop; docs/performance.md
/// ("Instructions per packet") compares it with the binary and 4-ary heaps.
///
/// An entry scheduled before `last` (no code path does; kept so that the order stays that of the
/// key whatever the caller does) waits in `early`, which is served first.
#[derive(Debug)]
pub struct EventQueue {
    buckets: [Vec<Entry>; BUCKETS],
    /// Bit i of word i / 64: `buckets[i]` is not empty.
    occupied: [u64; 3],
    last: u128,
    early: Vec<Entry>,
    len: usize,
    next_seq: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue { buckets: std::array::from_fn(|_| Vec::new()), occupied: [0; 3], last: 0, early: Vec::new(), len: 0, next_seq: 0 }
    }
}

/// The bucket of `key` relative to `last` (`key` >= `last`).
#[inline(always)]
fn bucket(key: u128, last: u128) -> usize {
    128 - (key ^ last).leading_zeros() as usize
}

/// Position of the smallest key in `entries` (not empty).
#[inline(always)]
fn smallest(entries: &[Entry]) -> usize {
    let mut best = 0;
    let mut best_key = entries[0].key();
    for (i, e) in entries.iter().enumerate().skip(1) {
        if e.key() < best_key {
            best = i;
            best_key = e.key();
        }
    }
    best
}

impl EventQueue {
    #[inline]
    pub fn schedule(&mut self, time: Time, event: Event) {
        let entry = Entry { time: time.0, seq: self.next_seq, event };
        self.next_seq += 1;
        self.len += 1;
        let key = entry.key();
        if key < self.last {
            self.early.push(entry);
        } else {
            let i = bucket(key, self.last);
            self.buckets[i].push(entry);
            self.occupied[i / 64] |= 1 << (i % 64);
        }
    }

    /// Time of the next event.
    pub fn peek_time(&self) -> Option<Time> {
        if !self.early.is_empty() {
            return Some(Time(self.early[smallest(&self.early)].time));
        }
        let b = self.lowest_bucket()?;
        Some(Time(self.buckets[b][smallest(&self.buckets[b])].time))
    }

    /// The next event.
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.pop_until(Time(u64::MAX))
    }

    /// The next event if it is due at or before `t`: one search for the smallest key where a peek
    /// and a pop would take two.
    #[inline]
    pub fn pop_until(&mut self, t: Time) -> Option<(Time, Event)> {
        if !self.early.is_empty() {
            let k = smallest(&self.early);
            if self.early[k].time > t.0 {
                return None;
            }
            self.len -= 1;
            let e = self.early.swap_remove(k);
            return Some((Time(e.time), e.event));
        }
        let b = self.lowest_bucket()?;
        let k = smallest(&self.buckets[b]);
        if self.buckets[b][k].time > t.0 {
            return None;
        }
        self.len -= 1;
        let (lower, upper) = self.buckets.split_at_mut(b);
        let from = &mut upper[0];
        let e = from.swap_remove(k);
        self.last = e.key();
        self.occupied[b / 64] &= !(1 << (b % 64));
        // The rest of the bucket agrees with the new `last` above bit b - 1: each lands lower.
        for rest in from.drain(..) {
            let i = bucket(rest.key(), self.last);
            lower[i].push(rest);
            self.occupied[i / 64] |= 1 << (i % 64);
        }
        // A bucket keeps its allocation for the next entries, but not one far larger than the
        // queue: with 10,000 flows the buckets' idle capacity would otherwise outgrow the entries.
        if from.capacity() > SPARE_CAPACITY.max(self.len) {
            *from = Vec::new();
        }
        Some((Time(e.time), e.event))
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    fn lowest_bucket(&self) -> Option<usize> {
        Some(match self.occupied {
            [0, 0, 0] => return None,
            [0, 0, w] => 128 + w.trailing_zeros() as usize,
            [0, w, _] => 64 + w.trailing_zeros() as usize,
            [w, _, _] => w.trailing_zeros() as usize,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_and_fifo_among_equal_times() {
        let mut q = EventQueue::default();
        q.schedule(Time(5), Event::FlowStart(1));
        q.schedule(Time(3), Event::FlowStart(2));
        q.schedule(Time(5), Event::FlowStart(3));
        q.schedule(Time(5), Event::FlowStart(4));
        let order: Vec<Event> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec![Event::FlowStart(2), Event::FlowStart(1), Event::FlowStart(3), Event::FlowStart(4)]);
    }

    #[test]
    fn pop_until_leaves_later_events_in_place() {
        let mut q = EventQueue::default();
        q.schedule(Time(10), Event::Sample);
        q.schedule(Time(20), Event::FlowStart(1));
        assert_eq!(q.pop_until(Time(9)), None);
        assert_eq!(q.pop_until(Time(10)), Some((Time(10), Event::Sample)));
        assert_eq!(q.pop_until(Time(19)), None);
        assert_eq!((q.len(), q.peek_time()), (1, Some(Time(20))));
        // an event scheduled before the last one popped (no caller does) still comes out first
        q.schedule(Time(5), Event::FlowStop(2));
        assert_eq!(q.peek_time(), Some(Time(5)));
        assert_eq!(q.pop_until(Time(4)), None);
        assert_eq!(q.pop(), Some((Time(5), Event::FlowStop(2))));
        assert_eq!(q.pop(), Some((Time(20), Event::FlowStart(1))));
        assert!(q.is_empty() && q.pop().is_none());
    }

    /// The old queue, std's binary heap on (time, seq), as the reference order.
    fn reference_order(ops: &[(bool, u64)]) -> Vec<(u64, u32)> {
        use std::cmp::Reverse;
        let mut heap = std::collections::BinaryHeap::new();
        let mut out = Vec::new();
        for (seq, &(push, t)) in ops.iter().enumerate() {
            if push {
                heap.push(Reverse((t, seq as u64)));
            } else if let Some(Reverse((t, s))) = heap.pop() {
                out.push((t, s as u32));
            }
        }
        while let Some(Reverse((t, s))) = heap.pop() {
            out.push((t, s as u32));
        }
        out
    }

    #[test]
    fn same_order_as_a_binary_heap_with_many_ties_and_interleaved_pops() {
        let mut rng = ccsim_cc::Rng::new(42, 7);
        for round in 0..20 {
            // few distinct times so that ties are common; pops interleaved with pushes (a pop that
            // leaves the root vacant is followed by pushes, peeks and pops in every combination)
            let spread = [3, 50, 1_000_000][round % 3];
            let mut now = 0u64;
            let ops: Vec<(bool, u64)> = (0..5_000)
                .map(|_| {
                    let push = rng.uniform() < 0.55;
                    if push {
                        (true, now + rng.next_u64() % spread)
                    } else {
                        now += rng.next_u64() % 2;
                        (false, 0)
                    }
                })
                .collect();
            let mut q = EventQueue::default();
            let mut got = Vec::new();
            for (seq, &(push, t)) in ops.iter().enumerate() {
                if push {
                    q.schedule(Time(t), Event::FlowStart(seq as u32));
                } else {
                    if rng.uniform() < 0.5 {
                        // a peek or a refused pop_until changes nothing
                        if let Some(before) = q.peek_time().and_then(|p| p.0.checked_sub(1 + rng.next_u64() % 3)) {
                            assert_eq!(q.pop_until(Time(before)), None);
                        }
                    }
                    if let Some((t, Event::FlowStart(s))) = q.pop() {
                        got.push((t.0, s));
                    }
                }
            }
            let pushes = ops.iter().filter(|o| o.0).count();
            assert_eq!(q.len(), pushes - got.len(), "len after a pop leaves the root vacant");
            while let Some((t, Event::FlowStart(s))) = q.pop() {
                got.push((t.0, s));
            }
            assert_eq!(got, reference_order(&ops), "round {round}");
            assert!(q.is_empty());
        }
    }
}
