//! Scripted-event test kit: drive one algorithm through a hand-written sequence of ACKs, rounds,
//! losses and recoveries, with a simulated clock, and check its window after each step (smoltcp
//! `congestion/reno.rs`, s2n-quic `recovery/cubic/tests.rs`). The machine's own window changes on loss
//! (cwnd = ssthresh on fast retransmit, one MSS after a timeout) are applied here exactly as
//! `ccsim-core` applies them, so a scripted expectation holds in the simulator too.
//!
//! Also home of [`Event`], one step of a random event sequence for the property tests, applied by
//! [`Script::apply`] and checked by [`Script::assert_invariants`], of the random-event strategies every
//! algorithm's property test draws from (`strategies`, test builds only), and of [`FixedWindow`], the
//! test-only controller that proves the seam.

use std::fmt::Debug;
use std::time::Duration;

use crate::{
    AckSample, CcInit, CongestionControl, LossEvent, LossKind, Metric, RecoveryExit, Rng, RoundSample, Time, Window,
};

/// A scripted connection around one algorithm.
pub struct Script<C: CongestionControl> {
    pub cc: C,
    pub w: Window,
    pub now: Time,
    /// RTT reported with each ACK (raw sample); `None` reports no sample.
    pub rtt: Option<Duration>,
    pub min_rtt: Option<Duration>,
    pub max_rtt: Option<Duration>,
    pub in_recovery: bool,
    pub cwnd_limited: bool,
    pub snd_una: u64,
    pub snd_max: u64,
    pub delivered: u64,
    /// Time that passes before each ACK.
    pub ack_spacing: Duration,
    pub rounds: u64,
    /// Timeouts applied by [`Script::apply`] since the last [`Event::Ack`] with an RTT sample: the
    /// backoff of an [`Event::Timeout`] with [`Backoff::Counted`].
    pub timeouts_in_a_row: u32,
}

impl<C: CongestionControl> Script<C> {
    /// The construction context a test passes to the algorithm: `iw_segments` initial window.
    pub fn init(mss: u64, iw_segments: u64, abc_limit_segments: u32) -> CcInit {
        CcInit { mss_bytes: mss, initial_cwnd_bytes: iw_segments * mss, abc_limit_segments, rng: Rng::new(42, 0) }
    }

    pub fn new(mut cc: C, init: CcInit) -> Script<C> {
        let mut w = Window::new(init.initial_cwnd_bytes, init.mss_bytes);
        cc.init(&mut w);
        Script {
            cc,
            w,
            now: Time::ZERO,
            rtt: Some(Duration::from_millis(40)),
            min_rtt: None,
            max_rtt: None,
            in_recovery: false,
            cwnd_limited: true,
            snd_una: 0,
            snd_max: init.initial_cwnd_bytes,
            delivered: 0,
            ack_spacing: Duration::from_millis(1),
            rounds: 0,
            timeouts_in_a_row: 0,
        }
    }

    fn sample(&mut self, bytes_acked: u64, is_dupack: bool) -> AckSample {
        self.now += self.ack_spacing;
        if let Some(r) = self.rtt {
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
            self.max_rtt = Some(self.max_rtt.map_or(r, |m| m.max(r)));
        }
        self.snd_una += bytes_acked;
        self.delivered += bytes_acked;
        // A cwnd-limited sender refills the window: snd_max stays one cwnd ahead.
        self.snd_max = self.snd_max.max(self.snd_una + self.w.cwnd_bytes);
        AckSample {
            now: self.now,
            bytes_acked,
            bytes_sacked: 0,
            is_dupack,
            rtt: self.rtt,
            min_rtt: self.min_rtt,
            max_rtt: self.max_rtt,
            srtt: self.rtt,
            bytes_in_flight: self.snd_max - self.snd_una,
            delivered_bytes: self.delivered,
            snd_una: self.snd_una,
            snd_max: self.snd_max,
            in_recovery: self.in_recovery,
            cwnd_limited: self.cwnd_limited,
        }
    }

    /// An ACK of `bytes` of new data.
    pub fn ack(&mut self, bytes: u64) -> &Window {
        let s = self.sample(bytes, false);
        self.cc.on_ack(&mut self.w, &s);
        &self.w
    }

