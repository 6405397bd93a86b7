//! The queue-discipline trait and the occupancy a discipline decides from.

use ccsim_cc::{Rng, Time};

/// Occupancy of an output queue at an arrival, not counting the packet being transmitted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueState {
    pub pkts: u64,
    pub bytes: u64,
    /// When the link went idle, if it is idle now (RED's idle-time correction needs it).
    pub idle_since: Option<Time>,
}

pub trait QueueDiscipline: Send {
    /// True if the arriving packet of `bytes` may join the queue.
    fn admit(&mut self, now: Time, bytes: u64, q: QueueState, rng: &mut Rng) -> bool;
    fn name(&self) -> &'static str;
    /// The queue's limit as (packets, bytes): what the cost estimate (`sim/cost.rs`) bounds a queue's
    /// memory with.
    fn limit(&self) -> (Option<u64>, Option<u64>);
    /// Called once by `Link::new` with the link's rate (RED's idle-time correction converts idle
    /// time into packet transmission slots with it, like ns-2's `$red link` / `ptc`).
    fn attach(&mut self, _rate_bps: u64) {}
    /// Early (probabilistic, AQM) drops so far; a subset of the refusals of `admit`.
    fn early_drops(&self) -> u64 {
        0
    }
    /// The discipline's average queue (RED's avg, in its queue unit), if it keeps one.
    fn average_queue(&self) -> Option<f64> {
        None
    }
}
