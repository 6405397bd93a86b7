//! # Bandwidth and rate estimators shared by Westwood+ and TCP Limit
//!
//! Sender-side estimators of the rate at which the receiver is getting data, all driven by the ACK
//! stream ([Mascolo01], [Grieco04], [Wang02], [Nemeth07] in `docs/bibliography.md`). Rates are `f64` bytes per second; time is the
//! simulated clock passed in with each ACK.
//!
//! BPF twins (the Linux testbed, `docs/kernel.md`), in `python/ccsim/kernel/bpf/`: `ack_accounting.h`
//! ([`AckAccounting`]), `westwood_filter.h` ([`WestwoodPlusBw`]), `tcp_limit_fixed.h` (the exact filter
//! of [`WindowedRate`] and [`TustinFilter`]).
//!
//! * [`AckAccounting`]: how many bytes an ACK "delivers" (Linux `westwood_acked_count`): a duplicate
//!   ACK counts one MSS and is remembered; a later cumulative ACK covering more than one MSS counts
//!   only what was not already accounted for.
//! * [`WestwoodPlusBw`]: Linux `tcp_westwood.c` (Westwood+, Mascolo/Grieco): one bandwidth sample per
//!   window of `max(RTT, 50 ms)` (bytes acked in the window / window length), two cascaded 7/8 EWMAs,
//!   the first sample initialising both; `rtt` = last raw sample, `rtt_min` its minimum, reset to the
//!   next sample after an RTO.
//! * [`TustinFilter`]: the discrete low-pass filter of the original Westwood (Mascolo et al., MobiCom
//!   2001, eq. for b̂_k) `b̂_k = a_k b̂_{k-1} + (1 - a_k)(b_k + b_{k-1})/2`,
//!   `a_k = (2τ - Δ_k)/(2τ + Δ_k)`, with the paper's *virtual null samples*: when more than τ/m
//!   passes without an ACK, a zero sample is fed every τ/m (m >= 2, the Nyquist argument of the paper).
//! * [`PerAckBandwidth`]: Westwood BE (bandwidth estimation): per-ACK sample `d_k / (t_k - t_{k-1})`,
//!   Tustin-filtered.
//! * [`WindowedRate`]: Westwood RE (rate estimation, Wang et al., ISCC 2002, as used by TCP Limit):
//!   the rate of the bytes delivered during the last interval T (a sliding window over ACK arrival
//!   times), low-pass filtered: by default the continuous first-order filter integrated exactly over
//!   the piecewise-constant window signal ([`RateFilter::Exact`]), optionally per-ACK samples through
//!   the Tustin filter ([`RateFilter::Tustin`]).
//! * [`MaxFilter`]: running maximum over the connection lifetime or over a sliding time window (TCP
//!   Limit's narrow-link estimate NL = max filter over BE).
//!
//! Differences from the reference code (all documented again in `docs/algorithms/westwood.md` and
//! `tcp_limit.md`):
//! * Linux samples in bytes per jiffy with integer division; here bytes per second in `f64` and
//!   nanosecond time (no jiffy quantisation of the window or of the sample).
//! * Linux uses the fast-path byte count (`snd_una` advance, accounting ignored) for header-predicted
//!   ACKs and the accounting only on slow-path ACKs; the simulator has no header prediction, so every
//!   ACK goes through the accounting (identical unless a fast-path ACK follows duplicate ACKs).
//! * Linux's `in_ack_event` runs before `pkts_acked`, so it tests the window with the previous ACK's
//!   RTT sample; here the current ACK's sample is used (one ACK earlier; negligible).
//! * Linux's first window starts at connection initialisation; the simulator gives no time at `init`,
//!   so the first window starts at the first ACK (its bytes count in that window, as the bytes of every
//!   window-opening ACK do in Linux).
//! * After an RTO Linux resets `rtt_min` to `w->rtt` at the next ACK, which may be the stale sample of
//!   the last ACK before the timeout; here it is reset to the next fresh sample.
//! * SACK information is not used by any estimator (Linux Westwood+ ignores it too); a duplicate ACK
//!   counts one MSS whatever it SACKs.

