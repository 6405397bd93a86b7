//! # CHD — CAIA-Hamilton delay-based congestion control
//!
//! Hayes & Armitage, "Improved coexistence and loss tolerance for delay based TCP congestion
//! control", IEEE LCN 2010, section IV: eq. (2) (once-per-RTT delay backoff on the round's maximum
//! queueing delay h_r), eq. (3) (shadow window), eq. (4) (loss response), with the backoff
//! probability g of Fig. 1 (Budzisz et al., see [`super::delay_probability`]). Reference code: FreeBSD
//! `sys/netinet/cc/cc_chd.c` (FreeBSD 9, the code the paper's experiments ran), with the h_ertt
//! marked-packet round. Bibliography keys [Hayes10], [FreeBSD-cc] (`docs/bibliography.md`).
//!
//! BPF twin (the Linux testbed, `docs/kernel.md`): `python/ccsim/kernel/bpf/chd.bpf.c`.
//!
//! Rules implemented (windows in bytes, FreeBSD order of operations):
//! * **Round (eq. 2).** At the end of each marked-packet round (`on_round`; the decision is taken in
//!   the `on_ack` of the same ACK, where FreeBSD's `chd_ack_received` takes it):
//!   h_r = max RTT of the round − RTTmin. Unless in loss recovery or in the congestion recovery that
//!   follows a delay backoff: if h_r <= q_min, `loss_compete = 0` and no draw; otherwise one draw
//!   X ~ U[0, 1) against p = g(h_r) with p_max per round; h_r < q_th or h_r == q_th clears
//!   `loss_compete`; h_r > q_th with X < p sets it (when `loss_fair`). Backoff iff X < p.
//! * **Delay backoff (eq. 2, eq. 3).** Shadow window first (eq. 3): `s = max(w, s)` if
//!   `loss_compete` or h_r > h_b (the h_r of the previous backoff), else `s = 0`; then h_b = h_r.
//!   Then `ssthresh = cwnd = max(ceil(w/MSS/2), 2)·MSS` (FreeBSD `chd_window_decrease`) and
//!   congestion recovery until `snd_max` at the backoff is acknowledged: no delay decision meanwhile,
//!   and losses in it are tolerated. No increase on the backoff ACK.
//! * **Increase (eq. 2 second case).** NewReno slow start / congestion avoidance through
//!   [`RenoIncrease`] (ABC as the scenario says); without ABC, FreeBSD's CHD adds one MSS per round in
//!   congestion avoidance, done here too. The shadow window, while non-zero, gets the same increment.
//! * **Loss (eq. 4), fast retransmit.** q_loss = max(latest RTT sample, max RTT of the current
//!   partial round) − RTTmin. If not in congestion recovery and q_loss > q_th: `w' = max(w, s)` when
//!   `loss_compete`, else `w`; ssthresh = ceil half of w' (>= 2 MSS). Otherwise (region A, or in the
//!   congestion recovery): ssthresh = w, i.e. the window is kept and the machine only retransmits.
//!   In both cases a non-zero shadow window halves: `s = max(floor(s/MSS/2), 2)·MSS`.
//! * **Timeout, end of recovery:** NewReno (FreeBSD wrapper: ssthresh = max(floor(w/MSS/2), 2)·MSS
//!   on every expiry, leaves congestion recovery; the shadow window is untouched); end of recovery is
//!   NewReno post-recovery cwnd = min(ssthresh, max(flight, MSS) + MSS).
//!
//! Parameters (defaults = Hayes & Armitage section V): `p_max` 0.25 per round, `q_min_ms` 5,
//! `q_th_ms` 30, `use_max` true, `loss_fair` true, `shadow_init` cwnd, `loss_delay` partial_round,
//! `restore_shadow` loss_compete, `tolerated_loss_exit` newreno, `rtt_tick_ms` 0.
//!
//! Differences from the paper / from the reference code, and why:
//! * **Shadow window start:** the paper initialises s "at the first hint of competing"; the code (what
//!   the experiments ran) sets s = w at connection start. Default = code; `shadow_init = zero` = paper.
//! * **Loss test (eq. 4):** the paper tests "the last recorded h_r"; the code tests the current,
//!   unfinished round plus the latest sample. Default = code; `loss_delay = last_round` = paper.
//! * **Restore from s:** the paper restores whenever h_r > q_th; the code only when `loss_compete`
//!   (a region-B delay backoff since the last round with h_r <= q_th). Default = code;
//!   `restore_shadow = region_b` = paper.
//! * **Region-A loss:** paper "w unchanged"; code ssthresh = w and NewReno post-recovery
//!   min(ssthresh, flight + MSS), which is w up to the flight at the full ACK. Default = code;
//!   `tolerated_loss_exit = keep_cwnd` sets cwnd = ssthresh (= w) at the end of a tolerated recovery.
//! * **eq. 3 at h_r == q_th:** the code clears `loss_compete` there and keeps s only if h_r > h_b; the
//!   paper gives s = 0. Code kept (the difference is a single tick value; no option).
//! * **Decrease rounding:** paper w/2; code ceil(w/2) in whole segments, >= 2 MSS, of min(rwnd, w). The
//!   seam has no receive window, so min(rwnd, w) = w.
//! * **No growth during loss recovery:** the code's increase has no recovery test (the growth is
//!   discarded by post-recovery, but the shadow window keeps it); the paper says CHD "does not
//!   increase its window during the RTT that a lost packet is recovered". Here neither w nor s grows
//!   while the machine reports loss recovery, and growth also requires a cwnd-limited sender
//!   (`RenoIncrease`); the code does not test cwnd-limitation. Growth does continue during the
//!   congestion recovery after a delay backoff, as in the code.
//! * **Congestion recovery** ends, as FreeBSD `tcp_input`, after processing the first ACK with
//!   snd_una >= snd_max-at-backoff (a round ending on that ACK is still not decided). `snd_max` comes
//!   from the `AckSample` of the backoff ACK.
//! * **After an RTO** FreeBSD leaves recovery at once and could take delay decisions in the following
//!   slow start; ccsim's `in_recovery` stays true until `recover` is acked, so CHD takes none then.
//! * **p_max** is a real per-round probability (paper 0.25; FreeBSD integer percent, sysctl default
//!   50 %, not the paper's value); **q_th** 30 ms (paper runs; FreeBSD default 20 ticks). `rtt_tick_ms = 1` gives
//!   FreeBSD's 1 ms ticks with +1 tick per sample. Per-flow seeded random stream, not the kernel's.

