//! The memory meter: while a run goes, the parts of its memory that grow with what the user asked
//! for (table values, web transfers, packets held by the links) are counted at every sample and web
//! arrival against the limit the front end sets (its budget, or what the machine has free). A run
//! whose limits were lifted, or one the estimate (`cost.rs`) misjudged, ends with
//! `SimError::Resources` before the machine runs out of memory, instead of being killed by the
//! kernel or aborted by a failed allocation. The sizes here are the estimate's too.

use std::mem::size_of;

use ccsim_cc::Time;

use crate::error::SimError;
use crate::histogram::Histogram;
use crate::link::Link;
use crate::packet::Packet;
use crate::sim::flow::Flow;

/// Columns of the per-flow summary table (`summary.rs`), one row per flow and per web transfer
/// (checked by a test).
pub const SUMMARY_COLUMNS: f64 = 34.0;
/// One flow (a web transfer): the `Flow`, its RTT histogram, and a rough figure for its name, its
/// route and the sender's and receiver's buffers.
pub const FLOW_BYTES: f64 = (size_of::<Flow>() + Histogram::HEAP_BYTES) as f64 + 512.0;
/// A packet a link holds: its in-transit entry and its waiting entry.
pub const HELD_PACKET_BYTES: f64 = (size_of::<(Time, Packet)>() + size_of::<(Time, u32)>()) as f64;

/// How much memory the run may take as it grows, as the front end sets it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MemoryLimit {
    pub bytes: f64,
    /// What the front end's copy of one table value will cost when the run ends, on top of the
    /// engine's own 8 bytes (counted now, so the run stops before that copy would not fit).
    pub front_end_bytes_per_cell: f64,
}

/// The limit, and the bytes the links held at the last count.
#[derive(Default)]
pub(crate) struct MemoryMeter {
    limit: Option<MemoryLimit>,
    held_bytes: f64,
}

impl MemoryMeter {
    pub fn set_limit(&mut self, limit: Option<MemoryLimit>) {
        self.limit = limit;
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
