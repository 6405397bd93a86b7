//! Queue disciplines behind one trait. A discipline decides admission when a packet arrives at a link's
//! output queue, given the queue's occupancy; the link owns the packets and the FIFO service. Drop-tail
//! (`droptail.rs`) and RED (Floyd & Jacobson 1993, `red.rs`), which decides at enqueue time from the
//! average queue and the idle time. A dequeue-time AQM (CoDel) would need a second hook.
//!
//! The trait lives in `discipline.rs`, apart from this factory, so that a discipline's file depends
//! on the trait and the factory depends on the disciplines, never the other way round.

pub mod discipline;
pub mod droptail;
pub mod red;

pub use discipline::{QueueDiscipline, QueueState};
pub use droptail::DropTail;

use crate::queue::red::{Red, RedParams};
use crate::scenario::QueueSpec;

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