use std::time::Duration;

use super::delay_probability::{millis_f64, quantise_to_ticks, TwoRegion};
use crate::params::{ParamReader, ParamSpec};
use crate::reno::RenoIncrease;
use crate::{AckSample, CcError, CcInit, CongestionControl, LossEvent, LossKind, Metric, ParamMap, RecoveryExit, Rng, RoundSample, Window};

pub const NAME: &str = "chd";

crate::param_choice! {
    /// Shadow window at connection start: cwnd (FreeBSD `chd_conn_init`) or 0 (paper).
    pub enum ShadowInit { Cwnd = "cwnd", Zero = "zero" }
}
crate::param_choice! {
    /// Delay tested at a loss: the current partial round (code) or the last completed h_r (eq. (4)).
    pub enum LossDelay { PartialRound = "partial_round", LastRound = "last_round" }
}
crate::param_choice! {
    /// Shadow restore at a region-B loss: only after a region-B backoff (code) or always (eq. (4)).
    pub enum RestoreShadow { LossCompete = "loss_compete", RegionB = "region_b" }
}
crate::param_choice! {
    /// cwnd when a tolerated loss's recovery ends: NewReno post-recovery (code) or kept (paper).
    pub enum ToleratedLossExit { NewReno = "newreno", KeepCwnd = "keep_cwnd" }
}

pub fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::positive(
            "p_max",
            "probability",
            0.25,
            1.0,
            "per-round backoff probability at h_r = q_th (Hayes & Armitage 2010 sec. V: 0.25; FreeBSD sysctl 0.50)",
        ),
        ParamSpec::number("q_min_ms", "ms", 5.0, 0.0, 10_000.0, "round queueing delay at or below which CHD never backs off (paper: 5 ms)"),
        ParamSpec::positive(
            "q_th_ms",
            "ms",
            30.0,
            10_000.0,
            "region A/B boundary and loss-tolerance threshold (paper: 30 ms; FreeBSD sysctl 20 ticks)",
        ),
        ParamSpec::boolean(
            "use_max",
            true,
            "h_r is the round's maximum RTT (FreeBSD use_max = 1, paper eq. 2); false: the round-ending sample",
        ),
        ParamSpec::boolean("loss_fair", true, "shadow-window restore enabled by region-B backoffs (FreeBSD loss_fair)"),
        ParamSpec::choice(
            "shadow_init",
            ShadowInit::Cwnd,
            "shadow window at connection start: cwnd (FreeBSD conn_init) or 0 until a backoff meets eq. 3 (paper)",
        ),
        ParamSpec::choice(
            "loss_delay",
            LossDelay::PartialRound,
            "queueing delay tested at a loss: current partial round and latest sample (code) or last completed h_r (paper eq. 4)",
        ),
        ParamSpec::choice(
            "restore_shadow",
            RestoreShadow::LossCompete,
            "restore w = max(w, s) at a region-B loss only after a region-B backoff (code) or always (paper eq. 4)",
        ),
        ParamSpec::choice(
            "tolerated_loss_exit",
            ToleratedLossExit::NewReno,
            "cwnd after a tolerated loss's recovery: NewReno min(ssthresh, flight + MSS) (code) or ssthresh = w (paper)",
        ),
        ParamSpec::number(
            "rtt_tick_ms",
            "ms",
            0.0,
            0.0,
            100.0,
            "quantise RTTs to floor(rtt/tick)+1 ticks as FreeBSD h_ertt (1 ms); 0 = off",
        ),
    ]
}

/// FreeBSD `chd_window_decrease`: ceil(w/2) in whole segments, at least 2 MSS.
pub fn ceil_half_segments(bytes: u64, mss: u64) -> u64 {
    let mss = mss.max(1);
    let win = bytes / mss;
    let win = win.saturating_sub((win / 2).max(1));
    win.max(2).saturating_mul(mss)
}

/// FreeBSD shadow-window and NewReno halving: floor(w/2) in whole segments, at least 2 MSS.
fn floor_half_segments(bytes: u64, mss: u64) -> u64 {
    let mss = mss.max(1);
    (bytes / mss / 2).max(2).saturating_mul(mss)
}

/// A round that ended on the ACK about to be processed (h_ertt's NEW_MEASUREMENT flag).
#[derive(Clone, Copy, Debug)]
struct PendingRound {
    rtt_used: Option<Duration>,
    max_in_round: Option<Duration>,
}

#[derive(Clone, Debug)]
pub struct Chd {
    g: TwoRegion,
    use_max: bool,
    loss_fair: bool,
    shadow_init: ShadowInit,
    loss_delay: LossDelay,
    restore_shadow: RestoreShadow,
    tolerated_loss_exit: ToleratedLossExit,
    tick: Duration,
    mss: u64,
    abc_limit: u32,
    increase: RenoIncrease,
    rng: Rng,
    // FreeBSD `struct chd`.
    /// Shadow window s (bytes), 0 = off.
    shadow: u64,
    loss_compete: bool,
    /// h_b: the round delay of the previous delay backoff.
    prev_backoff_q: Duration,
    /// `maxrtt_in_rtt`: max RTT since the last round ended (the current, partial round).
    partial_max: Option<Duration>,
    // h_ertt-like view.
    last_rtt: Option<Duration>,
    min_rtt: Option<Duration>,
    max_rtt: Option<Duration>,
    pending_round: Option<PendingRound>,
    /// h_r of the last completed round (for `loss_delay = last_round` and tracing).
    last_h_r: Option<Duration>,
    // Recovery state.
    cong_recovery: bool,
    cong_recover_seq: u64,
    loss_recovery: bool,
    tolerated_in_progress: bool,
    // Tracing.
    last_q_max: Duration,
    last_p: f64,
    draws: u64,
    delay_backoffs: u64,
    loss_backoffs: u64,
    tolerated_losses: u64,
}

