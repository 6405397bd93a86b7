//! The TCP sender: the machine that owns sequence space, the window, the retransmission timer and
//! the connection's congestion state, and drives one congestion controller through the
//! `ccsim_cc::CongestionControl` seam. Its mechanisms are parts chosen once per connection
//! (docs/internals.md, "The TCP machine's parts"):
//!
//! * loss recovery and loss detection: `tcp::recovery` (NewReno without SACK, RFC 6675 with the
//!   duplicate-ACK threshold or RACK-TLP and RFC 6675's window or PRR, ns-2 Sack1);
//! * the RTO estimator: `tcp::rtt` (RFC 6298, Linux, ns-2);
//! * rounds and RTT-sample filtering: `tcp::round` (FreeBSD h_ertt);
//! * pacing: `tcp::pacing` (Linux's internal pacing), on only for an algorithm that asks;
//! * delivery-rate samples: `tcp::rate_sample` (Linux tcp_rate.c), on only for an algorithm with
//!   `cong_control`, which then gets the sample on every ACK instead of `on_ack`.
//!
//! What the machine itself does, and where it comes from:
//! * Byte sequence numbers from 0; full-sized segments of `mss_bytes` (the last of a finite transfer
//!   may be shorter); wire size = payload + `header_bytes`.
//! * Slow start / congestion avoidance: the algorithm's (RFC 5681 section 3.1, RFC 3465 ABC).
//! * The congestion state (Linux `icsk_ca_state`): open, recovery after a fast retransmit, recovery
//!   after a timeout. Fast retransmit when the recovery part says the head is lost, guarded by RFC 6582
//!   section 3.2 step 1: only once the cumulative ACK has reached `recover` (the highest sequence sent
//!   at the last fast retransmit or timeout). This guard keeps a sender without SACK from re-entering
//!   fast retransmit on the duplicate ACKs of its own go-back-N after an RTO (the ns-3 3.44 failure;
//!   see `docs/choices.md`).
//! * Limited transmit (RFC 3042): one new segment on each of the first two duplicate ACKs.
//! * RTO (RFC 6298 section 5): timer started when data is sent and none runs, restarted on each ACK
//!   of new data, stopped when all is acked. On expiry: ssthresh from the algorithm, cwnd = 1 MSS
//!   (RFC 5681 loss window), recover = highest sent, go-back-N from snd_una skipping what the
//!   receiver SACKs afterwards (the scoreboard is cleared as FreeBSD does, RFC 2018 section 8).
//! * Per-ACK RTT samples: the ACK echoes the send time of the segment that caused it (the timestamp
//!   option, RFC 7323); the sample is `now - echo`, withheld when that segment was a retransmission
//!   (Karn).
//! * ns-2's `maxburst_` (`max_burst_pkts`; tcp.cc and tcp-sack1.cc `send_much`): at most that many
//!   segments leave in response to one ACK, timeout or application event; the fast retransmission and
//!   the partial-ACK retransmission are sent outside that loop, as in ns-2. ns-2's `slowdown`
//!   (`ssthresh_whole_packets`): the new ssthresh is rounded down to whole segments, at least 2.
//!
//! The send loop is `tcp/output.rs` (Linux tcp_output.c), a child module of this one.
//!
//! Where what comes next plugs in (named, not built): ECN's ECE in `take_ack` (a congestion signal
//! answered once per window like `enter_fast_recovery` without a retransmission) and CWR set by
//! `send_segment`.

use std::time::Duration;

use ccsim_cc::{AckSample, Cc, CcInit, CongestionControl, CwndEvent, LossEvent, LossKind, Metric, RateSample, RecoveryExit, Time, Window};

use crate::packet::Packet;
use crate::scenario::TcpConfig;
use crate::tcp::recovery::{self, LossClock, Outstanding, PartialAck, ProbeInputs, Recovery};
use crate::tcp::pacing::Pacing;
use crate::tcp::rate_sample::RateSampling;
use crate::tcp::round::Rounds;
use crate::tcp::rtt::RttEstimator;

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

/// The connection's congestion state (Linux `TCP_CA_Open`, `TCP_CA_Recovery`, `TCP_CA_Loss`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CaState {
    Open,
    /// Fast recovery after a fast retransmit, until `recover` is acknowledged.
    Recovery,
    /// After a timeout, until `recover` is acknowledged (reported to the algorithm at the end).
    Loss,
}

