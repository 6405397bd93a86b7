//! ns-2's `Agent/TCP/Sack1` fast recovery (`sack_recovery = "ns2_sack1"`; ns-2.35 tcp/tcp-sack1.cc,
//! tcp/scoreboard-rq.cc), the SACK recovery the Leith, Budzisz and Bansal papers ran. It differs from
//! RFC 6675 in how the amount in flight is known and which segments count as lost:
//!
//! * `pipe_` is a counter, not a scoreboard sum (`dupack_action`): at the fast retransmit it is the
//!   packets outstanding less `numdupacks_` (`LimTransmitFix_ false`); every ACK that arrives during
//!   recovery takes one off, a partial ACK one more (`partial_ack_ false`), and every segment sent
//!   by the recovery loop adds one; the fast retransmission itself is not counted.
//! * The loop (`send_much`) sends while `pipe_ < int(cwnd_)`, whole packets of the window.
//! * What it sends (`GetNextRetran`, `ReassemblyQueue::nexthole`): the first hole at or above the
//!   highest retransmission that has SACKed data above it, each hole once; every such hole counts as
//!   lost, with no DupThresh rule (RFC 6675 IsLost). Otherwise new data within the receiver window.
//!
//! Not reproduced (docs/profiles.md): ns-2 counts only duplicate ACKs whose SACK blocks change the
//! scoreboard (`CheckUpdate`), and at the full ACK leaves cwnd at its halved value where the
//! algorithm's recovery exit applies here.

use crate::tcp::rack::Rack;
use crate::tcp::recovery::outstanding::Outstanding;
use crate::tcp::recovery::part::{RecoveryRules, RecoverySend};
use crate::tcp::recovery::sacked::Sacked;
use crate::tcp::scoreboard::Scoreboard;

/// ns-2 Sack1's rules of one connection: during an episode, the counted pipe.
#[derive(Clone, Debug)]
pub struct Ns2Sack1Recovery {
    dupthresh: u32,
    mss: u64,
    episode: Option<Ns2Sack1>,
}

impl Ns2Sack1Recovery {
    pub fn new(dupthresh: u32, mss: u64) -> Ns2Sack1Recovery {
        Ns2Sack1Recovery { dupthresh, mss, episode: None }
    }

    /// ns-2's `pipe_` while an episode runs.
    pub fn counted_pipe(&self) -> Option<i64> {
        self.episode.map(|e| e.pipe())
    }
}

impl RecoveryRules for Ns2Sack1Recovery {
    fn reads_sack(&self) -> bool {
        true
    }
    fn on_ack_arrival(&mut self, partial: bool) {
        if let Some(episode) = &mut self.episode {
            episode.on_ack(partial);
        }
    }
    fn dupacks_say_lost(&self, sacked: &Sacked, dupacks: u32, head_end: u64) -> bool {
        dupacks >= self.dupthresh || sacked.lost_bound() >= head_end
    }
    fn loss_at_fast_retransmit(&self, sacked: &Sacked, _rack: Option<&Rack>, flight: u64, _cwnd: u64, o: Outstanding) -> (u64, u64) {
        (flight, sacked.pipe_with_head_lost(o, None))
    }
    fn begin_episode(&mut self, o: Outstanding) {
        self.episode = Some(Ns2Sack1::enter(o.flight().div_ceil(self.mss), self.dupthresh));
    }
    fn fast_retransmitted(&mut self, sacked: &mut Sacked, seq_end: u64) {
        sacked.set_high_rxt(seq_end);
    }
    fn end_episode(&mut self) {
        self.episode = None;
    }
    fn next_in_recovery(&mut self, sacked: &Sacked, _rack: Option<&Rack>, cwnd: u64, o: Outstanding, new_data_allowed: bool) -> RecoverySend {
        let mss = self.mss;
        let next = match &self.episode {
            Some(episode) => {
                if !episode.may_send(cwnd / mss) {
                    return RecoverySend::CwndLimited;
                }
                next_hole(sacked.scoreboard(), sacked.high_rxt().max(o.snd_una), o.snd_max).or(new_data_allowed.then_some(o.snd_max))
            }
            // Not reached (an episode always runs in recovery); RFC 6675's rule as a fallback.
            None => {
                if sacked.pipe(o, None) + mss > cwnd.max(mss) {
                    return RecoverySend::CwndLimited;
                }
                sacked.next_seg(o, new_data_allowed)
            }
        };
        next.map_or(RecoverySend::Nothing, RecoverySend::Segment)
    }
    fn sent_in_recovery(&mut self, sacked: &mut Sacked, seq: u64, len: u64, retransmission: bool) {
        if let Some(episode) = &mut self.episode {
            episode.on_send();
        }
        if retransmission {
            sacked.set_high_rxt(sacked.high_rxt().max(seq + len));
        }
    }
    #[inline(always)]
    fn in_flight(&self, sacked: &Sacked, _rack: Option<&Rack>, span: u64, _cwnd: u64, in_recovery: bool, o: Outstanding) -> u64 {
        if in_recovery {
            sacked.pipe(o, None)
        } else {
            span
        }
    }
    fn pipe_or(&self, sacked: &Sacked, _rack: Option<&Rack>, _without_sack: u64, o: Outstanding) -> u64 {
        sacked.pipe(o, None)
    }
}

