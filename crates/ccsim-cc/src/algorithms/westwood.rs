//! # Westwood+ with Faster Recovery (Linux `net/ipv4/tcp_westwood.c`; Mascolo, Casetti, Gerla et al.)
//!
//! Sources: S. Mascolo, C. Casetti, M. Gerla, M. Sanadidi, R. Wang, "TCP Westwood: bandwidth
//! estimation for enhanced transport over wireless links", MobiCom 2001 (Faster Recovery rules of its
//! section 2, the "3 DUPACKs" and "coarse timeout" pseudocode); C. Casetti et al., "TCP with faster
//! recovery", MILCOM 2000; L. A. Grieco, S. Mascolo, "Performance evaluation and comparison of
//! Westwood+, New Reno and Vegas TCP congestion control", CCR 2004 (Westwood+: one sample per RTT);
//! Linux `tcp_westwood.c` (mainline; the 2.6.14-era version differs only in details);
//! eq. (2) of Németh et al. (TCP Limit paper): CWE(BWE) = BWE * RTTmin in bytes.
//!
//! BPF twin (the Linux testbed, `docs/kernel.md`): `python/ccsim/kernel/bpf/westwood.bpf.c`.
//!
//! Rules implemented (windows in bytes; keys [Mascolo01], [Grieco04], [Linux-westwood] in
//! `docs/bibliography.md`):
//! * Bandwidth estimate (Linux `westwood_update_window`, `westwood_filter`): once per window longer
//!   than max(RTT, 50 ms), sample = bytes acked in the window / window length; `bw_ns_est ←
//!   (7 bw_ns_est + sample)/8`, `bw_est ← (7 bw_est + bw_ns_est)/8`; the first sample initialises
//!   both. Duplicate ACKs count one MSS (Linux `westwood_acked_count`). See
//!   [`super::rate_estimators::WestwoodPlusBw`].
//! * `rtt` = last raw RTT sample, `rtt_min` = its minimum, reset to the next sample after an RTO
//!   (Linux `reset_rtt_min`; parameter `rtt_min_reset_on_rto`).
//! * BWE·RTTmin = max(bw_est · rtt_min, 2 MSS) (Linux `tcp_westwood_bw_rttmin`; TCP Limit eq. (2)).
//! * Faster Recovery, fast retransmit: ssthresh = max(BWE·RTTmin, 2 MSS) (Westwood "3 DUPACKs"
//!   rule); the machine sets cwnd = ssthresh.
//! * End of fast recovery: cwnd = ssthresh = max(BWE·RTTmin, 2 MSS), recomputed then (Linux
//!   `CA_EVENT_COMPLETE_CWR`; may exceed the pre-loss window).
//! * Timeout: ssthresh = max(BWE·RTTmin, 2 MSS) on every expiry (Linux `CA_EVENT_LOSS`); cwnd = 1 MSS
//!   (machine); rtt_min reset.
//! * Slow start and congestion avoidance: Reno, through [`crate::reno::RenoIncrease`] (ABC as the
//!   scenario says).
//!
//! Parameters: `faster_recovery` (`linux` | `linux_reno_recovery` | `original`), `min_window_ms`
//! (50), `rtt_min_reset_on_rto` (true).
//!
//! Differences from the reference code / the papers (reasons):
//! * Linux keeps Reno's halving (`tcp_reno_ssthresh`) as ssthresh *during* recovery and applies
//!   BWE·RTTmin only when recovery completes; the default here uses BWE·RTTmin already at the fast
//!   retransmit (the Westwood papers' rule and the ns-3 one), so the recovery sends at the estimated
//!   rate. `faster_recovery = linux_reno_recovery` gives the exact Linux sequence.
//! * The original Westwood caps: on 3 dupacks `ssthresh = CWE; if cwnd > ssthresh: cwnd = ssthresh`,
//!   and Reno's recovery exit sets cwnd = ssthresh of the loss (no recomputation, never above the
//!   pre-loss cwnd): `faster_recovery = original`. The machine sets cwnd = ssthresh at the fast
//!   retransmit whatever the algorithm does, so in this variant the cap `min(cwnd_at_loss, ssthresh)`
//!   is applied at the end of recovery.
//! * Windows are bytes: BWE·RTTmin is not floored to whole packets as Linux does.
//! * With this seam slow start is `cwnd <= ssthresh` (FreeBSD), so after `cwnd = ssthresh` at the end
//!   of recovery the next ACK still counts as slow start (Linux: `cwnd < ssthresh`, CA at once). The
//!   difference is one ACK's growth.
//! * Estimator details (bytes/s in f64 and ns instead of bytes/jiffy, no fast-path byte count, the
//!   first window starts at the first ACK, rtt_min reset to the next fresh sample): see
//!   [`super::rate_estimators`].