/// How a new ssthresh is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SsthreshRounding {
    Exact,
    /// ns-2 `slowdown` (`ssthresh_ = (int) halfwin`, at least 2): whole segments; cwnd keeps the
    /// unrounded value (`ssthresh_whole_packets`).
    WholeSegments,
}

impl SsthreshRounding {
    fn apply(self, ssthresh: u64, mss: u64) -> u64 {
        match self {
            SsthreshRounding::Exact => ssthresh,
            SsthreshRounding::WholeSegments => (ssthresh / mss).max(2) * mss,
        }
    }
}

/// What an arriving ACK says, taken once at its arrival.
struct AckFacts {
    ackno: u64,
    newly_acked: u64,
    newly_sacked: u64,
    /// Karn-valid RTT sample (and its nanoseconds): none when the echoed segment was a retransmission.
    karn: Option<(Duration, u64)>,
    delivered_before: u64,
    snd_max_before: u64,
    was_in_recovery: bool,
    is_dupack: bool,
}

pub struct Sender {
    flow: u32,
    mss: u64,
    header: u32,
    rwnd: u64,
    /// RFC 3042: segments limited transmit may add on the first duplicate ACKs (2; 0 when off).
    limited_transmit_segs: u32,
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
    state: CaState,
    dupacks: u32,
    recover: u64,
    /// Bytes sent by limited transmit since the last new ACK (excluded from FlightSize at the fast
    /// retransmit, RFC 5681 section 3.2 step 2).
    limited_transmit_bytes: u64,
    recovery: Recovery,
    rtt: RttEstimator,
    rto_deadline: Option<Time>,
    /// ns-2 `maxburst_` (0 = no limit) and the segments sent by `try_send` in the current event.
    max_burst: u32,
    /// The open state's fast send loop may run: no burst limit, no pacing, no rate sampling (set
    /// once; those go through the general loop).
    open_fast: bool,
    pacing: Pacing,
    /// On exactly when the algorithm implements `cong_control` (`ccsim_cc::Needs`).
    rate: RateSampling,
    burst_sent: u32,
    ssthresh_rounding: SsthreshRounding,
    round: Rounds,
    cwnd_limited: bool,
    stats: SenderStats,
    /// Calls of the entry points that can change the state (every `pub fn` taking `&mut self`
    /// counts itself): while it stays the same, so do the window, the RTT estimates, the counters
    /// and the algorithm's metrics, and the recorder repeats the flow's last row instead of
    /// reading them again (`sim/recorder.rs`).
    changes: u64,
}

