//! Queue disciplines behind one trait. A discipline decides admission when a packet arrives at a link's
//! output queue, given the queue's occupancy; the link owns the packets and the FIFO service. Drop-tail
//! and RED (Floyd & Jacobson 1993, `red.rs`), which decides at enqueue time from the average queue and
//! the idle time. A dequeue-time AQM (CoDel) would need a second hook.

use ccsim_cc::{Rng, Time};

use crate::red::{Red, RedParams};
use crate::scenario::QueueSpec;

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

/// Tail drop at a limit in packets and/or bytes (dummynet, Linux `pfifo`/`bfifo`, ns-3 `TxQueue`).
#[derive(Clone, Debug)]
pub struct DropTail {
    pub limit_pkts: Option<u64>,
    pub limit_bytes: Option<u64>,
}

impl QueueDiscipline for DropTail {
    fn admit(&mut self, _now: Time, bytes: u64, q: QueueState, _rng: &mut Rng) -> bool {
        self.limit_pkts.map_or(true, |l| q.pkts < l) && self.limit_bytes.map_or(true, |l| q.bytes + bytes <= l)
    }
    fn name(&self) -> &'static str {
        "droptail"
    }
}

/// The discipline of `spec`; `Link::new` attaches it to the link's rate.
pub fn build(spec: &QueueSpec) -> Box<dyn QueueDiscipline> {
    match *spec {
        QueueSpec::Droptail { limit } => Box::new(DropTail { limit_pkts: limit.pkts(), limit_bytes: limit.bytes() }),
        QueueSpec::Red { limit, min_th, max_th, max_p, w_q, gentle, wait, mean_pkt_bytes } => {
            let (limit_pkts, limit_bytes) = (limit.pkts(), limit.bytes());
            Box::new(Red::new(RedParams { limit_pkts, limit_bytes, min_th, max_th, max_p, w_q, gentle, wait, mean_pkt_bytes }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn droptail_drops_at_packet_and_byte_limits() {
        let mut rng = Rng::new(1, 1);
        let mut q = DropTail { limit_pkts: Some(2), limit_bytes: None };
        let s = |pkts, bytes| QueueState { pkts, bytes, idle_since: None };
        assert!(q.admit(Time::ZERO, 1500, s(1, 1500), &mut rng));
        assert!(!q.admit(Time::ZERO, 1500, s(2, 3000), &mut rng));
        let mut q = DropTail { limit_pkts: None, limit_bytes: Some(3000) };
        assert!(q.admit(Time::ZERO, 1500, s(1, 1500), &mut rng));
        assert!(!q.admit(Time::ZERO, 1500, s(2, 3000), &mut rng));
    }
}
