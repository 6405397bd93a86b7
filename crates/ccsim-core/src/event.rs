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
    /// A paced TCP sender's pacing clock allows its next segment (`tcp/pacing.rs`).
    PaceTimer(u32),
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

/// Width of a wheel slot: 2^10 ns (1.024 µs), about a tenth of a 1500-byte packet's time at 1 Gbit/s.
const SLOT_BITS: u32 = 10;
/// Slots on the wheel: two periods (`PERIOD_BITS`), the current slot's and the next, 2.1 to 4.2 ms ahead.
const SLOTS: usize = 4096;
const SLOT_MASK: usize = SLOTS - 1;
/// Bitmap words of the wheel's occupied slots.
const WORDS: usize = SLOTS / 64;
/// Entries an emptied wheel slot may keep room for (4096 slots: at most 1 MiB of spare room).
const SLOT_SPARE: usize = 16;

/// A period: 2^11 wheel slots (2.1 ms), half the wheel. The wheel holds the current period and the
/// next one; the coarse wheel holds the periods after those, one slot each.
const PERIOD_BITS: u32 = 11;
/// Slots on the coarse wheel: the 1024 periods (2.15 s) after the wheel's two.
const COARSE: usize = 1024;
const COARSE_MASK: usize = COARSE - 1;
const COARSE_WORDS: usize = COARSE / 64;
/// Entries an emptied coarse slot may keep room for (1024 slots: at most 1 MiB of spare room).
const COARSE_SPARE: usize = 64;

/// The event queue: a hierarchical timing wheel for the near events (Varghese and Lauck, "Hashed
/// and hierarchical timing wheels", SOSP 1987; a calendar queue with a fixed year, Brown, CACM
/// 1988) over a radix heap for the far ones ([`RadixHeap`]: the events more than about two seconds
/// ahead, such as backed-off retransmission timers and late flow starts).
///
/// The wheel has 4096 slots of 1.024 µs, two periods of 2048 slots (2.1 ms). An event of the
/// current slot's (`cur`, the slot of the last event taken out) period or the next one is pushed
/// onto its slot (`slots[number % 4096]`, number = its time >> 10) and marked in a two-level bitmap.
/// One of the 1024 periods after those goes onto the coarse wheel, a slot per period
/// (`coarse[period % 1024]`, marked in a bitmap of its own): delayed-ACK and retransmission timers,
/// the next sample. A later one goes to the radix heap. When the current slot enters a new period
/// (`change_period`), the coarse slot of the period after it comes onto the wheel, an entry at a
/// time, and the radix heap's entries of the period that joins the coarse wheel's reach come onto
/// it, so that a far event is placed three times at most instead of being spread down the radix
/// heap's buckets. The current slot's events are in `run`, sorted by time. Taking the next event:
/// from `run` if it has any; else the next marked slot after `cur` (two bit scans): its only entry
/// is the event, or its entries are sorted into `run`; with the wheel empty, the earliest event of
/// the first marked coarse slot, or of the radix heap, makes its slot the current one. Most events
/// are scheduled a few µs to a few ms ahead (a packet's transmission, the next hop, the host's send
/// jitter) and are placed once, where a heap would move them around (docs/performance.md, "What
/// makes the engine fast").
///
/// Ties are served first in, first out without an insertion number, the order of the key (time,
/// insertion number) of the binary heap this replaced, event for event. Where an entry goes
/// depends only on its period and the current one, which never decreases: the entries of one time
/// scheduled while its period was beyond the coarse wheel are in the radix heap, those scheduled
/// after that while it was beyond the wheel are on the coarse wheel, the later ones on the wheel.
/// * `change_period` runs as soon as the current slot enters a new period, before the event that
///   moved it is handed out (so before anything can be scheduled at the new period): it moves the
///   coarse slots that the wheel now reaches onto the wheel, then the radix heap's entries that the
///   wheel or the coarse wheel now reach (the radix heap holds no period a coarse slot holds);
/// * every line (a slot, a coarse slot) holds its entries in the order they were scheduled or
///   moved in: `schedule` pushes the newest of all, a coarse slot is read front to back, and the
///   radix heap hands its entries over in key order;
/// * the sort into `run` is stable, and an entry scheduled or moved into the current slot goes
///   after every entry of `run` at or before its time.
///
/// An entry scheduled before `last` (no code path does; kept so that the order stays that of the
/// key whatever the caller does) waits in `early`, which is served first.
#[derive(Debug)]
pub struct EventQueue {
    slots: Box<[Vec<Entry>; SLOTS]>,
    /// Bit i of word w: slot 64 w + i is not empty.
    words: [u64; WORDS],
    /// Bit w: `words[w]` is not zero.
    summary: u64,
    /// The current slot's entries, sorted by time (ties in the order scheduled); those before
    /// `head` are already taken (`head` is 0 when `run` is empty).
    run: Vec<Entry>,
    head: usize,
    /// Slot number of `last`.
    cur: u64,
    last: u64,
    /// The periods after the wheel's two, a slot each.
    coarse: Box<[Vec<Entry>; COARSE]>,
    /// Bit i of word w: coarse slot 64 w + i is not empty.
    coarse_words: [u64; COARSE_WORDS],
    /// Bit w: `coarse_words[w]` is not zero.
    coarse_summary: u64,
    /// Period of `cur`.
    period: u64,
    /// The first slot past the wheel's reach (the start of the period after next).
    fine_end: u64,
    /// The first slot of the next period: `change_period` runs when `cur` gets there.
    next_period: u64,
    far: RadixHeap,
    /// Earliest time in `far`; `u64::MAX` when it is empty.
    far_min: u64,
    early: Vec<Entry>,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            slots: Box::new(std::array::from_fn(|_| Vec::new())),
            words: [0; WORDS],
            summary: 0,
            run: Vec::new(),
            head: 0,
            cur: 0,
            last: 0,
            coarse: Box::new(std::array::from_fn(|_| Vec::new())),
            coarse_words: [0; COARSE_WORDS],
            coarse_summary: 0,
            period: 0,
            fine_end: 2 << PERIOD_BITS,
            next_period: 1 << PERIOD_BITS,
            far: RadixHeap::default(),
            far_min: u64::MAX,
            early: Vec::new(),
        }
    }
}

