//! The TCP model: sender machine, receiver, RTT estimation and the SACK scoreboard.

pub mod ns2_sack1;
pub mod receiver;
pub mod rtt;
pub mod rtt_ns2;
pub mod scoreboard;
pub mod sender;
pub mod startup;

pub use receiver::Receiver;
pub use sender::{Sender, SenderStats};
