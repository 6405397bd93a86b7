//! The TCP sender: the machine that owns sequence space, duplicate-ACK counting, retransmission,
//! the RTO timer and the loss-recovery state, and drives one congestion controller through the
//! `ccsim_cc::CongestionControl` seam.
//!
//! Mechanisms and where they come from:
//! * Byte sequence numbers from 0; full-sized segments of `mss_bytes` (the last of a finite transfer
//!   may be shorter); wire size = payload + `header_bytes`.
//! * Slow start / congestion avoidance: the algorithm's (RFC 5681 section 3.1, RFC 3465 ABC).
//! * Fast retransmit on the `dupack_threshold`-th duplicate ACK (RFC 5681 section 3.2), guarded by
//!   RFC 6582 section 3.2 step 1: only when the cumulative ACK has reached `recover` (the highest
//!   sequence sent at the last fast retransmit or timeout). This guard is what keeps a sender without
//!   SACK from re-entering fast retransmit on the duplicate ACKs caused by its own go-back-N after an
//!   RTO (the ns-3 3.44 failure; see `docs/choices.md`).
//! * Without SACK: NewReno fast recovery (RFC 6582 section 3.2): cwnd = ssthresh + 3 MSS, +1 MSS
//!   per further duplicate ACK; a partial ACK retransmits the first unacknowledged segment, deflates
//!   the window by the amount acked and adds back one MSS if at least one MSS was acked, and resets the
//!   RTO timer on every partial ACK as FreeBSD and Linux do (`partial_ack_rto = every`, RFC 6582
//!   section 4 "slow-but-steady") or only on the first (`first`, "impatient", ns-2.35's default); the
//!   fast retransmission itself restarts the timer too. The full ACK ends recovery and the
//!   algorithm sets cwnd (RFC 6582 step 3 option 1 by default). The FlightSize halved at a loss is
//!   the span less the inflation, at most cwnd (Linux `tcp_add_reno_sack`, `tcp_reno_ssthresh`;
//!   FreeBSD `newreno_cong_signal`): see `in_flight`.
//! * With SACK (RFC 2018, on by default as on FreeBSD and Linux): conservative SACK-based loss recovery
//!   of RFC 6675: scoreboard, IsLost(), pipe, NextSeg() rules 1-3 (rule 4, the rescue retransmission,
//!   is not implemented), cwnd = ssthresh at entry.
//! * Limited transmit (RFC 3042): one new segment on each of the first two duplicate ACKs.
//! * RTO (RFC 6298): SRTT/RTTVAR, minimum and maximum RTO, Karn's rule (no sample from an ACK whose
//!   echoed segment was a retransmission), exponential backoff kept until a valid sample, timer started
//!   when data is sent and none runs, restarted on each ACK of new data, stopped when all is acked. On
//!   expiry: ssthresh from the algorithm, cwnd = 1 MSS (RFC 5681 loss window), recover = highest sent,
//!   go-back-N from snd_una; the SACK scoreboard is cleared as FreeBSD does (RFC 2018 section 8) and
//!   segments SACKed again afterwards are skipped while going back.
//! * Per-ACK RTT samples: the ACK echoes the send time of the segment that caused it (the timestamp
//!   option, RFC 7323); the sample is `now - echo`, withheld when that segment was a retransmission.
//!   Lifetime min and max, and a once-per-round event: a round ends when the first segment sent after
//!   the previous round ended is acknowledged (FreeBSD h_ertt's marked packet).
//!
//! ns-2 semantics, each a knob of `TcpConfig` (the `ns2` profile, docs/profiles.md):
//! * `rto_estimator = ns2`: ns-2's timer arithmetic (`tcp/rtt_ns2.rs`); the timer is also restarted
//!   at a fast retransmit (ns-2 `dupack_action` -> `reset_rtx_timer(1, 0)`).
//! * `max_burst_pkts` (ns-2 `maxburst_`, tcp.cc `send_much`, tcp-sack1.cc `send_much`): at most that
//!   many segments leave in response to one ACK, timeout or application event; the fast retransmission
//!   and the partial-ACK retransmission are sent outside that loop, as in ns-2.
//! * `ssthresh_whole_packets` (ns-2 `slowdown`: `ssthresh_ = (int) halfwin`, at least 2): the new
//!   ssthresh is rounded down to whole segments, cwnd keeps the unrounded value.
//! * `sack_recovery = ns2_sack1`: ns-2's Sack1 recovery instead of RFC 6675 (`tcp/ns2_sack1.rs`).
//!
//! Linux mechanisms behind `TcpConfig` knobs (docs/linux-tcp.md), each in its own module:
//! * `slow_start_rule = "linux"`: the window's slow-start rule (`ccsim_cc::SlowStartRule`).
//! * `rto_estimator = "linux"`: Linux's RTO arithmetic (`tcp::linux_rto`).
//! * `recovery_window = "prr"`: the window during SACK recovery from PRR, RFC 6937 (`tcp::prr`).
//! * `loss_detection = "rack_tlp"` (with SACK): RACK marks lost segments instead of the duplicate-ACK
//!   rule and IsLost(), and the tail loss probe precedes the RTO (`tcp::rack`, `tcp::tlp`). Recovery
//!   then retransmits the segments RACK marked, in order, and sends new data (no NextSeg() rule 3),
//!   with pipe = FlightSize - SACKed - marked lost and not retransmitted (Linux
//!   `tcp_packets_in_flight`, `tcp_xmit_retransmit_queue`).

use std::time::Duration;

use ccsim_cc::{
    AckSample, Cc, CcInit, CongestionControl, CwndEvent, LossEvent, LossKind, Metric, RecoveryExit, RoundSample, Time, Window,
};

use crate::packet::Packet;
use crate::scenario::{LossDetection, PartialAckRto, RecoveryWindow, RtoEstimator, SackRecovery, TcpConfig};
use crate::tcp::ns2_sack1::{self, Ns2Sack1};
use crate::tcp::prr::Prr;
use crate::tcp::rack::{DetectContext, Rack};
use crate::tcp::rtt::RttEstimator;
use crate::tcp::rtt_ns2::Ns2Rto;
use crate::tcp::scoreboard::Scoreboard;
use crate::tcp::tlp::{ProbeAck, ProbeContext, Tlp};

/// Cumulative counters of one sender.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    pub data_pkts_sent: u64,
    pub payload_bytes_sent: u64,
    pub wire_bytes_sent: u64,
    pub retransmits: u64,
    pub retransmitted_bytes: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    pub rounds: u64,
    /// Tail loss probes sent (RACK-TLP).
    pub loss_probes: u64,
}

/// Marked-packet round tracking (FreeBSD h_ertt).
#[derive(Clone, Debug, Default)]
struct Round {
    marker: Option<u64>,
    index: u64,
    started: Time,
    delivered_at_start: u64,
    /// The round's largest and smallest RTT sample, in nanoseconds (compared on every ACK).
    max_rtt_ns: Option<u64>,
    min_rtt_ns: Option<u64>,
}

