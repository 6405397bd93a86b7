//! The contract of a loss-recovery mechanism's rules, and the small types the sender and the
//! recovery parts exchange.
//!
//! Kept apart from `mod.rs` (the enum and its factory) so that a mechanism's file depends on the
//! trait and the factory on the mechanisms, never the other way round (as `queue/discipline.rs`).

use std::time::Duration;

use ccsim_cc::Time;

use crate::tcp::rack::Rack;
use crate::tcp::recovery::outstanding::Outstanding;
use crate::tcp::recovery::sacked::Sacked;

/// What a recovery part lets the sender send next during a recovery episode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoverySend {
    /// The segment at this sequence number (a retransmission below snd_max, else new data).
    Segment(u64),
    /// The recovery window is full.
    CwndLimited,
    /// Nothing to send (no hole to repair, no new data the application or receiver allows).
    Nothing,
    /// The part leaves sending to the ordinary window rule (NewReno: cwnd plus its inflation).
    ByWindow,
}

/// A partial ACK (new data acknowledged below `recover`) during recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PartialAck {
    /// Nothing for the sender to do beyond the ordinary ACK processing (SACK recoveries).
    Nothing,
    /// RFC 6582 step 5: retransmit the first unacknowledged segment; restart the timer or not.
    RetransmitHead { restart_timer: bool },
}

/// What loss detection found after an ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Detected {
    /// Segments were newly marked lost by this ACK (PRR's `newly_lost`).
    pub newly_lost: bool,
    /// A loss is proven and recovery should start if it has not (RACK: a segment is marked lost).
    pub start_recovery: bool,
}

/// The clock and RTT estimates RACK's time rule reads from the machine.
#[derive(Clone, Copy, Debug)]
pub struct LossClock {
    pub now: Time,
    /// Recovery after a fast retransmit or a timeout is under way (Linux `icsk_ca_state >= TCP_CA_Recovery`).
    pub in_recovery: bool,
    pub min_rtt: Option<Duration>,
    pub srtt: Option<Duration>,
}

/// What the tail loss probe needs from the machine to arm itself.
#[derive(Clone, Copy, Debug)]
pub struct ProbeInputs {
    pub now: Time,
    pub srtt: Option<Duration>,
    pub segments_out: u64,
    /// Until the retransmission timer would fire, counted from now.
    pub rto_in: Duration,
    /// The connection is in the open state (no recovery after a fast retransmit or a timeout).
    pub ca_open: bool,
}

/// The rules of one loss-recovery mechanism (NewReno without SACK, RFC 6675, ns-2 Sack1): when the
/// duplicate ACKs say the head is lost, what a fast retransmit reports, what to send during an
/// episode and how much is in flight. The SACK scoreboard and RACK's marks they read are the
/// connection's (`Recovery` holds them); the defaults are what a mechanism without that step does.
pub trait RecoveryRules {
    /// Whether the connection reads SACK blocks (RFC 2018 negotiated).
    fn reads_sack(&self) -> bool;
    /// An ACK arrived during an episode; `partial` when it acknowledges new data below `recover`
    /// (ns-2 Sack1 counts ACKs in its `pipe_`). Called first, before anything else changes.
    fn on_ack_arrival(&mut self, _partial: bool) {}
    /// A duplicate ACK outside recovery: whether `dupacks` of them (or the scoreboard) say the
    /// first unacknowledged segment, ending at `head_end`, is lost (RFC 5681 3.2, RFC 6675 IsLost).
    fn dupacks_say_lost(&self, sacked: &Sacked, dupacks: u32, head_end: u64) -> bool;
    /// What a fast retransmit reports to the algorithm: (bytes in flight, pipe), from the
    /// FlightSize less limited transmit's segments and cwnd.
    fn loss_at_fast_retransmit(&self, sacked: &Sacked, rack: Option<&Rack>, flight: u64, cwnd: u64, o: Outstanding) -> (u64, u64);
    /// An episode starts with `o` outstanding.
    fn begin_episode(&mut self, _o: Outstanding) {}
    /// The fast retransmission up to `seq_end` left.
    fn fast_retransmitted(&mut self, sacked: &mut Sacked, seq_end: u64);
    /// A duplicate ACK during the episode (RFC 6582 step 4: NewReno inflates its window).
    fn on_dupack_in_recovery(&mut self) {}
    /// A partial ACK during the episode acknowledged `newly_acked` bytes.
    fn on_partial_ack(&mut self, _newly_acked: u64) -> PartialAck {
        PartialAck::Nothing
    }
    /// The episode ended (the full ACK, or a timeout).
    fn end_episode(&mut self) {}
    /// What to send next during the episode, given cwnd and whether new data may go.
    fn next_in_recovery(&mut self, sacked: &Sacked, rack: Option<&Rack>, cwnd: u64, o: Outstanding, new_data_allowed: bool) -> RecoverySend;
    /// A segment chosen by `next_in_recovery` left (a retransmission if below the old snd_max).
    fn sent_in_recovery(&mut self, _sacked: &mut Sacked, _seq: u64, _len: u64, _retransmission: bool) {}
    /// The window added to cwnd during the episode (RFC 6582 inflation; 0 for SACK recoveries).
    fn inflation(&self) -> i64 {
        0
    }
    /// Bytes in flight as reported to the algorithm, from the sequence span and cwnd.
    fn in_flight(&self, sacked: &Sacked, rack: Option<&Rack>, span: u64, cwnd: u64, in_recovery: bool, o: Outstanding) -> u64;
    /// RFC 6675 pipe with SACK; `without_sack` otherwise.
    fn pipe_or(&self, sacked: &Sacked, rack: Option<&Rack>, without_sack: u64, o: Outstanding) -> u64;
}
