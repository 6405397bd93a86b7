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

/// An event with its time. The order among equal times is kept by where the entry sits (see
/// [`EventQueue`]), so no insertion number is stored.
#[derive(Clone, Copy, Debug)]
struct Entry {
    time: u64,
    event: Event,
}

/// Buckets of the radix heap: one per bit of the 64-bit time.
const BUCKETS: usize = 64;
/// Entries an emptied bucket (or the `due` line) may keep room for whatever the queue's length.
const SPARE_CAPACITY: usize = 256;

/// A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster algorithms for the shortest path
/// problem", JACM 1990) on the event time: a monotone priority queue, which a simulation's clock is
/// (no event is scheduled before the one being handled). The events due at the time last taken
/// out (`last`) wait in `due`, oldest first; bucket i holds the entries whose time first differs
/// from `last` at bit i, so every entry of a bucket is later than every entry of the buckets below
/// it. Scheduling is a bit scan and a push; when `due` runs out, the lowest non-empty bucket's
/// earliest time becomes the new `last` and that bucket is spread over `due` and the buckets
/// below. Each entry moves down a few times in its life instead of paying a heap's log n
/// comparisons on every pop; docs/performance.md ("Instructions per packet") compares it with the
/// binary and 4-ary heaps and with the 128-bit (time, insertion number) key it replaced.
///
/// Ties are served first in, first out without an insertion number, because every line (`due`,
/// each bucket, `early`) holds its entries in the order they were scheduled:
/// * `schedule` appends the newest entry of all to the end of one line;
/// * a bucket is spread only when `due` and every bucket below it are empty (it is the lowest
///   non-empty one), and it is read front to back, so each line it feeds receives a subsequence of
///   it, in order;
/// * `due` is taken from the front; `early` and a spread bucket keep their order when an entry
///   leaves them.
///
/// So among the entries of one time (all in the same line: the line depends only on the time and
/// `last`) the first in the line is the oldest, which is the order of the key (time, insertion
/// number) that the binary heap this replaced used, event for event.
///
/// An entry scheduled before `last` (no code path does; kept so that the order stays that of the
/// key whatever the caller does) waits in `early`, which is served first.
#[derive(Debug)]
pub struct EventQueue {
    /// The events due at `last`, in the order scheduled; those before `head` are already taken.
    due: Vec<Event>,
    head: usize,
    buckets: [Vec<Entry>; BUCKETS],
    /// Bit i: `buckets[i]` is not empty.
    occupied: u64,
    last: u64,
    early: Vec<Entry>,
    len: usize,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            due: Vec::new(),
            head: 0,
            buckets: std::array::from_fn(|_| Vec::new()),
            occupied: 0,
            last: 0,
            early: Vec::new(),
            len: 0,
        }
    }
}

/// The bucket of `time` relative to `last` (`time` > `last`): its highest bit that differs.
#[inline(always)]
fn bucket(time: u64, last: u64) -> usize {
    // `& 63` only tells the compiler what holds (the xor is not zero), so the index is not checked
    (63 - (time ^ last).leading_zeros() as usize) & (BUCKETS - 1)
}

/// The earliest time in `entries` (not empty).
#[inline(always)]
fn earliest(entries: &[Entry]) -> u64 {
    entries.iter().fold(u64::MAX, |m, e| m.min(e.time))
}

impl EventQueue {
    #[inline]
    pub fn schedule(&mut self, time: Time, event: Event) {
        self.len += 1;
        let time = time.0;
        if time > self.last {
            let i = bucket(time, self.last);
            self.buckets[i].push(Entry { time, event });
            self.occupied |= 1 << i;
        } else if time == self.last {
            self.due.push(event);
        } else {
            self.early.push(Entry { time, event });
        }
    }