pub struct Sender {
    flow: u32,
    mss: u64,
    header: u32,
    dupthresh: u32,
    sack: bool,
    limited_transmit: bool,
    rwnd: u64,
    cc: Cc,
    w: Window,
    snd_una: u64,
    /// Next sequence to send; below snd_max only while going back after a timeout.
    snd_nxt: u64,
    snd_max: u64,
    /// Sequence number the application's data ends at (u64::MAX while backlogged).
    app_end: u64,
    /// What the application has handed over (what `app_end` returns to when it resumes): a finite
    /// transfer's size, or what a rate-limited application has written so far; `None` for bulk.
    bytes_limit: Option<u64>,
    initial_window_bytes: u64,
    last_send: Option<Time>,
    dupacks: u32,
    recover: u64,
    in_fast_recovery: bool,
    /// Waiting for `recover` to be acked after a timeout (reported to the algorithm at the end).
    in_rto_recovery: bool,
    /// RFC 6582 window inflation on top of cwnd (without SACK).
    inflation: i64,
    partial_ack_seen: bool,
    /// `partial_ack_rto = every`: each partial ACK restarts the timer, not only the first.
    restart_rto_on_every_partial_ack: bool,
    /// Bytes sent by limited transmit since the last new ACK (excluded from FlightSize at the fast
    /// retransmit, RFC 5681 section 3.2 step 2).
    limited_transmit_bytes: u64,
    scoreboard: Scoreboard,
    high_rxt: u64,
    rtt: RttEstimator,
    /// ns-2's timer instead of RFC 6298's (`rto_estimator = ns2`).
    ns2_rto: Option<Box<Ns2Rto>>,
    rto_deadline: Option<Time>,
    /// ns-2 `maxburst_` (0 = no limit) and the segments sent by `try_send` in the current event.
    max_burst: u32,
    burst_sent: u32,
    ssthresh_whole_packets: bool,
    /// ns-2 Sack1 recovery instead of RFC 6675, and its state during a recovery episode.
    ns2_sack1_recovery: bool,
    ns2_sack1: Option<Ns2Sack1>,
    round: Round,
    cwnd_limited: bool,
    /// FreeBSD h_ertt's delayed-ACK guess: up when an ACK covers more than one segment, down when it
    /// covers one; while non-zero, single-segment ACKs give the algorithm no RTT sample.
    dlyack_guess: u8,
    latest_rtt: Option<Duration>,
    stats: SenderStats,
    min_rto: Duration,
    /// `recovery_window = "prr"`; `prr` holds the state while a SACK recovery runs.
    prr_on: bool,
    prr: Option<Prr>,
    /// RACK and the tail loss probe, when `loss_detection = "rack_tlp"` and SACK is on. Boxed, as
    /// is the ns-2 timer: a flow whose profile does not turn them on carries a pointer, not their
    /// state (docs/performance.md, "Memory per flow").
    rack: Option<Box<Rack>>,
    tlp: Option<Box<Tlp>>,
    /// Calls of the entry points that can change the state (every `pub fn` taking `&mut self`
    /// counts itself): while it stays the same, so do the window, the RTT estimates, the counters
    /// and the algorithm's metrics, and the recorder repeats the flow's last row instead of
    /// reading them again (`sim/recorder.rs`).
    changes: u64,
}

impl Sender {
    pub fn new(flow: u32, cfg: &TcpConfig, cc: Cc, bytes: Option<u64>) -> Sender {
        let mss = cfg.mss_bytes;
        let (initial_rto, min_rto, max_rto, granularity) = (
            Duration::from_nanos(cfg.initial_rto_ns),
            Duration::from_nanos(cfg.min_rto_ns),
            Duration::from_nanos(cfg.max_rto_ns),
            Duration::from_nanos(cfg.timer_granularity_ns),
        );
        let mut rtt = RttEstimator::new(initial_rto, min_rto, max_rto);
        rtt.set_granularity(granularity);
        let ns2_rto = match cfg.rto_estimator {
            RtoEstimator::Rfc6298 => None,
            RtoEstimator::Ns2 => Some(Box::new(Ns2Rto::new(initial_rto, min_rto, max_rto, granularity))),
            RtoEstimator::Linux => {
                rtt.use_linux_rule();
                None
            }
        };
        let mut w = crate::tcp::startup::initial_window(cfg);
        w.slow_start = match cfg.slow_start_rule {
            crate::scenario::SlowStartRule::Freebsd => ccsim_cc::SlowStartRule::Freebsd,
            crate::scenario::SlowStartRule::Linux => ccsim_cc::SlowStartRule::Linux,
        };
        let rack_tlp = cfg.sack && cfg.loss_detection == LossDetection::RackTlp && cfg.sack_recovery == SackRecovery::Rfc6675;
        Sender {
            flow,
            mss,
            header: cfg.header_bytes as u32,
            dupthresh: cfg.dupack_threshold,
            sack: cfg.sack,
            limited_transmit: cfg.limited_transmit,
            rwnd: cfg.rwnd_bytes,
            cc,
            w,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            app_end: bytes.unwrap_or(u64::MAX),
            bytes_limit: bytes,
            initial_window_bytes: cfg.initial_window_pkts * mss,
            last_send: None,
            dupacks: 0,
            recover: 0,
            in_fast_recovery: false,
            in_rto_recovery: false,
            inflation: 0,
            partial_ack_seen: false,
            restart_rto_on_every_partial_ack: cfg.partial_ack_rto == PartialAckRto::Every,
            limited_transmit_bytes: 0,
            scoreboard: Scoreboard::default(),
            high_rxt: 0,
            rtt,
            ns2_rto,
            rto_deadline: None,
            max_burst: cfg.max_burst_pkts,
            burst_sent: 0,
            ssthresh_whole_packets: cfg.ssthresh_whole_packets,
            ns2_sack1_recovery: cfg.sack_recovery == SackRecovery::Ns2Sack1,
            ns2_sack1: None,
            round: Round::default(),
            cwnd_limited: true,
            dlyack_guess: 0,
            latest_rtt: None,
            stats: SenderStats::default(),
            min_rto: Duration::from_nanos(cfg.min_rto_ns),
            prr_on: cfg.recovery_window == RecoveryWindow::Prr,
            prr: None,
            rack: rack_tlp.then(|| Box::new(Rack::new(mss))),
            tlp: rack_tlp.then(Box::<Tlp>::default),
            changes: 0,
        }
    }

    /// The construction context for this flow's algorithm.
    pub fn cc_init(cfg: &TcpConfig, rng: ccsim_cc::Rng) -> CcInit {
        CcInit {
            mss_bytes: cfg.mss_bytes,
            initial_cwnd_bytes: cfg.initial_window_pkts * cfg.mss_bytes,
            abc_limit_segments: cfg.abc_limit,
            rng,
        }
    }

    /// The application starts offering data.
    pub fn start(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.changes += 1;
        self.burst_sent = 0;
        self.cc.init(&mut self.w);
        self.round.started = now;
        self.cc.cwnd_event(&mut self.w, now, CwndEvent::TxStart); // Linux tcp_event_data_sent
        self.try_send(now, out);
        self.schedule_loss_probe(now, false);
    }

    /// The application stops offering new data; what was sent is still delivered reliably.
    pub fn stop(&mut self) {
        self.changes += 1;
        self.app_end = self.app_end.min(self.snd_max);
    }

    /// The application offers data again after a pause (an on/off schedule). After an idle period
    /// longer than the RTO, cwnd restarts from min(IW, cwnd) (RFC 5681 section 4.1, FreeBSD).
    pub fn resume(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.changes += 1;
        self.app_end = self.bytes_limit.unwrap_or(u64::MAX);
        self.burst_sent = 0;
        let nothing_in_flight = self.snd_una >= self.snd_max;
        let idle = nothing_in_flight && self.last_send.is_some_and(|t| now - t > self.rto());
        if idle {
            // Linux tcp_cwnd_restart: the event comes before the restart.
            self.cc.cwnd_event(&mut self.w, now, CwndEvent::CwndRestart);
            self.w.set_cwnd(self.w.cwnd_bytes.min(self.initial_window_bytes));
        }
        if nothing_in_flight {
            self.cc.cwnd_event(&mut self.w, now, CwndEvent::TxStart); // Linux tcp_event_data_sent
        }
        let snd_max = self.snd_max;
        self.try_send(now, out);
        if self.snd_max > snd_max {
            self.schedule_loss_probe(now, false);
        }
    }

    /// A rate-limited application (`sim/app_rate.rs`) has written its data up to sequence `end`:
    /// sending stops there, now and when the application resumes. Handled as a resumption, so the
    /// idle restart and `TxStart` apply as when Linux sends after idle (`tcp_event_data_sent`).
    pub fn app_wrote(&mut self, now: Time, end: u64, out: &mut Vec<Packet>) {
        self.changes += 1;
        self.bytes_limit = Some(end);
        self.resume(now, out);
    }

    /// All the application's data has been acknowledged.
    pub fn done(&self) -> bool {
        self.snd_una >= self.app_end
    }

    fn seg_len(&self, seq: u64) -> u64 {
        self.mss.min(self.app_end.saturating_sub(seq))
    }

