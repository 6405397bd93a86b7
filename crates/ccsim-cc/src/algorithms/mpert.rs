//! # mPERT: PERT with adaptive increase and decrease (Kotla & Reddy, IWQoS 2008)
//!
//! As given by Budzisz, Stanojević, Shorten, Baker, IEEE Comm. Letters 2009 ([Budzisz09] in
//! `docs/bibliography.md`), section II, Fig. 2 (pseudo-code) and Table I. The original Kotla & Reddy
//! paper ([Kotla08]) was not available; every gap below is a documented choice.
//!
//! BPF twin (the Linux testbed, `docs/kernel.md`): `python/ccsim/kernel/bpf/mpert.bpf.c`.
//!
//! mPERT is PERT ([`super::pert`]) that, when the queueing delay suggests loss-based flows share the
//! bottleneck ("compete" mode), increases faster and backs off less so that it is not starved.
//!
//! Rules implemented (numbers used again at the code sites):
//! * (M1) Delay: PERT's srtt_0.99 filter and `δ_current = srtt - RTTmin` (pert (P1)).
//! * (M2) δ_max: a running per-flow estimate of the maximum queueing delay, starting at 100 ms
//!   (Table I, "δ_max (initial value)"): `δ_max <- max(δ_max, maxRTT - minRTT)` over raw samples
//!   (lifetime max and min, as FreeBSD h_ertt gives HD).
//! * (M3) `p = g(δ_current)`, PERT's RED-like ramp with the gentle extension (Fig. 1; pert (P2)).
//! * (M4) Fig. 2: on each ACK, if `U < p` and no early response yet in this RTT (pert (P4)):
//!   `w <- w - β w`, `β = δ_current / (δ_current + δ_max)` (<= 0.5), and `ssthresh <- w`.
//! * (M5) Fig. 2, else: `w <- w + α/w` per ACK (packets), `1 <= α <= α_max = 32`.
//! * (M6) Section II: compete mode iff `δ_current >= 0.5 δ_max`; there `α = min(1 + p'/p, α_max)`
//!   with p' the early-response rate and p the loss rate, both "as for TFRC": 1 / weighted mean of
//!   the last 8 intervals (packets) between events, weights 1,1,1,1,0.8,0.6,0.4,0.2
//!   ([`super::loss_interval`]). Since both rates are 1/I_mean, `p'/p = I_loss / I_response`.
//!   `p_prime = "probability"` reads p' as the response probability `g(δ_current)` instead (the
//!   reading of the Budzisz et al. fluid model, Section IV, where mPERT's backoff rate is g(δ)); the
//!   realised rate counts at most one response per RTT, so it is lower and α with it.
//! * (M7) Loss and timeouts: standard Reno (the summary is silent), as pert (P6); slow start standard, no early
//!   response while `cwnd <= ssthresh` or in fast recovery.
//!
//! Parameters (defaults): PERT's `t_min_ms` 5, `t_max_ms` 20 (Table I), `p_max` 0.05 (PERT
//! default), `gentle`, `srtt_weight` 0.99; `alpha_max` 32 (Fig. 2); `delta_max_init_ms` 100
//! (Table I); `compete_fraction` 0.5 (section II); `delta_max_from` "raw"; `trials`, `halve_from`.
//!
//! Choices for the gaps (and why):
//! * α outside compete mode: 1 (plain PERT/Reno increase). Fig. 2 only bounds α ≥ 1 and the text
//!   describes the adaptation for compete mode only; section II says mPERT "assumes that there are no
//!   loss-based flows" below the threshold, i.e. behaves as PERT. The ns-3 port's gradual α updates
//!   every 5 srtt (+0.5 / +0.1 / ×0.9) are not described by the paper and are not implemented.
//! * α is recomputed on every ACK from the current mode and rates (Fig. 2: `α = f(δ_current)`), not
//!   smoothed in time.
//! * Rates undefined: before the flow's first loss event p is undefined and α = 1 (no evidence yet;
//!   taking the p -> 0 limit would give α_max to every flow that merely has not lost a packet). With
//!   losses but no early response yet, p' = 0 and α = 1. If the mean response interval is 0 (two
//!   responses with no packet in between) p' is unbounded and α = α_max. α is always clamped to
//!   [1, α_max].
//! * Intervals count packets as bytes cumulatively acknowledged / MSS; the first interval runs from
//!   the connection start (see `loss_interval`). Loss events are fast retransmits and first timeouts
//!   (repeated expiries of the same segment are one event). Early responses that the once-per-RTT
//!   guard suppressed are not events.
//! * β applies to every early response (Fig. 2), not only in compete mode; it is ≤ 0.5 by
//!   construction because δ_max ≥ δ_current (the running max includes the samples the filter
//!   averages) and is clamped to [0, 0.5] defensively. δ_current + δ_max = 0 gives β = 0.
//! * δ_max from raw samples (`maxRTT - minRTT`, not a smoothed RTT; Budzisz's HD uses the same
//!   quantity). `delta_max_from = "smoothed"` tracks the max of δ_current instead (closer to the
//!   ns-3 port, whose RTT input is already smoothed). The port's floor of 10 ms is replaced by the
//!   paper's initial value of 100 ms, which δ_max can only exceed.
//! * The increase `α/w` per ACK is done in bytes, `α·MSS·min(bytes_acked, L·MSS)/cwnd` with ABC
//!   (L = the scenario's ABC limit), `α·MSS²/cwnd` per ACK without ABC, with a fractional-byte
//!   accumulator (resynchronised when the machine changes cwnd). At α = 1 this is the Reno rate of
//!   `reno.rs`, smoothed rather than in whole-MSS steps.
//! * Slow start means `cwnd < ssthresh` (Linux, ns-2), as PERT: a response that sets
//!   `ssthresh = w` stays in congestion avoidance.