impl Chd {
    pub fn new(given: &ParamMap, init: &CcInit) -> Result<Chd, CcError> {
        let specs = params();
        let p = ParamReader::new(NAME, &specs, given)?;
        let (q_min, q_th) = super::delay_probability::read_thresholds(&p)?;
        let shadow_init: ShadowInit = p.choice("shadow_init");
        Ok(Chd {
            g: TwoRegion { q_min, q_th, p_max: p.f64("p_max") },
            use_max: p.bool("use_max"),
            loss_fair: p.bool("loss_fair"),
            shadow_init,
            loss_delay: p.choice("loss_delay"),
            restore_shadow: p.choice("restore_shadow"),
            tolerated_loss_exit: p.choice("tolerated_loss_exit"),
            tick: p.millis("rtt_tick_ms"),
            mss: init.mss_bytes.max(1),
            abc_limit: init.abc_limit_segments,
            increase: RenoIncrease::default(),
            rng: init.rng.clone(),
            shadow: if shadow_init == ShadowInit::Cwnd { init.initial_cwnd_bytes } else { 0 },
            loss_compete: false,
            prev_backoff_q: Duration::ZERO,
            partial_max: None,
            last_rtt: None,
            min_rtt: None,
            max_rtt: None,
            pending_round: None,
            last_h_r: None,
            cong_recovery: false,
            cong_recover_seq: 0,
            loss_recovery: false,
            tolerated_in_progress: false,
            last_q_max: Duration::ZERO,
            last_p: 0.0,
            draws: 0,
            delay_backoffs: 0,
            loss_backoffs: 0,
            tolerated_losses: 0,
        })
    }

    fn note_min(&mut self, r: Option<Duration>) {
        if let Some(r) = r {
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        }
    }

    fn note_max(&mut self, r: Option<Duration>) {
        if let Some(r) = r {
            self.max_rtt = Some(self.max_rtt.map_or(r, |m| m.max(r)));
        }
    }

    fn delay(&self, rtt: Duration) -> Option<Duration> {
        let min = self.min_rtt?;
        Some(quantise_to_ticks(rtt, self.tick).saturating_sub(quantise_to_ticks(min, self.tick)))
    }

    /// FreeBSD `should_backoff` for a round delay q > q_min: one draw, `loss_compete` bookkeeping.
    fn should_backoff(&mut self, q: Duration) -> bool {
        let q_max = self.max_rtt.and_then(|m| self.delay(m)).unwrap_or(Duration::ZERO).max(q);
        self.last_q_max = q_max;
        let p = self.g.probability(q, q_max);
        self.last_p = p;
        self.draws += 1;
        let x = self.rng.uniform();
        if q <= self.g.q_th {
            // Region A and q == q_th: "not competing with loss-based flows".
            self.loss_compete = false;
        } else if self.loss_fair && x < p {
            // Region B backoff: competing with loss-based flows.
            self.loss_compete = true;
        }
        x < p
    }

    /// Delay backoff: eq. (3) then eq. (2) first case with FreeBSD rounding.
    fn delay_backoff(&mut self, w: &mut Window, q: Duration, ack: &AckSample) {
        // (Eq. 3)
        if self.loss_compete || q > self.prev_backoff_q {
            self.shadow = self.shadow.max(w.cwnd_bytes);
        } else {
            self.shadow = 0;
        }
        self.prev_backoff_q = q;
        // (Eq. 2): w <- w/2, as ceil(w/2) whole segments >= 2 MSS, ssthresh = w.
        let new = ceil_half_segments(w.cwnd_bytes, w.mss_bytes);
        w.ssthresh_bytes = new;
        w.set_cwnd(new);
        self.increase.reset();
        self.cong_recovery = true;
        self.cong_recover_seq = ack.snd_max;
        self.delay_backoffs += 1;
    }

    /// NewReno increase, mirrored on the shadow window (FreeBSD `chd_window_increase`).
    fn grow(&mut self, w: &mut Window, ack: &AckSample, new_measurement: bool) {
        let added = if w.in_slow_start() || self.abc_limit > 0 {
            self.increase.on_ack(w, ack, self.abc_limit)
        } else if new_measurement && ack.bytes_acked > 0 && !ack.in_recovery && ack.cwnd_limited {
            // Without ABC, FreeBSD CHD adds one MSS per new per-RTT measurement.
            let before = w.cwnd_bytes;
            w.cwnd_bytes = w.cwnd_bytes.saturating_add(w.mss_bytes);
            w.cwnd_bytes - before
        } else {
            0
        };
        if self.shadow > 0 {
            self.shadow = self.shadow.saturating_add(added);
        }
    }

    /// Queueing delay that decides whether a loss is congestion (eq. 4).
    fn loss_delay(&self) -> Option<Duration> {
        if self.loss_delay == LossDelay::LastRound {
            return self.last_h_r;
        }
        let pending = self.pending_round.and_then(|r| r.max_in_round);
        let r = [self.last_rtt, self.partial_max, pending].into_iter().flatten().max()?;
        self.delay(r)
    }
}