    /// RFC 5681 FlightSize: data sent and not cumulatively acknowledged.
    pub fn flight_size(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// RFC 6675 section 4 SetPipe(): for each octet in [snd_una, snd_max), one if it is neither
    /// SACKed nor IsLost(), plus one if it was retransmitted (below HighRxt) and is not SACKed.
    ///
    /// Computed without walking the scoreboard: the octets not deemed lost are those above the
    /// IsLost() boundary, less the few SACKed ranges up there (walked from the top); the SACKed
    /// octets below HighRxt are a running sum the scoreboard keeps as blocks arrive, snd_una moves
    /// and HighRxt moves (`Scoreboard::set_mark`), since every SACKed range lies in
    /// [snd_una, snd_max]. A debug build checks both against sums over every range.
    pub fn pipe(&self) -> u64 {
        if let Some(rack) = &self.rack {
            // RACK's marks instead of IsLost(); retransmitted marked segments count again.
            return (self.snd_max - self.snd_una).saturating_sub(self.scoreboard.total() + rack.lost_bytes());
        }
        let not_lost = if self.scoreboard.is_empty() {
            // Nothing SACKed (most ACKs): nothing lost, nothing SACKed above.
            self.snd_max - self.snd_una
        } else {
            let x = self.scoreboard.lost_bound(self.dupthresh, self.mss);
            // Segments are MSS-aligned, so the lost ones are exactly those below this boundary.
            let lost_end = (x / self.mss * self.mss).clamp(self.snd_una, self.snd_max);
            let sacked_not_lost = self.scoreboard.sacked_above(lost_end);
            debug_assert_eq!(sacked_not_lost, self.scoreboard.sacked_in(lost_end, self.snd_max));
            (self.snd_max - lost_end) - sacked_not_lost
        };
        let hr = self.high_rxt.clamp(self.snd_una, self.snd_max);
        let sacked_retransmitted = self.scoreboard.sacked_below_mark();
        debug_assert_eq!(sacked_retransmitted, self.scoreboard.sacked_in(self.snd_una, hr));
        let retransmitted = (hr - self.snd_una) - sacked_retransmitted;
        not_lost + retransmitted
    }

    /// Sets HighRxt and the scoreboard's mark with it (the SACKed bytes below HighRxt for `pipe`).
    fn set_high_rxt(&mut self, high_rxt: u64) {
        self.high_rxt = high_rxt;
        self.scoreboard.set_mark(high_rxt);
    }

    /// The pipe as ns-3 computes it when it enters fast recovery (`TcpSocketBase::EnterRecovery`
    /// marks the first unacknowledged segment lost, then asks `BytesInFlight()`): what
    /// `halve_from = "pipe"` halves. Equal to `pipe()` once three segments above the head are SACKed.
    fn pipe_with_head_lost(&self) -> u64 {
        let head_end = self.snd_una + self.seg_len(self.snd_una);
        let head_deemed_lost = self.scoreboard.lost_bound(self.dupthresh, self.mss) >= head_end;
        let head_in_pipe = if head_deemed_lost { 0 } else { head_end - self.snd_una };
        self.pipe().saturating_sub(head_in_pipe)
    }

    /// Bytes in flight as reported to the algorithm (and halved at a loss): what is in the network,
    /// not the sequence span. With SACK during recovery that is the RFC 6675 pipe. Without SACK the
    /// sender has no scoreboard, and the span can far exceed the path: during NewReno recovery it
    /// also holds what the receiver has already got above the hole (one segment per duplicate ACK,
    /// which is what the RFC 6582 inflation counts), and the inflated window can leave more data
    /// outstanding after recovery than the deflated cwnd allows. So without SACK the amount is the
    /// span less the inflation (Linux counts dupacks as SACKed segments, `tcp_add_reno_sack`, in
    /// `tcp_packets_in_flight`), and never more than cwnd, the window that let data in (Linux
    /// `tcp_reno_ssthresh` and FreeBSD `newreno_cong_signal` halve cwnd). See docs/choices.md.
    fn in_flight(&self) -> u64 {
        let span = self.snd_nxt.saturating_sub(self.snd_una);
        match (self.sack, self.in_fast_recovery) {
            (true, true) => self.pipe(),
            (true, false) => span,
            (false, true) => span.saturating_sub(self.inflation.max(0) as u64).min(self.w.cwnd_bytes),
            (false, false) => span.min(self.w.cwnd_bytes),
        }
    }

    /// The retransmission timer's current value, backoff included.
    fn rto(&self) -> Duration {
        match &self.ns2_rto {
            Some(ns2) => ns2.rto(),
            None => self.rtt.rto(),
        }
    }

    /// When the retransmission timer started at `now` expires (`now + rto()`, RFC 6298 5.1 and
    /// 5.3), without converting the RFC 6298 timer's nanoseconds to a `Duration` and back on every ACK.
    #[inline]
    fn rto_from(&self, now: Time) -> Time {
        match &self.ns2_rto {
            Some(ns2) => now + ns2.rto(),
            None => Time(now.0.saturating_add(self.rtt.rto_ns())),
        }
    }

    /// Consecutive expiries of the timer without a valid RTT sample, this one included.
    fn rto_expiries(&self) -> u32 {
        match &self.ns2_rto {
            Some(ns2) => ns2.expiries(),
            None => self.rtt.backoff,
        }
    }

    fn arm_rto_if_idle(&mut self, now: Time) {
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(self.rto_from(now));
        }
    }

    fn restart_rto(&mut self, now: Time) {
        self.rto_deadline = if self.snd_una < self.snd_max { Some(self.rto_from(now)) } else { None };
    }

    /// ns-2 `maxburst_`: `try_send` has sent all this event may send.
    fn burst_exhausted(&self) -> bool {
        self.max_burst > 0 && self.burst_sent >= self.max_burst
    }

    /// Stores the algorithm's ssthresh after a loss (whole segments, at least 2, with
    /// `ssthresh_whole_packets`, as ns-2 `slowdown`); returns the unrounded value for cwnd.
    fn store_ssthresh(&mut self, ssthresh: u64) -> u64 {
        self.w.ssthresh_bytes = if self.ssthresh_whole_packets { (ssthresh / self.mss).max(2) * self.mss } else { ssthresh };
        ssthresh
    }

    /// `send_segment_inline` called: a call everywhere but in the open state's loop.
    #[inline(never)]
    fn send_segment(&mut self, now: Time, seq: u64, out: &mut Vec<Packet>) -> u64 {
        self.send_segment_inline(now, seq, out)
    }

    /// Sends the segment at `seq`; returns its length.
    #[inline(always)]
    fn send_segment_inline(&mut self, now: Time, seq: u64, out: &mut Vec<Packet>) -> u64 {
        let len = self.seg_len(seq);
        debug_assert!(len > 0);
        let retx = seq < self.snd_max;
        let pkt = Packet::data(self.flow, seq, len as u32, self.header, now, retx);
        self.stats.data_pkts_sent += 1;
        self.stats.payload_bytes_sent += len;
        self.stats.wire_bytes_sent += pkt.wire_bytes as u64;
        if retx {
            self.stats.retransmits += 1;
            self.stats.retransmitted_bytes += len;
        } else if let Some(ns2) = &mut self.ns2_rto {
            ns2.on_new_data(seq + len, now);
        }
        self.snd_max = self.snd_max.max(seq + len);
        self.last_send = Some(now);
        if let Some(rack) = &mut self.rack {
            rack.on_send(now, seq, len);
        }
        if let Some(prr) = &mut self.prr {
            prr.on_sent(len); // RFC 6937 prr_out
        }
        if self.round.marker.is_none() {
            self.round.marker = Some(seq + len);
        }
        self.arm_rto_if_idle(now);
        out.push(pkt);
        len
    }

    /// The application has new data and the receiver window takes the next segment.
    fn new_data_allowed(&self) -> bool {
        self.segment_allowed_at(self.snd_max).is_some()
    }

    /// RFC 6675 NextSeg(): the next segment to send during SACK recovery, and whether it is new data.
    fn next_seg(&self) -> Option<u64> {
        if let Some(rack) = &self.rack {
            // Linux tcp_xmit_retransmit_queue: the segments RACK marked lost, in order; then new data.
            return rack.first_lost().or(self.new_data_allowed().then_some(self.snd_max));
        }
        let x = self.scoreboard.lost_bound(self.dupthresh, self.mss);
        let highest = self.scoreboard.highest().unwrap_or(self.snd_una);
        let mut s = self.high_rxt.max(self.snd_una);
        // Rule 1: the first unSACKed segment above HighRxt that IsLost().
        let mut rule3 = None;
        while s < self.snd_max {
            if let Some(end) = self.scoreboard.sacked_until(s) {
                s = end;
                continue;
            }
            let len = self.seg_len(s).max(1);
            if s + len <= x {
                return Some(s);
            }
            if rule3.is_none() && s < highest {
                rule3 = Some(s);
            }
            break;
        }
        // Rule 2: new data, if the application and the receiver window allow.
        if self.new_data_allowed() {
            return Some(self.snd_max);
        }
        // Rule 3: an unSACKed segment below the highest SACKed one, even if not yet deemed lost.
        rule3
    }

