//! Loss recovery of one connection: the rules of one mechanism, chosen once and dispatched
//! statically through the `Rules` enum (the shape of `queue/`: the trait in `part.rs`, the
//! mechanisms in their own files, a `dispatch!` macro; a match inlines where a `Box<dyn>` call could
//! not), beside the state and the two smaller parts those rules read:
//!
//! | part | chosen by | mirrors |
//! | --- | --- | --- |
//! | rules: `NewRenoRecovery` | `sack = false` | RFC 6582; FreeBSD `tcp_do_segment`/`cc_newreno.c`, Linux `tcp_fastretrans_alert` without SACK, ns-2 `Agent/TCP/Newreno` |
//! | rules: `Rfc6675Recovery` | `sack = true`, `sack_recovery = "rfc6675"` | RFC 6675; FreeBSD `tcp_sack.c`, Linux `tcp_fastretrans_alert`, `tcp_xmit_retransmit_queue` |
//! | rules: `Ns2Sack1Recovery` | `sack = true`, `sack_recovery = "ns2_sack1"` | ns-2.35 `Agent/TCP/Sack1` (tcp-sack1.cc) |
//! | loss detection: `LossDetection` | `loss_detection` (RACK-TLP with RFC 6675 only) | RFC 5681 3.2 / RFC 6675 IsLost; RFC 8985, Linux `tcp_recovery.c` |
//! | recovery window: `RecoveryWindow` | `recovery_window` (PRR with RFC 6675 only) | RFC 6675 section 5; RFC 6937, Linux `tcp_cwnd_reduction` |
//! | SACK state: `Sacked` | (empty without SACK) | RFC 6675 section 3; FreeBSD `tcp_sack.c`, Linux's SACK tags |
//!
//! The detection and window parts sit beside the rules rather than inside the RFC 6675 rules (the
//! factory gives RACK-TLP and PRR to RFC 6675 only), as Linux keeps its SACK, RACK and PRR state in
//! `tcp_sock` beside the CA state machine: the questions the machine asks on every ACK and every
//! segment (what is SACKed, does RACK run, does PRR run) are then one match, not two.

pub mod detection;
pub mod newreno;
pub mod ns2_sack1;
pub mod outstanding;
pub mod part;
pub mod rfc6675;
pub mod sacked;
pub mod window;

use std::time::Duration;

use ccsim_cc::Time;

pub use outstanding::Outstanding;
pub use part::{Detected, LossClock, PartialAck, ProbeInputs, RecoveryRules, RecoverySend};

use crate::scenario::{LossDetection as DetectionKnob, RecoveryWindow as WindowKnob, SackRecovery, TcpConfig};
use crate::tcp::rack::Rack;
use detection::{LossDetection, RackTlp};
use newreno::NewRenoRecovery;
use ns2_sack1::Ns2Sack1Recovery;
use rfc6675::Rfc6675Recovery;
use sacked::Sacked;
use window::RecoveryWindow;

/// The rules of the connection's loss-recovery mechanism.
#[derive(Clone, Debug)]
pub enum Rules {
    NewReno(NewRenoRecovery),
    Rfc6675(Rfc6675Recovery),
    Ns2Sack1(Ns2Sack1Recovery),
}

macro_rules! dispatch {
    ($self:expr, $r:ident => $call:expr) => {
        match $self {
            Rules::NewReno($r) => $call,
            Rules::Rfc6675($r) => $call,
            Rules::Ns2Sack1($r) => $call,
        }
    };
}

