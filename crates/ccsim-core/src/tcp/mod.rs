//! The TCP model: sender machine, receiver, RTT estimation and the SACK scoreboard.

pub mod receiver;
pub mod rtt;
pub mod scoreboard;
pub mod sender;
pub mod startup;

pub use receiver::Receiver;
pub use sender::{Sender, SenderStats};