    /// An ACK of new data carrying a specific RTT sample.
    pub fn ack_rtt(&mut self, bytes: u64, rtt: Duration) -> &Window {
        self.rtt = Some(rtt);
        self.ack(bytes)
    }

    pub fn dupack(&mut self) -> &Window {
        let s = self.sample(0, true);
        self.cc.on_ack(&mut self.w, &s);
        &self.w
    }

    /// A round ends now with the given RTT statistics.
    pub fn round(&mut self, max_rtt_in_round: Duration) -> &Window {
        let r = RoundSample {
            now: self.now,
            index: self.rounds,
            rtt: self.rtt,
            max_rtt_in_round: Some(max_rtt_in_round),
            min_rtt_in_round: self.rtt,
            min_rtt: self.min_rtt,
            delivered_bytes: self.w.cwnd_bytes,
            duration: self.rtt.unwrap_or_default(),
        };
        self.rounds += 1;
        self.cc.on_round(&mut self.w, &r);
        &self.w
    }

    fn loss(&mut self, kind: LossKind, flight: u64, pipe: u64) -> u64 {
        let ev = LossEvent { now: self.now, kind, bytes_in_flight: flight, pipe_bytes: pipe, min_rtt: self.min_rtt, srtt: self.rtt };
        let ssthresh = self.cc.ssthresh_after_loss(&self.w, &ev);
        self.w.ssthresh_bytes = ssthresh;
        ssthresh
    }

    /// Three duplicate ACKs: the machine stores the returned ssthresh, sets cwnd = ssthresh (RFC 6675;
    /// RFC 6582 inflation is the machine's, outside the algorithm's window) and enters recovery.
    pub fn loss_fast_retransmit(&mut self, flight: u64) -> u64 {
        self.loss_fast_retransmit_with_pipe(flight, flight)
    }

    /// As [`Script::loss_fast_retransmit`], with an RFC 6675 pipe below FlightSize (SACKed and lost
    /// segments).
    pub fn loss_fast_retransmit_with_pipe(&mut self, flight: u64, pipe: u64) -> u64 {
        let ss = self.loss(LossKind::FastRetransmit, flight, pipe);
        self.w.set_cwnd(ss);
        self.in_recovery = true;
        ss
    }

    /// A retransmission timeout: ssthresh from the algorithm, cwnd = one MSS (RFC 5681 loss window).
    /// Fast recovery, if any, ends: after an RTO the window grows again in slow start.
    pub fn loss_timeout(&mut self, flight: u64, backoff: u32) -> u64 {
        let ss = self.loss(LossKind::Timeout { backoff }, flight, flight);
        self.w.set_cwnd(self.w.mss_bytes);
        self.in_recovery = false;
        ss
    }

    pub fn exit_recovery(&mut self, flight: u64, after_timeout: bool) -> &Window {
        self.in_recovery = false;
        let ex = RecoveryExit { now: self.now, bytes_in_flight: flight, after_timeout };
        self.cc.on_recovery_exit(&mut self.w, &ex);
        &self.w
    }

    pub fn advance(&mut self, d: Duration) {
        self.now += d;
    }

