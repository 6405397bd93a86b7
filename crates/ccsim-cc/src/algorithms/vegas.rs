//! # TCP Vegas, as Linux `net/ipv4/tcp_vegas.c` runs it
//!
//! No BPF twin yet: this machine's kernel has no `tcp_vegas` module, and a twin under
//! `python/ccsim/kernel/bpf/` is still to be written (issue 35).
//!
//! Papers and reference: L. Brakmo, S. O'Malley, L. Peterson, "TCP Vegas: new techniques for
//! congestion detection and avoidance", SIGCOMM 1994; L. Brakmo, L. Peterson, "TCP Vegas: end to end
//! congestion avoidance on a global Internet", IEEE JSAC 13(8), 1995; Linux `tcp_vegas.c` (mainline
//! 6.x) with its module defaults alpha = 2, beta = 4, gamma = 1. Keys [Brakmo95], [Linux-vegas] in
//! `docs/bibliography.md`.
//!
//! Rules implemented (windows in whole segments, as Linux counts them):
//! * **baseRTT** (`tcp_vegas_pkts_acked`): the minimum of all RTT samples (+1 µs, never zero) since
//!   the last (re)start of sending; **minRTT** and **cntRTT**: the minimum and number of samples in
//!   the current RTT.
//! * **Once per RTT** (`tcp_vegas_cong_avoid`), at the first ACK beyond the snd_nxt of the previous
//!   decision: with at most 2 samples in that RTT (probably delayed ACKs), behave as Reno
//!   (`tcp_reno_cong_avoid`); else `diff = cwnd · (minRTT − baseRTT) / baseRTT` segments queued
//!   (integer division), and
//!   * in slow start with diff > gamma: cwnd = min(cwnd, cwnd · baseRTT / minRTT + 1), ssthresh =
//!     min(ssthresh, cwnd) (leave slow start);
//!   * in slow start otherwise: Linux `tcp_slow_start`;
//!   * in congestion avoidance: diff > beta: cwnd − 1 and ssthresh = min(ssthresh, cwnd); diff <
//!     alpha: cwnd + 1; else hold;
//!   * then cwnd ≥ 2 and ssthresh = max(ssthresh, 3/4 cwnd) (`tcp_current_ssthresh`); minRTT and
//!     cntRTT restart.
//! * **Between decisions**: slow start grows per ACK (`tcp_slow_start`); congestion avoidance does not
//!   grow.
//! * **Vegas off** outside the Open state (`tcp_vegas_state`): during fast recovery, after a timeout
//!   until its recovery ends, and in Disorder (a duplicate ACK outside recovery until the next ACK of
//!   new data): Reno (`tcp_reno_cong_avoid`). Back in Open, Vegas restarts its RTT count
//!   (`vegas_enable`). The restart of sending (`CA_EVENT_TX_START`, `CA_EVENT_CWND_RESTART`) also
//!   forgets baseRTT (`tcp_vegas_init`).
//! * **Loss**: Reno (`tcp_reno_ssthresh`): ssthresh = max(cwnd/2, 2) segments; the machine's window
//!   changes; repeated timeouts keep ssthresh (`tcp_enter_loss`). Undo: `tcp_reno_undo_cwnd`.
//! * **End of fast recovery**: cwnd = ssthresh (`tcp_end_cwnd_reduction`).
//!
//! Differences from Linux (and why):
//! * RTT samples are the machine's Karn-safe raw samples; the machine holds back the sample of an ACK
//!   it suspects was delayed (FreeBSD h_ertt), so fewer ACKs count in cntRTT than in Linux, where
//!   every ACK carries a sample. With delayed ACKs a window of 3 segments gives 2 ACKs: Reno.
//! * Disorder is approximated: Linux leaves Open when SACKed or lost segments are outstanding and
//!   returns when none are; here a duplicate ACK outside recovery leaves it and the next ACK of new
//!   data outside recovery returns.
//! * **Slow start is Linux's `cwnd < ssthresh`** ([`super::linux_cong::in_slow_start`]) under every
//!   profile: the module's rules are written against it; the `freebsd9` profile's `cwnd <= ssthresh`
//!   is not applied to this algorithm.
//! * Segments counted from `delivered_bytes` (Linux `acked_sacked`), rounded up.

use super::linux_cong::{cwnd_segments, in_slow_start, slow_start, CongAvoidCount, Delivered};
use crate::params::{ParamReader, ParamSpec};
use crate::time::Time;
use crate::{AckSample, CcError, CcInit, CongestionControl, CwndEvent, LossEvent, LossKind, Metric, ParamMap, RecoveryExit, Window};

