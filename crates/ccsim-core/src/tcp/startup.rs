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
    //! The window alone; how a sender grows from it is in `tests/startup.rs`.
    use super::*;

    #[test]
    fn each_setting_gives_its_threshold() {
        let cfg = |initial_ssthresh| TcpConfig { mss_bytes: 1000, initial_window_pkts: 4, initial_ssthresh, ..crate::fixtures::tcp_config() };
        let w = |s| {
            let w = initial_window(&cfg(s));
            (w.cwnd_bytes, w.ssthresh_bytes)
        };
        assert_eq!(w(InitialSsthresh::Unlimited), (4000, u64::MAX));
        assert_eq!(w(InitialSsthresh::Bytes { bytes: 25_000 }), (4000, 25_000));
        assert_eq!(w(InitialSsthresh::BelowInitialWindow), (4000, 3999));
        assert!(!initial_window(&cfg(InitialSsthresh::BelowInitialWindow)).in_slow_start());
    }
}