/// The recovery state of one ns-2 Sack1 episode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ns2Sack1 {
    /// ns-2 `pipe_`, in packets (may go negative, as ns-2's int).
    pipe: i64,
}

impl Ns2Sack1 {
    /// The fast retransmit with `outstanding_pkts` packets outstanding.
    pub fn enter(outstanding_pkts: u64, dupthresh: u32) -> Ns2Sack1 {
        Ns2Sack1 { pipe: outstanding_pkts as i64 - dupthresh as i64 }
    }

    /// An ACK arrived during recovery; `partial` when it acknowledged new data below `recover`.
    pub fn on_ack(&mut self, partial: bool) {
        self.pipe -= if partial { 2 } else { 1 };
    }

    /// `pipe_ < int(cwnd_)`.
    pub fn may_send(&self, cwnd_pkts: u64) -> bool {
        self.pipe < cwnd_pkts as i64
    }

    /// The recovery loop sent a segment.
    pub fn on_send(&mut self) {
        self.pipe += 1;
    }

    pub fn pipe(&self) -> i64 {
        self.pipe
    }
}

/// `GetNextRetran`: the first unSACKed sequence at or above `from` (segment-aligned) below `snd_max`
/// that has SACKed data above it.
pub fn next_hole(scoreboard: &Scoreboard, from: u64, snd_max: u64) -> Option<u64> {
    let highest = scoreboard.highest()?;
    let mut s = from;
    while s < snd_max {
        match scoreboard.sacked_until(s) {
            Some(end) => s = end,
            None => return (s < highest).then_some(s),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipe_counts_outstanding_less_dupacks_then_acks_and_sends() {
        let mut p = Ns2Sack1::enter(20, 3);
        assert_eq!(p.pipe(), 17);
        assert!(!p.may_send(10), "pipe 17 >= int(cwnd) 10");
        for _ in 0..7 {
            p.on_ack(false);
        }
        assert_eq!(p.pipe(), 10);
        assert!(!p.may_send(10));
        p.on_ack(true);
        assert_eq!(p.pipe(), 8, "a partial ACK takes two");
        assert!(p.may_send(10));
        p.on_send();
        p.on_send();
        assert!(!p.may_send(10));
    }

    #[test]
    fn every_hole_below_the_highest_sack_is_retransmitted_once_in_order() {
        let mut sb = Scoreboard::default();
        sb.add(1000, 2000, 0);
        sb.add(4000, 5000, 0);
        // Holes: [0,1000), [2000,3000), [3000,4000); nothing SACKed above 5000.
        assert_eq!(next_hole(&sb, 0, 8000), Some(0));
        assert_eq!(next_hole(&sb, 1000, 8000), Some(2000), "skips the SACKed block");
        assert_eq!(next_hole(&sb, 3000, 8000), Some(3000), "one SACKed segment above is enough (no DupThresh)");
        assert_eq!(next_hole(&sb, 5000, 8000), None, "no SACKed data above: not a hole yet");
        assert_eq!(next_hole(&Scoreboard::default(), 0, 8000), None);
    }
}
