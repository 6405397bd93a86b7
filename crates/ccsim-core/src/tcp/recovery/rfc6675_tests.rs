//! Scripted ACKs for RFC 6675 recovery (`recovery/rfc6675.rs`) with each of its loss-detection
//! parts (duplicate ACKs with IsLost(), RACK-TLP) and window parts (RFC 6675, PRR).
use ccsim_cc::{ParamMap, Rng, Time};

use super::testkit::*;
use super::*;
use crate::scenario::TcpConfig;
use crate::scenario::{LossDetection, RecoveryWindow};

#[test]
fn rto_during_sack_recovery_halves_pipe_not_the_sequence_span() {
    let (mut s, _) = sender(true);
    let mut out = Vec::new();
    // Segment 0 lost; SACKs for 1..=40 keep arriving, so new data flows during recovery.
    for k in 2..=41 {
        s.on_ack(at(40 + k), &ack(0, 0, false), &[(MSS, k * MSS)], &mut out);
    }
    assert!(s.in_fast_recovery());
    let span = s.flight_size();
    let pipe = s.pipe();
    assert!(span > 3 * pipe, "span {span} pipe {pipe}");
    s.on_rto(at(2000), &mut out);
    assert_eq!(s.w.ssthresh_bytes, (pipe / 2).max(2 * MSS), "ssthresh from the pipe, not from snd_max - snd_una");
}

#[test]
fn halve_from_pipe_halves_flight_less_sacked_and_lost_segments_at_fast_retransmit() {
    // Segments 0 and 2 lost out of IW 10; dupacks SACK 1, then 3, then 4, and limited transmit
    // sends 10 and 11. FlightSize without limited transmit is 10 segments; the pipe, with the
    // head lost, is 12 sent - 3 SACKed - 1 lost = 8 (segment 2 is not yet deemed lost).
    let ssthresh_with = |halve_from: &str| {
        let c = cfg(true);
        let mut given = ParamMap::new();
        given.insert("halve_from".into(), ccsim_cc::ParamValue::Text(halve_from.into()));
        let cc = ccsim_cc::build("newreno", &given, &Sender::cc_init(&c, Rng::new(1, 1))).unwrap();
        let mut s = Sender::new(0, &c, cc, None);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        for (t, blocks) in [(40, vec![(MSS, 2 * MSS)]), (41, vec![(3 * MSS, 4 * MSS), (MSS, 2 * MSS)]), (42, vec![(3 * MSS, 5 * MSS), (MSS, 2 * MSS)])] {
            s.on_ack(at(t), &ack(0, 0, false), &blocks, &mut out);
        }
        assert!(s.in_fast_recovery());
        assert_eq!(s.snd_max, 12 * MSS);
        s.w.ssthresh_bytes
    };
    assert_eq!(ssthresh_with("flight"), 5 * MSS, "RFC 5681: FlightSize / 2");
    assert_eq!(ssthresh_with("pipe"), 4 * MSS, "ns-3: pipe / 2");
}

#[test]
fn sack_recovery_retransmits_only_the_holes_and_uses_pipe() {
    let (mut s, _) = sender(true);
    let mut out = Vec::new();
    // Segments 0 and 2 lost; 1 and 3..9 arrive: each dupack carries the SACK blocks.
    let dup = |s: &mut Sender, blocks: &[(u64, u64)], t: u64, out: &mut Vec<Packet>| {
        s.on_ack(at(t), &ack(0, 0, false), blocks, out);
    };
    dup(&mut s, &[(MSS, 2 * MSS)], 40, &mut out);
    dup(&mut s, &[(3 * MSS, 4 * MSS), (MSS, 2 * MSS)], 41, &mut out);
    dup(&mut s, &[(3 * MSS, 5 * MSS), (MSS, 2 * MSS)], 42, &mut out);
    assert!(s.in_fast_recovery(), "3 dupacks");
    let retx: Vec<u64> = out.iter().filter(|p| p.retx).map(|p| p.seq).collect();
    assert_eq!(retx, vec![0], "first hole retransmitted at entry");
    out.clear();
    // ssthresh = cwnd = (12000 - 2000 limited transmit)/2 = 5000. With segments 3..5 SACKed,
    // pipe = 6000 not-lost + 1000 retransmitted = 7000 > cwnd: nothing may be sent yet.
    dup(&mut s, &[(3 * MSS, 6 * MSS), (MSS, 2 * MSS)], 43, &mut out);
    assert_eq!(s.pipe(), 7 * MSS);
    assert!(out.is_empty());
    for k in 7..=12 {
        dup(&mut s, &[(3 * MSS, k * MSS), (MSS, 2 * MSS)], 40 + k, &mut out);
    }
    // Everything above segment 2 SACKed: rule 1 retransmits the hole, rule 2 then sends new data.
    let retx: Vec<u64> = out.iter().filter(|p| p.retx).map(|p| p.seq).collect();
    assert_eq!(retx, vec![2 * MSS], "only the holes are retransmitted");
    assert!(out.iter().any(|p| !p.retx && p.seq == 12 * MSS), "new data once pipe allows");
    assert!(s.pipe() <= s.w.cwnd_bytes, "sending stops when pipe reaches cwnd");
}