impl CongestionControl for Chd {
    fn name(&self) -> &'static str {
        NAME
    }

    fn init(&mut self, w: &mut Window) {
        self.shadow = if self.shadow_init == ShadowInit::Cwnd { w.cwnd_bytes } else { 0 };
    }

    fn on_round(&mut self, _w: &mut Window, round: &RoundSample) {
        self.note_min(round.min_rtt);
        self.note_min(round.min_rtt_in_round);
        self.note_max(round.max_rtt_in_round);
        self.note_max(round.rtt);
        let max_in_round = [round.max_rtt_in_round, self.partial_max, round.rtt].into_iter().flatten().max();
        let rtt_used = if self.use_max { max_in_round } else { round.rtt.or(self.last_rtt) };
        // h_r = max_r(q_i) (Sec. IV-A).
        self.last_h_r = rtt_used.and_then(|r| self.delay(r));
        self.pending_round = Some(PendingRound { rtt_used, max_in_round });
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        if let Some(r) = ack.rtt {
            self.last_rtt = Some(r);
        }
        // maxrtt_in_rtt = max(maxrtt_in_rtt, latest sample), every ACK incl. dupacks.
        if let Some(r) = self.last_rtt {
            self.partial_max = Some(self.partial_max.map_or(r, |m| m.max(r)));
        }
        self.note_min(ack.min_rtt);
        self.note_min(ack.rtt);
        self.note_max(ack.max_rtt);
        self.note_max(ack.rtt);
        // Loss recovery as the machine reports it; a loss signalled just before this ACK (FreeBSD:
        // "congestion signal before ack") still counts for this ACK's decision.
        let was_in_loss_recovery = std::mem::replace(&mut self.loss_recovery, ack.in_recovery);

        let mut backoff_q = None;
        let new_measurement = self.pending_round.is_some();
        if let Some(round) = self.pending_round.take() {
            // The round is consumed: a new partial round starts (maxrtt_in_rtt = 0).
            self.partial_max = None;
            let recovering = was_in_loss_recovery || ack.in_recovery || self.cong_recovery;
            if let (Some(rtt), false) = (round.rtt_used, recovering) {
                if let Some(q) = self.delay(rtt) {
                    // (Eq. 2): one decision per round on h_r.
                    if q > self.g.q_min {
                        if self.should_backoff(q) {
                            backoff_q = Some(q);
                        }
                    } else {
                        self.loss_compete = false;
                        self.last_p = 0.0;
                    }
                }
            }
        }

        if let Some(q) = backoff_q {
            self.delay_backoff(w, q, ack);
        } else if ack.bytes_acked > 0 && !ack.is_dupack {
            // (Eq. 2) second case: additive increase.
            self.grow(w, ack, new_measurement);
        }

        // tcp_input leaves (congestion) recovery after the CC hook, once snd_recover is acked.
        if self.cong_recovery && ack.snd_una >= self.cong_recover_seq {
            self.cong_recovery = false;
        }
    }

    fn ssthresh_after_loss(&mut self, w: &Window, loss: &LossEvent) -> u64 {
        self.increase.reset();
        self.loss_recovery = true;
        let mss = w.mss_bytes;
        match loss.kind {
            LossKind::Timeout { .. } => {
                // NewReno RTO (FreeBSD cc_cong_signal CC_RTO): leaves every recovery, s untouched.
                self.cong_recovery = false;
                self.tolerated_in_progress = false;
                self.loss_backoffs += 1;
                floor_half_segments(w.cwnd_bytes, mss)
            }
            LossKind::FastRetransmit => {
                self.note_min(loss.min_rtt);
                let congestion = !self.cong_recovery && self.loss_delay().is_some_and(|q| q > self.g.q_th);
                let ssthresh = if congestion {
                    // (Eq. 4) first case: max(w, s)/2 when competing with loss-based flows.
                    let restore = self.loss_compete || self.restore_shadow == RestoreShadow::RegionB;
                    let base = if restore { w.cwnd_bytes.max(self.shadow) } else { w.cwnd_bytes };
                    self.loss_backoffs += 1;
                    self.tolerated_in_progress = false;
                    ceil_half_segments(base, mss)
                } else {
                    // (Eq. 4) second case: non-congestion loss (or already recovering): w unchanged.
                    self.tolerated_losses += 1;
                    self.tolerated_in_progress = true;
                    w.cwnd_bytes
                };
                if self.shadow > 0 {
                    self.shadow = floor_half_segments(self.shadow, mss);
                }
                ssthresh
            }
        }
    }

    fn on_recovery_exit(&mut self, w: &mut Window, exit: &RecoveryExit) {
        self.loss_recovery = false;
        let tolerated = std::mem::take(&mut self.tolerated_in_progress);
        if exit.after_timeout {
            return;
        }
        if tolerated && self.tolerated_loss_exit == ToleratedLossExit::KeepCwnd {
            w.set_cwnd(w.ssthresh_bytes);
        } else {
            // NewReno post-recovery (FreeBSD newreno_post_recovery, RFC 6582 option 1).
            let flight = exit.bytes_in_flight.max(w.mss_bytes);
            w.set_cwnd(w.ssthresh_bytes.min(flight.saturating_add(w.mss_bytes)));
        }
    }

    fn metrics(&self, out: &mut Vec<Metric>) {
        out.extend_from_slice(&[
            ("shadow_bytes", self.shadow as f64),
            ("shadow_pkts", self.shadow as f64 / self.mss as f64),
            ("loss_compete", if self.loss_compete { 1.0 } else { 0.0 }),
            ("h_r_ms", self.last_h_r.map_or(0.0, millis_f64)),
            ("prev_backoff_q_ms", millis_f64(self.prev_backoff_q)),
            ("q_max_ms", millis_f64(self.last_q_max)),
            ("p", self.last_p),
            ("cong_recovery", if self.cong_recovery { 1.0 } else { 0.0 }),
            ("draws", self.draws as f64),
            ("delay_backoffs", self.delay_backoffs as f64),
            ("loss_backoffs", self.loss_backoffs as f64),
            ("tolerated_losses", self.tolerated_losses as f64),
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Script;
    use crate::ParamValue;

    const MSS: u64 = 1000;

    fn ms(x: f64) -> Duration {
        Duration::from_nanos((x * 1e6).round() as u64)
    }

    fn num(x: f64) -> ParamValue {
        ParamValue::Number(x)
    }

    fn text(x: &str) -> ParamValue {
        ParamValue::Text(x.into())
    }

    fn chd_full(pairs: &[(&str, ParamValue)], seed: u64, iw: u64, abc: u32) -> Script<Chd> {
        let mut init = Script::<Chd>::init(MSS, iw, abc);
        init.rng = Rng::new(seed, 9);
        let mut given = ParamMap::new();
        for (k, v) in pairs {
            given.insert(k.to_string(), v.clone());
        }
        Script::new(Chd::new(&given, &init).unwrap(), init)
    }

    fn chd(pairs: &[(&str, ParamValue)]) -> Script<Chd> {
        chd_full(pairs, 1, 3, 2)
    }

    /// RTTmin = 40 ms established, then congestion avoidance at `pkts` segments.
    fn base(s: &mut Script<Chd>, pkts: u64) {
        s.ack_rtt(MSS, ms(40.0));
        s.w.cwnd_bytes = pkts * MSS;
        s.w.ssthresh_bytes = 2 * MSS;
    }

    /// A round whose maximum (and ending sample) is `rtt` ends on the next ACK.
    fn decide(s: &mut Script<Chd>, rtt: Duration) {
        s.rtt = Some(rtt);
        s.round(rtt);
        s.ack(MSS);
    }

    /// RTTmin = 40 ms, then one round with a 1040 ms sample: lifetime q_max = 1000 ms. That round is
    /// decided at h_r = q_max, where g = 0 (one draw, no backoff); the next round starts afresh.
    fn spike_q_max(s: &mut Script<Chd>) {
        s.ack_rtt(MSS, ms(40.0));
        decide(s, ms(1040.0));
        assert_eq!((m(s, "draws"), m(s, "delay_backoffs")), (1.0, 0.0));
    }

    /// ACKs one MSS at a time until the congestion recovery after a delay backoff is over.
    fn drain(s: &mut Script<Chd>) {
        for _ in 0..10_000 {
            if s.metric("cong_recovery") == Some(0.0) {
                return;
            }
            s.ack(MSS);
        }
        panic!("congestion recovery never ended");
    }

    fn m(s: &Script<Chd>, name: &str) -> f64 {
        s.metric(name).unwrap()
    }

    #[test]
    fn defaults_are_the_papers_experiment_values() {
        let s = chd(&[]);
        assert_eq!(s.cc.g.p_max, 0.25);
        assert_eq!(s.cc.g.q_min, ms(5.0));
        assert_eq!(s.cc.g.q_th, ms(30.0));
        assert!(s.cc.use_max && s.cc.loss_fair && s.cc.shadow_init == ShadowInit::Cwnd);
        assert_eq!(s.cc.loss_delay, LossDelay::PartialRound);
        assert_eq!(s.cc.restore_shadow, RestoreShadow::LossCompete);
        assert_eq!(s.cc.tolerated_loss_exit, ToleratedLossExit::NewReno);
        assert_eq!(m(&s, "shadow_bytes"), 3000.0, "shadow window starts at the initial cwnd (conn_init)");
        let z = chd(&[("shadow_init", text("zero"))]);
        assert_eq!(m(&z, "shadow_bytes"), 0.0);
    }

    #[test]
    fn rejects_q_min_not_below_q_th() {
        let init = Script::<Chd>::init(MSS, 3, 2);
        let mut given = ParamMap::new();
        given.insert("q_th_ms".into(), num(5.0));
        let e = Chd::new(&given, &init).err().unwrap().to_string();
        assert!(e.contains("q_min_ms"), "{e}");
        let mut given = ParamMap::new();
        given.insert("loss_delay".into(), text("whenever"));
        assert!(Chd::new(&given, &init).is_err());
    }

    #[test]
    fn region_a_loss_leaves_cwnd_unchanged() {
        let mut s = chd(&[]);
        base(&mut s, 20);
        s.ack_rtt(MSS, ms(50.0)); // q = 10 ms <= q_th (CA byte count 1000 < 20000: no growth)
        assert_eq!(s.w.cwnd_bytes, 20 * MSS);
        assert_eq!(s.loss_fast_retransmit(20 * MSS), 20 * MSS, "ssthresh = w");
        assert_eq!(s.w.cwnd_bytes, 20 * MSS);
        for _ in 0..5 {
            s.ack_rtt(MSS, ms(50.0));
        }
        assert_eq!(s.w.cwnd_bytes, 20 * MSS, "no growth while the loss is recovered");
        s.exit_recovery(19 * MSS, false); // min(20, 19 + 1) MSS
        assert_eq!(s.w.cwnd_bytes, 20 * MSS);
        assert_eq!(m(&s, "tolerated_losses"), 1.0);
        assert_eq!(m(&s, "loss_backoffs"), 0.0);
    }

    #[test]
    fn region_b_loss_after_region_b_backoff_restores_half_of_shadow() {
        let mut s = chd(&[("p_max", num(1.0))]);
        spike_q_max(&mut s);
        s.w.cwnd_bytes = 40 * MSS;
        s.w.ssthresh_bytes = 20 * MSS;
        s.cc.shadow = 10 * MSS;
        // h_r = 31 ms > q_th: p = (1000 - 31) / (1000 - 30) = 0.99897; this seed's draw is below it.
        decide(&mut s, ms(71.0));
        assert_eq!(m(&s, "delay_backoffs"), 1.0);
        assert_eq!(m(&s, "loss_compete"), 1.0, "region-B backoff");
        assert_eq!(m(&s, "shadow_bytes"), 40_000.0, "eq. 3: s = max(w, s)");
        assert_eq!(s.w.cwnd_bytes, 20 * MSS, "ceil(40/2)");
        assert_eq!(s.w.ssthresh_bytes, 20 * MSS);
        s.cwnd_limited = false; // keep w and s still while the congestion recovery drains
        s.rtt = Some(ms(80.0));
        drain(&mut s);
        assert_eq!(s.w.cwnd_bytes, 20 * MSS);
        // Partial-round delay 40 ms > q_th, loss_compete: w' = max(20, 40) = 40 MSS -> 20 MSS
        // (w/2 would give 10 MSS).
        assert_eq!(s.loss_fast_retransmit(20 * MSS), 20 * MSS);
        assert_eq!(m(&s, "shadow_bytes"), 20_000.0, "s halves too");
        assert_eq!(m(&s, "loss_backoffs"), 1.0);
    }

    #[test]
    fn region_b_loss_without_loss_compete_halves_w_only() {
        let mut s = chd(&[]);
        base(&mut s, 20);
        s.cc.shadow = 50 * MSS;
        s.ack_rtt(MSS, ms(80.0)); // q of the partial round = 40 ms > q_th
        assert_eq!(s.loss_fast_retransmit(20 * MSS), 10 * MSS, "ceil(20/2), no restore");
        assert_eq!(m(&s, "shadow_bytes"), 25_000.0);
        // The paper's reading restores from s whenever the loss is in region B.
        let mut p = chd(&[("restore_shadow", text("region_b"))]);
        base(&mut p, 20);
        p.cc.shadow = 50 * MSS;
        p.ack_rtt(MSS, ms(80.0));
        assert_eq!(p.loss_fast_retransmit(20 * MSS), 25 * MSS, "ceil(max(20, 50)/2)");
    }

    #[test]
    fn region_a_round_clears_loss_compete_so_no_restore() {
        let mut s = chd(&[("p_max", num(1.0))]);
        spike_q_max(&mut s);
        s.w.cwnd_bytes = 40 * MSS;
        s.w.ssthresh_bytes = 20 * MSS;
        decide(&mut s, ms(71.0)); // region-B backoff as above: w = 20 MSS, s = 40 MSS
        assert_eq!(m(&s, "loss_compete"), 1.0);
        s.cwnd_limited = false;
        s.rtt = Some(ms(44.0));
        drain(&mut s);
        decide(&mut s, ms(44.0)); // h_r = 4 ms <= q_min: loss_compete = 0, no draw
        assert_eq!(m(&s, "loss_compete"), 0.0);
        assert_eq!(m(&s, "draws"), 2.0, "the spike round and the region-B round only");
        s.ack_rtt(MSS, ms(80.0));
        assert_eq!(s.loss_fast_retransmit(20 * MSS), 10 * MSS, "region-B loss halves w, no restore");
    }

    #[test]
    fn shadow_window_halves_on_every_loss() {
        let mut s = chd_full(&[], 1, 30, 2);
        assert_eq!(m(&s, "shadow_bytes"), 30_000.0);
        // No RTT sample yet: q_loss unknown, the loss is tolerated; s = max(floor(s/2), 2) MSS.
        for e in [15, 7, 3, 2, 2] {
            let f = s.w.cwnd_bytes;
            assert_eq!(s.loss_fast_retransmit(f), 30 * MSS);
            assert_eq!(m(&s, "shadow_bytes"), (e * MSS) as f64);
            s.exit_recovery(f, false);
        }
    }

    #[test]
    fn one_delay_decision_per_round_and_none_in_congestion_recovery() {
        let mut s = chd(&[("p_max", num(1.0))]);
        base(&mut s, 32);
        for _ in 0..50 {
            s.ack_rtt(MSS, ms(70.0)); // q = q_th (g = 1) on every ACK, but no round has ended
        }
        assert_eq!(m(&s, "draws"), 0.0);
        assert_eq!(s.w.cwnd_bytes, 33 * MSS, "CA: +1 MSS after 32 MSS acked");
        decide(&mut s, ms(70.0));
        assert_eq!(m(&s, "draws"), 1.0);
        assert_eq!(s.w.cwnd_bytes, 17 * MSS, "ceil(33/2)");
        assert_eq!(s.w.ssthresh_bytes, 17 * MSS);
        assert_eq!(m(&s, "cong_recovery"), 1.0);
        // A round ending in the congestion recovery: no decision, and the increase goes on
        // (cwnd == ssthresh: slow-start step of the 1 MSS acked).
        decide(&mut s, ms(70.0));
        assert_eq!(m(&s, "draws"), 1.0);
        assert_eq!(s.w.cwnd_bytes, 18 * MSS);
        drain(&mut s);
        let before = s.w.cwnd_bytes;
        decide(&mut s, ms(70.0));
        assert_eq!(m(&s, "draws"), 2.0);
        assert_eq!(m(&s, "delay_backoffs"), 2.0);
        assert_eq!(s.w.cwnd_bytes, ceil_half_segments(before, MSS));
    }

    #[test]
    fn no_delay_decision_during_loss_recovery() {
        let mut s = chd(&[("p_max", num(1.0))]);
        base(&mut s, 20);
        s.loss_fast_retransmit(20 * MSS); // q_loss = 0: tolerated
        decide(&mut s, ms(70.0));
        assert_eq!(m(&s, "draws"), 0.0);
        assert_eq!(s.w.cwnd_bytes, 20 * MSS);
        s.exit_recovery(20 * MSS, false);
        decide(&mut s, ms(70.0));
        assert_eq!(m(&s, "draws"), 1.0);
        assert_eq!(s.w.cwnd_bytes, 10 * MSS);
    }

    #[test]
    fn decrease_rounds_half_up_with_floor_of_two_segments() {
        assert_eq!(ceil_half_segments(7 * MSS, MSS), 4 * MSS);
        assert_eq!(ceil_half_segments(7_500, MSS), 4 * MSS, "whole segments first");
        assert_eq!(ceil_half_segments(8 * MSS, MSS), 4 * MSS);
        assert_eq!(ceil_half_segments(3 * MSS, MSS), 2 * MSS);
        assert_eq!(ceil_half_segments(2 * MSS, MSS), 2 * MSS);
        assert_eq!(ceil_half_segments(MSS, MSS), 2 * MSS, "FreeBSD: 1 - max(0, 1) = 0 -> 2 MSS");
        let mut s = chd(&[("p_max", num(1.0))]);
        base(&mut s, 7);
        decide(&mut s, ms(70.0));
        assert_eq!(s.w.cwnd_bytes, 4 * MSS, "delay backoff");
        let mut l = chd(&[]);
        base(&mut l, 9);
        l.ack_rtt(MSS, ms(80.0));
        assert_eq!(l.loss_fast_retransmit(9 * MSS), 5 * MSS, "region-B loss");
    }

    #[test]
    fn loss_during_congestion_recovery_is_tolerated() {
        let mut s = chd(&[("p_max", num(1.0))]);
        base(&mut s, 20);
        decide(&mut s, ms(70.0)); // backoff to 10 MSS
        s.ack_rtt(MSS, ms(80.0)); // slow-start step to 11 MSS; partial round q = 40 ms > q_th
        assert_eq!(s.w.cwnd_bytes, 11 * MSS);
        assert_eq!(s.loss_fast_retransmit(11 * MSS), 11 * MSS, "no reduction at all");
        assert_eq!(m(&s, "tolerated_losses"), 1.0);
    }

    #[test]
    fn loss_test_uses_current_partial_round_by_default() {
        let run = |pairs: &[(&str, ParamValue)]| {
            let mut s = chd(pairs);
            base(&mut s, 20);
            decide(&mut s, ms(80.0)); // h_r = 40 ms = new q_max: g = 0, no backoff
            assert_eq!(m(&s, "delay_backoffs"), 0.0);
            s.ack_rtt(MSS, ms(41.0));
            s.ack_rtt(MSS, ms(41.0)); // the current partial round is back at q = 1 ms
            s.loss_fast_retransmit(20 * MSS)
        };
        assert_eq!(run(&[]), 20 * MSS, "code: partial round, tolerated");
        assert_eq!(run(&[("loss_delay", text("last_round"))]), 10 * MSS, "paper: last h_r = 40 ms > q_th");
    }

    #[test]
    fn shadow_is_reset_when_backoff_delay_does_not_rise() {
        let mut s = chd(&[("p_max", num(1.0))]);
        base(&mut s, 20);
        s.cc.shadow = 5 * MSS;
        decide(&mut s, ms(70.0)); // h_r = 30 > h_b = 0: s = max(20, 5)
        assert_eq!(m(&s, "shadow_bytes"), 20_000.0);
        assert_eq!(m(&s, "prev_backoff_q_ms"), 30.0);
        s.cwnd_limited = false;
        drain(&mut s);
        decide(&mut s, ms(70.0)); // h_r = 30 = h_b and no loss_compete (q == q_th): s = 0
        assert_eq!(m(&s, "delay_backoffs"), 2.0);
        assert_eq!(m(&s, "shadow_bytes"), 0.0);
        assert_eq!(s.w.cwnd_bytes, 5 * MSS);
        s.cwnd_limited = true;
        drain(&mut s);
        assert!(s.w.cwnd_bytes > 5 * MSS);
        assert_eq!(m(&s, "shadow_bytes"), 0.0, "a zero shadow window does not grow");
        s.loss_fast_retransmit(s.w.cwnd_bytes.min(20 * MSS));
        assert_eq!(m(&s, "shadow_bytes"), 0.0, "nor is it halved back to 2 MSS");
    }

    #[test]
    fn shadow_window_grows_with_every_increment() {
        let mut s = chd(&[]);
        s.ack_rtt(MSS, ms(40.0));
        assert_eq!((s.w.cwnd_bytes, m(&s, "shadow_bytes")), (4 * MSS, 4000.0));
        s.ack_rtt(2 * MSS, ms(41.0));
        assert_eq!((s.w.cwnd_bytes, m(&s, "shadow_bytes")), (6 * MSS, 6000.0));
        s.w.ssthresh_bytes = 5 * MSS;
        for _ in 0..6 {
            s.ack_rtt(MSS, ms(41.0));
        }
        assert_eq!((s.w.cwnd_bytes, m(&s, "shadow_bytes")), (7 * MSS, 7000.0), "CA +1 MSS after 6 MSS acked");
    }

    #[test]
    fn no_growth_of_w_or_s_during_loss_recovery() {
        let mut s = chd(&[]);
        base(&mut s, 10);
        s.cc.shadow = 10 * MSS;
        s.loss_fast_retransmit(10 * MSS);
        for _ in 0..20 {
            s.ack_rtt(MSS, ms(45.0));
        }
        assert_eq!(s.w.cwnd_bytes, 10 * MSS);
        assert_eq!(m(&s, "shadow_bytes"), 5000.0);
    }

    #[test]
    fn tolerated_loss_exit_follows_newreno_or_keeps_cwnd() {
        let mut s = chd(&[]);
        base(&mut s, 20);
        s.loss_fast_retransmit(20 * MSS);
        s.exit_recovery(5 * MSS, false);
        assert_eq!(s.w.cwnd_bytes, 6 * MSS, "NewReno post-recovery: min(20, 5 + 1) MSS");
        let mut k = chd(&[("tolerated_loss_exit", text("keep_cwnd"))]);
        base(&mut k, 20);
        k.loss_fast_retransmit(20 * MSS);
        k.exit_recovery(5 * MSS, false);
        assert_eq!(k.w.cwnd_bytes, 20 * MSS, "paper: w unchanged");
        // A congestion loss still ends as NewReno.
        k.ack_rtt(MSS, ms(80.0));
        k.loss_fast_retransmit(20 * MSS);
        k.exit_recovery(5 * MSS, false);
        assert_eq!(k.w.cwnd_bytes, 6 * MSS);
    }

    #[test]
    fn timeout_is_newreno_keeps_shadow_and_ends_congestion_recovery() {
        let mut s = chd(&[("p_max", num(1.0))]);
        base(&mut s, 21);
        s.cc.shadow = 30 * MSS;
        decide(&mut s, ms(70.0)); // s = max(21, 30) = 30; w = ceil(21/2) = 11
        assert_eq!(s.w.cwnd_bytes, 11 * MSS);
        assert_eq!(s.loss_timeout(11 * MSS, 1), 5 * MSS, "floor(11/2) MSS");
        assert_eq!(s.w.cwnd_bytes, MSS);
        assert_eq!(m(&s, "shadow_bytes"), 30_000.0);
        assert_eq!(m(&s, "cong_recovery"), 0.0);
        assert_eq!(s.loss_timeout(MSS, 2), 2 * MSS, "FreeBSD recomputes from cwnd = 1 MSS");
    }

    #[test]
    fn without_abc_congestion_avoidance_adds_one_mss_per_round() {
        let mut s = chd_full(&[], 1, 3, 0);
        base(&mut s, 10);
        s.cc.shadow = 12 * MSS;
        for _ in 0..30 {
            s.ack_rtt(MSS, ms(41.0));
        }
        assert_eq!(s.w.cwnd_bytes, 10 * MSS);
        decide(&mut s, ms(41.0)); // h_r = 1 ms: no draw; new measurement: +1 MSS
        assert_eq!(s.w.cwnd_bytes, 11 * MSS);
        assert_eq!(m(&s, "shadow_bytes"), 13_000.0);
    }

    #[test]
    fn use_max_picks_round_maximum_or_ending_sample() {
        let mut s = chd(&[]);
        base(&mut s, 20);
        s.rtt = Some(ms(41.0));
        s.round(ms(100.0));
        assert_eq!(m(&s, "h_r_ms"), 60.0);
        let mut e = chd(&[("use_max", ParamValue::Bool(false))]);
        base(&mut e, 20);
        e.rtt = Some(ms(41.0));
        e.round(ms(100.0));
        assert_eq!(m(&e, "h_r_ms"), 1.0);
    }

    #[test]
    fn tick_quantisation_makes_h_r_whole_ticks() {
        let mut s = chd(&[("rtt_tick_ms", num(1.0))]);
        s.ack_rtt(MSS, ms(40.2)); // 41 ticks
        s.rtt = Some(ms(70.9)); // 71 ticks: h_r = 30 ticks = q_th exactly
        s.round(ms(70.9));
        assert_eq!(m(&s, "h_r_ms"), 30.0);
    }

    #[test]
    fn same_seed_same_decisions_and_about_p_max_per_round() {
        let run = |seed: u64| {
            let mut s = chd_full(&[], seed, 3, 2);
            base(&mut s, 20);
            let mut traj = Vec::new();
            for _ in 0..4000 {
                decide(&mut s, ms(70.0)); // h_r = q_th: p = p_max = 0.25
                s.cc.cong_recovery = false; // look at the draw alone
                s.w.cwnd_bytes = 20 * MSS;
                traj.push(m(&s, "delay_backoffs"));
            }
            (traj, m(&s, "draws"), m(&s, "delay_backoffs"))
        };
        let a = run(3);
        assert_eq!(a, run(3));
        assert_ne!(a.0, run(4).0);
        assert_eq!(a.1, 4000.0);
        let sd = (4000.0 * 0.25 * 0.75f64).sqrt(); // 27.4
        assert!((a.2 - 1000.0).abs() < 4.0 * sd, "{} backoffs in 4000 rounds at p = 0.25", a.2);
    }

    mod prop {
        use super::*;
        use crate::testkit::Event;
        use proptest::prelude::*;

        fn ev() -> impl Strategy<Value = Event> {
            crate::testkit::strategies::unforced_events(3, 0..400_000)
        }

        fn params() -> impl Strategy<Value = (Vec<(&'static str, ParamValue)>, u32)> {
            (0.001f64..=1.0, any::<[bool; 7]>(), 0u32..3).prop_map(|(p, b, abc)| {
                let pick = |c: bool, a: &str, z: &str| ParamValue::Text(if c { a } else { z }.into());
                (
                    vec![
                        ("p_max", ParamValue::Number(p)),
                        ("use_max", ParamValue::Bool(b[0])),
                        ("loss_fair", ParamValue::Bool(b[1])),
                        ("shadow_init", pick(b[2], "cwnd", "zero")),
                        ("loss_delay", pick(b[3], "partial_round", "last_round")),
                        ("restore_shadow", pick(b[4], "loss_compete", "region_b")),
                        ("tolerated_loss_exit", pick(b[5], "newreno", "keep_cwnd")),
                        ("rtt_tick_ms", ParamValue::Number(if b[6] { 1.0 } else { 0.0 })),
                    ],
                    abc,
                )
            })
        }

        fn run(pairs: &[(&str, ParamValue)], abc: u32, seed: u64, evs: &[Event]) -> Vec<(u64, u64, u64)> {
            chd_full(pairs, seed, 3, abc).trajectory(evs, |s, _| (s.w.cwnd_bytes, s.w.ssthresh_bytes, s.cc.shadow))
        }

        proptest! {
            #[test]
            fn random_event_sequences_keep_invariants_and_are_deterministic(
                (pairs, abc) in params(),
                seed in any::<u64>(),
                evs in proptest::collection::vec(ev(), 1..300),
            ) {
                let a = run(&pairs, abc, seed, &evs);
                let b = run(&pairs, abc, seed, &evs);
                prop_assert_eq!(a, b);
            }
        }
    }
}
