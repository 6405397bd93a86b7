//! The TCP receiver: cumulative ACKs, out-of-order buffering, SACK blocks (RFC 2018) and optional
//! delayed ACKs (RFC 5681 section 4.2: an ACK at least every second full-sized segment and within the
//! delayed-ACK timeout; an immediate ACK for an out-of-order segment and for one that fills a hole).
//!
//! With `delayed_ack_rule = "linux"` the hold-back follows Linux's quick-ack mode and adaptive timeout
//! instead (`tcp::quickack`).
//!
//! The receiving application reads in-order data at once, so the advertised window stays at the
//! configured cap (`rwnd_bytes`); goodput is the in-order byte count delivered to that application.

use std::time::Duration;

use ccsim_cc::Time;

use crate::packet::{Packet, SackStore, MAX_SACK_BLOCKS};
use crate::scenario::{DelayedAckRule, TcpConfig};
use crate::tcp::quickack::QuickAck;

#[derive(Clone, Debug)]
pub struct Receiver {
    flow: u32,
    delayed_ack: bool,
    mss: u64,
    /// Next in-order byte expected; equals the unique bytes delivered to the application.
    rcv_nxt: u64,
    /// Buffered out-of-order ranges above rcv_nxt, sorted and disjoint.
    ooo: Vec<(u64, u64)>,
    /// SACK blocks in the order they are reported: the most recently changed first.
    recent_blocks: Vec<(u64, u64)>,
    /// Full segments received since the last ACK (delayed-ACK counting).
    unacked_segments: u32,
    /// Send time and retransmission flag of the segment whose arrival is to be echoed.
    echo: (Time, bool),
    /// Deadline of the delayed-ACK timer, if an ACK is being held back.
    delack_deadline: Option<Time>,
    acks_sent: u64,
    dup_segments: u64,
    /// Linux delayed-ACK state, when `delayed_ack_rule = "linux"`.
    quickack: Option<QuickAck>,
    /// In-order bytes received since the last ACK (Linux `rcv_nxt - rcv_wup`).
    unacked_bytes: u64,
}

impl Receiver {
    pub fn new(flow: u32, delayed_ack: bool, mss: u64) -> Receiver {
        Receiver {
            flow,
            delayed_ack,
            mss,
            rcv_nxt: 0,
            ooo: Vec::new(),
            recent_blocks: Vec::new(),
            unacked_segments: 0,
            echo: (Time::ZERO, false),
            delack_deadline: None,
            acks_sent: 0,
            dup_segments: 0,
            quickack: None,
            unacked_bytes: 0,
        }
    }

    /// The receiver of a flow with these TCP settings.
    pub fn for_flow(flow: u32, cfg: &TcpConfig) -> Receiver {
        let r = Receiver::new(flow, cfg.delayed_ack, cfg.mss_bytes);
        match cfg.delayed_ack_rule {
            DelayedAckRule::Rfc5681 => r,
            // The receiver has no RTT sample of its own (no handshake): its RTO is the initial one.
            DelayedAckRule::Linux => r.with_linux_delayed_ack(QuickAck::new(
                Duration::from_nanos(cfg.delayed_ack_timeout_ns),
                Duration::from_nanos(cfg.initial_rto_ns),
                cfg.rwnd_bytes,
                cfg.mss_bytes,
            )),
        }
    }

    /// Holds ACKs back as Linux does (`tcp::quickack`) instead of RFC 5681's fixed rule.
    pub fn with_linux_delayed_ack(mut self, quickack: QuickAck) -> Receiver {
        self.quickack = Some(quickack);
        self
    }