/// IW 20, SACK, limited transmit off; segment 0 lost and the others SACKed one per ACK from
/// 40 ms. Returns the segments sent in reply to each ACK after the one that starts recovery.
fn sends_per_ack_in_recovery(window: RecoveryWindow) -> Vec<usize> {
    let c = TcpConfig { initial_window_pkts: 20, limited_transmit: false, recovery_window: window, ..cfg(true) };
    let (mut s, _) = sender_with(c, None);
    let mut out = Vec::new();
    let mut per_ack = Vec::new();
    for k in 1..20 {
        out.clear();
        s.on_ack(at(40 + k), &ack(0, 0, false), &[(MSS, (k + 1) * MSS)], &mut out);
        if k == 3 {
            assert!(s.in_fast_recovery(), "third SACKed segment: IsLost(0)");
            assert_eq!(s.w.ssthresh_bytes, 10 * MSS);
            assert_eq!(seqs(&out), vec![(0, true)], "only the fast retransmission");
        } else if k > 3 {
            per_ack.push(out.len());
        }
    }
    per_ack
}

#[test]
fn prr_spreads_the_reduction_one_segment_per_two_delivered() {
    // RFC 6937: with RecoverFS = 20 (cwnd before) and ssthresh 10, sndcnt = CEIL(10 * delivered /
    // 20) - prr_out: after the retransmission on the entering ACK, a new segment on every second
    // SACK. RFC 6675 sets cwnd = ssthresh = 10 at once and sends nothing until pipe < 10.
    let prr = sends_per_ack_in_recovery(RecoveryWindow::Prr);
    assert_eq!(prr[..8], [0, 1, 0, 1, 0, 1, 0, 1]);
    // RFC 6675: pipe is 17 segments at entry (19 unSACKed less the lost one plus its
    // retransmission), so the first new segment waits for the eighth ACK (pipe 9 < cwnd 10).
    let rfc6675 = sends_per_ack_in_recovery(RecoveryWindow::Rfc6675);
    assert_eq!(rfc6675[..8], [0, 0, 0, 0, 0, 0, 0, 1]);
}

fn rack_cfg(rack: bool) -> TcpConfig {
    let loss_detection = if rack { LossDetection::RackTlp } else { LossDetection::Dupack };
    // The deadlines below are computed with RFC 6298's timer and a 200 ms floor.
    rfc6298_timer(TcpConfig { loss_detection, limited_transmit: false, ..cfg(true) })
}

#[test]
fn rack_marks_a_segment_lost_after_the_reordering_window_without_three_dupacks() {
    // A 10-segment transfer sent at t = 0; segment 1 lost. The ACK of segment 0 at 40 ms gives
    // SRTT = min_RTT = 40 ms; one SACK (segment 2) at 41 ms is a single duplicate ACK.
    for rack in [true, false] {
        let (mut s, _) = sender_with(rack_cfg(rack), Some(10 * MSS));
        let mut out = Vec::new();
        s.on_ack(at(40), &ack(MSS, 0, false), &[], &mut out);
        s.on_ack(at(41), &ack(MSS, 0, false), &[(2 * MSS, 3 * MSS)], &mut out);
        assert!(!s.in_fast_recovery());
        if rack {
            // RACK.rtt 41 ms + reo_wnd min(40/4, 40) = 10 ms after segment 1's send: 51 ms, + 2 ms.
            assert_eq!(s.timer_deadline(), Some(at(53)));
            out.clear();
            s.on_timer(at(53), &mut out);
            assert!(s.in_fast_recovery());
            assert_eq!(seqs(&out), vec![(MSS, true)], "segment 1 retransmitted at the reordering timeout");
            assert_eq!((s.stats.fast_retransmits, s.stats.timeouts), (1, 0));
            assert_eq!(s.rack_marked_lost(), 1);
        } else {
            // The duplicate-ACK rule waits for two more duplicate ACKs or the RTO.
            assert_eq!(s.timer_deadline(), s.rto_deadline());
            assert_eq!(s.timer_deadline(), Some(at(240)));
        }
    }
}