impl EventQueue {
    #[inline]
    pub fn schedule(&mut self, time: Time, event: Event) {
        let time = time.0;
        let n = time >> SLOT_BITS;
        // cur < n < fine_end: on the wheel, after the current slot (the common case)
        if n > self.cur && n < self.fine_end {
            self.push_slot(n, Entry { time, event });
        } else {
            self.schedule_other(time, event);
        }
    }

    /// An entry for the current slot, a later period, or the past.
    #[inline(never)]
    fn schedule_other(&mut self, time: u64, event: Event) {
        if time < self.last {
            self.early.push(Entry { time, event });
        } else if time >> SLOT_BITS == self.cur {
            self.insert_run(Entry { time, event });
        } else {
            self.schedule_later(time, event);
        }
    }

    /// An entry of a period after the wheel's two: onto the coarse wheel if it reaches it, else
    /// into the radix heap.
    #[inline(always)]
    fn schedule_later(&mut self, time: u64, event: Event) {
        let p = time >> (SLOT_BITS + PERIOD_BITS);
        if p - (self.period + 2) < COARSE as u64 {
            let c = p as usize & COARSE_MASK;
            self.coarse[c].push(Entry { time, event });
            self.coarse_words[c / 64] |= 1 << (c % 64);
            self.coarse_summary |= 1 << (c / 64);
        } else {
            self.far.schedule(Time(time), event);
            self.far_min = self.far_min.min(time);
        }
    }

