//! How a sender grows from its initial window under each initial-ssthresh setting
//! (`tcp/startup.rs`): slow start up to the threshold, congestion avoidance from the first ACK when
//! slow start is off, and slow start again after a timeout.

use ccsim_cc::{ParamMap, Rng, Time};
use ccsim_core::packet::{Packet, PacketKind};
use ccsim_core::scenario::{InitialSsthresh, TcpConfig};
use ccsim_core::tcp::Sender;

const MSS: u64 = 1000;

/// IW 4, ABC off (per-ACK counting): the growth per ACK shows the phase.
fn cfg(initial_ssthresh: InitialSsthresh) -> TcpConfig {
    TcpConfig {
        mss_bytes: MSS,
        header_bytes: 40,
        initial_window_pkts: 4,
        initial_ssthresh,
        delayed_ack: false,
        abc_limit: 0,
        ..ccsim_core::fixtures::tcp_config()
    }
}

fn sender(initial_ssthresh: InitialSsthresh) -> Sender {
    let c = cfg(initial_ssthresh);
    let cc = ccsim_cc::build("newreno", &ParamMap::new(), &Sender::cc_init(&c, Rng::new(1, 1))).unwrap();
    let mut s = Sender::new(0, &c, cc, None);
    s.start(Time::ZERO, &mut Vec::new());
    s
}

fn ack(seq: u64, echo_ms: u64) -> Packet {
    let mut p = Packet::data(0, 0, 0, 40, Time::from_millis(echo_ms), false);
    p.kind = PacketKind::Ack;
    p.seq = seq;
    p
}

/// cwnd after each of `n` ACKs of one segment.
fn cwnd_after_acks(initial_ssthresh: InitialSsthresh, n: u64) -> (u64, Vec<u64>) {
    let mut s = sender(initial_ssthresh);
    let ssthresh = s.window().ssthresh_bytes;
    let cwnds = (1..=n)
        .map(|k| {
            s.on_ack(Time::from_millis(40 + k), &ack(k * MSS, 0), &[], &mut Vec::new());
            s.window().cwnd_bytes
        })
        .collect();
    (ssthresh, cwnds)
}

#[test]
fn unlimited_ssthresh_slow_starts_one_segment_per_ack() {
    let (ssthresh, cwnds) = cwnd_after_acks(InitialSsthresh::Unlimited, 3);
    assert_eq!(ssthresh, u64::MAX);
    assert_eq!(cwnds, vec![5 * MSS, 6 * MSS, 7 * MSS]);
}

#[test]
fn a_fixed_initial_ssthresh_ends_slow_start_there() {
    // Slow start while cwnd <= 6 segments (FreeBSD's test), then MSS*MSS/cwnd per ACK.
    let (ssthresh, cwnds) = cwnd_after_acks(InitialSsthresh::Bytes { bytes: 6 * MSS }, 4);
    assert_eq!(ssthresh, 6 * MSS);
    assert_eq!(&cwnds[..3], &[5 * MSS, 6 * MSS, 7 * MSS]);
    assert_eq!(cwnds[3], 7 * MSS + MSS * MSS / (7 * MSS), "congestion avoidance above ssthresh");
}

#[test]
fn slow_start_off_grows_linearly_from_the_first_ack() {
    let (ssthresh, cwnds) = cwnd_after_acks(InitialSsthresh::BelowInitialWindow, 3);
    assert_eq!(ssthresh, 4 * MSS - 1);
    let mut expected = Vec::new();
    let mut w = 4 * MSS;
    for _ in 0..3 {
        w += MSS * MSS / w;
        expected.push(w);
    }
    assert_eq!(cwnds, expected, "MSS*MSS/cwnd per ACK (RFC 5681 eq. 3) from the start");
}

#[test]
fn slow_start_off_still_slow_starts_after_a_timeout() {
    let mut s = sender(InitialSsthresh::BelowInitialWindow);
    s.on_rto(Time::from_millis(1000), &mut Vec::new());
    // ssthresh = max(FlightSize / 2, 2 MSS) = 2 MSS; cwnd = 1 MSS, below it: slow start.
    assert_eq!((s.window().cwnd_bytes, s.window().ssthresh_bytes), (MSS, 2 * MSS));
    s.on_ack(Time::from_millis(1040), &ack(MSS, 1000), &[], &mut Vec::new());
    assert_eq!(s.window().cwnd_bytes, 2 * MSS, "one segment per ACK below ssthresh");
}