impl Sender {
    pub fn new(flow: u32, cfg: &TcpConfig, cc: Cc, bytes: Option<u64>) -> Sender {
        let mss = cfg.mss_bytes;
        let ns = Duration::from_nanos;
        let rtt = RttEstimator::new(cfg.rto_estimator, ns(cfg.initial_rto_ns), ns(cfg.min_rto_ns), ns(cfg.max_rto_ns), ns(cfg.timer_granularity_ns));
        let needs = cc.needs();
        let mut w = crate::tcp::startup::initial_window(cfg);
        w.slow_start = match cfg.slow_start_rule {
            crate::scenario::SlowStartRule::Freebsd => ccsim_cc::SlowStartRule::Freebsd,
            crate::scenario::SlowStartRule::Linux => ccsim_cc::SlowStartRule::Linux,
        };
        Sender {
            flow,
            mss,
            header: cfg.header_bytes as u32,
            rwnd: cfg.rwnd_bytes,
            limited_transmit_segs: if cfg.limited_transmit { 2 } else { 0 },
            cc,
            w,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            app_end: bytes.unwrap_or(u64::MAX),
            bytes_limit: bytes,
            initial_window_bytes: cfg.initial_window_pkts * mss,
            last_send: None,
            state: CaState::Open,
            dupacks: 0,
            recover: 0,
            limited_transmit_bytes: 0,
            recovery: recovery::build(cfg),
            rtt,
            rto_deadline: None,
            max_burst: cfg.max_burst_pkts,
            open_fast: cfg.max_burst_pkts == 0 && !needs.pacing && !needs.cong_control,
            pacing: Pacing::new(needs.pacing),
            rate: RateSampling::new(needs.cong_control),
            burst_sent: 0,
            ssthresh_rounding: if cfg.ssthresh_whole_packets { SsthreshRounding::WholeSegments } else { SsthreshRounding::Exact },
            round: Rounds::default(),
            cwnd_limited: true,
            stats: SenderStats::default(),
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

    // ----- Entry points: the application and the network.

    /// The application starts offering data.
    pub fn start(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.changes += 1;
        self.burst_sent = 0;
        self.cc.init(&mut self.w);
        self.round.start(now);
        if let RateSampling::On(r) = &mut self.rate {
            r.check_app_limited(true, 0, self.w.cwnd_bytes); // tcp_sendmsg's check before the first write
        }
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
        if let RateSampling::On(_) = self.rate {
            // tcp_sendmsg: tcp_rate_check_app_limited before the new data is queued
            let nothing_unsent = self.app_end.saturating_sub(self.snd_nxt) < self.mss;
            let (in_flight, cwnd) = (self.in_flight(), self.w.cwnd_bytes);
            if let RateSampling::On(r) = &mut self.rate {
                r.check_app_limited(nothing_unsent, in_flight, cwnd);
            }
        }
        self.app_end = self.bytes_limit.unwrap_or(u64::MAX);
        self.burst_sent = 0;
        let nothing_in_flight = self.snd_una >= self.snd_max;
        // tcp_slow_start_after_idle_check: not for an algorithm with cong_control
        let idle = nothing_in_flight && self.last_send.is_some_and(|t| now - t > self.rtt.rto()) && matches!(self.rate, RateSampling::Off);
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

    /// Handles an arriving ACK, step by step (FreeBSD `tcp_do_segment`, Linux `tcp_ack`); packets to
    /// send are pushed to `out`. Returns the ACK's RTT sample as given to the algorithm.
    #[inline(never)] // one call per ACK: inlined into the event loop it measured dearer
    pub fn on_ack(&mut self, now: Time, ack: &Packet, sack: &[(u64, u64)], out: &mut Vec<Packet>) -> Option<Duration> {
        self.changes += 1;
        if ack.seq < self.snd_una || ack.seq > self.snd_max {
            return None; // old or impossible ACK
        }
        self.burst_sent = 0;
        let prior_in_flight = match self.rate {
            RateSampling::Off => 0,
            RateSampling::On(_) => self.in_flight(),
        };
        let a = self.take_ack(now, ack, sack);
        let rtt = self.take_rtt_sample(&a);
        let mut exit = self.learn_deliveries(now, ack, &a);
        if a.newly_acked > 0 {
            if let Some(e) = self.on_new_ack(now, &a, out) {
                exit = Some(e);
            }
        } else if a.is_dupack {
            self.on_dupack(now, out);
        }
        let newly_lost = self.detect_losses(now, out);
        self.end_round_if_reached(now, rtt);
        self.tell_algorithm(now, &a, rtt, exit, sack, prior_in_flight);
        self.set_recovery_window(&a, newly_lost);
        self.w.cwnd_bytes = self.w.cwnd_bytes.max(self.mss);
        self.try_send(now, out);
        if a.newly_acked > 0 || self.snd_max > a.snd_max_before {
            self.schedule_loss_probe(now, a.newly_acked > 0); // Linux tcp_set_xmit_timer, tcp_write_xmit
        }
        rtt
    }

    /// The retransmission timer fired: the earliest due of probe, reordering timeout and RTO (a probe
    /// or reordering timeout due at the same time as the RTO goes first, as it replaces the RTO in
    /// Linux's single timer).
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.changes += 1;
        let due = |d: Option<Time>| d.filter(|&d| d <= now);
        let (probe, reorder) = self.recovery.timer_deadlines();
        let (tlp, reo, rto) = (due(probe), due(reorder), due(self.rto_deadline));
        match [tlp, reo, rto].into_iter().flatten().min() {
            None => {}
            Some(t) if tlp == Some(t) => self.send_loss_probe(now, out),
            Some(t) if reo == Some(t) => self.on_reorder_timeout(now, out),
            Some(_) => self.on_rto(now, out),
        }
    }

    /// The pacing timer fired (Linux `tcp_pace_kick` -> `tcp_tsq_handler` -> `tcp_write_xmit`): send
    /// what the window and the pacing clock now allow.
    pub fn on_pacing_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.changes += 1;
        if self.pacing.waiting_until().is_none_or(|t| t > now) {
            return;
        }
        self.burst_sent = 0;
        let snd_max = self.snd_max;
        self.try_send(now, out);
        if self.snd_max > snd_max {
            self.schedule_loss_probe(now, false);
        }
    }

    /// When the pacing timer is to fire: the send loop waits for the pacing clock.
    #[inline(always)]
    pub fn pacing_deadline(&self) -> Option<Time> {
        self.pacing.waiting_until()
    }

    /// The pacing rate the algorithm set, bytes per second (`u64::MAX`: none), and whether the
    /// machine paces.
    pub fn pacing_rate(&self) -> (u64, bool) {
        (self.w.pacing_rate_bytes_per_s, self.pacing.is_on())
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
        self.rtt.on_timeout();
        // What is really outstanding: during SACK recovery new data keeps flowing while a lost
        // retransmission waits for this timer, so snd_max - snd_una can far exceed the window; the
        // RFC 6675 pipe is the amount in the network (FreeBSD and Linux use cwnd here).
        let bytes_in_flight = self.in_flight();
        let kind = LossKind::Timeout { backoff: self.rtt.expiries() };
        self.reduce_window(now, kind, bytes_in_flight, self.recovery.pipe_or(bytes_in_flight, self.outstanding()));
        self.cc.cwnd_event(&mut self.w, now, CwndEvent::Loss); // Linux tcp_enter_loss
        self.w.set_cwnd(self.mss);
        self.state = CaState::Loss;
        self.dupacks = 0;
        self.limited_transmit_bytes = 0;
        self.recover = self.snd_max;
        self.recovery.on_timeout(self.snd_una);
        self.snd_nxt = self.snd_una;
        self.rto_deadline = Some(self.rtt.deadline_from(now));
        self.try_send(now, out);
    }

    // ----- The steps of an ACK.

    /// Takes in the ACK: how much it acknowledges and SACKs, and the state it found.
    #[inline(always)]
    fn take_ack(&mut self, now: Time, ack: &Packet, sack: &[(u64, u64)]) -> AckFacts {
        let ackno = ack.seq;
        if self.state == CaState::Recovery {
            self.recovery.on_ack_arrival(ackno > self.snd_una && ackno < self.recover);
        }
        // Karn: no sample when the echoed segment was a retransmission. Its nanoseconds are kept
        // beside it: the estimator and the round's extremes need no conversion back.
        let karn = (!ack.retx && ack.tx_time <= now).then(|| {
            let n = now.0 - ack.tx_time.0;
            (Duration::from_nanos(n), n)
        });
        let newly_acked = ackno - self.snd_una;
        let delivered_before = self.delivered();
        let newly_sacked = if sack.is_empty() { 0 } else { self.recovery.take_sack_blocks(sack, ackno, self.snd_max) };
        AckFacts {
            ackno,
            newly_acked,
            newly_sacked,
            karn,
            delivered_before,
            snd_max_before: self.snd_max,
            was_in_recovery: self.state == CaState::Recovery,
            is_dupack: newly_acked == 0 && self.snd_max > self.snd_una,
        }
    }

    /// The RTT sample the algorithm gets: Karn's, unless h_ertt suspects a delayed ACK (`tcp::round`).
    #[inline(always)]
    fn take_rtt_sample(&mut self, a: &AckFacts) -> Option<Duration> {
        let held_back = self.round.delayed_ack_suspected(a.newly_acked, a.newly_sacked, self.mss);
        let (r, n) = a.karn.filter(|_| !held_back)?;
        self.rtt.observe(r, n);
        self.round.observe(n);
        Some(r)
    }

    /// The recovery part learns the ACK's deliveries (RACK, the tail loss probe); a repaired loss
    /// probe reduces the window once. Returns that reduction's recovery exit.
    #[inline(always)]
    fn learn_deliveries(&mut self, now: Time, ack: &Packet, a: &AckFacts) -> Option<RecoveryExit> {
        let repaired = self.recovery.learn_deliveries(now, a.ackno, a.newly_acked, a.newly_sacked, ack.tx_time, self.rtt.min);
        repaired.then(|| self.reduce_after_loss_probe(now))
    }

    /// New data acknowledged: the timer estimator, snd_una, and the end of a recovery episode (RFC
    /// 6582 step 3 / RFC 6675) or a partial ACK's step; then the timer restarts (RFC 6298 5.3).
    fn on_new_ack(&mut self, now: Time, a: &AckFacts, out: &mut Vec<Packet>) -> Option<RecoveryExit> {
        self.rtt.on_new_ack(a.ackno, self.snd_max, now, a.karn);
        self.snd_una = a.ackno;
        self.snd_nxt = self.snd_nxt.max(a.ackno);
        self.recovery.advance(a.ackno);
        self.dupacks = 0;
        self.limited_transmit_bytes = 0;
        let mut exit = None;
        let mut restart_timer = true;
        match self.state {
            CaState::Recovery if a.ackno >= self.recover => {
                self.state = CaState::Open;
                self.recovery.end_episode();
                exit = Some(RecoveryExit { now, bytes_in_flight: self.flight_size(), after_timeout: false });
            }
            CaState::Recovery => {
                if let PartialAck::RetransmitHead { restart_timer: restart } = self.recovery.on_partial_ack(a.newly_acked) {
                    let seq = self.snd_una;
                    self.send_segment(now, seq, out);
                    restart_timer = restart;
                }
            }
            CaState::Loss if a.ackno >= self.recover => {
                self.state = CaState::Open;
                exit = Some(RecoveryExit { now, bytes_in_flight: self.flight_size(), after_timeout: true });
            }
            CaState::Loss | CaState::Open => {}
        }
        if restart_timer {
            self.restart_rto(now);
        } else if self.snd_una >= self.snd_max {
            self.rto_deadline = None;
        }
        exit
    }

    /// A duplicate ACK: counted outside recovery and, once the recovery part says the head is lost,
    /// a fast retransmit (RFC 6582 3.2 step 1: only once `recover` has been acked).
    fn on_dupack(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.state == CaState::Recovery {
            self.recovery.on_dupack_in_recovery();
            return;
        }
        self.dupacks += 1;
        let head_end = self.snd_una + self.seg_len(self.snd_una);
        if self.recovery.dupacks_say_lost(self.dupacks, head_end) && self.snd_una >= self.recover {
            self.enter_fast_recovery(now, out);
        }
    }

    /// Loss detection at the end of the ACK (RACK: Linux `tcp_identify_packet_loss`, and recovery once
    /// "the loss is proven", `tcp_time_to_recover`). Returns whether segments were newly marked lost.
    #[inline(always)]
    fn detect_losses(&mut self, now: Time, out: &mut Vec<Packet>) -> bool {
        let (rtt, in_recovery) = (&self.rtt, self.state != CaState::Open);
        let found = self.recovery.detect(|| LossClock { now, in_recovery, min_rtt: rtt.min, srtt: rtt.srtt() });
        if found.start_recovery && self.state != CaState::Recovery && self.snd_una >= self.recover {
            self.enter_fast_recovery(now, out);
        }
        found.newly_lost
    }

    /// The round ends when its marked segment is acknowledged; the algorithm sees it first.
    #[inline(always)]
    fn end_round_if_reached(&mut self, now: Time, rtt: Option<Duration>) {
        if self.round.ended_by(self.snd_una) {
            let r = self.round.close(now, rtt, self.rtt.min, self.delivered());
            self.cc.on_round(&mut self.w, &r);
            self.stats.rounds += 1;
        }
    }

    /// The algorithm sees the ACK, then the end of a recovery episode (Linux
    /// `tcp_end_cwnd_reduction` sends `CA_EVENT_COMPLETE_CWR` after a fast recovery).
    #[inline(always)]
    fn tell_algorithm(&mut self, now: Time, a: &AckFacts, rtt: Option<Duration>, exit: Option<RecoveryExit>, sack: &[(u64, u64)], prior_in_flight: u64) {
        if let RateSampling::On(_) = self.rate {
            self.cong_control(now, a, sack, prior_in_flight);
        } else {
            self.cong_avoid(now, a, rtt);
        }
        if let Some(e) = exit {
            self.cc.on_recovery_exit(&mut self.w, &e);
            if !e.after_timeout {
                self.cc.cwnd_event(&mut self.w, now, CwndEvent::CompleteCwr);
            }
        }
    }

    /// The algorithm's per-ACK hook without `cong_control` (Linux `tcp_cong_avoid`).
    #[inline(always)]
    fn cong_avoid(&mut self, now: Time, a: &AckFacts, rtt: Option<Duration>) {
        let sample = AckSample {
            now,
            bytes_acked: a.newly_acked,
            bytes_sacked: a.newly_sacked,
            is_dupack: a.is_dupack,
            rtt,
            min_rtt: self.rtt.min,
            max_rtt: self.rtt.max,
            srtt: self.srtt(),
            bytes_in_flight: self.in_flight(),
            delivered_bytes: self.delivered(),
            snd_una: self.snd_una,
            snd_max: self.snd_max,
            in_recovery: a.was_in_recovery,
            cwnd_limited: self.cwnd_limited,
        };
        self.cc.on_ack(&mut self.w, &sample);
    }

    /// The delivery-rate sample of this ACK (Linux `tcp_rate_skb_delivered` per delivered segment,
    /// then `tcp_rate_gen`) handed to the algorithm's `cong_control` (Linux `tcp_cong_control`).
    /// Lost bytes are RACK's marks with RACK, else the segments retransmitted (what the machine
    /// deemed lost), in MSS.
    #[inline(never)]
    fn cong_control(&mut self, now: Time, a: &AckFacts, sack: &[(u64, u64)], prior_in_flight: u64) {
        let lost_segs = if self.recovery.probes() { self.recovery.marked_lost_total() } else { self.stats.retransmits - self.stats.loss_probes };
        let mut rs = RateSample {
            now,
            prior_in_flight_bytes: prior_in_flight,
            rtt: a.karn.map(|(d, _)| d),
            bytes_in_flight: self.in_flight(),
            ca_state: match self.state {
                CaState::Open => ccsim_cc::CaState::Open,
                CaState::Recovery => ccsim_cc::CaState::Recovery,
                CaState::Loss => ccsim_cc::CaState::Loss,
            },
            min_rtt: self.rtt.min,
            srtt: self.srtt(),
            next_departure: self.pacing.next_departure(),
            ..RateSample::default()
        };
        let delivered = self.delivered().saturating_sub(a.delivered_before);
        let min_rtt = self.rtt.min;
        let RateSampling::On(r) = &mut self.rate else { return };
        let lost_bytes = (lost_segs * self.mss).saturating_sub(r.lost_total());
        r.on_ack(a.ackno, sack);
        r.gen(now, delivered, lost_bytes, min_rtt, &mut rs);
        let req = self.cc.cong_control(&mut self.w, &rs);
        if req.mark_app_limited {
            r.mark_app_limited(rs.bytes_in_flight);
        }
    }

    /// The recovery window of every ACK in an episode (PRR: Linux `tcp_cong_control` ->
    /// `tcp_cwnd_reduction`), after the algorithm has seen the ACK.
    #[inline(always)]
    fn set_recovery_window(&mut self, a: &AckFacts, newly_lost: bool) {
        if self.state == CaState::Recovery && matches!(self.rate, RateSampling::Off) {
            let delivered = self.delivered() - a.delivered_before;
            if let Some(cwnd) = self.recovery.window_after_ack(delivered, a.newly_acked > 0, newly_lost, self.outstanding()) {
                self.w.set_cwnd(cwnd);
            }
        }
    }

    // ----- Loss responses.

    /// Asks the algorithm for ssthresh after a loss of `kind` and stores it (whole segments, at least
    /// 2, with ns-2's `slowdown`); returns the unrounded value for cwnd.
    fn reduce_window(&mut self, now: Time, kind: LossKind, bytes_in_flight: u64, pipe_bytes: u64) -> u64 {
        let ev = LossEvent { now, kind, bytes_in_flight, pipe_bytes, min_rtt: self.rtt.min, srtt: self.srtt() };
        let ssthresh = self.cc.ssthresh_after_loss(&self.w, &ev).max(self.mss);
        self.w.ssthresh_bytes = self.ssthresh_rounding.apply(ssthresh, self.mss);
        ssthresh
    }

    /// Fast retransmit and the start of a recovery episode (RFC 5681 3.2 steps 2-3, RFC 6675 step 4).
    fn enter_fast_recovery(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.state = CaState::Recovery;
        self.recover = self.snd_max;
        self.stats.fast_retransmits += 1;
        // RFC 5681 eq. (4) FlightSize, less the segments limited transmit sent (section 3.2 step 2).
        let flight = self.flight_size() - self.limited_transmit_bytes.min(self.flight_size());
        let (bytes_in_flight, pipe_bytes) = self.recovery.loss_at_fast_retransmit(flight, self.w.cwnd_bytes, self.outstanding());
        let prior_cwnd = self.w.cwnd_bytes;
        let cwnd = self.reduce_window(now, LossKind::FastRetransmit, bytes_in_flight, pipe_bytes);
        if matches!(self.rate, RateSampling::Off) {
            self.w.set_cwnd(cwnd); // with cong_control the algorithm sets it (Linux tcp_cong_control)
        }
        // The fast retransmission restarts the timer: FreeBSD `tcp_do_segment` stops TT_REXMT before
        // `tcp_output` re-arms it, Linux `tcp_xmit_retransmit_queue` re-arms it when it resends the
        // head, ns-2 `dupack_action` calls `reset_rtx_timer(1, 0)`. Without this, a timer started by
        // an earlier segment can fire while the retransmission is still in flight (a spurious timeout).
        self.rtt.on_retransmission_episode();
        self.rto_deadline = Some(self.rtt.deadline_from(now));
        self.recovery.begin_episode(prior_cwnd, self.w.ssthresh_bytes, self.outstanding());
        let seq = self.recovery.first_retransmission(self.snd_una);
        let len = self.send_segment(now, seq, out);
        if self.recovery.fast_retransmitted(seq + len) {
            self.try_send(now, out); // with PRR the next ACK's own allowance comes first
        }
    }

    /// A retransmitted tail loss probe repaired a loss (Linux `tcp_process_tlp_ack`): one window
    /// reduction, entered and left at once (CWR), reported to the algorithm as a loss detected without
    /// a timeout and a completed recovery. Returns the recovery exit to report after the ACK.
    fn reduce_after_loss_probe(&mut self, now: Time) -> RecoveryExit {
        let flight = self.in_flight();
        let cwnd = self.reduce_window(now, LossKind::FastRetransmit, flight, self.recovery.pipe_or(flight, self.outstanding()));
        if matches!(self.rate, RateSampling::Off) {
            self.w.set_cwnd(cwnd); // tcp_end_cwnd_reduction (which leaves cong_control's cwnd alone)
        }
        RecoveryExit { now, bytes_in_flight: flight, after_timeout: false }
    }

    // ----- The timers RACK-TLP adds.

    /// Arms the tail loss probe or, when the connection is not in the open state, disarms it (Linux
    /// `tcp_schedule_loss_probe`). `advancing`: an ACK of new data restarts the RTO from now.
    #[inline(always)] // the test inline: without a probe (the common case) no call per ACK
    fn schedule_loss_probe(&mut self, now: Time, advancing: bool) {
        if self.recovery.probes() {
            self.schedule_armed_loss_probe(now, advancing);
        }
    }

    /// `schedule_loss_probe` with the probe on.
    #[inline(never)]
    fn schedule_armed_loss_probe(&mut self, now: Time, advancing: bool) {
        let rto_in = match (advancing, self.rto_deadline) {
            (false, Some(d)) => d.saturating_since(now),
            _ => self.rtt.rto(),
        };
        let segments_out = (self.snd_max - self.snd_una).div_ceil(self.mss);
        self.recovery.schedule_probe(ProbeInputs { now, srtt: self.srtt(), segments_out, rto_in, ca_open: self.state == CaState::Open });
    }

    /// The probe timeout fired (Linux `tcp_send_loss_probe`): new data if the application and the
    /// receiver window allow, cwnd notwithstanding, else the highest-sequence segment again; then the
    /// RTO restarts from the probe.
    fn send_loss_probe(&mut self, now: Time, out: &mut Vec<Packet>) {
        if !self.recovery.fire_probe() || self.snd_una >= self.snd_max {
            return; // an episode is open: the RTO keeps running
        }
        let new_data = self.snd_nxt == self.snd_max && self.new_data_allowed();
        let seq = if new_data { self.snd_max } else { (self.snd_max - 1) / self.mss * self.mss };
        self.send_segment(now, seq, out);
        self.snd_nxt = self.snd_nxt.max(self.snd_max);
        self.recovery.probe_sent(self.snd_max, !new_data);
        self.stats.loss_probes += 1;
        self.rto_deadline = Some(self.rtt.deadline_from(now));
    }

    /// RACK's reordering timer fired (Linux `tcp_rack_reo_timeout`): mark what is now overdue, start
    /// recovery if needed (PRR counts one delivered segment, as Linux), and retransmit.
    fn on_reorder_timeout(&mut self, now: Time, out: &mut Vec<Packet>) {
        let clock = LossClock { now, in_recovery: self.state != CaState::Open, min_rtt: self.rtt.min, srtt: self.srtt() };
        if !self.recovery.reorder_timeout(clock) {
            return;
        }
        if self.state != CaState::Recovery {
            if self.snd_una < self.recover {
                return; // recovery after an RTO: go-back-N covers it
            }
            self.enter_fast_recovery(now, out);
            if let Some(cwnd) = self.recovery.window_after_ack(self.mss, false, false, self.outstanding()) {
                self.w.set_cwnd(cwnd);
            }
        }
        self.try_send(now, out);
    }

    fn restart_rto(&mut self, now: Time) {
        self.rto_deadline = if self.snd_una < self.snd_max { Some(self.rtt.deadline_from(now)) } else { None };
    }

    // ----- Views: for the simulation's bookkeeping and measurement; only the machine changes state.

    /// What the recovery part reads of sequence space.
    #[inline(always)]
    fn outstanding(&self) -> Outstanding {
        Outstanding { snd_una: self.snd_una, snd_max: self.snd_max, app_end: self.app_end }
    }

    /// All the application's data has been acknowledged.
    pub fn done(&self) -> bool {
        self.snd_una >= self.app_end
    }

    /// RFC 5681 FlightSize: data sent and not cumulatively acknowledged.
    pub fn flight_size(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// RFC 6675 pipe with SACK (`tcp::recovery::sacked`), FlightSize without.
    pub fn pipe(&self) -> u64 {
        self.recovery.pipe_or(self.flight_size(), self.outstanding())
    }

    /// Bytes in flight as reported to the algorithm (and halved at a loss): what is in the network,
    /// not the sequence span; the recovery part says how (RFC 6675 pipe in SACK recovery, NewReno's
    /// span less its inflation, at most cwnd).
    #[inline(always)]
    fn in_flight(&self) -> u64 {
        let span = self.snd_nxt.saturating_sub(self.snd_una);
        self.recovery.in_flight(span, self.w.cwnd_bytes, self.state == CaState::Recovery, self.outstanding())
    }

    /// Bytes the receiver is known to hold: cumulatively acked plus SACKed.
    #[inline(always)]
    pub fn delivered(&self) -> u64 {
        self.snd_una + self.recovery.sacked_bytes()
    }

    /// When the retransmission timer fires next: the RTO, and with RACK-TLP the probe and reordering
    /// timeouts it also carries (Linux `icsk_retransmit_timer` with `ICSK_TIME_LOSS_PROBE` and
    /// `ICSK_TIME_REO_TIMEOUT`).
    #[inline]
    pub fn timer_deadline(&self) -> Option<Time> {
        match self.recovery.timer_deadlines() {
            (None, None) => self.rto_deadline,
            (probe, reorder) => [self.rto_deadline, probe, reorder].into_iter().flatten().min(),
        }
    }

    /// The window that limits sending now: cwnd, plus RFC 6582 inflation during NewReno recovery.
    pub fn effective_cwnd(&self) -> u64 {
        let inflation = if self.state == CaState::Recovery { self.recovery.inflation() } else { 0 };
        (self.w.cwnd_bytes as i64 + inflation).max(self.mss as i64) as u64
    }

    /// The smoothed RTT of the retransmission timer in use.
    pub fn srtt(&self) -> Option<Duration> {
        self.rtt.srtt()
    }

    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }

    /// cwnd and ssthresh as the algorithm last left them.
    pub fn window(&self) -> &Window {
        &self.w
    }

    /// The latest raw RTT sample given to the algorithm.
    pub fn latest_rtt(&self) -> Option<Duration> {
        self.rtt.latest
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
        self.recovery.marked_lost_total()
    }

    /// Whether a fast recovery episode runs.
    pub fn in_fast_recovery(&self) -> bool {
        self.state == CaState::Recovery
    }
}
#[path = "output.rs"]
mod output;

#[cfg(test)]
#[path = "sender_testkit.rs"]
mod testkit;

#[cfg(test)]
#[path = "sender_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "sender_pacing_tests.rs"]
mod pacing_tests;

#[cfg(test)]
#[path = "sender_ns2_tests.rs"]
mod ns2_tests;

#[cfg(test)]
#[path = "recovery/newreno_tests.rs"]
mod newreno_tests;

#[cfg(test)]
#[path = "recovery/rfc6675_tests.rs"]
mod rfc6675_tests;

#[cfg(test)]
#[path = "recovery/ns2_sack1_tests.rs"]
mod ns2_sack1_tests;
