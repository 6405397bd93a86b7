//! Conservative SACK-based loss recovery (RFC 6675; FreeBSD `tcp_sack.c` with `tcp_do_segment`,
//! Linux `tcp_fastretrans_alert` with `tcp_xmit_retransmit_queue`): the scoreboard, IsLost(), pipe
//! and NextSeg() rules 1-3, cwnd = ssthresh at entry. Its loss detection (duplicate-ACK threshold
//! or RACK-TLP, `detection.rs`) and its window (RFC 6675 or PRR, `window.rs`) are parts of their own,
//! held beside it by `Recovery`.
//!
//! With RACK, recovery retransmits the segments RACK marked, in order, then new data (no NextSeg()
//! rule 3), with pipe = FlightSize - SACKed - marked lost and not retransmitted (Linux
//! `tcp_packets_in_flight`, `tcp_xmit_retransmit_queue`).

use crate::tcp::rack::Rack;
use crate::tcp::recovery::outstanding::Outstanding;
use crate::tcp::recovery::part::{RecoveryRules, RecoverySend};
use crate::tcp::recovery::sacked::Sacked;

/// RFC 6675's rules (the state is the scoreboard and the detection's marks, held by `Recovery`).
#[derive(Clone, Debug, Default)]
pub struct Rfc6675Recovery;

impl RecoveryRules for Rfc6675Recovery {
    fn reads_sack(&self) -> bool {
        true
    }
    fn dupacks_say_lost(&self, sacked: &Sacked, dupacks: u32, head_end: u64) -> bool {
        dupacks >= sacked.dupthresh() || sacked.lost_bound() >= head_end
    }
    fn loss_at_fast_retransmit(&self, sacked: &Sacked, rack: Option<&Rack>, flight: u64, _cwnd: u64, o: Outstanding) -> (u64, u64) {
        (flight, sacked.pipe_with_head_lost(o, rack.map(Rack::lost_bytes)))
    }
    fn fast_retransmitted(&mut self, sacked: &mut Sacked, seq_end: u64) {
        sacked.set_high_rxt(seq_end);
    }
    fn next_in_recovery(&mut self, sacked: &Sacked, rack: Option<&Rack>, cwnd: u64, o: Outstanding, new_data_allowed: bool) -> RecoverySend {
        let mss = sacked.mss();
        if sacked.pipe(o, rack.map(Rack::lost_bytes)) + mss > cwnd.max(mss) {
            return RecoverySend::CwndLimited;
        }
        let next = match rack {
            // Linux tcp_xmit_retransmit_queue: the segments RACK marked lost, in order; then new data.
            Some(rack) => rack.first_lost().or(new_data_allowed.then_some(o.snd_max)),
            None => sacked.next_seg(o, new_data_allowed),
        };
        next.map_or(RecoverySend::Nothing, RecoverySend::Segment)
    }
    fn sent_in_recovery(&mut self, sacked: &mut Sacked, seq: u64, len: u64, retransmission: bool) {
        if retransmission {
            sacked.set_high_rxt(sacked.high_rxt().max(seq + len));
        }
    }
    #[inline(always)]
    fn in_flight(&self, sacked: &Sacked, rack: Option<&Rack>, span: u64, _cwnd: u64, in_recovery: bool, o: Outstanding) -> u64 {
        if in_recovery {
            sacked.pipe(o, rack.map(Rack::lost_bytes))
        } else {
            span
        }
    }
    fn pipe_or(&self, sacked: &Sacked, rack: Option<&Rack>, _without_sack: u64, o: Outstanding) -> u64 {
        sacked.pipe(o, rack.map(Rack::lost_bytes))
    }
}