    pub fn metric(&self, name: &str) -> Option<f64> {
        let mut m = Vec::new();
        self.cc.metrics(&mut m);
        m.into_iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// Applies one event of a random sequence (see [`Event`] for what each does). A fast retransmit
    /// during recovery and a recovery exit outside it are skipped, as the machine never does them,
    /// unless the event says `force`.
    pub fn apply(&mut self, event: &Event) {
        match *event {
            Event::Ack { bytes, rtt, spacing } => {
                if let Some(spacing) = spacing {
                    self.ack_spacing = spacing;
                }
                self.rtt = rtt;
                if rtt.is_some() {
                    self.timeouts_in_a_row = 0;
                }
                self.ack(bytes);
            }
            Event::AckWithoutRtt { bytes } => {
                let rtt = self.rtt.take();
                self.ack(bytes);
                self.rtt = rtt;
            }
            Event::DupAck => {
                self.dupack();
            }
            Event::Round { max_rtt } => {
                let max_rtt = max_rtt.unwrap_or(self.rtt.unwrap_or(Duration::from_millis(40)));
                self.round(max_rtt);
            }
            Event::FastRetransmit { flight, force } => {
                if force || !self.in_recovery {
                    self.loss_fast_retransmit(flight.bytes(&self.w));
                }
            }
            Event::Timeout { flight, backoff } => {
                self.timeouts_in_a_row += 1;
                let backoff = match backoff {
                    Backoff::Given(b) => b,
                    Backoff::Counted => self.timeouts_in_a_row,
                };
                self.loss_timeout(flight.bytes(&self.w), backoff);
            }
            Event::ExitRecovery { flight, after_timeout, force } => {
                if force || self.in_recovery {
                    self.exit_recovery(flight.bytes(&self.w), after_timeout);
                }
            }
            Event::Idle(d) => self.advance(d),
            Event::CwndLimited(limited) => self.cwnd_limited = limited,
        }
    }

    /// Applies `events` in turn, checking [`Script::assert_invariants`] after each, and returns what
    /// `observe` reads after each (the trajectory a property test compares between two runs).
    pub fn trajectory<T>(&mut self, events: &[Event], mut observe: impl FnMut(&Self, &Event) -> T) -> Vec<T> {
        let mut out = Vec::with_capacity(events.len());
        for event in events {
            self.apply(event);
            self.assert_invariants(event);
            out.push(observe(self, event));
        }
        out
    }

    /// The invariants every property test checks after every event: cwnd is at least one MSS and
    /// every metric is finite. Panics naming `context` (the event just applied, say) otherwise.
    pub fn assert_invariants(&self, context: &dyn Debug) {
        assert!(self.w.cwnd_bytes >= self.w.mss_bytes, "cwnd {} below one MSS after {context:?}", self.w.cwnd_bytes);
        let mut m = Vec::new();
        self.cc.metrics(&mut m);
        for (name, v) in m {
            assert!(v.is_finite(), "metric {name} = {v} after {context:?}");
        }
    }
}

/// One step of a random event sequence for a property test, applied by [`Script::apply`]. The tests
/// draw these from the shared strategies of `testkit::strategies` (test builds only), choosing the
/// knobs their algorithm needs; the kit applies them one way for all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// An ACK of `bytes` of new data. `rtt` becomes the script's RTT ([`Script::rtt`]): this ACK and
    /// later rounds, losses and duplicate ACKs report it, and `None` reports no sample until an ACK
    /// brings one; a sample also ends a run of timeouts ([`Backoff::Counted`]). `spacing`, if given,
    /// becomes [`Script::ack_spacing`], the time before this and every later (duplicate) ACK.
    Ack { bytes: u64, rtt: Option<Duration>, spacing: Option<Duration> },
    /// An ACK of `bytes` of new data that alone carries no RTT sample: unlike `Ack { rtt: None, .. }`
    /// the script's RTT stays for later events.
    AckWithoutRtt { bytes: u64 },
    /// A duplicate ACK ([`Script::dupack`]).
    DupAck,
    /// A round ends ([`Script::round`]) with `max_rtt` the largest RTT in it; `None`: the script's
    /// current RTT, 40 ms if it has none.
    Round { max_rtt: Option<Duration> },
    /// Three duplicate ACKs ([`Script::loss_fast_retransmit`]), skipped during recovery unless `force`.
    FastRetransmit { flight: Flight, force: bool },
    /// A retransmission timeout ([`Script::loss_timeout`]).
    Timeout { flight: Flight, backoff: Backoff },
    /// Recovery ends ([`Script::exit_recovery`]), skipped outside recovery unless `force`.
    ExitRecovery { flight: Flight, after_timeout: bool, force: bool },
    /// Time passes with nothing else ([`Script::advance`]).
    Idle(Duration),
    /// The sender becomes cwnd-limited (`true`) or not (`false`): [`Script::cwnd_limited`].
    CwndLimited(bool),
}

/// Bytes in flight reported with an [`Event`]'s loss or recovery exit, read when it is applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flight {
    /// This many bytes.
    Bytes(u64),
    /// The congestion window.
    Cwnd,
    /// Half the congestion window (rounded down).
    HalfCwnd,
}

impl Flight {
    /// The bytes in flight with window `w`.
    pub fn bytes(self, w: &Window) -> u64 {
        match self {
            Flight::Bytes(b) => b,
            Flight::Cwnd => w.cwnd_bytes,
            Flight::HalfCwnd => w.cwnd_bytes / 2,
        }
    }
}

