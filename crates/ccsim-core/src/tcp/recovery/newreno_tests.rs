//! Scripted ACKs for NewReno recovery without SACK (RFC 6582, `recovery/newreno.rs`): the fast
//! retransmit and limited transmit, inflation, partial ACKs and their timer, the full ACK, and
//! timeouts during recovery. Hand-computed windows; the algorithm is NewReno.
use super::testkit::*;
use super::*;
use crate::scenario::TcpConfig;
use crate::scenario::PartialAckRto;

/// Segment 0 lost: two dupacks send two segments by limited transmit, the third enters fast
/// retransmit with ssthresh = FlightSize/2 excluding the limited-transmit segments.
fn into_recovery() -> Sender {
    into_recovery_with(cfg(false))
}

/// `into_recovery` with the configuration `c` (SACK off).
fn into_recovery_with(c: TcpConfig) -> Sender {
    let (mut s, _) = sender_with(c, None);
    let mut out = Vec::new();
    s.on_ack(at(40), &ack(0, 0, false), &[], &mut out);
    s.on_ack(at(41), &ack(0, 0, false), &[], &mut out);
    assert_eq!(seqs(&out), vec![(10 * MSS, false), (11 * MSS, false)], "RFC 3042 limited transmit");
    out.clear();
    s.on_ack(at(42), &ack(0, 0, false), &[], &mut out);
    assert!(s.in_fast_recovery());
    assert_eq!(s.stats.fast_retransmits, 1);
    assert_eq!(out[0].seq, 0, "fast retransmit of the first unacked segment");
    assert!(out[0].retx);
    s
}

#[test]
fn third_dupack_enters_fast_retransmit_with_half_flight() {
    let s = into_recovery();
    // FlightSize 12000 minus 2000 of limited transmit = 10000 -> ssthresh 5000.
    assert_eq!(s.w.ssthresh_bytes, 5 * MSS);
    assert_eq!(s.w.cwnd_bytes, 5 * MSS);
    assert_eq!(s.effective_cwnd(), 8 * MSS, "cwnd = ssthresh + 3*SMSS (RFC 6582 step 2)");
    assert_eq!(s.recover, 12 * MSS);
}

#[test]
fn further_dupacks_inflate_by_one_mss_and_release_new_data() {
    let mut s = into_recovery();
    let mut out = Vec::new();
    for i in 0..5 {
        s.on_ack(at(43 + i), &ack(0, 0, false), &[], &mut out);
    }
    // Window 8000 + 5000 = 13000 against FlightSize 12000 -> one new segment.
    assert_eq!(s.effective_cwnd(), 13 * MSS);
    assert_eq!(seqs(&out), vec![(12 * MSS, false)]);
}

#[test]
fn partial_ack_retransmits_next_hole_and_deflates() {
    let mut s = into_recovery();
    let mut out = Vec::new();
    let before = s.effective_cwnd(); // 8000
    s.on_ack(at(80), &ack(4 * MSS, 30, true), &[], &mut out);
    // Partial ACK of 4000: retransmit segment 4; window 8000 - 4000 + 1000 = 5000.
    assert_eq!(out[0].seq, 4 * MSS);
    assert!(out[0].retx);
    assert_eq!(s.effective_cwnd(), before - 4 * MSS + MSS);
    assert!(s.in_fast_recovery(), "a partial ACK does not end recovery");
}

#[test]
fn the_fast_retransmit_restarts_the_timer() {
    // Armed at 0 by the first window; the fast retransmit at 42 ms re-arms it (FreeBSD, Linux,
    // ns-2 all do): a timer left running from 0 could fire while the retransmission is in flight.
    let s = into_recovery();
    assert_eq!(s.rto_deadline(), Some(at(42) + s.rtt.rto()));
}

