//! Shared helpers for the whole-run tests: scenarios built in code. Tests write compact specs;
//! `complete` writes them out as the complete resolved document the engine reads (the TCP settings
//! are the front end's `freebsd9` profile, from `ccsim_core::fixtures`).
#![allow(dead_code)]

use ccsim_core::{RunOutput, Scenario, Simulation};
use serde_json::{json, Value};

pub const MS: u64 = 1_000_000;
pub const S: u64 = 1_000_000_000;

/// The single-flow path of the CHD paper: 10 Mbit/s, 40 ms base RTT, 84-packet drop-tail.
pub fn dumbbell(rate_bps: u64, one_way_ns: u64, queue_pkts: u64, loss: f64, duration_ns: u64) -> Value {
    json!({
        "duration_ns": duration_ns,
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"rate_bps": rate_bps, "delay_ns": one_way_ns,
                           "queue": {"kind": "droptail", "limit": {"pkts": queue_pkts}}, "loss_rate": loss}
        },
        "flows": []
    })
}

pub fn flow(algorithm: &str, start_ns: u64, stop_ns: u64) -> Value {
    json!({"algorithm": algorithm, "start_ns": start_ns, "stop_ns": stop_ns})
}

pub fn with_flows(mut s: Value, flows: Vec<Value>) -> Value {
    s["flows"] = Value::Array(flows);
    s
}

/// The front end's `freebsd9` TCP settings without send jitter (`ccsim_core::fixtures::tcp_config`,
/// read from `python/ccsim/profiles.toml`).
pub fn tcp_config() -> Value {
    serde_json::to_value(ccsim_core::fixtures::tcp_config()).expect("TcpConfig serialises")
}

/// The uncongested reverse of a link: same rate and delay, 10 000 packets, no loss.
fn reverse_of(link: &Value) -> Value {
    json!({"rate_bps": link["rate_bps"], "delay_ns": link["delay_ns"],
           "queue": {"kind": "droptail", "limit": {"pkts": 10_000}}, "loss_rate": 0.0, "loss_changes": [], "loss_model": {"kind": "bernoulli"}})
}

fn complete_link(link: &Value) -> Value {
    let mut l = link.clone();
    if l.get("loss_rate").is_none() {
        l["loss_rate"] = json!(0.0);
    }
    if l.get("loss_changes").is_none() {
        l["loss_changes"] = json!([]);
    }
    if l.get("loss_model").is_none() {
        l["loss_model"] = json!({"kind": "bernoulli"});
    }
    l
}

