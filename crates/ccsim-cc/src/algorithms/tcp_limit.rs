//! # TCP Limit (Németh, Molnár, Tarján, Szabó, "TCP Limit: a streaming friendly transport protocol")
//!
//! A sender-side change to the congestion-avoidance step of NewReno (or of Westwood with Faster
//! Recovery): the window is held when it exceeds α times the congestion-window equivalent of the
//! achieved rate, and is forced down to that equivalent now and then so that competing flows converge.
//! Section III of the paper ([Nemeth07] in `docs/bibliography.md`); choices in
//! `docs/algorithms/tcp_limit.md`.
//!
//! BPF twin (the Linux testbed, `docs/kernel.md`): `python/ccsim/kernel/bpf/tcp_limit.bpf.c`.
//!
//! Quantities (section III):
//! * RE: achieved-rate estimate (Westwood "Rate Estimation", Wang et al., ISCC 2002): per ACK, the
//!   bytes delivered during the last interval T divided by T, low-pass filtered
//!   ([`super::rate_estimators::WindowedRate`]).
//! * BE: Westwood bandwidth estimate, per-ACK samples d_k/Δt_k, Tustin filter
//!   ([`super::rate_estimators::PerAckBandwidth`]); NL = maximum filter over BE (narrow-link capacity).
//! * CWE(x) = x · RTTmin bytes (eq. (2)); RTTmin = minimum raw RTT sample of the connection.
//! * NRI(x) = MSS · MSS / x bytes per ACK (footnote 2, the NewReno CA increment).
//!
//! Per-ACK rule in congestion avoidance (the extended algorithm of section III, lines 1–11):
//! ```text
//! 1  v_cwnd   += NRI(cwnd)
//! 2  v_target  = min(v_target, 2 CWE(NL) - CWE(RE))
//! 3  if cwnd > α CWE(RE):
//! 4      if v_cwnd > v_target:            forced decrease
//! 5,6        cwnd = v_cwnd = CWE(RE)
//! 7          v_target = +inf (default) | CWE(RE) (as printed)
//!        (else hold cwnd)
//! 10 else cwnd += NRI(cwnd)
//! ```
//! Slow start, fast retransmit / recovery and RTO are the base's: NewReno
//! ([`super::newreno::NewReno`], halve FlightSize) or Westwood Faster Recovery
//! ([`super::westwood::Westwood`], w, ssthresh ← CWE(BWE)). The bound the rule gives (section IV,
//! eqs. (3)–(7)): backlog Q ≤ (α − 1)·C for any number of flows with equal RTTs.
//!
//! Parameters: `base` (newreno), `alpha` (1.1, the paper's value in all experiments),
//! `forced_decrease` (true; false = the simple algorithm of section III, the one Fig. 1 shows),
//! `v_target_reset` (inf), `re_window_rtts` (1), `re_window_ms` (0 = use `re_window_rtts`),
//! `re_tau_rtts` (1), `re_filter` (exact), `be_tau_ms` (500), `filter_m` (2), `nl_window_s`
//! (0 = lifetime), `nri_per` (ack), `hold_needs_queue` (true), `compare_whole_segments` (true), `westwood_faster_recovery`
//! (linux). See `docs/algorithms/tcp_limit.md`.
//!
//! Differences from the paper (no code is public; every gap is a documented choice):
//! * **v_target reset**: line 7 as printed (`v_target ← CWE(RE)`) makes every window
//!   excursion to α·CWE(RE) end in a forced decrease, a 10 % sawtooth that contradicts the Fig. 2
//!   narrative ("the smaller RE is, the larger v_target grows", decreases seconds apart). Default: reset
//!   to +∞, so the next ACK sets v_target = 2 CWE(NL) − CWE(RE) and it only decreases until the next
//!   forced decrease. `v_target_reset = cwe_re` gives the printed rule.
//! * v_cwnd = cwnd and v_target = +∞ on every (re)entry into congestion avoidance (after slow start,
//!   after recovery): the paper only says v_cwnd "initially equals cwnd".
//! * RE: T = `re_window_rtts` · RTTmin (default one RTTmin: for a flow at rate μ the bytes acked in
//!   the last RTTmin are μ·RTTmin, so CWE(RE) is unbiased whatever the queueing delay), then a
//!   first-order low-pass filter with τ = `re_tau_rtts` · RTTmin (default 1 RTTmin), integrated
//!   exactly over the piecewise-constant window signal (`re_filter = exact`); `re_filter = tustin`
//!   feeds per-ACK samples to Westwood's Tustin filter instead, which underestimates bursty
//!   small-window flows by ~30 % (unit test in `rate_estimators`). The paper gives neither T nor the
//!   filter. RE is not used until T of ACK history exists; before that the CA step is plain NewReno.
//!   Trade-off of τ: the filter delays RE, so windows below ≈ 11 × (lag in RTTs) segments are held
//!   while growing (favours large windows); without it (`re_tau_rtts = 0`) RE's per-ACK noise ratchets
//!   windows up and the standing queue of several flows grows. τ = 1 RTTmin stays closest to eq. (7).
//! * Line 3 compares cwnd in whole segments (floor(cwnd/MSS)·MSS, what can be sent; Linux's integer
//!   snd_cwnd) with α·CWE(RE): with a byte window, n + 0.5 segments send n, measure CWE(RE) ≈ n and
//!   would be held for ever when n < 1/(α − 1) = 10 segments. `compare_whole_segments = false` uses
//!   the byte window.
//! * Line 3 also needs its premise, section III reason (i) ("increasing the cwnd only fills up the
//!   bottleneck queue"): the last RTT sample must exceed α·RTTmin (`hold_needs_queue`, default true;
//!   false = as printed). In the fluid model of section IV (cwnd = μ·RTT, CWE(RE) = μ·RTTmin) both
//!   tests coincide, so eqs. (3)–(7) stand. Without it a small window whose ACK clock is stretched by
//!   delayed ACKs (7 segments in flight, RE counts 6) is held for ever: α·CWE(RE) = 6.6 < 7, v_target
//!   far away, and RE cannot grow while cwnd is held.
//! * BE: τ = 0.5 s (not given by the papers; 0.5–1 s is the usual range), virtual null samples every
//!   τ/m of silence (m = 2, Mascolo et al. 2001). NL = lifetime maximum of BE by default
//!   (`nl_window_s` > 0: maximum over that many seconds). NL is never taken below RE
//!   (CWE(NL) ≥ CWE(RE), the narrow link carries at least the achieved rate), so v_target ≥ CWE(RE).
//! * NRI is per ACK (paper, RFC 2001, Linux 2.6.16 without ABC). With delayed ACKs that is half of
//!   what ABC gives per RTT; `nri_per = bytes` uses MSS·min(bytes_acked, L·MSS)/cwnd (byte counting
//!   with the scenario's ABC limit L) for both cwnd and v_cwnd.
//! * The rule applies only on ACKs of new data outside recovery while the sender is cwnd-limited
//!   (as the base's CA growth); an application-limited sender would otherwise measure its own
//!   application rate as RE and force its window down to it.
//! * A forced decrease may take cwnd to or below ssthresh, which would restart slow start; the paper
//!   says the flow then "starts increasing its cwnd linearly", so ssthresh is lowered to just below
//!   the new cwnd (cwnd − 1 byte) when needed.
//! * cwnd after a forced decrease is at least 2 MSS (CWE(RE) can be tiny after an idle period; every
//!   Reno-style decrease here floors at 2 MSS, and ssthresh = cwnd - 1 byte must stay >= 1 MSS).
//! * Windows are bytes with a fractional accumulator (NRI of a few bytes per ACK is not truncated);
//!   the accumulator is re-synchronised whenever the machine or the base changed cwnd.
//! * On the Westwood base, Faster Recovery uses the Westwood+ (per-RTT) estimator of Linux, the
//!   kernel the authors' testbed ran (2.6.16), with its own RTTmin (reset after RTO); the TCP Limit
//!   rule uses the lifetime RTTmin.