impl RecoveryRules for Rules {
    #[inline(always)]
    fn reads_sack(&self) -> bool {
        dispatch!(self, r => r.reads_sack())
    }
    fn on_ack_arrival(&mut self, partial: bool) {
        dispatch!(self, r => r.on_ack_arrival(partial))
    }
    fn dupacks_say_lost(&self, sacked: &Sacked, dupacks: u32, head_end: u64) -> bool {
        dispatch!(self, r => r.dupacks_say_lost(sacked, dupacks, head_end))
    }
    fn loss_at_fast_retransmit(&self, sacked: &Sacked, rack: Option<&Rack>, flight: u64, cwnd: u64, o: Outstanding) -> (u64, u64) {
        dispatch!(self, r => r.loss_at_fast_retransmit(sacked, rack, flight, cwnd, o))
    }
    fn begin_episode(&mut self, o: Outstanding) {
        dispatch!(self, r => r.begin_episode(o))
    }
    fn fast_retransmitted(&mut self, sacked: &mut Sacked, seq_end: u64) {
        dispatch!(self, r => r.fast_retransmitted(sacked, seq_end))
    }
    fn on_dupack_in_recovery(&mut self) {
        dispatch!(self, r => r.on_dupack_in_recovery())
    }
    fn on_partial_ack(&mut self, newly_acked: u64) -> PartialAck {
        dispatch!(self, r => r.on_partial_ack(newly_acked))
    }
    fn end_episode(&mut self) {
        dispatch!(self, r => r.end_episode())
    }
    fn next_in_recovery(&mut self, sacked: &Sacked, rack: Option<&Rack>, cwnd: u64, o: Outstanding, new_data_allowed: bool) -> RecoverySend {
        dispatch!(self, r => r.next_in_recovery(sacked, rack, cwnd, o, new_data_allowed))
    }
    fn sent_in_recovery(&mut self, sacked: &mut Sacked, seq: u64, len: u64, retransmission: bool) {
        dispatch!(self, r => r.sent_in_recovery(sacked, seq, len, retransmission))
    }
    fn inflation(&self) -> i64 {
        dispatch!(self, r => r.inflation())
    }
    #[inline(always)]
    fn in_flight(&self, sacked: &Sacked, rack: Option<&Rack>, span: u64, cwnd: u64, in_recovery: bool, o: Outstanding) -> u64 {
        dispatch!(self, r => r.in_flight(sacked, rack, span, cwnd, in_recovery, o))
    }
    fn pipe_or(&self, sacked: &Sacked, rack: Option<&Rack>, without_sack: u64, o: Outstanding) -> u64 {
        dispatch!(self, r => r.pipe_or(sacked, rack, without_sack, o))
    }
}

/// The loss recovery of one connection: the SACK state, the loss detection, the recovery window
/// and the mechanism's rules. What the sender asks and tells it, step by step of the machine.
#[derive(Clone, Debug)]
pub struct Recovery {
    sacked: Sacked,
    detection: LossDetection,
    window: RecoveryWindow,
    rules: Rules,
    /// IsLost()'s boundary before the ACK's blocks (PRR's `newly_lost` under the SACK rule); MAX
    /// after an ACK without blocks, which cannot raise the boundary (a cumulative ACK only drops
    /// ranges from the bottom).
    lost_bound_before: u64,
}

/// The recovery `cfg` asks for. RACK-TLP and PRR apply to RFC 6675 recovery only (ns-2 had neither).
pub fn build(cfg: &TcpConfig) -> Recovery {
    let (dupthresh, mss) = (cfg.dupack_threshold, cfg.mss_bytes);
    let rfc6675 = cfg.sack && cfg.sack_recovery == SackRecovery::Rfc6675;
    let rules = match (cfg.sack, cfg.sack_recovery) {
        (false, _) => Rules::NewReno(NewRenoRecovery::new(dupthresh, mss, cfg.partial_ack_rto)),
        (true, SackRecovery::Rfc6675) => Rules::Rfc6675(Rfc6675Recovery),
        (true, SackRecovery::Ns2Sack1) => Rules::Ns2Sack1(Ns2Sack1Recovery::new(dupthresh, mss)),
    };
    let detection = match cfg.loss_detection {
        DetectionKnob::RackTlp if rfc6675 => LossDetection::RackTlp(Box::new(RackTlp::new(mss, Duration::from_nanos(cfg.min_rto_ns)))),
        _ => LossDetection::DupThreshold,
    };
    let window = match cfg.recovery_window {
        WindowKnob::Prr if rfc6675 => RecoveryWindow::Prr(None),
        _ => RecoveryWindow::Rfc6675,
    };
    Recovery { sacked: Sacked::new(dupthresh, mss), detection, window, rules, lost_bound_before: u64::MAX }
}