use std::collections::VecDeque;
use std::time::Duration;

use crate::{AckSample, Time};

/// Linux `TCP_WESTWOOD_RTT_MIN`: the bandwidth-sampling window is never shorter than this.
pub const WESTWOOD_MIN_WINDOW: Duration = Duration::from_millis(50);

/// Most virtual null samples fed in one gap; beyond this the filter has decayed to zero anyway
/// (with Δ = τ/2, a = 0.6 and 0.6^64 < 1e-14), so it is set to zero.
const MAX_VIRTUAL_SAMPLES: u32 = 64;

/// Bound on the entries of the RE sliding window (an ACK each); beyond it the oldest are dropped, which
/// makes RE slightly low at absurd ACK rates instead of growing memory without bound.
const MAX_WINDOW_ENTRIES: usize = 1 << 20;

/// Bytes delivered per ACK with duplicate-ACK accounting (Linux `westwood_acked_count`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AckAccounting {
    /// Bytes already counted by duplicate ACKs and not yet covered by a cumulative ACK.
    pub accounted: u64,
}

impl AckAccounting {
    /// Bytes this ACK delivers. A duplicate ACK counts one MSS (and is remembered); a cumulative ACK of
    /// at most one MSS counts in full; a larger one (delayed or partial ACK, or the ACK that ends
    /// recovery) counts only what duplicate ACKs did not already count, and one MSS when they counted
    /// all of it (Linux). An ACK that neither advances nor is a duplicate counts nothing.
    pub fn count(&mut self, ack: &AckSample, mss: u64) -> u64 {
        let mut cumul = ack.bytes_acked;
        if cumul == 0 {
            if !ack.is_dupack {
                return 0;
            }
            self.accounted = self.accounted.saturating_add(mss);
            cumul = mss;
        }
        if cumul > mss {
            if self.accounted >= cumul {
                self.accounted -= cumul;
                cumul = mss;
            } else {
                cumul -= self.accounted;
                self.accounted = 0;
            }
        }
        cumul
    }
}

/// Westwood+ bandwidth estimator of Linux `tcp_westwood.c`.
#[derive(Clone, Debug)]
pub struct WestwoodPlusBw {
    min_window: Duration,
    acct: AckAccounting,
    /// Bytes acked in the current window (Linux `bk`).
    bk: u64,
    /// Start of the current window (Linux `rtt_win_sx`); `None` before the first ACK.
    win_start: Option<Time>,
    /// First, lightly smoothed estimate (Linux `bw_ns_est`), bytes/s.
    bw_ns_est: f64,
    /// The bandwidth estimate BWE (Linux `bw_est`), bytes/s.
    bw_est: f64,
    /// Last raw RTT sample (Linux `rtt`).
    rtt: Option<Duration>,
    /// Minimum RTT (Linux `rtt_min`).
    rtt_min: Option<Duration>,
    /// Take the next sample as the new `rtt_min` (set after an RTO).
    reset_rtt_min: bool,
    /// Bandwidth samples taken so far, and the last one (bytes/s).
    samples: u64,
    last_sample: f64,
}

impl WestwoodPlusBw {
    /// `min_window`: floor of the sampling window (Linux 50 ms).
    pub fn new(min_window: Duration) -> WestwoodPlusBw {
        WestwoodPlusBw {
            min_window,
            acct: AckAccounting::default(),
            bk: 0,
            win_start: None,
            bw_ns_est: 0.0,
            bw_est: 0.0,
            rtt: None,
            rtt_min: None,
            reset_rtt_min: false,
            samples: 0,
            last_sample: 0.0,
        }
    }

