//! Resolved documents written out in Rust, for the engine's own tests and the benchmark example
//! (`examples/bench_dumbbell.rs`), which have no Python front end to resolve a TOML file. They follow
//! the current resolved format (docs/resolved-scenario.md); `Simulation::from_json` checks them, and
//! the tests in `sim/cost.rs` build them, so a change of the format that they miss fails a test.

use serde_json::{json, Value};

use crate::scenario::TcpConfig;

/// The front end's `freebsd9` TCP settings (`python/ccsim/profiles.py`), written out.
pub fn tcp_freebsd9() -> Value {
    json!({"mss_bytes": 1448, "header_bytes": 52, "initial_window_pkts": 3, "initial_ssthresh": {"kind": "unlimited"},
           "sack": true, "delayed_ack": true, "delayed_ack_timeout_ns": 100_000_000u64, "abc_limit": 2,
           "min_rto_ns": 200_000_000u64, "initial_rto_ns": 1_000_000_000u64, "max_rto_ns": 60_000_000_000u64,
           "rwnd_bytes": 64u64 << 20, "dupack_threshold": 3, "limited_transmit": true, "profile": "freebsd9",
           "rto_estimator": "rfc6298", "timer_granularity_ns": 1_000_000u64, "max_burst_pkts": 0,
           "ssthresh_whole_packets": false, "sack_recovery": "rfc6675", "slow_start_rule": "freebsd",
           "recovery_window": "rfc6675", "delayed_ack_rule": "rfc5681", "loss_detection": "dupack",
           "partial_ack_rto": "every", "send_jitter_ns": 125_000u64})
}

/// The same settings as the engine's `TcpConfig`, without send jitter: for tests that drive a
/// `Sender` directly, with no host between it and the network.
pub fn tcp_config() -> TcpConfig {
    let config: TcpConfig = serde_json::from_value(tcp_freebsd9()).expect("the fixture follows the resolved format");
    TcpConfig { send_jitter_ns: 0, ..config }
}

/// A NewReno bulk transfer's `traffic`.
pub fn newreno() -> Value {
    json!({"kind": "tcp", "algorithm": "newreno", "params": {}, "tcp": tcp_freebsd9(),
           "transfer": {"kind": "unlimited"}, "app_rate": {"kind": "unlimited"}})
}

/// A CBR source of `rate_bps` sending 1000-byte payloads with 28 bytes of headers.
pub fn cbr(rate_bps: u64) -> Value {
    json!({"kind": "cbr", "rate_bps": rate_bps, "payload_bytes": 1000, "header_bytes": 28})
}

/// A web generator of NewReno transfers: `arrival_rate` per second, mean size `size_mean_bytes`.
pub fn web(arrival_rate: f64, size_mean_bytes: u64) -> Value {
    json!({"kind": "web", "algorithm": "newreno", "params": {}, "tcp": tcp_freebsd9(),
           "arrival_rate": arrival_rate, "size_mean_bytes": size_mean_bytes, "size_shape": 1.2})
}

/// A dumbbell of `rate_bps` and one-way `delay_ns` with a drop-tail queue of `queue_pkts` (the
/// reverse path the same, its queue 10 000 packets), 1 Gbit/s access links, run for `duration_ns`
/// sampled every `sample_interval_ns`, with one flow per entry of `traffic`, all active throughout.
pub fn dumbbell(rate_bps: u64, delay_ns: u64, queue_pkts: u64, duration_ns: u64, sample_interval_ns: u64, traffic: &[Value]) -> Value {
    let link = |pkts: u64| {
        json!({"rate_bps": rate_bps, "delay_ns": delay_ns, "queue": {"kind": "droptail", "limit": {"pkts": pkts}},
               "loss_rate": 0.0, "loss_changes": []})
    };
    let flows: Vec<Value> = traffic
        .iter()
        .enumerate()
        .map(|(i, t)| {
            json!({"name": format!("flow{i}"), "intervals": [{"start_ns": 0, "stop_ns": duration_ns}], "start_spread_ns": 0,
                   "access_delay": {"kind": "fixed", "delay_ns": 0}, "route": {"kind": "dumbbell", "direction": "forward"},
                   "traffic": t})
        })
        .collect();
    json!({
        "ccsim_resolved": crate::scenario::RESOLVED_FORMAT,
        "duration_ns": duration_ns, "sample_interval_ns": sample_interval_ns,
        "measure_start_ns": 0, "measure_end_ns": duration_ns,
        "topology": {"kind": "dumbbell", "bottleneck": link(queue_pkts), "reverse": link(10_000), "access_rate_bps": 1_000_000_000u64,
                     "access_queue": {"kind": "droptail", "limit": {"pkts": 1000}},
                     "reverse_access_queue": {"kind": "droptail", "limit": {"pkts": 1000}}},
        "flows": flows,
    })
}
