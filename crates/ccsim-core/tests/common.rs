//! Shared helpers for the whole-run tests: scenarios built in code.
#![allow(dead_code)]

use ccsim_core::{RunOutput, Scenario, Simulation};
use serde_json::json;

pub const MS: u64 = 1_000_000;
pub const S: u64 = 1_000_000_000;

/// The single-flow path of the CHD paper: 10 Mbit/s, 40 ms base RTT, 84-packet drop-tail.
pub fn dumbbell(rate_bps: u64, one_way_ns: u64, queue_pkts: u64, loss: f64, duration_ns: u64) -> serde_json::Value {
    json!({
        "duration_ns": duration_ns,
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate_bps": rate_bps, "delay_ns": one_way_ns,
                           "queue": {"kind": "droptail", "limit_pkts": queue_pkts}, "loss_rate": loss}
        },
        "flows": []
    })
}

pub fn flow(algorithm: &str, start_ns: u64, stop_ns: u64) -> serde_json::Value {
    json!({"algorithm": algorithm, "start_ns": start_ns, "stop_ns": stop_ns})
}

pub fn with_flows(mut s: serde_json::Value, flows: Vec<serde_json::Value>) -> serde_json::Value {
    s["flows"] = serde_json::Value::Array(flows);
    s
}

pub fn run(s: &serde_json::Value, seed: u64) -> RunOutput {
    let scenario: Scenario = serde_json::from_value(s.clone()).expect("scenario");
    Simulation::new(scenario, seed).expect("build").finish().expect("run")
}

pub fn summary(out: &RunOutput, key: &str) -> f64 {
    out.run_summary.iter().find(|(k, _)| k == key).map(|(_, v)| *v).unwrap_or_else(|| panic!("no {key}"))
}
