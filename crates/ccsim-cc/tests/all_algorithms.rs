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

proptest! {
    // 64 cases in CI; PROPTEST_CASES=N for a deeper run.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(64),
        ..ProptestConfig::default()
    })]

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
