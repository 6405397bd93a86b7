//! RACK, time-based loss detection (RFC 8985 section 6), as Linux runs it
//! (net/ipv4/tcp_recovery.c `tcp_rack_advance`, `tcp_rack_reo_wnd`, `tcp_rack_detect_loss`,
//! `tcp_rack_mark_lost`, `tcp_rack_reo_timeout`; net/ipv4/tcp_input.c `tcp_mark_skb_lost`,
//! `tcp_check_sack_reordering`), used when `loss_detection = "rack_tlp"` and SACK is on.
//!
//! A segment is lost when a segment *sent after it* has been delivered (cumulatively ACKed or
//! SACKed) and it has not been delivered itself within RACK.rtt + RACK.reo_wnd of its own
//! transmission. This replaces the duplicate-ACK threshold and RFC 6675 IsLost() as the loss rule,
//! applies to retransmissions as well (a lost retransmission is found without an RTO), and arms a
//! reordering timer for segments that are not yet overdue.
//!
//! * RACK.xmit_time / end_seq: the most recently sent delivered segment (ties broken by sequence,
//!   `tcp_skb_sent_after`). A delivered segment that was retransmitted is ignored when its RTT would
//!   be below min_RTT: the ACK may be for the original (RFC 8985 section 6.2 step 2, Linux).
//!   Cumulatively ACKed segments whose ACK echoes a send time older than their last retransmission
//!   are skipped as spurious retransmissions (`tcp_skb_spurious_retrans`).
//! * RACK.rtt: the RTT of that segment (RFC 8985 step 2; Linux keeps the RTT of the last delivered
//!   segment it processed on the ACK, which is the same segment unless an ACK delivers segments out
//!   of their sending order).
//! * RACK.reo_wnd (`tcp_rack_reo_wnd`): 0 while no reordering has been seen and either loss recovery
//!   is under way or at least DupThresh segments are SACKed (the duplicate-ACK rule as a special
//!   case); otherwise min(min_RTT / 4, SRTT). Reordering is seen when a never-retransmitted segment is
//!   delivered below the highest SACKed sequence (`tcp_check_sack_reordering`).
//! * Detection walks the outstanding segments in order of their last transmission
//!   (`tsorted_sent_queue`), skips segments already marked lost and not yet retransmitted, stops at
//!   the first one not sent before RACK.xmit_time, marks lost those with RACK.rtt + reo_wnd - (now -
//!   xmit_time) <= 0, and arms the reordering timer for the largest remaining wait plus 2 ms
//!   (`TCP_TIMEOUT_MIN_US`). It runs on an ACK that advanced RACK, and when that timer fires.
//! * A retransmission of a lost segment makes it count in flight again; if RACK marks the
//!   retransmission lost, it is retransmitted again (`tcp_mark_skb_lost` of a `SACKED_RETRANS`
//!   segment).
//!
//! Out: D-SACK and the reordering window's growth on D-SACKs (reo_wnd_steps stays 1,
//! `tcp_rack_update_reo_wnd`); raising DupThresh on reordering (`tp->reordering`); Linux's windowed
//! min_RTT filter (the lifetime minimum is used). The sender acts on the marks in fast recovery
//! only: after an RTO the machine's go-back-N applies (Linux marks everything lost at an RTO and
//! keeps using RACK, `tcp_timeout_mark_lost`).

use std::collections::{BTreeSet, VecDeque};
use std::time::Duration;

use ccsim_cc::Time;

/// `TCP_TIMEOUT_MIN_US`: added to the reordering timer.
const TIMEOUT_MIN: Duration = Duration::from_millis(2);

/// One outstanding segment.
#[derive(Clone, Debug)]
struct Seg {
    len: u64,
    /// Time of its last transmission, and how many transmissions so far.
    xmit: Time,
    tx: u32,
    sacked: bool,
    /// Marked lost by RACK (Linux `TCPCB_LOST`).
    lost: bool,
    /// Retransmitted after being marked lost, and that retransmission not known lost
    /// (Linux `TCPCB_SACKED_RETRANS`).
    retx_in_flight: bool,
}

