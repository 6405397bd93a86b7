//! The TCP model: the sender machine and its parts (loss recovery with its loss detection and
//! window, RTT estimation with its RTO estimator, rounds, pacing, delivery-rate samples), the
//! receiver, the SACK scoreboard, and the Linux mechanisms the parts hold (PRR, Linux RTO, Linux
//! delayed ACKs, RACK-TLP). docs/internals.md, "The TCP machine's parts", maps each to the Linux,
//! FreeBSD and ns-2 function it mirrors.

pub mod linux_rto;
pub mod pacing;
pub mod prr;
pub mod quickack;
pub mod rack;
pub mod rate_sample;
pub mod receiver;
pub mod recovery;
pub mod round;
pub mod rtt;
pub mod rtt_freebsd;
pub mod rtt_ns2;
pub mod scoreboard;
pub mod sender;
pub mod startup;
pub mod tlp;

pub use receiver::Receiver;
pub use sender::{Sender, SenderStats};