/// A compact test flow as a complete resolved flow: `algorithm` (TCP, or web with `kind`), `kind`
/// cbr/voip with optional stream fields, `start_ns`/`stop_ns` or `intervals_ns`, `bytes`,
/// `access_delay_ns` (fixed or `{"uniform": [lo, hi]}`), `direction`, `path`, `tcp` overrides, `params`,
/// `start_spread_ns`, `app_rate_bps` (a rate-limited TCP application).
fn complete_flow(i: usize, f: &Value, duration: u64, parking_lot_hops: Option<usize>) -> Value {
    let get = |k: &str| f.get(k).cloned();
    let kind = f.get("kind").and_then(Value::as_str).unwrap_or("tcp");
    let intervals: Vec<Value> = match get("intervals_ns") {
        Some(Value::Array(iv)) => iv.iter().map(|p| json!({"start_ns": p[0], "stop_ns": p[1]})).collect(),
        _ => vec![json!({"start_ns": get("start_ns").unwrap_or(json!(0)), "stop_ns": get("stop_ns").unwrap_or(json!(duration))})],
    };
    let access_delay = match get("access_delay_ns") {
        Some(Value::Object(o)) => json!({"kind": "uniform", "low_ns": o["uniform"][0], "high_ns": o["uniform"][1]}),
        Some(d) => json!({"kind": "fixed", "delay_ns": d}),
        None => json!({"kind": "fixed", "delay_ns": 0}),
    };
    let route = match (parking_lot_hops, get("path")) {
        (Some(_), Some(p)) => json!({"kind": "parking_lot", "first_hop": p[0], "last_hop": p[1]}),
        (Some(n), None) => json!({"kind": "parking_lot", "first_hop": 0, "last_hop": n - 1}),
        (None, Some(p)) => json!({"kind": "parking_lot", "first_hop": p[0], "last_hop": p[1]}),
        (None, None) => json!({"kind": "dumbbell", "direction": get("direction").unwrap_or(json!("forward"))}),
    };
    let mut tcp = tcp_config();
    if let Some(Value::Object(o)) = get("tcp") {
        for (k, v) in o {
            tcp[k] = v.clone();
        }
    }
    let algorithm = get("algorithm").unwrap_or(json!(""));
    let mut params = json!({});
    if let Some(info) = ccsim_cc::catalog().into_iter().find(|a| Some(a.name) == algorithm.as_str()) {
        for p in info.params {
            params[p.name] = match p.default {
                ccsim_cc::ParamValue::Number(x) => json!(x),
                ccsim_cc::ParamValue::Bool(b) => json!(b),
                ccsim_cc::ParamValue::Text(t) => json!(t),
            };
        }
    }
    if let Some(Value::Object(o)) = get("params") {
        for (k, v) in o {
            params[k] = v.clone();
        }
    }
    let traffic = match kind {
        "tcp" => json!({"kind": "tcp", "algorithm": algorithm, "params": params, "tcp": tcp,
                        "transfer": match get("bytes") { Some(b) => json!({"kind": "finite", "bytes": b}), None => json!({"kind": "unlimited"}) },
                        "app_rate": match get("app_rate_bps") { Some(r) => json!({"kind": "limited", "rate_bps": r}), None => json!({"kind": "unlimited"}) }}),
        "web" => json!({"kind": "web", "algorithm": algorithm, "params": params, "tcp": tcp,
                        "arrival_rate": get("arrival_rate"), "size_mean_bytes": get("size_mean_bytes"),
                        "size_shape": get("size_shape").unwrap_or(json!(1.2))}),
        "cbr" => json!({"kind": "cbr", "rate_bps": get("rate_bps").unwrap_or(json!(0)),
                        "payload_bytes": get("payload_bytes").unwrap_or(json!(1000)), "header_bytes": get("header_bytes").unwrap_or(json!(28))}),
        _ => json!({"kind": "voip", "payload_bytes": get("payload_bytes").unwrap_or(json!(160)),
                    "header_bytes": get("header_bytes").unwrap_or(json!(40)), "interval_ns": get("interval_ns").unwrap_or(json!(20 * MS)),
                    "pattern": {"kind": "constant"}}),
    };
    json!({"name": get("name").unwrap_or(json!(format!("flow{i}"))), "intervals": intervals,
           "start_spread_ns": get("start_spread_ns").unwrap_or(json!(0)),
           "access_delay": access_delay, "route": route, "traffic": traffic})
}

/// The complete resolved document of a compact test scenario.
pub fn complete(s: &Value) -> Value {
    let duration = s["duration_ns"].as_u64().expect("duration_ns");
    let mut topo = s["topology"].clone();
    let hops = if topo["kind"] == "parking_lot" {
        let hops: Vec<Value> = topo["hops"].as_array().unwrap().iter().map(complete_link).collect();
        topo["reverse_hops"] = Value::Array(hops.iter().map(reverse_of).collect());
        topo["hops"] = Value::Array(hops.clone());
        Some(hops.len())
    } else {
        topo["bottleneck"] = complete_link(&topo["bottleneck"]);
        if topo.get("reverse").is_none() {
            topo["reverse"] = reverse_of(&topo["bottleneck"]);
        } else {
            topo["reverse"] = complete_link(&topo["reverse"]);
        }
        None
    };
    if topo.get("access_rate_bps").is_none() {
        topo["access_rate_bps"] = json!(1_000_000_000u64);
    }
    for key in ["access_queue", "reverse_access_queue"] {
        if topo.get(key).is_none() {
            topo[key] = json!({"kind": "droptail", "limit": {"pkts": 1000}});
        }
    }
    let flows: Vec<Value> =
        s["flows"].as_array().unwrap().iter().enumerate().map(|(i, f)| complete_flow(i, f, duration, hops)).collect();
    json!({
        "ccsim_resolved": ccsim_core::scenario::RESOLVED_FORMAT,
        "duration_ns": duration,
        "sample_interval_ns": s.get("sample_interval_ns").cloned().unwrap_or(json!(100 * MS)),
        "measure_start_ns": s.get("measure_start_ns").cloned().unwrap_or(json!(0)),
        "measure_end_ns": s.get("measure_end_ns").cloned().unwrap_or(json!(duration)),
        "topology": topo,
        "flows": flows,
    })
}

/// The engine's scenario for a compact test spec.
pub fn scenario(s: &Value) -> Scenario {
    Scenario::from_json(&complete(s).to_string()).expect("scenario")
}

pub fn run(s: &Value, seed: u64) -> RunOutput {
    Simulation::new(scenario(s), seed).expect("build").finish().expect("run")
}

pub fn summary(out: &RunOutput, key: &str) -> f64 {
    out.run_summary.iter().find(|(k, _)| k == key).map(|(_, v)| *v).unwrap_or_else(|| panic!("no {key}"))
}
