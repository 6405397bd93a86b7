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

/// A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for the shortest path
/// problem", JACM 1990) on the packed key: a monotone priority queue, which a simulation's clock is
/// (no event is scheduled before the one being handled). Bucket i holds the entries whose key
/// first differs from the last popped key (`last`) at bit i - 1, so scheduling is a bit scan and a
/// push; popping takes the lowest non-empty bucket, makes its smallest key the new `last` and
/// spreads its entries over the buckets below. Each entry moves down a few times in its life
/// instead of paying a heap's log n comparisons on every pop; docs/performance.md
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
            self.put(bucket(key, self.last), entry);
        }
    }

    pub fn peek_time(&mut self) -> Option<Time> {
        if let Some(i) = self.earliest_early() {
            return Some(Time(self.early[i].time));
        }
        self.settle()?;
        Some(Time(self.buckets[0][0].time))
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let entry = if let Some(i) = self.earliest_early() {
            self.early.swap_remove(i)
        } else {
            self.settle()?;
            self.occupied[0] &= !1;
            self.buckets[0].pop().expect("settled")
        };
        self.len -= 1;
        Some((Time(entry.time), entry.event))
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    fn put(&mut self, i: usize, entry: Entry) {
        self.buckets[i].push(entry);
        self.occupied[i / 64] |= 1 << (i % 64);
    }

    fn earliest_early(&self) -> Option<usize> {
        if self.early.is_empty() {
            return None;
        }
        (0..self.early.len()).min_by_key(|&i| self.early[i].key())
    }

    /// Makes `buckets[0]` hold the smallest entry (keys are unique: it is the only one there);
    /// `None` if the queue is empty.
    #[inline]
    fn settle(&mut self) -> Option<()> {
        if self.occupied[0] & 1 != 0 {
            return Some(());
        }
        let i = match self.occupied {
            [0, 0, 0] => return None,
            [0, 0, w] => 128 + w.trailing_zeros() as usize,
            [0, w, _] => 64 + w.trailing_zeros() as usize,
            [w, _, _] => w.trailing_zeros() as usize,
        };
        let mut spread = std::mem::take(&mut self.buckets[i]);
        self.occupied[i / 64] &= !(1 << (i % 64));
        self.last = spread.iter().map(Entry::key).min().expect("an occupied bucket");
        // Every entry of bucket i agrees with the new `last` above bit i - 1: each lands lower.
        for entry in spread.drain(..) {
            self.put(bucket(entry.key(), self.last), entry);
        }
        self.buckets[i] = spread; // keep its allocation for the next entries of that bucket
        Some(())
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
                        let _ = q.peek_time();
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
