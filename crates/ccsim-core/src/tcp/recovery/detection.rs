//! The loss-detection part of RFC 6675 recovery: the duplicate-ACK threshold with IsLost(), or
//! RACK-TLP (RFC 8985; `tcp::rack`, `tcp::tlp`), chosen by `tcp.loss_detection`.

use std::time::Duration;

use ccsim_cc::Time;

use crate::tcp::rack::{DetectContext, Rack};
use crate::tcp::recovery::part::{LossClock, ProbeInputs};
use crate::tcp::tlp::{ProbeAck, ProbeContext, Tlp};

/// How an RFC 6675 recovery finds lost segments.
#[derive(Clone, Debug)]
pub enum LossDetection {
    /// RFC 5681 section 3.2's DupThresh duplicate ACKs, or RFC 6675 IsLost() on the scoreboard.
    DupThreshold,
    /// RACK marks segments lost by time and the tail loss probe precedes the RTO. Boxed: a flow
    /// whose profile does not turn it on carries a pointer, not its state (docs/performance.md,
    /// "Memory per flow").
    RackTlp(Box<RackTlp>),
}

/// RACK and the tail loss probe of one connection.
#[derive(Clone, Debug)]
pub struct RackTlp {
    pub rack: Rack,
    pub tlp: Tlp,
    /// The minimum RTO (the probe timeout's allowance for a delayed ACK, RFC 8985 WCDelAckT).
    min_rto: Duration,
    /// The SACKed ranges an ACK newly covers, in the order RACK must learn them (reused).
    pub newly_sacked: Vec<(u64, u64)>,
}

impl RackTlp {
    pub fn new(mss: u64, min_rto: Duration) -> RackTlp {
        RackTlp { rack: Rack::new(mss), tlp: Tlp::default(), min_rto, newly_sacked: Vec::new() }
    }

    /// RACK learns what the ACK delivered, cumulatively first, then the new SACK blocks in order,
    /// and the tail loss probe whether its episode ended (Linux `tcp_clean_rtx_queue`,
    /// `tcp_sacktag_one`, `tcp_process_tlp_ack`). True when a retransmitted probe repaired a loss.
    pub fn learn(&mut self, now: Time, ackno: u64, newly_acked: u64, newly_sacked: u64, echo: Time, min_rtt: Option<Duration>) -> bool {
        if newly_acked > 0 {
            self.rack.on_cum_ack(now, ackno, echo, min_rtt);
        }
        self.newly_sacked.sort_unstable();
        for &(a, b) in &self.newly_sacked {
            self.rack.on_sacked(now, a, b, min_rtt);
        }
        self.newly_sacked.clear();
        self.tlp.on_ack(ackno, newly_acked > 0, newly_sacked > 0) == ProbeAck::LossRepaired
    }

    /// Arms the probe while the connection is open with nothing SACKed or marked lost.
    pub fn schedule(&mut self, p: ProbeInputs, nothing_sacked: bool) {
        let cx = ProbeContext {
            now: p.now,
            srtt: p.srtt,
            segments_out: p.segments_out,
            min_rto: self.min_rto,
            rto_in: p.rto_in,
            open: p.ca_open && nothing_sacked && self.rack.lost_bytes() == 0,
        };
        self.tlp.schedule(&cx);
    }

    /// RACK's loss detection after an ACK (Linux `tcp_identify_packet_loss`); the loss is proven
    /// once a segment is marked (`tcp_time_to_recover`). Returns (newly marked, proven).
    pub fn detect(&mut self, clock: LossClock, dupthresh: u32) -> (bool, bool) {
        let marked = self.rack.on_ack_detect(&context(clock, dupthresh)) > 0;
        (marked, self.rack.lost_bytes() > 0)
    }

    /// The reordering timer fired (Linux `tcp_rack_reo_timeout`): whether it marked segments lost.
    pub fn reorder_timeout(&mut self, clock: LossClock, dupthresh: u32) -> bool {
        self.rack.on_reo_timeout(&context(clock, dupthresh)) > 0
    }
}

/// RACK's view of the machine, with the duplicate-ACK threshold (Linux `tp->reordering`).
fn context(c: LossClock, dupthresh: u32) -> DetectContext {
    DetectContext { now: c.now, in_recovery: c.in_recovery, dupthresh, min_rtt: c.min_rtt, srtt: c.srtt }
}
