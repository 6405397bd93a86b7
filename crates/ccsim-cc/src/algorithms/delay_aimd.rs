//! # Delay-based AIMD on the H-TCP increase (Leith, Shorten, McCullagh, Heffner, Dunn, Baker 2007)
//!
//! Paper: D. Leith et al., "Delay-based AIMD congestion control", PFLDnet 2007
//! ([Leith07] in `docs/bibliography.md`), Algorithm 1 and eqs. (1)-(7). No public code exists (the
//! authors' Linux 2.6.17 module was not found); the choices are listed in `docs/algorithms/delay_aimd.md`.
//!
//! BPF twin (the Linux testbed, `docs/kernel.md`): `python/ccsim/kernel/bpf/delay_aimd.bpf.c`.
//!
//! Per ACK carrying an RTT sample `RTT` (Algorithm 1, line numbers in brackets; windows in packets in
//! the paper, bytes here):
//! * [2] `RTTmin = min(RTT, RTTmin)`.
//! * [3] `RTTmax = max(RTT, RTTmax − a·RTT/w)`: RTTmax decays towards the current RTT at rate `a`
//!   (seconds per second).
//! * [4] `τ = RTT − RTTmin` (queueing delay).
//! * [5] `β = min(δ·RTTmin/RTT, 0.9)` (**eq. (4)**; δ = 1 gives eq. (3), β = RTTmin/RTT).
//! * [6-16] slow start (w ≤ ssthresh), **delay-based limited slow start** (section IV): when the sample
//!   is a new RTTmax, `max_ssthresh = (w/4)·τ̄0/(RTTmax − RTTmin)` (**eq. (7)**); while
//!   w ≤ max_ssthresh grow as Reno slow start, above it by `max_ssthresh/(2w)` packets per ACK (at
//!   most max_ssthresh/2 per RTT, RFC 3742 style).
//! * [17-19] congestion avoidance: if `w ≤ w0` or `τ ≤ τ0`, with the adaptive threshold
//!   `τ0 = (1−γ)·τ̄0 + γ·(RTTmax − RTTmin)` (**eq. (5)**), `w += 2(1−β)·α(Δ)/w` with the H-TCP
//!   `α(Δ)` (**eq. (2)**, typo fixed, see [`super::htcp_increase`]), Δ = now − t_b. Otherwise the
//!   window is held flat (**eq. (6)**, first case).
//! * [22-25] delay backoff: if `w > w0` and `τ ≥ τ̄0` and `now − t_b > Δ0`: `w = β·w`,
//!   `ssthresh = w`, `t_b = now` (**eq. (6)**, second case).
//! * Packet loss: `w = β·w` (**eqs. (1), (6)**, third case), `ssthresh = w`, `t_b = now`.
//!
//! Parameters: see [`params`]. τ̄0 = 20 ms (Figs 2-4; Fig 7 used 50 ms). The paper gives no value for
//! δ, γ, Δ0, w0 or a: ccsim's engineering defaults are used, each a parameter: δ = 0.75
//! (the only value shown, Fig. 4), γ = 0.5, Δ0 = max(RTTmax − RTTmin, RTTmin), w0_pkts = 4 packets,
//! a = 0.001 (RTTmax decays 1 ms per second).
//!
//! Differences from the paper, and choices where it is silent (why):
//! * **Thresholds.** Eq. (6)'s text backs off when τ ≥ τ0 (adaptive); Algorithm 1 line 22 uses the
//!   baseline τ̄0 for the backoff and the adaptive τ0 only for the increase gate. Default: the listing
//!   (the algorithm as printed); `backoff_threshold = "adaptive"` gives the eq. (6) reading. With γ = 0 both
//!   coincide with eq. (1).
//! * **Delay signal.** Section II-A says `τ = sRTT − RTTmin`; Algorithm 1 uses the per-ACK RTT.
//!   Default the raw sample (the listing; smoothing would hide the queue build-up the rule reacts to); `delay_signal = "srtt"` uses the machine's RFC 6298
//!   SRTT in lines 3-5 (RTTmin stays the minimum raw sample, as the paper defines it).
//! * **Line 8** is garbled ("if τ = T̂max"); read with the text of section IV ("when RTT > RTTmax"): the
//!   sample raised RTTmax in line 3. Eq. (7) uses the baseline τ̄0 (the set point the queue should not
//!   exceed), not the adaptive τ0. Before any estimate max_ssthresh is infinite (plain slow start).
//! * **Once per window guard** (`window_guard`, default on; not in the paper). After a delay backoff,
//!   the ACKs of packets that were already queued keep reporting τ ≥ τ̄0 for a whole RTT, which exceeds
//!   the default Δ0 = max(RTTmax − RTTmin, RTTmin) by the queueing delay itself; a second backoff on
//!   those stale samples would cut the window twice for one congestion episode. So no delay backoff
//!   happens until everything sent before the previous one is acknowledged (snd_una > snd_max at
//!   the backoff: the ACK of the last of those segments is still stale). In a packet-level check on
//!   the Fig. 2 path (1 flow) the guard lifts utilisation from 0.67 to 0.87. Off reproduces the
//!   listing's Δ0-only limiter.
//! * **Time origin.** Δ and the Δ0 timer start at the connection start, which the seam does not give:
//!   the send time of the first acknowledged segment (first ACK time minus its RTT sample) is used.
//! * **δ default** 1, i.e. eq. (3) β = RTTmin/RTT, the paper's setting for Figs 2, 3, 6-8 (0.75 is
//!   shown, the value of Fig. 4 only). 0.75 makes RTTmin self-correcting but cuts each
//!   backoff ~25 % below the BDP: in ccsim on the Fig. 2 path utilisation is 0.86-0.89 with 0.75 and
//!   0.99 with 1. See `docs/algorithms/delay_aimd.md`.
//! * **Recovery.** No delay backoff while the machine is in fast recovery (the loss backoff already
//!   reacted to this episode); no window growth in recovery or when not cwnd-limited (as every
//!   algorithm here).
//! * **Per-ACK counting.** The listing's per-ACK rules (lines 3, 12, 14, 19) count ACKs; here they
//!   count ABC-limited bytes like [`crate::reno::RenoIncrease`] (`min(acked, L·MSS)`, or one MSS per ACK
//!   with ABC off), so delayed ACKs do not halve the increase, and RTTmax decays per segment acked so
//!   `a` is a true rate whatever the ACK ratio.
//! * **β in the increase** is the per-ACK β of line 5 (not the β of the last backoff as in H-TCP).
//!   Before the first RTT sample β = 0.5 (standard TCP) for a loss backoff.
//! * **Floors.** Backoffs never go below 2 MSS (as every TCP's ssthresh); the paper has no floor.
//! * **RTO.** Not in the paper: ssthresh = max(β·w, 2 MSS), t_b = now, cwnd = 1 MSS (machine); later
//!   expiries of the same segment keep ssthresh (RFC 5681).
//! * **Slow-start test** `w ≤ ssthresh` (listing); right after a backoff w == ssthresh, so one
//!   slow-start step follows (as FreeBSD after ECN/delay backoffs).
//! * H-TCP RTT scaling is not part of eq. (2); `rtt_scaling = true` adds it (Linux H-TCP default).
//! * `rtt_min_init_ms` starts RTTmin at a configured value (Figs 3-4 "manually configured"). The
//!   configured value stands for a standing queue the flow cannot see below: line 2 lowers it only
//!   from the first backoff (delay or loss) on, the probe of eq. (4) (section II-D: the multiplicative
//!   decrease "probe[s] the network to discover whether an RTT below RTTmin is possible"). Otherwise
//!   the first sample of the empty path replaces it at once and Figs 3-4 show nothing.

