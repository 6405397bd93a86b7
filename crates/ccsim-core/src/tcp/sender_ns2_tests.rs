//! The machine's ns-2 knobs (the `ns2` profile, docs/profiles.md), each against its ns-2.35 rule and
//! against the default behaviour it replaces. MSS 1000, NewReno, hand-computed values.
use std::time::Duration;

use ccsim_cc::{ParamMap, Rng, Time};

use super::Sender;
use crate::packet::{Packet, PacketKind};
use crate::scenario::{RtoEstimator, TcpConfig};

const MSS: u64 = 1000;

fn cfg() -> TcpConfig {
    TcpConfig { mss_bytes: MSS, header_bytes: 40, initial_window_pkts: 10, sack: false, ..crate::fixtures::tcp_config() }
}

fn start(c: &TcpConfig) -> (Sender, Vec<Packet>) {
    let cc = ccsim_cc::build("newreno", &ParamMap::new(), &Sender::cc_init(c, Rng::new(1, 1))).unwrap();
    let mut s = Sender::new(0, c, cc, None);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    (s, out)
}

fn ack(seq: u64, echo_ms: u64) -> Packet {
    let mut p = Packet::data(0, 0, 0, 40, Time::from_millis(echo_ms), false);
    p.kind = PacketKind::Ack;
    p.seq = seq;
    p
}

fn at(ms: u64) -> Time {
    Time::from_millis(ms)
}

#[test]
fn max_burst_limits_segments_per_event() {
    let (_, unlimited) = start(&cfg());
    assert_eq!(unlimited.len(), 10, "max_burst 0: the whole initial window at once");
    let (mut s, out) = start(&TcpConfig { max_burst_pkts: 3, ..cfg() });
    assert_eq!(out.len(), 3, "maxburst_ 3: the window allows 10, one event sends 3");
    // An ACK of one segment: the window (ABC: cwnd 11000, 2000 in flight) allows 9 more; 3 leave.
    let mut out = Vec::new();
    s.on_ack(at(40), &ack(MSS, 0), &[], &mut out);
    assert_eq!(out.len(), 3);
    let mut out = Vec::new();
    s.on_ack(at(41), &ack(2 * MSS, 0), &[], &mut out);
    assert_eq!(out.len(), 3, "the count starts again with each event");
}

#[test]
fn max_burst_does_not_hold_back_the_fast_retransmission() {
    let (mut s, _) = start(&TcpConfig { max_burst_pkts: 1, ..cfg() });
    let mut out = Vec::new();
    s.on_ack(at(40), &ack(MSS, 0), &[], &mut out); // 1 new segment (burst 1)
    for t in 41..44 {
        out.clear();
        s.on_ack(at(t), &ack(MSS, 0), &[], &mut out);
    }
    assert!(s.in_fast_recovery());
    assert_eq!(out[0].seq, MSS, "the fast retransmission leaves");
    assert!(out[0].retx);
    assert!(out.len() <= 2, "at most one more segment from the send loop: {:?}", out.len());
}

/// Segment 0 lost with an initial window of 11: the third duplicate ACK halves 11 segments.
fn fast_retransmit_with_odd_window(whole: bool) -> Sender {
    let c = TcpConfig { initial_window_pkts: 11, limited_transmit: false, ssthresh_whole_packets: whole, ..cfg() };
    let (mut s, _) = start(&c);
    let mut out = Vec::new();
    for t in 40..43 {
        s.on_ack(at(t), &ack(0, 0), &[], &mut out);
    }
    assert!(s.in_fast_recovery());
    s
}

#[test]
fn whole_packet_ssthresh_rounds_down_and_leaves_cwnd_unrounded() {
    let bytes = fast_retransmit_with_odd_window(false);
    assert_eq!((bytes.w.ssthresh_bytes, bytes.w.cwnd_bytes), (5500, 5500), "FlightSize 11000 / 2");
    let pkts = fast_retransmit_with_odd_window(true);
    assert_eq!(pkts.w.ssthresh_bytes, 5 * MSS, "ns-2 slowdown: ssthresh_ = (int) 5.5");
    assert_eq!(pkts.w.cwnd_bytes, 5500, "cwnd_ = 5.5 packets");
    assert!(!pkts.w.in_slow_start(), "cwnd above ssthresh: congestion avoidance, as ns-2");
}

#[test]
fn whole_packet_ssthresh_is_at_least_two_packets_after_a_timeout() {
    let c = TcpConfig { initial_window_pkts: 1, ssthresh_whole_packets: true, ..cfg() };
    let (mut s, _) = start(&c);
    let mut out = Vec::new();
    s.on_rto(at(1000), &mut out);
    assert_eq!(s.w.ssthresh_bytes, 2 * MSS);
    assert_eq!(s.w.cwnd_bytes, MSS);
}

