//! The window a connection starts with: cwnd = the initial window (RFC 5681 section 3.1, RFC 3390 /
//! RFC 6928 sizes) and ssthresh from `TcpConfig::initial_ssthresh`.
//!
//! * `Unlimited`: ssthresh "arbitrarily high" (RFC 5681 section 3.1), so the flow slow-starts until
//!   its first loss. FreeBSD `tcp_newtcpcb` (`TCP_MAXWIN << TCP_MAX_WINSHIFT`) and Linux
//!   `tcp_init_sock` / `tcp_init_metrics` (`TCP_INFINITE_SSTHRESH`) start this way.
//! * `Bytes`: a fixed initial threshold, as Linux takes from the route's `ssthresh` metric
//!   (`tcp_init_metrics`, net/ipv4/tcp_metrics.c), FreeBSD from the host cache's `rmx_ssthresh`
//!   (`cc_conn_init`, sys/netinet/tcp_input.c, at least 2 segments there) and ns-2 from `window_`,
//!   capped by `max_ssthresh_` (`TcpAgent::reset`, tcp/tcp.cc). The TCP Limit paper's Fig. 1 starts
//!   at 25 packets this way.
//! * `BelowInitialWindow` ("slow start off", the Leith et al. 2007 Fig. 8 set-up): ssthresh one byte
//!   below the initial window, so the first ACK already finds the flow in congestion avoidance under
//!   FreeBSD's test (slow start while cwnd <= ssthresh, `newreno_ack_received`) as under Linux's and
//!   ns-2's (cwnd < ssthresh, `tcp_in_slow_start`, `TcpAgent::opencwnd`). None of the three stacks
//!   has a switch that removes slow start; a low initial ssthresh is how each of them is told to
//!   start in congestion avoidance. Only the start is changed: after a retransmission timeout the
//!   machine still sets cwnd to one segment and slow-starts up to the new ssthresh (RFC 5681 section
//!   3.1, every stack), and after an idle restart (RFC 5681 section 4.1) cwnd = min(IW, cwnd) with
//!   ssthresh kept. See docs/choices.md.

use ccsim_cc::Window;

use crate::scenario::{InitialSsthresh, TcpConfig};

/// cwnd and ssthresh of a new connection.
pub fn initial_window(cfg: &TcpConfig) -> Window {
    let iw_bytes = cfg.initial_window_pkts * cfg.mss_bytes;
    let mut w = Window::new(iw_bytes, cfg.mss_bytes);
    w.ssthresh_bytes = match cfg.initial_ssthresh {
        InitialSsthresh::Unlimited => u64::MAX,
        InitialSsthresh::Bytes { bytes } => bytes,
        InitialSsthresh::BelowInitialWindow => iw_bytes - 1,
    };
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Packet, PacketKind};
    use crate::tcp::Sender;
    use ccsim_cc::{ParamMap, Rng, Time};

    const MSS: u64 = 1000;

    fn cfg(initial_ssthresh: InitialSsthresh) -> TcpConfig {
        // ABC off (per-ACK counting) and an ACK per segment: the growth per ACK shows the phase.
        TcpConfig { mss_bytes: MSS, initial_window_pkts: 4, initial_ssthresh, abc_limit: 0, ..TcpConfig::for_tests() }
    }

    fn ack(seq: u64, echo_ms: u64) -> Packet {
        let mut p = Packet::data(0, 0, 0, 40, Time::from_millis(echo_ms), false);
        p.kind = PacketKind::Ack;
        p.seq = seq;
        p
    }

    /// cwnd after each of `n` ACKs of one segment, starting from the initial window.
    fn cwnd_after_acks(initial_ssthresh: InitialSsthresh, n: u64) -> (u64, Vec<u64>) {
        let c = cfg(initial_ssthresh);
        let cc = ccsim_cc::build("newreno", &ParamMap::new(), &Sender::cc_init(&c, Rng::new(1, 1))).unwrap();
        let mut s = Sender::new(0, &c, cc, None);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        let ssthresh = s.window().ssthresh_bytes;
        let cwnds = (1..=n)
            .map(|k| {
                s.on_ack(Time::from_millis(40 + k), &ack(k * MSS, 0), &mut out);
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
        let c = cfg(InitialSsthresh::BelowInitialWindow);
        let cc = ccsim_cc::build("newreno", &ParamMap::new(), &Sender::cc_init(&c, Rng::new(1, 1))).unwrap();
        let mut s = Sender::new(0, &c, cc, None);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        s.on_rto(Time::from_millis(1000), &mut out);
        // ssthresh = max(FlightSize / 2, 2 MSS) = 2 MSS; cwnd = 1 MSS, below it: slow start.
        assert_eq!((s.window().cwnd_bytes, s.window().ssthresh_bytes), (MSS, 2 * MSS));
        s.on_ack(Time::from_millis(1040), &ack(MSS, 1000), &mut out);
        assert_eq!(s.window().cwnd_bytes, 2 * MSS, "one segment per ACK below ssthresh");
    }
}