/// The backoff reported with an [`Event::Timeout`] (the number of consecutive expiries, this one
/// included).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backoff {
    /// This number.
    Given(u32),
    /// Counted by the script: 1 for the first timeout after an ACK with an RTT sample (or since the
    /// start), then 2, 3, ... ([`Script::timeouts_in_a_row`]).
    Counted,
}

/// Test-only controller with a constant window: proves the seam (a window the machine never grows
/// or halves on its own) and exercises the boxed-trait escape hatch.
#[derive(Clone, Debug)]
pub struct FixedWindow {
    pub cwnd_bytes: u64,
    pub acks_seen: u64,
    pub losses_seen: u64,
    pub rounds_seen: u64,
}

impl FixedWindow {
    pub fn new(cwnd_bytes: u64) -> FixedWindow {
        FixedWindow { cwnd_bytes, acks_seen: 0, losses_seen: 0, rounds_seen: 0 }
    }
}

impl CongestionControl for FixedWindow {
    fn name(&self) -> &'static str {
        "fixed_window"
    }
    fn init(&mut self, w: &mut Window) {
        w.set_cwnd(self.cwnd_bytes);
    }
    fn on_ack(&mut self, w: &mut Window, _ack: &AckSample) {
        self.acks_seen += 1;
        w.set_cwnd(self.cwnd_bytes);
    }
    fn on_round(&mut self, _w: &mut Window, _round: &RoundSample) {
        self.rounds_seen += 1;
    }
    fn ssthresh_after_loss(&mut self, _w: &Window, _loss: &LossEvent) -> u64 {
        self.losses_seen += 1;
        self.cwnd_bytes
    }
    fn on_recovery_exit(&mut self, w: &mut Window, _exit: &RecoveryExit) {
        w.set_cwnd(self.cwnd_bytes);
    }
    fn metrics(&self, out: &mut Vec<Metric>) {
        out.extend_from_slice(&[("acks_seen", self.acks_seen as f64), ("rounds_seen", self.rounds_seen as f64)]);
    }
}

/// Random-event strategies shared by the algorithms' property tests, with per-algorithm knobs; each
/// test applies the events through [`Script::trajectory`], so all check the same invariants.
#[cfg(test)]
pub mod strategies {
    use std::ops::Range;
    use std::time::Duration;

    use proptest::prelude::*;

    use super::{Backoff, Event, Flight};

    /// Whole-segment ACKs with an RTT sample (usually in `rtt_normal_us`, sometimes below 100 µs or
    /// spiking to 5 s) and a new ACK spacing, `ack_without_rtt` weight of ACKs carrying no sample, and
    /// fast retransmits and recovery exits that are *forced*: the algorithm sees them in any state.
    /// Timeouts count their backoff. For the window laws (H-TCP, delay-based AIMD).
    pub fn forced_events(mss: u64, rtt_normal_us: Range<u64>, ack_without_rtt: u32) -> impl Strategy<Value = Event> {
        let us = Duration::from_micros;
        let spike_from = rtt_normal_us.end;
        let mut arms: Vec<(u32, BoxedStrategy<Event>)> = vec![
            (
                20,
                (1u64..4, prop_oneof![rtt_normal_us, 1u64..100, spike_from..5_000_000], 0u64..20_000)
                    .prop_map(move |(segs, rtt_us, gap_us)| Event::Ack { bytes: segs * mss, rtt: Some(us(rtt_us)), spacing: Some(us(gap_us)) })
                    .boxed(),
            ),
            (2, Just(Event::DupAck).boxed()),
            (2, Just(Event::Round { max_rtt: Some(Duration::from_millis(50)) }).boxed()),
            (1, Just(Event::FastRetransmit { flight: Flight::Cwnd, force: true }).boxed()),
            (1, Just(Event::Timeout { flight: Flight::Cwnd, backoff: Backoff::Counted }).boxed()),
            (1, any::<bool>().prop_map(|t| Event::ExitRecovery { flight: Flight::HalfCwnd, after_timeout: t, force: true }).boxed()),
            (1, (0u64..20_000_000).prop_map(move |i| Event::Idle(us(i))).boxed()),
        ];
        if ack_without_rtt > 0 {
            arms.push((ack_without_rtt, Just(Event::AckWithoutRtt { bytes: mss }).boxed()));
        }
        proptest::strategy::Union::new_weighted(arms)
    }