impl Recovery {
    /// RACK, when it runs.
    #[inline(always)]
    fn rack(&self) -> Option<&Rack> {
        match &self.detection {
            LossDetection::RackTlp(rt) => Some(&rt.rack),
            LossDetection::DupThreshold => None,
        }
    }

    #[inline(always)]
    fn rack_tlp(&mut self) -> Option<&mut RackTlp> {
        match &mut self.detection {
            LossDetection::RackTlp(rt) => Some(rt),
            LossDetection::DupThreshold => None,
        }
    }

    // --- What the receiver reported (RFC 2018 SACK; nothing without SACK).

    /// An ACK arrived during an episode (`partial`: new data acknowledged below `recover`).
    pub fn on_ack_arrival(&mut self, partial: bool) {
        self.rules.on_ack_arrival(partial);
    }

    /// Takes in an ACK's SACK blocks (called only when it carries some); returns the bytes newly
    /// SACKed. RACK collects the newly covered ranges to learn from them after the RTT sample.
    pub fn take_sack_blocks(&mut self, blocks: &[(u64, u64)], ackno: u64, snd_max: u64) -> u64 {
        if !self.rules.reads_sack() {
            return 0;
        }
        match &mut self.detection {
            LossDetection::DupThreshold => {
                if self.window.wants_newly_lost() {
                    self.lost_bound_before = self.sacked.lost_bound();
                }
                self.sacked.take_blocks(blocks, ackno, snd_max, None)
            }
            LossDetection::RackTlp(rt) => {
                debug_assert!(rt.newly_sacked.is_empty(), "learnt and emptied at the previous ACK");
                self.sacked.take_blocks(blocks, ackno, snd_max, Some(&mut rt.newly_sacked))
            }
        }
    }

    /// snd_una moved up: the SACKed ranges below it go.
    #[inline(always)]
    pub fn advance(&mut self, snd_una: u64) {
        self.sacked.advance(snd_una);
    }