    /// Sends what the windows allow (from the entry points, which count the change).
    fn try_send(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.max_burst == 0 && !self.in_fast_recovery && self.dupacks == 0 && self.snd_nxt == self.snd_max {
            self.send_open(now, out);
            return;
        }
        loop {
            if self.burst_exhausted() {
                self.cwnd_limited = true;
                return;
            }
            if self.in_fast_recovery && self.sack {
                let next = match &self.ns2_sack1 {
                    Some(ns2) => {
                        if !ns2.may_send(self.w.cwnd_bytes / self.mss) {
                            self.cwnd_limited = true;
                            return;
                        }
                        ns2_sack1::next_hole(&self.scoreboard, self.high_rxt.max(self.snd_una), self.snd_max)
                            .or_else(|| self.new_data_allowed().then_some(self.snd_max))
                    }
                    None => {
                        if self.pipe() + self.mss > self.w.cwnd_bytes.max(self.mss) {
                            self.cwnd_limited = true;
                            return;
                        }
                        self.next_seg()
                    }
                };
                match next {
                    Some(seq) => {
                        let retransmission = seq < self.snd_max;
                        let len = self.send_segment(now, seq, out);
                        self.burst_sent += 1;
                        if let Some(ns2) = &mut self.ns2_sack1 {
                            ns2.on_send();
                        }
                        if retransmission {
                            self.set_high_rxt(self.high_rxt.max(seq + len));
                        }
                        self.snd_nxt = self.snd_nxt.max(self.snd_max);
                    }
                    None => {
                        self.cwnd_limited = false;
                        return;
                    }
                }
                continue;
            }
            // Going back after a timeout: skip what the receiver has SACKed since.
            if self.snd_nxt < self.snd_max {
                if let Some(end) = self.scoreboard.sacked_until(self.snd_nxt) {
                    self.snd_nxt = end.min(self.snd_max);
                    continue;
                }
            }
            let Some(len) = self.segment_allowed_at(self.snd_nxt) else {
                self.cwnd_limited = false;
                return;
            };
            let cwnd = self.w.cwnd_bytes.max(self.mss) as i64;
            let mut window = cwnd;
            if self.in_fast_recovery {
                window += self.inflation;
            } else if self.limited_transmit && self.dupacks > 0 && self.snd_nxt == self.snd_max {
                window += self.dupacks.min(2) as i64 * self.mss as i64; // RFC 3042
            }
            let flight = (self.snd_nxt - self.snd_una) as i64;
            if flight + len as i64 > window.max(self.mss as i64) {
                self.cwnd_limited = true;
                return;
            }
            let seq = self.snd_nxt;
            let sent = self.send_segment(now, seq, out);
            self.burst_sent += 1;
            if !self.in_fast_recovery && flight + sent as i64 > cwnd {
                self.limited_transmit_bytes += sent;
            }
            self.snd_nxt = seq + sent;
        }
    }

    /// The length of the segment at `seq` if the application has data there and the receiver
    /// window takes it (the limits other than cwnd, which leave the flow not cwnd-limited).
    #[inline(always)]
    fn segment_allowed_at(&self, seq: u64) -> Option<u64> {
        if seq >= self.app_end {
            return None;
        }
        let len = self.seg_len(seq);
        (seq + len - self.snd_una <= self.rwnd).then_some(len)
    }

    /// `try_send` in the open state, the common case: no recovery, no duplicate ACKs (so no
    /// limited transmit, RFC 3042), nothing to go back over after a timeout, no burst limit. The
    /// same rules as the general loop with what cannot apply left out: new segments while the
    /// application has data, the receiver window takes them and FlightSize stays within cwnd
    /// (RFC 5681 section 3; the send loop of FreeBSD `tcp_output`, Linux `tcp_write_xmit`).
    fn send_open(&mut self, now: Time, out: &mut Vec<Packet>) {
        let cwnd = self.w.cwnd_bytes.max(self.mss);
        loop {
            let Some(len) = self.segment_allowed_at(self.snd_nxt) else {
                self.cwnd_limited = false;
                return;
            };
            if self.snd_nxt - self.snd_una + len > cwnd {
                self.cwnd_limited = true;
                return;
            }
            let seq = self.snd_nxt;
            let sent = self.send_segment_inline(now, seq, out);
            self.burst_sent += 1;
            self.snd_nxt = seq + sent;
        }
    }

    fn enter_fast_recovery(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.in_fast_recovery = true;
        self.in_rto_recovery = false;
        self.recover = self.snd_max;
        self.partial_ack_seen = false;
        self.stats.fast_retransmits += 1;
        // RFC 5681 eq. (4) FlightSize, less the segments limited transmit sent (section 3.2 step 2);
        // without SACK bounded by cwnd as in `in_flight`: after an inflated NewReno recovery the span
        // can be several windows (FreeBSD and Linux halve cwnd here).
        let flight = self.flight_size() - self.limited_transmit_bytes.min(self.flight_size());
        let flight_at_loss = if self.sack { flight } else { flight.min(self.w.cwnd_bytes) };
        let ev = LossEvent {
            now,
            kind: LossKind::FastRetransmit,
            bytes_in_flight: flight_at_loss,
            pipe_bytes: if self.sack { self.pipe_with_head_lost() } else { flight_at_loss },
            min_rtt: self.rtt.min,
            srtt: self.srtt(),
        };
        let ssthresh = self.cc.ssthresh_after_loss(&self.w, &ev).max(self.mss);
        let prior_cwnd = self.w.cwnd_bytes;
        let cwnd = self.store_ssthresh(ssthresh);
        self.w.set_cwnd(cwnd);
        // The fast retransmission restarts the timer: FreeBSD `tcp_do_segment` stops TT_REXMT before
        // `tcp_output` re-arms it, Linux `tcp_xmit_retransmit_queue` re-arms it when it resends the
        // head, ns-2 `dupack_action` calls `reset_rtx_timer(1, 0)`. Without this, a timer started by
        // an earlier segment can fire while the retransmission is still in flight (a spurious timeout).
        if let Some(ns2) = &mut self.ns2_rto {
            ns2.cancel_timing(); // ns-2 also stops timing the segment in flight
        }
        self.rto_deadline = Some(self.rto_from(now));
        if self.sack && self.ns2_sack1_recovery {
            let outstanding_pkts = self.flight_size().div_ceil(self.mss);
            self.ns2_sack1 = Some(Ns2Sack1::enter(outstanding_pkts, self.dupthresh));
        }
        if self.prr_on && self.sack && !self.ns2_sack1_recovery {
            self.prr = Some(Prr::start(prior_cwnd, self.w.ssthresh_bytes)); // Linux tcp_init_cwnd_reduction
        }
        if let Some(tlp) = &mut self.tlp {
            tlp.reset();
        }
        // Retransmit the first unacknowledged segment (RFC 5681 3.2 step 2 / RFC 6675 step 4.3), or
        // with RACK the first one it marked lost.
        let seq = self.rack.as_deref().and_then(Rack::first_lost).unwrap_or(self.snd_una);
        let len = self.send_segment(now, seq, out);
        self.set_high_rxt(seq + len);
        if !self.sack {
            self.inflation = self.dupthresh as i64 * self.mss as i64; // cwnd = ssthresh + 3*SMSS
        }
        if self.prr.is_none() {
            self.try_send(now, out); // with PRR the ACK's own window comes first
        }
    }

