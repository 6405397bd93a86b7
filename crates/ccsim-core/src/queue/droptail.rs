//! Tail drop at a limit in packets and/or bytes.

use ccsim_cc::{Rng, Time};

use crate::queue::discipline::{QueueDiscipline, QueueState};

/// Tail drop at a limit in packets and/or bytes (dummynet, Linux `pfifo`/`bfifo`, ns-3 `TxQueue`).
#[derive(Clone, Debug)]
pub struct DropTail {
    pub limit_pkts: Option<u64>,
    pub limit_bytes: Option<u64>,
}

impl DropTail {
    /// Admission from the occupancy alone (what `admit` decides; the link's fast path calls this):
    /// `Err(false)`, a tail drop (never an early one), when the packet does not fit.
    #[inline]
    pub fn admits(&self, pkts: u64, queued_bytes: u64, bytes: u64) -> Result<(), bool> {
        let fits = self.limit_pkts.map_or(true, |l| pkts < l) && self.limit_bytes.map_or(true, |l| queued_bytes + bytes <= l);
        if fits { Ok(()) } else { Err(false) }
    }
}

impl QueueDiscipline for DropTail {
    #[inline]
    fn admit(&mut self, _now: Time, bytes: u64, q: QueueState, _rng: &mut Rng) -> bool {
        self.admits(q.pkts, q.bytes, bytes).is_ok()
    }
    fn name(&self) -> &'static str {
        "droptail"
    }
    fn limit(&self) -> (Option<u64>, Option<u64>) {
        (self.limit_pkts, self.limit_bytes)
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
