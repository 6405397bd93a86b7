//! The meter: while a run goes, the parts of its memory that grow with what the user asked
//! for (table values, web transfers, packets held by the links) are counted at every sample and web
//! arrival against the limit the front end sets (its budget, or what the machine has free). A run
//! whose limits were lifted, or one the estimate (`cost.rs`) misjudged, ends with
//! `SimError::Resources` before the machine runs out of memory, instead of being killed by the
//! kernel or aborted by a failed allocation. The sizes here are the estimate's too.
//!
//! The events the run processes are counted against a ceiling too (`EventLimit`): CPU is the other
//! thing a legal scenario can exhaust (a 1000 Gbit/s CBR source into a 10 Mbit/s link costs 10^8
//! events per simulated second and holds almost no memory). Events, not seconds of CPU: a run stops
//! at the same point on every machine, so the error is reproducible.

use std::mem::size_of;

use ccsim_cc::Time;

use crate::error::SimError;
use crate::link::Link;
use crate::sim::flow::Flow;
use crate::tcp::Sender;

/// Columns of the per-flow summary table (`summary.rs`), one row per flow and per web transfer
/// (checked by a test).
pub const SUMMARY_COLUMNS: f64 = 37.0;
/// One flow (a web transfer): the `Flow` and its boxed sender, and what they allocate (the
/// controller, the scoreboard and receiver's buffers, the host stage, the RTT histogram's buckets,
/// the name and route). The allocations are set from what `examples/memory_per_flow.rs` measures
/// for a NewReno flow, erring high (docs/performance.md, "Memory per flow": about 6.7 kB of heap per
/// flow in all, with its two idle access links and its share of the results).
/// A web transfer drops its sender once it is over, so this overstates a finished one.
pub const FLOW_BYTES: f64 = (size_of::<Flow>() + size_of::<Sender>()) as f64 + FLOW_HEAP_BYTES;
/// The allocations of one flow, as measured (see `FLOW_BYTES`).
const FLOW_HEAP_BYTES: f64 = 5_120.0;
/// A packet a link holds: its in-transit entry, its waiting entry, the slot of its SACK blocks.
pub const HELD_PACKET_BYTES: f64 = Link::HELD_PACKET_BYTES as f64;

/// How much memory the run may take as it grows, as the front end sets it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MemoryLimit {
    pub bytes: f64,
    /// What the front end's copy of one table value will cost when the run ends, on top of the
    /// engine's own 8 bytes (counted now, so the run stops before that copy would not fit).
    pub front_end_bytes_per_cell: f64,
}

/// How many events the run may process, as the front end sets it (its budget), and the resolved
/// field that drives most of them (named by the error, so the user knows what to change).
#[derive(Clone, Debug, PartialEq)]
pub struct EventLimit {
    pub events: u64,
    pub field: String,
}

/// The limits, the events counted down to the ceiling, and the bytes the links held at the last count.
pub(crate) struct MemoryMeter {
    limit: Option<MemoryLimit>,
    event_limit: Option<EventLimit>,
    /// The events the run may still process: the ceiling minus those processed (`u64::MAX` minus
    /// them without a ceiling), or 0 once the run has stopped. The event loop tests and decrements
    /// this one number per event (`take_event`); a handler that fails sets it to 0 (`stop`), so the
    /// loop needs no test of its own for failures.
    events_left: u64,
    /// `events_left` plus the events processed (the ceiling, or `u64::MAX`; less after `stop`).
    events_base: u64,
    held_bytes: f64,
}

impl Default for MemoryMeter {
    fn default() -> Self {
        MemoryMeter { limit: None, event_limit: None, events_left: u64::MAX, events_base: u64::MAX, held_bytes: 0.0 }
    }
}

impl MemoryMeter {
    pub fn set_limit(&mut self, limit: Option<MemoryLimit>) {
        self.limit = limit;
    }

    /// Sets (or clears) the ceiling; the events already processed count against it. (A run that
    /// failed stays failed: `Simulation::run_until` tests that first.)
    pub fn set_event_limit(&mut self, limit: Option<EventLimit>) {
        let done = self.events_processed();
        self.events_base = limit.as_ref().map_or(u64::MAX, |l| l.events).max(done);
        self.events_left = self.events_base - done;
        self.event_limit = limit;
    }

    /// The events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.events_base - self.events_left
    }

    /// Counts one more event; false when there is no room for it (over the ceiling, or stopped).
    #[inline(always)]
    pub fn take_event(&mut self) -> bool {
        if self.events_left == 0 {
            return false;
        }
        self.events_left -= 1;
        true
    }

    /// No further event is taken (a handler failed); the count stays what it was.
    pub fn stop(&mut self) {
        self.events_base = self.events_processed();
        self.events_left = 0;
    }

    /// The error for an event over the ceiling (which counts it, as processed), at `now`.
    #[cold]
    #[inline(never)]
    pub fn over_event_limit(&mut self, now: Time) -> SimError {
        self.events_base += 1;
        let limit = self.event_limit.as_ref().expect("a finite event count comes with its limit");
        SimError::Budget {
            field: limit.field.clone(),
            reason: format!(
                "the run reached its limit of {} events at {:.3} s of simulated time and was stopped",
                limit.events,
                now.as_secs_f64()
            ),
        }
    }

    /// The run holds `cells` table values and `flows` flows at `now`; `links`, when given, are
    /// counted afresh (a pass over the links, done at samples), else as last counted.
    pub fn check(&mut self, now: Time, cells: usize, flows: usize, links: Option<&[Link]>) -> Result<(), SimError> {
        let Some(limit) = self.limit else { return Ok(()) };
        if let Some(links) = links {
            let held: usize = links.iter().map(|l| l.packets_held()).sum();
            self.held_bytes = held as f64 * HELD_PACKET_BYTES;
        }
        let values = cells as f64 + flows as f64 * SUMMARY_COLUMNS; // each flow's summary row, at the end
        let used = values * (8.0 + limit.front_end_bytes_per_cell) + flows as f64 * FLOW_BYTES + self.held_bytes;
        if used <= limit.bytes {
            return Ok(());
        }
        Err(SimError::Resources(format!(
            "the run would need more than the {:.0} MB it may use (its budget or the machine's free memory) at {:.3} s: \
             {cells} table values and {flows} flows (web transfers included) so far",
            limit.bytes / 1e6,
            now.as_secs_f64(),
        )))
    }
}