    #[inline(always)]
    fn push_slot(&mut self, n: u64, entry: Entry) {
        let p = n as usize & SLOT_MASK;
        self.slots[p].push(entry);
        self.words[(p / 64) & (WORDS - 1)] |= 1 << (p % 64);
        self.summary |= 1 << (p / 64);
    }

    /// After every entry of `run` at or before its time.
    #[inline(always)]
    fn insert_run(&mut self, entry: Entry) {
        match self.run.last() {
            Some(e) if e.time > entry.time => self.insert_run_inside(entry),
            _ => self.run.push(entry),
        }
    }

    #[inline(never)]
    fn insert_run_inside(&mut self, entry: Entry) {
        let at = self.head + self.run[self.head..].partition_point(|e| e.time <= entry.time);
        self.run.insert(at, entry);
    }

    /// Position of the first marked slot after the current one, going round (the wheel holds one).
    #[inline(always)]
    fn next_marked(&self) -> usize {
        let p = self.cur as usize & SLOT_MASK;
        let w = p / 64;
        let here = self.words[w & (WORDS - 1)] & (u64::MAX << (p % 64));
        if here != 0 {
            return w * 64 + here.trailing_zeros() as usize;
        }
        let above = self.summary & (u64::MAX << w) & !(1 << w);
        let w = if above != 0 { above.trailing_zeros() } else { self.summary.trailing_zeros() } as usize & (WORDS - 1);
        w * 64 + self.words[w].trailing_zeros() as usize
    }

    /// Slot `p` is empty now.
    #[inline(always)]
    fn unmark(&mut self, p: usize) {
        let w = (p / 64) & (WORDS - 1);
        self.words[w] &= !(1 << (p % 64));
        if self.words[w] == 0 {
            self.summary &= !(1 << w);
        }
    }

    /// The current slot is now `n`: in a new period, the later entries within reach of the wheel
    /// and of the coarse wheel come onto them.
    #[inline(always)]
    fn set_current(&mut self, n: u64) {
        self.cur = n;
        if n >= self.next_period {
            self.change_period();
        }
    }

    /// `cur` is in a new period: the coarse slots of the periods the wheel now reaches (the one
    /// after the new period, and any the move skipped over) come onto it, then the radix heap's
    /// entries that the wheel or the coarse wheel now reach (see [`EventQueue`] for the order).
    #[inline(never)]
    fn change_period(&mut self) {
        let (old, new) = (self.period, self.cur >> PERIOD_BITS);
        self.period = new;
        self.next_period = (new + 1).checked_shl(PERIOD_BITS).filter(|&s| s >> PERIOD_BITS == new + 1).unwrap_or(u64::MAX);
        self.fine_end = (new + 2).checked_shl(PERIOD_BITS).filter(|&s| s >> PERIOD_BITS == new + 2).unwrap_or(u64::MAX);
        // The coarse wheel held the periods old + 2 ..= old + 1 + COARSE; the wheel now reaches
        // those up to new + 1.
        let last = (new + 1).min(old + 1 + COARSE as u64);
        let mut p = old + 2;
        while p <= last && self.coarse_summary != 0 {
            let c = p as usize & COARSE_MASK;
            if self.coarse_words[c / 64] & (1 << (c % 64)) != 0 {
                self.coarse_to_wheel(c);
            }
            p += 1;
        }
        // The radix heap held the periods from old + 2 + COARSE on; those before
        // new + 2 + COARSE are within reach now.
        let reach = new + 2 + COARSE as u64;
        if self.far_min >> (SLOT_BITS + PERIOD_BITS) < reach {
            let before = reach.checked_shl(SLOT_BITS + PERIOD_BITS).filter(|&t| t >> (SLOT_BITS + PERIOD_BITS) == reach).map_or(u64::MAX, |t| t - 1);
            while let Some((time, event)) = self.far.pop_until(Time(before)) {
                self.place(Entry { time: time.0, event });
            }
            self.far_min = self.far.peek_time().map_or(u64::MAX, |t| t.0);
        }
    }

