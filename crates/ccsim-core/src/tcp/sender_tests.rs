//! Scripted sequences for the machine itself (entry points, the algorithm's events, slow start,
//! Karn, the RTO and its backoff, the Linux knobs), with hand-computed values.
use std::time::Duration;

use ccsim_cc::{AckSample, Cc, CongestionControl, CwndEvent, LossEvent, Time, Window};

use super::testkit::*;
use super::*;
use crate::scenario::TcpConfig;
use crate::scenario::SlowStartRule;

/// Each entry point counts itself in `changes` (the recorder copies a flow's last row while the
/// count stands still, `sim/recorder.rs`): a new row must be read after any of them.
#[test]
fn every_entry_point_counts_a_change() {
    let (mut s, mut out) = sender(false);
    let mut last = s.changes();
    assert!(last > 0, "start counts");
    let mut step = |s: &mut Sender, what: &str, f: &dyn Fn(&mut Sender, &mut Vec<Packet>)| {
        f(s, &mut out);
        assert!(s.changes() > last, "{what} did not count a change");
        last = s.changes();
    };
    step(&mut s, "on_ack", &|s, out| {
        s.on_ack(at(40), &ack(MSS, 0, false), &[], out);
    });
    step(&mut s, "on_timer", &|s, out| s.on_timer(at(100_000), out));
    step(&mut s, "on_rto", &|s, out| s.on_rto(at(200_000), out));
    step(&mut s, "stop", &|s, _| s.stop());
    step(&mut s, "resume", &|s, out| s.resume(at(300_000), out));
    step(&mut s, "app_wrote", &|s, out| s.app_wrote(at(300_001), 50 * MSS, out));
}

/// Records the `cwnd_event`s the machine sends; NewReno-like otherwise.
struct EventRecorder(std::sync::Arc<std::sync::Mutex<Vec<CwndEvent>>>);

impl CongestionControl for EventRecorder {
    fn name(&self) -> &'static str {
        "recorder"
    }
    fn on_ack(&mut self, _w: &mut Window, _ack: &AckSample) {}
    fn ssthresh_after_loss(&mut self, w: &Window, _loss: &LossEvent) -> u64 {
        ccsim_cc::half_window(w.cwnd_bytes, w.mss_bytes)
    }
    fn cwnd_event(&mut self, _w: &mut Window, _now: Time, ev: CwndEvent) {
        self.0.lock().unwrap().push(ev);
    }
}

#[test]
fn cwnd_events_at_tx_start_rto_recovery_exit_and_restart_after_idle() {
    let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let taken = |e: &std::sync::Arc<std::sync::Mutex<Vec<CwndEvent>>>| std::mem::take(&mut *e.lock().unwrap());
    let c = cfg(false);
    let mut s = Sender::new(0, &c, Cc::Boxed(Box::new(EventRecorder(events.clone()))), None);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    assert_eq!(taken(&events), vec![CwndEvent::TxStart]);
    // Three dupacks: fast retransmit; the full ACK ends fast recovery.
    for t in 40..43 {
        s.on_ack(at(t), &ack(0, 0, false), &[], &mut out);
    }
    assert!(s.in_fast_recovery());
    assert_eq!(taken(&events), vec![]);
    let recover = s.recover;
    s.on_ack(at(80), &ack(recover, 40, false), &[], &mut out);
    assert!(!s.in_fast_recovery());
    assert_eq!(taken(&events), vec![CwndEvent::CompleteCwr]);
    // RTO: Loss, and no CompleteCwr when its recovery ends.
    s.on_rto(at(2000), &mut out);
    assert_eq!(taken(&events), vec![CwndEvent::Loss]);
    s.stop();
    let end = s.snd_max;
    s.on_ack(at(2100), &ack(end, 2000, false), &[], &mut out);
    assert!(s.done());
    assert_eq!(taken(&events), vec![]);
    // Resume after an idle period longer than the RTO: restart, then TX start.
    s.resume(at(60_000), &mut out);
    assert_eq!(taken(&events), vec![CwndEvent::CwndRestart, CwndEvent::TxStart]);
}

#[test]
fn initial_window_is_sent_at_start() {
    let (s, out) = sender(false);
    assert_eq!(out.len(), 10);
    assert_eq!(s.snd_max, 10 * MSS);
    assert!(s.rto_deadline.is_some(), "RFC 6298 5.1: timer started with the first data");
}

