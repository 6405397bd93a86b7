//! What the sender's scripted-ACK tests share: a NewReno sender with MSS 1000, IW 10, hand-made ACKs.
use ccsim_cc::{ParamMap, Rng, Time};

use super::Sender;
use crate::packet::{Packet, PacketKind};
use crate::scenario::TcpConfig;

pub(super) const MSS: u64 = 1000;

pub(super) fn cfg(sack: bool) -> TcpConfig {
    TcpConfig { mss_bytes: MSS, header_bytes: 40, initial_window_pkts: 10, sack, ..crate::fixtures::tcp_config() }
}

/// `c` with the RFC 6298 timer and a 200 ms floor (Linux's and ns-2's; initial RTO 1 s, maximum
/// 60 s), the timer that tests of other mechanisms compute their deadlines with by hand.
pub(super) fn rfc6298_timer(c: TcpConfig) -> TcpConfig {
    TcpConfig {
        rto_estimator: crate::scenario::RtoEstimator::Rfc6298,
        min_rto_ns: 200_000_000,
        initial_rto_ns: 1_000_000_000,
        max_rto_ns: 60_000_000_000,
        ..c
    }
}

pub(super) fn sender(sack: bool) -> (Sender, Vec<Packet>) {
    let c = cfg(sack);
    let cc = ccsim_cc::build("newreno", &ParamMap::new(), &Sender::cc_init(&c, Rng::new(1, 1))).unwrap();
    let mut s = Sender::new(0, &c, cc, None);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    (s, out)
}

pub(super) fn ack(seq: u64, echo_ms: u64, retx: bool) -> Packet {
    let mut p = Packet::data(0, 0, 0, 40, Time::from_millis(echo_ms), retx);
    p.kind = PacketKind::Ack;
    p.seq = seq;
    p
}

pub(super) fn at(ms: u64) -> Time {
    Time::from_millis(ms)
}

pub(super) fn seqs(out: &[Packet]) -> Vec<(u64, bool)> {
    out.iter().map(|p| (p.seq, p.retx)).collect()
}

pub(super) fn sender_with(c: TcpConfig, bytes: Option<u64>) -> (Sender, Vec<Packet>) {
    let cc = ccsim_cc::build("newreno", &ParamMap::new(), &Sender::cc_init(&c, Rng::new(1, 1))).unwrap();
    let mut s = Sender::new(0, &c, cc, bytes);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    (s, out)
}
