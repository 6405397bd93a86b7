//! The resolved scenario: what the front end hands the engine, in canonical units (integer ns, bit/s,
//! bytes). `docs/internals.md` gives the JSON form. Validation here is defence in depth: the Python
//! front end checks the same things first, with the user's own field names.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::SimError;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub duration_ns: u64,
    #[serde(default = "default_sample_interval")]
    pub sample_interval_ns: u64,
    #[serde(default)]
    pub measure_start_ns: u64,
    /// End of the summary window; defaults to the end of the run.
    #[serde(default)]
    pub measure_end_ns: Option<u64>,
    pub topology: Topology,
    pub flows: Vec<FlowSpec>,
}

fn default_sample_interval() -> u64 {
    100_000_000
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Topology {
    Dumbbell(Dumbbell),
}

/// N senders, each behind its own access link, one bottleneck, receivers behind it, and an
/// uncongested reverse path for the ACKs.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Dumbbell {
    pub bottleneck: LinkSpec,
    /// Reverse (ACK) direction of the bottleneck; defaults to the forward rate and delay with a
    /// large drop-tail queue and no random loss.
    #[serde(default)]
    pub reverse: Option<LinkSpec>,
    #[serde(default = "default_access_rate")]
    pub access_rate_bps: u64,
}

fn default_access_rate() -> u64 {
    1_000_000_000
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub queue: QueueSpec,
    /// Bernoulli per-packet random loss probability (dummynet `plr`), counted apart from queue drops.
    #[serde(default)]
    pub loss_rate: f64,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueSpec {
    /// Tail drop once the limit (packets and/or bytes, not counting the packet on the wire) is reached.
    Droptail {
        #[serde(default)]
        limit_pkts: Option<u64>,
        #[serde(default)]
        limit_bytes: Option<u64>,
    },
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    #[serde(default)]
    pub name: Option<String>,
    pub algorithm: String,
    #[serde(default)]
    pub params: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    pub start_ns: u64,
    /// When the application stops offering new data; defaults to the end of the run.
    #[serde(default)]
    pub stop_ns: Option<u64>,
    /// A finite transfer of this many bytes (then the flow completion time is reported).
    #[serde(default)]
    pub bytes: Option<u64>,
    #[serde(default)]
    pub access_delay_ns: u64,
    #[serde(default)]
    pub tcp: TcpConfig,
}

/// TCP machine settings of one flow. Defaults follow FreeBSD 9 (the CHD paper's testbed) except the
/// minimum RTO, which follows Linux and ns-2 (200 ms); see `docs/choices.md`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TcpConfig {
    /// Payload bytes per segment (1448 = 1500 - 20 IP - 20 TCP - 12 timestamp option).
    pub mss_bytes: u64,
    /// Header bytes on the wire per segment (IP + TCP + options); link occupancy counts wire bytes.
    pub header_bytes: u64,
    pub initial_window_pkts: u64,
    pub sack: bool,
    pub delayed_ack: bool,
    pub delayed_ack_timeout_ns: u64,
    /// RFC 3465 L in segments; 0 turns appropriate byte counting off.
    pub abc_limit: u32,
    pub min_rto_ns: u64,
    pub initial_rto_ns: u64,
    pub max_rto_ns: u64,
    /// Receiver window cap in bytes.
    pub rwnd_bytes: u64,
    pub dupack_threshold: u32,
    pub limited_transmit: bool,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss_bytes: 1448,
            header_bytes: 52,
            initial_window_pkts: 3,
            sack: true,
            delayed_ack: true,
            delayed_ack_timeout_ns: 100_000_000,
            abc_limit: 2,
            min_rto_ns: 200_000_000,
            initial_rto_ns: 1_000_000_000,
            max_rto_ns: 60_000_000_000,
            rwnd_bytes: 64 << 20,
            dupack_threshold: 3,
            limited_transmit: true,
        }
    }
}

impl Scenario {
    pub fn from_json(text: &str) -> Result<Scenario, SimError> {
        serde_json::from_str(text).map_err(|e| {
            let msg = e.to_string();
            // serde names the offending key in the message: keep it as the field.
            let field = msg
                .split('`')
                .nth(1)
                .map(|s| s.to_string())
                .unwrap_or_else(|| "scenario".to_string());
            SimError::scenario(field, msg)
        })
    }

