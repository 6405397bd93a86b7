//! Resolved documents written out in Rust, for the engine's own tests and the benchmark example
//! (`examples/bench_dumbbell.rs`), which have no Python front end to resolve a TOML file. They follow
//! the current resolved format (docs/resolved-scenario.md); `Simulation::from_json` checks them, and
//! the tests in `sim/cost.rs` build them, so a change of the format that they miss fails a test.

use serde_json::{json, Map, Value};

use crate::scenario::TcpConfig;

/// The front end's TCP profiles, the one table of their values (`python/ccsim/profiles.py` reads the
/// same file).
const PROFILES_TOML: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/ccsim/profiles.toml"));

/// Profile `name`'s TCP settings as the resolved document holds them: its knobs, its name, and the
/// unlimited initial ssthresh every profile starts with. Panics on a profile the file does not have.
pub fn tcp_profile(name: &str) -> Value {
    let mut tcp = profile_knobs(PROFILES_TOML, name);
    assert!(!tcp.is_empty(), "no profile [{name}] in python/ccsim/profiles.toml");
    tcp.insert("profile".into(), Value::from(name));
    tcp.insert("initial_ssthresh".into(), json!({"kind": "unlimited"}));
    Value::Object(tcp)
}

/// The front end's `freebsd9` TCP settings, written out.
pub fn tcp_freebsd9() -> Value {
    tcp_profile("freebsd9")
}

/// The `key = value` lines of table `[name]` of `text`, in the TOML the profiles file keeps to
/// (integers with `_`, `true`/`false`, strings without escapes, `#` comments); anything else panics,
/// naming the line, so the file cannot hold what one of its two readers would read differently.
fn profile_knobs(text: &str, name: &str) -> Map<String, Value> {
    let mut knobs = Map::new();
    let mut table = None;
    for (n, raw) in text.lines().enumerate() {
        let line = raw.split_once('#').map_or(raw, |(code, _)| code).trim();
        if line.is_empty() {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            table = Some(header.strip_suffix(']').unwrap_or_else(|| refuse(n, raw)).trim());
            continue;
        }
        let (key, value) = line.split_once('=').unwrap_or_else(|| refuse(n, raw));
        let value = value.trim();
        let value = match value {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
                Some(text) if !text.contains(['"', '\\']) => Value::from(text),
                Some(_) => refuse(n, raw),
                None => Value::from(value.replace('_', "").parse::<u64>().unwrap_or_else(|_| refuse(n, raw))),
            },
        };
        if table == Some(name) {
            knobs.insert(key.trim().to_string(), value);
        }
    }
    knobs
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
               "loss_rate": 0.0, "loss_changes": [], "loss_model": {"kind": "bernoulli"}})
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

fn refuse<T>(line_index: usize, raw: &str) -> T {
    panic!("python/ccsim/profiles.toml line {}: not in the TOML its readers share: {raw}", line_index + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_profile_of_the_front_end_is_a_tcp_config() {
        // deny_unknown_fields and every field required: a knob missing from a table, one the engine
        // does not know, or a value the reader took wrongly fails here
        for name in ["freebsd9", "linux", "ns2", "ns3"] {
            let config: TcpConfig = serde_json::from_value(tcp_profile(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(config.profile, name);
        }
        let bsd = tcp_profile("freebsd9");
        assert_eq!((bsd["mss_bytes"].as_u64(), bsd["rwnd_bytes"].as_u64()), (Some(1448), Some(64 << 20)));
        assert_eq!(tcp_profile("ns2")["sack_recovery"], "ns2_sack1");
    }

    #[test]
    fn the_reader_takes_the_shared_toml_and_refuses_the_rest() {
        let text = "# c\n[a]\nx = 1_000 # ms\ny = true\nz = \"s\"\n[b]\nx = 2\n";
        assert_eq!(Value::Object(profile_knobs(text, "a")), json!({"x": 1000, "y": true, "z": "s"}));
        assert_eq!(Value::Object(profile_knobs(text, "b")), json!({"x": 2}));
        for bad in ["[a]\nx = 0x10", "[a]\nx = 1.5", "[a]\nx = \"a\\\\b\"", "[a]\nx", "[a\nx = 1"] {
            assert!(std::panic::catch_unwind(|| profile_knobs(bad, "a")).is_err(), "{bad}");
        }
    }
}