#[test]
fn every_partial_ack_restarts_the_timer_unless_only_the_first_should() {
    for (variant, second_restarts) in [(PartialAckRto::Every, true), (PartialAckRto::First, false)] {
        let mut s = into_recovery_with(TcpConfig { partial_ack_rto: variant, ..cfg(false) });
        let mut out = Vec::new();
        s.on_ack(at(80), &ack(2 * MSS, 30, true), &[], &mut out);
        let first = Some(at(80) + s.rtt.rto());
        assert_eq!(s.rto_deadline(), first, "{variant:?}: the first partial ACK restarts it");
        s.on_ack(at(120), &ack(4 * MSS, 30, true), &[], &mut out);
        assert!(s.in_fast_recovery());
        let want = if second_restarts { Some(at(120) + s.rtt.rto()) } else { first };
        assert_eq!(s.rto_deadline(), want, "{variant:?}: the second partial ACK");
    }
}

#[test]
fn full_ack_exits_recovery_with_cwnd_min_of_ssthresh_and_flight_plus_mss() {
    let mut s = into_recovery();
    let mut out = Vec::new();
    s.on_ack(at(80), &ack(12 * MSS, 42, true), &[], &mut out);
    assert!(!s.in_fast_recovery());
    // FlightSize after the ACK is 0 -> cwnd = min(5000, max(0, 1000) + 1000) = 2000.
    assert_eq!(s.w.cwnd_bytes, 2 * MSS);
    assert_eq!(s.w.ssthresh_bytes, 5 * MSS);
}

#[test]
fn rto_during_recovery_collapses_to_one_segment_and_goes_back() {
    let mut s = into_recovery();
    let mut out = Vec::new();
    s.on_rto(at(1000), &mut out);
    assert!(!s.in_fast_recovery());
    assert_eq!(s.stats.timeouts, 1);
    assert_eq!(s.w.cwnd_bytes, MSS, "loss window");
    // First expiry: the span 12000 less the 3000 the dupacks reported delivered, bounded by the
    // deflated cwnd 5000 (what is in the network, see `in_flight`): ssthresh = 5000/2.
    assert_eq!(s.w.ssthresh_bytes, 5 * MSS / 2);
    assert_eq!(seqs(&out), vec![(0, true)], "go-back-N from snd_una");
    assert_eq!(s.recover, 12 * MSS, "recover = highest sent");
}

/// A long NewReno recovery without SACK: every dupack inflates the window by one MSS and lets one
/// new segment out, so the span grows to several windows while the network holds about cwnd.
fn into_long_recovery() -> Sender {
    let mut s = into_recovery();
    let mut out = Vec::new();
    for i in 0..40 {
        s.on_ack(at(43 + i), &ack(0, 0, false), &[], &mut out);
    }
    assert_eq!(s.w.cwnd_bytes, 5 * MSS);
    assert_eq!(s.flight_size(), 48 * MSS, "window 8000 + 40 inflated MSS");
    s
}

#[test]
fn rto_during_long_newreno_recovery_halves_the_deflated_window_not_the_span() {
    // The SACK-off collapse: halving the span (48000) gave ssthresh 24000, several times what
    // the path holds, then overshoot and timeouts again.
    let mut s = into_long_recovery();
    let mut out = Vec::new();
    s.on_rto(at(1000), &mut out);
    // In the network: span 48000 less the inflation 43000 = 5000, and never more than cwnd 5000.
    assert_eq!(s.w.ssthresh_bytes, 5 * MSS / 2);
    assert_eq!(s.w.cwnd_bytes, MSS);
}

#[test]
fn fast_retransmit_after_an_inflated_recovery_halves_cwnd_not_the_leftover_span() {
    let mut s = into_long_recovery();
    let mut out = Vec::new();
    // Full ACK: recovery ends with cwnd = min(ssthresh, FlightSize + MSS) = 5000, but the data the
    // inflated window let out is still outstanding.
    s.on_ack(at(80), &ack(12 * MSS, 42, true), &[], &mut out);
    assert!(!s.in_fast_recovery());
    assert_eq!(s.w.cwnd_bytes, 5 * MSS);
    assert_eq!(s.flight_size(), 36 * MSS);
    for i in 0..3 {
        s.on_ack(at(90 + i), &ack(12 * MSS, 50, false), &[], &mut out);
    }
    assert_eq!(s.stats.fast_retransmits, 2);
    assert_eq!(s.w.ssthresh_bytes, 5 * MSS / 2, "cwnd/2, not FlightSize 36000/2");
}