    /// Time of the next event.
    pub fn peek_time(&self) -> Option<Time> {
        if !self.early.is_empty() {
            return Some(Time(earliest(&self.early)));
        }
        if self.head < self.due.len() {
            return Some(Time(self.last));
        }
        if self.occupied == 0 {
            return None;
        }
        Some(Time(earliest(&self.buckets[self.occupied.trailing_zeros() as usize])))
    }

    /// The next event.
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.pop_until(Time(u64::MAX))
    }

    /// The next event if it is due at or before `t`: one search for the earliest time where a peek
    /// and a pop would take two.
    #[inline]
    pub fn pop_until(&mut self, t: Time) -> Option<(Time, Event)> {
        if !self.early.is_empty() {
            return self.pop_early(t);
        }
        if self.head < self.due.len() {
            return self.pop_due(t);
        }
        if self.occupied == 0 {
            return None;
        }
        let b = self.occupied.trailing_zeros() as usize & (BUCKETS - 1);
        if let [e] = self.buckets[b][..] {
            // the common case: the bucket's only entry is the next event
            if e.time > t.0 {
                return None;
            }
            self.buckets[b].clear();
            self.occupied &= !(1 << b);
            self.last = e.time;
            self.len -= 1;
            return Some((Time(e.time), e.event));
        }
        self.spread(b, t)
    }

    /// The next event from `due` (not spent).
    #[inline]
    fn pop_due(&mut self, t: Time) -> Option<(Time, Event)> {
        if self.last > t.0 {
            return None;
        }
        let event = self.due[self.head];
        self.head += 1;
        self.len -= 1;
        if self.head == self.due.len() {
            // spent: `due` is empty whenever `head` is not inside it
            self.head = 0;
            self.due.clear();
            if self.due.capacity() > SPARE_CAPACITY.max(self.len) {
                self.due = Vec::new();
            }
        }
        Some((Time(self.last), event))
    }

    /// Takes the earliest entry of bucket `b` (the lowest non-empty one, with more than one entry)
    /// if it is due by `t`: its time becomes `last`, the other entries of that time go to `due`
    /// (empty now) in order, and the rest of the bucket spreads over the buckets below.
    #[inline]
    fn spread(&mut self, b: usize, t: Time) -> Option<(Time, Event)> {
        let (lower, upper) = self.buckets.split_at_mut(b);
        let from = &mut upper[0];
        let mut k = 0;
        for (i, e) in from.iter().enumerate().skip(1) {
            if e.time < from[k].time {
                k = i;
            }
        }
        let first = from[k];
        if first.time > t.0 {
            return None;
        }
        let last = first.time;
        self.last = last;
        self.len -= 1;
        self.occupied &= !(1 << b);
        // The bucket agrees with the new `last` from bit b up: each entry lands lower, or in `due`.
        // Those before `k` are all later than `last` (`k` is the first of the earliest).
        for e in &from[..k] {
            let i = bucket(e.time, last);
            lower[i].push(*e);
            self.occupied |= 1 << i;
        }
        for e in &from[k + 1..] {
            if e.time == last {
                self.due.push(e.event);
            } else {
                let i = bucket(e.time, last);
                lower[i].push(*e);
                self.occupied |= 1 << i;
            }
        }
        from.clear();
        // A bucket keeps its allocation for the next entries, but not one far larger than the
        // queue: with 10,000 flows the buckets' idle capacity would otherwise outgrow the entries.
        if from.capacity() > SPARE_CAPACITY.max(self.len) {
            *from = Vec::new();
        }
        Some((Time(last), first.event))
    }

    /// The earliest entry scheduled before `last` (the first of them among equal times).
    #[inline(never)]
    #[cold]
    fn pop_early(&mut self, t: Time) -> Option<(Time, Event)> {
        let time = earliest(&self.early);
        if time > t.0 {
            return None;
        }
        let k = self.early.iter().position(|e| e.time == time).expect("the earliest is there");
        let e = self.early.remove(k);
        self.len -= 1;
        Some((Time(e.time), e.event))
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
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
