//! Delivery-rate samples as Linux takes them (net/ipv4/tcp_rate.c; draft-cheng-iccrg-delivery-rate-
//! estimation): each segment sent carries a snapshot of the connection's delivery state
//! (`tcp_rate_skb_sent`); when ACKs deliver segments, the most recently sent of them gives the
//! sample's start (`tcp_rate_skb_delivered`), and at the end of the ACK the sample is the bytes
//! delivered since that snapshot over the longer of its send and ACK intervals (`tcp_rate_gen`).
//! Application-limited periods are marked as `tcp_rate_check_app_limited` does, and samples of
//! segments sent in them are flagged.
//!
//! A part of the TCP machine chosen once per connection (docs/internals.md, "The TCP machine's
//! parts"): `Off` unless the algorithm implements `cong_control` (`ccsim_cc::Needs`), as Linux
//! hands rate samples only to such algorithms. Amounts are in bytes (Linux counts packets).
//!
//! Where the machine differs from Linux: the snapshot lives here, one record per segment sent and
//! not yet cumulatively acknowledged, not in the skb; the minimum RTT that invalidates too short an
//! interval is the machine's lifetime minimum (Linux's is windowed over `tcp_min_rtt_wlen`, 300 s);
//! SACK reneging is not modelled (`is_sack_reneg` is never set).

use std::collections::VecDeque;
use std::time::Duration;

use ccsim_cc::{RateSample, Time};

use crate::ranges::insert_merged;

/// The rate-sampling part: off, or the sampler.
pub enum RateSampling {
    Off,
    On(Box<RateSampler>),
}

impl RateSampling {
    pub fn new(on: bool) -> RateSampling {
        if on {
            RateSampling::On(Box::default())
        } else {
            RateSampling::Off
        }
    }
}

/// A segment's snapshot at its (latest) transmission (`TCP_SKB_CB(skb)->tx`).
#[derive(Clone, Copy, Debug)]
struct Sent {
    seq: u64,
    end: u64,
    tx_time: Time,
    first_tx_time: Time,
    delivered_time: Time,
    delivered: u64,
    app_limited: bool,
    retransmitted: bool,
    /// Already counted by a SACK (`tx.delivered_mstamp = 0`).
    counted: bool,
}

/// The delivery state of one connection and the sample being built for the current ACK.
#[derive(Debug, Default)]
pub struct RateSampler {
    sent: VecDeque<Sent>,
    /// What SACK blocks have covered above the cumulative ACK (sorted, disjoint): a block's
    /// segments are looked at only where it goes beyond these, so an ACK costs what it newly
    /// SACKs, not the size of its blocks.
    sacked: Vec<(u64, u64)>,
    /// `tp->delivered`, `tp->delivered_mstamp`, `tp->first_tx_mstamp`.
    delivered: u64,
    delivered_time: Time,
    first_tx_time: Time,
    /// `tp->app_limited`: the delivered count up to which samples are application-limited (0: none).
    app_limited: u64,
    /// `tp->lost`: bytes marked lost.
    lost: u64,
    // The sample of the current ACK (`struct rate_sample` before `tcp_rate_gen`).
    taken: bool,
    prior_delivered: u64,
    prior_time: Time,
    is_app_limited: bool,
    is_retrans: bool,
    last_end: u64,
    send_interval: Duration,
}

impl RateSampler {
    /// Linux `tcp_rate_skb_sent`: the segment `[seq, seq + len)` leaves at `now`;
    /// `nothing_outstanding` when no data was in flight before it (then the sample intervals start
    /// now).
    pub fn on_send(&mut self, now: Time, seq: u64, len: u64, nothing_outstanding: bool) {
        if nothing_outstanding {
            self.first_tx_time = now;
            self.delivered_time = now;
        }
        let snap = Sent {
            seq,
            end: seq + len,
            tx_time: now,
            first_tx_time: self.first_tx_time,
            delivered_time: self.delivered_time,
            delivered: self.delivered,
            app_limited: self.app_limited != 0,
            retransmitted: false,
            counted: false,
        };
        match self.sent.back() {
            Some(last) if last.end > seq => {
                // A retransmission: the record of the segment holding `seq` gets the new snapshot.
                let i = self.sent.partition_point(|s| s.end <= seq);
                if let Some(s) = self.sent.get_mut(i) {
                    *s = Sent { seq: s.seq, end: s.end, retransmitted: true, ..snap };
                }
            }
            _ => self.sent.push_back(snap),
        }
    }