    /// Handles an arriving data segment. Returns an ACK to send now, if any (its SACK blocks put in
    /// `sacks`); when an ACK is held back, `delack_deadline` is set and the caller arms the timer.
    pub fn on_data(&mut self, now: Time, pkt: &Packet, delack_timeout: std::time::Duration, sacks: &mut SackStore) -> Option<Packet> {
        let (start, end) = (pkt.seq, pkt.seq + pkt.len as u64);
        self.echo = (pkt.tx_time, pkt.retx);
        if end <= self.rcv_nxt {
            // Entirely old data (a spurious retransmission): ACK at once (RFC 5681 4.2).
            self.dup_segments += 1;
            if let Some(q) = &mut self.quickack {
                q.on_old_data();
            }
            return Some(self.make_ack(sacks));
        }
        if start > self.rcv_nxt {
            // Out of order: buffer it and send an immediate duplicate ACK with SACK blocks.
            self.insert_ooo(start, end);
            return Some(self.make_ack(sacks));
        }
        // In order (possibly overlapping old data).
        let had_hole = !self.ooo.is_empty();
        self.rcv_nxt = end;
        while let Some(&(a, b)) = self.ooo.first() {
            if a > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(b);
            self.ooo.remove(0);
        }
        if !self.recent_blocks.is_empty() {
            self.recent_blocks.retain(|&(_, b)| b > self.rcv_nxt);
        }
        if let Some(q) = &mut self.quickack {
            q.on_in_order_data(now);
            self.unacked_bytes += pkt.len as u64;
            // __tcp_ack_snd_check: more than one full segment unacknowledged, quick-ack mode, or a
            // filled hole; otherwise hold the ACK for the ATO.
            if had_hole || !self.delayed_ack || self.unacked_bytes > self.mss || q.in_quickack_mode() {
                return Some(self.make_ack(sacks));
            }
            if self.delack_deadline.is_none() {
                self.delack_deadline = Some(now + q.timeout());
            }
            return None;
        }
        if had_hole || !self.delayed_ack {
            return Some(self.make_ack(sacks));
        }
        if pkt.len as u64 >= self.mss {
            self.unacked_segments += 1;
        }
        if self.unacked_segments >= 2 {
            return Some(self.make_ack(sacks));
        }
        if self.delack_deadline.is_none() {
            self.delack_deadline = Some(now + delack_timeout);
        }
        None
    }

    /// The delayed-ACK timer fired: send the held-back ACK, if one is still held.
    pub fn on_delack_timer(&mut self, now: Time, sacks: &mut SackStore) -> Option<Packet> {
        match self.delack_deadline {
            Some(d) if d <= now => {
                if let Some(q) = &mut self.quickack {
                    q.on_timer_fired();
                }
                Some(self.make_ack(sacks))
            }
            _ => None,
        }
    }

    fn insert_ooo(&mut self, start: u64, end: u64) {
        let (s, e) = crate::ranges::insert_merged(&mut self.ooo, start, end);
        // RFC 2018 section 4: the first block reports the range holding the newest segment, then
        // the most recently reported other blocks.
        self.recent_blocks.retain(|&(a, b)| b < s || a > e);
        self.recent_blocks.insert(0, (s, e));
        self.recent_blocks.truncate(MAX_SACK_BLOCKS);
    }

    fn make_ack(&mut self, sacks: &mut SackStore) -> Packet {
        self.unacked_segments = 0;
        self.unacked_bytes = 0;
        self.delack_deadline = None;
        if let Some(q) = &mut self.quickack {
            q.on_ack_sent();
        }
        self.acks_sent += 1;
        Packet::ack(self.flow, self.rcv_nxt, self.echo, &self.recent_blocks, sacks)
    }

    /// Next in-order byte expected: the unique bytes delivered to the application.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// When the delayed-ACK timer fires, if an ACK is held back.
    pub fn delack_deadline(&self) -> Option<Time> {
        self.delack_deadline
    }