    /// Coarse slot `c`'s entries, in their order, onto the wheel (or into `run`).
    fn coarse_to_wheel(&mut self, c: usize) {
        let mut entries = std::mem::take(&mut self.coarse[c]);
        for &e in &entries {
            let n = e.time >> SLOT_BITS;
            if n == self.cur {
                self.insert_run(e);
            } else {
                self.push_slot(n, e);
            }
        }
        entries.clear();
        if entries.capacity() <= COARSE_SPARE {
            self.coarse[c] = entries;
        }
        self.coarse_words[c / 64] &= !(1 << (c % 64));
        if self.coarse_words[c / 64] == 0 {
            self.coarse_summary &= !(1 << (c / 64));
        }
    }

    /// An entry from the radix heap (not before `cur`), where its period says.
    #[inline(always)]
    fn place(&mut self, e: Entry) {
        let n = e.time >> SLOT_BITS;
        if n == self.cur {
            self.insert_run(e);
        } else if n < self.fine_end {
            self.push_slot(n, e);
        } else {
            self.schedule_later(e.time, e.event);
        }
    }

    /// Position of the first marked coarse slot from the period after the wheel's two, going round
    /// (the coarse wheel holds one).
    fn next_coarse(&self) -> usize {
        let p = (self.period + 2) as usize & COARSE_MASK;
        let w = p / 64;
        let here = self.coarse_words[w] & (u64::MAX << (p % 64));
        if here != 0 {
            return w * 64 + here.trailing_zeros() as usize;
        }
        let above = self.coarse_summary & (u64::MAX << w) & !(1 << w);
        let w = if above != 0 { above.trailing_zeros() } else { self.coarse_summary.trailing_zeros() } as usize & (COARSE_WORDS - 1);
        w * 64 + self.coarse_words[w].trailing_zeros() as usize
    }

    /// With the wheel empty: the earliest time of the coarse wheel, or of the radix heap.
    fn later_min(&self) -> Option<u64> {
        if self.coarse_summary != 0 {
            return Some(earliest(&self.coarse[self.next_coarse()]));
        }
        (!self.far.is_empty()).then_some(self.far_min)
    }

    /// Time of the next event.
    pub fn peek_time(&self) -> Option<Time> {
        if !self.early.is_empty() {
            return Some(Time(earliest(&self.early)));
        }
        if self.head < self.run.len() {
            return Some(Time(self.run[self.head].time));
        }
        if self.summary != 0 {
            return Some(Time(earliest(&self.slots[self.next_marked()])));
        }
        self.later_min().map(Time)
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
        if self.head < self.run.len() {
            return self.pop_run(t);
        }
        if self.summary == 0 {
            // the wheel is empty: it moves on to the slot of the earliest later entry (in a later
            // period, so `change_period` brings that entry into `run`)
            let next = self.later_min()?;
            if next > t.0 {
                return None;
            }
            self.set_current(next >> SLOT_BITS);
            return self.pop_run(t);
        }
        let p = self.next_marked() & SLOT_MASK;
        let n = self.cur + ((p.wrapping_sub(self.cur as usize)) & SLOT_MASK) as u64;
        if let [e] = self.slots[p][..] {
            // the common case: the slot's only entry is the next event
            if e.time > t.0 {
                return None;
            }
            self.slots[p].clear();
            self.unmark(p);
            self.last = e.time;
            self.set_current(n);
            return Some((Time(e.time), e.event));
        }
        self.take_slot(p, n, t)
    }

    /// Slot `p` (number `n`), with more than one entry, becomes the current one if its earliest
    /// entry is due by `t`.
    #[inline(never)]
    fn take_slot(&mut self, p: usize, n: u64, t: Time) -> Option<(Time, Event)> {
        let slot = &mut self.slots[p];
        // stable: equal times keep the order they were scheduled in
        slot.sort_by_key(|e| e.time);
        if slot[0].time > t.0 {
            return None;
        }
        std::mem::swap(slot, &mut self.run);
        // The slot has `run`'s room now (a slot's own grows only with entries, which go to `run`
        // when there are more than one, so this is the only place a slot can get room to spare)
        if slot.capacity() > SLOT_SPARE {
            *slot = Vec::new();
        }
        self.unmark(p);
        self.set_current(n);
        self.pop_run(t)
    }