    /// Handles an arriving ACK; packets to send are pushed to `out`. Returns the ACK's RTT sample.
    pub fn on_ack(&mut self, now: Time, ack: &Packet, sack: &[(u64, u64)], out: &mut Vec<Packet>) -> Option<Duration> {
        self.changes += 1;
        let ackno = ack.seq;
        if ackno < self.snd_una || ackno > self.snd_max {
            return None; // old or impossible ACK
        }
        self.burst_sent = 0;
        if let Some(ns2) = &mut self.ns2_sack1 {
            ns2.on_ack(ackno > self.snd_una && ackno < self.recover);
        }
        // Karn: no sample when the echoed segment was a retransmission. Its nanoseconds are kept
        // beside it: the estimator and the round's extremes need no conversion back.
        let karn_ns = if !ack.retx && ack.tx_time <= now { Some(now.0 - ack.tx_time.0) } else { None };
        let karn_sample = karn_ns.map(Duration::from_nanos);
        let newly_acked = ackno - self.snd_una;
        let delivered_before = self.delivered();
        let lost_bound_before = if self.prr_on { self.scoreboard.lost_bound(self.dupthresh, self.mss) } else { 0 };
        let snd_max_before = self.snd_max;
        let mut newly_sacked = 0;
        let mut rack_sacked = Vec::new();
        if self.sack {
            for &(a, b) in sack {
                let b = b.min(self.snd_max);
                if self.rack.is_some() {
                    self.scoreboard.uncovered(a.max(ackno), b, &mut rack_sacked);
                }
                newly_sacked += self.scoreboard.add(a, b, ackno);
            }
        }
        // The algorithms' sample also skips ACKs that were probably held by the receiver's delayed-ACK
        // timer (its delay is not path delay), as FreeBSD h_ertt does; see docs/choices.md.
        let held_back = newly_acked > 0 && newly_acked <= self.mss && newly_sacked == 0 && self.dlyack_guess > 0;
        if newly_acked > self.mss {
            self.dlyack_guess = (self.dlyack_guess + 1).min(5);
        } else if newly_acked > 0 {
            self.dlyack_guess = self.dlyack_guess.saturating_sub(1);
        }
        let rtt_sample = karn_sample.filter(|_| !held_back);
        if let (Some(r), Some(n)) = (rtt_sample, karn_ns) {
            self.rtt.observe(r, n);
            self.latest_rtt = Some(r);
            self.round.max_rtt_ns = Some(self.round.max_rtt_ns.map_or(n, |m| m.max(n)));
            self.round.min_rtt_ns = Some(self.round.min_rtt_ns.map_or(n, |m| m.min(n)));
        }
        let was_in_recovery = self.in_fast_recovery;
        let is_dupack = newly_acked == 0 && self.snd_max > self.snd_una;
        let mut exit = None;
        // RACK learns what was delivered (cumulatively first, then the new SACK blocks in order), and
        // the tail loss probe whether its episode ended (Linux tcp_clean_rtx_queue, tcp_sacktag_one,
        // tcp_process_tlp_ack).
        if let Some(rack) = &mut self.rack {
            if newly_acked > 0 {
                rack.on_cum_ack(now, ackno, ack.tx_time, self.rtt.min);
            }
            rack_sacked.sort_unstable();
            for &(a, b) in &rack_sacked {
                rack.on_sacked(now, a, b, self.rtt.min);
            }
        }
        if self.tlp.as_deref_mut().is_some_and(|t| t.on_ack(ackno, newly_acked > 0, newly_sacked > 0) == ProbeAck::LossRepaired) {
            exit = Some(self.reduce_after_loss_probe(now));
        }

        if newly_acked > 0 {
            match &mut self.ns2_rto {
                Some(ns2) => {
                    ns2.on_ack(ackno, now);
                }
                None => {
                    if let (Some(r), Some(n)) = (karn_sample, karn_ns) {
                        self.rtt.update_rto_ns(r, n, ackno, self.snd_max);
                    }
                }
            }
            self.snd_una = ackno;
            self.snd_nxt = self.snd_nxt.max(ackno);
            self.scoreboard.advance(ackno);
            self.dupacks = 0;
            self.limited_transmit_bytes = 0;
            let mut restart_timer = true;
            if self.in_fast_recovery {
                if ackno >= self.recover {
                    // Full ACK: recovery ends (RFC 6582 step 3 / RFC 6675).
                    self.in_fast_recovery = false;
                    self.ns2_sack1 = None;
                    self.inflation = 0;
                    self.prr = None;
                    exit = Some(RecoveryExit { now, bytes_in_flight: self.flight_size(), after_timeout: false });
                } else if !self.sack {
                    // Partial ACK (RFC 6582 step 5).
                    let seq = self.snd_una;
                    self.send_segment(now, seq, out);
                    self.inflation -= newly_acked as i64;
                    if newly_acked >= self.mss {
                        self.inflation += self.mss as i64;
                    }
                    restart_timer = self.restart_rto_on_every_partial_ack || !self.partial_ack_seen;
                    self.partial_ack_seen = true;
                }
            } else if self.in_rto_recovery && ackno >= self.recover {
                self.in_rto_recovery = false;
                exit = Some(RecoveryExit { now, bytes_in_flight: self.flight_size(), after_timeout: true });
            }
            if restart_timer {
                self.restart_rto(now);
            } else if self.snd_una >= self.snd_max {
                self.rto_deadline = None;
            }
        } else if is_dupack {
            if self.in_fast_recovery {
                if !self.sack {
                    self.inflation += self.mss as i64; // RFC 6582 step 4
                }
            } else {
                self.dupacks += 1;
                let sack_says_lost = self.sack
                    && self.scoreboard.lost_bound(self.dupthresh, self.mss) >= self.snd_una + self.seg_len(self.snd_una);
                // RFC 6582 3.2 step 1: a new fast retransmit only once `recover` has been acked.
                if self.rack.is_none() && (self.dupacks >= self.dupthresh || sack_says_lost) && self.snd_una >= self.recover {
                    self.enter_fast_recovery(now, out);
                }
            }
        }
        // RACK: loss detection on this ACK, and recovery once a segment is marked lost (Linux
        // tcp_identify_packet_loss, tcp_time_to_recover "the loss is proven").
        let cx = if self.rack.is_some() { Some(self.rack_context(now)) } else { None };
        let newly_lost = match (&mut self.rack, cx) {
            (Some(rack), Some(cx)) => {
                let marked = rack.on_ack_detect(&cx) > 0;
                if !self.in_fast_recovery && rack.lost_bytes() > 0 && self.snd_una >= self.recover {
                    self.enter_fast_recovery(now, out);
                }
                marked
            }
            _ => self.prr_on && self.scoreboard.lost_bound(self.dupthresh, self.mss) > lost_bound_before,
        };

        // The algorithm sees the round first (if this ACK ended it), then the ACK, then the exit.
        if self.round.marker.is_some_and(|m| self.snd_una >= m) {
            let delivered = self.delivered();
            let r = RoundSample {
                now,
                index: self.round.index,
                rtt: rtt_sample,
                max_rtt_in_round: self.round.max_rtt_ns.map(Duration::from_nanos),
                min_rtt_in_round: self.round.min_rtt_ns.map(Duration::from_nanos),
                min_rtt: self.rtt.min,
                delivered_bytes: delivered - self.round.delivered_at_start,
                duration: now - self.round.started,
            };
            self.cc.on_round(&mut self.w, &r);
            self.stats.rounds += 1;
            self.round = Round { marker: None, index: self.round.index + 1, started: now, delivered_at_start: delivered, max_rtt_ns: None, min_rtt_ns: None };
        }
        let sample = AckSample {
            now,
            bytes_acked: newly_acked,
            bytes_sacked: newly_sacked,
            is_dupack,
            rtt: rtt_sample,
            min_rtt: self.rtt.min,
            max_rtt: self.rtt.max,
            srtt: self.srtt(),
            bytes_in_flight: self.in_flight(),
            delivered_bytes: self.delivered(),
            snd_una: self.snd_una,
            snd_max: self.snd_max,
            in_recovery: was_in_recovery,
            cwnd_limited: self.cwnd_limited,
        };
        self.cc.on_ack(&mut self.w, &sample);
        if let Some(e) = exit {
            self.cc.on_recovery_exit(&mut self.w, &e);
            if !e.after_timeout {
                self.cc.cwnd_event(&mut self.w, now, CwndEvent::CompleteCwr); // Linux tcp_end_cwnd_reduction
            }
        }
        // PRR sets the window of every ACK in SACK recovery (Linux tcp_cong_control ->
        // tcp_cwnd_reduction), after the algorithm has seen the ACK.
        if self.in_fast_recovery && self.prr.is_some() {
            let (delivered, pipe) = (self.delivered() - delivered_before, self.pipe());
            if let Some(cwnd) = self.prr.as_mut().and_then(|p| p.on_ack(delivered, pipe, newly_acked > 0, newly_lost, self.mss)) {
                self.w.set_cwnd(cwnd);
            }
        }
        self.w.cwnd_bytes = self.w.cwnd_bytes.max(self.mss);
        self.try_send(now, out);
        if newly_acked > 0 || self.snd_max > snd_max_before {
            self.schedule_loss_probe(now, newly_acked > 0); // Linux tcp_set_xmit_timer, tcp_write_xmit
        }
        rtt_sample
    }