    /// Bytes SACKed above snd_una.
    #[inline(always)]
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked.total()
    }

    /// If `seq` lies in a SACKed range, where it ends (go-back-N after a timeout skips it).
    #[inline(always)]
    pub fn sacked_until(&self, seq: u64) -> Option<u64> {
        self.sacked.sacked_until(seq)
    }

    // --- Loss detection.

    /// The ACK's deliveries, after its RTT sample (RACK's reference segment, the tail loss probe's
    /// episode). Returns true when a retransmitted loss probe repaired a loss (reduce once).
    #[inline(always)]
    pub fn learn_deliveries(&mut self, now: Time, ackno: u64, newly_acked: u64, newly_sacked: u64, echo: Time, min_rtt: Option<Duration>) -> bool {
        match self.rack_tlp() {
            Some(rt) => rt.learn(now, ackno, newly_acked, newly_sacked, echo, min_rtt),
            None => false,
        }
    }

    /// A duplicate ACK outside recovery: whether it starts recovery by the duplicate-ACK rule (RACK
    /// decides by time instead, in `detect`).
    pub fn dupacks_say_lost(&self, dupacks: u32, head_end: u64) -> bool {
        match self.detection {
            LossDetection::DupThreshold => self.rules.dupacks_say_lost(&self.sacked, dupacks, head_end),
            LossDetection::RackTlp(_) => false,
        }
    }

    /// Loss detection at the end of the ACK (RACK's time rule; the SACK rule's new marks for PRR).
    /// `clock` is asked only when RACK runs.
    #[inline(always)]
    pub fn detect(&mut self, clock: impl FnOnce() -> LossClock) -> Detected {
        let dupthresh = self.sacked.dupthresh();
        match &mut self.detection {
            LossDetection::RackTlp(rt) => {
                let (newly_lost, start_recovery) = rt.detect(clock(), dupthresh);
                Detected { newly_lost, start_recovery }
            }
            LossDetection::DupThreshold => {
                if self.lost_bound_before == u64::MAX {
                    return Detected::default();
                }
                let newly_lost = self.sacked.lost_bound() > self.lost_bound_before;
                self.lost_bound_before = u64::MAX;
                Detected { newly_lost, start_recovery: false }
            }
        }
    }

    // --- A recovery episode.

    /// The amounts a fast retransmit reports to the algorithm: (bytes in flight, pipe).
    pub fn loss_at_fast_retransmit(&self, flight: u64, cwnd: u64, o: Outstanding) -> (u64, u64) {
        self.rules.loss_at_fast_retransmit(&self.sacked, self.rack(), flight, cwnd, o)
    }

    /// An episode starts: cwnd was `prior_cwnd`, the algorithm set `ssthresh` (Linux
    /// `tcp_init_cwnd_reduction`; the probe's episode ends).
    pub fn begin_episode(&mut self, prior_cwnd: u64, ssthresh: u64, o: Outstanding) {
        self.rules.begin_episode(o);
        self.window.begin(prior_cwnd, ssthresh);
        if let Some(rt) = self.rack_tlp() {
            rt.tlp.reset();
        }
    }

    /// The segment the fast retransmit resends: the head, or the first one RACK marked lost.
    pub fn first_retransmission(&self, snd_una: u64) -> u64 {
        self.rack().and_then(Rack::first_lost).unwrap_or(snd_una)
    }

    /// The fast retransmission up to `seq_end` left; returns whether the window sends more at once
    /// (PRR waits for the next ACK's own allowance).
    pub fn fast_retransmitted(&mut self, seq_end: u64) -> bool {
        self.rules.fast_retransmitted(&mut self.sacked, seq_end);
        self.window.sends_after_fast_retransmit()
    }

    /// A duplicate ACK during the episode.
    pub fn on_dupack_in_recovery(&mut self) {
        self.rules.on_dupack_in_recovery();
    }

    /// A partial ACK during the episode.
    pub fn on_partial_ack(&mut self, newly_acked: u64) -> PartialAck {
        self.rules.on_partial_ack(newly_acked)
    }

    /// The full ACK ended the episode.
    pub fn end_episode(&mut self) {
        self.rules.end_episode();
        self.window.end();
    }

    /// The retransmission timer expired: the episode, the SACK state and RACK's marks end (the
    /// scoreboard is cleared as FreeBSD does, RFC 2018 section 8); going back starts at `snd_una`.
    pub fn on_timeout(&mut self, snd_una: u64) {
        self.end_episode();
        if let Some(rt) = self.rack_tlp() {
            rt.rack.on_rto();
            rt.tlp.reset();
        }
        self.sacked.clear_for_timeout(snd_una);
    }

    // --- Sending and the window.

    /// What to send next during the episode, given cwnd and whether new data may go.
    pub fn next_in_recovery(&mut self, cwnd: u64, o: Outstanding, new_data_allowed: bool) -> RecoverySend {
        let rack = match &self.detection {
            LossDetection::RackTlp(rt) => Some(&rt.rack),
            LossDetection::DupThreshold => None,
        };
        self.rules.next_in_recovery(&self.sacked, rack, cwnd, o, new_data_allowed)
    }

    /// A segment chosen by `next_in_recovery` left.
    pub fn sent_in_recovery(&mut self, seq: u64, len: u64, retransmission: bool) {
        self.rules.sent_in_recovery(&mut self.sacked, seq, len, retransmission);
    }

    /// Any segment left (RACK records its send time; PRR counts `prr_out`).
    #[inline(always)]
    pub fn on_segment_sent(&mut self, now: Time, seq: u64, len: u64) {
        if let LossDetection::RackTlp(rt) = &mut self.detection {
            rt.rack.on_send(now, seq, len);
        }
        self.window.on_sent(len);
    }

    /// The window added to cwnd during the episode (RFC 6582 inflation; 0 with SACK).
    pub fn inflation(&self) -> i64 {
        self.rules.inflation()
    }

    /// Bytes in flight as reported to the algorithm, from the sequence span and cwnd.
    #[inline(always)]
    pub fn in_flight(&self, span: u64, cwnd: u64, in_recovery: bool, o: Outstanding) -> u64 {
        self.rules.in_flight(&self.sacked, self.rack(), span, cwnd, in_recovery, o)
    }

    /// RFC 6675 pipe with SACK; `without_sack` otherwise.
    pub fn pipe_or(&self, without_sack: u64, o: Outstanding) -> u64 {
        self.rules.pipe_or(&self.sacked, self.rack(), without_sack, o)
    }

    /// The window after an ACK during the episode (PRR, RFC 6937), or None to keep cwnd.
    pub fn window_after_ack(&mut self, delivered: u64, una_advanced: bool, newly_lost: bool, o: Outstanding) -> Option<u64> {
        let rack_lost = self.rack().map(Rack::lost_bytes);
        let (sacked, mss) = (&self.sacked, self.sacked.mss());
        self.window.after_ack(delivered, || sacked.pipe(o, rack_lost), una_advanced, newly_lost, mss)
    }

    // --- The timers RACK-TLP adds to the retransmission timer.

    /// Whether a tail loss probe runs (the sender skips arming it otherwise).
    #[inline(always)]
    pub fn probes(&self) -> bool {
        matches!(self.detection, LossDetection::RackTlp(_))
    }

    /// Arms or disarms the probe (Linux `tcp_schedule_loss_probe`).
    pub fn schedule_probe(&mut self, p: ProbeInputs) {
        let nothing_sacked = self.sacked.is_empty();
        if let Some(rt) = self.rack_tlp() {
            rt.schedule(p, nothing_sacked);
        }
    }

    /// When the probe and the reordering timer fire, if armed.
    #[inline(always)]
    pub fn timer_deadlines(&self) -> (Option<Time>, Option<Time>) {
        match &self.detection {
            LossDetection::RackTlp(rt) => (rt.tlp.deadline(), rt.rack.reo_deadline()),
            LossDetection::DupThreshold => (None, None),
        }
    }

    /// The probe timer fired: whether a probe may go now.
    pub fn fire_probe(&mut self) -> bool {
        self.rack_tlp().is_some_and(|rt| rt.tlp.fire())
    }

    /// The probe left: snd_nxt after it, and whether it was a retransmission.
    pub fn probe_sent(&mut self, snd_nxt: u64, retransmission: bool) {
        if let Some(rt) = self.rack_tlp() {
            rt.tlp.probe_sent(snd_nxt, retransmission);
        }
    }

    /// The reordering timer fired: whether it marked segments lost.
    pub fn reorder_timeout(&mut self, clock: LossClock) -> bool {
        let dupthresh = self.sacked.dupthresh();
        self.rack_tlp().is_some_and(|rt| rt.reorder_timeout(clock, dupthresh))
    }

    /// Segments marked lost by RACK over the connection (0 without it).
    pub fn marked_lost_total(&self) -> u64 {
        self.rack().map_or(0, Rack::marked_lost_total)
    }

    /// The mechanism's rules (for tests of their own state).
    #[cfg(test)]
    pub fn rules(&self) -> &Rules {
        &self.rules
    }
}