    /// The ACK's deliveries: everything below `ackno`, and what the SACK blocks cover (Linux
    /// `tcp_rate_skb_delivered` for each segment `tcp_sacktag_write_queue` and
    /// `tcp_clean_rtx_queue` find delivered).
    pub fn on_ack(&mut self, ackno: u64, sack: &[(u64, u64)]) {
        for &(start, end) in sack {
            let start = start.max(ackno);
            if start >= end {
                continue;
            }
            // The parts of [start, end) no earlier block covered.
            let mut from = start;
            let mut k = self.sacked.partition_point(|&(_, b)| b <= start);
            while from < end {
                let gap_end = match self.sacked.get(k) {
                    Some(&(a, _)) if a < end => a,
                    _ => end,
                };
                if from < gap_end {
                    self.deliver_within(from, gap_end);
                }
                match self.sacked.get(k) {
                    Some(&(a, b)) if a < end => {
                        from = from.max(b);
                        k += 1;
                    }
                    _ => break,
                }
            }
            insert_merged(&mut self.sacked, start, end);
        }
        let below = self.sacked.partition_point(|&(_, b)| b <= ackno);
        if below > 0 {
            self.sacked.drain(..below);
        }
        while let Some(s) = self.sent.front().copied() {
            if s.end > ackno {
                break;
            }
            if !s.counted {
                self.skb_delivered(&s);
            }
            self.sent.pop_front();
        }
    }

    /// The segments lying wholly in [from, to) are SACKed: counted once.
    fn deliver_within(&mut self, from: u64, to: u64) {
        let mut i = self.sent.partition_point(|s| s.seq < from);
        while let Some(s) = self.sent.get(i).copied() {
            if s.end > to {
                break;
            }
            if !s.counted {
                self.skb_delivered(&s);
                self.sent[i].counted = true;
            }
            i += 1;
        }
    }

    /// Linux `tcp_rate_skb_delivered`: the most recently sent delivered segment (by send time, then
    /// sequence: `tcp_skb_sent_after`) starts the sample.
    fn skb_delivered(&mut self, s: &Sent) {
        let sent_after = s.tx_time > self.first_tx_time || (s.tx_time == self.first_tx_time && s.end > self.last_end);
        if !self.taken || self.prior_delivered == 0 || sent_after {
            self.taken = true;
            self.prior_delivered = s.delivered;
            self.prior_time = s.delivered_time;
            self.is_app_limited = s.app_limited;
            self.is_retrans = s.retransmitted;
            self.last_end = s.end;
            self.first_tx_time = s.tx_time;
            self.send_interval = s.tx_time.saturating_since(s.first_tx_time);
        }
    }

