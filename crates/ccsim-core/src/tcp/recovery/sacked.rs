//! What the SACK recoveries share: the scoreboard of RFC 6675 section 3 with HighRxt as its mark,
//! and the quantities RFC 6675 derives from it (IsLost's boundary, pipe, NextSeg()).

use crate::tcp::recovery::outstanding::Outstanding;
use crate::tcp::scoreboard::Scoreboard;

/// The SACK state of one connection (FreeBSD `tcp_sack.c`, Linux's SACK tags on the retransmit queue).
#[derive(Clone, Debug)]
pub struct Sacked {
    scoreboard: Scoreboard,
    dupthresh: u32,
    mss: u64,
}

impl Sacked {
    pub fn new(dupthresh: u32, mss: u64) -> Sacked {
        Sacked { scoreboard: Scoreboard::default(), dupthresh, mss }
    }

    pub fn scoreboard(&self) -> &Scoreboard {
        &self.scoreboard
    }

    pub fn dupthresh(&self) -> u32 {
        self.dupthresh
    }

    pub fn mss(&self) -> u64 {
        self.mss
    }

    /// Takes in an ACK's blocks (each cut at `snd_max`); returns the bytes newly SACKed. With
    /// `uncovered`, also collects the parts of the blocks not SACKed before (RACK's new deliveries).
    #[inline]
    pub fn take_blocks(&mut self, blocks: &[(u64, u64)], ackno: u64, snd_max: u64, mut uncovered: Option<&mut Vec<(u64, u64)>>) -> u64 {
        let mut newly = 0;
        for &(a, b) in blocks {
            let b = b.min(snd_max);
            if let Some(out) = uncovered.as_deref_mut() {
                self.scoreboard.uncovered(a.max(ackno), b, out);
            }
            newly += self.scoreboard.add(a, b, ackno);
        }
        newly
    }

    /// snd_una moved up: the ranges below it go.
    #[inline]
    pub fn advance(&mut self, snd_una: u64) {
        self.scoreboard.advance(snd_una);
    }

    /// Bytes SACKed above snd_una.
    #[inline]
    pub fn total(&self) -> u64 {
        self.scoreboard.total()
    }

    /// If `seq` lies in a SACKed range, where it ends.
    pub fn sacked_until(&self, seq: u64) -> Option<u64> {
        self.scoreboard.sacked_until(seq)
    }

    /// Nothing SACKed.
    pub fn is_empty(&self) -> bool {
        self.scoreboard.is_empty()
    }

    /// RFC 6675 IsLost()'s boundary: the segments ending at or below it are lost.
    #[inline]
    pub fn lost_bound(&self) -> u64 {
        self.scoreboard.lost_bound(self.dupthresh, self.mss)
    }

    /// RFC 6675 HighRxt: the highest sequence retransmitted in this recovery.
    #[inline]
    pub fn high_rxt(&self) -> u64 {
        self.scoreboard.mark()
    }

    /// Sets HighRxt (and with it the SACKed bytes below it that `pipe` needs).
    pub fn set_high_rxt(&mut self, high_rxt: u64) {
        self.scoreboard.set_mark(high_rxt);
    }

    /// A timeout: the scoreboard is cleared as FreeBSD does (RFC 2018 section 8) and going back
    /// starts at snd_una.
    pub fn clear_for_timeout(&mut self, snd_una: u64) {
        self.scoreboard.clear();
        self.set_high_rxt(snd_una);
    }

    /// RFC 6675 section 4 SetPipe(): for each octet in [snd_una, snd_max), one if it is neither
    /// SACKed nor IsLost(), plus one if it was retransmitted (below HighRxt) and is not SACKed. With
    /// RACK (`rack_lost`: the bytes it marked lost and not retransmitted), its marks replace
    /// IsLost() and retransmitted marked segments count again (Linux `tcp_packets_in_flight`).
    ///
    /// Computed without walking the scoreboard: the octets not deemed lost are those above the
    /// IsLost() boundary, less the few SACKed ranges up there (walked from the top); the SACKed
    /// octets below HighRxt are a running sum the scoreboard keeps as blocks arrive, snd_una moves
    /// and HighRxt moves (`Scoreboard::set_mark`), since every SACKed range lies in
    /// [snd_una, snd_max]. A debug build checks both against sums over every range.
    pub fn pipe(&self, o: Outstanding, rack_lost: Option<u64>) -> u64 {
        let sb = &self.scoreboard;
        if let Some(lost) = rack_lost {
            return (o.snd_max - o.snd_una).saturating_sub(sb.total() + lost);
        }
        let not_lost = if sb.is_empty() {
            // Nothing SACKed (most ACKs): nothing lost, nothing SACKed above.
            o.snd_max - o.snd_una
        } else {
            // Segments are MSS-aligned, so the lost ones are exactly those below this boundary.
            let lost_end = (self.lost_bound() / self.mss * self.mss).clamp(o.snd_una, o.snd_max);
            let sacked_not_lost = sb.sacked_above(lost_end);
            debug_assert_eq!(sacked_not_lost, sb.sacked_in(lost_end, o.snd_max));
            (o.snd_max - lost_end) - sacked_not_lost
        };
        let hr = self.high_rxt().clamp(o.snd_una, o.snd_max);
        let sacked_retransmitted = sb.sacked_below_mark();
        debug_assert_eq!(sacked_retransmitted, sb.sacked_in(o.snd_una, hr));
        not_lost + (hr - o.snd_una) - sacked_retransmitted
    }

    /// The pipe as ns-3 computes it when it enters fast recovery (`TcpSocketBase::EnterRecovery`
    /// marks the first unacknowledged segment lost, then asks `BytesInFlight()`): what
    /// `halve_from = "pipe"` halves. Equal to `pipe` once three segments above the head are SACKed.
    pub fn pipe_with_head_lost(&self, o: Outstanding, rack_lost: Option<u64>) -> u64 {
        let head_end = o.snd_una + o.seg_len(o.snd_una, self.mss);
        let head_in_pipe = if self.lost_bound() >= head_end { 0 } else { head_end - o.snd_una };
        self.pipe(o, rack_lost).saturating_sub(head_in_pipe)
    }

    /// RFC 6675 NextSeg() rules 1-3 (rule 4, the rescue retransmission, is not implemented): the
    /// first unSACKed segment above HighRxt that IsLost(); else new data if allowed; else an
    /// unSACKed segment below the highest SACKed one.
    pub fn next_seg(&self, o: Outstanding, new_data_allowed: bool) -> Option<u64> {
        let sb = &self.scoreboard;
        let x = self.lost_bound();
        let highest = sb.highest().unwrap_or(o.snd_una);
        let mut s = self.high_rxt().max(o.snd_una);
        let mut rule3 = None;
        while s < o.snd_max {
            if let Some(end) = sb.sacked_until(s) {
                s = end;
                continue;
            }
            let len = o.seg_len(s, self.mss).max(1);
            if s + len <= x {
                return Some(s); // rule 1
            }
            if rule3.is_none() && s < highest {
                rule3 = Some(s);
            }
            break;
        }
        if new_data_allowed {
            return Some(o.snd_max); // rule 2
        }
        rule3
    }
}