    /// A retransmitted tail loss probe repaired a loss (Linux `tcp_process_tlp_ack`): one window
    /// reduction, entered and left at once (CWR), reported to the algorithm as a loss detected without
    /// a timeout and a completed recovery. Returns the recovery exit to report after the ACK.
    fn reduce_after_loss_probe(&mut self, now: Time) -> RecoveryExit {
        let flight = self.in_flight();
        let ev = LossEvent { now, kind: LossKind::FastRetransmit, bytes_in_flight: flight, pipe_bytes: if self.sack { self.pipe() } else { flight }, min_rtt: self.rtt.min, srtt: self.srtt() };
        let ssthresh = self.cc.ssthresh_after_loss(&self.w, &ev).max(self.mss);
        let cwnd = self.store_ssthresh(ssthresh);
        self.w.set_cwnd(cwnd); // tcp_end_cwnd_reduction
        RecoveryExit { now, bytes_in_flight: flight, after_timeout: false }
    }

    /// What RACK's loss detection needs from the machine.
    fn rack_context(&self, now: Time) -> DetectContext {
        DetectContext {
            now,
            in_recovery: self.in_fast_recovery || self.in_rto_recovery,
            dupthresh: self.dupthresh,
            min_rtt: self.rtt.min,
            srtt: self.srtt(),
        }
    }

    /// Arms the tail loss probe or, when the connection is not in the open state, disarms it (Linux
    /// `tcp_schedule_loss_probe`). `advancing`: an ACK of new data restarts the RTO from now.
    #[inline(always)] // the test inline: without a probe (the common case) no call per ACK
    fn schedule_loss_probe(&mut self, now: Time, advancing: bool) {
        if self.tlp.is_some() {
            self.schedule_armed_loss_probe(now, advancing);
        }
    }

    /// `schedule_loss_probe` with the probe on.
    #[inline(never)]
    fn schedule_armed_loss_probe(&mut self, now: Time, advancing: bool) {
        let rto_in = match (advancing, self.rto_deadline) {
            (false, Some(d)) => d.saturating_since(now),
            _ => self.rto(),
        };
        let open = !self.in_fast_recovery
            && !self.in_rto_recovery
            && self.scoreboard.is_empty()
            && self.rack.as_deref().map_or(true, |r| r.lost_bytes() == 0);
        let cx = ProbeContext {
            now,
            srtt: self.srtt(),
            segments_out: (self.snd_max - self.snd_una).div_ceil(self.mss),
            min_rto: self.min_rto,
            rto_in,
            open,
        };
        if let Some(tlp) = &mut self.tlp {
            tlp.schedule(&cx);
        }
    }

    /// The probe timeout fired (Linux `tcp_send_loss_probe`): new data if the application and the
    /// receiver window allow, cwnd notwithstanding, else the highest-sequence segment again; then the
    /// RTO restarts from the probe.
    fn send_loss_probe(&mut self, now: Time, out: &mut Vec<Packet>) {
        let allowed = self.tlp.as_deref_mut().is_some_and(Tlp::fire);
        if !allowed || self.snd_una >= self.snd_max {
            return; // an episode is open: the RTO keeps running
        }
        let new_data = self.snd_nxt == self.snd_max && self.new_data_allowed();
        let seq = if new_data { self.snd_max } else { (self.snd_max - 1) / self.mss * self.mss };
        self.send_segment(now, seq, out);
        self.snd_nxt = self.snd_nxt.max(self.snd_max);
        if let Some(tlp) = &mut self.tlp {
            tlp.probe_sent(self.snd_max, !new_data);
        }
        self.stats.loss_probes += 1;
        self.rto_deadline = Some(self.rto_from(now));
    }

    /// RACK's reordering timer fired (Linux `tcp_rack_reo_timeout`): mark what is now overdue, start
    /// recovery if needed (PRR counts one delivered segment, as Linux), and retransmit.
    fn on_reorder_timeout(&mut self, now: Time, out: &mut Vec<Packet>) {
        let cx = self.rack_context(now);
        let Some(rack) = &mut self.rack else { return };
        if rack.on_reo_timeout(&cx) == 0 {
            return;
        }
        if !self.in_fast_recovery {
            if self.snd_una < self.recover {
                return; // recovery after an RTO: go-back-N covers it
            }
            self.enter_fast_recovery(now, out);
            let pipe = self.pipe();
            if let Some(cwnd) = self.prr.as_mut().and_then(|p| p.on_ack(self.mss, pipe, false, false, self.mss)) {
                self.w.set_cwnd(cwnd);
            }
        }
        self.try_send(now, out);
    }

    /// When the retransmission timer fires next: the RTO, and with RACK-TLP the probe and reordering
    /// timeouts it also carries (Linux `icsk_retransmit_timer` with `ICSK_TIME_LOSS_PROBE` and
    /// `ICSK_TIME_REO_TIMEOUT`).
    pub fn timer_deadline(&self) -> Option<Time> {
        // Written out: called after every event of the flow, and the optional mechanisms are boxed.
        let earliest = |a: Option<Time>, b: Option<Time>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let (tlp, reo) = match (&self.tlp, &self.rack) {
            (None, None) => return self.rto_deadline,
            (tlp, rack) => (tlp.as_deref().and_then(Tlp::deadline), rack.as_deref().and_then(Rack::reo_deadline)),
        };
        earliest(earliest(self.rto_deadline, tlp), reo)
    }

    /// The retransmission timer fired: the earliest due of probe, reordering timeout and RTO (a probe
    /// or reordering timeout due at the same time as the RTO goes first, as it replaces the RTO in
    /// Linux's single timer).
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.changes += 1;
        let due = |d: Option<Time>| d.filter(|&d| d <= now);
        let tlp = due(self.tlp.as_deref().and_then(Tlp::deadline));
        let reo = due(self.rack.as_deref().and_then(Rack::reo_deadline));
        let rto = due(self.rto_deadline);
        match [tlp, reo, rto].into_iter().flatten().min() {
            None => {}
            Some(t) if tlp == Some(t) => self.send_loss_probe(now, out),
            Some(t) if reo == Some(t) => self.on_reorder_timeout(now, out),
            Some(_) => self.on_rto(now, out),
        }
    }

    /// Bytes the receiver is known to hold: cumulatively acked plus SACKed.
    pub fn delivered(&self) -> u64 {
        self.snd_una + self.scoreboard.total()
    }

    /// The retransmission timer expired (RFC 6298 5.4-5.6, RFC 5681 3.1, RFC 6582 3.2 step 1).
    pub fn on_rto(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.changes += 1;
        self.rto_deadline = None;
        if self.snd_una >= self.snd_max {
            return;
        }
        self.stats.timeouts += 1;
        self.burst_sent = 0;
        match &mut self.ns2_rto {
            Some(ns2) => ns2.on_timeout(),
            None => self.rtt.on_timeout(),
        }
        // What is really outstanding: during SACK recovery new data keeps flowing while a lost
        // retransmission waits for this timer, so snd_max - snd_una can far exceed the window; the
        // RFC 6675 pipe is the amount in the network (FreeBSD and Linux use cwnd here).
        let ev = LossEvent {
            now,
            kind: LossKind::Timeout { backoff: self.rto_expiries() },
            bytes_in_flight: self.in_flight(),
            pipe_bytes: if self.sack { self.pipe() } else { self.in_flight() },
            min_rtt: self.rtt.min,
            srtt: self.srtt(),
        };
        let ssthresh = self.cc.ssthresh_after_loss(&self.w, &ev).max(self.mss);
        self.store_ssthresh(ssthresh);
        self.cc.cwnd_event(&mut self.w, now, CwndEvent::Loss); // Linux tcp_enter_loss
        self.w.set_cwnd(self.mss);
        self.in_fast_recovery = false;
        self.ns2_sack1 = None;
        self.in_rto_recovery = true;
        self.inflation = 0;
        self.dupacks = 0;
        self.limited_transmit_bytes = 0;
        self.recover = self.snd_max;
        self.scoreboard.clear();
        self.prr = None;
        if let Some(rack) = &mut self.rack {
            rack.on_rto();
        }
        if let Some(tlp) = &mut self.tlp {
            tlp.reset();
        }
        self.set_high_rxt(self.snd_una);
        self.snd_nxt = self.snd_una;
        self.rto_deadline = Some(self.rto_from(now));
        self.try_send(now, out);
    }

    /// The window that limits sending now: cwnd, plus RFC 6582 inflation during NewReno recovery.
    pub fn effective_cwnd(&self) -> u64 {
        (self.w.cwnd_bytes as i64 + if self.in_fast_recovery { self.inflation } else { 0 }).max(self.mss as i64) as u64
    }

    /// The smoothed RTT of the retransmission timer in use.
    pub fn srtt(&self) -> Option<Duration> {
        match &self.ns2_rto {
            Some(ns2) => ns2.srtt(),
            None => self.rtt.srtt(),
        }
    }

    // Read-only views for the simulation's bookkeeping and measurement; only the machine changes state.

    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }

    /// cwnd and ssthresh as the algorithm last left them.
    pub fn window(&self) -> &Window {
        &self.w
    }

    /// The latest raw RTT sample.
    pub fn latest_rtt(&self) -> Option<Duration> {
        self.latest_rtt
    }

    /// Lifetime (minimum, maximum) RTT sample.
    pub fn rtt_range(&self) -> (Option<Duration>, Option<Duration>) {
        (self.rtt.min, self.rtt.max)
    }

    /// How many times the state may have changed (see the field): equal counts, equal state.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// The algorithm's own state variables, for the per-interval series, appended to `out`.
    pub fn cc_metrics(&self, out: &mut Vec<Metric>) {
        self.cc.metrics(out)
    }

    /// Highest sequence number sent so far (one past the last byte).
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }

    /// When the RTO fires, if it runs (see `timer_deadline` for the timer that carries it).
    pub fn rto_deadline(&self) -> Option<Time> {
        self.rto_deadline
    }

    /// Segments RACK has marked lost (0 without RACK).
    pub fn rack_marked_lost(&self) -> u64 {
        self.rack.as_deref().map_or(0, Rack::marked_lost_total)
    }
}

