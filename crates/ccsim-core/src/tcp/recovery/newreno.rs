//! NewReno fast recovery without SACK (RFC 6582 section 3.2; FreeBSD `tcp_do_segment` with
//! `newreno_after_fastretransmit`, Linux `tcp_fastretrans_alert` without SACK, ns-2
//! `Agent/TCP/Newreno`): loss detected by the duplicate-ACK threshold (RFC 5681 section 3.2), the
//! window inflated by one MSS per duplicate ACK and deflated by partial ACKs.
//!
//! * At the fast retransmit cwnd = ssthresh + DupThresh·MSS (the inflation is kept apart from cwnd,
//!   which the algorithm owns), +1 MSS per further duplicate ACK (step 4).
//! * A partial ACK retransmits the first unacknowledged segment, deflates the window by the amount
//!   acked and adds back one MSS if at least one MSS was acked (step 5), and restarts the RTO timer on
//!   every partial ACK as FreeBSD and Linux do (`partial_ack_rto = every`, section 4
//!   "slow-but-steady") or only on the first (`first`, "impatient", ns-2.35's default).
//! * The FlightSize reported to the algorithm is the span less the inflation, at most cwnd: without a
//!   scoreboard the span also holds what the receiver already has above the hole (one segment per
//!   duplicate ACK, which the inflation counts), and an inflated window can leave more outstanding
//!   after recovery than the deflated cwnd allows (Linux counts duplicate ACKs as SACKed segments,
//!   `tcp_add_reno_sack`, in `tcp_packets_in_flight`; `tcp_reno_ssthresh` and FreeBSD
//!   `newreno_cong_signal` halve cwnd). See docs/choices.md.

use crate::scenario::PartialAckRto;
use crate::tcp::rack::Rack;
use crate::tcp::recovery::outstanding::Outstanding;
use crate::tcp::recovery::part::{PartialAck, RecoveryRules, RecoverySend};
use crate::tcp::recovery::sacked::Sacked;

/// RFC 6582 recovery state of one connection.
#[derive(Clone, Debug)]
pub struct NewRenoRecovery {
    dupthresh: u32,
    mss: u64,
    /// The window inflation on top of cwnd during an episode.
    inflation: i64,
    partial_ack_seen: bool,
    restart_rto_on_every_partial_ack: bool,
}

impl NewRenoRecovery {
    pub fn new(dupthresh: u32, mss: u64, partial_ack_rto: PartialAckRto) -> NewRenoRecovery {
        NewRenoRecovery { dupthresh, mss, inflation: 0, partial_ack_seen: false, restart_rto_on_every_partial_ack: partial_ack_rto == PartialAckRto::Every }
    }
}

impl RecoveryRules for NewRenoRecovery {
    fn reads_sack(&self) -> bool {
        false // SACK not negotiated: the blocks are not read, the scoreboard stays empty
    }
    fn dupacks_say_lost(&self, _sacked: &Sacked, dupacks: u32, _head_end: u64) -> bool {
        dupacks >= self.dupthresh
    }
    fn loss_at_fast_retransmit(&self, _sacked: &Sacked, _rack: Option<&Rack>, flight: u64, cwnd: u64, _o: Outstanding) -> (u64, u64) {
        // After an inflated recovery the span can be several windows: FreeBSD and Linux halve cwnd.
        let flight = flight.min(cwnd);
        (flight, flight)
    }
    fn begin_episode(&mut self, _o: Outstanding) {
        self.partial_ack_seen = false;
    }
    fn fast_retransmitted(&mut self, _sacked: &mut Sacked, _seq_end: u64) {
        self.inflation = self.dupthresh as i64 * self.mss as i64; // cwnd = ssthresh + 3*SMSS
    }
    fn on_dupack_in_recovery(&mut self) {
        self.inflation += self.mss as i64; // RFC 6582 step 4
    }
    fn on_partial_ack(&mut self, newly_acked: u64) -> PartialAck {
        self.inflation -= newly_acked as i64;
        if newly_acked >= self.mss {
            self.inflation += self.mss as i64;
        }
        let restart_timer = self.restart_rto_on_every_partial_ack || !self.partial_ack_seen;
        self.partial_ack_seen = true;
        PartialAck::RetransmitHead { restart_timer }
    }
    fn end_episode(&mut self) {
        self.inflation = 0;
    }
    fn next_in_recovery(&mut self, _sacked: &Sacked, _rack: Option<&Rack>, _cwnd: u64, _o: Outstanding, _new_data_allowed: bool) -> RecoverySend {
        RecoverySend::ByWindow
    }
    fn inflation(&self) -> i64 {
        self.inflation
    }
    #[inline(always)]
    fn in_flight(&self, _sacked: &Sacked, _rack: Option<&Rack>, span: u64, cwnd: u64, in_recovery: bool, _o: Outstanding) -> u64 {
        if in_recovery {
            span.saturating_sub(self.inflation.max(0) as u64).min(cwnd)
        } else {
            span.min(cwnd)
        }
    }
    fn pipe_or(&self, _sacked: &Sacked, _rack: Option<&Rack>, without_sack: u64, _o: Outstanding) -> u64 {
        without_sack
    }
}
