//! # ccsim-core: the packet-level engine
//!
//! Integer-nanosecond time, an event queue with FIFO tie-breaking, seeded random streams per
//! component, unidirectional links with queue disciplines and random loss, topology builders, the TCP
//! machine (NewReno recovery, SACK, RFC 6298 timers), and measurement. Algorithms plug in through
//! `ccsim_cc::CongestionControl`; nothing here is global, so a run is a pure function of the scenario
//! and the seed.

pub mod error;
pub mod event;
#[doc(hidden)]
pub mod fixtures;
pub mod histogram;
pub mod link;
pub mod loss_schedule;
pub mod packet;
pub mod queue;
pub mod random_loss;
pub mod ranges;
pub mod scenario;
pub mod sim;
pub mod stream;
pub mod table;
pub mod tcp;
pub mod topology;

pub use error::SimError;
pub use scenario::Scenario;
pub use sim::{jain_index, RunOutput, Simulation};
pub use table::{Column, Table};
pub use ccsim_cc::Time;