use crate::algorithms::loss_interval::IntervalEstimator;
use crate::algorithms::pert::{self, reno_increase_strict, reduced_window, PertCore};
use crate::params::{ParamReader, ParamSpec};
use crate::reno::{loss_ssthresh, HalveFrom, RenoIncrease, RepeatedTimeout};
use crate::{AckSample, CcError, CcInit, CongestionControl, LossEvent, LossKind, Metric, ParamMap, Window};

pub const NAME: &str = "mpert";

crate::param_choice! {
    /// δ_max from raw maxRTT − minRTT (as HD) or from the max of the srtt_0.99 delay estimate.
    pub enum DeltaMaxFrom { Raw = "raw", Smoothed = "smoothed" }
}

crate::param_choice! {
    /// (M6) what p' in `α = 1 + p'/p` is: the realised early-response rate (TFRC-style intervals
    /// between responses that happened) or the response probability `g(δ_current)` itself.
    pub enum PPrime { Realised = "realised", Probability = "probability" }
}

pub fn params() -> Vec<ParamSpec> {
    let mut v = pert::ramp_params();
    v.extend([
        ParamSpec::number("alpha_max", "pkts", 32.0, 1.0, 1000.0, "upper bound of the additive increase alpha per RTT (Fig. 2: 32)"),
        ParamSpec::number(
            "delta_max_init_ms",
            "ms",
            100.0,
            0.0,
            100_000.0,
            "initial value of the running max queueing delay delta_max (Budzisz et al. 2009 Table I: 100 ms)",
        ),
        ParamSpec::number(
            "compete_fraction",
            "",
            0.5,
            0.0,
            1.0,
            "compete mode when delta_current >= compete_fraction * delta_max (section II: 50 %)",
        ),
        ParamSpec::choice(
            "delta_max_from",
            DeltaMaxFrom::Raw,
            "delta_max tracks raw maxRTT - minRTT (as HD) or the max of the srtt_0.99 delay estimate",
        ),
        ParamSpec::choice(
            "p_prime",
            PPrime::Realised,
            "p' of alpha = 1 + p'/p in compete mode: the realised early-response rate (TFRC intervals) or the response probability g(delta_current)",
        ),
    ]);
    v.extend(pert::common_tail_params());
    v
}

#[derive(Clone, Debug)]
pub struct MPert {
    core: PertCore,
    alpha_max: f64,
    compete_fraction: f64,
    delta_max_from: DeltaMaxFrom,
    p_prime: PPrime,
    halve_from: HalveFrom,
    abc_limit: u32,
    /// Slow-start increase (Reno, ABC).
    increase: RenoIncrease,
    /// Fractional bytes of the (M5) increase not yet added to cwnd, and the cwnd they belong to.
    frac_bytes: f64,
    last_cwnd: u64,
    /// (M2) running max queueing delay, ns.
    delta_max_ns: f64,
    /// (M6) TFRC-style intervals between loss events and between early responses.
    loss_intervals: IntervalEstimator,
    response_intervals: IntervalEstimator,
    alpha: f64,
    beta: f64,
    compete: bool,
}

