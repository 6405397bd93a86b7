//! # ccsim-cc: the congestion-control seam
//!
//! The [`CongestionControl`] trait is the only thing an algorithm sees of a TCP connection. It is
//! shaped after Linux `struct tcp_congestion_ops` (include/net/tcp.h) and ns-3 `TcpCongestionOps`, with
//! typed sample structs instead of a socket pointer:
//!
//! * the TCP machine (in `ccsim-core`, or later a BPF twin's kernel) owns duplicate-ACK counting,
//!   retransmission, the RTO timer, RTT estimation and the recovery state machine;
//! * the algorithm owns only its own state, and the [`Window`] (cwnd and ssthresh) it is handed by
//!   `&mut` in each hook, as Linux hands `tp->snd_cwnd` to `cong_avoid`;
//! * time is passed in ([`Time`]), never read; randomness is injected ([`Rng`] in [`CcInit`]);
//! * on loss the algorithm *returns* the new ssthresh ([`CongestionControl::ssthresh_after_loss`], the
//!   ns-3 `GetSsThresh` contract) and the machine applies the RFC 5681/6582/6675 window changes.
//!
//! This crate depends on nothing of the simulator, so the simulator, the Python front end and the
//! kernel twins all test against the same code.

pub mod algorithms;
pub mod params;
pub mod registry;
pub mod reno;
pub mod rng;
pub mod testkit;
pub mod time;

use std::time::Duration;

pub use params::{ParamChoice, ParamKind, ParamMap, ParamReader, ParamSpec, ParamValue};
pub use registry::{build, catalog, AlgorithmInfo, Cc};
pub use rng::Rng;
pub use time::Time;

/// Congestion window and slow-start threshold of one connection, in bytes.
///
/// The machine owns this state and lends it to the algorithm in each hook, like Linux's
/// `tp->snd_cwnd`/`tp->snd_ssthresh`. `ssthresh_bytes == u64::MAX` means "arbitrarily high" (RFC 5681).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub cwnd_bytes: u64,
    pub ssthresh_bytes: u64,
    /// Sender maximum segment size (payload bytes), constant for the connection.
    pub mss_bytes: u64,
    /// Where slow start ends: the TCP stack's rule, set by the machine (a property of the stack, not
    /// of the algorithm, as Linux `tcp_in_slow_start` and FreeBSD `newreno_ack_received` read it).
    pub slow_start: SlowStartRule,
    /// The pacing rate the algorithm sets, in payload bytes per second (Linux `sk->sk_pacing_rate`;
    /// `u64::MAX`, Linux's `~0UL`, is no limit). The machine reads it only for an algorithm whose
    /// [`CongestionControl::needs`] asks for pacing.
    pub pacing_rate_bytes_per_s: u64,
}

/// Where slow start ends and how its growth meets ssthresh (RFC 5681 section 3.1 lets a sender use
/// either slow start or congestion avoidance when cwnd == ssthresh).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SlowStartRule {
    /// FreeBSD (`newreno_ack_received`): slow start while cwnd <= ssthresh; an ACK's increase is not
    /// capped at ssthresh.
    #[default]
    Freebsd,
    /// Linux (`tcp_in_slow_start`, `tcp_slow_start`): slow start while cwnd < ssthresh; the slow-start
    /// increase stops at ssthresh and the rest of the ACK's count goes to congestion avoidance.
    Linux,
}

impl Window {
    pub fn new(cwnd_bytes: u64, mss_bytes: u64) -> Window {
        Window { cwnd_bytes, ssthresh_bytes: u64::MAX, mss_bytes, slow_start: SlowStartRule::Freebsd, pacing_rate_bytes_per_s: u64::MAX }
    }
    /// Slow start applies while cwnd <= ssthresh (FreeBSD and RFC 5681's "<=" reading), or while
    /// cwnd < ssthresh under the Linux rule ([`SlowStartRule`]).
    pub fn in_slow_start(&self) -> bool {
        match self.slow_start {
            SlowStartRule::Freebsd => self.cwnd_bytes <= self.ssthresh_bytes,
            SlowStartRule::Linux => self.cwnd_bytes < self.ssthresh_bytes,
        }
    }
    pub fn cwnd_pkts(&self) -> f64 {
        self.cwnd_bytes as f64 / self.mss_bytes as f64
    }
    /// Sets cwnd, never below one MSS (the invariant every algorithm keeps).
    pub fn set_cwnd(&mut self, bytes: u64) {
        self.cwnd_bytes = bytes.max(self.mss_bytes);
    }
}

