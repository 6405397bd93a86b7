//! # HD — Hamilton delay-based congestion control
//!
//! Budzisz, Stanojević, Schlote, Shorten, Baker, "On the fair coexistence of loss- and delay-based
//! TCP" (2009; letter version IEEE Commun. Lett. 13(7), 2009), section III, Fig. 6 (two-region
//! per-packet backoff probability) and Fig. 7 (pseudo-code); as restated by Hayes & Armitage, "Improved
//! coexistence and loss tolerance for delay based TCP congestion control" (LCN 2010), section III,
//! eq. (1). Reference code: FreeBSD `sys/netinet/cc/cc_hd.c` (the module Hayes' experiments ran).
//! Bibliography keys [Budzisz09], [Hayes10], [FreeBSD-cc] (`docs/bibliography.md`).
//!
//! BPF twin (the Linux testbed, `docs/kernel.md`): `python/ccsim/kernel/bpf/hd.bpf.c`.
//!
//! Rules implemented (windows in bytes):
//! * On every ACK of new data (Fig. 7 "on receipt of each ACK"; FreeBSD: `CC_ACK` only, not dupacks):
//!   q = RTT − RTTmin from the latest raw per-ACK sample; if q > q_min and the sender is not in loss
//!   recovery, draw X ~ U[0, 1) and compare with p = g(q) (Fig. 6 / Hayes Fig. 1, see
//!   [`super::delay_probability`]).
//! * Backoff (eq. (1) first case, Fig. 7 "reduce cwnd by 0.5·cwnd"), if X < g(q) and cwnd >= w0:
//!   `ssthresh = cwnd = max(floor(cwnd/MSS/2), 2)·MSS` — FreeBSD NewReno's ECN response — and no
//!   window increase on that ACK.
//! * Otherwise (eq. (1) second case, "w + 1/w"): NewReno slow start / congestion avoidance with
//!   appropriate byte counting, through [`RenoIncrease`].
//! * Packet loss, timeout, end of recovery: NewReno (FreeBSD `cc_hd.c` uses NewReno's `cong_signal`
//!   and `post_recovery`).
//!
//! Parameters (defaults = Hayes & Armitage section V): `p_max` 0.02 per ACK, `q_min_ms` 5, `q_th_ms`
//! 30, `q_max_floor_ms` 0 (q_max = running lifetime maximum), `w0_pkts` 0, `delay_signal` sample,
//! `rtt_tick_ms` 0, `halve_from` cwnd.
//!
//! Differences from the paper / from the reference code, and why:
//! * **One Bernoulli trial per ACK of new data, no once-per-RTT limiter**: FreeBSD's delay
//!   backoff enters congestion recovery with a stale `snd_recover`, and `tcp_input` leaves it on the
//!   same ACK, so trials are per ACK as in the paper. Under delayed ACKs a 2-segment ACK is one trial.
//!   The draw is taken whenever q > q_min (also where g = 0, e.g. at a new maximum), as FreeBSD calls
//!   `random()` there; that keeps the stream position a function of the ACK sequence only.
//! * **Delay signal:** raw per-ACK sample (FreeBSD and Hayes' runs); the paper's "estimated
//!   δ_current" with PERT's heritage suggests smoothing, offered as `delay_signal = srtt99`
//!   (srtt ← 0.99·srtt + 0.01·sample, for Budzisz's ns-2 reproduction). An ACK without a sample
//!   re-uses the latest one (h_ertt keeps the last value).
//! * **q_max:** FreeBSD uses `maxrtt − minrtt`, a lifetime maximum, so g = 0 at every new maximum.
//!   Budzisz's δ_max has "default value 100 ms": `q_max_floor_ms = 100` reads it as a floor
//!   (q_max = max(100 ms, observed)), which in Budzisz's scenarios (100 ms of buffer) equals "initial
//!   value, then the running estimate" once the queue has filled.
//! * **w0:** in Fig. 7 but not in the code and never given a value: parameter, default 0 (off).
//! * **Backoff rounding:** the paper halves; FreeBSD floors to whole segments with a 2-segment floor
//!   and sets ssthresh to the new cwnd, so the next ACK is a slow-start step (≤ 2 MSS with ABC).
//! * **Thresholds:** Hayes used q_th = 30 ms; Budzisz's ns-2 runs used δ_min = 5 ms, δ_th = 20 ms
//!   (Table I; also FreeBSD's sysctl default 20 ticks and pmax 5 %, not used here: the paper's values are).
//! * **Clock:** FreeBSD measures in 1 ms ticks with +1 tick per sample; `rtt_tick_ms = 1` reproduces
//!   the staircase (`floor(rtt/tick) + 1` for the sample, the minimum and the maximum alike).
//! * **Random stream:** per-flow seeded stream from `CcInit`, not FreeBSD's kernel-global `random()`.
//! * **Loss halving:** FreeBSD NewReno halves cwnd floored to whole segments (default
//!   `halve_from = cwnd`) and recomputes ssthresh from cwnd on every RTO; `halve_from = flight` gives
//!   ccsim's RFC NewReno instead (FlightSize/2, ssthresh held on repeated timeouts).
//! * **Recovery test:** delay backoffs are suppressed while the machine reports loss recovery
//!   (`in_recovery`). FreeBSD leaves recovery at an RTO, so it could back off on delay during the
//!   slow start that follows an RTO; ccsim's `in_recovery` stays true until `recover` is acked, so HD
//!   does not.