pub const NAME: &str = "vegas";

pub fn params() -> Vec<ParamSpec> {
    vec![
        ParamSpec::integer("alpha", "pkts", 2, 0, 1 << 20, "grow cwnd by one segment per RTT while fewer than alpha segments are queued (Linux alpha=2)"),
        ParamSpec::integer("beta", "pkts", 4, 0, 1 << 20, "shrink cwnd by one segment per RTT while more than beta segments are queued (Linux beta=4)"),
        ParamSpec::integer("gamma", "pkts", 1, 0, 1 << 20, "leave slow start once more than gamma segments are queued (Linux gamma=1)"),
    ]
}

/// Why Vegas is off (Linux `doing_vegas_now == 0`): the CA state it left Open for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NotOpen {
    Disorder,
    Recovery,
    Loss,
}

/// TCP Vegas (Linux `struct vegas` and the socket fields it uses).
#[derive(Clone, Debug)]
pub struct Vegas {
    alpha: u64,
    beta: u64,
    gamma: u64,
    mss: u64,
    /// `None`: Vegas on (Open); else the state that turned it off.
    off: Option<NotOpen>,
    beg_snd_nxt: u64,
    cnt_rtt: u32,
    /// µs; u64::MAX before a sample.
    min_rtt_us: u64,
    base_rtt_us: u64,
    /// diff of the last decision (segments), for metrics.
    diff: u64,
    decisions: u64,
    cwnd_cnt: CongAvoidCount,
    delivered: Delivered,
    snd_nxt: u64,
}

impl Vegas {
    pub fn new(given: &ParamMap, init: &CcInit) -> Result<Vegas, CcError> {
        let specs = params();
        let p = ParamReader::new(NAME, &specs, given)?;
        let (alpha, beta) = (p.f64("alpha") as u64, p.f64("beta") as u64);
        if alpha > beta {
            return Err(p.invalid("alpha", format!("{alpha} is above beta = {beta}: no window would be steady")));
        }
        Ok(Vegas {
            alpha,
            beta,
            gamma: p.f64("gamma") as u64,
            mss: init.mss_bytes,
            off: None,
            beg_snd_nxt: 0,
            cnt_rtt: 0,
            min_rtt_us: u64::MAX,
            base_rtt_us: u64::MAX,
            diff: 0,
            decisions: 0,
            cwnd_cnt: CongAvoidCount::default(),
            delivered: Delivered::default(),
            snd_nxt: 0,
        })
    }

    /// Linux `vegas_enable`: decisions resume, the next one a window from now.
    fn enable(&mut self) {
        self.off = None;
        self.beg_snd_nxt = self.snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt_us = u64::MAX;
    }

    /// Linux `tcp_vegas_init`: forget baseRTT and enable.
    fn restart(&mut self) {
        self.base_rtt_us = u64::MAX;
        self.enable();
    }

    /// Linux `tcp_vegas_pkts_acked`.
    fn sample(&mut self, rtt_us: u64) {
        let vrtt = rtt_us + 1;
        self.base_rtt_us = self.base_rtt_us.min(vrtt);
        self.min_rtt_us = self.min_rtt_us.min(vrtt);
        self.cnt_rtt += 1;
    }

    /// The once-per-RTT decision of Linux `tcp_vegas_cong_avoid`, with enough samples.
    fn decide(&mut self, w: &mut Window, acked: u64) {
        let cwnd = cwnd_segments(w);
        let (rtt, base) = (self.min_rtt_us, self.base_rtt_us);
        let target = cwnd * base / rtt;
        let diff = cwnd * (rtt - base) / base;
        self.diff = diff;
        self.decisions += 1;
        let vegas_ssthresh = |w: &Window| w.ssthresh_bytes.min(w.cwnd_bytes);
        if diff > self.gamma && in_slow_start(w) {
            // Too fast: cwnd to the actual rate times baseRTT, plus one for the truncation.
            w.cwnd_bytes = w.cwnd_bytes.min((target + 1) * self.mss);
            w.ssthresh_bytes = vegas_ssthresh(w);
        } else if in_slow_start(w) {
            slow_start(w, acked);
        } else if diff > self.beta {
            w.cwnd_bytes = w.cwnd_bytes.saturating_sub(self.mss);
            w.ssthresh_bytes = vegas_ssthresh(w);
        } else if diff < self.alpha {
            w.cwnd_bytes = w.cwnd_bytes.saturating_add(self.mss);
        }
        w.cwnd_bytes = w.cwnd_bytes.max(2 * self.mss);
        // tcp_current_ssthresh in the Open state: max(ssthresh, 3/4 cwnd).
        let c = cwnd_segments(w);
        w.ssthresh_bytes = w.ssthresh_bytes.max(((c >> 1) + (c >> 2)) * self.mss);
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        NAME
    }