use std::time::Duration;

use super::htcp_increase::{self as inc, FracCwnd};
use crate::params::{ParamReader, ParamSpec};
use crate::reno::RenoIncrease;
use crate::time::Time;
use crate::{AckSample, CcError, CcInit, CongestionControl, LossEvent, LossKind, Metric, ParamMap, Window};

pub const NAME: &str = "delay_aimd";

crate::param_choice! {
    /// Delay backoff at τ ≥ τ̄0 (Algorithm 1) or at the adaptive τ0 of eq. (5) (the eq. (6) text).
    pub enum BackoffThreshold { Baseline = "baseline", Adaptive = "adaptive" }
}
crate::param_choice! {
    /// RTT for τ, β and RTTmax: the raw per-ACK sample (Algorithm 1) or RFC 6298 SRTT (§II-A).
    pub enum DelaySignal { Rtt = "rtt", Srtt = "srtt" }
}

pub fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::positive("tau0_ms", "ms", 20.0, 10_000.0, "baseline queueing-delay threshold tau0-bar for the delay backoff (paper Figs 2-4: 20 ms; Fig 7: 50 ms)"),
        ParamSpec::positive("delta", "", 1.0, 1.0, "backoff scaling delta of eq. 4, beta = min(delta*RTTmin/RTT, beta_max); 1 = eq. 3 (Figs 2, 3, 6-8); < 1 lets RTTmin ratchet down (Fig 4: 0.75)"),
        ParamSpec::positive("beta_max", "", 0.9, 1.0, "cap of the adaptive backoff factor (Algorithm 1 line 5: 0.9)"),
        ParamSpec::number("gamma", "", 0.5, 0.0, 1.0, "weight of the observed queue in the adaptive increase threshold, eq. 5 (not given; ccsim default 0.5; 0 = basic algorithm)"),
        ParamSpec::number("delta0_ms", "ms", 0.0, 0.0, 3_600_000.0, "minimum time between delay backoffs Delta0; 0 = max(RTTmax - RTTmin, RTTmin) (not given; ccsim default)"),
        ParamSpec::number("w0_pkts", "pkts", 4.0, 0.0, 1e9, "delay rules apply only above this window (eq. 1; not given; ccsim default 4)"),
        ParamSpec::number("a", "s/s", 0.001, 0.0, 1.0, "decay rate of RTTmax towards the current RTT (line 3; not given; ccsim default 1 ms per s)"),
        ParamSpec::choice("backoff_threshold", BackoffThreshold::Baseline, "delay backoff when tau >= tau0-bar (Algorithm 1) or >= the adaptive tau0 of eq. 5 (eq. 6 text)"),
        ParamSpec::choice("delay_signal", DelaySignal::Rtt, "RTT used for tau, beta and RTTmax: raw per-ACK sample (Algorithm 1) or RFC 6298 SRTT (section II-A)"),
        ParamSpec::boolean("limited_slow_start", true, "delay-based limited slow start with max_ssthresh of eq. 7 (section IV); false: Reno slow start"),
        ParamSpec::boolean("window_guard", true, "no second delay backoff until the data sent before the previous one is acked (ccsim choice, see docs)"),
        ParamSpec::boolean("rtt_scaling", false, "scale the H-TCP factor by clamp(RTTmin/100 ms, 0.1, 2) as Linux H-TCP (not in eq. 2)"),
        ParamSpec::positive("delta_l_s", "s", 1.0, 3600.0, "H-TCP low-speed interval Delta_L of eq. 2"),
        ParamSpec::number("rtt_min_init_ms", "ms", 0.0, 0.0, 3_600_000.0, "initial RTTmin before samples lower it (Figs 3-4 set it by hand); 0 = first sample"),
    ]
}