/// What an algorithm learns from one ACK (new data or duplicate).
///
/// RTT values are raw per-ACK samples in nanoseconds, Karn-safe (see `docs/choices.md`); `min_rtt` and
/// `max_rtt` are over the connection's lifetime (as FreeBSD h_ertt), never smoothed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AckSample {
    pub now: Time,
    /// Bytes newly acknowledged by the cumulative ACK field (0 for a duplicate ACK).
    pub bytes_acked: u64,
    /// Bytes newly covered by SACK blocks on this ACK.
    pub bytes_sacked: u64,
    /// A duplicate ACK (RFC 5681 definition: no new cumulative data, while data is outstanding).
    pub is_dupack: bool,
    /// Raw RTT sample carried by this ACK, if any.
    pub rtt: Option<Duration>,
    pub min_rtt: Option<Duration>,
    pub max_rtt: Option<Duration>,
    /// RFC 6298 smoothed RTT after this ACK.
    pub srtt: Option<Duration>,
    /// Bytes in flight after processing this ACK (RFC 6675 pipe with SACK, snd_nxt - snd_una without).
    pub bytes_in_flight: u64,
    /// Total bytes delivered (cumulatively acked or SACKed) over the connection so far.
    pub delivered_bytes: u64,
    pub snd_una: u64,
    /// Highest sequence number sent so far plus one (`snd_max`, as FreeBSD `tp->snd_max`). Not
    /// `snd_nxt`: after an RTO the machine's `snd_nxt` moves back to `snd_una` for go-back-N
    /// (RFC 5681 section 3.1), while `snd_max` keeps marking everything ever sent.
    pub snd_max: u64,
    /// The machine is in fast recovery (RFC 6582 / RFC 6675), from the fast retransmit until the full
    /// ACK. Not set after a retransmission timeout: the window then grows again in slow start, as
    /// FreeBSD (`EXIT_RECOVERY` on `CC_RTO`) and Linux (CA_Loss allows slow start) do.
    pub in_recovery: bool,
    /// The sender was limited by cwnd (not by the application or the receiver window) before this ACK.
    pub cwnd_limited: bool,
}

impl AckSample {
    /// Whole segments covered by this ACK's cumulative part (at least 1 when any byte is acked).
    pub fn segments_acked(&self, mss: u64) -> u64 {
        if self.bytes_acked == 0 {
            0
        } else {
            self.bytes_acked.div_ceil(mss)
        }
    }
}

/// One round of data (about one RTT), ended marked-packet style as FreeBSD h_ertt does: a round ends
/// when the first segment sent after the previous round ended is acknowledged.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RoundSample {
    pub now: Time,
    /// 0 for the first round of the connection.
    pub index: u64,
    /// RTT sample of the ACK that ended the round (the marked segment's, when valid).
    pub rtt: Option<Duration>,
    /// Maximum and minimum of the raw RTT samples seen during the round (including the ending ACK).
    pub max_rtt_in_round: Option<Duration>,
    pub min_rtt_in_round: Option<Duration>,
    pub min_rtt: Option<Duration>,
    /// Bytes delivered during the round and its duration.
    pub delivered_bytes: u64,
    pub duration: Duration,
}

/// Why the machine is reducing the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossKind {
    /// Three duplicate ACKs (or RFC 6675 IsLost) while not already in recovery: fast retransmit.
    FastRetransmit,
    /// Retransmission timeout; `backoff` is the number of consecutive expiries including this one.
    Timeout { backoff: u32 },
}