    /// Byte-sized ACKs (0 to 5000 bytes) whose RTT is usually 20-200 ms, sometimes anything up to 5 s
    /// (zero included) and sometimes absent; rounds with a largest RTT in `round_max_rtt_us` (weight
    /// `round_weight`); losses and recovery exits with random flight sizes, only where the machine
    /// would send them. For the delay-threshold algorithms (HD, CHD).
    pub fn unforced_events(round_weight: u32, round_max_rtt_us: Range<u64>) -> impl Strategy<Value = Event> {
        let us = Duration::from_micros;
        let rtt = prop_oneof![
            8 => (20_000u64..200_000).prop_map(Some),
            1 => (0u64..5_000_000).prop_map(Some),
            1 => Just(None),
        ];
        prop_oneof![
            10 => (0u64..5_000, rtt).prop_map(move |(bytes, rtt_us)| Event::Ack { bytes, rtt: rtt_us.map(us), spacing: None }),
            2 => Just(Event::DupAck),
            round_weight => round_max_rtt_us.prop_map(move |m| Event::Round { max_rtt: Some(us(m)) }),
            1 => (0u64..200_000).prop_map(|f| Event::FastRetransmit { flight: Flight::Bytes(f), force: false }),
            1 => (0u64..200_000, 1u32..5).prop_map(|(f, b)| Event::Timeout { flight: Flight::Bytes(f), backoff: Backoff::Given(b) }),
            1 => (0u64..200_000, any::<bool>())
                .prop_map(|(f, t)| Event::ExitRecovery { flight: Flight::Bytes(f), after_timeout: t, force: false }),
            1 => (0u64..2_000_000).prop_map(move |i| Event::Idle(us(i))),
        ]
    }

    /// Whole-segment ACKs with a partial segment, RTT samples of 10-200 ms with spikes, rounds,
    /// losses and exits only where the machine sends them, application-limited spells and idle
    /// time, for the Reno-family laws (PERT, mPERT, binomial); [`per_ack::run`] checks ssthresh too.
    pub mod per_ack {
        use std::time::Duration;

        use proptest::prelude::*;

        use crate::testkit::{Backoff, Event, Flight, Script};
        use crate::{CcInit, CongestionControl, Rng};

        pub fn rtt_us() -> impl Strategy<Value = u64> {
            prop_oneof![
                8 => 10_000u64..200_000,       // plausible samples 10-200 ms
                1 => 200_000u64..3_000_000,    // spikes up to 3 s
                1 => 1u64..10_000,             // very short
            ]
        }

        pub fn event() -> impl Strategy<Value = Event> {
            let us = Duration::from_micros;
            prop_oneof![
                40 => (1u64..4, 0u64..1000, rtt_us())
                    .prop_map(move |(segs, extra_bytes, rtt_us)| Event::Ack { bytes: segs * MSS + extra_bytes % MSS, rtt: Some(us(rtt_us)), spacing: None }),
                6 => Just(Event::DupAck),
                4 => rtt_us().prop_map(move |rtt_us| Event::Round { max_rtt: Some(us(rtt_us)) }),
                3 => (0u64..200).prop_map(|flight_segs| Event::FastRetransmit { flight: Flight::Bytes(flight_segs * MSS), force: false }),
                1 => (1u32..6).prop_map(|backoff| Event::Timeout { flight: Flight::Cwnd, backoff: Backoff::Given(backoff) }),
                3 => (0u64..200, any::<bool>()).prop_map(|(flight_segs, after_timeout)| Event::ExitRecovery {
                    flight: Flight::Bytes(flight_segs * MSS),
                    after_timeout,
                    force: false,
                }),
                1 => any::<bool>().prop_map(|not_cwnd_limited| Event::CwndLimited(!not_cwnd_limited)),
                2 => (0u64..500).prop_map(|ms| Event::Idle(Duration::from_millis(ms))),
            ]
        }

        pub const MSS: u64 = 1448;