impl MPert {
    pub fn new(given: &ParamMap, init: &CcInit) -> Result<MPert, CcError> {
        let specs = params();
        let p = ParamReader::new(NAME, &specs, given)?;
        Ok(MPert {
            core: PertCore::from_params(&p, init)?,
            alpha_max: p.f64("alpha_max"),
            compete_fraction: p.f64("compete_fraction"),
            delta_max_from: p.choice("delta_max_from"),
            p_prime: p.choice("p_prime"),
            halve_from: p.choice("halve_from"),
            abc_limit: init.abc_limit_segments,
            increase: RenoIncrease::default(),
            frac_bytes: 0.0,
            last_cwnd: init.initial_cwnd_bytes,
            delta_max_ns: p.f64("delta_max_init_ms") * 1e6,
            loss_intervals: IntervalEstimator::new(),
            response_intervals: IntervalEstimator::new(),
            alpha: 1.0,
            beta: 0.0,
            compete: false,
        })
    }

    /// (M6) α for the current mode and rates (choices for undefined rates in the module header).
    fn compute_alpha(&self) -> f64 {
        if !self.compete {
            return 1.0;
        }
        if self.p_prime == PPrime::Probability {
            // p' = g(δ_current) per packet, p = 1 / I_loss: p'/p = g · I_loss.
            let a = match self.loss_intervals.mean_interval() {
                None => 1.0, // no loss yet: p undefined (as the realised reading)
                Some(il) => 1.0 + self.core.p * il,
            };
            return if a.is_finite() { a.min(self.alpha_max).max(1.0) } else { self.alpha_max };
        }
        let a = match (self.loss_intervals.mean_interval(), self.response_intervals.mean_interval()) {
            (None, _) => 1.0,                         // no loss yet: p undefined
            (Some(_), None) => 1.0,                   // no early response yet: p' = 0
            (Some(il), Some(_)) if il <= 0.0 => 1.0,  // p unbounded: p'/p = 0
            (Some(_), Some(ir)) if ir <= 0.0 => self.alpha_max, // p' unbounded
            (Some(il), Some(ir)) => 1.0 + il / ir,    // p'/p = (1/ir)/(1/il)
        };
        if a.is_finite() {
            a.min(self.alpha_max).max(1.0)
        } else {
            self.alpha_max
        }
    }

    /// (M5) w <- w + α/w per ACK, in bytes with a fractional accumulator.
    fn additive_increase(&mut self, w: &mut Window, ack: &AckSample) {
        if ack.bytes_acked == 0 || ack.in_recovery || !ack.cwnd_limited {
            return;
        }
        let mss = w.mss_bytes as f64;
        let counted = if self.abc_limit == 0 {
            mss
        } else {
            ack.bytes_acked.min(self.abc_limit as u64 * w.mss_bytes) as f64
        };
        let add = self.alpha * mss * counted / (w.cwnd_bytes.max(1) as f64);
        if add.is_finite() && add > 0.0 {
            self.frac_bytes += add;
        }
        let whole = self.frac_bytes.floor();
        if whole >= 1.0 {
            let whole_u = if whole >= u64::MAX as f64 { u64::MAX } else { whole as u64 };
            w.cwnd_bytes = w.cwnd_bytes.saturating_add(whole_u);
            self.frac_bytes -= whole;
        }
    }
}

impl CongestionControl for MPert {
    fn name(&self) -> &'static str {
        NAME
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        if w.cwnd_bytes != self.last_cwnd {
            self.frac_bytes = 0.0; // the machine changed cwnd: drop the stale fraction
        }
        self.core.observe(ack); // (M1), (M3)
        // (M2) running max of the queueing delay.
        let q_max_sample = if self.delta_max_from == DeltaMaxFrom::Smoothed {
            self.core.q_ns
        } else {
            match (ack.max_rtt, ack.min_rtt) {
                (Some(hi), Some(lo)) => Some(hi.saturating_sub(lo).as_nanos() as f64),
                _ => None,
            }
        };
        if let Some(q) = q_max_sample {
            if q.is_finite() && q > self.delta_max_ns {
                self.delta_max_ns = q;
            }
        }
        if ack.bytes_acked > 0 {
            let pkts = ack.bytes_acked as f64 / w.mss_bytes as f64;
            self.loss_intervals.add_packets(pkts);
            self.response_intervals.add_packets(pkts);
        }
        // (M6) mode, α; (M4) β.
        let delta = self.core.q_ns.unwrap_or(0.0);
        self.compete = self.delta_max_ns > 0.0 && delta >= self.compete_fraction * self.delta_max_ns;
        self.alpha = self.compute_alpha();
        let denom = delta + self.delta_max_ns;
        self.beta = if denom > 0.0 { (delta / denom).clamp(0.0, 0.5) } else { 0.0 };