    fn init(&mut self, _w: &mut Window) {
        self.restart();
    }

    fn on_ack(&mut self, w: &mut Window, ack: &AckSample) {
        self.snd_nxt = self.snd_nxt.max(ack.snd_max);
        let acked = self.delivered.take(ack, self.mss);
        // Disorder: Linux leaves Open on a duplicate ACK and returns when the SACKed and lost
        // segments are gone.
        if !ack.in_recovery {
            if ack.is_dupack && self.off.is_none() {
                self.off = Some(NotOpen::Disorder);
            } else if ack.bytes_acked > 0 && self.off == Some(NotOpen::Disorder) {
                self.enable();
            }
        }
        if let Some(rtt) = ack.rtt {
            self.sample((rtt.as_nanos() / 1_000) as u64);
        }
        if ack.bytes_acked == 0 || ack.in_recovery {
            return;
        }
        if self.off.is_some() {
            self.cwnd_cnt.reno(w, ack, acked);
            return;
        }
        if ack.snd_una > self.beg_snd_nxt {
            self.beg_snd_nxt = self.snd_nxt;
            if self.cnt_rtt <= 2 {
                self.cwnd_cnt.reno(w, ack, acked);
            } else {
                self.decide(w, acked);
            }
            self.cnt_rtt = 0;
            self.min_rtt_us = u64::MAX;
        } else if in_slow_start(w) {
            slow_start(w, acked);
        }
    }

    /// Linux `tcp_reno_ssthresh`; entering Recovery or Loss turns Vegas off (`tcp_vegas_state`).
    fn ssthresh_after_loss(&mut self, w: &Window, loss: &LossEvent) -> u64 {
        self.cwnd_cnt = CongAvoidCount::default();
        let repeated = matches!(loss.kind, LossKind::Timeout { backoff } if backoff > 1);
        self.off = Some(if matches!(loss.kind, LossKind::Timeout { .. }) { NotOpen::Loss } else { NotOpen::Recovery });
        if repeated && w.ssthresh_bytes != u64::MAX {
            return w.ssthresh_bytes;
        }
        (cwnd_segments(w) >> 1).max(2) * self.mss
    }

    /// Linux `tcp_end_cwnd_reduction` (cwnd = ssthresh after fast recovery), then Open: Vegas on.
    fn on_recovery_exit(&mut self, w: &mut Window, exit: &RecoveryExit) {
        if !exit.after_timeout && w.ssthresh_bytes != u64::MAX {
            w.set_cwnd(w.ssthresh_bytes);
        }
        self.enable();
    }

    /// Linux `tcp_vegas_cwnd_event`: sending (re)starts: forget baseRTT.
    fn cwnd_event(&mut self, _w: &mut Window, _now: Time, ev: CwndEvent) {
        match ev {
            CwndEvent::TxStart | CwndEvent::CwndRestart => self.restart(),
            CwndEvent::Loss => self.off = Some(NotOpen::Loss),
            _ => {}
        }
    }