use std::time::Duration;

use super::delay_probability::{millis_f64, quantise_to_ticks, TwoRegion};
use crate::params::{ParamReader, ParamSpec};
use crate::reno::{loss_ssthresh, HalveFrom, RenoIncrease, RepeatedTimeout};
use crate::{AckSample, CcError, CcInit, CongestionControl, LossEvent, Metric, ParamMap, Rng, Window};

pub const NAME: &str = "hd";

pub fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::positive(
            "p_max",
            "probability",
            0.02,
            1.0,
            "per-ACK backoff probability at q = q_th (Hayes & Armitage 2010 sec. V: 0.02; FreeBSD sysctl 0.05)",
        ),
        ParamSpec::number(
            "q_min_ms",
            "ms",
            5.0,
            0.0,
            10_000.0,
            "queueing delay below which HD never backs off (Hayes; Budzisz Table I: 5 ms)",
        ),
        ParamSpec::positive(
            "q_th_ms",
            "ms",
            30.0,
            10_000.0,
            "queueing delay of peak backoff probability, region A/B boundary (Hayes: 30 ms; Budzisz: 20 ms)",
        ),
        ParamSpec::number(
            "q_max_floor_ms",
            "ms",
            0.0,
            0.0,
            10_000.0,
            "floor of q_max = max(floor, lifetime max queueing delay); 0 = FreeBSD/Hayes, 100 = Budzisz's delta_max",
        ),
        ParamSpec::number(
            "w0_pkts",
            "pkts",
            0.0,
            0.0,
            1e9,
            "no delay backoff while cwnd < w0 (Budzisz Fig. 7; value never given, 0 = off as FreeBSD)",
        ),
        ParamSpec::choice(
            "delay_signal",
            DelaySignal::Sample,
            "queueing delay from the raw per-ACK RTT (FreeBSD, Hayes) or PERT's srtt_0.99 (Budzisz ns-2 reading)",
        ),
        ParamSpec::number(
            "rtt_tick_ms",
            "ms",
            0.0,
            0.0,
            100.0,
            "quantise RTTs to floor(rtt/tick)+1 ticks as FreeBSD h_ertt (1 ms); 0 = off",
        ),
        ParamSpec::choice(
            "halve_from",
            HalveFrom::Cwnd,
            "loss halving of FreeBSD NewReno (floor(cwnd/2) in MSS), RFC 5681 FlightSize/2 or the SACK pipe/2 (ns-3)",
        ),
    ]
}

crate::param_choice! {
    /// Which delay estimate feeds g(q).
    enum DelaySignal { Sample = "sample", Srtt99 = "srtt99" }
}

#[derive(Clone, Debug)]
pub struct Hd {
    g: TwoRegion,
    q_max_floor: Duration,
    w0_bytes: u64,
    signal: DelaySignal,
    tick: Duration,
    halve_from: HalveFrom,
    /// FreeBSD NewReno's recomputation at every expiry with `halve_from = cwnd`, the RFC's hold
    /// otherwise (see "Loss halving" above).
    repeated_timeout: RepeatedTimeout,
    abc_limit: u32,
    increase: RenoIncrease,
    rng: Rng,
    /// Latest raw RTT sample (re-used on ACKs without one, as h_ertt).
    last_rtt: Option<Duration>,
    /// srtt_0.99 in nanoseconds (only with `delay_signal = srtt99`).
    srtt99_ns: Option<f64>,
    // Tracing.
    last_q: Duration,
    last_q_max: Duration,
    last_p: f64,
    draws: u64,
    delay_backoffs: u64,
    loss_backoffs: u64,
}

