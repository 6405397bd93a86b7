//! Property test over every registered algorithm: random sequences of ACKs (with RTT samples,
//! spikes included), duplicate ACKs, rounds, fast-retransmit losses, timeouts and recovery exits never
//! panic, never give a non-finite metric or a cwnd below one MSS, and the same seed gives the same
//! trajectory. Driven through the scripted-event kit, so the machine's window changes at a loss are
//! applied as `ccsim-core` applies them.

use std::time::Duration;

use ccsim_cc::testkit::Script;
use ccsim_cc::{catalog, Cc, CongestionControl, ParamMap};
use proptest::prelude::*;

const MSS: u64 = 1448;

#[derive(Clone, Debug)]
enum Step {
    Ack { segments: u64, rtt_us: u64, gap_us: u64 },
    DupAck,
    Round { max_rtt_us: u64 },
    FastRetransmit,
    Timeout { backoff: u32 },
    ExitRecovery,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (1u64..4, 1_000u64..2_000_000, 0u64..50_000).prop_map(|(segments, rtt_us, gap_us)| Step::Ack { segments, rtt_us, gap_us }),
        2 => Just(Step::DupAck),
        2 => (1_000u64..2_000_000).prop_map(|max_rtt_us| Step::Round { max_rtt_us }),
        1 => Just(Step::FastRetransmit),
        1 => (1u32..4).prop_map(|backoff| Step::Timeout { backoff }),
        1 => Just(Step::ExitRecovery),
    ]
}

/// Runs one sequence and returns the cwnd after every step, checking the invariants as it goes.
fn trajectory(name: &str, steps: &[Step]) -> Vec<u64> {
    let init = Script::<Cc>::init(MSS, 3, 2);
    let cc = ccsim_cc::build(name, &ParamMap::new(), &init).expect("defaults are valid");
    let mut s = Script::new(cc, init);
    let mut out = Vec::with_capacity(steps.len());
    for st in steps {
        match *st {
            Step::Ack { segments, rtt_us, gap_us } => {
                s.ack_spacing = Duration::from_micros(gap_us);
                s.ack_rtt(segments * MSS, Duration::from_micros(rtt_us));
            }
            Step::DupAck => {
                s.dupack();
            }
            Step::Round { max_rtt_us } => {
                s.round(Duration::from_micros(max_rtt_us));
            }
            Step::FastRetransmit => {
                if !s.in_recovery {
                    let flight = s.w.cwnd_bytes;
                    s.loss_fast_retransmit(flight);
                }
            }
            Step::Timeout { backoff } => {
                let flight = s.w.cwnd_bytes;
                s.loss_timeout(flight, backoff);
            }
            Step::ExitRecovery => {
                if s.in_recovery {
                    let flight = s.w.cwnd_bytes / 2;
                    s.exit_recovery(flight, false);
                }
            }
        }
        assert!(s.w.cwnd_bytes >= MSS, "{name}: cwnd {} below one MSS after {st:?}", s.w.cwnd_bytes);
        assert!(s.w.ssthresh_bytes >= MSS, "{name}: ssthresh {} below one MSS after {st:?}", s.w.ssthresh_bytes);
        for (metric, value) in s.cc.metrics() {
            assert!(value.is_finite(), "{name}: metric {metric} = {value} after {st:?}");
        }
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