    pub fn measure_end_ns(&self) -> u64 {
        self.measure_end_ns.unwrap_or(self.duration_ns)
    }

    /// Checks every value the engine relies on; the first problem is returned.
    pub fn validate(&self) -> Result<(), SimError> {
        fn err(field: impl Into<String>, reason: impl Into<String>) -> SimError {
            SimError::scenario(field, reason)
        }
        if self.duration_ns == 0 {
            return Err(err("duration_ns", "must be > 0"));
        }
        if self.sample_interval_ns == 0 {
            return Err(err("sample_interval_ns", "must be > 0"));
        }
        if self.measure_start_ns >= self.measure_end_ns() || self.measure_end_ns() > self.duration_ns {
            return Err(err("measure_end_ns", "summary window must satisfy 0 <= start < end <= duration"));
        }
        let Topology::Dumbbell(d) = &self.topology;
        check_link("topology.bottleneck", &d.bottleneck)?;
        if let Some(r) = &d.reverse {
            check_link("topology.reverse", r)?;
        }
        if d.access_rate_bps == 0 {
            return Err(err("topology.access_rate_bps", "must be > 0"));
        }
        if self.flows.is_empty() {
            return Err(err("flows", "at least one flow is needed"));
        }
        for (i, f) in self.flows.iter().enumerate() {
            let at = |k: &str| format!("flows[{i}].{k}");
            if f.start_ns >= self.duration_ns {
                return Err(err(at("start_ns"), format!("{} ns is at or after the end of the run ({} ns)", f.start_ns, self.duration_ns)));
            }
            if let Some(stop) = f.stop_ns {
                if stop <= f.start_ns {
                    return Err(err(at("stop_ns"), "must be after start"));
                }
            }
            if f.bytes == Some(0) {
                return Err(err(at("bytes"), "must be > 0"));
            }
            let t = &f.tcp;
            if t.mss_bytes == 0 || t.mss_bytes > 65_000 {
                return Err(err(at("tcp.mss_bytes"), "must be in [1, 65000]"));
            }
            if t.initial_window_pkts == 0 {
                return Err(err(at("tcp.initial_window_pkts"), "must be >= 1"));
            }
            if t.min_rto_ns == 0 || t.min_rto_ns > t.max_rto_ns {
                return Err(err(at("tcp.min_rto_ns"), "must be > 0 and <= max_rto"));
            }
            if t.initial_rto_ns == 0 {
                return Err(err(at("tcp.initial_rto_ns"), "must be > 0"));
            }
            if t.rwnd_bytes < t.mss_bytes {
                return Err(err(at("tcp.rwnd_bytes"), "must hold at least one segment"));
            }
            if t.dupack_threshold == 0 {
                return Err(err(at("tcp.dupack_threshold"), "must be >= 1"));
            }
            if t.delayed_ack && t.delayed_ack_timeout_ns == 0 {
                return Err(err(at("tcp.delayed_ack_timeout_ns"), "must be > 0 when delayed ACKs are on"));
            }
        }
        Ok(())
    }
}

fn check_link(field: &str, l: &LinkSpec) -> Result<(), SimError> {
    if l.rate_bps == 0 {
        return Err(SimError::scenario(format!("{field}.rate_bps"), "must be > 0"));
    }
    if !(0.0..1.0).contains(&l.loss_rate) {
        return Err(SimError::scenario(format!("{field}.loss_rate"), "must be in [0, 1)"));
    }
    match l.queue {
        QueueSpec::Droptail { limit_pkts, limit_bytes } => {
            if limit_pkts.is_none() && limit_bytes.is_none() {
                return Err(SimError::scenario(format!("{field}.queue"), "needs a limit in packets or bytes"));
            }
            if limit_pkts == Some(0) || limit_bytes == Some(0) {
                return Err(SimError::scenario(format!("{field}.queue"), "must hold at least one packet"));
            }
        }
    }
    Ok(())
}
