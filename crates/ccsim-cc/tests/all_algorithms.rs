//! Property test over every registered algorithm: random sequences of ACKs (with RTT samples,
//! spikes included), duplicate ACKs, rounds, fast-retransmit losses, timeouts and recovery exits never
//! panic, never give a non-finite metric or a cwnd below one MSS, and the same seed gives the same
//! trajectory. Driven through the scripted-event kit, so the machine's window changes at a loss are
//! applied as `ccsim-core` applies them.

use std::time::Duration;

use ccsim_cc::testkit::{Backoff, Event, Flight, Script};
use ccsim_cc::{catalog, Cc, ParamMap};
use proptest::prelude::*;

const MSS: u64 = 1448;

/// Fast retransmits only outside recovery and recovery exits only inside it, as the machine does.
fn step() -> impl Strategy<Value = Event> {
    let us = Duration::from_micros;
    prop_oneof![
        8 => (1u64..4, 1_000u64..2_000_000, 0u64..50_000)
            .prop_map(move |(segments, rtt_us, gap_us)| Event::Ack { bytes: segments * MSS, rtt: Some(us(rtt_us)), spacing: Some(us(gap_us)) }),
        2 => Just(Event::DupAck),
        2 => (1_000u64..2_000_000).prop_map(move |max_rtt_us| Event::Round { max_rtt: Some(us(max_rtt_us)) }),
        1 => Just(Event::FastRetransmit { flight: Flight::Cwnd, force: false }),
        1 => (1u32..4).prop_map(|backoff| Event::Timeout { flight: Flight::Cwnd, backoff: Backoff::Given(backoff) }),
        1 => Just(Event::ExitRecovery { flight: Flight::HalfCwnd, after_timeout: false, force: false }),
    ]
}

/// Runs one sequence and returns the cwnd after every step, checking the invariants as it goes.
fn trajectory(name: &str, steps: &[Event]) -> Vec<u64> {
    let init = Script::<Cc>::init(MSS, 3, 2);
    let cc = ccsim_cc::build(name, &ParamMap::new(), &init).expect("defaults are valid");
    let mut s = Script::new(cc, init);
    let mut out = Vec::with_capacity(steps.len());
    for st in steps {
        s.apply(st);
        s.assert_invariants(&(name, st));
        assert!(s.w.ssthresh_bytes >= MSS, "{name}: ssthresh {} below one MSS after {st:?}", s.w.ssthresh_bytes);
        out.push(s.w.cwnd_bytes);
    }
    out
}

/// 64 cases in CI; PROPTEST_CASES=N for a deeper run (both property tests below).
fn proptest_cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: proptest_cases(), ..ProptestConfig::default() })]

    #[test]
    fn every_algorithm_keeps_a_finite_window_of_at_least_one_mss_and_is_deterministic(
        steps in proptest::collection::vec(step(), 1..400)
    ) {
        for info in catalog() {
            let a = trajectory(info.name, &steps);
            let b = trajectory(info.name, &steps);
            prop_assert_eq!(a, b, "{}: same seed, different trajectory", info.name);
        }
    }
}

#[test]
fn catalog_has_every_algorithm_of_the_papers() {
    let names: Vec<&str> = catalog().iter().map(|a| a.name).collect();
    for want in ["newreno", "htcp", "westwood", "hd", "chd", "delay_aimd", "tcp_limit", "pert", "mpert", "binomial"] {
        assert!(names.contains(&want), "{want} is not registered");
    }
}

#[test]
fn catalog_has_todays_baselines() {
    let names: Vec<&str> = catalog().iter().map(|a| a.name).collect();
    for want in ["cubic", "vegas", "bbr"] {
        assert!(names.contains(&want), "{want} is not registered");
    }
}

/// One step for an algorithm with `cong_control`: a rate sample (some without a rate, some
/// application-limited, some with losses), a congestion-state change, a timeout or a restart.
#[derive(Clone, Copy, Debug)]
enum ControlStep {
    Sample { acked_segs: u64, rate_segs: Option<u64>, interval_us: u64, rtt_us: u64, in_flight_segs: u64, lost_segs: u64, app_limited: bool, state: u8, gap_us: u64 },
    Timeout,
    TxStart,
}

fn control_step() -> impl Strategy<Value = ControlStep> {
    prop_oneof![
        12 => (0u64..4, proptest::option::of(0u64..400), 1u64..500_000, 1_000u64..2_000_000, 0u64..500, 0u64..3, any::<bool>(), 0u8..3, 0u64..50_000)
            .prop_map(|(acked_segs, rate_segs, interval_us, rtt_us, in_flight_segs, lost_segs, app_limited, state, gap_us)| ControlStep::Sample {
                acked_segs, rate_segs, interval_us, rtt_us, in_flight_segs, lost_segs, app_limited, state, gap_us
            }),
        1 => Just(ControlStep::Timeout),
        1 => Just(ControlStep::TxStart),
    ]
}