impl Hd {
    pub fn new(given: &ParamMap, init: &CcInit) -> Result<Hd, CcError> {
        let specs = params();
        let p = ParamReader::new(NAME, &specs, given)?;
        let (q_min, q_th) = super::delay_probability::read_thresholds(&p)?;
        let mss = init.mss_bytes.max(1);
        let w0_bytes = (p.f64("w0_pkts") * mss as f64).ceil().min(u64::MAX as f64) as u64;
        let halve_from: HalveFrom = p.choice("halve_from");
        Ok(Hd {
            g: TwoRegion { q_min, q_th, p_max: p.f64("p_max") },
            q_max_floor: p.millis("q_max_floor_ms"),
            w0_bytes,
            signal: p.choice("delay_signal"),
            tick: p.millis("rtt_tick_ms"),
            halve_from,
            repeated_timeout: if halve_from == HalveFrom::Cwnd { RepeatedTimeout::Recompute } else { RepeatedTimeout::Hold },
            abc_limit: init.abc_limit_segments,
            increase: RenoIncrease::default(),
            rng: init.rng.clone(),
            last_rtt: None,
            srtt99_ns: None,
            last_q: Duration::ZERO,
            last_q_max: Duration::ZERO,
            last_p: 0.0,
            draws: 0,
            delay_backoffs: 0,
            loss_backoffs: 0,
        })
    }

    /// (q, q_max) for this ACK, or None while no RTT sample or minimum is known.
    fn queueing_delay(&self, ack: &AckSample) -> Option<(Duration, Duration)> {
        let min = ack.min_rtt?;
        let rtt = match self.signal {
            DelaySignal::Sample => self.last_rtt?,
            DelaySignal::Srtt99 => Duration::from_nanos(self.srtt99_ns?.max(0.0).min(u64::MAX as f64) as u64),
        };
        let max = ack.max_rtt.unwrap_or(rtt).max(self.last_rtt.unwrap_or(Duration::ZERO));
        let min_q = quantise_to_ticks(min, self.tick);
        let q = quantise_to_ticks(rtt, self.tick).saturating_sub(min_q);
        let q_max = quantise_to_ticks(max, self.tick).saturating_sub(min_q).max(self.q_max_floor);
        Some((q, q_max))
    }

    /// FreeBSD NewReno's ECN response: ssthresh = cwnd = max(floor(cwnd/MSS/2), 2)·MSS.
    fn delay_backoff(&mut self, w: &mut Window) {
        let mss = w.mss_bytes;
        let new = (w.cwnd_bytes / mss / 2).max(2).saturating_mul(mss);
        w.ssthresh_bytes = new;
        w.set_cwnd(new);
        self.increase.reset();
        self.delay_backoffs += 1;
    }
}

