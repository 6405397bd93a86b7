//! Scripted ACKs for ns-2's Sack1 recovery (`recovery/ns2_sack1.rs`) against RFC 6675 on the same
//! losses: the counted pipe and the holes it retransmits.

use super::testkit::*;
use super::*;
use crate::scenario::TcpConfig;

/// Segments 0 and 2 of an initial window of 10 are lost; the receiver SACKs the others one by one.
/// Returns, per duplicate ACK (the k-th carries SACK blocks for what arrived), the segments sent.
fn sack_recovery_trace(recovery: crate::scenario::SackRecovery) -> (Sender, Vec<Vec<(u64, bool)>>) {
    let c = TcpConfig { sack: true, limited_transmit: false, sack_recovery: recovery, ..cfg(false) };
    let (mut s, _) = sender_with(c, None);
    let arrived = [1u64, 3, 4, 5, 6, 7, 8, 9];
    let mut trace = Vec::new();
    for (k, _) in arrived.iter().enumerate() {
        let mut blocks: Vec<(u64, u64)> = Vec::new();
        for &seg in &arrived[..=k] {
            match blocks.last_mut() {
                Some(b) if b.1 == seg * MSS => b.1 += MSS,
                _ => blocks.push((seg * MSS, (seg + 1) * MSS)),
            }
        }
        blocks.reverse(); // the most recent block first
        let mut out = Vec::new();
        s.on_ack(at(40 + k as u64), &ack(0, 0, false), &blocks[..blocks.len().min(3)], &mut out);
        trace.push(out.iter().map(|p| (p.seq / MSS, p.retx)).collect());
    }
    (s, trace)
}

#[test]
fn ns2_sack1_counts_pipe_and_retransmits_every_hole_below_the_highest_sack() {
    use crate::scenario::SackRecovery;
    let (s, trace) = sack_recovery_trace(SackRecovery::Ns2Sack1);
    // Third dupack: fast retransmit of segment 0; pipe_ = 10 outstanding - 3 = 7, cwnd 5 (half of
    // FlightSize 10): nothing more. Each further ACK takes one off pipe_: at the sixth dupack
    // pipe_ = 4 < 5 and the loop sends the hole at segment 2 (SACKed data above it), pipe_ 5; at the
    // seventh pipe_ 4 again: no hole left below the highest SACK, so new data (segment 10).
    assert_eq!(trace[2], vec![(0, true)]);
    assert_eq!(trace[3], vec![]);
    assert_eq!(trace[4], vec![]);
    assert_eq!(trace[5], vec![(2, true)]);
    assert_eq!(trace[6], vec![(10, false)]);
    assert_eq!(trace[7], vec![(11, false)]);
    let recovery::Rules::Ns2Sack1(r) = s.recovery.rules() else { panic!("ns2_sack1 recovery") };
    assert_eq!(r.counted_pipe(), Some(5));
    let (_, rfc) = sack_recovery_trace(SackRecovery::Rfc6675);
    assert_ne!(rfc, trace, "RFC 6675 computes pipe from the scoreboard and sends at other ACKs");
}