/// Delay-based AIMD congestion control.
#[derive(Clone, Debug)]
pub struct DelayAimd {
    // parameters (RTT quantities in nanoseconds held as f64: integers, so tau >= tau0 is exact)
    tau0_bar: f64,
    delta: f64,
    beta_max: f64,
    gamma: f64,
    delta0_fixed: Option<f64>,
    w0_pkts: f64,
    a: f64,
    backoff_threshold: BackoffThreshold,
    delay_signal: DelaySignal,
    limited_ss: bool,
    window_guard: bool,
    rtt_scaling: bool,
    delta_l_s: f64,
    abc_limit: u32,
    mss: u64,
    // state
    rtt_min: Option<f64>,
    /// A configured RTTmin (`rtt_min_init_ms`) not yet probed by a backoff: line 2 waits (Fig. 3).
    rtt_min_pinned: bool,
    rtt_max: Option<f64>,
    tau: f64,
    beta: f64,
    max_ssthresh_pkts: f64,
    t_b: Option<Time>,
    guard_seq: u64,
    last_now: Time,
    alpha: f64,
    alpha_raw: f64,
    held: bool,
    delay_backoffs: u64,
    loss_backoffs: u64,
    /// beta applied at the last backoff (delay or loss); 0 before any.
    last_backoff_beta: f64,
    slow_start: RenoIncrease,
    frac: FracCwnd,
}

impl DelayAimd {
    pub fn new(given: &ParamMap, init: &CcInit) -> Result<DelayAimd, CcError> {
        let specs = params();
        let p = ParamReader::new(NAME, &specs, given)?;
        let nanos = |name: &str| (p.f64(name) * 1e6).round();
        let delta0 = nanos("delta0_ms");
        let rtt_min_init = nanos("rtt_min_init_ms");
        Ok(DelayAimd {
            tau0_bar: nanos("tau0_ms"),
            delta: p.f64("delta"),
            beta_max: p.f64("beta_max"),
            gamma: p.f64("gamma"),
            delta0_fixed: if delta0 > 0.0 { Some(delta0) } else { None },
            w0_pkts: p.f64("w0_pkts"),
            a: p.f64("a"),
            backoff_threshold: p.choice("backoff_threshold"),
            delay_signal: p.choice("delay_signal"),
            limited_ss: p.bool("limited_slow_start"),
            window_guard: p.bool("window_guard"),
            rtt_scaling: p.bool("rtt_scaling"),
            delta_l_s: p.f64("delta_l_s"),
            abc_limit: init.abc_limit_segments,
            mss: init.mss_bytes.max(1),
            rtt_min: if rtt_min_init > 0.0 { Some(rtt_min_init) } else { None },
            rtt_min_pinned: rtt_min_init > 0.0,
            rtt_max: None,
            tau: 0.0,
            beta: 0.5,
            max_ssthresh_pkts: f64::INFINITY,
            t_b: None,
            guard_seq: 0,
            last_now: Time::ZERO,
            alpha: 0.0,
            alpha_raw: 1.0,
            last_backoff_beta: 0.0,
            held: false,
            delay_backoffs: 0,
            loss_backoffs: 0,
            slow_start: RenoIncrease::default(),
            frac: FracCwnd::default(),
        })
    }

    /// RTTmax − RTTmin, the recent queue estimate (0 before samples).
    fn queue_span(&self) -> f64 {
        match (self.rtt_min, self.rtt_max) {
            (Some(mn), Some(mx)) => (mx - mn).max(0.0),
            _ => 0.0,
        }
    }

    /// Adaptive threshold of the increase gate: τ0 = (1−γ)τ̄0 + γ(RTTmax − RTTmin)  (Eq. 5).
    fn tau0_adaptive(&self) -> f64 {
        (1.0 - self.gamma) * self.tau0_bar + self.gamma * self.queue_span()
    }

    /// Δ0 in ns: fixed, or max(RTTmax − RTTmin, RTTmin).
    fn delta0(&self) -> f64 {
        self.delta0_fixed.unwrap_or_else(|| self.queue_span().max(self.rtt_min.unwrap_or(0.0)))
    }

    /// Δ = now − t_b in seconds.
    fn delta_s(&self, now: Time) -> f64 {
        self.t_b.map_or(0.0, |t| now.saturating_since(t).as_secs_f64())
    }

    /// The increase coefficient 2(1−β)·α(Δ) (Algorithm 1 line 19 with eq. 2).
    fn alpha_now(&mut self, now: Time) -> f64 {
        self.alpha_raw = inc::alpha_raw(self.delta_s(now), self.delta_l_s); // (Eq. 2)
        let scale = match (self.rtt_scaling, self.rtt_min) {
            (true, Some(m)) => inc::rtt_scale(Duration::from_nanos(m as u64), Duration::from_millis(inc::RTT_REF_MS as u64)),
            _ => 1.0,
        };
        let factor = if self.rtt_scaling { inc::scaled_factor(self.alpha_raw, scale) } else { self.alpha_raw };
        self.alpha = 2.0 * (1.0 - self.beta) * factor;
        self.alpha
    }