/// What the loss-detection walk needs from the machine.
#[derive(Clone, Copy, Debug)]
pub struct DetectContext {
    pub now: Time,
    /// Fast recovery or recovery after an RTO is under way (Linux `icsk_ca_state >= TCP_CA_Recovery`).
    pub in_recovery: bool,
    /// The duplicate-ACK threshold in segments (Linux `tp->reordering`).
    pub dupthresh: u32,
    pub min_rtt: Option<Duration>,
    pub srtt: Option<Duration>,
}

#[derive(Clone, Debug)]
pub struct Rack {
    mss: u64,
    /// Outstanding segments from `base_seq`, in sequence order, one per MSS of sequence space.
    segs: VecDeque<Seg>,
    base_seq: u64,
    /// (xmit time, seq, transmission number) in sending order; an entry is stale when the segment
    /// was delivered or sent again since.
    tsorted: VecDeque<(Time, u64, u32)>,
    /// Sequence numbers of segments marked lost and not retransmitted since.
    lost: BTreeSet<u64>,
    lost_bytes: u64,
    sacked_segs: u64,
    highest_sacked: u64,
    /// The most recently sent delivered segment: (xmit time, end seq), and its RTT.
    reference: Option<(Time, u64)>,
    rtt: Duration,
    advanced: bool,
    reord_seen: bool,
    reo_deadline: Option<Time>,
    marked_lost_total: u64,
}

impl Rack {
    pub fn new(mss: u64) -> Rack {
        Rack {
            mss,
            segs: VecDeque::new(),
            base_seq: 0,
            tsorted: VecDeque::new(),
            lost: BTreeSet::new(),
            lost_bytes: 0,
            sacked_segs: 0,
            highest_sacked: 0,
            reference: None,
            rtt: Duration::ZERO,
            advanced: false,
            reord_seen: false,
            reo_deadline: None,
            marked_lost_total: 0,
        }
    }

    fn index(&self, seq: u64) -> Option<usize> {
        if seq < self.base_seq {
            return None;
        }
        let i = ((seq - self.base_seq) / self.mss) as usize;
        (i < self.segs.len()).then_some(i)
    }

    fn seq_of(&self, i: usize) -> u64 {
        self.base_seq + i as u64 * self.mss
    }

    /// A segment [seq, seq + len) was (re)transmitted at `now`. New data extends the table (segments
    /// start at multiples of the MSS, the machine's invariant).
    pub fn on_send(&mut self, now: Time, seq: u64, len: u64) {
        if self.segs.is_empty() {
            self.base_seq = seq - seq % self.mss;
        }
        let i = match self.index(seq) {
            Some(i) => i,
            None => {
                debug_assert_eq!(seq, self.seq_of(self.segs.len()), "new data continues the table");
                self.segs.push_back(Seg { len, xmit: now, tx: 0, sacked: false, lost: false, retx_in_flight: false });
                self.tsorted.push_back((now, seq, 0));
                return;
            }
        };
        let s = &mut self.segs[i];
        s.xmit = now;
        s.tx += 1;
        if s.lost && !s.retx_in_flight {
            s.retx_in_flight = true;
            self.lost.remove(&seq);
            self.lost_bytes -= s.len;
        }
        let tx = s.tx;
        self.tsorted.push_back((now, seq, tx));
    }

    /// Considers a delivered segment as RACK's new reference (`tcp_rack_advance`).
    fn advance(&mut self, now: Time, xmit: Time, end_seq: u64, retransmitted: bool, min_rtt: Option<Duration>) {
        let rtt = now - xmit;
        if retransmitted && min_rtt.is_some_and(|m| rtt < m) {
            return; // possibly the original's delivery: ambiguous
        }
        let newer = self.reference.map_or(true, |(t, e)| xmit > t || (xmit == t && end_seq > e));
        if newer {
            self.reference = Some((xmit, end_seq));
            self.rtt = rtt;
        }
        self.advanced = true;
    }

    /// A segment is delivered: leaves the lost set and counts as reordering when it was never
    /// retransmitted and lies below the highest SACKed sequence.
    fn delivered(&mut self, i: usize) {
        let seq = self.seq_of(i);
        let s = &self.segs[i];
        if s.tx == 0 && seq + s.len <= self.highest_sacked {
            self.reord_seen = true;
        }
        if s.lost && !s.retx_in_flight {
            self.lost.remove(&seq);
            self.lost_bytes -= s.len;
        }
    }

