//! Engine tests that need the simulation's insides: a web transfer whose build fails ends the run.

use serde_json::json;

use crate::error::SimError;
use crate::sim::flow::App;
use crate::sim::Simulation;
use crate::Time;

fn web_run(params: serde_json::Value) -> Result<Simulation, SimError> {
    let tcp = json!({"mss_bytes": 1448, "header_bytes": 52, "initial_window_pkts": 3, "initial_ssthresh": {"kind": "unlimited"}, "sack": true, "delayed_ack": true,
                     "delayed_ack_timeout_ns": 100_000_000u64, "abc_limit": 2, "min_rto_ns": 200_000_000u64,
                     "initial_rto_ns": 1_000_000_000u64, "max_rto_ns": 60_000_000_000u64, "rwnd_bytes": 64u64 << 20,
                     "dupack_threshold": 3, "limited_transmit": true, "profile": "freebsd9",
           "rto_estimator": "rfc6298", "timer_granularity_ns": 1_000_000u64, "max_burst_pkts": 0,
           "ssthresh_whole_packets": false, "sack_recovery": "rfc6675",
                     "slow_start_rule": "freebsd", "recovery_window": "rfc6675",
                     "delayed_ack_rule": "rfc5681", "loss_detection": "dupack"});
    let link = |pkts: u64| json!({"rate_bps": 10_000_000, "delay_ns": 20_000_000,
                                  "queue": {"kind": "droptail", "limit": {"pkts": pkts}}, "loss_rate": 0.0,
                                  "loss_changes": []});
    let scenario = json!({
        "ccsim_resolved": crate::scenario::RESOLVED_FORMAT,
        "duration_ns": 2_000_000_000u64, "sample_interval_ns": 100_000_000u64,
        "measure_start_ns": 0, "measure_end_ns": 2_000_000_000u64,
        "topology": {"kind": "dumbbell", "bottleneck": link(84), "reverse": link(10_000), "access_rate_bps": 1_000_000_000u64,
                     "access_queue": {"kind": "droptail", "limit": {"pkts": 1000}},
                     "reverse_access_queue": {"kind": "droptail", "limit": {"pkts": 1000}}},
        "flows": [{"name": "web", "intervals": [{"start_ns": 0, "stop_ns": 2_000_000_000u64}], "start_spread_ns": 0,
                   "access_delay": {"kind": "fixed", "delay_ns": 0}, "route": {"kind": "dumbbell", "direction": "forward"},
                   "traffic": {"kind": "web", "algorithm": "newreno", "params": params, "tcp": tcp,
                               "arrival_rate": 20.0, "size_mean_bytes": 20_000, "size_shape": 1.2}}],
    });
    Simulation::from_json(&scenario.to_string(), 1)
}

#[test]
fn a_bad_transfer_parameter_is_a_scenario_error_at_construction() {
    let err = web_run(json!({"no_such_param": 1})).err().expect("rejected");
    assert!(matches!(&err, SimError::Scenario { field, .. } if field == "flows[0].traffic.params.no_such_param"), "{err}");
}

#[test]
fn arrivals_start_transfers() {
    let mut sim = web_run(json!({})).unwrap();
    sim.run_until(Time::from_secs(2)).unwrap();
    assert!(sim.flows.len() > 10, "{} flows", sim.flows.len());
}

#[test]
fn a_transfer_that_cannot_be_built_ends_the_run_with_an_error() {
    let mut sim = web_run(json!({})).unwrap();
    // Break what construction checked: the next arrival's build fails, and must not be skipped.
    let App::Web(generator) = &mut sim.flows[0].app else { panic!("flow 0 is the web generator") };
    generator.transfers.algorithm = "no-such-algorithm".to_string();
    let err = sim.run_until(Time::from_secs(2)).unwrap_err();
    assert!(matches!(&err, SimError::Scenario { field, .. } if field == "flows[0].traffic.algorithm"), "{err}");
    assert_eq!(sim.flows.len(), 1, "no transfer started");
    assert!(sim.now() < Time::from_secs(1), "the run stopped at the failed arrival, not at the end");
    assert_eq!(sim.run_until(Time::from_secs(2)).unwrap_err(), err, "the run stays ended");
    assert_eq!(sim.finish().err(), Some(err), "finish reports it too");
}