#[test]
fn slow_start_grows_by_acked_bytes_and_refills_the_window() {
    let (mut s, _) = sender(false);
    let mut out = Vec::new();
    s.on_ack(at(40), &ack(2 * MSS, 0, false), &[], &mut out);
    // ABC L=2: cwnd 10000 + 2000 = 12000; flight 8000 -> 4 new segments.
    assert_eq!(s.w.cwnd_bytes, 12 * MSS);
    assert_eq!(out.len(), 4);
    assert_eq!(s.snd_max, 14 * MSS);
}

#[test]
fn karns_rule_no_rtt_sample_from_a_retransmitted_segment() {
    let (mut s, _) = sender_with(rfc6298_timer(cfg(false)), None);
    let mut out = Vec::new();
    s.on_rto(at(1000), &mut out);
    let backed_off = s.rtt.rto();
    assert_eq!(backed_off, Duration::from_secs(2), "initial 1 s RTO doubled");
    s.on_ack(at(1040), &ack(MSS, 1000, true), &[], &mut out);
    assert_eq!(s.rtt.srtt(), None, "the echoed segment was a retransmission: no sample");
    assert_eq!(s.rtt.rto(), backed_off, "backoff kept until a valid sample (RFC 6298 5.7)");
    s.on_ack(at(1100), &ack(3 * MSS, 1060, false), &[], &mut out);
    assert_eq!(s.rtt.srtt(), Some(Duration::from_millis(40)));
    assert_eq!(s.rtt.rto(), Duration::from_millis(200), "40 + 4*20 = 120 -> min RTO 200 ms");
}

#[test]
fn rto_backs_off_exponentially_and_holds_ssthresh() {
    let (mut s, _) = sender_with(rfc6298_timer(cfg(false)), None);
    let mut out = Vec::new();
    let mut now = at(1000);
    let mut gaps = Vec::new();
    for _ in 0..4 {
        s.on_rto(now, &mut out);
        let next = s.rto_deadline.unwrap();
        gaps.push((next - now).as_millis());
        now = next;
    }
    assert_eq!(gaps, vec![2000, 4000, 8000, 16000]);
    assert_eq!(s.w.ssthresh_bytes, 5 * MSS, "held constant after the first expiry (RFC 5681 3.1)");
    assert_eq!(s.stats.timeouts, 4);
}

/// The default profile (freebsd9, which the fixtures read from python/ccsim/profiles.toml) runs FreeBSD
/// 9's timer: RTO = max(t_rttmin, SRTT + 4 RTTVAR) + `tcp_rexmit_slop`, in whole 1 ms ticks, with
/// t_rttmin = `tcp_rexmit_min` = 30 ms and the slop 200 ms (`tcp_xmit_timer`, `TCP_REXMTVAL`,
/// `TCPT_RANGESET`).
#[test]
fn freebsd9_rto_is_srtt_plus_four_rttvar_plus_200_ms_in_whole_ticks_above_30_ms() {
    let c = cfg(false);
    assert!(matches!(c.rto_estimator, crate::scenario::RtoEstimator::Freebsd));
    assert_eq!((c.min_rto_ns, c.timer_granularity_ns), (30_000_000, 1_000_000));
    let mut out = Vec::new();
    // Sent at 0, acknowledged at 40.6 ms: 40 tick boundaries crossed plus one, a sample of 41 ticks;
    // SRTT 41, RTTVAR 20.5: 41 + 82 = 123 ticks, plus the slop.
    let (mut s, _) = sender(false);
    s.on_ack(Time(40_600_000), &ack(MSS, 0, false), &[], &mut out);
    assert_eq!(s.rtt.rto(), Duration::from_millis(323));
    // A 1 ms path: samples of 2 ticks give SRTT + 4 RTTVAR of 6 ticks and less; the 30 ms floor
    // holds TCP_REXMTVAL, and the slop comes on top: 230 ms, where RFC 6298 would give 200 ms.
    let (mut s, _) = sender(false);
    for k in 1..=100 {
        s.on_ack(at(2 * k), &ack(k * MSS, 2 * k - 1, false), &[], &mut out);
        assert_eq!(s.rtt.rto(), Duration::from_millis(230), "sample {k}");
    }
    assert!(s.rtt.srtt().unwrap() <= Duration::from_millis(2));
}