use std::time::Duration;

use super::newreno::NewReno;
use super::rate_estimators::{AckAccounting, MaxFilter, PerAckBandwidth, RateFilter, WindowedRate};
use super::westwood::{FasterRecovery, Westwood};
use crate::params::{ParamChoice, ParamReader, ParamSpec};
use crate::reno::RenoIncrease;
use crate::{AckSample, CcError, CcInit, CongestionControl, CwndEvent, LossEvent, Metric, ParamMap, ParamValue, RecoveryExit, RoundSample, Time, UndoSample, Window};

pub const NAME: &str = "tcp_limit";

crate::param_choice! {
    /// Loss response and slow start of the base: NewReno (halve) or Westwood Faster Recovery (§V.A).
    pub enum BaseChoice { NewReno = "newreno", Westwood = "westwood" }
}
crate::param_choice! {
    /// v_target after a forced decrease: +∞ (reading of Fig. 2) or CWE(RE) (line 7 as printed).
    pub enum VTargetReset { Inf = "inf", CweRe = "cwe_re" }
}
crate::param_choice! {
    /// NRI per ACK (MSS²/cwnd, paper, RFC 2001) or per byte acked (ABC).
    pub enum NriPer { Ack = "ack", Bytes = "bytes" }
}

pub fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::choice(
            "base",
            BaseChoice::NewReno,
            "loss response and slow start: NewReno (halve) or Westwood Faster Recovery (CWE(BWE)) (paper section V.A)",
        ),
        ParamSpec::number("alpha", "", 1.1, 1.0, 10.0, "hold cwnd above alpha * CWE(RE) (paper: 1.1 in all experiments)"),
        ParamSpec::choice(
            "v_target_reset",
            VTargetReset::Inf,
            "v_target after a forced decrease: +inf (reading of Fig. 2) or CWE(RE) (line 7 as printed)",
        ),
        ParamSpec::positive("re_window_rtts", "RTTmin", 1.0, 100.0, "RE interval T in multiples of RTTmin (not in the paper)"),
        ParamSpec::number("re_window_ms", "ms", 0.0, 0.0, 100_000.0, "fixed RE interval T; 0 uses re_window_rtts * RTTmin"),
        ParamSpec::number("re_tau_rtts", "RTTmin", 1.0, 0.0, 1000.0, "time constant of the RE low-pass filter in RTTmin; 0 = unfiltered"),
        ParamSpec::choice(
            "re_filter",
            RateFilter::Exact,
            "RE filter: first-order low-pass integrated exactly over the window signal, or per-ACK samples through Westwood's Tustin filter",
        ),
        ParamSpec::number("be_tau_ms", "ms", 500.0, 0.0, 100_000.0, "Tustin time constant of the BE filter (spec 2.3: 0.5-1 s); 0 = unfiltered"),
        ParamSpec::integer("filter_m", "", 2, 2, 1000, "a virtual zero sample every tau/m without ACKs (Mascolo et al. 2001, m >= 2)"),
        ParamSpec::number("nl_window_s", "s", 0.0, 0.0, 1e6, "NL = max of BE over this window; 0 = connection lifetime"),
        ParamSpec::choice(
            "nri_per",
            NriPer::Ack,
            "NRI per ACK = MSS^2/cwnd (paper, RFC 2001) or per byte acked = MSS*min(acked, L*MSS)/cwnd (ABC)",
        ),
        ParamSpec::boolean(
            "forced_decrease",
            true,
            "lines 1-2 and 4-7 of the extended algorithm (v_cwnd, v_target, forced decrease); false = the simple algorithm of section III (Fig. 1)",
        ),
        ParamSpec::boolean(
            "hold_needs_queue",
            true,
            "line 3 also needs the premise of section III (i), a backlog: the last RTT sample above alpha * RTTmin (false = line 3 as printed)",
        ),
        ParamSpec::boolean(
            "compare_whole_segments",
            true,
            "line 3 compares floor(cwnd / MSS) segments (Linux integer snd_cwnd, what is sent) with alpha * CWE(RE)",
        ),
        ParamSpec::choice(
            "westwood_faster_recovery",
            FasterRecovery::Linux,
            "faster_recovery of the Westwood base (see westwood); ignored with base = newreno",
        ),
    ]
}

