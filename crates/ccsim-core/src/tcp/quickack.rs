//! Delayed ACKs as a Linux receiver sends them (`delayed_ack_rule = "linux"`): quick-ack mode and the
//! adaptive delayed-ACK timeout (ATO). RFC 5681 section 4.2 only bounds the delay (an ACK at least
//! every second full-sized segment, within 500 ms); this is how Linux fills that in
//! (net/ipv4/tcp_input.c `tcp_event_data_recv`, `tcp_incr_quickack`, `tcp_enter_quickack_mode`,
//! `__tcp_ack_snd_check`; net/ipv4/tcp_output.c `tcp_send_delayed_ack`; include/net/tcp.h
//! `tcp_dec_quickack_mode`; net/ipv4/tcp_timer.c `tcp_delack_timer_handler`).
//!
//! In:
//! * Quick-ack mode: the first in-order data segment, and in-order data after a silence longer than
//!   the receiver's RTO, give `min(rwnd / (2 MSS), 16)` quick ACKs (at least 2): while any are left
//!   every data segment is ACKed at once, and each ACK sent uses one (`tcp_incr_quickack`,
//!   `TCP_MAX_QUICKACKS`, `tcp_dec_quickack_mode`). Old data (a spurious retransmission) enters
//!   quick-ack mode again (`tcp_enter_quickack_mode` in `tcp_data_queue`).
//! * Otherwise an ACK once more than one MSS of data is unacknowledged (`rcv_nxt - rcv_wup >
//!   rcv_mss`), at once for out-of-order data and for data that fills a hole, else on the
//!   delayed-ACK timer.
//! * The timer runs ATO, which starts at `TCP_ATO_MIN` (the configured `delayed_ack_timeout`, 40 ms
//!   in Linux) and follows the inter-arrival time m of in-order data: m <= ATO_MIN/2 gives
//!   ATO/2 + ATO_MIN/2, m < ATO gives min(ATO/2 + m, RTO); a timer that fires doubles it (at most
//!   the RTO); leaving quick-ack mode resets it to ATO_MIN. The timer is min(ATO, 500 ms,
//!   `TCP_DELACK_MAX` 200 ms) and keeps an earlier deadline.
//!
//! Out (see docs/linux-tcp.md): SACK compression of dupACKs (`tcp_comp_sack_nr`), the quick ACKs
//! given while the receive window grows (`tcp_grow_window`: the window is fixed here), pingpong
//! (interactive) mode, `ICSK_ACK_PUSHED`, and the receiver's own RTT estimate: the handshake is not
//! simulated, so the receiver's RTO is the initial RTO and its ATO is not bounded by an SRTT.

use std::time::Duration;

use ccsim_cc::Time;

/// `TCP_MAX_QUICKACKS`.
pub const MAX_QUICKACKS: u32 = 16;
/// `TCP_DELACK_MAX` (HZ/5).
pub const DELACK_MAX: Duration = Duration::from_millis(200);
/// The ATO bound without an RTT estimate (HZ/2 in `tcp_send_delayed_ack`).
const ATO_BOUND: Duration = Duration::from_millis(500);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuickAck {
    /// Quick ACKs left (`icsk_ack.quick`).
    quick: u32,
    /// The delayed-ACK timeout estimate; zero before the first data segment (`icsk_ack.ato`).
    ato: Duration,
    /// Arrival of the last in-order data (`icsk_ack.lrcvtime`).
    last_rcv: Option<Time>,
    ato_min: Duration,
    /// The receiver's retransmission timeout (bounds ATO and defines a long silence).
    rto: Duration,
    /// `rcv_wnd / (2 * rcv_mss)`, at least 2, at most `MAX_QUICKACKS`.
    quickacks: u32,
}

impl QuickAck {
    pub fn new(ato_min: Duration, receiver_rto: Duration, rwnd_bytes: u64, mss: u64) -> QuickAck {
        let quickacks = match rwnd_bytes / (2 * mss.max(1)) {
            0 => 2,
            q => q.min(MAX_QUICKACKS as u64) as u32,
        };
        QuickAck { quick: 0, ato: Duration::ZERO, last_rcv: None, ato_min, rto: receiver_rto, quickacks }
    }

    /// `tcp_incr_quickack`.
    fn incr_quickack(&mut self) {
        self.quick = self.quick.max(self.quickacks);
    }