    /// Every ACK (new data and duplicates): RTT bookkeeping, window closing, byte accounting.
    pub fn on_ack(&mut self, ack: &AckSample, mss: u64) {
        if let Some(r) = ack.rtt.filter(|r| !r.is_zero()) {
            self.rtt = Some(r);
            self.rtt_min = Some(match self.rtt_min {
                Some(m) if !self.reset_rtt_min => m.min(r),
                _ => r,
            });
            self.reset_rtt_min = false;
        }
        // Linux westwood_update_window: close the window when more than max(RTT, 50 ms) has passed.
        // The ACK that closes a window counts in the next one.
        match self.win_start {
            None => self.win_start = Some(ack.now),
            Some(start) => {
                let delta = ack.now.saturating_since(start);
                if let Some(rtt) = self.rtt {
                    if delta > rtt.max(self.min_window) {
                        self.filter(delta);
                        self.bk = 0;
                        self.win_start = Some(ack.now);
                    }
                }
            }
        }
        self.bk = self.bk.saturating_add(self.acct.count(ack, mss));
    }

    /// Linux `westwood_filter`: sample = bk / delta; the first sample (both estimates zero) initialises
    /// both, later ones go through the two cascaded 7/8 EWMAs.
    fn filter(&mut self, delta: Duration) {
        let secs = delta.as_secs_f64();
        if secs <= 0.0 {
            return;
        }
        let sample = self.bk as f64 / secs;
        if self.bw_ns_est == 0.0 && self.bw_est == 0.0 {
            self.bw_ns_est = sample;
            self.bw_est = sample;
        } else {
            self.bw_ns_est = (7.0 * self.bw_ns_est + sample) / 8.0;
            self.bw_est = (7.0 * self.bw_est + self.bw_ns_est) / 8.0;
        }
        self.samples += 1;
        self.last_sample = sample;
    }

    /// After an RTO (Linux `CA_EVENT_LOSS`): the next RTT sample replaces `rtt_min`.
    pub fn request_rtt_min_reset(&mut self) {
        self.reset_rtt_min = true;
    }

    /// BWE, bytes per second.
    pub fn bw_est(&self) -> f64 {
        self.bw_est
    }
    pub fn bw_ns_est(&self) -> f64 {
        self.bw_ns_est
    }
    pub fn rtt_min(&self) -> Option<Duration> {
        self.rtt_min
    }
    pub fn samples(&self) -> u64 {
        self.samples
    }
    pub fn last_sample(&self) -> f64 {
        self.last_sample
    }
    pub fn bytes_in_window(&self) -> u64 {
        self.bk
    }

    /// Linux `tcp_westwood_bw_rttmin` in bytes: max(BWE * RTTmin, 2 MSS) (Westwood eq. (2) of the TCP
    /// Limit paper). No packet rounding (Linux floors to whole packets; windows here are bytes).
    pub fn bw_rttmin_bytes(&self, mss: u64) -> u64 {
        let rtt_min = self.rtt_min.map_or(0.0, |d| d.as_secs_f64());
        let bytes = self.bw_est * rtt_min;
        let floor = 2 * mss;
        if bytes.is_finite() && bytes > floor as f64 {
            bytes as u64 // saturating float-to-int conversion
        } else {
            floor
        }
    }
}

/// The Tustin (bilinear) low-pass filter of the original Westwood, with virtual null samples.
#[derive(Clone, Debug)]
pub struct TustinFilter {
    /// Time constant τ in seconds; 0 disables filtering (the estimate is the last sample).
    tau: f64,
    /// m of the virtual-null-sample rule: a zero sample every τ/m of silence.
    m: u32,
    est: f64,
    prev_sample: f64,
    /// Time of the last (real or virtual) filter step; `None` before the first sample.
    last_step: Option<Time>,
}

impl TustinFilter {
    pub fn new(tau: Duration, m: u32) -> TustinFilter {
        TustinFilter { tau: tau.as_secs_f64(), m: m.max(2), est: 0.0, prev_sample: 0.0, last_step: None }
    }