use std::time::Duration;

use super::rate_estimators::WestwoodPlusBw;
use crate::params::{ParamReader, ParamSpec};
use crate::reno::RenoIncrease;
use crate::{half_window, AckSample, CcError, CcInit, CongestionControl, LossEvent, LossKind, Metric, ParamMap, RecoveryExit, Window};

pub const NAME: &str = "westwood";

pub fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::choice(
            "faster_recovery",
            FasterRecovery::Linux,
            "linux: ssthresh = BWE*RTTmin at fast retransmit, cwnd = ssthresh = BWE*RTTmin at recovery end; \
             linux_reno_recovery: Reno halving during recovery (exact tcp_westwood.c); original: Westwood 2001 cap cwnd = min(cwnd, ssthresh)",
        ),
        ParamSpec::number(
            "min_window_ms",
            "ms",
            50.0,
            0.0,
            10_000.0,
            "floor of the bandwidth-sampling window max(RTT, this) (Linux TCP_WESTWOOD_RTT_MIN = HZ/20)",
        ),
        ParamSpec::boolean(
            "rtt_min_reset_on_rto",
            true,
            "after a timeout the next RTT sample replaces RTTmin (Linux reset_rtt_min)",
        ),
    ]
}

crate::param_choice! {
/// Which Faster Recovery rule set (`faster_recovery`).
pub enum FasterRecovery {
    /// ssthresh = BWE·RTTmin at the fast retransmit; cwnd = ssthresh = BWE·RTTmin at recovery end.
    Linux = "linux",
    /// Linux exactly: Reno ssthresh during recovery, BWE·RTTmin at recovery end.
    LinuxRenoRecovery = "linux_reno_recovery",
    /// Westwood 2001: ssthresh = BWE·RTTmin at the loss; at recovery end cwnd = min(cwnd at loss,
    /// ssthresh).
    Original = "original",
}
}

#[derive(Clone, Debug)]
pub struct Westwood {
    variant: FasterRecovery,
    rtt_min_reset_on_rto: bool,
    abc_limit: u32,
    increase: RenoIncrease,
    bw: WestwoodPlusBw,
    cwnd_at_loss: u64,
    fast_retransmits: u64,
    timeouts: u64,
}

impl Westwood {
    pub fn new(given: &ParamMap, init: &CcInit) -> Result<Westwood, CcError> {
        let specs = params();
        let p = ParamReader::new(NAME, &specs, given)?;
        let variant = p.choice("faster_recovery");
        let min_window: Duration = p.millis("min_window_ms");
        Ok(Westwood {
            variant,
            rtt_min_reset_on_rto: p.bool("rtt_min_reset_on_rto"),
            abc_limit: init.abc_limit_segments,
            increase: RenoIncrease::default(),
            bw: WestwoodPlusBw::new(min_window),
            cwnd_at_loss: init.initial_cwnd_bytes,
            fast_retransmits: 0,
            timeouts: 0,
        })
    }

    /// Estimator update for one ACK, without any window change (used by TCP Limit on Westwood).
    pub fn observe(&mut self, ack: &AckSample, mss: u64) {
        self.bw.on_ack(ack, mss);
    }

    /// max(BWE · RTTmin, 2 MSS) in bytes.
    pub fn bw_rttmin_bytes(&self, mss: u64) -> u64 {
        self.bw.bw_rttmin_bytes(mss)
    }

    pub fn estimator(&self) -> &WestwoodPlusBw {
        &self.bw
    }
}

