//! Proportional Rate Reduction (RFC 6937), the window during SACK loss recovery when
//! `recovery_window = "prr"`, as Linux computes it (`tcp_init_cwnd_reduction`, `tcp_cwnd_reduction`
//! and `tcp_end_cwnd_reduction` in net/ipv4/tcp_input.c).
//!
//! RFC 6937 section 3: at the start of recovery `prr_delivered = prr_out = 0`; on every ACK in
//! recovery `prr_delivered += DeliveredData` and
//! * while pipe > ssthresh (proportional part): `sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS)
//!   - prr_out`, which spreads the reduction from RecoverFS to ssthresh over about one round;
//! * otherwise (reduction bound, PRR-SSRB): `sndcnt = MIN(ssthresh - pipe, MAX(prr_delivered -
//!   prr_out, DeliveredData) + MSS)`, which lets pipe grow back to ssthresh in slow-start fashion;
//!
//! and the sender may send `sndcnt` more, i.e. cwnd = pipe + sndcnt. Every (re)transmission during
//! recovery adds to `prr_out`.
//!
//! Where Linux differs from the RFC text, this follows Linux:
//! * RecoverFS is cwnd before the reduction (`tp->prior_cwnd`), not snd.nxt - snd.una.
//! * The proportional part is computed in whole segments with Linux's rounding up
//!   (`(ssthresh * prr_delivered + prior_cwnd - 1) / prior_cwnd` packets); here in bytes, rounded up
//!   to whole MSS, which is the same for MSS-sized segments.
//! * The extra MSS of PRR-SSRB is given only when the ACK advanced snd.una and marked no new segment
//!   lost (the rule of the RFC 6937 update, `FLAG_SND_UNA_ADVANCED && !newly_lost` in Linux).
//! * At least one segment may be sent while nothing has been sent in recovery yet ("force a fast
//!   retransmit upon entering fast recovery").
//! * An ACK that delivers nothing leaves cwnd unchanged.
//!
//! The window when recovery ends is left to the algorithm's `on_recovery_exit` (the machine's seam;
//! NewReno's default is RFC 6582's min(ssthresh, FlightSize + MSS), which equals ssthresh whenever
//! PRR has brought pipe back to ssthresh). Linux sets cwnd = ssthresh there
//! (`tcp_end_cwnd_reduction`); see docs/linux-tcp.md.

/// PRR state of one recovery episode (bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prr {
    ssthresh: u64,
    /// RecoverFS: cwnd just before the reduction (Linux `prior_cwnd`).
    recover_fs: u64,
    delivered: u64,
    out: u64,
}

impl Prr {
    /// Recovery starts: cwnd was `prior_cwnd_bytes`, the algorithm chose `ssthresh_bytes`
    /// (Linux `tcp_init_cwnd_reduction`).
    pub fn start(prior_cwnd_bytes: u64, ssthresh_bytes: u64) -> Prr {
        Prr { ssthresh: ssthresh_bytes, recover_fs: prior_cwnd_bytes.max(1), delivered: 0, out: 0 }
    }

    /// Data (re)transmitted during recovery (RFC 6937 `prr_out += data sent`).
    pub fn on_sent(&mut self, bytes: u64) {
        self.out += bytes;
    }

    /// One ACK during recovery (Linux `tcp_cwnd_reduction`): `delivered_bytes` newly acknowledged or
    /// SACKed, `pipe_bytes` in flight after the ACK's loss marking, whether it advanced snd.una and
    /// whether it marked a segment newly lost. Returns the new cwnd (pipe + sndcnt), or None when the
    /// ACK delivered nothing.
    pub fn on_ack(&mut self, delivered_bytes: u64, pipe_bytes: u64, una_advanced: bool, newly_lost: bool, mss: u64) -> Option<u64> {
        if delivered_bytes == 0 {
            return None;
        }
        self.delivered += delivered_bytes;
        let mut sndcnt: i64 = if pipe_bytes > self.ssthresh {
            // CEIL(prr_delivered * ssthresh / RecoverFS) in whole segments.
            let target = (self.delivered as u128 * self.ssthresh as u128).div_ceil(self.recover_fs as u128 * mss as u128);
            (target * mss as u128) as i64 - self.out as i64
        } else {
            let mut limit = (self.delivered as i64 - self.out as i64).max(delivered_bytes as i64);
            if una_advanced && !newly_lost {
                limit += mss as i64;
            }
            limit.min((self.ssthresh - pipe_bytes) as i64)
        };
        if self.out == 0 {
            sndcnt = sndcnt.max(mss as i64);
        }
        Some(pipe_bytes + sndcnt.max(0) as u64)
    }

    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// Sends what the returned window allows, in whole segments, as the machine does.
    fn send(prr: &mut Prr, cwnd: u64, pipe: &mut u64) -> u64 {
        let mut n = 0;
        while *pipe + MSS <= cwnd {
            prr.on_sent(MSS);
            *pipe += MSS;
            n += 1;
        }
        n
    }