    /// Changes τ (e.g. when it is tied to a moving RTTmin); takes effect at the next step.
    pub fn set_tau(&mut self, tau: Duration) {
        self.tau = tau.as_secs_f64();
    }

    pub fn is_initialised(&self) -> bool {
        self.last_step.is_some()
    }

    pub fn value(&self) -> f64 {
        self.est
    }

    /// One step with the raw sample `sample` at time `now`. The first sample initialises the
    /// estimate (b̂_0 = b_0). Zero samples are fed first for each τ/m of silence since the last step.
    pub fn update(&mut self, now: Time, sample: f64) {
        self.fill_silence(now, |_| 0.0);
        self.step(now, sample);
    }

    /// Feeds virtual samples for the silence before `now`: `at(t)` gives the sample at virtual time t.
    pub fn fill_silence(&mut self, now: Time, mut at: impl FnMut(Time) -> f64) {
        let Some(mut last) = self.last_step else { return };
        if self.tau <= 0.0 {
            return;
        }
        let step = Duration::from_secs_f64(self.tau / self.m as f64).max(Duration::from_nanos(1));
        let mut n = 0;
        while now.saturating_since(last) > step {
            if n == MAX_VIRTUAL_SAMPLES {
                // Decayed to nothing: restart from zero at the last step before `now`.
                self.est = 0.0;
                self.prev_sample = 0.0;
                let gaps = now.saturating_since(last).as_nanos() / step.as_nanos();
                last += Duration::from_nanos((gaps.saturating_sub(1) * step.as_nanos()) as u64);
                self.last_step = Some(last);
                break;
            }
            last += step;
            let s = at(last);
            self.step(last, s);
            n += 1;
        }
    }

    fn step(&mut self, now: Time, sample: f64) {
        let sample = if sample.is_finite() { sample.max(0.0) } else { 0.0 };
        match self.last_step {
            Some(last) if self.tau > 0.0 => {
                // Δ_k, clamped to 2τ so that a_k stays in [0, 1] (only reachable with m < 4 and a
                // real ACK after a gap just under τ/m... and as a guard).
                let dt = now.saturating_since(last).as_secs_f64().min(2.0 * self.tau);
                let a = (2.0 * self.tau - dt) / (2.0 * self.tau + dt);
                self.est = a * self.est + (1.0 - a) * 0.5 * (sample + self.prev_sample);
            }
            _ => self.est = sample,
        }
        self.prev_sample = sample;
        self.last_step = Some(now);
    }
}

/// Westwood BE: per-ACK samples d_k / (t_k - t_{k-1}), Tustin-filtered.
#[derive(Clone, Debug)]
pub struct PerAckBandwidth {
    filter: TustinFilter,
    last_ack: Option<Time>,
    /// Bytes of ACKs that arrived at the same instant as the previous one (Δ = 0), carried over.
    pending: u64,
    last_sample: f64,
}

impl PerAckBandwidth {
    pub fn new(tau: Duration, m: u32) -> PerAckBandwidth {
        PerAckBandwidth { filter: TustinFilter::new(tau, m), last_ack: None, pending: 0, last_sample: 0.0 }
    }

    /// One ACK delivering `bytes` (from [`AckAccounting`]). The first ACK only starts the clock.
    pub fn on_delivery(&mut self, now: Time, bytes: u64) {
        let Some(last) = self.last_ack else {
            self.last_ack = Some(now);
            return;
        };
        let dt = now.saturating_since(last);
        if dt.is_zero() {
            self.pending = self.pending.saturating_add(bytes);
            return;
        }
        let sample = bytes.saturating_add(self.pending) as f64 / dt.as_secs_f64();
        self.pending = 0;
        self.last_ack = Some(now);
        self.last_sample = sample;
        self.filter.update(now, sample);
    }

    /// BE in bytes/s; `None` before the first sample.
    pub fn value(&self) -> Option<f64> {
        self.filter.is_initialised().then(|| self.filter.value())
    }

    pub fn last_sample(&self) -> f64 {
        self.last_sample
    }
}