    /// The next event from `run` (not empty).
    #[inline]
    fn pop_run(&mut self, t: Time) -> Option<(Time, Event)> {
        let e = self.run[self.head];
        if e.time > t.0 {
            return None;
        }
        self.head += 1;
        self.last = e.time;
        if self.head == self.run.len() {
            self.head = 0;
            self.run.clear();
            if self.run.capacity() > SPARE_CAPACITY {
                self.run = Vec::new();
            }
        }
        Some((Time(e.time), e.event))
    }

    /// The earliest entry scheduled before `last` (the first of them among equal times).
    #[inline(never)]
    #[cold]
    fn pop_early(&mut self, t: Time) -> Option<(Time, Event)> {
        let e = take_earliest(&mut self.early, t)?;
        Some((Time(e.time), e.event))
    }

    /// Events waiting (counted, not kept: a count kept up to date cost an update per schedule and
    /// per pop).
    pub fn len(&self) -> usize {
        let lines = self.slots.iter().chain(self.coarse.iter()).map(Vec::len).sum::<usize>();
        lines + (self.run.len() - self.head) + self.far.len() + self.early.len()
    }

    pub fn is_empty(&self) -> bool {
        self.summary == 0 && self.coarse_summary == 0 && self.head == self.run.len() && self.far.is_empty() && self.early.is_empty()
    }
}