    /// Lines 2-5 for one RTT sample. Returns whether the sample raised RTTmax (line 8).
    fn measure(&mut self, w: &Window, raw: Duration, signal: Duration, segs: u64) -> bool {
        let raw = raw.as_nanos() as f64;
        let sig = signal.as_nanos() as f64;
        if !(raw > 0.0 && sig > 0.0) {
            return false;
        }
        // line 2; a configured RTTmin is only lowered from the first backoff on (section II-D).
        let rtt_min = match self.rtt_min {
            Some(m) if self.rtt_min_pinned => m,
            m => m.map_or(raw, |m| m.min(raw)),
        };
        self.rtt_min = Some(rtt_min);
        let w_pkts = (w.cwnd_bytes as f64 / self.mss as f64).max(1.0);
        let new_max = match self.rtt_max {
            None => {
                self.rtt_max = Some(sig);
                false
            }
            Some(prev) => {
                let decayed = prev - self.a * sig * segs as f64 / w_pkts;
                self.rtt_max = Some(sig.max(decayed)); // line 3
                sig > decayed
            }
        };
        self.tau = (sig - rtt_min).max(0.0); // line 4
        self.beta = (self.delta * rtt_min / sig).min(self.beta_max); // line 5 (Eq. 4)
        new_max
    }

    fn backoff(&mut self, w: &mut Window, now: Time, snd_max: u64) {
        let target = (self.beta * self.frac.get(w)).max(2.0 * self.mss as f64);
        self.frac.set(w, target); // line 23
        w.ssthresh_bytes = w.cwnd_bytes; // line 24
        self.t_b = Some(now); // line 25
        self.rtt_min_pinned = false; // the backoff is the probe of eq. (4)
        self.guard_seq = snd_max;
        self.slow_start.reset();
        self.delay_backoffs += 1;
        self.last_backoff_beta = self.beta;
    }
}

impl CongestionControl for DelayAimd {
    fn name(&self) -> &'static str {
        NAME
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        let now = ack.now;
        self.last_now = now;
        if self.t_b.is_none() {
            // Δ and the Δ0 timer count from the connection start, which the seam does not give: use
            // the send time of the first acknowledged segment (this ACK's time minus its RTT sample).
            self.t_b = Some(ack.rtt.map_or(now, |r| Time::from_nanos(now.as_nanos().saturating_sub(r.as_nanos() as u64))));
        }
        let mss = self.mss;
        let mut new_max = false;
        let fresh = match ack.rtt {
            Some(raw) => {
                let signal = if self.delay_signal == DelaySignal::Srtt { ack.srtt.unwrap_or(raw) } else { raw };
                let segs = ack.bytes_acked.div_ceil(mss).max(1);
                new_max = self.measure(w, raw, signal, segs);
                true
            }
            None => false,
        };
        let w_pkts = w.cwnd_bytes as f64 / mss as f64;

        // Lines 6-16: slow start, with the eq. 7 estimate of max_ssthresh.
        let grow = ack.bytes_acked > 0 && !ack.in_recovery && ack.cwnd_limited;
        self.held = false;
        if w.in_slow_start() {
            let span = self.queue_span();
            if self.limited_ss && new_max && span > 0.0 {
                self.max_ssthresh_pkts = (w_pkts / 4.0) * self.tau0_bar / span; // (Eq. 7)
            }
            if grow {
                if !self.limited_ss || w_pkts <= self.max_ssthresh_pkts {
                    self.slow_start.on_ack(w, ack, self.abc_limit); // line 12
                    self.frac.sync(w);
                } else {
                    let counted = inc::counted_bytes(ack, mss, self.abc_limit) as f64;
                    self.frac.add(w, self.max_ssthresh_pkts / (2.0 * w_pkts) * counted); // line 14
                }
            }
        } else if grow {
            // Lines 17-19: increase only when w <= w0 or tau <= adaptive tau0 (Eq. 5, Eq. 6).
            if w_pkts <= self.w0_pkts || self.tau <= self.tau0_adaptive() {
                let alpha = self.alpha_now(now);
                let counted = inc::counted_bytes(ack, mss, self.abc_limit) as f64;
                let cwnd = self.frac.get(w).max(1.0);
                self.frac.add(w, alpha * mss as f64 * counted / cwnd); // line 19
            } else {
                self.held = true; // flat section of Fig. 5
            }
        }
        if !self.held {
            self.alpha_now(now);
        }

