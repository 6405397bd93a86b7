//! What the sender sends and when: the send loop (Linux tcp_output.c `tcp_write_xmit`, FreeBSD
//! `tcp_output`, ns-2 `send_much`), apart from the ACK processing in `sender.rs` (Linux
//! tcp_input.c) as Linux keeps them. A child module of `sender`: the same machine, its other half.
//!
//! Pacing (`tcp::pacing`) and the rate samples' send snapshot (`tcp::rate_sample`) are taken in
//! `send_segment`; a connection with either never runs the open state's fast loop, so neither
//! costs a connection without them anything there. The general loop asks the pacing clock before
//! each segment (Linux `tcp_write_xmit`'s `tcp_pacing_check`); the fast retransmission, the
//! partial-ACK retransmission and the loss probe go without asking, as they are sent outside
//! that loop, and move the clock on.

use ccsim_cc::Time;

use super::{CaState, Sender};
use crate::packet::Packet;
use crate::tcp::rate_sample::RateSampling;
use crate::tcp::recovery::RecoverySend;

impl Sender {
    /// Sends what the windows allow (from the entry points, which count the change).
    pub(super) fn try_send(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.open_fast && self.state != CaState::Recovery && self.dupacks == 0 && self.snd_nxt == self.snd_max {
            self.send_open(now, out);
            return;
        }
        loop {
            if self.pacing.holds(now) {
                return; // the pacing timer (`Sender::pacing_deadline`) resumes the loop
            }
            if self.max_burst > 0 && self.burst_sent >= self.max_burst {
                self.cwnd_limited = true;
                return;
            }
            if self.state == CaState::Recovery {
                let new_data_allowed = self.new_data_allowed();
                match self.recovery.next_in_recovery(self.w.cwnd_bytes, self.outstanding(), new_data_allowed) {
                    RecoverySend::Segment(seq) => {
                        let retransmission = seq < self.snd_max;
                        let len = self.send_segment(now, seq, out);
                        self.burst_sent += 1;
                        self.recovery.sent_in_recovery(seq, len, retransmission);
                        self.snd_nxt = self.snd_nxt.max(self.snd_max);
                        continue;
                    }
                    RecoverySend::CwndLimited => {
                        self.cwnd_limited = true;
                        return;
                    }
                    RecoverySend::Nothing => {
                        self.cwnd_limited = false;
                        return;
                    }
                    RecoverySend::ByWindow => {}
                }
            }
            if !self.send_by_window(now, out) {
                return;
            }
        }
    }

    /// One segment by the ordinary window rule (cwnd, plus NewReno's inflation in recovery or limited
    /// transmit's allowance), going back over what a timeout left outstanding. Returns false when
    /// sending stops (and records why in `cwnd_limited`).
    fn send_by_window(&mut self, now: Time, out: &mut Vec<Packet>) -> bool {
        // Going back after a timeout: skip what the receiver has SACKed since.
        if self.snd_nxt < self.snd_max {
            if let Some(end) = self.recovery.sacked_until(self.snd_nxt) {
                self.snd_nxt = end.min(self.snd_max);
                return true;
            }
        }
        let Some(len) = self.segment_allowed_at(self.snd_nxt) else {
            self.cwnd_limited = false;
            return false;
        };
        let cwnd = self.w.cwnd_bytes.max(self.mss) as i64;
        let mut window = cwnd;
        if self.state == CaState::Recovery {
            window += self.recovery.inflation();
        } else if self.dupacks > 0 && self.snd_nxt == self.snd_max {
            window += self.dupacks.min(self.limited_transmit_segs) as i64 * self.mss as i64; // RFC 3042
        }
        let flight = (self.snd_nxt - self.snd_una) as i64;
        if flight + len as i64 > window.max(self.mss as i64) {
            self.cwnd_limited = true;
            return false;
        }
        let seq = self.snd_nxt;
        let sent = self.send_segment(now, seq, out);
        self.burst_sent += 1;
        if self.state != CaState::Recovery && flight + sent as i64 > cwnd {
            self.limited_transmit_bytes += sent;
        }
        self.snd_nxt = seq + sent;
        true
    }

    /// `try_send` in the open state, the common case: no recovery, no duplicate ACKs (so no
    /// limited transmit, RFC 3042), nothing to go back over after a timeout, no burst limit. The
    /// same rules as the general loop with what cannot apply left out: new segments while the
    /// application has data, the receiver window takes them and FlightSize stays within cwnd
    /// (RFC 5681 section 3; the send loop of FreeBSD `tcp_output`, Linux `tcp_write_xmit`).
    fn send_open(&mut self, now: Time, out: &mut Vec<Packet>) {
        let cwnd = self.w.cwnd_bytes.max(self.mss);
        loop {
            let Some(len) = self.segment_allowed_at(self.snd_nxt) else {
                self.cwnd_limited = false;
                return;
            };
            if self.snd_nxt - self.snd_una + len > cwnd {
                self.cwnd_limited = true;
                return;
            }
            let seq = self.snd_nxt;
            let sent = self.send_segment_inline(now, seq, out);
            self.burst_sent += 1;
            self.snd_nxt = seq + sent;
        }
    }

    /// `send_segment_inline` called: a call everywhere but in the open state's loop; with the
    /// pacing clock (`tcp_update_skb_after_send`) and the rate snapshot (`tcp_rate_skb_sent`).
    #[inline(never)]
    pub(super) fn send_segment(&mut self, now: Time, seq: u64, out: &mut Vec<Packet>) -> u64 {
        let nothing_outstanding = self.snd_una >= self.snd_max;
        let len = self.send_segment_inline(now, seq, out);
        self.pacing.on_send(now, len, self.w.pacing_rate_bytes_per_s);
        if let RateSampling::On(r) = &mut self.rate {
            r.on_send(now, seq, len, nothing_outstanding);
        }
        len
    }

    /// Sends the segment at `seq`; returns its length.
    #[inline(always)]
    fn send_segment_inline(&mut self, now: Time, seq: u64, out: &mut Vec<Packet>) -> u64 {
        let len = self.seg_len(seq);
        debug_assert!(len > 0);
        let retx = seq < self.snd_max;
        let pkt = Packet::data(self.flow, seq, len as u32, self.header, now, retx);
        self.stats.data_pkts_sent += 1;
        self.stats.payload_bytes_sent += len;
        self.stats.wire_bytes_sent += pkt.wire_bytes as u64;
        if retx {
            self.stats.retransmits += 1;
            self.stats.retransmitted_bytes += len;
        } else {
            self.rtt.on_new_data(seq + len, now);
        }
        self.snd_max = self.snd_max.max(seq + len);
        self.last_send = Some(now);
        self.recovery.on_segment_sent(now, seq, len);
        self.round.on_send(seq + len);
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(self.rtt.deadline_from(now));
        }
        out.push(pkt);
        len
    }

    /// The length of the segment at `seq` if the application has data there and the receiver
    /// window takes it (the limits other than cwnd, which leave the flow not cwnd-limited).
    #[inline(always)]
    pub(super) fn segment_allowed_at(&self, seq: u64) -> Option<u64> {
        if seq >= self.app_end {
            return None;
        }
        let len = self.seg_len(seq);
        (seq + len - self.snd_una <= self.rwnd).then_some(len)
    }

    /// The application has new data and the receiver window takes the next segment.
    pub(super) fn new_data_allowed(&self) -> bool {
        self.segment_allowed_at(self.snd_max).is_some()
    }

    pub(super) fn seg_len(&self, seq: u64) -> u64 {
        self.mss.min(self.app_end.saturating_sub(seq))
    }
}
