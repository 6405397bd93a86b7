//! The TCP model: sender machine, receiver, RTT estimation and the SACK scoreboard, and the Linux
//! mechanisms the machine can switch on (PRR, Linux RTO, Linux delayed ACKs, RACK-TLP).

pub mod linux_rto;
pub mod ns2_sack1;
pub mod prr;
pub mod quickack;
pub mod rack;
pub mod receiver;
pub mod rtt;
pub mod rtt_ns2;
pub mod scoreboard;
pub mod sender;
pub mod startup;
pub mod tlp;

pub use receiver::Receiver;
pub use sender::{Sender, SenderStats};