/// The default (freebsd9) timer before any sample: `TCPTV_RTOBASE` (3 s) is `TCP_REXMTVAL`, and each
/// expiry sets it x `tcp_backoff[shift]` plus the 200 ms slop (`tcp_timer_rexmt`, tcp_timer.c).
#[test]
fn freebsd9_rto_backs_off_rexmtval_and_adds_the_slop() {
    let (mut s, _) = sender(false);
    assert_eq!(s.rto_deadline, Some(at(3000)), "TCPTV_RTOBASE");
    let mut out = Vec::new();
    let mut now = at(3000);
    let mut gaps = Vec::new();
    for _ in 0..5 {
        s.on_rto(now, &mut out);
        let next = s.rto_deadline.unwrap();
        gaps.push((next - now).as_millis());
        now = next;
    }
    assert_eq!(gaps, vec![6200, 12200, 24200, 48200, 64000], "the last one at TCPTV_REXMTMAX (64 s)");
    assert_eq!(s.stats.timeouts, 5);
}

#[test]
fn dupacks_after_rto_go_back_n_do_not_restart_fast_retransmit() {
    // The ns-3 3.44 failure: RFC 6582 3.2 step 1 allows a new fast retransmit only once the
    // cumulative ACK covers `recover` (= snd_max at the timeout).
    let (mut s, _) = sender(false);
    let mut out = Vec::new();
    s.on_rto(at(1000), &mut out);
    let ssthresh = s.w.ssthresh_bytes;
    // The receiver held segments 1..3: the ACK of the retransmitted segment 0 jumps to 4000.
    s.on_ack(at(1040), &ack(4 * MSS, 1000, true), &[], &mut out);
    assert!(s.snd_una < s.recover);
    out.clear();
    // Go-back-N retransmissions of data the receiver already has come back as duplicate ACKs.
    for i in 0..5 {
        s.on_ack(at(1050 + i), &ack(4 * MSS, 1041, true), &[], &mut out);
    }
    assert_eq!(s.stats.fast_retransmits, 0, "no fast retransmit below recover");
    assert!(!s.in_fast_recovery());
    assert_eq!(s.w.ssthresh_bytes, ssthresh, "no second reduction");
    // Once recover is covered, three dupacks do start a fast retransmit again.
    s.on_ack(at(1100), &ack(10 * MSS, 1060, false), &[], &mut out);
    let una = s.snd_una;
    for i in 0..3 {
        s.on_ack(at(1110 + i), &ack(una, 1090, false), &[], &mut out);
    }
    assert_eq!(s.stats.fast_retransmits, 1);
}

#[test]
fn linux_knobs_reach_the_window_and_the_rto() {
    let linux_rto = crate::scenario::RtoEstimator::Linux;
    // min_rto: Linux's TCP_RTO_MIN, 200 ms.
    let c = TcpConfig { slow_start_rule: SlowStartRule::Linux, rto_estimator: linux_rto, min_rto_ns: 200_000_000, ..cfg(true) };
    let (mut s, _) = sender_with(c, None);
    assert_eq!(s.w.slow_start, ccsim_cc::SlowStartRule::Linux);
    let mut out = Vec::new();
    s.on_ack(at(40), &ack(2 * MSS, 0, false), &[], &mut out);
    assert_eq!(s.rtt.rto(), Duration::from_millis(240), "SRTT 40 ms + max(2 * 40 ms, min RTO 200 ms)");
    let (mut s, _) = sender(true);
    s.on_ack(at(40), &ack(2 * MSS, 0, false), &[], &mut out);
    // freebsd9 (tcp_xmit_timer): the sample is 40 tick boundaries + 1 = 41 ticks, SRTT 41, RTTVAR 20.5;
    // TCP_REXMTVAL 41 + 82 = 123 ticks, TCPT_RANGESET adds the 200 ms slop.
    assert_eq!(s.rtt.rto(), Duration::from_millis(323), "FreeBSD: SRTT + 4 RTTVAR + 200 ms");
    let (mut s, _) = sender_with(rfc6298_timer(cfg(true)), None);
    s.on_ack(at(40), &ack(2 * MSS, 0, false), &[], &mut out);
    assert_eq!(s.rtt.rto(), Duration::from_millis(200), "RFC 6298: max(200 ms, 40 + 4 * 20 ms)");
}