        if self.core.decide(w, ack) {
            // (M4) w <- w - β w, ssthresh <- w.
            let new = reduced_window(w, self.beta);
            w.set_cwnd(new);
            w.ssthresh_bytes = w.cwnd_bytes;
            self.response_intervals.on_event();
            self.increase.reset();
            self.frac_bytes = 0.0;
        } else if w.cwnd_bytes < w.ssthresh_bytes {
            reno_increase_strict(&mut self.increase, w, ack, self.abc_limit); // (M7) slow start
        } else {
            self.additive_increase(w, ack); // (M5)
        }
        self.last_cwnd = w.cwnd_bytes;
    }

    fn ssthresh_after_loss(&mut self, w: &Window, loss: &LossEvent) -> u64 {
        let new_event = match loss.kind {
            LossKind::FastRetransmit => true,
            LossKind::Timeout { backoff } => backoff <= 1,
        };
        if new_event {
            self.loss_intervals.on_event();
        }
        self.increase.reset();
        self.frac_bytes = 0.0;
        loss_ssthresh(w, loss, self.halve_from, RepeatedTimeout::Hold) // (M7)
    }

    fn metrics(&self, out: &mut Vec<Metric>) {
        out.extend_from_slice(&[
            ("srtt099_ms", self.core.srtt_ms()),
            ("qdelay_ms", self.core.q_ms()),
            ("delta_max_ms", self.delta_max_ns / 1e6),
            ("p_response", self.core.p),
            ("compete", if self.compete { 1.0 } else { 0.0 }),
            ("alpha", self.alpha),
            ("beta", self.beta),
            ("loss_rate", self.loss_intervals.rate().unwrap_or(0.0)),
            ("response_rate", self.response_intervals.rate().unwrap_or(0.0)),
            ("loss_events", self.loss_intervals.events() as f64),
            ("early_responses", self.core.responses as f64),
        ]);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::testkit::Script;
    use crate::ParamValue;

    const MSS: u64 = 1000;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    fn mpert_with(given: ParamMap, abc: u32) -> Script<MPert> {
        let init = Script::<MPert>::init(MSS, 3, abc);
        Script::new(MPert::new(&given, &init).unwrap(), init)
    }

    /// Congestion avoidance at cwnd 20 MSS, ssthresh 10 MSS, RTTmin 40 ms.
    fn mpert_in_ca(abc: u32) -> Script<MPert> {
        let mut s = mpert_with(ParamMap::new(), abc);
        s.w.cwnd_bytes = 20 * MSS;
        s.w.ssthresh_bytes = 10 * MSS;
        s.min_rtt = Some(ms(40));
        s
    }

    #[test]
    fn beta_is_delta_over_delta_plus_delta_max() {
        let mut s = mpert_in_ca(2);
        // δ = 100 - 40 = 60 ms (p = 1); δ_max = max(100, 100 - 40) = 100 ms.
        // β = 60 / (60 + 100) = 0.375 -> cwnd = 20 000 * 0.625 = 12 500.
        s.ack_rtt(MSS, ms(100));
        assert!((s.metric("beta").unwrap() - 0.375).abs() < 1e-12);
        assert_eq!(s.metric("early_responses"), Some(1.0));
        assert_eq!(s.w.cwnd_bytes, 12_500);
        assert_eq!(s.w.ssthresh_bytes, 12_500);
    }

    #[test]
    fn beta_reaches_one_half_when_the_queue_is_at_its_maximum() {
        let mut s = mpert_with(ParamMap::new(), 2);
        s.w.cwnd_bytes = 20 * MSS;
        s.w.ssthresh_bytes = 10 * MSS;
        s.min_rtt = Some(ms(40));
        // A sample of 240 ms: δ = 200 ms = δ_max (raw max 240 - 40). β = 200/400 = 0.5.
        s.ack_rtt(MSS, ms(240));
        assert_eq!(s.metric("delta_max_ms"), Some(200.0));
        assert!((s.metric("beta").unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(s.w.cwnd_bytes, 10_000);
    }

    #[test]
    fn delta_max_starts_at_100_ms_and_tracks_the_raw_maximum() {
        let mut s = mpert_in_ca(2);
        s.ack_rtt(MSS, ms(60));
        assert_eq!(s.metric("delta_max_ms"), Some(100.0), "20 ms observed < initial 100 ms");
        s.ack_rtt(MSS, ms(190));
        assert_eq!(s.metric("delta_max_ms"), Some(150.0), "190 - 40");
        s.ack_rtt(MSS, ms(50));
        assert_eq!(s.metric("delta_max_ms"), Some(150.0), "a running maximum");
    }

    #[test]
    fn smoothed_delta_max_follows_the_filtered_delay() {
        let mut given = ParamMap::new();
        given.insert("delta_max_from".into(), ParamValue::Text("smoothed".into()));
        given.insert("delta_max_init_ms".into(), ParamValue::Number(0.0));
        let mut s = mpert_with(given, 2);
        s.min_rtt = Some(ms(40));
        s.ack_rtt(MSS, ms(60)); // srtt 60, δ 20
        s.ack_rtt(MSS, ms(160)); // srtt 61, δ 21 (raw max would say 120)
        assert!((s.metric("delta_max_ms").unwrap() - 21.0).abs() < 1e-9);
    }

    #[test]
    fn alpha_is_one_outside_compete_mode() {
        let mut s = mpert_in_ca(0);
        // δ = 45 - 40 = 5 ms < 0.5 * 100 ms: not compete. Per ACK (no ABC): α·MSS²/cwnd = 50 bytes.
        s.ack_rtt(MSS, ms(45));
        assert_eq!(s.metric("compete"), Some(0.0));
        assert_eq!(s.metric("alpha"), Some(1.0));
        assert_eq!(s.w.cwnd_bytes, 20_050);
    }

    #[test]
    fn alpha_in_compete_mode_is_one_plus_response_rate_over_loss_rate() {
        let mut s = mpert_in_ca(0);
        // History: a loss after 600 packets, early responses after 100 and 200 more packets.
        s.cc.loss_intervals.add_packets(600.0);
        s.cc.loss_intervals.on_event();
        s.cc.response_intervals.add_packets(100.0);
        s.cc.response_intervals.on_event();
        s.cc.response_intervals.add_packets(200.0);
        s.cc.response_intervals.on_event();
        // Now an ACK of 1 packet in compete mode without a response (guard armed far ahead).
        s.cc.core.guard.arm(u64::MAX);
        s.ack_rtt(MSS, ms(100)); // δ = 60 ms >= 50 ms
        // I_loss: closed 600, open 1 -> max(1*1, 600*1)/1 = 600.
        // I_resp: closed 200, 100; open 1 -> W_tot = 2, I_tot1 = 200 + 100 = 300, I_tot0 = 1 + 200
        //   -> 150. α = 1 + 600/150 = 5.
        assert_eq!(s.metric("compete"), Some(1.0));
        assert!((s.metric("alpha").unwrap() - 5.0).abs() < 1e-12, "{:?}", s.metric("alpha"));
        // Increase α·MSS²/cwnd = 5 * 1e6 / 20 000 = 250 bytes.
        assert_eq!(s.w.cwnd_bytes, 20_250);
    }

    #[test]
    fn probability_reading_takes_p_prime_from_the_response_probability() {
        let mut given = ParamMap::new();
        given.insert("p_prime".into(), ParamValue::Text("probability".into()));
        given.insert("delta_max_init_ms".into(), ParamValue::Number(20.0));
        let mut s = mpert_with(given, 0);
        s.w.cwnd_bytes = 20 * MSS;
        s.w.ssthresh_bytes = 10 * MSS;
        s.min_rtt = Some(ms(40));
        s.cc.loss_intervals.add_packets(600.0);
        s.cc.loss_intervals.on_event();
        s.cc.core.guard.arm(u64::MAX); // no response: p' must come from g, not from events
        s.ack_rtt(MSS, Duration::from_micros(52_500)); // δ = 12.5 ms >= 0.5 * 20 ms: compete
        // g(12.5 ms) = 0.05 * (12.5 - 5) / (20 - 5) = 0.025; I_loss = 600: α = 1 + 0.025 * 600 = 16.
        assert_eq!(s.metric("compete"), Some(1.0));
        assert!((s.metric("p_response").unwrap() - 0.025).abs() < 1e-12);
        assert!((s.metric("alpha").unwrap() - 16.0).abs() < 1e-9, "{:?}", s.metric("alpha"));
        // The realised reading of the same history has no response yet: α = 1.
        let mut r = mpert_in_ca(0);
        r.cc.loss_intervals.add_packets(600.0);
        r.cc.loss_intervals.on_event();
        r.cc.core.guard.arm(u64::MAX);
        r.ack_rtt(MSS, ms(100));
        assert_eq!(r.metric("alpha"), Some(1.0));
    }

    #[test]
    fn alpha_is_bounded_between_one_and_alpha_max() {
        let mut s = mpert_in_ca(0);
        s.cc.core.guard.arm(u64::MAX);
        // Compete, but no loss yet: α = 1.
        s.ack_rtt(MSS, ms(100));
        assert_eq!(s.metric("compete"), Some(1.0));
        assert_eq!(s.metric("alpha"), Some(1.0));
        // A loss, no early response yet: p' = 0 -> α = 1.
        s.cc.loss_intervals.add_packets(10_000.0);
        s.cc.loss_intervals.on_event();
        s.ack_rtt(MSS, ms(100));
        assert_eq!(s.metric("alpha"), Some(1.0));
        // Responses 100 times more frequent than losses: 1 + 100 > 32 -> α = 32.
        s.cc.response_intervals.add_packets(100.0);
        s.cc.response_intervals.on_event();
        s.ack_rtt(MSS, ms(100));
        assert_eq!(s.metric("alpha"), Some(32.0));
        // Back-to-back responses: p' unbounded -> α_max.
        s.cc.response_intervals = IntervalEstimator::new();
        s.cc.response_intervals.on_event();
        assert_eq!(s.cc.compute_alpha(), 32.0);
    }

    #[test]
    fn loss_and_early_response_events_feed_the_interval_estimators() {
        let mut s = mpert_in_ca(2);
        for _ in 0..10 {
            s.ack_rtt(MSS, ms(41)); // no response (δ ~ 1 ms)
        }
        s.loss_fast_retransmit(20_000);
        assert_eq!(s.metric("loss_events"), Some(1.0));
        // first interval = 10 packets since the start
        assert!((s.metric("loss_rate").unwrap() - 0.1).abs() < 1e-12);
        s.loss_timeout(MSS, 2);
        assert_eq!(s.metric("loss_events"), Some(1.0), "a repeated timeout is not a new event");
    }

    #[test]
    fn responds_at_most_once_per_rtt_like_pert() {
        let mut s = mpert_in_ca(2);
        s.ack_rtt(MSS, ms(100));
        s.ack_rtt(MSS, ms(100));
        assert_eq!(s.metric("early_responses"), Some(1.0));
        while s.snd_una < 21_000 {
            s.ack_rtt(MSS, ms(100));
        }
        assert_eq!(s.metric("early_responses"), Some(2.0), "the ACK of snd_max at the response re-arms");
    }

    #[test]
    fn slow_start_is_standard_and_has_no_early_response() {
        let mut s = mpert_with(ParamMap::new(), 2);
        s.min_rtt = Some(ms(40));
        s.ack_rtt(2 * MSS, ms(100));
        assert_eq!(s.w.cwnd_bytes, 5 * MSS);
        assert_eq!(s.metric("early_responses"), Some(0.0));
    }

    #[test]
    fn abc_counts_bytes_acked_up_to_the_limit() {
        let mut s = mpert_in_ca(2);
        // α = 1, δ = 1 ms: 4 segments acked, ABC L = 2: 1 * 1000 * 2000 / 20 000 = 100 bytes.
        s.ack_rtt(4 * MSS, ms(41));
        assert_eq!(s.w.cwnd_bytes, 20_100);
        // Sub-byte increments accumulate: at cwnd 20 100, an ACK of 7 bytes adds 7000/20100 = 0.348.
        for _ in 0..3 {
            s.ack_rtt(7, ms(41));
        }
        assert_eq!(s.w.cwnd_bytes, 20_101);
    }

    mod props {
        use crate::testkit::strategies::per_ack;
        use super::*;
        use proptest::prelude::*;

        fn make(init: &CcInit) -> MPert {
            MPert::new(&ParamMap::new(), init).unwrap()
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]
            #[test]
            fn random_events_keep_invariants_and_are_deterministic(
                seed in any::<u64>(),
                events in proptest::collection::vec(per_ack::event(), 1..400),
            ) {
                let a = per_ack::run(&make, seed, &events);
                let b = per_ack::run(&make, seed, &events);
                prop_assert_eq!(a, b);
            }
        }
    }
}