    /// The receiver newly SACKed [start, end) (segment-aligned parts not SACKed before). `echo` is
    /// the send time the ACK echoes.
    pub fn on_sacked(&mut self, now: Time, start: u64, end: u64, min_rtt: Option<Duration>) {
        let Some(mut i) = self.index(start.max(self.base_seq)) else { return };
        while i < self.segs.len() {
            let seq = self.seq_of(i);
            let s = &self.segs[i];
            if seq + s.len > end {
                break;
            }
            if seq >= start && !s.sacked {
                self.delivered(i);
                let s = &mut self.segs[i];
                s.sacked = true;
                self.sacked_segs += 1;
                let (xmit, len, retx) = (s.xmit, s.len, s.tx > 0);
                self.advance(now, xmit, seq + len, retx, min_rtt);
            }
            i += 1;
        }
        self.highest_sacked = self.highest_sacked.max(end);
    }

    /// The cumulative ACK moved to `snd_una`. `echo` is the send time the ACK echoes.
    pub fn on_cum_ack(&mut self, now: Time, snd_una: u64, echo: Time, min_rtt: Option<Duration>) {
        while let Some(s) = self.segs.front() {
            let seq = self.base_seq;
            if seq + s.len > snd_una {
                break;
            }
            if !s.sacked {
                self.delivered(0);
                let s = &self.segs[0];
                let spurious = s.tx > 0 && echo < s.xmit; // tcp_skb_spurious_retrans
                if !spurious {
                    let (xmit, end, retx) = (s.xmit, seq + s.len, s.tx > 0);
                    self.advance(now, xmit, end, retx, min_rtt);
                }
            } else {
                self.sacked_segs -= 1;
            }
            self.base_seq += self.mss;
            self.segs.pop_front();
        }
        if self.segs.is_empty() {
            self.base_seq = snd_una;
            self.tsorted.clear();
            self.reo_deadline = None;
        }
        while self.tsorted.front().is_some_and(|&(_, seq, _)| seq < self.base_seq) {
            self.tsorted.pop_front();
        }
    }

    /// `tcp_rack_reo_wnd`.
    fn reo_wnd(&self, cx: &DetectContext) -> Duration {
        if !self.reord_seen && (cx.in_recovery || self.sacked_segs >= cx.dupthresh as u64) {
            return Duration::ZERO;
        }
        let quarter = cx.min_rtt.map_or(Duration::ZERO, |m| m / 4);
        quarter.min(cx.srtt.unwrap_or(Duration::ZERO))
    }

    /// Loss detection after an ACK (`tcp_rack_mark_lost`): only when the ACK advanced RACK. Returns
    /// the number of segments newly marked lost.
    pub fn on_ack_detect(&mut self, cx: &DetectContext) -> u64 {
        if !self.advanced {
            return 0;
        }
        self.advanced = false;
        self.detect(cx)
    }

    /// The reordering timer fired (`tcp_rack_reo_timeout`). Returns the number newly marked lost.
    pub fn on_reo_timeout(&mut self, cx: &DetectContext) -> u64 {
        self.reo_deadline = None;
        self.detect(cx)
    }

    /// `tcp_rack_detect_loss`: marks overdue segments lost and (re)arms the reordering timer. Entries
    /// it passes leave the time-ordered queue (stale, delivered, marked lost) unless still waiting.
    fn detect(&mut self, cx: &DetectContext) -> u64 {
        let Some((ref_xmit, ref_end)) = self.reference else { return 0 };
        let reo_wnd = self.reo_wnd(cx);
        let mut wait = Duration::ZERO;
        let mut marked = 0;
        let mut waiting = Vec::new();
        while let Some(&(t, seq, tx)) = self.tsorted.front() {
            let live = self.index(seq).map(|i| (i, &self.segs[i])).filter(|(_, s)| s.tx == tx && !s.sacked);
            let Some((i, s)) = live else {
                self.tsorted.pop_front(); // stale or delivered
                continue;
            };
            if s.lost && !s.retx_in_flight {
                self.tsorted.pop_front(); // lost, waiting for its retransmission (a new entry)
                continue;
            }
            let end = seq + s.len;
            if !(ref_xmit > t || (ref_xmit == t && ref_end > end)) {
                break; // sent after the reference: nothing later can be judged
            }
            self.tsorted.pop_front();
            let deadline = t + self.rtt + reo_wnd;
            if deadline <= cx.now {
                let s = &mut self.segs[i];
                if s.lost {
                    s.retx_in_flight = false; // the retransmission is lost too
                } else {
                    s.lost = true;
                }
                self.lost.insert(seq);
                self.lost_bytes += s.len;
                self.marked_lost_total += 1;
                marked += 1;
            } else {
                wait = wait.max(deadline - cx.now);
                waiting.push((t, seq, tx));
            }
        }
        for e in waiting.into_iter().rev() {
            self.tsorted.push_front(e);
        }
        self.compact();
        self.reo_deadline = (!wait.is_zero()).then(|| cx.now + wait + TIMEOUT_MIN);
        marked
    }