#[derive(Clone, Debug)]
enum Base {
    NewReno(NewReno),
    Westwood(Westwood),
}

#[derive(Clone, Copy, Debug)]
enum ReWindow {
    RttMin(f64),
    Fixed(Duration),
}

#[derive(Clone, Debug)]
pub struct TcpLimit {
    base: Base,
    alpha: f64,
    v_target_reset: VTargetReset,
    nri_per: NriPer,
    whole_segments: bool,
    hold_needs_queue: bool,
    forced_decrease: bool,
    /// Latest raw RTT sample (the backlog premise of line 3).
    last_rtt: Option<Duration>,
    abc_limit: u32,
    re_window: ReWindow,
    re_tau_rtts: f64,
    acct: AckAccounting,
    re: WindowedRate,
    be: PerAckBandwidth,
    nl: MaxFilter,
    slow_start: RenoIncrease,
    rtt_min: Option<Duration>,
    /// Real-valued cwnd (bytes) and the value last written to the window (to detect outside changes).
    cwnd_f: f64,
    last_cwnd: u64,
    v_cwnd: f64,
    v_target: f64,
    /// The next congestion-avoidance ACK (re)enters CA: v_cwnd = cwnd, v_target = +inf.
    ca_fresh: bool,
    holding: bool,
    forced_decreases: u64,
}

impl TcpLimit {
    pub fn new(given: &ParamMap, init: &CcInit) -> Result<TcpLimit, CcError> {
        let specs = params();
        let p = ParamReader::new(NAME, &specs, given)?;
        let alpha = p.f64("alpha");
        if alpha <= 1.0 {
            return Err(p.invalid("alpha", "must be larger than 1 (the paper: alpha should be larger than 1)"));
        }
        let base = match p.choice("base") {
            BaseChoice::Westwood => {
                let recovery: FasterRecovery = p.choice("westwood_faster_recovery");
                let mut wp = ParamMap::new();
                wp.insert("faster_recovery".into(), ParamValue::Text(recovery.word().to_string()));
                Base::Westwood(Westwood::new(&wp, init)?)
            }
            BaseChoice::NewReno => Base::NewReno(NewReno::new(&ParamMap::new(), init)?),
        };
        let re_window_ms = p.f64("re_window_ms");
        let re_window =
            if re_window_ms > 0.0 { ReWindow::Fixed(p.millis("re_window_ms")) } else { ReWindow::RttMin(p.f64("re_window_rtts")) };
        if let ReWindow::Fixed(d) = re_window {
            if d.is_zero() {
                return Err(p.invalid("re_window_ms", "rounds to zero nanoseconds"));
            }
        }
        let m = p.f64("filter_m") as u32;
        Ok(TcpLimit {
            base,
            alpha,
            v_target_reset: p.choice("v_target_reset"),
            nri_per: p.choice("nri_per"),
            whole_segments: p.bool("compare_whole_segments"),
            hold_needs_queue: p.bool("hold_needs_queue"),
            forced_decrease: p.bool("forced_decrease"),
            last_rtt: None,
            abc_limit: init.abc_limit_segments,
            re_window,
            re_tau_rtts: p.f64("re_tau_rtts"),
            acct: AckAccounting::default(),
            re: WindowedRate::new(
                p.choice("re_filter"),
                Duration::ZERO,
                m,
            ),
            be: PerAckBandwidth::new(p.millis("be_tau_ms"), m),
            nl: MaxFilter::new({
                let s = p.f64("nl_window_s");
                (s > 0.0).then(|| Duration::from_secs_f64(s))
            }),
            slow_start: RenoIncrease::default(),
            rtt_min: None,
            cwnd_f: init.initial_cwnd_bytes as f64,
            last_cwnd: init.initial_cwnd_bytes,
            v_cwnd: init.initial_cwnd_bytes as f64,
            v_target: f64::INFINITY,
            ca_fresh: true,
            holding: false,
            forced_decreases: 0,
        })
    }

    fn rtt_min_secs(&self) -> Option<f64> {
        self.rtt_min.map(|d| d.as_secs_f64()).filter(|s| *s > 0.0)
    }

    /// CWE(RE) in bytes (eq. (2)), once RE and RTTmin are known.
    fn cwe_re(&self) -> Option<f64> {
        Some(self.re.value()? * self.rtt_min_secs()?)
    }

    /// The premise of line 3 (section III, reason (i): "increasing the cwnd only fills up the
    /// bottleneck queue"): the flow has a backlog, i.e. its last RTT sample exceeds alpha * RTTmin.
    /// In the paper's fluid model (section IV) cwnd = mu * RTT and CWE(RE) = mu * RTTmin, so this is
    /// the same test as cwnd > alpha * CWE(RE) and eqs. (3)-(7) are unchanged; it differs only when
    /// the ACK clock, not a queue, makes RE * RTTmin fall short of cwnd (delayed ACKs holding the odd
    /// segment of a small window), where the printed test holds cwnd for ever.
    fn backlogged(&self) -> bool {
        if !self.hold_needs_queue {
            return true;
        }
        match (self.last_rtt, self.rtt_min) {
            (Some(rtt), Some(min)) => rtt.as_secs_f64() > self.alpha * min.as_secs_f64(),
            _ => true,
        }
    }