#[test]
fn rack_retransmits_a_lost_retransmission_without_waiting_for_the_rto() {
    let (mut s, _) = sender_with(rack_cfg(true), None);
    let mut out = Vec::new();
    s.on_ack(at(40), &ack(MSS, 0, false), &[], &mut out); // segment 0: SRTT 40; cwnd 11, 2 new segments
    // Segment 1 lost: SACKs of 2, 3, 4 (sent at 0) -> reo_wnd 0 at the third: recovery.
    for k in 2..5 {
        s.on_ack(at(39 + k), &ack(MSS, 0, false), &[(2 * MSS, (k + 1) * MSS)], &mut out);
    }
    assert!(s.in_fast_recovery());
    assert_eq!(s.stats.retransmits, 1);
    // The retransmission (sent at 43 ms) is lost as well. More SACKs bring pipe below cwnd and new
    // segments go out after it; once one of those is SACKed, 40 ms later, RACK finds the
    // retransmission overdue and sends it again, long before the RTO (240 ms).
    out.clear();
    for k in 5..12 {
        s.on_ack(at(39 + k), &ack(MSS, 0, false), &[(2 * MSS, (k + 1) * MSS)], &mut out);
    }
    assert_eq!(s.stats.retransmits, 1);
    let later = out.iter().find(|p| !p.retx && p.seq >= 12 * MSS).expect("new data after the retransmission");
    let (seq, sent_ms) = (later.seq, later.tx_time.0 / 1_000_000);
    assert!(sent_ms > 43);
    s.on_ack(at(sent_ms + 40), &ack(MSS, sent_ms, false), &[(2 * MSS, seq + MSS)], &mut out);
    assert_eq!(s.stats.retransmits, 2, "lost retransmission detected by RACK");
    assert_eq!(s.stats.timeouts, 0);
    assert!(out.iter().any(|p| p.seq == MSS && p.retx && p.tx_time == at(sent_ms + 40)));
}

#[test]
fn tail_loss_probe_recovers_the_last_two_segments_without_a_timeout() {
    // Ten segments at t = 0; the last two are lost. The ACK of 0..7 at 40 ms arms the probe:
    // PTO = 2 * SRTT + 2 ms = 82 ms (< RTO 200 ms).
    for rack in [true, false] {
        let (mut s, _) = sender_with(rack_cfg(rack), Some(10 * MSS));
        let mut out = Vec::new();
        s.on_ack(at(40), &ack(8 * MSS, 0, false), &[], &mut out);
        if !rack {
            assert_eq!(s.timer_deadline(), Some(at(240)), "without TLP only the RTO is left");
            continue;
        }
        assert_eq!(s.timer_deadline(), Some(at(122)));
        s.on_timer(at(122), &mut out);
        assert_eq!(seqs(&out), vec![(9 * MSS, true)], "the probe: the highest segment again");
        assert_eq!(s.stats.loss_probes, 1);
        assert_eq!(s.rto_deadline(), Some(at(322)), "RTO restarted from the probe");
        // The probe's SACK shows segment 8 missing; RACK marks it (sent at 0, RACK.rtt 40 ms).
        out.clear();
        s.on_ack(at(162), &ack(8 * MSS, 122, true), &[(9 * MSS, 10 * MSS)], &mut out);
        assert!(s.in_fast_recovery());
        assert_eq!(seqs(&out), vec![(8 * MSS, true)]);
        s.on_ack(at(202), &ack(10 * MSS, 162, true), &[], &mut out);
        assert!(s.done());
        assert_eq!((s.stats.timeouts, s.stats.fast_retransmits), (0, 1));
    }
}