    /// Drops stale entries of the time-ordered queue when they make up most of it.
    fn compact(&mut self) {
        if self.tsorted.len() < 64 || self.tsorted.len() < 2 * self.segs.len() {
            return;
        }
        let (segs, base, mss) = (&self.segs, self.base_seq, self.mss);
        self.tsorted.retain(|&(_, seq, tx)| {
            seq >= base && segs.get(((seq - base) / mss) as usize).is_some_and(|s| s.tx == tx && !s.sacked)
        });
    }

    /// A retransmission timeout: the machine goes back N from snd_una with a cleared scoreboard, so
    /// RACK forgets its marks and the SACK state (they are rebuilt from the ACKs that follow).
    pub fn on_rto(&mut self) {
        for s in self.segs.iter_mut() {
            s.lost = false;
            s.retx_in_flight = false;
            s.sacked = false;
        }
        self.lost.clear();
        self.lost_bytes = 0;
        self.sacked_segs = 0;
        self.highest_sacked = 0;
        self.reo_deadline = None;
        self.advanced = false;
        let (segs, base, mss) = (&self.segs, self.base_seq, self.mss);
        self.tsorted.retain(|&(_, seq, tx)| seq >= base && segs.get(((seq - base) / mss) as usize).is_some_and(|s| s.tx == tx));
    }

    /// The first segment marked lost and not yet retransmitted, in sequence order (what Linux's
    /// `tcp_xmit_retransmit_queue` sends next).
    pub fn first_lost(&self) -> Option<u64> {
        self.lost.first().copied()
    }

    /// Bytes marked lost and not retransmitted since: RFC 6675 pipe is FlightSize less SACKed bytes
    /// less these (Linux `tcp_packets_in_flight` = packets_out - sacked_out - lost_out + retrans_out).
    pub fn lost_bytes(&self) -> u64 {
        self.lost_bytes
    }

    pub fn reo_deadline(&self) -> Option<Time> {
        self.reo_deadline
    }

    pub fn reordering_seen(&self) -> bool {
        self.reord_seen
    }