/// A congestion signal from the machine.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossEvent {
    pub now: Time,
    pub kind: LossKind,
    /// RFC 5681 FlightSize: bytes outstanding when the loss was detected.
    pub bytes_in_flight: u64,
    /// RFC 6675 pipe when the loss was detected: FlightSize less what the receiver has SACKed and less
    /// the segments deemed lost (at a fast retransmit the first unacknowledged one counts as lost);
    /// the same as `bytes_in_flight` without SACK. What ns-3 halves (`TcpSocketBase::EnterRecovery`
    /// and `ReTxTimeout` pass `BytesInFlight()` to `GetSsThresh`).
    pub pipe_bytes: u64,
    pub min_rtt: Option<Duration>,
    pub srtt: Option<Duration>,
}

/// End of loss recovery (the full ACK of RFC 6582, or `recover` acked after an RTO).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RecoveryExit {
    pub now: Time,
    pub bytes_in_flight: u64,
    /// True when the recovery followed a timeout rather than a fast retransmit.
    pub after_timeout: bool,
}

/// A window-related event of the TCP machine, as Linux `enum tcp_ca_event` (include/net/tcp.h)
/// delivered to `tcp_congestion_ops.cwnd_event`. See [`CongestionControl::cwnd_event`] for where the
/// machine sends each one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CwndEvent {
    /// `CA_EVENT_TX_START`: data is sent while nothing is in flight (Linux `tcp_event_data_sent`).
    /// Sent at the connection's first send and when the application resumes after a pause with
    /// everything acknowledged.
    TxStart,
    /// `CA_EVENT_CWND_RESTART`: the window restarts after an idle period longer than the RTO (Linux
    /// `tcp_cwnd_restart`; RFC 5681 section 4.1, RFC 2861). Sent before the machine lowers cwnd to
    /// min(IW, cwnd).
    CwndRestart,
    /// `CA_EVENT_COMPLETE_CWR`: a window reduction is complete (Linux `tcp_end_cwnd_reduction`). Sent
    /// when fast recovery ends, after [`CongestionControl::on_recovery_exit`]; not after the recovery
    /// that follows a timeout (Linux leaves `TCP_CA_Loss` without it).
    CompleteCwr,
    /// `CA_EVENT_LOSS`: retransmission timeout (Linux `tcp_enter_loss`). Sent after the new ssthresh
    /// is stored and before cwnd is set to one segment.
    Loss,
    /// `CA_EVENT_ECN_NO_CE`: an ACK without ECN-Echo. Never sent: the machine has no ECN (RFC 3168).
    EcnNoCe,
    /// `CA_EVENT_ECN_IS_CE`: an ACK with ECN-Echo. Never sent: the machine has no ECN (RFC 3168).
    EcnIsCe,
}

/// What an algorithm is told when a window reduction turns out to have been unnecessary (a spurious
/// retransmission), for [`CongestionControl::undo_cwnd`]. Linux keeps these in the socket
/// (`tp->prior_cwnd`, `tp->prior_ssthresh`); the seam passes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UndoSample {
    pub now: Time,
    /// cwnd just before the reduction that is undone.
    pub prior_cwnd_bytes: u64,
    /// ssthresh just before that reduction (the machine restores it, as Linux
    /// `tcp_undo_cwnd_reduction`, when it is larger than the current one).
    pub prior_ssthresh_bytes: u64,
}

/// The connection's congestion state as Linux `icsk_ca_state` names it (`TCP_CA_Open`,
/// `TCP_CA_Recovery`, `TCP_CA_Loss`), for algorithms that set the window themselves
/// ([`CongestionControl::cong_control`]; BBR's packet conservation reads it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    #[default]
    Open,
    /// Fast recovery after a fast retransmit.
    Recovery,
    /// After a retransmission timeout, until what was outstanding then is acknowledged.
    Loss,
}