#[cfg(test)]
#[path = "sender_ns2_tests.rs"]
mod ns2_tests;

#[cfg(test)]
mod tests {
    //! Scripted sequences for the machine's NewReno behaviour (SACK off unless said), with
    //! hand-computed windows. MSS 1000, IW 10, no ABC surprises: the algorithm is NewReno.
    use super::*;
    use crate::packet::{Packet, PacketKind};
    use ccsim_cc::{ParamMap, Rng};

    const MSS: u64 = 1000;

    fn cfg(sack: bool) -> TcpConfig {
        TcpConfig { mss_bytes: MSS, header_bytes: 40, initial_window_pkts: 10, sack, ..crate::fixtures::tcp_config() }
    }

    fn sender(sack: bool) -> (Sender, Vec<Packet>) {
        let c = cfg(sack);
        let cc = ccsim_cc::build("newreno", &ParamMap::new(), &Sender::cc_init(&c, Rng::new(1, 1))).unwrap();
        let mut s = Sender::new(0, &c, cc, None);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        (s, out)
    }

    fn ack(seq: u64, echo_ms: u64, retx: bool) -> Packet {
        let mut p = Packet::data(0, 0, 0, 40, Time::from_millis(echo_ms), retx);
        p.kind = PacketKind::Ack;
        p.seq = seq;
        p
    }

    fn at(ms: u64) -> Time {
        Time::from_millis(ms)
    }

    fn seqs(out: &[Packet]) -> Vec<(u64, bool)> {
        out.iter().map(|p| (p.seq, p.retx)).collect()
    }

    /// Each entry point counts itself in `changes` (the recorder copies a flow's last row while the
    /// count stands still, `sim/recorder.rs`): a new row must be read after any of them.
    #[test]
    fn every_entry_point_counts_a_change() {
        let (mut s, mut out) = sender(false);
        let mut last = s.changes();
        assert!(last > 0, "start counts");
        let mut step = |s: &mut Sender, what: &str, f: &dyn Fn(&mut Sender, &mut Vec<Packet>)| {
            f(s, &mut out);
            assert!(s.changes() > last, "{what} did not count a change");
            last = s.changes();
        };
        step(&mut s, "on_ack", &|s, out| {
            s.on_ack(at(40), &ack(MSS, 0, false), &[], out);
        });
        step(&mut s, "on_timer", &|s, out| s.on_timer(at(100_000), out));
        step(&mut s, "on_rto", &|s, out| s.on_rto(at(200_000), out));
        step(&mut s, "stop", &|s, _| s.stop());
        step(&mut s, "resume", &|s, out| s.resume(at(300_000), out));
        step(&mut s, "app_wrote", &|s, out| s.app_wrote(at(300_001), 50 * MSS, out));
    }