    #[test]
    fn proportional_part_sends_one_segment_per_two_delivered_when_halving() {
        // cwnd 20 before the loss, ssthresh 10, one segment lost: pipe starts at 19 and each ACK
        // delivers one segment. RFC 6937 section 3: sndcnt = CEIL(delivered * 10 / 20) - out, so the
        // sender sends on ACKs 1, 3, 5, ... (Linux rounds up: the first ACK sends the retransmission).
        let mut prr = Prr::start(20 * MSS, 10 * MSS);
        let mut pipe = 19 * MSS;
        let mut sent = Vec::new();
        for _ in 0..18 {
            pipe -= MSS; // one segment delivered
            let cwnd = prr.on_ack(MSS, pipe, false, false, MSS).unwrap();
            sent.push(send(&mut prr, cwnd, &mut pipe));
        }
        assert_eq!(sent[..8], [1, 0, 1, 0, 1, 0, 1, 0]);
        // 18 delivered, 9 sent: pipe went from 19 to 10 = ssthresh, as PRR promises after one round.
        assert_eq!(prr.out, 9 * MSS);
        assert_eq!(pipe, 10 * MSS);
    }

    #[test]
    fn reduction_bound_catches_up_to_ssthresh_after_heavy_loss() {
        // Many losses: pipe already far below ssthresh. PRR-SSRB lets pipe grow by the delivered amount
        // plus one MSS per ACK that advances snd.una (slow-start-like), never beyond ssthresh.
        let mut prr = Prr::start(20 * MSS, 10 * MSS);
        prr.on_sent(MSS); // the fast retransmission
        let mut pipe = 3 * MSS;
        let cwnd = prr.on_ack(MSS, pipe, true, false, MSS).unwrap();
        // limit = max(1 - 1, 1) + 1 = 2 segments; ssthresh - pipe = 7 -> sndcnt 2.
        assert_eq!(cwnd, 5 * MSS);
        assert_eq!(send(&mut prr, cwnd, &mut pipe), 2);
        // A SACK-only ACK (snd.una not advanced): no extra MSS.
        pipe -= MSS;
        let cwnd = prr.on_ack(MSS, pipe, false, false, MSS).unwrap();
        // prr_delivered 2, prr_out 3: limit = max(-1, 1) = 1 segment.
        assert_eq!(cwnd, pipe + MSS);
        // A newly marked loss also withholds the extra MSS.
        let cwnd = prr.on_ack(MSS, pipe, true, true, MSS).unwrap();
        assert_eq!(cwnd, pipe + MSS);
        // Never beyond ssthresh.
        let cwnd = prr.on_ack(20 * MSS, 9 * MSS, true, false, MSS).unwrap();
        assert_eq!(cwnd, 10 * MSS);
    }

    #[test]
    fn first_ack_of_recovery_always_allows_the_retransmission_and_empty_acks_change_nothing() {
        let mut prr = Prr::start(100 * MSS, 50 * MSS);
        // Proportional part: CEIL(1 * 50 / 100) = 1 segment anyway; with a tiny delivery too.
        assert_eq!(prr.on_ack(10, 99 * MSS, false, false, MSS), Some(100 * MSS));
        assert_eq!(prr.on_ack(0, 99 * MSS, false, false, MSS), None);
    }
}