    fn metrics(&self, out: &mut Vec<Metric>) {
        let ms = |us: u64| if us == u64::MAX { 0.0 } else { us as f64 / 1e3 };
        out.extend_from_slice(&[
            ("base_rtt_ms", ms(self.base_rtt_us)),
            ("min_rtt_ms", ms(self.min_rtt_us)),
            ("cnt_rtt", self.cnt_rtt as f64),
            ("diff_pkts", self.diff as f64),
            ("doing_vegas_now", if self.off.is_none() { 1.0 } else { 0.0 }),
            ("decisions", self.decisions as f64),
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::Script;
    use crate::ParamValue;
    use std::time::Duration;

    const MSS: u64 = 1000;

    fn vegas() -> Script<Vegas> {
        let init = Script::<Vegas>::init(MSS, 10, 2);
        // The scripted window keeps the default (FreeBSD) slow-start rule: Vegas must use Linux's.
        Script::new(Vegas::new(&ParamMap::new(), &init).unwrap(), init)
    }

    /// One RTT on a path of `bdp` segments and base RTT 100 ms: every segment beyond the BDP waits
    /// in the queue, so the RTT is 100 ms · max(cwnd, bdp)/bdp. One ACK per segment.
    fn one_rtt(s: &mut Script<Vegas>, bdp: u64) -> u64 {
        let cwnd = s.w.cwnd_bytes / MSS;
        let rtt = Duration::from_micros(100_000 * cwnd.max(bdp) / bdp);
        s.ack_spacing = rtt / cwnd as u32;
        for _ in 0..cwnd {
            s.ack_rtt(MSS, rtt);
        }
        s.w.cwnd_bytes / MSS
    }

    #[test]
    fn steady_path_holds_between_alpha_and_beta_segments_queued() {
        let mut s = vegas();
        let bdp = 50;
        for _ in 0..200 {
            one_rtt(&mut s, bdp);
        }
        for _ in 0..20 {
            let cwnd = one_rtt(&mut s, bdp);
            let queued = cwnd.saturating_sub(bdp);
            assert!((2..=5).contains(&queued), "cwnd {cwnd}: {queued} segments queued");
            let diff = s.metric("diff_pkts").unwrap();
            assert!((2.0..=4.0).contains(&diff), "diff {diff}");
        }
        assert!(s.w.ssthresh_bytes < u64::MAX, "left slow start on gamma");
    }

    #[test]
    fn slow_start_ends_when_more_than_gamma_segments_queue() {
        // A 16-segment path: IW 10 sees the base RTT 100 ms, the doubled windows queue. At the
        // first decision whose RTT minimum includes queueing, diff = cwnd * (minRTT - base)/base
        // exceeds gamma = 1: cwnd = min(cwnd, cwnd * base/minRTT + 1) and ssthresh = cwnd.
        let mut s = vegas();
        let mut peak = 0;
        for _ in 0..4 {
            peak = peak.max(one_rtt(&mut s, 16));
            if !in_slow_start(&s.w) {
                break;
            }
        }
        assert!(!in_slow_start(&s.w), "still in slow start at cwnd {}", s.w.cwnd_bytes / MSS);
        assert_eq!(s.w.ssthresh_bytes, s.w.cwnd_bytes);
        let diff = s.metric("diff_pkts").unwrap();
        assert!(diff > 1.0, "diff {diff}");
        assert!(s.w.cwnd_bytes / MSS < peak, "cwnd cut to the measured rate: {} from {peak}", s.w.cwnd_bytes / MSS);
    }

    #[test]
    fn congestion_avoidance_moves_one_segment_per_rtt() {
        let mut s = vegas();
        s.w.cwnd_bytes = 40 * MSS;
        s.w.ssthresh_bytes = 20 * MSS;
        // No queue (bdp 100 > cwnd): diff 0 < alpha: +1 per RTT.
        let c1 = one_rtt(&mut s, 100);
        let c2 = one_rtt(&mut s, 100);
        let c3 = one_rtt(&mut s, 100);
        assert_eq!((c2 - c1, c3 - c2), (1, 1));
        // 10 queued (bdp 30): diff 10 > beta: -1 per RTT.
        let d1 = one_rtt(&mut s, 30);
        let d2 = one_rtt(&mut s, 30);
        assert_eq!(d1 - d2, 1);
    }

    #[test]
    fn too_few_samples_fall_back_to_reno() {
        let mut s = vegas();
        s.w.cwnd_bytes = 40 * MSS;
        s.w.ssthresh_bytes = 20 * MSS;
        s.ack_spacing = Duration::from_millis(100);
        // One ACK per RTT for the whole window: two samples per decision, so Reno decides.
        for _ in 0..4 {
            let window = s.w.cwnd_bytes;
            s.ack_rtt(window, Duration::from_millis(100));
        }
        assert_eq!(s.metric("decisions"), Some(0.0));
        assert!(s.w.cwnd_bytes > 40 * MSS, "Reno's additive increase: {}", s.w.cwnd_bytes);
    }

    #[test]
    fn loss_halves_and_vegas_resumes_after_recovery() {
        let mut s = vegas();
        s.w.cwnd_bytes = 40 * MSS;
        assert_eq!(s.loss_fast_retransmit(40 * MSS), 20 * MSS);
        assert_eq!(s.metric("doing_vegas_now"), Some(0.0));
        s.exit_recovery(20 * MSS, false);
        assert_eq!(s.w.cwnd_bytes, 20 * MSS);
        assert_eq!(s.metric("doing_vegas_now"), Some(1.0));
    }

    #[test]
    fn alpha_above_beta_is_rejected() {
        let init = Script::<Vegas>::init(MSS, 10, 2);
        let mut given = ParamMap::new();
        given.insert("alpha".into(), ParamValue::Number(5.0));
        let e = Vegas::new(&given, &init).err().unwrap().to_string();
        assert!(e.contains("vegas.alpha"), "{e}");
    }
}