/// The far events of [`EventQueue`]: a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, "Faster
/// algorithms for the shortest path problem", JACM 1990) on the event time: a monotone priority queue, which a simulation's clock is
/// (no event is scheduled before the one being handled). The events due at the time last taken
/// out (`last`) wait in `due`, oldest first; bucket i holds the entries whose time first differs
/// from `last` at bit i, so every entry of a bucket is later than every entry of the buckets below
/// it. Scheduling is a bit scan and a push; when `due` runs out, the lowest non-empty bucket's
/// earliest time becomes the new `last` and that bucket is spread over `due` and the buckets
/// below. Each entry moves down a few times in its life instead of paying a heap's log n
/// comparisons on every pop (docs/performance.md, "What makes the engine fast").
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
/// An entry scheduled before `last` (the wheel never does; kept so that the order stays that of the
/// key whatever the caller does) waits in `early`, which is served first.
#[derive(Debug)]
struct RadixHeap {
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

impl Default for RadixHeap {
    fn default() -> Self {
        RadixHeap {
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

/// Removes and returns the earliest of `entries` (the first of them among equal times: they are
/// in the order scheduled) if it is due by `t`. For the lines of entries scheduled in the past.
fn take_earliest(entries: &mut Vec<Entry>, t: Time) -> Option<Entry> {
    let time = earliest(entries);
    if time > t.0 {
        return None;
    }
    let k = entries.iter().position(|e| e.time == time).expect("the earliest is there");
    Some(entries.remove(k))
}

impl RadixHeap {
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
        let e = take_earliest(&mut self.early, t)?;
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

    /// The two structures behind the same calls, so that each is checked against the reference.
    trait Queue: Default {
        fn schedule(&mut self, time: Time, event: Event);
        fn pop_until(&mut self, t: Time) -> Option<(Time, Event)>;
        fn peek_time(&self) -> Option<Time>;
        fn len(&self) -> usize;
    }
    macro_rules! queue {
        ($q:ty) => {
            impl Queue for $q {
                fn schedule(&mut self, time: Time, event: Event) {
                    <$q>::schedule(self, time, event)
                }
                fn pop_until(&mut self, t: Time) -> Option<(Time, Event)> {
                    <$q>::pop_until(self, t)
                }
                fn peek_time(&self) -> Option<Time> {
                    <$q>::peek_time(self)
                }
                fn len(&self) -> usize {
                    <$q>::len(self)
                }
            }
        };
    }
    queue!(EventQueue);
    queue!(RadixHeap);

    /// Drives `Q` like a simulation (each new time is the last popped time plus a delay) against
    /// std's binary heap on (time, insertion number), comparing every pop, peek and length. The
    /// delays mix ties with the current time, a few ns, about a wheel slot, beyond the wheel's
    /// two periods (2.1 to 4.2 ms) on a 1 ms grid so that later events tie with each other and
    /// with events scheduled onto the wheel later, beyond the coarse wheel's reach (2.15 s) on a
    /// 100 ms grid, and now and then a time before the current one.
    fn same_as_the_reference<Q: Queue>(seed: u64) {
        use std::cmp::Reverse;
        let mut rng = ccsim_cc::Rng::new(seed, 3);
        let (mut q, mut heap) = (Q::default(), std::collections::BinaryHeap::new());
        let (mut now, mut seq, mut popped) = (0u64, 0u32, 0);
        for _ in 0..40_000 {
            let r = rng.uniform();
            if r < 0.52 {
                let delay = match rng.next_u64() % 10 {
                    0 => 0,
                    1 => rng.next_u64() % 4,
                    2 | 3 => rng.next_u64() % 3_000,
                    4 => 1_024 * (rng.next_u64() % 4) + rng.next_u64() % 2,
                    5 => rng.next_u64() % 5_000_000,
                    6 => (now / 1_000_000 + 1 + rng.next_u64() % 30) * 1_000_000 - now,
                    7 => 4_194_304 + rng.next_u64() % 2_048 * 1_024,
                    // beyond the coarse wheel's reach (2.15 s) now and then, on a 100 ms grid so
                    // that entries of the radix heap, the coarse wheel and the wheel tie
                    8 => (now / 100_000_000 + 1 + rng.next_u64() % 40) * 100_000_000 - now,
                    _ => rng.next_u64() % 3_000_000_000,
                };
                let time = if rng.uniform() < 0.002 { now.saturating_sub(1 + rng.next_u64() % 5_000) } else { now + delay };
                q.schedule(Time(time), Event::FlowStart(seq));
                heap.push(Reverse((time, seq)));
                seq += 1;
            } else if r < 0.6 {
                // a refused pop_until changes nothing
                let next = heap.peek().map(|Reverse((t, _))| *t);
                assert_eq!(q.peek_time(), next.map(Time));
                if let Some(before) = next.and_then(|t| t.checked_sub(1 + rng.next_u64() % 2_000)) {
                    assert_eq!(q.pop_until(Time(before)), None);
                }
            } else {
                let want = heap.pop().map(|Reverse((t, s))| (Time(t), Event::FlowStart(s)));
                assert_eq!(q.pop_until(Time(u64::MAX)), want, "pop {popped}");
                if let Some((t, _)) = want {
                    now = now.max(t.0);
                    popped += 1;
                }
            }
            assert_eq!(q.len(), heap.len());
        }
        while let Some(Reverse((t, s))) = heap.pop() {
            assert_eq!(q.pop_until(Time(t)), Some((Time(t), Event::FlowStart(s))));
        }
        assert_eq!((q.len(), q.pop_until(Time(u64::MAX))), (0, None));
    }

    #[test]
    fn wheel_and_radix_heap_pop_in_key_order_near_far_tied_and_early() {
        for seed in 0..6 {
            same_as_the_reference::<EventQueue>(seed);
            same_as_the_reference::<RadixHeap>(seed);
        }
    }

    #[test]
    fn a_far_event_goes_before_a_later_scheduled_one_at_the_same_time() {
        let mut q = EventQueue::default();
        let far = Time(10_000_000); // slot 9765, beyond the wheel's reach from 0
        q.schedule(far, Event::RtoTimer(1));
        // the first instant from which slot 9765 is within reach: slot 9765 - 4095
        let edge = Time((9765 - (SLOTS as u64 - 1)) << SLOT_BITS);
        q.schedule(Time(3_000_000), Event::Sample);
        assert_eq!(q.pop(), Some((Time(3_000_000), Event::Sample)));
        q.schedule(edge, Event::Sample); // on the wheel
        assert_eq!(q.pop(), Some((edge, Event::Sample)));
        // the far event is on the wheel now; one scheduled for the same time comes after it
        q.schedule(far, Event::RtoTimer(2));
        q.schedule(Time(9_999_999), Event::DelayedAck(3));
        assert_eq!(q.pop(), Some((Time(9_999_999), Event::DelayedAck(3))));
        q.schedule(far, Event::RtoTimer(4)); // into the current slot
        let rest: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(rest, [1, 2, 4].map(|f| (far, Event::RtoTimer(f))));
    }

    #[test]
    fn times_at_the_end_of_the_clock_and_jumps_over_both_wheels_keep_key_order() {
        // The last periods of the 64-bit clock (no reach computed past it overflows), and an empty
        // wheel jumping straight to the coarse wheel or to the radix heap.
        use std::cmp::Reverse;
        let (mut q, mut heap) = (EventQueue::default(), std::collections::BinaryHeap::new());
        let times = [5, 3_000_000_000, 7_000_000, 3_000_000_000, u64::MAX, u64::MAX - 1, u64::MAX - (1 << 30), u64::MAX, 7_000_000, 1 << 40];
        for (seq, &t) in times.iter().enumerate() {
            q.schedule(Time(t), Event::FlowStart(seq as u32));
            heap.push(Reverse((t, seq as u32)));
        }
        while let Some(Reverse((t, s))) = heap.pop() {
            assert_eq!(q.peek_time(), Some(Time(t)));
            assert_eq!(q.pop(), Some((Time(t), Event::FlowStart(s))));
            if t == 7_000_000 && s == 2 {
                // scheduled at the time just popped, and a tie with a far entry
                q.schedule(Time(3_000_000_000), Event::FlowStart(100));
                heap.push(Reverse((3_000_000_000, 100)));
            }
        }
        assert!(q.is_empty() && q.pop().is_none());
    }

    #[test]
    fn a_crowded_slot_is_served_in_order_and_its_room_given_back() {
        let mut q = EventQueue::default();
        // 10,000 flows starting together, their timers together a second later, and a slot of
        // distinct times: the shapes of a large run's start
        for f in 0..10_000 {
            q.schedule(Time(0), Event::FlowStart(f));
            q.schedule(Time(1_000_000_000), Event::RtoTimer(f));
            q.schedule(Time(2_000 + 1_000 - u64::from(f % 1_000)), Event::HostDepart(f));
        }
        for f in 0..10_000 {
            assert_eq!(q.pop(), Some((Time(0), Event::FlowStart(f))));
        }
        let mut last = Time(0);
        for _ in 0..10_000 {
            let (t, e) = q.pop().unwrap();
            assert!(t >= last && matches!(e, Event::HostDepart(_)));
            last = t;
        }
        for f in 0..10_000 {
            assert_eq!(q.pop(), Some((Time(1_000_000_000), Event::RtoTimer(f))));
        }
        assert!(q.is_empty());
        // emptied lines keep a bounded spare
        assert!(q.run.capacity() <= SPARE_CAPACITY);
        assert!(q.slots.iter().all(|s| s.capacity() <= SLOT_SPARE));
        assert!(q.coarse.iter().all(|s| s.capacity() <= COARSE_SPARE));
        assert!(q.far.buckets.iter().all(|b| b.capacity() <= SPARE_CAPACITY) && q.far.due.capacity() <= SPARE_CAPACITY);
    }
}