    /// Records the `cwnd_event`s the machine sends; NewReno-like otherwise.
    struct EventRecorder(std::sync::Arc<std::sync::Mutex<Vec<CwndEvent>>>);
    impl CongestionControl for EventRecorder {
        fn name(&self) -> &'static str {
            "recorder"
        }
        fn on_ack(&mut self, _w: &mut Window, _ack: &AckSample) {}
        fn ssthresh_after_loss(&mut self, w: &Window, _loss: &LossEvent) -> u64 {
            ccsim_cc::half_window(w.cwnd_bytes, w.mss_bytes)
        }
        fn cwnd_event(&mut self, _w: &mut Window, _now: Time, ev: CwndEvent) {
            self.0.lock().unwrap().push(ev);
        }
    }

    #[test]
    fn cwnd_events_at_tx_start_rto_recovery_exit_and_restart_after_idle() {
        let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let taken = |e: &std::sync::Arc<std::sync::Mutex<Vec<CwndEvent>>>| std::mem::take(&mut *e.lock().unwrap());
        let c = cfg(false);
        let mut s = Sender::new(0, &c, Cc::Boxed(Box::new(EventRecorder(events.clone()))), None);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        assert_eq!(taken(&events), vec![CwndEvent::TxStart]);
        // Three dupacks: fast retransmit; the full ACK ends fast recovery.
        for t in 40..43 {
            s.on_ack(at(t), &ack(0, 0, false), &[], &mut out);
        }
        assert!(s.in_fast_recovery);
        assert_eq!(taken(&events), vec![]);
        let recover = s.recover;
        s.on_ack(at(80), &ack(recover, 40, false), &[], &mut out);
        assert!(!s.in_fast_recovery);
        assert_eq!(taken(&events), vec![CwndEvent::CompleteCwr]);
        // RTO: Loss, and no CompleteCwr when its recovery ends.
        s.on_rto(at(2000), &mut out);
        assert_eq!(taken(&events), vec![CwndEvent::Loss]);
        s.stop();
        let end = s.snd_max;
        s.on_ack(at(2100), &ack(end, 2000, false), &[], &mut out);
        assert!(s.done());
        assert_eq!(taken(&events), vec![]);
        // Resume after an idle period longer than the RTO: restart, then TX start.
        s.resume(at(60_000), &mut out);
        assert_eq!(taken(&events), vec![CwndEvent::CwndRestart, CwndEvent::TxStart]);
    }

    #[test]
    fn initial_window_is_sent_at_start() {
        let (s, out) = sender(false);
        assert_eq!(out.len(), 10);
        assert_eq!(s.snd_max, 10 * MSS);
        assert!(s.rto_deadline.is_some(), "RFC 6298 5.1: timer started with the first data");
    }

    #[test]
    fn slow_start_grows_by_acked_bytes_and_refills_the_window() {
        let (mut s, _) = sender(false);
        let mut out = Vec::new();
        s.on_ack(at(40), &ack(2 * MSS, 0, false), &[], &mut out);
        // ABC L=2: cwnd 10000 + 2000 = 12000; flight 8000 -> 4 new segments.
        assert_eq!(s.w.cwnd_bytes, 12 * MSS);
        assert_eq!(out.len(), 4);
        assert_eq!(s.snd_max, 14 * MSS);
    }

    /// Segment 0 lost: two dupacks send two segments by limited transmit, the third enters fast
    /// retransmit with ssthresh = FlightSize/2 excluding the limited-transmit segments.
    fn into_recovery() -> Sender {
        let (mut s, _) = sender(false);
        let mut out = Vec::new();
        s.on_ack(at(40), &ack(0, 0, false), &[], &mut out);
        s.on_ack(at(41), &ack(0, 0, false), &[], &mut out);
        assert_eq!(seqs(&out), vec![(10 * MSS, false), (11 * MSS, false)], "RFC 3042 limited transmit");
        out.clear();
        s.on_ack(at(42), &ack(0, 0, false), &[], &mut out);
        assert!(s.in_fast_recovery);
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
        assert!(s.in_fast_recovery, "a partial ACK does not end recovery");
    }

    #[test]
    fn the_fast_retransmit_restarts_the_timer() {
        // Armed at 0 by the first window; the fast retransmit at 42 ms re-arms it (FreeBSD, Linux,
        // ns-2 all do): a timer left running from 0 could fire while the retransmission is in flight.
        let s = into_recovery();
        assert_eq!(s.rto_deadline(), Some(at(42) + s.rto()));
    }

    #[test]
    fn every_partial_ack_restarts_the_timer_unless_only_the_first_should() {
        for (variant, second_restarts) in [(PartialAckRto::Every, true), (PartialAckRto::First, false)] {
            let mut s = into_recovery();
            s.restart_rto_on_every_partial_ack = variant == PartialAckRto::Every;
            let mut out = Vec::new();
            s.on_ack(at(80), &ack(2 * MSS, 30, true), &[], &mut out);
            let first = Some(at(80) + s.rto());
            assert_eq!(s.rto_deadline(), first, "{variant:?}: the first partial ACK restarts it");
            s.on_ack(at(120), &ack(4 * MSS, 30, true), &[], &mut out);
            assert!(s.in_fast_recovery);
            let want = if second_restarts { Some(at(120) + s.rto()) } else { first };
            assert_eq!(s.rto_deadline(), want, "{variant:?}: the second partial ACK");
        }
    }

    #[test]
    fn full_ack_exits_recovery_with_cwnd_min_of_ssthresh_and_flight_plus_mss() {
        let mut s = into_recovery();
        let mut out = Vec::new();
        s.on_ack(at(80), &ack(12 * MSS, 42, true), &[], &mut out);
        assert!(!s.in_fast_recovery);
        // FlightSize after the ACK is 0 -> cwnd = min(5000, max(0, 1000) + 1000) = 2000.
        assert_eq!(s.w.cwnd_bytes, 2 * MSS);
        assert_eq!(s.w.ssthresh_bytes, 5 * MSS);
    }

    #[test]
    fn rto_during_recovery_collapses_to_one_segment_and_goes_back() {
        let mut s = into_recovery();
        let mut out = Vec::new();
        s.on_rto(at(1000), &mut out);
        assert!(!s.in_fast_recovery);
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
        assert!(!s.in_fast_recovery);
        assert_eq!(s.w.cwnd_bytes, 5 * MSS);
        assert_eq!(s.flight_size(), 36 * MSS);
        for i in 0..3 {
            s.on_ack(at(90 + i), &ack(12 * MSS, 50, false), &[], &mut out);
        }
        assert_eq!(s.stats.fast_retransmits, 2);
        assert_eq!(s.w.ssthresh_bytes, 5 * MSS / 2, "cwnd/2, not FlightSize 36000/2");
    }

    #[test]
    fn karns_rule_no_rtt_sample_from_a_retransmitted_segment() {
        let (mut s, _) = sender(false);
        let mut out = Vec::new();
        s.on_rto(at(1000), &mut out);
        let backed_off = s.rtt.rto();
        assert_eq!(backed_off, Duration::from_secs(2), "initial 1 s RTO doubled");
        s.on_ack(at(1040), &ack(MSS, 1000, true), &[], &mut out);
        assert_eq!(s.rtt.srtt(), None, "the echoed segment was a retransmission: no sample");
        assert_eq!(s.rtt.rto(), backed_off, "backoff kept until a valid sample (RFC 6298 5.7)");
        s.on_ack(at(1100), &ack(3 * MSS, 1060, false), &[], &mut out);
        assert_eq!(s.rtt.srtt(), Some(Duration::from_millis(40)));
        assert_eq!(s.rtt.rto(), Duration::from_millis(200), "40 + 4*20 = 120 -> min RTO 200 ms");
    }

    #[test]
    fn rto_backs_off_exponentially_and_holds_ssthresh() {
        let (mut s, _) = sender(false);
        let mut out = Vec::new();
        let mut now = at(1000);
        let mut gaps = Vec::new();
        for _ in 0..4 {
            s.on_rto(now, &mut out);
            let next = s.rto_deadline.unwrap();
            gaps.push((next - now).as_millis());
            now = next;
        }
        assert_eq!(gaps, vec![2000, 4000, 8000, 16000]);
        assert_eq!(s.w.ssthresh_bytes, 5 * MSS, "held constant after the first expiry (RFC 5681 3.1)");
        assert_eq!(s.stats.timeouts, 4);
    }

    #[test]
    fn dupacks_after_rto_go_back_n_do_not_restart_fast_retransmit() {
        // The ns-3 3.44 failure: RFC 6582 3.2 step 1 allows a new fast retransmit only once the
        // cumulative ACK covers `recover` (= snd_max at the timeout).
        let (mut s, _) = sender(false);
        let mut out = Vec::new();
        s.on_rto(at(1000), &mut out);
        let ssthresh = s.w.ssthresh_bytes;
        // The receiver held segments 1..3: the ACK of the retransmitted segment 0 jumps to 4000.
        s.on_ack(at(1040), &ack(4 * MSS, 1000, true), &[], &mut out);
        assert!(s.snd_una < s.recover);
        out.clear();
        // Go-back-N retransmissions of data the receiver already has come back as duplicate ACKs.
        for i in 0..5 {
            s.on_ack(at(1050 + i), &ack(4 * MSS, 1041, true), &[], &mut out);
        }
        assert_eq!(s.stats.fast_retransmits, 0, "no fast retransmit below recover");
        assert!(!s.in_fast_recovery);
        assert_eq!(s.w.ssthresh_bytes, ssthresh, "no second reduction");
        // Once recover is covered, three dupacks do start a fast retransmit again.
        s.on_ack(at(1100), &ack(10 * MSS, 1060, false), &[], &mut out);
        let una = s.snd_una;
        for i in 0..3 {
            s.on_ack(at(1110 + i), &ack(una, 1090, false), &[], &mut out);
        }
        assert_eq!(s.stats.fast_retransmits, 1);
    }

    #[test]
    fn rto_during_sack_recovery_halves_pipe_not_the_sequence_span() {
        let (mut s, _) = sender(true);
        let mut out = Vec::new();
        // Segment 0 lost; SACKs for 1..=40 keep arriving, so new data flows during recovery.
        for k in 2..=41 {
            s.on_ack(at(40 + k), &ack(0, 0, false), &[(MSS, k * MSS)], &mut out);
        }
        assert!(s.in_fast_recovery);
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
            assert!(s.in_fast_recovery);
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
        assert!(s.in_fast_recovery, "3 dupacks");
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

    // ---- Linux mechanisms (docs/linux-tcp.md) ----

    use crate::scenario::{LossDetection, RecoveryWindow, SlowStartRule};

    fn sender_with(c: TcpConfig, bytes: Option<u64>) -> (Sender, Vec<Packet>) {
        let cc = ccsim_cc::build("newreno", &ParamMap::new(), &Sender::cc_init(&c, Rng::new(1, 1))).unwrap();
        let mut s = Sender::new(0, &c, cc, bytes);
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        (s, out)
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
                assert!(s.in_fast_recovery, "third SACKed segment: IsLost(0)");
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
        TcpConfig { loss_detection, limited_transmit: false, ..cfg(true) }
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
            assert!(!s.in_fast_recovery);
            if rack {
                // RACK.rtt 41 ms + reo_wnd min(40/4, 40) = 10 ms after segment 1's send: 51 ms, + 2 ms.
                assert_eq!(s.timer_deadline(), Some(at(53)));
                out.clear();
                s.on_timer(at(53), &mut out);
                assert!(s.in_fast_recovery);
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
        assert!(s.in_fast_recovery);
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
            assert!(s.in_fast_recovery);
            assert_eq!(seqs(&out), vec![(8 * MSS, true)]);
            s.on_ack(at(202), &ack(10 * MSS, 162, true), &[], &mut out);
            assert!(s.done());
            assert_eq!((s.stats.timeouts, s.stats.fast_retransmits), (0, 1));
        }
    }

    #[test]
    fn linux_knobs_reach_the_window_and_the_rto() {
        let c = TcpConfig { slow_start_rule: SlowStartRule::Linux, rto_estimator: crate::scenario::RtoEstimator::Linux, ..cfg(true) };
        let (mut s, _) = sender_with(c, None);
        assert_eq!(s.w.slow_start, ccsim_cc::SlowStartRule::Linux);
        let mut out = Vec::new();
        s.on_ack(at(40), &ack(2 * MSS, 0, false), &[], &mut out);
        assert_eq!(s.rtt.rto(), Duration::from_millis(240), "SRTT 40 ms + max(2 * 40 ms, min RTO 200 ms)");
        let (mut s, _) = sender(true);
        s.on_ack(at(40), &ack(2 * MSS, 0, false), &[], &mut out);
        assert_eq!(s.rtt.rto(), Duration::from_millis(200), "RFC 6298: max(200 ms, 40 + 4 * 20 ms)");
    }
}
