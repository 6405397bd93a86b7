//! The machine with pacing and rate samples (`tcp::pacing`, `tcp::rate_sample`): a scripted
//! algorithm that asks for both, with a fixed cwnd and pacing rate, records the samples it gets.
use std::sync::{Arc, Mutex};

use ccsim_cc::{AckSample, Cc, CongestionControl, ControlRequest, LossEvent, Needs, RateSample, Time, Window};

use super::testkit::*;
use super::*;

/// cwnd 20 segments, pacing at `rate` bytes/s; keeps every rate sample.
struct Scripted {
    rate: u64,
    samples: Arc<Mutex<Vec<RateSample>>>,
    needs: Needs,
}

impl CongestionControl for Scripted {
    fn name(&self) -> &'static str {
        "scripted"
    }
    fn needs(&self) -> Needs {
        self.needs
    }
    fn init(&mut self, w: &mut Window) {
        w.cwnd_bytes = 20 * MSS;
        w.pacing_rate_bytes_per_s = self.rate;
    }
    fn on_ack(&mut self, _w: &mut Window, _ack: &AckSample) {}
    fn cong_control(&mut self, _w: &mut Window, rs: &RateSample) -> ControlRequest {
        self.samples.lock().unwrap().push(*rs);
        ControlRequest::default()
    }
    fn ssthresh_after_loss(&mut self, w: &Window, _loss: &LossEvent) -> u64 {
        w.ssthresh_bytes
    }
}

fn paced(rate: u64, needs: Needs) -> (Sender, Vec<Packet>, Arc<Mutex<Vec<RateSample>>>) {
    let samples = Arc::new(Mutex::new(Vec::new()));
    let cc = Cc::Boxed(Box::new(Scripted { rate, samples: samples.clone(), needs }));
    let mut s = Sender::new(0, &cfg(true), cc, None);
    let mut out = Vec::new();
    s.start(Time::ZERO, &mut out);
    (s, out, samples)
}

/// Drives the pacing timer as the simulation does: fires it at its deadline until `until`.
fn run_pacing(s: &mut Sender, until: Time) -> Vec<Time> {
    let mut departures = Vec::new();
    while let Some(t) = s.pacing_deadline().filter(|&t| t <= until) {
        let mut out = Vec::new();
        s.on_pacing_timer(t, &mut out);
        departures.extend(out.iter().map(|p| p.tx_time));
    }
    departures
}

#[test]
fn pacing_spaces_departures_at_size_over_rate_after_the_first_ten() {
    let rate = 1_250_000; // 10 Mbit/s: 1000 bytes every 800 us
    let (mut s, out, _) = paced(rate, Needs { cong_control: false, pacing: true });
    assert_eq!(out.len(), 10, "Linux paces from the tenth segment on: ten leave at once");
    assert!(out.iter().all(|p| p.tx_time == Time::ZERO));
    assert_eq!(s.pacing_deadline(), Some(Time(800_000)), "the tenth moved the clock by 1000 B / rate");
    let departures = run_pacing(&mut s, at(100));
    assert_eq!(departures.len(), 10, "the rest of the 20-segment window, one per pacing interval");
    for (k, t) in departures.iter().enumerate() {
        assert_eq!(t.0, (k as u64 + 1) * 800_000, "departure {k}");
    }
    assert_eq!(s.pacing_deadline(), None, "window full: the pacer waits for nothing");
}

#[test]
fn without_pacing_the_window_leaves_at_once() {
    let (s, out, _) = paced(1_250_000, Needs::default());
    assert_eq!(out.len(), 20);
    assert_eq!(s.pacing_deadline(), None);
}

/// Rate samples through the machine: a window of 20 sent at once (pacing off) is ACKed one
/// segment per millisecond from 40 ms on; the ACK of segment k (sent at 0 with nothing delivered)
/// gives k+1 segments over 40 + k ms; the first segment sent in reply, at 40 ms, gives the second
/// round's rate (hand-computed below).
#[test]
fn the_algorithm_gets_a_delivery_rate_sample_per_ack() {
    let (mut s, out, samples) = paced(u64::MAX, Needs { cong_control: true, pacing: false });
    assert_eq!(out.len(), 20);
    let mut sent_at = vec![Time::ZERO; 20];
    for k in 0..20u64 {
        let mut o = Vec::new();
        s.on_ack(at(40 + k), &ack((k + 1) * MSS, 0, false), &[], &mut o);
        sent_at.extend(o.iter().map(|_| at(40 + k)));
    }
    let rs = samples.lock().unwrap().clone();
    assert_eq!(rs.len(), 20);
    for (k, r) in rs.iter().enumerate() {
        let k = k as u64;
        assert_eq!(r.delivered_bytes, Some((k + 1) * MSS), "ack {k}");
        assert_eq!(r.interval, Some(std::time::Duration::from_millis(40 + k)), "ack {k}");
        assert_eq!(r.acked_sacked_bytes, MSS);
        assert_eq!(r.delivered_total_bytes, (k + 1) * MSS);
        assert_eq!(r.prior_in_flight_bytes, 20 * MSS, "one out, one in");
    }
    assert!(rs.iter().all(|r| r.is_app_limited), "Linux starts a connection application-limited: the first flight's samples are");
    // The second round: segment 20 was sent at 40 ms when 1 segment was delivered (at 40 ms).
    // Its ACK at 80 ms finds 21 delivered: 20 segments over 40 ms = 500 000 B/s.
    let mut o = Vec::new();
    s.on_ack(at(80), &ack(21 * MSS, 40, false), &[], &mut o);
    let last = *samples.lock().unwrap().last().unwrap();
    assert_eq!((last.delivered_bytes, last.prior_delivered_bytes), (Some(20 * MSS), MSS));
    assert_eq!(last.delivery_rate_bytes_per_s(), Some(500_000.0));
    assert!(!last.is_app_limited);
}