/// One delivery-rate sample and the connection state Linux's `cong_control` reads beside it: Linux
/// `struct rate_sample` (include/net/tcp.h) as `tcp_rate_gen` (net/ipv4/tcp_rate.c) fills it per
/// ACK, after draft-cheng-iccrg-delivery-rate-estimation. Amounts are in bytes (Linux counts
/// packets), times in nanoseconds (Linux: microseconds).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    pub now: Time,
    /// Bytes delivered over `interval` (`rs->delivered`); `None` when the ACK gives no sample (no
    /// packet with a send-time snapshot was delivered: Linux's `-1`).
    pub delivered_bytes: Option<u64>,
    /// The sample's interval, max(send interval, ACK interval) (`rs->interval_us`); `None` when
    /// there is no sample or the interval is shorter than the minimum RTT (Linux's `-1`).
    pub interval: Option<Duration>,
    /// The connection's delivered count when the sample's newest packet was sent
    /// (`rs->prior_delivered`).
    pub prior_delivered_bytes: u64,
    /// Bytes newly acknowledged or SACKed by this ACK (`rs->acked_sacked`).
    pub acked_sacked_bytes: u64,
    /// Bytes newly marked lost while processing this ACK (`rs->losses`).
    pub losses_bytes: u64,
    /// Bytes in flight before this ACK (`rs->prior_in_flight`).
    pub prior_in_flight_bytes: u64,
    /// The sample's packet was sent while the connection was application-limited
    /// (`rs->is_app_limited`): its rate may be below what the path can carry.
    pub is_app_limited: bool,
    /// The sample's packet was a retransmission (`rs->is_retrans`).
    pub is_retrans: bool,
    /// RTT of the ACK (`rs->rtt_us`): the Karn-valid sample of the segment it echoes.
    pub rtt: Option<Duration>,
    /// Connection state after the ACK: total bytes delivered (`tp->delivered`) and when the count
    /// last grew (`tp->delivered_mstamp`), total bytes marked lost (`tp->lost`), bytes in flight
    /// (`tcp_packets_in_flight`), the congestion state, the minimum RTT (`tcp_min_rtt`; the
    /// machine's lifetime minimum) and SRTT.
    pub delivered_total_bytes: u64,
    pub delivered_time: Time,
    pub lost_total_bytes: u64,
    pub bytes_in_flight: u64,
    pub ca_state: CaState,
    pub min_rtt: Option<Duration>,
    pub srtt: Option<Duration>,
    /// When pacing lets the next segment leave (Linux `tp->tcp_wstamp_ns`, the earliest departure
    /// time); `now` or earlier when it may leave now, or without pacing.
    pub next_departure: Time,
}

impl RateSample {
    /// The sample's delivery rate in bytes per second, when it has one.
    pub fn delivery_rate_bytes_per_s(&self) -> Option<f64> {
        match (self.delivered_bytes, self.interval) {
            (Some(d), Some(i)) if !i.is_zero() => Some(d as f64 / i.as_secs_f64()),
            _ => None,
        }
    }
}

/// What an algorithm asks of the machine, read once when the connection is built (Linux: a
/// `cong_control` in `tcp_congestion_ops`, and `sk_pacing_status = SK_PACING_NEEDED` set by the
/// algorithm's `init`). Both off by default: the machine then samples no rates and paces nothing,
/// as Linux without the fq qdisc for every algorithm that does not ask.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    /// The algorithm implements [`CongestionControl::cong_control`]: the machine takes a delivery-rate
    /// sample per ACK and calls it instead of [`CongestionControl::on_ack`], and leaves cwnd to it in
    /// recovery (no RFC 6675 / PRR window, no cwnd = ssthresh at the fast retransmit, no restart after
    /// idle), as Linux `tcp_cong_control`, `tcp_end_cwnd_reduction` and
    /// `tcp_slow_start_after_idle_check` do for such an algorithm.
    pub cong_control: bool,
    /// Segments leave no faster than [`Window::pacing_rate_bytes_per_s`] (Linux's internal pacing,
    /// `tcp_pacing_check`, `tcp_update_skb_after_send`).
    pub pacing: bool,
}

/// What [`CongestionControl::cong_control`] asks of the machine besides cwnd and the pacing rate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ControlRequest {
    /// Mark the connection application-limited now, as BBR's ProbeRTT writes `tp->app_limited`:
    /// rate samples of packets sent from now until what is in flight is delivered are flagged.
    pub mark_app_limited: bool,
}