crate::param_choice! {
/// How RE is low-pass filtered (`re_filter`).
pub enum RateFilter {
    /// The first-order low-pass 1/(1 + sτ) applied in continuous time to the sliding-window rate
    /// signal w(t) = (bytes acked in (t − T, t]) / T, integrated exactly: w(t) is piecewise constant
    /// (it steps up at each ACK and down T later), so on each constant piece
    /// `est ← w + (est − w)·e^(−Δ/τ)`. Same filter as the Tustin one (which is its bilinear
    /// discretisation) without its sampling error; preserves the time average of w, i.e. the true
    /// delivery rate, even for bursty ACK streams.
    Exact = "exact",
    /// Per-ACK samples w(t_k) through the [`TustinFilter`] with virtual samples every τ/m of silence
    /// (Westwood's BE construction applied to RE samples). Biased low for bursty small-window flows:
    /// the trapezoid rule interpolates linearly across the step where the window empties.
    Tustin = "tustin",
}
}

/// Westwood RE: the rate of the bytes delivered during the last interval T (a sliding window over ACK
/// arrival times), low-pass filtered ([`RateFilter`]).
#[derive(Clone, Debug)]
pub struct WindowedRate {
    mode: RateFilter,
    tustin: TustinFilter,
    /// τ of the exact filter, seconds (0 = unfiltered).
    tau: f64,
    /// Exact-filter state: estimate and the time up to which it is integrated.
    est: f64,
    est_at: Time,
    est_started: bool,
    /// (ACK time, bytes) of the ACKs inside the sliding window, oldest first.
    window: VecDeque<(Time, u64)>,
    sum: u64,
    first: Option<Time>,
    last_now: Time,
    last_interval: Duration,
    last_sample: f64,
}

impl WindowedRate {
    pub fn new(mode: RateFilter, tau: Duration, m: u32) -> WindowedRate {
        WindowedRate {
            mode,
            tustin: TustinFilter::new(tau, m),
            tau: tau.as_secs_f64(),
            est: 0.0,
            est_at: Time::ZERO,
            est_started: false,
            window: VecDeque::new(),
            sum: 0,
            first: None,
            last_now: Time::ZERO,
            last_interval: Duration::ZERO,
            last_sample: 0.0,
        }
    }

    /// Changes the filter's τ (RE's τ may be tied to RTTmin).
    pub fn set_tau(&mut self, tau: Duration) {
        self.tau = tau.as_secs_f64();
        self.tustin.set_tau(tau);
    }

    /// Drops the entries at or before `t - interval` (the window is (t - T, t]).
    fn evict(&mut self, t: Time, interval: Duration) {
        let edge = t.as_nanos().saturating_sub(interval.as_nanos() as u64);
        while let Some(&(at, bytes)) = self.window.front() {
            if at.as_nanos() > edge && self.window.len() <= MAX_WINDOW_ENTRIES {
                break;
            }
            self.sum -= bytes;
            self.window.pop_front();
        }
    }

    /// Exact filter: integrates est from `est_at` to `to`, piece by piece between window expiries.
    fn integrate(&mut self, to: Time, interval: Duration) {
        let secs = interval.as_secs_f64();
        loop {
            let expiry = self.window.front().map(|&(at, _)| at + interval);
            let (piece_end, expires) = match expiry {
                Some(e) if e <= to => (e.max(self.est_at), true),
                _ => (to, false),
            };
            if self.est_started {
                let dt = piece_end.saturating_since(self.est_at).as_secs_f64();
                let w = self.sum as f64 / secs;
                if self.tau > 0.0 {
                    self.est = w + (self.est - w) * (-dt / self.tau).exp();
                } else {
                    self.est = w;
                }
            }
            self.est_at = self.est_at.max(piece_end);
            if !expires {
                break;
            }
            if let Some((_, bytes)) = self.window.pop_front() {
                self.sum -= bytes;
            }
        }
    }