    /// In-order data arrived (`tcp_event_data_recv`).
    pub fn on_in_order_data(&mut self, now: Time) {
        if self.ato.is_zero() {
            self.incr_quickack(); // the first data segment
            self.ato = self.ato_min;
        } else if let Some(last) = self.last_rcv {
            let m = now - last;
            if m <= self.ato_min / 2 {
                self.ato = self.ato / 2 + self.ato_min / 2;
            } else if m < self.ato {
                self.ato = (self.ato / 2 + m).min(self.rto);
            } else if m > self.rto {
                self.incr_quickack(); // the sender restarts after a silence: ACK quickly
            }
        }
        self.last_rcv = Some(now);
    }

    /// Data the receiver already had (`tcp_enter_quickack_mode` for old data).
    pub fn on_old_data(&mut self) {
        self.incr_quickack();
        self.ato = self.ato_min;
    }

    pub fn in_quickack_mode(&self) -> bool {
        self.quick > 0
    }

    /// An ACK was sent in reply to data (`tcp_dec_quickack_mode`).
    pub fn on_ack_sent(&mut self) {
        if self.quick > 0 {
            self.quick -= 1;
            if self.quick == 0 {
                self.ato = self.ato_min; // leaving quick-ack mode deflates ATO
            }
        }
    }

    /// The delayed-ACK timer fired with an ACK held back (`tcp_delack_timer_handler`).
    pub fn on_timer_fired(&mut self) {
        self.ato = (self.ato * 2).min(self.rto);
    }

    /// How long the next ACK may be held back (`tcp_send_delayed_ack`).
    pub fn timeout(&self) -> Duration {
        let mut ato = self.ato.max(self.ato_min);
        if ato > self.ato_min {
            ato = ato.min(ATO_BOUND);
        }
        ato.min(DELACK_MAX)
    }

    pub fn ato(&self) -> Duration {
        self.ato
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    fn at(x: u64) -> Time {
        Time::from_millis(x)
    }

    #[test]
    fn quickacks_are_half_the_window_in_segments_at_most_16_at_least_2() {
        assert_eq!(QuickAck::new(ms(40), ms(1000), 64 << 20, 1448).quickacks, 16);
        assert_eq!(QuickAck::new(ms(40), ms(1000), 10 * 1448, 1448).quickacks, 5);
        assert_eq!(QuickAck::new(ms(40), ms(1000), 1448, 1448).quickacks, 2);
    }

    #[test]
    fn first_data_gives_16_quick_acks_then_ato_min() {
        let mut q = QuickAck::new(ms(40), ms(1000), 64 << 20, 1448);
        assert!(!q.in_quickack_mode());
        let mut quick = 0;
        for k in 0..40 {
            q.on_in_order_data(at(k));
            if q.in_quickack_mode() {
                quick += 1;
                q.on_ack_sent();
            }
        }
        assert_eq!(quick, 16);
        assert_eq!(q.timeout(), ms(40), "back-to-back data keeps ATO at ATO_MIN");
    }

    #[test]
    fn ato_follows_interarrival_doubles_on_timer_and_caps_at_delack_max() {
        let mut q = QuickAck::new(ms(40), ms(1000), 64 << 20, 1448);
        q.on_in_order_data(at(0));
        for _ in 0..16 {
            q.on_ack_sent();
        }
        assert_eq!(q.ato(), ms(40));
        q.on_in_order_data(at(30)); // 20 < m = 30 < ATO 40: ATO = 20 + 30
        assert_eq!(q.ato(), ms(50));
        q.on_in_order_data(at(40)); // m = 10 <= 20: ATO = 25 + 20
        assert_eq!(q.ato(), ms(45));
        q.on_timer_fired();
        assert_eq!(q.ato(), ms(90));
        q.on_timer_fired();
        q.on_timer_fired();
        assert_eq!(q.ato(), ms(360));
        assert_eq!(q.timeout(), ms(200), "TCP_DELACK_MAX");
    }

    #[test]
    fn silence_longer_than_rto_and_old_data_restart_quick_acks() {
        let mut q = QuickAck::new(ms(40), ms(1000), 64 << 20, 1448);
        q.on_in_order_data(at(0));
        for _ in 0..16 {
            q.on_ack_sent();
        }
        q.on_in_order_data(at(500));
        assert!(!q.in_quickack_mode(), "500 ms < RTO");
        q.on_in_order_data(at(1600));
        assert!(q.in_quickack_mode(), "1.1 s > RTO 1 s");
        for _ in 0..16 {
            q.on_ack_sent();
        }
        q.on_old_data();
        assert!(q.in_quickack_mode());
    }
}