    /// Linux `tcp_rate_gen`, at the end of an ACK that delivered `delivered_bytes` and marked
    /// `lost_bytes` lost: fills the sample's fields of `rs` (the machine has filled the rest).
    pub fn gen(&mut self, now: Time, delivered_bytes: u64, lost_bytes: u64, min_rtt: Option<Duration>, rs: &mut RateSample) {
        self.delivered += delivered_bytes;
        self.lost += lost_bytes;
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0; // the application-limited bubble has been delivered
        }
        if delivered_bytes > 0 {
            self.delivered_time = now;
        }
        rs.acked_sacked_bytes = delivered_bytes;
        rs.losses_bytes = lost_bytes;
        rs.delivered_total_bytes = self.delivered;
        rs.delivered_time = self.delivered_time;
        rs.lost_total_bytes = self.lost;
        rs.prior_delivered_bytes = self.prior_delivered;
        rs.is_app_limited = self.is_app_limited;
        rs.is_retrans = self.is_retrans;
        let taken = std::mem::take(&mut self.taken);
        if !taken {
            (rs.delivered_bytes, rs.interval) = (None, None);
            return;
        }
        rs.delivered_bytes = Some(self.delivered - self.prior_delivered);
        let ack_interval = now.saturating_since(self.prior_time);
        let interval = self.send_interval.max(ack_interval);
        // An interval shorter than the minimum RTT means a wrong snapshot (Linux: "retransmits,
        // SACK reneging, or ACK decimation"): no rate from it.
        rs.interval = if min_rtt.is_some_and(|m| interval < m) { None } else { Some(interval) };
    }

    /// Linux `tcp_rate_check_app_limited`, when the application offers data: if it had nothing
    /// left to send and the window was not full, what is sent until everything now in flight is
    /// delivered is application-limited.
    pub fn check_app_limited(&mut self, nothing_unsent: bool, in_flight: u64, cwnd: u64) {
        if nothing_unsent && in_flight < cwnd {
            self.mark_app_limited(in_flight);
        }
    }

    /// Marks the connection application-limited (`tp->app_limited = delivered + in flight, or 1`).
    pub fn mark_app_limited(&mut self, in_flight: u64) {
        self.app_limited = (self.delivered + in_flight).max(1);
    }

    /// `tp->lost`: bytes marked lost so far.
    pub fn lost_total(&self) -> u64 {
        self.lost
    }

    /// Whether the connection is application-limited now (`tp->app_limited != 0`).
    pub fn app_limited(&self) -> bool {
        self.app_limited != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }
    const MSS: u64 = 1000;

    /// Sends `n` segments from `seq` at `now` (the first with nothing outstanding when `seq` is
    /// what the sampler has fully delivered).
    fn send(r: &mut RateSampler, now: Time, seq: u64, n: u64, idle: bool) {
        for k in 0..n {
            r.on_send(now, seq + k * MSS, MSS, idle && k == 0);
        }
    }

    fn ack(r: &mut RateSampler, now: Time, ackno: u64, sack: &[(u64, u64)], delivered: u64) -> RateSample {
        r.on_ack(ackno, sack);
        let mut rs = RateSample::default();
        r.gen(now, delivered, 0, Some(Duration::from_millis(10)), &mut rs);
        rs
    }

    /// A scripted exchange with a hand-computed rate: 4 segments at t=0, ACKed at 40, 42, 44, 46
    /// ms; each ACK releases one segment. The ACK of the fifth segment (sent at 40 ms, when 1000
    /// bytes were delivered at 40 ms) arrives at 80 ms, when 5000 are delivered: 4000 bytes over
    /// max(send 0, ack 40 ms) = 100 000 bytes/s.
    #[test]
    fn a_sample_is_what_was_delivered_since_the_newest_delivered_segment_was_sent() {
        let mut r = RateSampler::default();
        send(&mut r, ms(0), 0, 4, true);
        let first = ack(&mut r, ms(40), 1000, &[], 1000);
        // Sent with nothing delivered before: 1000 bytes over 40 ms since the first send.
        assert_eq!((first.delivered_bytes, first.interval), (Some(1000), Some(Duration::from_millis(40))));
        send(&mut r, ms(40), 4000, 1, false);
        for (k, t) in [(2u64, 42u64), (3, 44), (4, 46)] {
            let rs = ack(&mut r, ms(t), k * MSS, &[], MSS);
            assert_eq!(rs.delivered_bytes, Some(k * MSS), "segment {k}: everything since the start");
            send(&mut r, ms(t), (3 + k) * MSS, 1, false);
        }
        let rs = ack(&mut r, ms(80), 5000, &[], MSS);
        assert_eq!(rs.prior_delivered_bytes, 1000);
        assert_eq!((rs.delivered_bytes, rs.interval), (Some(4000), Some(Duration::from_millis(40))));
        assert_eq!(rs.delivery_rate_bytes_per_s(), Some(100_000.0));
        assert_eq!(rs.delivered_total_bytes, 5000);
        assert_eq!(rs.delivered_time, ms(80));
    }

    /// The send interval counts when it is the longer: segments sent over 30 ms but ACKed within
    /// 12 ms (a queue drained between) give the send-side rate.
    #[test]
    fn the_interval_is_the_longer_of_the_send_and_ack_intervals() {
        let mut r = RateSampler::default();
        r.on_send(ms(0), 0, MSS, true);
        ack(&mut r, ms(20), 1000, &[], MSS); // delivered 1000 at 20 ms, first_tx = 0
        r.on_send(ms(20), 1000, MSS, true);
        r.on_send(ms(50), 2000, MSS, false);
        let rs0 = ack(&mut r, ms(60), 2000, &[], MSS);
        assert_eq!(rs0.interval, Some(Duration::from_millis(40)));
        let rs = ack(&mut r, ms(62), 3000, &[], MSS);
        // Newest delivered: sent at 50 ms with first_tx 20 ms (send interval 30 ms), delivered
        // snapshot 1000 bytes at 20 ms (ACK interval 42 ms).
        assert_eq!((rs.delivered_bytes, rs.interval), (Some(2000), Some(Duration::from_millis(42))));
    }

    #[test]
    fn sacked_segments_count_once_and_the_newest_starts_the_sample() {
        let mut r = RateSampler::default();
        send(&mut r, ms(0), 0, 4, true);
        let rs = ack(&mut r, ms(40), 0, &[(1000, 3000)], 2000);
        assert_eq!(rs.delivered_bytes, Some(2000));
        assert_eq!(rs.acked_sacked_bytes, 2000);
        // The cumulative ACK of 0..4000 delivers 0..1000 and 3000..4000; 1000..3000 is not counted again.
        let rs = ack(&mut r, ms(50), 4000, &[], 2000);
        assert_eq!(rs.delivered_bytes, Some(4000), "all four since the first send");
        assert_eq!(rs.interval, Some(Duration::from_millis(50)));
        let none = ack(&mut r, ms(60), 4000, &[], 0);
        assert_eq!((none.delivered_bytes, none.interval), (None, None), "nothing delivered: no sample");
    }

    #[test]
    fn a_growing_sack_block_delivers_only_what_it_adds() {
        let mut r = RateSampler::default();
        send(&mut r, ms(0), 0, 6, true);
        let a = ack(&mut r, ms(40), 0, &[(1000, 3000)], 2000);
        assert_eq!(a.delivered_bytes, Some(2000));
        // The same block grown by one segment, and a second block: 3000..4000 and 5000..6000 are new.
        r.on_send(ms(41), 6000, MSS, false);
        let b = ack(&mut r, ms(42), 0, &[(1000, 4000), (5000, 6000)], 2000);
        assert_eq!(b.delivered_total_bytes, 4000);
        assert_eq!(r.sacked, vec![(1000, 4000), (5000, 6000)]);
        // The cumulative ACK to 6000 delivers 0..1000 and 4000..5000 only.
        let c = ack(&mut r, ms(43), 6000, &[], 2000);
        assert_eq!(c.delivered_total_bytes, 6000);
        assert!(r.sacked.is_empty(), "what the cumulative ACK covers is forgotten");
        assert_eq!(r.sent.len(), 1, "the segment sent at 41 ms is still out");
    }

    #[test]
    fn an_interval_shorter_than_the_minimum_rtt_gives_no_rate() {
        let mut r = RateSampler::default();
        send(&mut r, ms(0), 0, 1, true);
        let rs = ack(&mut r, ms(5), 1000, &[], MSS); // 5 ms < min RTT 10 ms
        assert_eq!((rs.delivered_bytes, rs.interval), (Some(1000), None));
    }

    #[test]
    fn segments_sent_while_application_limited_are_flagged_until_that_data_is_delivered() {
        let mut r = RateSampler::default();
        send(&mut r, ms(0), 0, 2, true);
        r.check_app_limited(true, 2000, 10_000); // the application ran dry with 2000 in flight
        assert!(r.app_limited());
        send(&mut r, ms(1), 2000, 1, false);
        let a = ack(&mut r, ms(40), 1000, &[], MSS);
        assert!(!a.is_app_limited, "sent before the mark");
        let b = ack(&mut r, ms(41), 2000, &[], MSS);
        assert!(!b.is_app_limited);
        assert!(r.app_limited(), "delivered 2000 = the mark: still limited");
        let c = ack(&mut r, ms(42), 3000, &[], MSS);
        assert!(c.is_app_limited, "sent after the mark");
        assert!(!r.app_limited(), "delivered past the mark: the bubble is over");
        send(&mut r, ms(42), 3000, 1, true);
        let d = ack(&mut r, ms(82), 4000, &[], MSS);
        assert!(!d.is_app_limited);
        // Not marked when the window is full or data is still unsent.
        r.check_app_limited(true, 10_000, 10_000);
        r.check_app_limited(false, 0, 10_000);
        assert!(!r.app_limited());
    }

    #[test]
    fn a_retransmission_takes_a_new_snapshot() {
        let mut r = RateSampler::default();
        send(&mut r, ms(0), 0, 3, true);
        ack(&mut r, ms(40), 0, &[(1000, 3000)], 2000);
        r.on_send(ms(45), 0, MSS, false);
        let rs = ack(&mut r, ms(85), 3000, &[], MSS);
        assert!(rs.is_retrans);
        assert_eq!(rs.prior_delivered_bytes, 2000);
        assert_eq!((rs.delivered_bytes, rs.interval), (Some(1000), Some(Duration::from_millis(45))));
    }
}