/// Drives `cong_control` with `steps`; returns (cwnd, pacing rate) after each, checking the
/// invariants: cwnd of at least one MSS, a pacing rate set, finite metrics.
fn control_trajectory(name: &str, steps: &[ControlStep]) -> Vec<(u64, u64)> {
    use ccsim_cc::{CaState, CongestionControl, CwndEvent, LossEvent, LossKind, RateSample, Time, Window};
    let init = Script::<Cc>::init(MSS, 10, 0);
    let mut cc = ccsim_cc::build(name, &ParamMap::new(), &init).expect("defaults are valid");
    let mut w = Window::new(10 * MSS, MSS);
    cc.init(&mut w);
    cc.cwnd_event(&mut w, Time::ZERO, CwndEvent::TxStart);
    let (mut now_us, mut delivered, mut lost) = (0u64, 0u64, 0u64);
    let mut out = Vec::with_capacity(steps.len());
    for st in steps {
        let now = |us: u64| Time::from_nanos(us * 1000);
        match *st {
            ControlStep::Sample { acked_segs, rate_segs, interval_us, rtt_us, in_flight_segs, lost_segs, app_limited, state, gap_us } => {
                now_us += gap_us;
                delivered += acked_segs * MSS;
                lost += lost_segs * MSS;
                let rs = RateSample {
                    now: now(now_us),
                    delivered_bytes: rate_segs.map(|r| r * MSS),
                    interval: rate_segs.map(|_| Duration::from_micros(interval_us)),
                    prior_delivered_bytes: delivered.saturating_sub(rate_segs.unwrap_or(0) * MSS),
                    acked_sacked_bytes: acked_segs * MSS,
                    losses_bytes: lost_segs * MSS,
                    prior_in_flight_bytes: (in_flight_segs + acked_segs) * MSS,
                    is_app_limited: app_limited,
                    rtt: Some(Duration::from_micros(rtt_us)),
                    delivered_total_bytes: delivered,
                    delivered_time: now(now_us),
                    lost_total_bytes: lost,
                    bytes_in_flight: in_flight_segs * MSS,
                    ca_state: [CaState::Open, CaState::Recovery, CaState::Loss][state as usize],
                    next_departure: now(now_us),
                    srtt: Some(Duration::from_micros(rtt_us)),
                    ..RateSample::default()
                };
                cc.cong_control(&mut w, &rs);
            }
            ControlStep::Timeout => {
                let loss = LossEvent { now: now(now_us), kind: LossKind::Timeout { backoff: 1 }, bytes_in_flight: w.cwnd_bytes, pipe_bytes: w.cwnd_bytes, min_rtt: None, srtt: None };
                w.ssthresh_bytes = cc.ssthresh_after_loss(&w, &loss).max(MSS);
                cc.cwnd_event(&mut w, now(now_us), CwndEvent::Loss);
                w.set_cwnd(MSS);
            }
            ControlStep::TxStart => cc.cwnd_event(&mut w, now(now_us), CwndEvent::TxStart),
        }
        assert!(w.cwnd_bytes >= MSS, "{name}: cwnd {} below one MSS after {st:?}", w.cwnd_bytes);
        assert!(w.pacing_rate_bytes_per_s > 0, "{name}: no pacing rate after {st:?}");
        let mut m = Vec::new();
        cc.metrics(&mut m);
        for (metric, v) in m {
            assert!(v.is_finite(), "{name}: metric {metric} = {v} after {st:?}");
        }
        out.push((w.cwnd_bytes, w.pacing_rate_bytes_per_s));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: proptest_cases(), ..ProptestConfig::default() })]

    #[test]
    fn every_cong_control_algorithm_keeps_a_window_and_a_pacing_rate_and_is_deterministic(
        steps in proptest::collection::vec(control_step(), 1..400)
    ) {
        use ccsim_cc::CongestionControl;
        let init = Script::<Cc>::init(MSS, 10, 0);
        for info in catalog() {
            let needs = ccsim_cc::build(info.name, &ParamMap::new(), &init).unwrap().needs();
            if !needs.cong_control {
                continue;
            }
            let a = control_trajectory(info.name, &steps);
            let b = control_trajectory(info.name, &steps);
            prop_assert_eq!(a, b, "{}: same seed, different trajectory", info.name);
        }
    }
}
