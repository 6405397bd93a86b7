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
    ParkingLot(ParkingLot),
}

/// Several bottlenecks in series (the binomial paper's Fig. 18): hop k joins router k to router
/// k + 1. Each flow enters at the start of hop `path[0]` and leaves after hop `path[1]`, behind its
/// own access links, so cross traffic can enter and leave at every hop. ACKs return over
/// uncongested reverse hops.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ParkingLot {
    pub hops: Vec<LinkSpec>,
    /// Reverse (ACK) hops; default: each forward hop's rate and delay, a 10 000-packet queue, no loss.
    #[serde(default)]
    pub reverse_hops: Option<Vec<LinkSpec>>,
    #[serde(default = "default_access_rate")]
    pub access_rate_bps: u64,
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
    /// RED (Floyd & Jacobson 1993) as ns-2's `Queue/RED`; see `red.rs` and `docs/red.md`. The queue is
    /// measured in the unit of the limit: packets (`limit_pkts`) or bytes (`limit_bytes`), exactly one
    /// of them; `min_th` and `max_th` are in that unit (fractional values allowed).
    Red {
        #[serde(default)]
        limit_pkts: Option<u64>,
        #[serde(default)]
        limit_bytes: Option<u64>,
        min_th: f64,
        max_th: f64,
        max_p: f64,
        w_q: f64,
        gentle: bool,
        /// ns-2 `wait_`: at least 1/p_b arrivals between early drops.
        wait: bool,
        /// Typical packet size for the idle-time correction (ns-2 `mean_pktsize_`).
        mean_pkt_bytes: u64,
    },
}

/// What a flow carries.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FlowKind {
    /// A TCP connection driven by a congestion-control algorithm.
    #[default]
    Tcp,
    /// Constant bit rate, UDP-like: `rate_bps`, `payload_bytes`.
    Cbr,
    /// Voice: `payload_bytes` every `interval_ns` (G.711: 160 B every 20 ms), optional talk spurts.
    Voip,
    /// Web-like background: short TCP transfers arriving as a Poisson process (`arrival_rate` per
    /// second) with Pareto sizes (`size_mean_bytes`, `size_shape`), each with `algorithm`.
    Web,
}

/// Which way a flow's data crosses a dumbbell.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    #[default]
    Forward,
    /// Data over the reverse bottleneck, ACKs over the forward one.
    Reverse,
}

/// A one-way delay: fixed, or drawn per flow from the run's seed.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum DelaySpec {
    Fixed(u64),
    /// Uniform on [low, high] nanoseconds.
    Uniform { uniform: [u64; 2] },
}