        // Lines 22-25: delay backoff.
        if fresh && !ack.in_recovery {
            let w_pkts = w.cwnd_bytes as f64 / mss as f64;
            let threshold = if self.backoff_threshold == BackoffThreshold::Adaptive { self.tau0_adaptive() } else { self.tau0_bar };
            let since = now.saturating_since(self.t_b.unwrap_or(now)).as_nanos() as f64;
            // strictly beyond: the ACK of the last segment sent before the backoff is still stale
            let guard_ok = !self.window_guard || ack.snd_una > self.guard_seq;
            if w_pkts > self.w0_pkts && self.tau >= threshold && since > self.delta0() && guard_ok {
                self.backoff(w, now, ack.snd_max);
            }
        }
    }

    fn ssthresh_after_loss(&mut self, w: &Window, loss: &LossEvent) -> u64 {
        self.slow_start.reset();
        self.t_b = Some(loss.now);
        self.rtt_min_pinned = false;
        if matches!(loss.kind, LossKind::Timeout { backoff } if backoff > 1) && w.ssthresh_bytes != u64::MAX {
            return w.ssthresh_bytes; // RFC 5681: held on later expiries of the same segment
        }
        self.loss_backoffs += 1;
        self.last_backoff_beta = self.beta;
        let cwnd = self.frac.get(w);
        ((self.beta * cwnd).floor() as u64).max(2 * w.mss_bytes) // w = beta*w (Eq. 1, 6)
    }

    fn metrics(&self, out: &mut Vec<Metric>) {
        let ms = |x: Option<f64>| x.map_or(0.0, |v| v * 1e-6);
        let mss = if self.max_ssthresh_pkts.is_finite() { self.max_ssthresh_pkts } else { 0.0 };
        out.extend_from_slice(&[
            ("tau_ms", self.tau * 1e-6),
            ("tau0_ms", self.tau0_adaptive() * 1e-6),
            ("rtt_min_ms", ms(self.rtt_min)),
            ("rtt_max_ms", ms(self.rtt_max)),
            ("beta", self.beta),
            ("alpha", self.alpha),
            ("alpha_raw", self.alpha_raw),
            ("delta_s", self.delta_s(self.last_now)),
            ("delta0_ms", self.delta0() * 1e-6),
            ("max_ssthresh_pkts", mss),
            ("increase_held", if self.held { 1.0 } else { 0.0 }),
            ("delay_backoffs", self.delay_backoffs as f64),
            ("loss_backoffs", self.loss_backoffs as f64),
            ("backoff_beta", self.last_backoff_beta),
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Script;
    use crate::ParamValue;

    const MSS: u64 = 1000;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    fn num(k: &str, v: f64) -> (&str, ParamValue) {
        (k, ParamValue::Number(v))
    }

    fn daimd(kv: &[(&str, ParamValue)]) -> Script<DelayAimd> {
        let init = Script::<DelayAimd>::init(MSS, 10, 2);
        let mut given = ParamMap::new();
        for (k, v) in kv {
            given.insert(k.to_string(), v.clone());
        }
        Script::new(DelayAimd::new(&given, &init).unwrap(), init)
    }

    /// In congestion avoidance at 100 packets; RTTmax decay off so expectations are exact.
    fn ca(kv: &[(&str, ParamValue)]) -> Script<DelayAimd> {
        // The hand computations below use delta = 0.75 (Fig. 4) unless a test overrides it.
        let mut v = vec![num("a", 0.0), num("delta", 0.75)];
        v.extend_from_slice(kv);
        let mut s = daimd(&v);
        s.w.cwnd_bytes = 100_000;
        s.w.ssthresh_bytes = 50_000;
        s
    }

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-9)
    }

    #[test]
    fn beta_is_delta_times_min_over_rtt_capped_at_0_9() {
        let mut s = ca(&[]);
        s.ack_rtt(MSS, ms(100));
        assert!(close(s.metric("beta"), 0.75), "0.75 * 100/100");
        s.ack_rtt(MSS, ms(110)); // tau 10 ms < 20: no backoff
        assert!(close(s.metric("beta"), 0.75 * 100.0 / 110.0));
        let mut s = ca(&[num("delta", 1.0)]);
        s.ack_rtt(MSS, ms(100));
        assert!(close(s.metric("beta"), 0.9), "min(1.0, 0.9)");
        s.ack_rtt(MSS, ms(125));
        assert!(close(s.metric("beta"), 0.8), "100/125");
    }

    #[test]
    fn increase_is_two_one_minus_beta_alpha_over_w_per_ack() {
        let mut s = ca(&[]);
        s.ack_rtt(MSS, ms(100)); // tau 0, beta 0.75, Delta 0: 2*0.25*1 = 0.5 pkt per window
        assert!(close(s.metric("alpha"), 0.5));
        assert_eq!(s.w.cwnd_bytes, 100_005, "0.5 * 1000 * 1000 / 100000");
        s.advance(ms(2998)); // next ACK at t = 3000 ms: Delta = 3 s (t_b = 1 - 100 -> 0), alpha_raw = 22
        s.ack(MSS);
        assert!(close(s.metric("alpha_raw"), 22.0));
        assert!(close(s.metric("alpha"), 11.0));
        assert_eq!(s.w.cwnd_bytes, 100_005 + 109, "11e6 / 100005 = 109.99");
    }

    #[test]
    fn no_increase_while_tau_above_adaptive_tau0() {
        // Delta0 large so no backoff interferes. RTTmin 100, RTTmax 130 -> tau0_ms = 0.5*20 + 0.5*30 = 25 ms.
        let mut s = ca(&[num("delta0_ms", 10_000.0)]);
        s.ack_rtt(MSS, ms(100));
        s.ack_rtt(MSS, ms(130)); // tau 30 > 25: held
        assert!(close(s.metric("tau0_ms"), 25.0));
        let w = s.w.cwnd_bytes;
        s.ack_rtt(MSS, ms(126));
        assert_eq!(s.w.cwnd_bytes, w, "tau 26 > 25: window held flat");
        assert_eq!(s.metric("increase_held"), Some(1.0));
        s.ack_rtt(MSS, ms(124)); // tau 24 <= 25 (though >= tau0-bar): increases
        assert!(s.w.cwnd_bytes > w);
        assert_eq!(s.metric("delay_backoffs"), Some(0.0));
        // w <= w0 always increases
        let mut s = ca(&[num("delta0_ms", 10_000.0), num("w0_pkts", 200.0)]);
        s.ack_rtt(MSS, ms(100));
        s.ack_rtt(MSS, ms(150));
        assert!(s.w.cwnd_bytes > 100_005);
    }

    #[test]
    fn delay_backoff_when_tau_reaches_tau0_bar_after_delta0_then_not_again_within_delta0() {
        // window guard off: only Delta0 limits. Delta0 = max(RTTmax - RTTmin, RTTmin) = 100 ms.
        let mut s = ca(&[("window_guard", ParamValue::Bool(false))]);
        s.ack_rtt(MSS, ms(100)); // t = 1 ms = t_b; tau 0, beta 0.75: +0.5*1e6/100000 = 5 -> 100005
        s.ack_rtt(MSS, ms(120)); // tau 20 >= 20 but now - t_b = 1 ms < Delta0 = max(20, 100) ms
        assert_eq!(s.metric("delay_backoffs"), Some(0.0));
        // that ACK still increased (tau 20 <= tau0_ms = 0.5*20 + 0.5*20): beta 0.625, alpha 0.75,
        // +0.75e6/100005 = 7.4996 -> 100012.4996
        assert_eq!(s.w.cwnd_bytes, 100_012);
        s.advance(ms(100));
        // t = 103 ms: first the increase (+0.75e6/100012.4996 = 7.4991 -> 100019.9987), then,
        // 102 ms > Delta0 since t_b, the backoff: 0.625 * 100019.9987 = 62512.5 -> 62512
        s.ack_rtt(MSS, ms(120));
        assert_eq!(s.metric("delay_backoffs"), Some(1.0));
        assert_eq!(s.w.cwnd_bytes, 62_512);
        assert_eq!(s.w.ssthresh_bytes, s.w.cwnd_bytes, "ssthresh = w");
        let after = s.w.cwnd_bytes;
        s.advance(ms(50));
        s.ack_rtt(MSS, ms(125)); // 51 ms after the backoff: no second backoff
        assert_eq!(s.metric("delay_backoffs"), Some(1.0));
        assert!(s.w.cwnd_bytes >= after);
        s.advance(ms(60));
        s.ack_rtt(MSS, ms(125)); // 112 ms after: Delta0 = max(25, 100) passed -> second backoff
        assert_eq!(s.metric("delay_backoffs"), Some(2.0));
    }

    #[test]
    fn delay_backoff_sets_w_to_beta_w_exactly() {
        let mut s = ca(&[num("delta0_ms", 1.0), num("gamma", 0.0)]);
        s.ack_rtt(MSS, ms(100)); // +5 bytes: 100005
        s.advance(ms(10));
        // tau 25 > tau0_ms = 20 (gamma 0): no increase; tau >= tau0-bar and 12 ms > 1 ms: backoff
        s.ack_rtt(MSS, ms(125));
        // beta = 0.75 * 100/125 = 0.6 -> floor(0.6 * 100005) = 60003
        assert_eq!(s.w.cwnd_bytes, 60_003);
        assert_eq!(s.w.ssthresh_bytes, 60_003);
        assert!(close(s.metric("delta_s"), 0.0), "t_b = now");
    }

    #[test]
    fn window_guard_blocks_a_second_backoff_until_pre_backoff_data_is_acked() {
        let mut s = ca(&[num("delta0_ms", 1.0), num("gamma", 0.0)]);
        s.ack_rtt(MSS, ms(100));
        s.advance(ms(10));
        s.ack_rtt(MSS, ms(125));
        assert_eq!(s.metric("delay_backoffs"), Some(1.0));
        let guard = s.cc.guard_seq;
        s.advance(ms(10));
        while s.snd_una + MSS <= guard {
            s.ack_rtt(MSS, ms(125)); // stale samples from packets queued before the backoff
        }
        if s.snd_una < guard {
            s.ack_rtt(guard - s.snd_una, ms(125)); // the ACK of the last one (snd_una == guard)
        }
        assert_eq!(s.snd_una, guard);
        assert_eq!(s.metric("delay_backoffs"), Some(1.0));
        s.ack_rtt(MSS, ms(125)); // a segment sent after the backoff: allowed again
        assert_eq!(s.metric("delay_backoffs"), Some(2.0));
    }

    #[test]
    fn no_delay_backoff_at_or_below_w0_or_in_recovery() {
        let mut s = ca(&[num("delta0_ms", 1.0), num("w0_pkts", 100.0)]);
        s.w.cwnd_bytes = 90_000;
        s.ack_rtt(MSS, ms(100));
        s.advance(ms(10));
        s.ack_rtt(MSS, ms(150));
        assert_eq!(s.metric("delay_backoffs"), Some(0.0), "w = 90 pkts <= w0");
        let mut s = ca(&[num("delta0_ms", 1.0)]);
        s.ack_rtt(MSS, ms(100));
        s.advance(ms(10));
        s.in_recovery = true;
        s.ack_rtt(MSS, ms(150));
        assert_eq!(s.metric("delay_backoffs"), Some(0.0), "in fast recovery");
    }

    #[test]
    fn adaptive_backoff_threshold_option_uses_eq5_tau0() {
        // RTTmin 100, RTTmax 160: tau0_ms = 10 + 30 = 40 ms.
        let mut s = ca(&[num("delta0_ms", 5.0), ("backoff_threshold", ParamValue::Text("adaptive".into()))]);
        s.ack_rtt(MSS, ms(100));
        s.ack_rtt(MSS, ms(160)); // 2 ms after t_b = 0: too early anyway
        s.advance(ms(10));
        s.ack_rtt(MSS, ms(130)); // tau 30 < 40: no backoff (baseline reading would back off)
        assert_eq!(s.metric("delay_backoffs"), Some(0.0));
        s.ack_rtt(MSS, ms(140)); // tau 40 >= 40
        assert_eq!(s.metric("delay_backoffs"), Some(1.0));
    }

    #[test]
    fn loss_sets_w_to_beta_w_and_restarts_delta() {
        let mut s = ca(&[]);
        s.ack_rtt(MSS, ms(100));
        s.advance(ms(2000));
        s.ack_rtt(MSS, ms(110)); // beta = 0.75 * 100/110
        let w = s.w.cwnd_bytes as f64;
        let ss = s.loss_fast_retransmit(s.w.cwnd_bytes);
        assert!(ss.abs_diff((0.75 * 100.0 / 110.0 * w) as u64) <= 1, "{ss}");
        assert_eq!(s.w.cwnd_bytes, ss);
        assert!(close(s.metric("delta_s"), 0.0));
        assert_eq!(s.metric("loss_backoffs"), Some(1.0));
        // before any RTT sample a loss halves
        let mut s = daimd(&[]);
        s.rtt = None;
        s.ack(MSS);
        s.w.cwnd_bytes = 40_000;
        assert_eq!(s.loss_fast_retransmit(40_000), 20_000);
    }

    #[test]
    fn timeout_uses_beta_once_and_holds_ssthresh_on_repeats() {
        let mut s = ca(&[]);
        s.ack_rtt(MSS, ms(100)); // beta 0.75
        let w = s.w.cwnd_bytes as f64;
        let ss = s.loss_timeout(s.w.cwnd_bytes, 1);
        assert_eq!(ss, (0.75 * w).floor() as u64);
        assert_eq!(s.w.cwnd_bytes, MSS);
        assert_eq!(s.loss_timeout(MSS, 2), ss);
    }

    #[test]
    fn rtt_min_ratchets_down_after_a_delta_backoff() {
        // A standing queue hides the 120 ms path: RTTmin believed 200 ms.
        let mut s = ca(&[num("delta0_ms", 1.0), num("gamma", 0.0), num("rtt_min_init_ms", 200.0)]);
        s.ack_rtt(MSS, ms(200));
        assert!(close(s.metric("rtt_min_ms"), 200.0));
        s.advance(ms(10));
        let w = s.w.cwnd_bytes as f64;
        // tau 22 > tau0_ms = 20: no increase; backoff with beta = 0.75 * 200/222 = 0.6757, a deeper cut
        // than the 200/222 = 0.90 that would just empty the (estimated) queue
        s.ack_rtt(MSS, ms(222));
        assert_eq!(s.metric("delay_backoffs"), Some(1.0));
        assert!((s.w.cwnd_bytes as f64 - 0.75 * 200.0 / 222.0 * w).abs() <= 1.0);
        // the deeper cut drains the standing queue below the old estimate
        s.ack_rtt(MSS, ms(170));
        assert!(close(s.metric("rtt_min_ms"), 170.0));
    }

    #[test]
    fn configured_rtt_min_waits_for_the_first_backoff() {
        // Fig. 3: RTTmin configured to 200 ms on a 120 ms path. Samples below it do not replace it
        // until a backoff has probed the path (section II-D, eq. 4); then line 2 applies.
        let mut s = ca(&[num("delta", 0.75), num("delta0_ms", 1.0), num("gamma", 0.0), num("rtt_min_init_ms", 200.0)]);
        s.ack_rtt(MSS, ms(120));
        assert!(close(s.metric("rtt_min_ms"), 200.0), "still the configured 200 ms");
        s.advance(ms(10));
        s.ack_rtt(MSS, ms(230)); // tau 30 >= 20: backoff, beta = 0.75 * 200 / 230
        assert_eq!(s.metric("delay_backoffs"), Some(1.0));
        assert!(close(s.metric("backoff_beta"), 0.75 * 200.0 / 230.0));
        s.ack_rtt(MSS, ms(150)); // the drain reveals 150 ms
        assert!(close(s.metric("rtt_min_ms"), 150.0));
        s.ack_rtt(MSS, ms(120));
        assert!(close(s.metric("rtt_min_ms"), 120.0));
        // Without a configured value the first sample sets RTTmin (line 2).
        let mut s = ca(&[]);
        s.ack_rtt(MSS, ms(120));
        assert!(close(s.metric("rtt_min_ms"), 120.0));
    }

    #[test]
    fn rtt_max_decays_at_rate_a() {
        // a = 0.001: each 1-segment ACK at RTT 100 ms and w = 100 pkts lowers RTTmax by 1 us.
        let mut s = daimd(&[num("delta0_ms", 1e6)]);
        s.w.cwnd_bytes = 100_000;
        s.w.ssthresh_bytes = 50_000;
        s.cwnd_limited = false; // keep w at 100 pkts
        s.ack_rtt(MSS, ms(100));
        s.ack_rtt(MSS, ms(150));
        for _ in 0..1000 {
            s.ack_rtt(MSS, ms(100));
        }
        let m = s.metric("rtt_max_ms").unwrap();
        assert!((m - 149.0).abs() < 1e-6, "{m}");
        // a 2-segment ACK decays twice as much
        s.ack_rtt(2 * MSS, ms(100));
        assert!((s.metric("rtt_max_ms").unwrap() - 148.998).abs() < 1e-6);
    }

    #[test]
    fn limited_slow_start_switches_to_max_ssthresh_over_2w_above_max_ssthresh() {
        let mut s = daimd(&[num("a", 0.0)]);
        s.w.cwnd_bytes = 100_000; // slow start (ssthresh infinite)
        s.ack_rtt(MSS, ms(100)); // max_ssthresh not yet known: +1 MSS
        assert_eq!(s.w.cwnd_bytes, 101_000);
        // new RTTmax 110: max_ssthresh = (101/4) * 20/10 = 50.5 pkts < w = 101
        s.ack_rtt(MSS, ms(110));
        assert!(close(s.metric("max_ssthresh_pkts"), 50.5));
        // increase max_ssthresh/(2w) pkts = 50.5/202 * 1000 = 250 bytes
        assert_eq!(s.w.cwnd_bytes, 101_250);
        s.ack_rtt(MSS, ms(105)); // not a new max: estimate kept, +50.5/(2*101.25)*1000 = 249.38
        assert_eq!(s.w.cwnd_bytes, 101_499);
        // below max_ssthresh, Reno slow start (ABC L = 2)
        let mut s = daimd(&[num("a", 0.0)]);
        s.w.cwnd_bytes = 20_000;
        s.ack_rtt(MSS, ms(100));
        s.ack_rtt(2 * MSS, ms(101)); // max_ssthresh = (21/4)*20/1 = 105 pkts > 21
        assert!(close(s.metric("max_ssthresh_pkts"), 105.0));
        assert_eq!(s.w.cwnd_bytes, 23_000);
        // option off: plain slow start
        let mut s = daimd(&[num("a", 0.0), ("limited_slow_start", ParamValue::Bool(false))]);
        s.w.cwnd_bytes = 100_000;
        s.ack_rtt(MSS, ms(100));
        s.ack_rtt(MSS, ms(110));
        assert_eq!(s.w.cwnd_bytes, 102_000);
    }

    #[test]
    fn slow_start_exits_on_delay_backoff() {
        let mut s = daimd(&[num("a", 0.0), num("delta", 0.75)]);
        s.w.cwnd_bytes = 50_000;
        s.ack_rtt(MSS, ms(100));
        s.advance(ms(150)); // past Delta0 = 100 ms
        s.ack_rtt(MSS, ms(120)); // tau 20: backoff, beta 0.625
        assert_eq!(s.metric("delay_backoffs"), Some(1.0));
        assert_eq!(s.w.ssthresh_bytes, s.w.cwnd_bytes);
        assert!(s.w.cwnd_bytes < 40_000);
    }

    #[test]
    fn srtt_signal_option_uses_the_smoothed_rtt() {
        let init = Script::<DelayAimd>::init(MSS, 10, 2);
        let mut given = ParamMap::new();
        given.insert("delay_signal".into(), ParamValue::Text("srtt".into()));
        let mut cc = DelayAimd::new(&given, &init).unwrap();
        let mut w = Window::new(100_000, MSS);
        w.ssthresh_bytes = 50_000;
        let ack = AckSample {
            now: Time::from_millis(1),
            bytes_acked: MSS,
            rtt: Some(ms(100)),
            srtt: Some(ms(110)),
            cwnd_limited: true,
            ..AckSample::default()
        };
        cc.on_ack(&mut w, &ack);
        let mut all = Vec::new();
        cc.metrics(&mut all);
        let m = |n: &str| all.iter().find(|(k, _)| *k == n).unwrap().1;
        assert!((m("rtt_min_ms") - 100.0).abs() < 1e-9, "RTTmin from the raw sample");
        assert!((m("tau_ms") - 10.0).abs() < 1e-9, "tau = srtt - RTTmin");
    }

    #[test]
    fn bad_parameters_are_rejected() {
        let init = Script::<DelayAimd>::init(MSS, 10, 2);
        for (k, v) in [("delta", 0.0), ("delta", 1.5), ("gamma", 1.5), ("tau0_ms", 0.0), ("a", -1.0)] {
            let mut given = ParamMap::new();
            given.insert(k.into(), ParamValue::Number(v));
            assert!(DelayAimd::new(&given, &init).is_err(), "{k} = {v}");
        }
    }

    mod prop {
        use super::*;
        use crate::testkit::Event;
        use proptest::prelude::*;

        fn ev() -> impl Strategy<Value = Event> {
            crate::testkit::strategies::forced_events(MSS, 50_000..200_000, 1)
        }

        fn run(evs: &[Event], guard: bool, srtt: bool) -> Vec<u64> {
            let mut s = daimd(&[
                ("window_guard", ParamValue::Bool(guard)),
                ("delay_signal", ParamValue::Text(if srtt { "srtt" } else { "rtt" }.into())),
            ]);
            s.trajectory(evs, |s, _| s.w.cwnd_bytes)
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]
            #[test]
            fn random_event_sequences_keep_invariants_and_are_deterministic(
                evs in proptest::collection::vec(ev(), 1..400), guard in any::<bool>(), srtt in any::<bool>()
            ) {
                let a = run(&evs, guard, srtt);
                let b = run(&evs, guard, srtt);
                prop_assert_eq!(a, b);
            }
        }
    }
}