    /// One ACK delivering `bytes`, with the current interval T (> 0).
    pub fn on_delivery(&mut self, now: Time, bytes: u64, interval: Duration) {
        if interval.is_zero() {
            return;
        }
        let secs = interval.as_secs_f64();
        self.first.get_or_insert(now);
        match self.mode {
            RateFilter::Exact => {
                self.integrate(now, interval);
                self.window.push_back((now, bytes));
                self.sum += bytes;
                self.evict(now, interval); // only the entry cap can act here
            }
            RateFilter::Tustin => {
                // Virtual samples during silence see the window as it was at that virtual time.
                let mut filter = std::mem::replace(&mut self.tustin, TustinFilter::new(Duration::ZERO, 2));
                filter.fill_silence(now, |t| {
                    self.evict(t, interval);
                    self.sum as f64 / secs
                });
                self.tustin = filter;
                self.window.push_back((now, bytes));
                self.sum += bytes;
                self.evict(now, interval);
            }
        }
        let sample = self.sum as f64 / secs;
        self.last_sample = sample;
        self.last_now = now;
        self.last_interval = interval;
        match self.mode {
            RateFilter::Exact => {
                if !self.est_started && self.is_valid() {
                    // The window has been full once: start the filter at its value.
                    self.est = sample;
                    self.est_started = true;
                }
                if self.tau <= 0.0 {
                    self.est = sample;
                }
            }
            RateFilter::Tustin => self.tustin.update(now, sample),
        }
    }

    /// True once the window has been filled once (at least T of ACK history).
    pub fn is_valid(&self) -> bool {
        match self.first {
            Some(first) => !self.last_interval.is_zero() && self.last_now.saturating_since(first) >= self.last_interval,
            None => false,
        }
    }

    /// RE in bytes/s (filtered), `None` until [`Self::is_valid`].
    pub fn value(&self) -> Option<f64> {
        self.is_valid().then(|| match self.mode {
            RateFilter::Exact => self.est,
            RateFilter::Tustin => self.tustin.value(),
        })
    }

    /// The current unfiltered window rate (bytes in the window / T) at the last ACK.
    pub fn last_sample(&self) -> f64 {
        self.last_sample
    }
}

/// Running maximum: over the lifetime (`window == None`) or over the last `window` of time
/// (monotonic deque, amortised O(1)).
#[derive(Clone, Debug)]
pub struct MaxFilter {
    window: Option<Duration>,
    lifetime: Option<f64>,
    queue: VecDeque<(Time, f64)>,
}

impl MaxFilter {
    pub fn new(window: Option<Duration>) -> MaxFilter {
        MaxFilter { window, lifetime: None, queue: VecDeque::new() }
    }

    pub fn update(&mut self, now: Time, value: f64) {
        if !value.is_finite() {
            return;
        }
        match self.window {
            None => self.lifetime = Some(self.lifetime.map_or(value, |m| m.max(value))),
            Some(win) => {
                while matches!(self.queue.back(), Some(&(_, v)) if v <= value) {
                    self.queue.pop_back();
                }
                self.queue.push_back((now, value));
                let edge = now.as_nanos().saturating_sub(win.as_nanos() as u64);
                while self.queue.len() > 1 && self.queue.front().is_some_and(|&(t, _)| t.as_nanos() < edge) {
                    self.queue.pop_front();
                }
            }
        }
    }