    pub fn acks_sent(&self) -> u64 {
        self.acks_sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const MSS: u64 = 1000;
    const DELACK: Duration = Duration::from_millis(100);

    fn seg(seq: u64) -> Packet {
        Packet::data(0, seq, MSS as u32, 52, Time::ZERO, false)
    }

    /// The SACK blocks an ACK carries, taken from the store.
    fn blocks(sacks: &mut SackStore, ack: &Packet) -> Vec<(u64, u64)> {
        sacks.take(ack)[..ack.n_sack as usize].to_vec()
    }

    #[test]
    fn delayed_ack_every_second_segment_and_on_timer() {
        let mut sacks = SackStore::default();
        let mut r = Receiver::new(0, true, MSS);
        assert!(r.on_data(Time(1), &seg(0), DELACK, &mut sacks).is_none());
        assert_eq!(r.delack_deadline, Some(Time(1) + DELACK));
        let ack = r.on_data(Time(2), &seg(1000), DELACK, &mut sacks).expect("second segment is ACKed");
        assert_eq!(ack.seq, 2000);
        assert!(r.on_data(Time(3), &seg(2000), DELACK, &mut sacks).is_none());
        assert!(r.on_delack_timer(Time(50), &mut sacks).is_none(), "not yet due");
        let ack = r.on_delack_timer(Time(3) + DELACK, &mut sacks).expect("timer ACK");
        assert_eq!(ack.seq, 3000);
    }

    #[test]
    fn out_of_order_gets_immediate_dupack_with_sack_and_hole_fill_acks_at_once() {
        let mut sacks = SackStore::default();
        let mut r = Receiver::new(0, true, MSS);
        r.on_data(Time(1), &seg(0), DELACK, &mut sacks);
        let d1 = r.on_data(Time(2), &seg(2000), DELACK, &mut sacks).unwrap();
        assert_eq!(d1.seq, 1000);
        assert_eq!(blocks(&mut sacks, &d1), &[(2000, 3000)]);
        let d2 = r.on_data(Time(3), &seg(4000), DELACK, &mut sacks).unwrap();
        assert_eq!(blocks(&mut sacks, &d2), &[(4000, 5000), (2000, 3000)], "newest block first");
        let d3 = r.on_data(Time(4), &seg(3000), DELACK, &mut sacks).unwrap();
        assert_eq!(blocks(&mut sacks, &d3), &[(2000, 5000)], "merged range reported first");
        let full = r.on_data(Time(5), &seg(1000), DELACK, &mut sacks).expect("filling the hole is ACKed at once");
        assert_eq!(full.seq, 5000);
        assert_eq!(full.n_sack, 0);
        assert_eq!(r.rcv_nxt, 5000);
    }

    #[test]
    fn ack_echoes_send_time_of_the_segment_that_caused_it() {
        let mut sacks = SackStore::default();
        let mut r = Receiver::new(0, false, MSS);
        let mut s = seg(0);
        s.tx_time = Time(777);
        s.retx = true;
        let ack = r.on_data(Time(1000), &s, DELACK, &mut sacks).unwrap();
        assert_eq!(ack.tx_time, Time(777));
        assert!(ack.retx);
    }

    fn linux_receiver() -> Receiver {
        let q = QuickAck::new(Duration::from_millis(40), Duration::from_secs(1), 64 << 20, MSS);
        Receiver::new(0, true, MSS).with_linux_delayed_ack(q)
    }

    #[test]
    fn linux_receiver_acks_the_first_16_segments_at_once_then_every_second() {
        let mut sacks = SackStore::default();
        let mut r = linux_receiver();
        let mut acks = Vec::new();
        for k in 0..40u64 {
            acks.push(r.on_data(Time::from_millis(k), &seg(k * MSS), DELACK, &mut sacks).is_some());
        }
        assert!(acks[..16].iter().all(|&a| a), "quick-ack mode at the start: {acks:?}");
        assert_eq!(acks[16..], [false, true].repeat(12)[..], "then an ACK per two full segments");
    }

    #[test]
    fn linux_receiver_holds_an_odd_segment_for_ato_and_inflates_it_when_the_timer_fires() {
        let mut sacks = SackStore::default();
        let mut r = linux_receiver();
        for k in 0..16u64 {
            r.on_data(Time::from_millis(k), &seg(k * MSS), DELACK, &mut sacks).unwrap();
        }
        assert!(r.on_data(Time::from_millis(16), &seg(16 * MSS), DELACK, &mut sacks).is_none());
        assert_eq!(r.delack_deadline(), Some(Time::from_millis(56)), "ATO_MIN 40 ms, not the 100 ms timeout");
        assert_eq!(r.on_delack_timer(Time::from_millis(56), &mut sacks).unwrap().seq, 17 * MSS);
        assert!(r.on_data(Time::from_millis(300), &seg(17 * MSS), DELACK, &mut sacks).is_none());
        assert_eq!(r.delack_deadline(), Some(Time::from_millis(380)), "ATO doubled to 80 ms by the timer");
    }

    #[test]
    fn linux_receiver_acks_out_of_order_at_once_and_requickacks_on_old_data() {
        let mut sacks = SackStore::default();
        let mut r = linux_receiver();
        for k in 0..16u64 {
            r.on_data(Time::from_millis(k), &seg(k * MSS), DELACK, &mut sacks).unwrap();
        }
        let dup = r.on_data(Time::from_millis(20), &seg(17 * MSS), DELACK, &mut sacks).expect("out of order: at once");
        assert_eq!(dup.seq, 16 * MSS);
        r.on_data(Time::from_millis(21), &seg(16 * MSS), DELACK, &mut sacks).expect("fills the hole: at once");
        assert!(r.on_data(Time::from_millis(22), &seg(18 * MSS), DELACK, &mut sacks).is_none(), "delayed again");
        r.on_data(Time::from_millis(23), &seg(3 * MSS), DELACK, &mut sacks).expect("old data: at once");
        assert!(r.on_data(Time::from_millis(24), &seg(19 * MSS), DELACK, &mut sacks).is_some(), "quick-ack mode again");
        assert!(r.on_data(Time::from_millis(25), &seg(20 * MSS), DELACK, &mut sacks).is_some());
    }
}