impl CongestionControl for Hd {
    fn name(&self) -> &'static str {
        NAME
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        if let Some(r) = ack.rtt {
            self.last_rtt = Some(r);
            let r_ns = r.as_nanos() as f64;
            self.srtt99_ns = Some(match self.srtt99_ns {
                Some(s) => 0.99 * s + 0.01 * r_ns,
                None => r_ns,
            });
        }
        // FreeBSD cc_hd.c: the delay test runs on CC_ACK (new data) only.
        if ack.bytes_acked > 0 && !ack.is_dupack {
            if let Some((q, q_max)) = self.queueing_delay(ack) {
                self.last_q = q;
                self.last_q_max = q_max;
                if q > self.g.q_min && !ack.in_recovery {
                    // (Eq. 1) / Fig. 7: one Bernoulli trial per ACK with p = g(q) (Fig. 6).
                    let p = self.g.probability(q, q_max);
                    self.last_p = p;
                    self.draws += 1;
                    let x = self.rng.uniform();
                    if x < p && w.cwnd_bytes >= self.w0_bytes {
                        // (Eq. 1) first case: w <- w/2, and no increase on this ACK.
                        self.delay_backoff(w);
                        return;
                    }
                } else {
                    self.last_p = 0.0;
                }
            }
        }
        // (Eq. 1) second case: NewReno increase (w + 1/w per ACK in CA, slow start below ssthresh).
        self.increase.on_ack(w, ack, self.abc_limit);
    }

    fn ssthresh_after_loss(&mut self, w: &Window, loss: &LossEvent) -> u64 {
        self.increase.reset();
        self.loss_backoffs += 1;
        loss_ssthresh(w, loss, self.halve_from, self.repeated_timeout)
    }

    fn metrics(&self, out: &mut Vec<Metric>) {
        let srtt99_ms = self.srtt99_ns.map_or(0.0, |s| s * 1e-6);
        out.extend_from_slice(&[
            ("q_ms", millis_f64(self.last_q)),
            ("q_max_ms", millis_f64(self.last_q_max)),
            ("p", self.last_p),
            ("srtt99_ms", if srtt99_ms.is_finite() { srtt99_ms } else { 0.0 }),
            ("draws", self.draws as f64),
            ("delay_backoffs", self.delay_backoffs as f64),
            ("loss_backoffs", self.loss_backoffs as f64),
            ("abc_bytes_acked", self.increase.bytes_acked_in_ca as f64),
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

    fn hd_with(pairs: &[(&str, ParamValue)], seed: u64) -> Script<Hd> {
        let mut init = Script::<Hd>::init(MSS, 3, 2);
        init.rng = Rng::new(seed, 7);
        let mut given = ParamMap::new();
        for (k, v) in pairs {
            given.insert(k.to_string(), v.clone());
        }
        Script::new(Hd::new(&given, &init).unwrap(), init)
    }

    fn hd(pairs: &[(&str, ParamValue)]) -> Script<Hd> {
        hd_with(pairs, 1)
    }

    fn num(x: f64) -> ParamValue {
        ParamValue::Number(x)
    }

    /// Puts the script in congestion avoidance at `pkts` segments with RTTmin = 40 ms established.
    fn in_ca(s: &mut Script<Hd>, pkts: u64) {
        s.ack_rtt(MSS, ms(40.0));
        s.w.cwnd_bytes = pkts * MSS;
        s.w.ssthresh_bytes = 2 * MSS;
    }

    #[test]
    fn defaults_are_hayes_experiment_values() {
        let s = hd(&[]);
        assert_eq!(s.cc.g.p_max, 0.02);
        assert_eq!(s.cc.g.q_min, ms(5.0));
        assert_eq!(s.cc.g.q_th, ms(30.0));
        assert_eq!(s.cc.q_max_floor, Duration::ZERO);
        assert_eq!(s.cc.w0_bytes, 0);
        assert_eq!(s.cc.signal, DelaySignal::Sample);
        assert_eq!(s.cc.tick, Duration::ZERO);
    }

    #[test]
    fn rejects_q_min_not_below_q_th() {
        let init = Script::<Hd>::init(MSS, 3, 2);
        let mut given = ParamMap::new();
        given.insert("q_min_ms".into(), num(30.0));
        let e = Hd::new(&given, &init).err().unwrap().to_string();
        assert!(e.contains("q_min_ms"), "{e}");
        given.insert("p_max".into(), num(0.0));
        assert!(Hd::new(&given, &init).is_err(), "p_max must be > 0");
    }

    #[test]
    fn every_ack_backs_off_when_p_is_one() {
        // p_max = 1 and q = q_th exactly (rtt 70 ms, RTTmin 40 ms): g = 1, so every ACK backs off.
        let mut s = hd(&[("p_max", num(1.0))]);
        in_ca(&mut s, 64);
        let expected = [32, 16, 8, 4, 2, 2, 2]; // floor(w/2) in MSS, floor of 2 MSS
        for (i, e) in expected.iter().enumerate() {
            s.ack_rtt(MSS, ms(70.0));
            assert_eq!(s.w.cwnd_bytes, e * MSS, "ACK {i}");
            assert_eq!(s.w.ssthresh_bytes, e * MSS, "ssthresh = new cwnd");
        }
        assert_eq!(s.metric("draws"), Some(7.0));
        assert_eq!(s.metric("delay_backoffs"), Some(7.0));
    }

    #[test]
    fn no_draw_at_or_below_q_min() {
        let mut s = hd(&[("p_max", num(1.0))]);
        in_ca(&mut s, 10);
        for _ in 0..100 {
            s.ack_rtt(MSS, ms(45.0)); // q = 5 ms = q_min: not > q_min
        }
        assert_eq!(s.metric("draws"), Some(0.0));
        assert_eq!(s.metric("delay_backoffs"), Some(0.0));
        // NewReno CA with ABC from 10 MSS, one MSS per ACK: +1 MSS after 10, 21, 33, 46, 60, 75 and 91
        // ACKs (10 + 11 + ... + 16); the next step needs 108 > 100 ACKs, so 17 MSS.
        assert_eq!(s.w.cwnd_bytes, 17 * MSS);
    }

    #[test]
    fn dupacks_never_draw() {
        let mut s = hd(&[("p_max", num(1.0))]);
        in_ca(&mut s, 10);
        s.rtt = Some(ms(70.0));
        for _ in 0..10 {
            s.dupack();
        }
        assert_eq!(s.metric("draws"), Some(0.0));
        assert_eq!(s.w.cwnd_bytes, 10 * MSS);
    }

    #[test]
    fn identical_seeds_give_identical_decisions() {
        let run = |seed: u64| {
            let mut s = hd_with(&[("p_max", num(0.3))], seed);
            in_ca(&mut s, 40);
            let mut traj = Vec::new();
            for i in 0..2000u64 {
                let rtt = 40.0 + (i % 60) as f64; // sweeps regions A, q_th and B
                s.ack_rtt(MSS, ms(rtt));
                traj.push(s.w.cwnd_bytes);
            }
            (traj, s.metric("draws").unwrap(), s.metric("delay_backoffs").unwrap())
        };
        let a = run(5);
        let b = run(5);
        assert_eq!(a, b);
        assert!(a.2 > 0.0);
        let c = run(6);
        assert_ne!(a.0, c.0, "another seed gives other decisions");
        // One draw per ACK of new data whenever q > q_min, i.e. for i % 60 in 6..=59: 54 of every 60
        // ACKs; 2000 = 33*60 + 20 and 14 of the last 20 (6..=19) draw: 33*54 + 14.
        assert_eq!(a.1, (33 * 54 + 14) as f64);
    }

    #[test]
    fn backoff_count_is_about_p_times_acks() {
        // q = 17.5 ms with p_max 0.2, q_min 5, q_th 30: p = 0.2 * 12.5 / 25 = 0.1.
        let mut s = hd(&[("p_max", num(0.2))]);
        in_ca(&mut s, 50);
        s.ack_rtt(MSS, ms(140.0)); // establishes q_max = 100 ms (region B irrelevant below)
        let before = s.metric("delay_backoffs").unwrap();
        let n = 20_000.0;
        for _ in 0..20_000 {
            s.ack_rtt(MSS, ms(57.5));
            s.w.cwnd_bytes = 50 * MSS; // keep the window out of the way
        }
        assert!((s.metric("p").unwrap() - 0.1).abs() < 1e-12);
        let k = s.metric("delay_backoffs").unwrap() - before;
        let sd = (n * 0.1 * 0.9f64).sqrt(); // 42.4
        assert!((k - 0.1 * n).abs() < 4.0 * sd, "{k} backoffs in {n} ACKs at p = 0.1");
    }

    #[test]
    fn no_delay_backoff_during_loss_recovery() {
        let mut s = hd(&[("p_max", num(1.0))]);
        in_ca(&mut s, 20);
        s.loss_fast_retransmit(20 * MSS); // cwnd = ssthresh = 10 MSS
        assert_eq!(s.w.cwnd_bytes, 10 * MSS);
        for _ in 0..20 {
            s.ack_rtt(MSS, ms(70.0)); // g = 1, but in recovery
        }
        assert_eq!(s.metric("draws"), Some(0.0));
        assert_eq!(s.w.cwnd_bytes, 10 * MSS, "no growth during recovery either");
        s.exit_recovery(10 * MSS, false);
        s.ack_rtt(MSS, ms(70.0));
        assert_eq!(s.metric("delay_backoffs"), Some(1.0), "trials resume after recovery");
    }

    #[test]
    fn backoff_floors_to_whole_segments_and_skips_increase() {
        let mut s = hd(&[("p_max", num(1.0))]);
        s.ack_rtt(MSS, ms(40.0));
        s.w.cwnd_bytes = 7_500; // 7.5 MSS -> floor 7 -> 3 MSS
        s.w.ssthresh_bytes = 2 * MSS;
        s.ack_rtt(MSS, ms(70.0));
        assert_eq!(s.w.cwnd_bytes, 3 * MSS);
        assert_eq!(s.w.ssthresh_bytes, 3 * MSS);
        // Next ACK below q_min: cwnd == ssthresh is slow start, + min(bytes, 2 MSS).
        s.ack_rtt(2 * MSS, ms(41.0));
        assert_eq!(s.w.cwnd_bytes, 5 * MSS);
    }

    #[test]
    fn backs_off_in_slow_start_too() {
        let mut s = hd(&[("p_max", num(1.0))]);
        s.ack_rtt(MSS, ms(40.0)); // slow start: 3 -> 4 MSS
        assert_eq!(s.w.cwnd_bytes, 4 * MSS);
        s.ack_rtt(MSS, ms(70.0));
        assert_eq!(s.w.cwnd_bytes, 2 * MSS);
        assert_eq!(s.w.ssthresh_bytes, 2 * MSS, "left slow start on delay");
    }

    #[test]
    fn new_maximum_never_backs_off_without_floor() {
        // q rising to a new maximum each ACK in region B: g(q_max) = 0.
        let mut s = hd(&[("p_max", num(1.0))]);
        in_ca(&mut s, 20);
        for i in 0..50 {
            s.ack_rtt(MSS, ms(71.0 + i as f64));
        }
        assert_eq!(s.metric("delay_backoffs"), Some(0.0));
        assert_eq!(s.metric("draws"), Some(50.0), "still one draw per ACK");
    }

    #[test]
    fn q_max_floor_keeps_region_b_alive() {
        // Budzisz reading: q_max = max(100 ms, observed). q = 40 ms: p = (100-40)/(100-30) = 0.857.
        let mut s = hd(&[("p_max", num(1.0)), ("q_max_floor_ms", num(100.0))]);
        in_ca(&mut s, 20);
        s.ack_rtt(MSS, ms(80.0));
        assert!((s.metric("p").unwrap() - 60.0 / 70.0).abs() < 1e-9);
        assert_eq!(s.metric("q_max_ms"), Some(100.0));
    }

    #[test]
    fn w0_blocks_backoff_below_it() {
        let mut s = hd(&[("p_max", num(1.0)), ("w0_pkts", num(8.0))]);
        in_ca(&mut s, 16);
        s.ack_rtt(MSS, ms(70.0));
        assert_eq!(s.w.cwnd_bytes, 8 * MSS);
        s.ack_rtt(MSS, ms(70.0));
        assert_eq!(s.w.cwnd_bytes, 4 * MSS, "8 >= w0: backs off");
        s.ack_rtt(MSS, ms(70.0));
        assert_eq!(s.metric("delay_backoffs"), Some(2.0), "4 < w0: no backoff");
        assert_eq!(s.w.cwnd_bytes, 5 * MSS, "cwnd == ssthresh: slow-start step of the 1 MSS acked");
    }

    #[test]
    fn srtt99_smooths_a_spike() {
        let mut s = hd(&[("p_max", num(1.0)), ("delay_signal", ParamValue::Text("srtt99".into()))]);
        in_ca(&mut s, 20);
        s.ack_rtt(MSS, ms(140.0)); // srtt = 0.99*40 + 0.01*140 = 41 ms -> q = 1 ms
        assert!((s.metric("q_ms").unwrap() - 1.0).abs() < 1e-3);
        assert_eq!(s.metric("draws"), Some(0.0));
        // The raw-sample HD would see q = 100 ms = q_max: p = 0 but a draw.
        let mut r = hd(&[("p_max", num(1.0))]);
        in_ca(&mut r, 20);
        r.ack_rtt(MSS, ms(140.0));
        assert_eq!(r.metric("draws"), Some(1.0));
    }

    #[test]
    fn tick_quantisation_reproduces_freebsd_staircase() {
        // min 40.2 ms -> 41 ticks; 45.9 ms -> 46 ticks; q = 5 ticks = q_min: no draw.
        let mut s = hd(&[("p_max", num(1.0)), ("rtt_tick_ms", num(1.0))]);
        s.ack_rtt(MSS, ms(40.2));
        s.ack_rtt(MSS, ms(45.9));
        assert_eq!(s.metric("q_ms"), Some(5.0));
        assert_eq!(s.metric("draws"), Some(0.0));
        // Without ticks q = 5.7 ms > q_min: one draw.
        let mut r = hd(&[("p_max", num(1.0))]);
        r.ack_rtt(MSS, ms(40.2));
        r.ack_rtt(MSS, ms(45.9));
        assert_eq!(r.metric("draws"), Some(1.0));
    }

    #[test]
    fn ack_without_sample_reuses_latest() {
        let mut s = hd(&[("p_max", num(1.0))]);
        in_ca(&mut s, 16);
        s.ack_rtt(MSS, ms(70.0));
        assert_eq!(s.w.cwnd_bytes, 8 * MSS);
        s.rtt = None;
        s.ack(MSS);
        assert_eq!(s.w.cwnd_bytes, 4 * MSS, "latest sample (70 ms) still gives q = q_th");
    }

    #[test]
    fn loss_halves_cwnd_floored_as_freebsd_newreno() {
        let mut s = hd(&[]);
        in_ca(&mut s, 21);
        assert_eq!(s.loss_fast_retransmit(15 * MSS), 10 * MSS, "floor(21/2) MSS of cwnd");
        s.exit_recovery(4 * MSS, false);
        assert_eq!(s.w.cwnd_bytes, 5 * MSS, "NewReno post-recovery min(ssthresh, flight + MSS)");
        s.w.cwnd_bytes = 3 * MSS;
        assert_eq!(s.loss_timeout(3 * MSS, 1), 2 * MSS, "floor 2 MSS");
        assert_eq!(s.w.cwnd_bytes, MSS);
        s.w.ssthresh_bytes = 9 * MSS;
        assert_eq!(s.loss_timeout(MSS, 2), 2 * MSS, "FreeBSD recomputes from cwnd = 1 MSS at a repeated expiry");
        let mut f = hd(&[("halve_from", ParamValue::Text("flight".into()))]);
        in_ca(&mut f, 21);
        assert_eq!(f.loss_fast_retransmit(15 * MSS), 7_500, "RFC 5681 FlightSize/2");
        assert_eq!(f.loss_timeout(MSS, 2), 7_500, "held on a repeated timeout");
    }

    #[test]
    fn increase_is_newreno_below_q_min() {
        let mut s = hd(&[]);
        s.ack_rtt(MSS, ms(40.0));
        s.ack_rtt(2 * MSS, ms(42.0));
        assert_eq!(s.w.cwnd_bytes, 6 * MSS, "slow start +1 then +2 MSS (ABC L = 2)");
        s.cwnd_limited = false;
        s.ack_rtt(MSS, ms(42.0));
        assert_eq!(s.w.cwnd_bytes, 6 * MSS, "no growth when not cwnd-limited");
    }

    mod prop {
        use super::*;
        use crate::testkit::Event;
        use proptest::prelude::*;

        fn ev() -> impl Strategy<Value = Event> {
            crate::testkit::strategies::unforced_events(1, 20_000..400_000)
        }

        fn params() -> impl Strategy<Value = Vec<(&'static str, ParamValue)>> {
            (0.001f64..=1.0, 0usize..2, any::<bool>(), any::<bool>(), 0.0f64..200.0).prop_map(|(p, sig, tick, flight, floor)| {
                vec![
                    ("p_max", ParamValue::Number(p)),
                    ("delay_signal", ParamValue::Text(["sample", "srtt99"][sig].into())),
                    ("rtt_tick_ms", ParamValue::Number(if tick { 1.0 } else { 0.0 })),
                    ("halve_from", ParamValue::Text(if flight { "flight" } else { "cwnd" }.into())),
                    ("q_max_floor_ms", ParamValue::Number(floor)),
                ]
            })
        }

        fn run(pairs: &[(&str, ParamValue)], seed: u64, evs: &[Event]) -> Vec<(u64, u64)> {
            hd_with(pairs, seed).trajectory(evs, |s, _| (s.w.cwnd_bytes, s.w.ssthresh_bytes))
        }

        proptest! {
            #[test]
            fn random_event_sequences_keep_invariants_and_are_deterministic(
                pairs in params(),
                seed in any::<u64>(),
                evs in proptest::collection::vec(ev(), 1..300),
            ) {
                let a = run(&pairs, seed, &evs);
                let b = run(&pairs, seed, &evs);
                prop_assert_eq!(a, b);
            }
        }
    }
}
