//! The event queue: a heap ordered by (time, insertion number), so events at the same instant run in
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

/// Children per node: a 4-ary heap is half as deep as a binary one, and a node's four children
/// share a cache line or two (docs/performance.md, "Instructions per packet", has the comparison).
const ARITY: usize = 4;

/// A d-ary min-heap on the packed key. `pop` leaves the root vacant instead of filling it from the
/// bottom: most events schedule another at once (a link's next head, an ACK's next hop), and
/// `schedule` then sifts the new entry down from the root, one pass where a pop and a push would
/// take two. Any other operation fills the vacancy first.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: Vec<Entry>,
    /// `heap[0]` was popped and is a hole.
    root_vacant: bool,
    next_seq: u64,
}

impl EventQueue {
    #[inline]
    pub fn schedule(&mut self, time: Time, event: Event) {
        let entry = Entry { time: time.0, seq: self.next_seq, event };
        self.next_seq += 1;
        if self.root_vacant {
            self.root_vacant = false;
            self.sift_down(0, entry);
        } else {
            self.heap.push(entry);
            self.sift_up(self.heap.len() - 1, entry);
        }
    }

    pub fn peek_time(&mut self) -> Option<Time> {
        self.fill_root();
        self.heap.first().map(|e| Time(e.time))
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.fill_root();
        let top = *self.heap.first()?;
        self.root_vacant = true;
        Some((Time(top.time), top.event))
    }

    pub fn len(&self) -> usize {
        self.heap.len() - self.root_vacant as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Moves the last entry into a vacant root.
    #[inline]
    fn fill_root(&mut self) {
        if self.root_vacant {
            self.root_vacant = false;
            let last = self.heap.pop().expect("a vacant root is an entry");
            if !self.heap.is_empty() {
                self.sift_down(0, last);
            }
        }
    }

    /// Places `entry` at the hole `pos` or above it.
    #[inline]
    fn sift_up(&mut self, mut pos: usize, entry: Entry) {
        let key = entry.key();
        while pos > 0 {
            let parent = (pos - 1) / ARITY;
            if self.heap[parent].key() <= key {
                break;
            }
            self.heap[pos] = self.heap[parent];
            pos = parent;
        }
        self.heap[pos] = entry;
    }

    /// Places `entry` at the hole `pos` or below it. Bottom-up (Floyd): the hole first moves down
    /// along the smallest children to a leaf, then `entry` rises from there; an entry that belongs
    /// near the bottom (the last leaf filling a popped root, a far timer) costs one comparison per
    /// level instead of two.
    #[inline]
    fn sift_down(&mut self, mut pos: usize, entry: Entry) {
        let heap = &mut self.heap[..];
        let n = heap.len();
        loop {
            let first = ARITY * pos + 1;
            let best = if let Some(kids) = heap.get(first..first + ARITY) {
                let kids: &[Entry; ARITY] = kids.try_into().expect("ARITY entries");
                let (a, b) = if kids[1].key() < kids[0].key() { (1, kids[1].key()) } else { (0, kids[0].key()) };
                let (c, d) = if kids[3].key() < kids[2].key() { (3, kids[3].key()) } else { (2, kids[2].key()) };
                first + if d < b { c } else { a }
            } else if first < n {
                (first + 1..n).fold(first, |m, c| if heap[c].key() < heap[m].key() { c } else { m })
            } else {
                break;
            };
            heap[pos] = heap[best];
            pos = best;
        }
        self.sift_up(pos, entry);
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
