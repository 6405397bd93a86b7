//! The event queue: a binary heap ordered by (time, insertion number), so events at the same instant
//! run in the order they were scheduled (FIFO tie-breaking, as nexosim's priority queue). This is what
//! makes a run a pure function of (scenario, seed).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

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

#[derive(Debug, PartialEq, Eq)]
struct Entry {
    time: Time,
    seq: u64,
    event: Event,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse so the earliest (then first-scheduled) pops first.
        other.time.cmp(&self.time).then_with(|| other.seq.cmp(&self.seq))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
}

impl EventQueue {
    pub fn schedule(&mut self, time: Time, event: Event) {
        self.heap.push(Entry { time, seq: self.next_seq, event });
        self.next_seq += 1;
    }

    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
    }

    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.heap.pop().map(|e| (e.time, e.event))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
}
