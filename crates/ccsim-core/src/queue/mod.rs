//! Queue disciplines behind one trait, dispatched statically through the `Discipline` enum (a
//! link calls its discipline on every arrival; a match inlines where a `Box<dyn>` call could not). A discipline decides admission when a packet arrives at a link's
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

use ccsim_cc::{Rng, Time};

use crate::queue::red::{Red, RedParams};
use crate::scenario::QueueSpec;

/// One of the built-in disciplines.
#[derive(Clone, Debug)]
pub enum Discipline {
    DropTail(DropTail),
    Red(Red),
}

macro_rules! dispatch {
    ($self:expr, $d:ident => $call:expr) => {
        match $self {
            Discipline::DropTail($d) => $call,
            Discipline::Red($d) => $call,
        }
    };
}

impl QueueDiscipline for Discipline {
    #[inline]
    fn admit(&mut self, now: Time, bytes: u64, q: QueueState, rng: &mut Rng) -> bool {
        dispatch!(self, d => d.admit(now, bytes, q, rng))
    }
    fn name(&self) -> &'static str {
        dispatch!(self, d => d.name())
    }
    fn limit(&self) -> (Option<u64>, Option<u64>) {
        dispatch!(self, d => d.limit())
    }
    fn attach(&mut self, rate_bps: u64) {
        dispatch!(self, d => d.attach(rate_bps))
    }
    #[inline]
    fn early_drops(&self) -> u64 {
        dispatch!(self, d => d.early_drops())
    }
    fn average_queue(&self) -> Option<f64> {
        dispatch!(self, d => d.average_queue())
    }
}

/// The discipline of `spec`; `Link::new` attaches it to the link's rate.
pub fn build(spec: &QueueSpec) -> Discipline {
    match *spec {
        QueueSpec::Droptail { limit } => Discipline::DropTail(DropTail { limit_pkts: limit.pkts(), limit_bytes: limit.bytes() }),
        QueueSpec::Red { limit, min_th, max_th, max_p, w_q, gentle, wait, mean_pkt_bytes } => {
            let (limit_pkts, limit_bytes) = (limit.pkts(), limit.bytes());
            Discipline::Red(Red::new(RedParams { limit_pkts, limit_bytes, min_th, max_th, max_p, w_q, gentle, wait, mean_pkt_bytes }))
        }
    }
}