    /// CWE(NL) in bytes, never below CWE(RE).
    fn cwe_nl(&self, cwe_re: f64) -> f64 {
        let nl = self.nl.value().unwrap_or(0.0) * self.rtt_min_secs().unwrap_or(0.0);
        nl.max(cwe_re)
    }

    /// Updates RE, BE, NL (and the Westwood base's estimator) with one ACK.
    fn observe(&mut self, ack: &AckSample, mss: u64) {
        if let Some(r) = ack.rtt.filter(|r| !r.is_zero()) {
            self.last_rtt = Some(r);
        }
        for r in [ack.rtt, ack.min_rtt].into_iter().flatten().filter(|r| !r.is_zero()) {
            self.rtt_min = Some(self.rtt_min.map_or(r, |m| m.min(r)));
        }
        let delivered = self.acct.count(ack, mss);
        if let Some(rtt_min) = self.rtt_min {
            let t = match self.re_window {
                ReWindow::RttMin(k) => rtt_min.mul_f64(k),
                ReWindow::Fixed(d) => d,
            };
            self.re.set_tau(rtt_min.mul_f64(self.re_tau_rtts));
            self.re.on_delivery(ack.now, delivered, t.max(Duration::from_nanos(1)));
        }
        self.be.on_delivery(ack.now, delivered);
        if let Some(be) = self.be.value() {
            self.nl.update(ack.now, be);
        }
        if let Base::Westwood(ww) = &mut self.base {
            ww.observe(ack, mss);
        }
    }

    fn nri(&self, ack: &AckSample, mss: f64) -> f64 {
        let cwnd = self.cwnd_f.max(1.0);
        if self.nri_per == NriPer::Bytes {
            let limit = if self.abc_limit == 0 { mss } else { self.abc_limit as f64 * mss };
            mss * (ack.bytes_acked as f64).min(limit) / cwnd
        } else {
            mss * mss / cwnd
        }
    }

    fn write_cwnd(&mut self, w: &mut Window) {
        let mss = w.mss_bytes as f64;
        if !self.cwnd_f.is_finite() || self.cwnd_f < mss {
            self.cwnd_f = mss;
        }
        w.set_cwnd(self.cwnd_f as u64);
        self.last_cwnd = w.cwnd_bytes;
    }

    /// The congestion-avoidance step (section III, lines 1–11).
    fn congestion_avoidance(&mut self, w: &mut Window, ack: &AckSample) {
        let mss = w.mss_bytes as f64;
        if w.cwnd_bytes != self.last_cwnd {
            self.cwnd_f = w.cwnd_bytes as f64;
        }
        if self.ca_fresh {
            self.v_cwnd = self.cwnd_f;
            self.v_target = f64::INFINITY;
            self.ca_fresh = false;
        }
        let nri = self.nri(ack, mss);
        self.v_cwnd += nri; // line 1
        self.holding = false;
        match self.cwe_re() {
            Some(cwe_re) => {
                let cwe_nl = self.cwe_nl(cwe_re);
                self.v_target = self.v_target.min(2.0 * cwe_nl - cwe_re); // line 2
                // line 3, with cwnd in whole segments (what is actually sent; Linux's integer
                // snd_cwnd): a byte window a fraction of a segment above n segments would otherwise
                // be compared with the CWE of the n segments it can send and be held forever when
                // n < 1/(alpha - 1) segments.
                let cwnd_sent = if self.whole_segments { (self.cwnd_f / mss).floor() * mss } else { self.cwnd_f };
                if cwnd_sent > self.alpha * cwe_re && self.backlogged() {
                    if self.forced_decrease && self.v_cwnd > self.v_target {
                        // lines 4-7: forced decrease
                        self.cwnd_f = cwe_re.max(2.0 * mss);
                        self.v_cwnd = self.cwnd_f;
                        self.v_target = if self.v_target_reset == VTargetReset::CweRe { cwe_re } else { f64::INFINITY };
                        self.forced_decreases += 1;
                        self.write_cwnd(w);
                        if w.cwnd_bytes <= w.ssthresh_bytes {
                            // Stay in congestion avoidance ("increasing its cwnd linearly").
                            w.ssthresh_bytes = w.cwnd_bytes - 1;
                        }
                        return;
                    }
                    self.holding = true; // line 2 of the simple algorithm: do nothing
                } else {
                    self.cwnd_f += nri; // line 10
                }
            }
            // No rate estimate yet (less than T of ACK history): plain NewReno.
            None => self.cwnd_f += nri,
        }
        self.write_cwnd(w);
    }
}