    /// Segments RACK has marked lost over the connection (retransmissions counted again).
    pub fn marked_lost_total(&self) -> u64 {
        self.marked_lost_total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    fn at(x: u64) -> Time {
        Time::from_millis(x)
    }

    fn cx(now: u64, in_recovery: bool) -> DetectContext {
        DetectContext { now: at(now), in_recovery, dupthresh: 3, min_rtt: Some(ms(40)), srtt: Some(ms(50)) }
    }

    /// Ten segments, one per millisecond from t = 0.
    fn ten_sent() -> Rack {
        let mut r = Rack::new(MSS);
        for k in 0..10 {
            r.on_send(at(k), k * MSS, MSS);
        }
        r
    }

    #[test]
    fn one_sack_marks_the_hole_lost_after_reo_wnd_without_three_dupacks() {
        let mut r = ten_sent();
        // Segment 0 lost; segment 1 (sent at 1 ms) SACKed at 41 ms: RACK.rtt = 40 ms. One SACKed
        // segment, no recovery: reo_wnd = min(min_rtt/4, srtt) = 10 ms. Segment 0 is due at
        // 0 + 40 + 10 = 50 ms.
        r.on_sacked(at(41), MSS, 2 * MSS, Some(ms(40)));
        assert_eq!(r.on_ack_detect(&cx(41, false)), 0, "not yet: waiting for the reordering window");
        assert_eq!(r.reo_deadline(), Some(at(50) + TIMEOUT_MIN), "9 ms left + 2 ms");
        assert_eq!(r.on_reo_timeout(&cx(52, false)), 1);
        assert_eq!(r.first_lost(), Some(0));
        assert_eq!(r.lost_bytes(), MSS);
        assert_eq!(r.reo_deadline(), None);
    }

    #[test]
    fn three_sacked_segments_make_reo_wnd_zero_as_the_dupack_rule() {
        let mut r = ten_sent();
        r.on_sacked(at(41), MSS, 2 * MSS, Some(ms(40)));
        r.on_sacked(at(42), 2 * MSS, 3 * MSS, Some(ms(40)));
        assert_eq!(r.on_ack_detect(&cx(42, false)), 0);
        r.on_sacked(at(43), 3 * MSS, 4 * MSS, Some(ms(40)));
        assert_eq!(r.on_ack_detect(&cx(43, false)), 1, "third SACKed segment: lost at once");
        assert_eq!(r.first_lost(), Some(0));
        // Segments 4.. were sent after the reference (segment 3): not judged.
        assert_eq!(r.lost_bytes(), MSS);
    }

    #[test]
    fn a_lost_retransmission_is_marked_again_and_its_delivery_clears_it() {
        let mut r = ten_sent();
        for k in 1..4 {
            r.on_sacked(at(40 + k), k * MSS, (k + 1) * MSS, Some(ms(40)));
        }
        assert_eq!(r.on_ack_detect(&cx(43, true)), 1);
        r.on_send(at(43), 0, MSS); // the retransmission
        assert_eq!(r.first_lost(), None);
        assert_eq!(r.lost_bytes(), 0, "counts in flight again");
        // Later segments keep being SACKed; the retransmission (sent at 43) is overdue once a
        // segment sent after it is delivered and RACK.rtt has passed since 43.
        for k in 4..10 {
            r.on_sacked(at(40 + k), k * MSS, (k + 1) * MSS, Some(ms(40)));
        }
        assert_eq!(r.on_ack_detect(&cx(49, true)), 0, "the retransmission was sent after these");
        r.on_send(at(44), 10 * MSS, MSS);
        r.on_sacked(at(84), 10 * MSS, 11 * MSS, Some(ms(40)));
        assert_eq!(r.on_ack_detect(&cx(84, true)), 1, "retransmission lost: segment 0 marked again");
        assert_eq!(r.first_lost(), Some(0));
        r.on_send(at(84), 0, MSS);
        r.on_cum_ack(at(124), 11 * MSS, at(84), Some(ms(40)));
        assert_eq!(r.first_lost(), None);
        assert_eq!(r.lost_bytes(), 0);
        assert_eq!(r.marked_lost_total(), 2);
    }

    #[test]
    fn reordering_below_the_highest_sack_opens_the_window_even_in_recovery() {
        let mut r = ten_sent();
        r.on_sacked(at(41), 2 * MSS, 3 * MSS, Some(ms(40)));
        assert!(!r.reordering_seen());
        r.on_sacked(at(42), MSS, 2 * MSS, Some(ms(40))); // never retransmitted, below the highest SACK
        assert!(r.reordering_seen());
        // reo_wnd is min_rtt/4 = 10 ms even in recovery now: segment 0 (sent at 0; RACK.rtt is the
        // 39 ms of the reference, segment 2 sent at 2 ms) is due at 49 ms, not at once.
        assert_eq!(r.on_ack_detect(&cx(42, true)), 0);
        assert_eq!(r.reo_deadline(), Some(at(49) + TIMEOUT_MIN));
    }

    #[test]
    fn spurious_retransmission_and_fast_retransmitted_sample_do_not_advance() {
        let mut r = ten_sent();
        r.on_send(at(5), 0, MSS); // a retransmission 5 ms after the original
        // Its ACK echoes the original's send time: spurious, no advance.
        r.on_cum_ack(at(40), MSS, at(0), Some(ms(40)));
        assert!(r.reference.is_none());
        // A SACKed retransmission with an RTT below min_RTT is ambiguous: no advance either.
        r.on_send(at(30), 2 * MSS, MSS);
        r.on_sacked(at(45), 2 * MSS, 3 * MSS, Some(ms(40)));
        assert!(r.reference.is_none());
        r.on_sacked(at(46), 3 * MSS, 4 * MSS, Some(ms(40)));
        assert_eq!(r.reference, Some((at(3), 4 * MSS)));
    }
}