fn ns2_cfg(min_rto_ms: u64) -> TcpConfig {
    TcpConfig {
        rto_estimator: RtoEstimator::Ns2,
        timer_granularity_ns: 10_000_000,
        min_rto_ns: min_rto_ms * 1_000_000,
        initial_rto_ns: 3_000_000_000,
        ..cfg()
    }
}

#[test]
fn ns2_timer_uses_whole_ticks_and_one_timed_segment() {
    // min RTO 10 ms so the estimate itself shows. First ACK at 45 ms for the first segment, sent at 0:
    // RFC 6298 (G = 1 ms): srtt 45, rttvar 22.5 -> RTO 135 ms. ns-2 (10 ms ticks): 4 ticks, t_srtt 32,
    // t_rttvar 8 -> rtxcur = (8*8 + 32) >> 3 = 12 ticks = 120 ms.
    let rfc = TcpConfig { rto_estimator: RtoEstimator::Rfc6298, min_rto_ns: 10_000_000, ..cfg() };
    let (mut a, _) = start(&rfc);
    let (mut b, _) = start(&ns2_cfg(10));
    assert_eq!(b.rto_deadline(), Some(at(3000)), "rtxcur_init_ 3 s before any sample");
    let mut out = Vec::new();
    a.on_ack(at(45), &ack(MSS, 0), &[], &mut out);
    b.on_ack(at(45), &ack(MSS, 0), &[], &mut out);
    assert_eq!(a.rto_deadline(), Some(at(45) + Duration::from_millis(135)));
    assert_eq!(b.rto_deadline(), Some(at(45 + 120)));
    assert_eq!(b.srtt(), Some(Duration::from_millis(40)));
    // The next ACK (segment 2, also sent at 0) is not timed by ns-2; the segment timed now is the
    // first one sent after the first ACK.
    a.on_ack(at(60), &ack(2 * MSS, 0), &[], &mut out);
    b.on_ack(at(60), &ack(2 * MSS, 0), &[], &mut out);
    assert_ne!(a.srtt(), Some(Duration::from_millis(45)), "RFC 6298 folds every ACK in");
    assert_eq!(b.srtt(), Some(Duration::from_millis(40)), "ns-2: one timed segment per RTT");
    assert_eq!(b.rto_deadline(), Some(at(60 + 120)));
}

#[test]
fn the_timer_restarts_at_the_fast_retransmit_with_either_estimator() {
    let (mut a, _) = start(&TcpConfig { limited_transmit: false, ..cfg() });
    let (mut b, _) = start(&TcpConfig { limited_transmit: false, ..ns2_cfg(200) });
    let rfc = TcpConfig { rto_estimator: RtoEstimator::Rfc6298, initial_rto_ns: 1_000_000_000, ..cfg() };
    let (mut c, _) = start(&TcpConfig { limited_transmit: false, ..rfc });
    let mut out = Vec::new();
    for t in [40, 41, 500] {
        a.on_ack(at(t), &ack(0, 0), &[], &mut out);
        b.on_ack(at(t), &ack(0, 0), &[], &mut out);
        c.on_ack(at(t), &ack(0, 0), &[], &mut out);
    }
    assert!(a.in_fast_recovery() && b.in_fast_recovery() && c.in_fast_recovery());
    // FreeBSD tcp_do_segment / Linux tcp_xmit_retransmit_queue: re-armed with the unsampled RTO,
    // FreeBSD's TCPTV_RTOBASE (3 s) and RFC 6298's 1 s.
    assert_eq!(a.rto_deadline(), Some(at(500 + 3000)), "the timer armed at 0 no longer runs on");
    assert_eq!(c.rto_deadline(), Some(at(500 + 1000)), "the timer armed at 0 no longer runs on");
    assert_eq!(b.rto_deadline(), Some(at(500 + 3000)), "ns-2 reset_rtx_timer(1, 0) at 500 ms");
}

#[test]
fn ns2_timer_backs_off_from_minrto_and_restarts_after_a_sample() {
    let (mut s, _) = start(&ns2_cfg(200));
    let mut out = Vec::new();
    s.on_ack(at(40), &ack(MSS, 0), &[], &mut out); // 4 ticks: rtxcur 120 ms -> minrto_ 200 ms
    let end = s.snd_max();
    s.on_rto(at(1000), &mut out);
    assert_eq!(s.rto_deadline(), Some(at(1400)), "minrto_ x 2");
    s.on_rto(at(1400), &mut out);
    assert_eq!(s.rto_deadline(), Some(at(2200)), "minrto_ x 4");
    assert_eq!(s.stats().timeouts, 2);
    // Retransmissions are not timed: their ACK ends neither the backoff nor gives a sample.
    s.on_ack(at(2240), &ack(2 * MSS, 1400), &[], &mut out);
    assert_eq!(s.rto_deadline(), Some(at(2240 + 800)), "still backed off");
    assert!(end > 2 * MSS);
}