/// What the machine tells an algorithm at construction.
#[derive(Clone, Debug)]
pub struct CcInit {
    pub mss_bytes: u64,
    pub initial_cwnd_bytes: u64,
    /// Appropriate byte counting (RFC 3465) limit L in segments; 0 turns ABC off (per-ACK counting).
    pub abc_limit_segments: u32,
    /// The flow's own random stream.
    pub rng: Rng,
}

/// Errors building an algorithm from a name and parameters.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CcError {
    #[error("unknown algorithm {name:?} (known: {known})")]
    UnknownAlgorithm { name: String, known: String },
    #[error("{algorithm}: unknown parameter {name:?} (known: {known})")]
    UnknownParameter { algorithm: String, name: String, known: String },
    #[error("{algorithm}.{name}: {reason}")]
    InvalidParameter { algorithm: String, name: String, reason: String },
}

/// A named internal quantity of an algorithm, sampled for tracing (quinn `ControllerMetrics`).
pub type Metric = (&'static str, f64);

/// The congestion-control seam. Most hooks default to no-ops.
///
/// Call order for one arriving ACK (fixed; algorithms may rely on it; an algorithm with
/// [`cong_control`](Self::cong_control) gets it in place of `on_ack` at step 3):
/// 1. the machine updates its state (snd_una, scoreboard, dupacks), possibly entering fast recovery,
///    which calls [`ssthresh_after_loss`](Self::ssthresh_after_loss) first;
/// 2. [`on_round`](Self::on_round), if this ACK ended a round;
/// 3. [`on_ack`](Self::on_ack); the ACK that ends fast recovery (the full ACK) is still reported with
///    `in_recovery = true`;
/// 4. [`on_recovery_exit`](Self::on_recovery_exit), if this ACK ended recovery.
///
/// A retransmission timeout calls `ssthresh_after_loss` with [`LossKind::Timeout`] outside any ACK,
/// then [`cwnd_event`](Self::cwnd_event) with [`CwndEvent::Loss`]. The end of fast recovery is
/// followed by `cwnd_event(CompleteCwr)` after step 4. `cwnd_event(TxStart)` comes after `init`,
/// before the first segment. When the application resumes after a pause,
/// `cwnd_event(CwndRestart)` (idle longer than the RTO) and then `cwnd_event(TxStart)` (nothing in
/// flight) come before the first new segment is sent.
///
/// [`undo_cwnd`](Self::undo_cwnd) exists for the kernel twins; the simulator's machine does not detect
/// spurious retransmissions yet (no D-SACK, RFC 2883, nor Eifel, RFC 3522), so it never calls it.
pub trait CongestionControl: Send {
    /// Registry name (`newreno`, `htcp`, ...).
    fn name(&self) -> &'static str;

    /// Called once before the first segment is sent, with cwnd set to the initial window.
    fn init(&mut self, _w: &mut Window) {}

    /// Every ACK that arrives (new data and duplicates). Grow the window here; during loss recovery
    /// (`ack.in_recovery`) standard algorithms leave it alone because the machine controls sending.
    fn on_ack(&mut self, w: &mut Window, ack: &AckSample);

    /// Once per round (about once per RTT), before the `on_ack` of the ACK that ended the round.
    fn on_round(&mut self, _w: &mut Window, _round: &RoundSample) {}

    /// The new ssthresh in bytes after a loss; the machine stores it and sets cwnd (to ssthresh on fast
    /// retransmit, to one segment after a timeout). May update the algorithm's own state.
    fn ssthresh_after_loss(&mut self, w: &Window, loss: &LossEvent) -> u64;

    /// Recovery has ended. Default: RFC 6582 section 3.2 step 3 option (1), as FreeBSD
    /// `newreno_post_recovery`: cwnd = min(ssthresh, max(FlightSize, MSS) + MSS).
    fn on_recovery_exit(&mut self, w: &mut Window, exit: &RecoveryExit) {
        if !exit.after_timeout {
            let flight = exit.bytes_in_flight.max(w.mss_bytes);
            w.set_cwnd(w.ssthresh_bytes.min(flight + w.mss_bytes));
        }
    }

    /// A loss turned out to be spurious: returns the cwnd to restore, and may undo the algorithm's own
    /// state changes of that loss. Linux `tcp_congestion_ops.undo_cwnd`; the default is Linux
    /// `tcp_reno_undo_cwnd` (net/ipv4/tcp_cong.c): max(cwnd, cwnd before the reduction). Never called
    /// by the simulator today (see the trait documentation).
    fn undo_cwnd(&mut self, w: &Window, undo: &UndoSample) -> u64 {
        w.cwnd_bytes.max(undo.prior_cwnd_bytes)
    }

    /// A window-related event of the machine (Linux `tcp_congestion_ops.cwnd_event`); see
    /// [`CwndEvent`] for when each is sent. Default: nothing.
    fn cwnd_event(&mut self, _w: &mut Window, _now: Time, _ev: CwndEvent) {}

    /// What the algorithm asks of the machine (rate samples and `cong_control`, pacing); read once
    /// after construction. Default: nothing.
    fn needs(&self) -> Needs {
        Needs::default()
    }

    /// Linux `tcp_congestion_ops.cong_control`: sets cwnd (and the pacing rate in `w`) from a
    /// delivery-rate sample, on every ACK, in place of [`on_ack`](Self::on_ack). Called only when
    /// [`needs`](Self::needs) says `cong_control`; the default is never reached.
    fn cong_control(&mut self, _w: &mut Window, _rs: &RateSample) -> ControlRequest {
        ControlRequest::default()
    }

    /// Internal state for tracing, e.g. `[("alpha", 1.0)]`, appended to `out` (a buffer the caller
    /// keeps and clears, so a sample of every flow allocates nothing). Names are stable per algorithm.
    fn metrics(&self, _out: &mut Vec<Metric>) {}
}

/// Reno-style halving used by several algorithms: max(bytes/2, 2*MSS).
pub fn half_window(bytes: u64, mss: u64) -> u64 {
    (bytes / 2).max(2 * mss)
}

/// Halving of cwnd in whole segments with a floor of two, as both kernels compute it: Linux
/// `tcp_reno_ssthresh` (`max(cwnd >> 1, 2)` in packets) and FreeBSD `newreno_cong_signal`
/// (`max(cwnd / 2 / maxseg, 2) * maxseg`).
pub fn half_cwnd_segments(cwnd_bytes: u64, mss: u64) -> u64 {
    (cwnd_bytes / mss / 2).max(2).saturating_mul(mss)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Minimal;
    impl CongestionControl for Minimal {
        fn name(&self) -> &'static str {
            "minimal"
        }
        fn on_ack(&mut self, _w: &mut Window, _ack: &AckSample) {}
        fn ssthresh_after_loss(&mut self, w: &Window, _loss: &LossEvent) -> u64 {
            half_window(w.cwnd_bytes, w.mss_bytes)
        }
    }

    #[test]
    fn default_undo_is_linux_reno_max_of_cwnd_and_prior_cwnd() {
        let mut w = Window::new(10_000, 1000);
        let undo = UndoSample { now: Time::ZERO, prior_cwnd_bytes: 20_000, prior_ssthresh_bytes: u64::MAX };
        assert_eq!(Minimal.undo_cwnd(&w, &undo), 20_000, "reduced window: restore the prior cwnd");
        w.cwnd_bytes = 30_000;
        assert_eq!(Minimal.undo_cwnd(&w, &undo), 30_000, "window grew since: keep it");
    }

    #[test]
    fn default_cwnd_event_leaves_the_window_alone() {
        for ev in [CwndEvent::TxStart, CwndEvent::CwndRestart, CwndEvent::CompleteCwr, CwndEvent::Loss, CwndEvent::EcnNoCe, CwndEvent::EcnIsCe] {
            let mut w = Window::new(10_000, 1000);
            w.ssthresh_bytes = 5_000;
            Minimal.cwnd_event(&mut w, Time::ZERO, ev);
            assert_eq!((w.cwnd_bytes, w.ssthresh_bytes), (10_000, 5_000), "{ev:?}");
        }
    }
}