impl Default for DelaySpec {
    fn default() -> Self {
        DelaySpec::Fixed(0)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub kind: FlowKind,
    /// Congestion-control algorithm (TCP flows only).
    #[serde(default)]
    pub algorithm: String,
    #[serde(default)]
    pub params: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    pub start_ns: u64,
    /// When the application stops offering new data; defaults to the end of the run.
    #[serde(default)]
    pub stop_ns: Option<u64>,
    /// On/off schedule: the application is active in each [start, stop) interval (overrides
    /// start/stop). A TCP flow keeps its connection state across the gaps.
    #[serde(default)]
    pub intervals_ns: Option<Vec<[u64; 2]>>,
    /// A finite transfer of this many bytes (then the flow completion time is reported).
    #[serde(default)]
    pub bytes: Option<u64>,
    #[serde(default)]
    pub access_delay_ns: DelaySpec,
    #[serde(default)]
    pub direction: Direction,
    /// Parking lot: the first and last hop the flow crosses (inclusive).
    #[serde(default)]
    pub path: Option<[usize; 2]>,
    #[serde(default)]
    pub tcp: TcpConfig,
    /// Streams: bit rate (CBR).
    #[serde(default)]
    pub rate_bps: Option<u64>,
    /// Streams: payload per packet (CBR default 1000 B, VoIP default 160 B).
    #[serde(default)]
    pub payload_bytes: Option<u64>,
    /// Streams: IP + UDP (+ RTP) header bytes (CBR default 28 B, VoIP default 40 B).
    #[serde(default)]
    pub header_bytes: Option<u64>,
    /// VoIP: packet interval (default 20 ms).
    #[serde(default)]
    pub interval_ns: Option<u64>,
    /// VoIP: on/off talk spurts with exponential periods (Brady model).
    #[serde(default)]
    pub talk_spurts: bool,
    #[serde(default)]
    pub mean_on_ns: Option<u64>,
    #[serde(default)]
    pub mean_off_ns: Option<u64>,
    /// Web: transfers started per second (Poisson).
    #[serde(default)]
    pub arrival_rate: Option<f64>,
    /// Web: mean transfer size (Pareto).
    #[serde(default)]
    pub size_mean_bytes: Option<u64>,
    /// Web: Pareto shape alpha (> 1; 1.2 is the classic heavy tail of web objects).
    #[serde(default)]
    pub size_shape: Option<f64>,
}

impl FlowSpec {
    /// The active intervals [start, stop) of the application, clipped to the run.
    pub fn active_intervals(&self, duration_ns: u64) -> Vec<(u64, u64)> {
        match &self.intervals_ns {
            Some(iv) => iv.iter().map(|[a, b]| (*a, (*b).min(duration_ns))).collect(),
            None => vec![(self.start_ns, self.stop_ns.unwrap_or(duration_ns).min(duration_ns))],
        }
    }
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
        let hops = match &self.topology {
            Topology::Dumbbell(d) => {
                check_link("topology.bottleneck", &d.bottleneck)?;
                if let Some(r) = &d.reverse {
                    check_link("topology.reverse", r)?;
                }
                if d.access_rate_bps == 0 {
                    return Err(err("topology.access_rate_bps", "must be > 0"));
                }
                None
            }
            Topology::ParkingLot(p) => {
                if p.hops.is_empty() {
                    return Err(err("topology.hops", "at least one hop is needed"));
                }
                for (k, h) in p.hops.iter().enumerate() {
                    check_link(&format!("topology.hops[{k}]"), h)?;
                }
                if let Some(r) = &p.reverse_hops {
                    if r.len() != p.hops.len() {
                        return Err(err("topology.reverse_hops", "needs one entry per forward hop"));
                    }
                    for (k, h) in r.iter().enumerate() {
                        check_link(&format!("topology.reverse_hops[{k}]"), h)?;
                    }
                }
                if p.access_rate_bps == 0 {
                    return Err(err("topology.access_rate_bps", "must be > 0"));
                }
                Some(p.hops.len())
            }
        };
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
            if let Some(iv) = &f.intervals_ns {
                if iv.is_empty() {
                    return Err(err(at("intervals_ns"), "needs at least one interval"));
                }
                let mut prev_end = 0;
                for (k, [a, b]) in iv.iter().enumerate() {
                    if b <= a || (k > 0 && *a < prev_end) {
                        return Err(err(format!("flows[{i}].intervals_ns[{k}]"), "intervals must be non-empty, ordered and disjoint"));
                    }
                    if *a >= self.duration_ns {
                        return Err(err(format!("flows[{i}].intervals_ns[{k}]"), "starts at or after the end of the run"));
                    }
                    prev_end = *b;
                }
            }
            if let DelaySpec::Uniform { uniform: [lo, hi] } = f.access_delay_ns {
                if hi < lo {
                    return Err(err(at("access_delay_ns"), "uniform range needs low <= high"));
                }
            }
            match (hops, f.path) {
                (Some(n), Some([a, b])) => {
                    if a > b || b >= n {
                        return Err(err(at("path"), format!("must be [first, last] hops with first <= last < {n}")));
                    }
                }
                (Some(_), None) => {}
                (None, Some(_)) => return Err(err(at("path"), "only a parking-lot topology has hops")),
                (None, None) => {}
            }
            if hops.is_some() && f.direction == Direction::Reverse {
                return Err(err(at("direction"), "reverse flows are a dumbbell feature; give a parking-lot flow its path"));
            }
            match f.kind {
                FlowKind::Tcp => {
                    if f.algorithm.is_empty() {
                        return Err(err(at("algorithm"), "a TCP flow needs an algorithm"));
                    }
                }
                FlowKind::Web => {
                    if f.algorithm.is_empty() {
                        return Err(err(at("algorithm"), "web transfers need an algorithm"));
                    }
                    if !f.arrival_rate.is_some_and(|r| r.is_finite() && r > 0.0) {
                        return Err(err(at("arrival_rate"), "web traffic needs an arrival rate > 0 per second"));
                    }
                    if f.size_mean_bytes.unwrap_or(0) == 0 {
                        return Err(err(at("size_mean_bytes"), "web traffic needs a mean transfer size > 0"));
                    }
                    if !f.size_shape.map_or(true, |a| a.is_finite() && a > 1.0) {
                        return Err(err(at("size_shape"), "the Pareto shape must be > 1 (finite mean)"));
                    }
                }
                FlowKind::Cbr | FlowKind::Voip => {
                    if !f.algorithm.is_empty() || !f.params.is_empty() {
                        return Err(err(at("algorithm"), "streams have no congestion control"));
                    }
                    if f.kind == FlowKind::Cbr && f.rate_bps.unwrap_or(0) == 0 {
                        return Err(err(at("rate_bps"), "a CBR flow needs a rate > 0"));
                    }
                    if f.payload_bytes == Some(0) || f.interval_ns == Some(0) {
                        return Err(err(at("payload_bytes"), "payload and interval must be > 0"));
                    }
                    if f.talk_spurts && (f.mean_on_ns == Some(0) || f.mean_off_ns == Some(0)) {
                        return Err(err(at("mean_on_ns"), "talk-spurt periods must be > 0"));
                    }
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
        QueueSpec::Red { limit_pkts, limit_bytes, min_th, max_th, max_p, w_q, mean_pkt_bytes, .. } => {
            let q = |k: &str| format!("{field}.queue.{k}");
            let limit = match (limit_pkts, limit_bytes) {
                (Some(l), None) | (None, Some(l)) => l,
                _ => return Err(SimError::scenario(q("limit_pkts"), "RED needs exactly one limit, in packets or in bytes")),
            };
            if limit == 0 {
                return Err(SimError::scenario(q("limit_pkts"), "must hold at least one packet"));
            }
            if !(min_th.is_finite() && min_th > 0.0) {
                return Err(SimError::scenario(q("min_th"), "must be > 0"));
            }
            if !(max_th.is_finite() && max_th > min_th) {
                return Err(SimError::scenario(q("max_th"), "must be > min_th"));
            }
            if max_th > limit as f64 {
                return Err(SimError::scenario(q("max_th"), format!("must be <= the limit ({limit})")));
            }
            if !(max_p > 0.0 && max_p <= 1.0) {
                return Err(SimError::scenario(q("max_p"), "must be in (0, 1]"));
            }
            if !(w_q > 0.0 && w_q <= 1.0) {
                return Err(SimError::scenario(q("w_q"), "must be in (0, 1]"));
            }
            if mean_pkt_bytes == 0 {
                return Err(SimError::scenario(q("mean_pkt_bytes"), "must be > 0"));
            }
        }
    }
    Ok(())
}