    pub fn value(&self) -> Option<f64> {
        match self.window {
            None => self.lifetime,
            Some(_) => self.queue.front().map(|&(_, v)| v),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    fn ack(now_ms: u64, bytes: u64, rtt_ms: u64) -> AckSample {
        AckSample {
            now: Time::from_millis(now_ms),
            bytes_acked: bytes,
            is_dupack: bytes == 0,
            rtt: (bytes > 0).then(|| Duration::from_millis(rtt_ms)),
            ..AckSample::default()
        }
    }

    #[test]
    fn dupacks_count_one_mss_and_are_discounted_from_the_cumulative_ack() {
        let mut a = AckAccounting::default();
        assert_eq!(a.count(&ack(0, 0, 0), MSS), MSS);
        assert_eq!(a.count(&ack(0, 0, 0), MSS), MSS);
        assert_eq!(a.count(&ack(0, 0, 0), MSS), MSS);
        assert_eq!(a.accounted, 3 * MSS);
        // Cumulative ACK of 5 segments: 5000 - 3000 already counted = 2000.
        assert_eq!(a.count(&ack(0, 5 * MSS, 10), MSS), 2 * MSS);
        assert_eq!(a.accounted, 0);
        // Two dupacks then a 2-segment ACK: accounted (2000) >= 2000 -> counts one MSS (Linux).
        a.count(&ack(0, 0, 0), MSS);
        a.count(&ack(0, 0, 0), MSS);
        assert_eq!(a.count(&ack(0, 2 * MSS, 10), MSS), MSS);
        assert_eq!(a.accounted, 0);
        // A one-segment ACK always counts in full.
        a.count(&ack(0, 0, 0), MSS);
        assert_eq!(a.count(&ack(0, MSS, 10), MSS), MSS);
        assert_eq!(a.accounted, MSS);
    }

    #[test]
    fn tustin_filter_matches_hand_computation_and_inserts_virtual_null_samples() {
        // τ = 1 s, m = 2: a zero sample every 0.5 s of silence.
        let mut f = TustinFilter::new(Duration::from_secs(1), 2);
        f.update(Time::from_millis(0), 1000.0);
        assert_eq!(f.value(), 1000.0, "first sample initialises");
        // Δ = 0.1 s: a = 1.9/2.1; est = a*1000 + (0.1/2.1)*(2000 + 1000).
        f.update(Time::from_millis(100), 2000.0);
        let a = 1.9 / 2.1;
        let e1 = a * 1000.0 + (1.0 - a) * 0.5 * 3000.0;
        assert!((f.value() - e1).abs() < 1e-9);
        // 1.2 s later: virtual zeros at 0.6 and 1.1 s (Δ = 0.5: a = 1.5/2.5 = 0.6), then the real
        // sample at 1.3 s with Δ = 0.2 s.
        f.update(Time::from_millis(1300), 500.0);
        let e2 = 0.6 * e1 + 0.4 * 0.5 * (0.0 + 2000.0);
        let e3 = 0.6 * e2 + 0.4 * 0.5 * (0.0 + 0.0);
        let a = 1.8 / 2.2;
        let e4 = a * e3 + (1.0 - a) * 0.5 * (500.0 + 0.0);
        assert!((f.value() - e4).abs() < 1e-9, "{} vs {e4}", f.value());
    }

    #[test]
    fn tustin_filter_survives_a_long_silence() {
        let mut f = TustinFilter::new(Duration::from_millis(500), 2);
        f.update(Time::from_millis(0), 1e9);
        f.update(Time::from_secs(100_000), 10.0);
        assert!(f.value().is_finite() && f.value() < 10.0);
    }

    #[test]
    fn windowed_rate_counts_bytes_in_the_last_interval() {
        // Unfiltered (τ = 0): sample = bytes in (t - T, t] / T with T = 100 ms.
        let mut re = WindowedRate::new(RateFilter::Exact, Duration::ZERO, 2);
        let t = Duration::from_millis(100);
        for i in 0..10 {
            re.on_delivery(Time::from_millis(i * 20), 1000, t);
        }
        // At 180 ms the window (80, 180] holds the ACKs at 100, 120, 140, 160, 180: 5000 B / 0.1 s.
        assert_eq!(re.last_sample(), 50_000.0);
        assert!(re.is_valid(), "180 ms >= T of history");
        assert_eq!(re.value(), Some(50_000.0));
        let mut fresh = WindowedRate::new(RateFilter::Exact, Duration::ZERO, 2);
        fresh.on_delivery(Time::from_millis(0), 1000, t);
        fresh.on_delivery(Time::from_millis(50), 1000, t);
        assert!(!fresh.is_valid(), "less than T of history");
    }

    #[test]
    fn exact_rate_filter_integrates_the_window_signal_by_hand() {
        // T = τ = 100 ms, 1000 B ACKs at 0, 50, 100 ms: valid at 100 ms (T of history); the window
        // (0, 100] holds 2000 B -> w = 20000 B/s, the filter starts there.
        let t = Duration::from_millis(100);
        let mut re = WindowedRate::new(RateFilter::Exact, t, 2);
        for ms in [0, 50, 100] {
            re.on_delivery(Time::from_millis(ms), 1000, t);
        }
        assert_eq!(re.value(), Some(20_000.0));
        // Next ACK at 200 ms: w = 20000 on [100, 150], 10000 on [150, 200] (the 50 ms ACK expired),
        // then 0 at 200 (the 100 ms one expired): est = 10000 + 10000 e^-0.5 = 16065.3.
        re.on_delivery(Time::from_millis(200), 1000, t);
        let expected = 10_000.0 + 10_000.0 * (-0.5f64).exp();
        assert!((re.value().unwrap() - expected).abs() < 1e-6, "{:?} vs {expected}", re.value());
        assert_eq!(re.last_sample(), 10_000.0, "the 200 ms ACK alone in the window");
    }

    #[test]
    fn exact_rate_filter_is_unbiased_for_bursty_acks_where_tustin_is_not() {
        // Two back-to-back ACKs (1.2 ms apart) every 117 ms, T = τ = 101.2 ms: true rate
        // 2 * 1448 B / 0.117 s = 24752 B/s.
        let t = Duration::from_micros(101_200);
        let truth = 2.0 * 1448.0 / 0.117;
        let run = |mode| {
            let mut re = WindowedRate::new(mode, t, 2);
            let mut sum = 0.0;
            for i in 0..200u64 {
                let now = i * 117_000_000;
                re.on_delivery(Time::from_nanos(now), 1448, t);
                re.on_delivery(Time::from_nanos(now + 1_200_000), 1448, t);
                if i >= 100 {
                    sum += re.value().unwrap();
                }
            }
            sum / 100.0
        };
        let exact = run(RateFilter::Exact);
        let tustin = run(RateFilter::Tustin);
        assert!((exact / truth - 1.0).abs() < 0.15, "exact {exact} vs {truth}");
        assert!(tustin / truth < 0.75, "tustin {tustin}: the trapezoid rule loses the window's step");
    }

    #[test]
    fn per_ack_bandwidth_divides_by_the_inter_ack_time() {
        let mut be = PerAckBandwidth::new(Duration::ZERO, 2);
        be.on_delivery(Time::from_millis(0), 1000);
        assert_eq!(be.value(), None, "the first ACK only starts the clock");
        be.on_delivery(Time::from_millis(2), 1000);
        assert_eq!(be.value(), Some(500_000.0)); // 1000 B / 2 ms
        be.on_delivery(Time::from_millis(2), 1000); // same instant: carried over
        be.on_delivery(Time::from_millis(3), 1000);
        assert_eq!(be.value(), Some(2_000_000.0)); // 2000 B / 1 ms
    }

    #[test]
    fn max_filter_lifetime_and_windowed() {
        let mut m = MaxFilter::new(None);
        m.update(Time::from_millis(0), 5.0);
        m.update(Time::from_millis(10), 3.0);
        assert_eq!(m.value(), Some(5.0));
        let mut w = MaxFilter::new(Some(Duration::from_millis(100)));
        w.update(Time::from_millis(0), 5.0);
        w.update(Time::from_millis(50), 3.0);
        assert_eq!(w.value(), Some(5.0));
        w.update(Time::from_millis(120), 2.0);
        assert_eq!(w.value(), Some(3.0), "5 fell out of the 100 ms window");
    }
}