impl CongestionControl for TcpLimit {
    fn name(&self) -> &'static str {
        NAME
    }

    fn init(&mut self, w: &mut Window) {
        self.cwnd_f = w.cwnd_bytes as f64;
        self.last_cwnd = w.cwnd_bytes;
        match &mut self.base {
            Base::NewReno(b) => b.init(w),
            Base::Westwood(b) => b.init(w),
        }
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        self.observe(ack, w.mss_bytes);
        if ack.bytes_acked == 0 || ack.in_recovery || !ack.cwnd_limited {
            self.holding = false;
            return;
        }
        if w.in_slow_start() {
            self.slow_start.on_ack(w, ack, self.abc_limit);
            self.ca_fresh = true;
            self.holding = false;
            self.cwnd_f = w.cwnd_bytes as f64;
            self.last_cwnd = w.cwnd_bytes;
            return;
        }
        self.congestion_avoidance(w, ack);
    }

    fn on_round(&mut self, w: &mut Window, round: &RoundSample) {
        match &mut self.base {
            Base::NewReno(b) => b.on_round(w, round),
            Base::Westwood(b) => b.on_round(w, round),
        }
    }

    fn ssthresh_after_loss(&mut self, w: &Window, loss: &LossEvent) -> u64 {
        self.ca_fresh = true;
        self.holding = false;
        self.slow_start.reset();
        match &mut self.base {
            Base::NewReno(b) => b.ssthresh_after_loss(w, loss),
            Base::Westwood(b) => b.ssthresh_after_loss(w, loss),
        }
    }

    fn on_recovery_exit(&mut self, w: &mut Window, exit: &RecoveryExit) {
        self.ca_fresh = true;
        match &mut self.base {
            Base::NewReno(b) => b.on_recovery_exit(w, exit),
            Base::Westwood(b) => b.on_recovery_exit(w, exit),
        }
        self.cwnd_f = w.cwnd_bytes as f64;
        self.last_cwnd = w.cwnd_bytes;
    }

    fn undo_cwnd(&mut self, w: &Window, undo: &UndoSample) -> u64 {
        match &mut self.base {
            Base::NewReno(b) => b.undo_cwnd(w, undo),
            Base::Westwood(b) => b.undo_cwnd(w, undo),
        }
    }

    fn cwnd_event(&mut self, w: &mut Window, now: Time, ev: CwndEvent) {
        match &mut self.base {
            Base::NewReno(b) => b.cwnd_event(w, now, ev),
            Base::Westwood(b) => b.cwnd_event(w, now, ev),
        }
    }

    fn metrics(&self, out: &mut Vec<Metric>) {
        let rtt_min = self.rtt_min_secs().unwrap_or(0.0);
        let re = self.re.value().unwrap_or(0.0);
        let cwe_re = re * rtt_min;
        out.extend_from_slice(&[
            ("re_bytes_per_s", re),
            ("re_sample_bytes_per_s", self.re.last_sample()),
            ("re_valid", if self.re.is_valid() { 1.0 } else { 0.0 }),
            ("be_bytes_per_s", self.be.value().unwrap_or(0.0)),
            ("nl_bytes_per_s", self.nl.value().unwrap_or(0.0)),
            ("rtt_min_ms", rtt_min * 1e3),
            ("cwe_re_bytes", cwe_re),
            ("limit_bytes", self.alpha * cwe_re),
            ("v_cwnd_bytes", self.v_cwnd),
            // -1 stands for +inf (metrics must be finite).
            ("v_target_bytes", if self.v_target.is_finite() { self.v_target } else { -1.0 }),
            ("holding", if self.holding { 1.0 } else { 0.0 }),
            ("forced_decreases", self.forced_decreases as f64),
        ]);
        if let Base::Westwood(b) = &self.base {
            // The Faster Recovery estimator (the base's window-growth state is unused here).
            let est = b.estimator();
            let ww_rtt_min = est.rtt_min().map_or(0.0, |d| d.as_secs_f64());
            out.extend_from_slice(&[
                ("bw_est_bytes_per_s", est.bw_est()),
                ("bw_samples", est.samples() as f64),
                ("westwood_rtt_min_ms", ww_rtt_min * 1e3),
                ("bwe_rttmin_bytes", est.bw_est() * ww_rtt_min),
            ]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Script;
    use proptest::prelude::*;

    const MSS: u64 = 1000;

    fn limit_with(pairs: &[(&str, ParamValue)]) -> Script<TcpLimit> {
        let init = Script::<TcpLimit>::init(MSS, 10, 2);
        let given: ParamMap = pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        Script::new(TcpLimit::new(&given, &init).unwrap(), init)
    }

    /// Unfiltered RE and BE so that the estimates are exact by hand: RE = bytes in the last RTTmin /
    /// RTTmin, BE = bytes / inter-ACK time.
    /// Line 3 as printed (no backlog premise): these scripts keep RTT = RTTmin.
    fn exact(extra: &[(&str, ParamValue)]) -> Script<TcpLimit> {
        let mut pairs = vec![
            ("re_tau_rtts", ParamValue::Number(0.0)),
            ("be_tau_ms", ParamValue::Number(0.0)),
            ("hold_needs_queue", ParamValue::Bool(false)),
        ];
        pairs.extend_from_slice(extra);
        limit_with(&pairs)
    }

    /// Drives the flow at 1000 B per ms (RE = 1e6 B/s) with RTT = RTTmin = 50 ms, so CWE(RE) = 50000 B,
    /// alpha*CWE(RE) = 55000 B, and BE = 1e6 B/s (NL = 1e6 B/s, CWE(NL) = 50000 B, unless a faster
    /// phase came before). The window is then put in CA at `cwnd`; 60 ACKs of 1 MSS, one per ms.
    fn warm(s: &mut Script<TcpLimit>, cwnd: u64) {
        s.ack_spacing = Duration::from_millis(1);
        s.rtt = Some(Duration::from_millis(50));
        s.cwnd_limited = false; // warm the estimators without touching the window
        for _ in 0..60 {
            s.ack(MSS);
        }
        s.cwnd_limited = true;
        s.w.cwnd_bytes = cwnd;
        s.w.ssthresh_bytes = 20_000;
        assert_eq!(s.metric("re_valid"), Some(1.0));
        // Window (t-50 ms, t] holds 50 ACKs of 1000 B: 50000 B / 0.05 s.
        assert!((s.metric("re_bytes_per_s").unwrap() - 1e6).abs() < 1e-3);
        assert!((s.metric("cwe_re_bytes").unwrap() - 50_000.0).abs() < 1e-3);
        assert!(s.metric("nl_bytes_per_s").unwrap() >= 1e6 - 1e-3, "NL = max BE >= 1e6 B/s");
    }

    #[test]
    fn grows_by_nri_below_alpha_cwe_re() {
        let mut s = exact(&[]);
        warm(&mut s, 40_000); // 40000 <= 55000: NewReno growth
        assert!((s.metric("nl_bytes_per_s").unwrap() - 1e6).abs() < 1e-3);
        s.ack(MSS);
        // NRI(40000) = 1000*1000/40000 = 25 B; cwnd 40025, v_cwnd = 40000 + 25 (v_cwnd = cwnd on CA entry).
        assert_eq!(s.w.cwnd_bytes, 40_025);
        assert_eq!(s.metric("v_cwnd_bytes"), Some(40_025.0));
        assert_eq!(s.metric("holding"), Some(0.0));
        // v_target = min(inf, 2*50000 - 50000) = 50000.
        assert!((s.metric("v_target_bytes").unwrap() - 50_000.0).abs() < 1e-3);
        s.ack(MSS);
        // NRI(40025) = 24.984...: fractional accumulator, cwnd 40049.98 -> 40049 bytes.
        assert_eq!(s.w.cwnd_bytes, 40_049);
    }

    #[test]
    fn holds_cwnd_above_alpha_cwe_re_while_v_cwnd_below_v_target() {
        // Competing flow: NL (2e6 B/s, learned earlier) > RE (1e6 B/s): v_target = 2*100000 - 50000 =
        // 150000, far above v_cwnd: hold.
        let mut s = exact(&[]);
        s.ack_spacing = Duration::from_micros(500);
        s.rtt = Some(Duration::from_millis(50));
        s.cwnd_limited = false;
        for _ in 0..10 {
            s.ack(MSS); // BE = 1000 B / 0.5 ms = 2e6 B/s -> NL = 2e6
        }
        warm(&mut s, 60_000);
        assert!((s.metric("nl_bytes_per_s").unwrap() - 2e6).abs() < 1e-3);
        for _ in 0..5 {
            s.ack(MSS);
            assert_eq!(s.w.cwnd_bytes, 60_000, "60000 > 55000 and v_cwnd <= v_target: hold");
            assert_eq!(s.metric("holding"), Some(1.0));
        }
        assert!((s.metric("v_target_bytes").unwrap() - 150_000.0).abs() < 1e-3);
        // v_cwnd still grows: 60000 + 5 * NRI(60000) = 60000 + 5 * 16.667 = 60083.33.
        assert!((s.metric("v_cwnd_bytes").unwrap() - (60_000.0 + 5.0 * 1e6 / 60_000.0)).abs() < 1e-6);
        assert_eq!(s.metric("forced_decreases"), Some(0.0));
    }

    #[test]
    fn forced_decrease_when_v_cwnd_exceeds_v_target() {
        // Alone: NL = RE = 1e6 B/s, v_target = 2*50000 - 50000 = 50000 < v_cwnd = 60000 + NRI.
        let mut s = exact(&[]);
        warm(&mut s, 60_000);
        s.ack(MSS);
        // cwnd = v_cwnd = CWE(RE) = 50000 (the RE after this ACK: the window still holds 50 ACKs).
        assert_eq!(s.w.cwnd_bytes, 50_000);
        assert_eq!(s.metric("v_cwnd_bytes"), Some(50_000.0));
        assert_eq!(s.metric("v_target_bytes"), Some(-1.0), "+inf reset (reported as -1)");
        assert_eq!(s.metric("forced_decreases"), Some(1.0));
        assert!(!s.w.in_slow_start(), "still congestion avoidance");
        // Next ACK: v_target = 50000 again, cwnd 50000 <= 55000 -> NRI growth.
        s.ack(MSS);
        assert_eq!(s.w.cwnd_bytes, 50_020); // NRI(50000) = 20
        assert!((s.metric("v_target_bytes").unwrap() - 50_000.0).abs() < 1e-3);
    }

    #[test]
    fn forced_decrease_below_ssthresh_keeps_congestion_avoidance() {
        let mut s = exact(&[]);
        warm(&mut s, 60_000);
        s.w.ssthresh_bytes = 55_000;
        s.ack(MSS);
        assert_eq!(s.w.cwnd_bytes, 50_000);
        assert_eq!(s.w.ssthresh_bytes, 49_999, "lowered just below cwnd");
        s.ack(MSS);
        assert_eq!(s.w.cwnd_bytes, 50_020, "NRI, not slow start");
    }

    #[test]
    fn v_target_reset_to_infinity_lets_a_slower_flow_wait() {
        // RE = 1e6, NL = 2e6 (competing): after a forced decrease, v_target returns to
        // 2*CWE(NL) - CWE(RE) = 150000, so v_cwnd (50000) needs a long time to reach it.
        let mut s = exact(&[]);
        s.ack_spacing = Duration::from_micros(500);
        s.rtt = Some(Duration::from_millis(50));
        s.cwnd_limited = false;
        for _ in 0..10 {
            s.ack(MSS);
        }
        warm(&mut s, 60_000);
        s.cc.v_cwnd = 200_000.0; // force the condition once
        s.cc.ca_fresh = false;
        s.ack(MSS);
        assert_eq!(s.w.cwnd_bytes, 50_000);
        // Hold cwnd above alpha*CWE(RE) again and check that no decrease follows.
        s.w.cwnd_bytes = 60_000;
        s.ack(MSS);
        assert_eq!(s.w.cwnd_bytes, 60_000, "v_cwnd 50000+ < v_target 150000: hold");
        assert!((s.metric("v_target_bytes").unwrap() - 150_000.0).abs() < 1e-3);
    }

    #[test]
    fn v_target_literal_reset_forces_a_decrease_at_every_excursion() {
        // Printed line 7: v_target = CWE(RE) = 50000 after the decrease; with NL = 2e6 line 2 cannot
        // raise it (min), so the next time cwnd > alpha*CWE(RE) a decrease follows at once.
        let mut s = exact(&[("v_target_reset", ParamValue::Text("cwe_re".into()))]);
        s.ack_spacing = Duration::from_micros(500);
        s.rtt = Some(Duration::from_millis(50));
        s.cwnd_limited = false;
        for _ in 0..10 {
            s.ack(MSS);
        }
        warm(&mut s, 60_000);
        s.cc.v_cwnd = 200_000.0;
        s.cc.ca_fresh = false;
        s.ack(MSS);
        assert_eq!(s.w.cwnd_bytes, 50_000);
        assert!((s.metric("v_target_bytes").unwrap() - 50_000.0).abs() < 1e-3);
        s.w.cwnd_bytes = 60_000;
        s.ack(MSS);
        assert_eq!(s.w.cwnd_bytes, 50_000, "v_cwnd 50000+NRI > v_target 50000: decrease again");
        assert_eq!(s.metric("forced_decreases"), Some(2.0));
    }

    #[test]
    fn v_state_resets_on_every_entry_into_congestion_avoidance() {
        let mut s = exact(&[]);
        warm(&mut s, 40_000);
        s.ack(MSS);
        s.cc.v_target = 1234.0;
        // A loss: NewReno halves FlightSize; recovery; exit; the first CA ACK resets v_cwnd/v_target.
        s.loss_fast_retransmit(40_000);
        assert_eq!(s.w.cwnd_bytes, 20_000);
        s.exit_recovery(30_000, false);
        assert_eq!(s.w.cwnd_bytes, 20_000, "min(ssthresh, flight + MSS)");
        s.ack(MSS); // cwnd == ssthresh: slow start (+1000)
        assert_eq!(s.w.cwnd_bytes, 21_000);
        s.ack(MSS); // first CA ACK: v_cwnd = 21000, v_target = inf -> then 50000
        assert!((s.metric("v_cwnd_bytes").unwrap() - (21_000.0 + 1e6 / 21_000.0)).abs() < 1e-6);
        assert!((s.metric("v_target_bytes").unwrap() - 50_000.0).abs() < 1e-3);
    }

    #[test]
    fn only_in_congestion_avoidance_slow_start_is_reno() {
        let mut s = exact(&[]);
        warm(&mut s, 60_000);
        s.w.ssthresh_bytes = u64::MAX;
        s.ack(2 * MSS);
        assert_eq!(s.w.cwnd_bytes, 62_000, "slow start ignores the limit (ABC L = 2)");
        s.in_recovery = true;
        s.w.ssthresh_bytes = 20_000;
        s.ack(MSS);
        assert_eq!(s.w.cwnd_bytes, 62_000, "no change in recovery");
    }

    #[test]
    fn without_a_rate_estimate_the_step_is_newreno() {
        let mut s = exact(&[]);
        s.w.cwnd_bytes = 20_000;
        s.w.ssthresh_bytes = 10_000;
        s.ack(MSS); // first ACK: less than T of history
        assert_eq!(s.metric("re_valid"), Some(0.0));
        assert_eq!(s.w.cwnd_bytes, 20_050); // NRI(20000) = 50
    }

    /// RE = 3 segments per RTTmin: one 1000 B ACK every 16.667 ms with RTT 50 ms (the window
    /// (t - 50 ms, t] holds 3 ACKs): RE = 60000 B/s, CWE(RE) = 3000 B, alpha*CWE(RE) = 3300 B.
    fn small_window(extra: &[(&str, ParamValue)]) -> Script<TcpLimit> {
        let mut s = exact(extra);
        s.ack_spacing = Duration::from_micros(16_667);
        s.rtt = Some(Duration::from_millis(50));
        s.cwnd_limited = false;
        for _ in 0..10 {
            s.ack(MSS);
        }
        s.cwnd_limited = true;
        s.w.cwnd_bytes = 3_900;
        s.w.ssthresh_bytes = 2_000;
        assert!((s.metric("cwe_re_bytes").unwrap() - 3_000.0).abs() < 1e-6);
        s
    }

    #[test]
    fn hold_compares_whole_segments_with_alpha_cwe_re() {
        // 3900 B sends 3 segments: 3000 <= 3300 -> NRI growth (3900 + 1e6/3900 = 4156.4), so the window
        // can reach 4 segments.
        let mut s = small_window(&[]);
        s.ack(MSS);
        assert_eq!(s.w.cwnd_bytes, 4_156);
        assert_eq!(s.metric("holding"), Some(0.0));
        // Comparing bytes instead: 3900 > 3300, and v_target = 2*3000 - 3000 = 3000 < v_cwnd (alone on
        // the link, NL = RE): forced decrease to CWE(RE) = 3000.
        let mut s = small_window(&[("compare_whole_segments", ParamValue::Bool(false))]);
        s.ack(MSS);
        assert_eq!(s.w.cwnd_bytes, 3_000);
        assert_eq!(s.metric("forced_decreases"), Some(1.0));
    }

    /// The issue-9 stall: 7 segments in flight, delayed ACKs (2 MSS per ACK, one every 33.3 ms with
    /// RTT = RTTmin = 100 ms; the odd segment waits for the delayed-ACK timer), so RE counts 6
    /// segments per RTTmin: CWE(RE) = 6000 B, alpha * CWE(RE) = 6600 < 7000. NL was learned at a higher
    /// rate (slow start), so v_target = 2 CWE(NL) - CWE(RE) is far above v_cwnd: no forced decrease.
    fn delayed_ack_stall(hold_needs_queue: bool, rtt_ms: u64) -> Script<TcpLimit> {
        let mut s = limit_with(&[
            ("re_tau_rtts", ParamValue::Number(0.0)),
            ("be_tau_ms", ParamValue::Number(0.0)),
            ("hold_needs_queue", ParamValue::Bool(hold_needs_queue)),
        ]);
        s.rtt = Some(Duration::from_millis(100));
        s.ack_spacing = Duration::from_millis(1);
        s.cwnd_limited = false;
        for _ in 0..10 {
            s.ack(MSS); // BE = 1e6 B/s -> NL
        }
        s.ack_spacing = Duration::from_micros(33_334);
        for _ in 0..10 {
            s.ack(2 * MSS);
        }
        s.cwnd_limited = true;
        s.w.cwnd_bytes = 7_000;
        s.w.ssthresh_bytes = 3_000;
        s.rtt = Some(Duration::from_millis(rtt_ms));
        s
    }

    #[test]
    fn printed_hold_test_stalls_a_small_window_with_delayed_acks() {
        let mut s = delayed_ack_stall(false, 100);
        for _ in 0..300 {
            s.ack(2 * MSS);
        }
        assert!((s.metric("cwe_re_bytes").unwrap() - 6_000.0).abs() < 1.0, "RE says 6 segments");
        assert_eq!(s.w.cwnd_bytes, 7_000, "held for 10 s: the stall of issue 9");
        assert_eq!(s.metric("holding"), Some(1.0));
    }

    #[test]
    fn without_a_backlog_the_window_grows_again() {
        // RTT = RTTmin: no queue, so section III (i) does not apply and cwnd grows as NewReno.
        let mut s = delayed_ack_stall(true, 100);
        for _ in 0..300 {
            s.ack(2 * MSS);
        }
        assert_eq!(s.metric("holding"), Some(0.0));
        assert!(s.w.cwnd_bytes > 10_000, "cwnd {} grew past 10 segments", s.w.cwnd_bytes);
    }

    #[test]
    fn with_a_backlog_the_hold_applies() {
        // RTT 120 ms > 1.1 * RTTmin (100 ms, learned during the warm-up): the queue premise holds.
        let mut s = delayed_ack_stall(true, 120);
        for _ in 0..50 {
            s.ack(2 * MSS);
        }
        assert_eq!(s.w.cwnd_bytes, 7_000);
        assert_eq!(s.metric("holding"), Some(1.0));
    }

    #[test]
    fn simple_algorithm_only_holds() {
        // Alone (NL = RE): the extended algorithm decreases at once (forced_decrease_when_v_cwnd_exceeds_v_target);
        // the simple algorithm of section III (Fig. 1) holds.
        let mut s = exact(&[("forced_decrease", ParamValue::Bool(false))]);
        warm(&mut s, 60_000);
        for _ in 0..20 {
            s.ack(MSS);
        }
        assert_eq!(s.w.cwnd_bytes, 60_000);
        assert_eq!(s.metric("forced_decreases"), Some(0.0));
        assert_eq!(s.metric("holding"), Some(1.0));
    }

    #[test]
    fn westwood_base_uses_faster_recovery() {
        let mut s = exact(&[("base", ParamValue::Text("westwood".into()))]);
        warm(&mut s, 60_000); // 1e6 B/s for 60 ms: Westwood+ has one sample (window > 50 ms)
        let bwe = s.metric("bw_est_bytes_per_s").unwrap();
        assert!(bwe > 0.0);
        let expected = ((bwe * 0.050) as u64).max(2 * MSS);
        assert_eq!(s.loss_fast_retransmit(60_000), expected, "ssthresh = BWE * RTTmin, not FlightSize/2");
        s.exit_recovery(10_000, false);
        assert_eq!(s.w.cwnd_bytes, s.w.ssthresh_bytes, "cwnd = ssthresh = BWE*RTTmin at recovery end");
    }

    #[test]
    fn nri_per_bytes_counts_bytes_acked() {
        let mut s = exact(&[("nri_per", ParamValue::Text("bytes".into()))]);
        warm(&mut s, 40_000);
        s.ack(2 * MSS);
        // MSS * min(2000, 2*MSS) / 40000 = 50 B for cwnd and v_cwnd.
        assert_eq!(s.w.cwnd_bytes, 40_050);
        assert_eq!(s.metric("v_cwnd_bytes"), Some(40_050.0));
    }

    #[test]
    fn parameters_are_validated() {
        let init = Script::<TcpLimit>::init(MSS, 10, 2);
        let mut given = ParamMap::new();
        given.insert("alpha".into(), ParamValue::Number(1.0));
        assert!(TcpLimit::new(&given, &init).is_err());
        given.insert("alpha".into(), ParamValue::Number(1.2));
        given.insert("base".into(), ParamValue::Text("cubic".into()));
        assert!(TcpLimit::new(&given, &init).is_err());
    }

    fn run_ops(ops: &[crate::testkit::strategies::paced::Op], seed: u64, base: &str, variant: u8) -> Vec<u64> {
        let mut init = Script::<TcpLimit>::init(1448, 10, 2);
        init.rng = crate::Rng::new(seed, 1);
        let mut given = ParamMap::new();
        given.insert("base".into(), ParamValue::Text(base.into()));
        if variant & 1 != 0 {
            given.insert("re_filter".into(), ParamValue::Text("tustin".into()));
        }
        if variant & 2 != 0 {
            given.insert("v_target_reset".into(), ParamValue::Text("cwe_re".into()));
        }
        if variant & 4 != 0 {
            given.insert("re_tau_rtts".into(), ParamValue::Number(0.0));
            given.insert("nl_window_s".into(), ParamValue::Number(1.0));
            given.insert("nri_per".into(), ParamValue::Text("bytes".into()));
        }
        let mut s = Script::new(TcpLimit::new(&given, &init).unwrap(), init);
        crate::testkit::strategies::paced::run(&mut s, ops)
    }

    proptest! {
        #[test]
        fn random_event_sequences_keep_invariants_and_are_deterministic(
            ops in proptest::collection::vec(crate::testkit::strategies::paced::op(), 1..400),
            seed in any::<u64>(),
            westwood in any::<bool>(),
            variant in 0u8..8,
        ) {
            let base = if westwood { "westwood" } else { "newreno" };
            let a = run_ops(&ops, seed, base, variant);
            let b = run_ops(&ops, seed, base, variant);
            prop_assert_eq!(a, b);
        }
    }
}