        /// Runs `events` through a fresh controller built by `make`; checks the invariants after every
        /// step and returns the cwnd trajectory.
        pub fn run<C: CongestionControl>(make: &dyn Fn(&CcInit) -> C, seed: u64, events: &[Event]) -> Vec<u64> {
            let init = CcInit { mss_bytes: MSS, initial_cwnd_bytes: 3 * MSS, abc_limit_segments: 2, rng: Rng::new(seed, 7) };
            let cc = make(&init);
            Script::new(cc, init).trajectory(events, |s, ev| {
                assert!(s.w.ssthresh_bytes >= MSS, "ssthresh {} below one MSS after {ev:?}", s.w.ssthresh_bytes);
                s.w.cwnd_bytes
            })
        }
}

    /// [`paced::Op`]s: ACKs and duplicate ACKs after a random gap on top of the ACK spacing, with
    /// forced losses and exits, for the rate estimators' users (Westwood+, TCP Limit).
    pub mod paced {
        //! Random event sequences for the per-algorithm property tests.
        use proptest::prelude::*;

        use crate::testkit::{Backoff, Event, Flight, Script};
        use crate::CongestionControl;
        use std::time::Duration;

        #[derive(Clone, Debug)]
        pub enum Op {
            Ack { segs: u8, rtt_us: u64, gap_us: u64 },
            Dupack { gap_us: u64 },
            Round,
            FastRetransmit,
            Timeout { backoff: u32 },
            Exit { after_timeout: bool },
            Limited(bool),
            Idle { ms: u64 },
        }

        fn rtt_us() -> impl Strategy<Value = u64> {
            prop_oneof![
                8 => 5_000u64..300_000,   // plausible RTTs
                1 => 300_000u64..5_000_000, // spikes
                1 => 1u64..5_000,         // very short
            ]
        }

        pub fn op() -> impl Strategy<Value = Op> {
            prop_oneof![
                30 => (1u8..=4, rtt_us(), 0u64..20_000).prop_map(|(segs, rtt_us, gap_us)| Op::Ack { segs, rtt_us, gap_us }),
                4 => (0u64..5_000).prop_map(|gap_us| Op::Dupack { gap_us }),
                3 => Just(Op::Round),
                2 => Just(Op::FastRetransmit),
                1 => (1u32..4).prop_map(|backoff| Op::Timeout { backoff }),
                2 => any::<bool>().prop_map(|after_timeout| Op::Exit { after_timeout }),
                1 => any::<bool>().prop_map(Op::Limited),
                1 => (0u64..3_000).prop_map(|ms| Op::Idle { ms }),
            ]
        }

        impl Op {
            /// The idle time before this op (`gap_us` before an ACK or duplicate ACK, on top of the
            /// script's ACK spacing) and its scripted event. Fast retransmits and recovery exits are
            /// forced: the algorithm sees them in any state.
            fn event(&self, mss: u64) -> (Duration, Event) {
                let us = Duration::from_micros;
                let no_gap = Duration::ZERO;
                match *self {
                    Op::Ack { segs, rtt_us, gap_us } => (us(gap_us), Event::Ack { bytes: segs as u64 * mss, rtt: Some(us(rtt_us)), spacing: None }),
                    Op::Dupack { gap_us } => (us(gap_us), Event::DupAck),
                    Op::Round => (no_gap, Event::Round { max_rtt: None }),
                    Op::FastRetransmit => (no_gap, Event::FastRetransmit { flight: Flight::Cwnd, force: true }),
                    Op::Timeout { backoff } => (no_gap, Event::Timeout { flight: Flight::Cwnd, backoff: Backoff::Given(backoff) }),
                    Op::Exit { after_timeout } => (no_gap, Event::ExitRecovery { flight: Flight::HalfCwnd, after_timeout, force: true }),
                    Op::Limited(l) => (no_gap, Event::CwndLimited(l)),
                    Op::Idle { ms } => (no_gap, Event::Idle(Duration::from_millis(ms))),
                }
            }
        }

        /// Runs `ops`, checking after every op that cwnd >= 1 MSS and every metric is finite; returns
        /// the cwnd trajectory.
        pub fn run<C: CongestionControl>(s: &mut Script<C>, ops: &[Op]) -> Vec<u64> {
            let mss = s.w.mss_bytes;
            let mut traj = Vec::with_capacity(ops.len());
            for op in ops {
                let (idle, event) = op.event(mss);
                s.advance(idle);
                s.apply(&event);
                s.assert_invariants(op);
                traj.push(s.w.cwnd_bytes);
            }
            traj
        }
}
}