impl CongestionControl for Westwood {
    fn name(&self) -> &'static str {
        NAME
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        self.observe(ack, w.mss_bytes);
        self.increase.on_ack(w, ack, self.abc_limit);
    }

    fn ssthresh_after_loss(&mut self, w: &Window, loss: &LossEvent) -> u64 {
        self.increase.reset();
        let mss = w.mss_bytes;
        let cwe = self.bw.bw_rttmin_bytes(mss);
        match loss.kind {
            LossKind::FastRetransmit => {
                self.fast_retransmits += 1;
                self.cwnd_at_loss = w.cwnd_bytes;
                match self.variant {
                    // Westwood "3 DUPACKs": ssthresh = BWE*RTTmin (TCP Limit eq. (2)).
                    FasterRecovery::Linux | FasterRecovery::Original => cwe,
                    // Linux .ssthresh = tcp_reno_ssthresh: max(cwnd/2, 2) packets.
                    FasterRecovery::LinuxRenoRecovery => half_window(w.cwnd_bytes, mss),
                }
            }
            LossKind::Timeout { .. } => {
                // Linux CA_EVENT_LOSS: ssthresh = BWE*RTTmin, then take a fresh RTTmin.
                self.timeouts += 1;
                if self.rtt_min_reset_on_rto {
                    self.bw.request_rtt_min_reset();
                }
                cwe
            }
        }
    }

    fn on_recovery_exit(&mut self, w: &mut Window, exit: &RecoveryExit) {
        if exit.after_timeout {
            return; // Linux: no COMPLETE_CWR after CA_Loss; slow start continues to ssthresh.
        }
        self.increase.reset();
        match self.variant {
            FasterRecovery::Linux | FasterRecovery::LinuxRenoRecovery => {
                // Linux CA_EVENT_COMPLETE_CWR: cwnd = ssthresh = BWE*RTTmin (may exceed pre-loss cwnd).
                let v = self.bw.bw_rttmin_bytes(w.mss_bytes);
                w.ssthresh_bytes = v;
                w.set_cwnd(v);
            }
            FasterRecovery::Original => {
                // Reno deflation to ssthresh, with Westwood's cap at the pre-loss window.
                w.set_cwnd(self.cwnd_at_loss.min(w.ssthresh_bytes));
            }
        }
    }

    fn metrics(&self, out: &mut Vec<Metric>) {
        let rtt_min_s = self.bw.rtt_min().map_or(0.0, |d| d.as_secs_f64());
        out.extend_from_slice(&[
            ("bw_est_bytes_per_s", self.bw.bw_est()),
            ("bw_ns_est_bytes_per_s", self.bw.bw_ns_est()),
            ("bw_last_sample_bytes_per_s", self.bw.last_sample()),
            ("bw_samples", self.bw.samples() as f64),
            ("bw_window_bytes", self.bw.bytes_in_window() as f64),
            ("rtt_min_ms", rtt_min_s * 1e3),
            ("bwe_rttmin_bytes", self.bw.bw_est() * rtt_min_s),
            ("abc_bytes_acked", self.increase.bytes_acked_in_ca as f64),
            ("fast_retransmits", self.fast_retransmits as f64),
            ("timeouts", self.timeouts as f64),
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Script;
    use crate::{ParamValue, Time};
    use proptest::prelude::*;

    const MSS: u64 = 1000;

    fn westwood_with(pairs: &[(&str, ParamValue)]) -> Script<Westwood> {
        let init = Script::<Westwood>::init(MSS, 10, 2);
        let given: ParamMap = pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        Script::new(Westwood::new(&given, &init).unwrap(), init)
    }

    fn westwood() -> Script<Westwood> {
        westwood_with(&[])
    }

    /// Feeds a steady ACK stream: one `MSS` ACK every `spacing_ms`, RTT `rtt_ms`, `n` ACKs.
    fn stream(s: &mut Script<Westwood>, n: u64, spacing_ms: u64, rtt_ms: u64) {
        s.ack_spacing = Duration::from_millis(spacing_ms);
        s.rtt = Some(Duration::from_millis(rtt_ms));
        for _ in 0..n {
            s.ack(MSS);
        }
    }

    #[test]
    fn bandwidth_sample_once_per_max_rtt_50ms_window() {
        // RTT 20 ms < 50 ms: the window is 50 ms. ACKs of 1000 B every 10 ms from t = 10 ms.
        let mut s = westwood();
        s.ack_spacing = Duration::from_millis(10);
        s.rtt = Some(Duration::from_millis(20));
        s.ack(MSS); // t = 10: opens the window (its bytes count in it)
        for _ in 0..5 {
            s.ack(MSS); // t = 20..60: delta <= 50 until t = 60 (50 is not > 50)
        }
        assert_eq!(s.metric("bw_samples"), Some(0.0), "delta = 50 ms is not > max(20, 50) ms");
        s.ack(MSS); // t = 70: delta = 60 > 50 -> sample = 6000 B (ACKs at 10..60) / 0.060 s
        assert_eq!(s.metric("bw_samples"), Some(1.0));
        assert!((s.metric("bw_last_sample_bytes_per_s").unwrap() - 100_000.0).abs() < 1e-6);
        // RTT 120 ms > 50 ms: the next window must exceed 120 ms.
        s.rtt = Some(Duration::from_millis(120));
        for _ in 0..12 {
            s.ack(MSS); // t = 80..190: delta <= 120
        }
        assert_eq!(s.metric("bw_samples"), Some(1.0));
        s.ack(MSS); // t = 200: delta = 130 > 120 -> second sample
        assert_eq!(s.metric("bw_samples"), Some(2.0));
        // Window [70, 200): ACKs at 70..190 = 13 ACKs = 13000 B over 0.130 s = 100000 B/s.
        assert!((s.metric("bw_last_sample_bytes_per_s").unwrap() - 100_000.0).abs() < 1e-6);
    }

    #[test]
    fn cascaded_filter_values_by_hand() {
        // RTT 100 ms, ACKs every 10 ms; windows close every 110 ms (delta > 100 ms): 11 ACKs each.
        let mut s = westwood();
        s.ack_spacing = Duration::from_millis(10);
        s.rtt = Some(Duration::from_millis(100));
        for _ in 0..12 {
            s.ack(MSS); // t = 10..120; closes at t = 120 with 11 ACKs over 110 ms
        }
        let first = 11_000.0 / 0.110; // 100000 B/s
        assert!((s.metric("bw_est_bytes_per_s").unwrap() - first).abs() < 1e-6, "first sample initialises both");
        assert!((s.metric("bw_ns_est_bytes_per_s").unwrap() - first).abs() < 1e-6);
        // Next window opened by the 1000 B ACK at t = 120; then ACKs of 2000 B every 10 ms. It closes
        // at t = 230 (delta 110 ms) holding 1000 + 10 * 2000 = 21000 B (t = 120..220).
        for _ in 0..11 {
            s.ack(2 * MSS);
        }
        assert_eq!(s.metric("bw_samples"), Some(2.0));
        let sample = 21_000.0 / 0.110; // 190909.09
        assert!((s.metric("bw_last_sample_bytes_per_s").unwrap() - sample).abs() < 1e-6);
        let ns = (7.0 * first + sample) / 8.0; // 111363.64
        let bw = (7.0 * first + ns) / 8.0; // 101420.45
        assert!((s.metric("bw_ns_est_bytes_per_s").unwrap() - ns).abs() < 1e-6);
        assert!((s.metric("bw_est_bytes_per_s").unwrap() - bw).abs() < 1e-6);
        assert!((bw - 101_420.454_545).abs() < 1e-3);
    }

    #[test]
    fn dupacks_count_one_segment_in_the_bandwidth_sample() {
        let mut s = westwood();
        s.ack_spacing = Duration::from_millis(10);
        s.rtt = Some(Duration::from_millis(40));
        s.ack(MSS); // t = 10, opens the window
        s.dupack();
        s.dupack();
        s.dupack(); // t = 20, 30, 40: +3000 accounted
        s.ack(5 * MSS); // t = 50: 5000 - 3000 = 2000 new
        assert_eq!(s.metric("bw_window_bytes"), Some(6000.0)); // 1000 + 3000 + 2000: the 5 segments once
        s.ack(MSS); // t = 60: delta = 50, not > 50
        s.ack(MSS); // t = 70: closes: 7000 B (t = 10..60) / 60 ms
        assert!((s.metric("bw_last_sample_bytes_per_s").unwrap() - 7000.0 / 0.060).abs() < 1e-6);
    }

    /// A flow with BWE = 100000 B/s and RTTmin = 40 ms: BWE*RTTmin = 4000 B.
    fn settled() -> Script<Westwood> {
        let mut s = westwood();
        // 1000 B every 10 ms = 100000 B/s, RTT 40 ms: windows of 6 ACKs over 60 ms.
        stream(&mut s, 60, 10, 40);
        assert!((s.metric("bw_est_bytes_per_s").unwrap() - 100_000.0).abs() < 1e-6);
        assert_eq!(s.metric("rtt_min_ms"), Some(40.0));
        s
    }

    #[test]
    fn fast_retransmit_sets_ssthresh_to_bwe_times_rttmin() {
        let mut s = settled();
        s.w.cwnd_bytes = 30_000;
        s.w.ssthresh_bytes = 10_000;
        assert_eq!(s.loss_fast_retransmit(30_000), 4_000); // 100000 B/s * 0.040 s
        assert_eq!(s.w.cwnd_bytes, 4_000, "machine: cwnd = ssthresh");
    }

    #[test]
    fn fast_retransmit_floor_is_two_segments() {
        let mut s = westwood(); // no bandwidth sample yet: BWE = 0
        s.w.cwnd_bytes = 30_000;
        assert_eq!(s.loss_fast_retransmit(30_000), 2 * MSS);
    }

    #[test]
    fn recovery_exit_sets_cwnd_and_ssthresh_to_bwe_times_rttmin_even_above_pre_loss_window() {
        let mut s = settled();
        s.w.cwnd_bytes = 3_000;
        s.loss_fast_retransmit(3_000); // ssthresh = 4000 (> pre-loss cwnd 3000)
        // More delivery during recovery at 100000 B/s keeps BWE; exit with little in flight.
        s.exit_recovery(1_000, false);
        assert_eq!(s.w.cwnd_bytes, 4_000, "Linux COMPLETE_CWR: cwnd = BWE*RTTmin, not min(ssthresh, flight + MSS)");
        assert_eq!(s.w.ssthresh_bytes, 4_000);
    }

    #[test]
    fn recovery_exit_recomputes_bwe_at_the_end_of_recovery() {
        let mut s = settled();
        s.w.cwnd_bytes = 30_000;
        assert_eq!(s.loss_fast_retransmit(30_000), 4_000);
        // During recovery the RTT sample drops to 20 ms: RTTmin = 20 ms, BWE unchanged -> 2000 B.
        s.in_recovery = true;
        s.rtt = Some(Duration::from_millis(20));
        s.ack(MSS);
        s.exit_recovery(10_000, false);
        assert_eq!(s.w.cwnd_bytes, 2_000);
        assert_eq!(s.w.ssthresh_bytes, 2_000);
    }

    #[test]
    fn linux_reno_recovery_halves_during_recovery_then_uses_bwe() {
        let mut s = westwood_with(&[("faster_recovery", ParamValue::Text("linux_reno_recovery".into()))]);
        stream(&mut s, 60, 10, 40);
        s.w.cwnd_bytes = 30_000;
        assert_eq!(s.loss_fast_retransmit(28_000), 15_000, "tcp_reno_ssthresh: cwnd / 2");
        s.exit_recovery(10_000, false);
        assert_eq!(s.w.cwnd_bytes, 4_000);
        assert_eq!(s.w.ssthresh_bytes, 4_000);
    }

    #[test]
    fn original_variant_caps_cwnd_at_the_pre_loss_window() {
        let mut s = westwood_with(&[("faster_recovery", ParamValue::Text("original".into()))]);
        stream(&mut s, 60, 10, 40);
        s.w.cwnd_bytes = 3_000;
        assert_eq!(s.loss_fast_retransmit(3_000), 4_000, "ssthresh = CWE even above cwnd");
        s.exit_recovery(1_000, false);
        assert_eq!(s.w.cwnd_bytes, 3_000, "cwnd = min(cwnd at loss, ssthresh)");
        assert_eq!(s.w.ssthresh_bytes, 4_000, "ssthresh keeps CWE: slow start up to it");
        let mut s = westwood_with(&[("faster_recovery", ParamValue::Text("original".into()))]);
        stream(&mut s, 60, 10, 40);
        s.w.cwnd_bytes = 30_000;
        s.loss_fast_retransmit(30_000);
        s.rtt = Some(Duration::from_millis(20)); // would change BWE*RTTmin, but no recomputation
        s.in_recovery = true;
        s.ack(MSS);
        s.exit_recovery(10_000, false);
        assert_eq!(s.w.cwnd_bytes, 4_000, "ssthresh of the loss, not recomputed");
    }

    #[test]
    fn timeout_sets_ssthresh_to_bwe_rttmin_and_resets_rtt_min() {
        let mut s = settled();
        s.w.cwnd_bytes = 30_000;
        assert_eq!(s.loss_timeout(30_000, 1), 4_000);
        assert_eq!(s.w.cwnd_bytes, MSS, "machine: loss window");
        // Next sample 60 ms replaces RTTmin 40 ms (reset), later smaller samples lower it again.
        s.rtt = Some(Duration::from_millis(60));
        s.ack(MSS);
        assert_eq!(s.metric("rtt_min_ms"), Some(60.0));
        s.rtt = Some(Duration::from_millis(50));
        s.ack(MSS);
        assert_eq!(s.metric("rtt_min_ms"), Some(50.0));
        // Repeated timeouts recompute each time (Linux CA_EVENT_LOSS on every expiry).
        let again = s.loss_timeout(MSS, 2);
        assert_eq!(again, (s.metric("bw_est_bytes_per_s").unwrap() * 0.050) as u64);
    }

    #[test]
    fn rtt_min_reset_can_be_disabled() {
        let mut s = westwood_with(&[("rtt_min_reset_on_rto", ParamValue::Bool(false))]);
        stream(&mut s, 60, 10, 40);
        s.loss_timeout(30_000, 1);
        s.rtt = Some(Duration::from_millis(60));
        s.ack(MSS);
        assert_eq!(s.metric("rtt_min_ms"), Some(40.0));
    }

    #[test]
    fn timeout_recovery_exit_leaves_slow_start_alone() {
        let mut s = settled();
        s.w.cwnd_bytes = 30_000;
        s.loss_timeout(30_000, 1);
        s.ack(MSS);
        s.ack(MSS);
        let before = s.w;
        s.exit_recovery(2_000, true);
        assert_eq!(s.w, before);
    }

    #[test]
    fn slow_start_and_congestion_avoidance_are_reno() {
        let mut s = westwood();
        assert_eq!(s.w.cwnd_bytes, 10_000);
        s.ack(2 * MSS);
        assert_eq!(s.w.cwnd_bytes, 12_000, "slow start with ABC L = 2");
        s.w.ssthresh_bytes = 5_000;
        for _ in 0..11 {
            s.ack(MSS);
        }
        assert_eq!(s.w.cwnd_bytes, 12_000, "11000 of 12000 bytes counted");
        s.ack(MSS);
        assert_eq!(s.w.cwnd_bytes, 13_000, "+1 MSS per window of bytes acked");
        s.in_recovery = true;
        s.ack(MSS);
        assert_eq!(s.w.cwnd_bytes, 13_000, "no growth in recovery");
    }

    #[test]
    fn min_window_parameter_is_validated() {
        let init = Script::<Westwood>::init(MSS, 10, 2);
        let mut given = ParamMap::new();
        given.insert("min_window_ms".into(), ParamValue::Number(-1.0));
        assert!(Westwood::new(&given, &init).is_err());
        given.insert("min_window_ms".into(), ParamValue::Number(10.0));
        let mut s = Script::new(Westwood::new(&given, &init).unwrap(), init);
        s.ack_spacing = Duration::from_millis(5);
        s.rtt = Some(Duration::from_millis(1));
        for _ in 0..3 {
            s.ack(MSS); // t = 5, 10, 15: 15 - 5 = 10, not > 10
        }
        assert_eq!(s.metric("bw_samples"), Some(0.0));
        s.ack(MSS); // t = 20: closes
        assert_eq!(s.metric("bw_samples"), Some(1.0));
        assert_eq!(s.now, Time::from_millis(20));
    }

    fn run_ops(ops: &[crate::testkit::strategies::paced::Op], seed: u64) -> Vec<u64> {
        let mut init = Script::<Westwood>::init(1448, 10, 2);
        init.rng = crate::Rng::new(seed, 1);
        let mut s = Script::new(Westwood::new(&ParamMap::new(), &init).unwrap(), init);
        crate::testkit::strategies::paced::run(&mut s, ops)
    }

    proptest! {
        #[test]
        fn random_event_sequences_keep_invariants_and_are_deterministic(
            ops in proptest::collection::vec(crate::testkit::strategies::paced::op(), 1..400),
            seed in any::<u64>(),
        ) {
            let a = run_ops(&ops, seed);
            let b = run_ops(&ops, seed);
            prop_assert_eq!(a, b);
        }
    }
}
