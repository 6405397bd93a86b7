//! Engine tests that need the simulation's insides: a web transfer whose build fails ends the run.

use serde_json::json;

use crate::error::SimError;
use crate::sim::flow::App;
use crate::sim::Simulation;
use crate::Time;

fn web_run(params: serde_json::Value) -> Result<Simulation, SimError> {
    let scenario = json!({
        "duration_ns": 2_000_000_000u64,
        "topology": {"kind": "dumbbell", "bottleneck": {"rate_bps": 10_000_000, "delay_ns": 20_000_000,
                     "queue": {"kind": "droptail", "limit_pkts": 84}}},
        "flows": [{"kind": "web", "algorithm": "newreno", "params": params, "arrival_rate": 20.0,
                   "size_mean_bytes": 20_000, "size_shape": 1.2}],
    });
    Simulation::from_json(&scenario.to_string(), 1)
}

#[test]
fn a_bad_transfer_parameter_is_a_scenario_error_at_construction() {
    let err = web_run(json!({"no_such_param": 1})).err().expect("rejected");
    assert!(matches!(&err, SimError::Scenario { field, .. } if field == "flows[0].params.no_such_param"), "{err}");
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
    assert!(matches!(&err, SimError::Scenario { field, .. } if field == "flows[0].algorithm"), "{err}");
    assert_eq!(sim.flows.len(), 1, "no transfer started");
    assert!(sim.now() < Time::from_secs(1), "the run stopped at the failed arrival, not at the end");
    assert_eq!(sim.run_until(Time::from_secs(2)).unwrap_err(), err, "the run stays ended");
    assert_eq!(sim.finish().err(), Some(err), "finish reports it too");
}
