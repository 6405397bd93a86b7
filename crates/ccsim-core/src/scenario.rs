//! The resolved scenario: the one document the front end hands an engine, in canonical units (integer
//! ns, bit/s, bytes). Every field is required and no value is left for the engine to guess: the Python
//! front end owns the user format and every default, this file owns the schema and the engine's
//! invariants (`Scenario::validate`). `docs/resolved-scenario.md` describes every field; the JSON
//! Schema generated from these types is `docs/resolved-scenario.schema.json`.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::SimError;

mod error_path;

/// The version of the document this engine reads (`ccsim_resolved`); bumped on any change of meaning.
pub const RESOLVED_FORMAT: u32 = 4;

/// A whole run except the seed (given next to the document).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Format version; a consumer refuses a version it does not know.
    pub ccsim_resolved: u32,
    pub duration_ns: u64,
    pub sample_interval_ns: u64,
    /// Summary window [start, end).
    pub measure_start_ns: u64,
    pub measure_end_ns: u64,
    pub topology: Topology,
    pub flows: Vec<FlowSpec>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Topology {
    Dumbbell(Dumbbell),
    ParkingLot(ParkingLot),
}

/// Several bottlenecks in series (the binomial paper's Fig. 18): hop k joins router k to router
/// k + 1. Each flow enters at the start of its first hop and leaves after its last one, behind its
/// own access links, so cross traffic can enter and leave at every hop. ACKs return over the reverse
/// hops.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ParkingLot {
    pub hops: Vec<LinkSpec>,
    /// Reverse (ACK) hops, one per forward hop.
    pub reverse_hops: Vec<LinkSpec>,
    pub access_rate_bps: u64,
    /// Queue of every flow's access link towards the network (the sender host's interface queue).
    pub access_queue: QueueSpec,
    /// Queue of every flow's access link towards the host (ACKs, and a reverse flow's data).
    pub reverse_access_queue: QueueSpec,
}

/// N senders, each behind its own access link, one bottleneck, receivers behind it, and a reverse
/// path for the ACKs.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Dumbbell {
    pub bottleneck: LinkSpec,
    /// Reverse (ACK) direction of the bottleneck.
    pub reverse: LinkSpec,
    pub access_rate_bps: u64,
    /// Queue of every flow's access link towards the network (the sender host's interface queue).
    pub access_queue: QueueSpec,
    /// Queue of every flow's access link towards the host (ACKs, and a reverse flow's data).
    pub reverse_access_queue: QueueSpec,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub queue: QueueSpec,
    /// Bernoulli per-packet random loss probability (dummynet `plr`), counted apart from queue drops.
    pub loss_rate: f64,
    /// Later changes of `loss_rate`, in time order: from `at_ns` on the link drops with the step's
    /// probability (`loss_schedule.rs`). Empty for a constant loss rate.
    pub loss_changes: Vec<LossChange>,
    /// The loss process: Bernoulli with `loss_rate` and `loss_changes`, or Gilbert-Elliott (then
    /// `loss_rate` is 0 and `loss_changes` empty); `random_loss.rs`.
    pub loss_model: LossModel,
}

/// A link's random loss process.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossModel {
    /// Independent losses with the link's `loss_rate` (dummynet `plr`, netem `loss random`).
    Bernoulli,
    /// Bursty losses of the Gilbert-Elliott model (netem `loss gemodel p r 1-h 1-k`): per packet the
    /// state moves (good to bad with `p_good_to_bad`, bad to good with `p_bad_to_good`) and the
    /// packet is lost with the probability of the state it found (`loss_good`, `loss_bad`).
    GilbertElliott { p_good_to_bad: f64, p_bad_to_good: f64, loss_good: f64, loss_bad: f64 },
}

/// From `at_ns` on, a link's random loss probability is `loss_rate`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LossChange {
    pub at_ns: u64,
    pub loss_rate: f64,
}

/// A queue limit and the unit the queue is measured in: `{"pkts": 84}` or `{"bytes": 150000}`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueLimit {
    Pkts(u64),
    Bytes(u64),
}

impl QueueLimit {
    pub fn value(self) -> u64 {
        match self {
            QueueLimit::Pkts(n) | QueueLimit::Bytes(n) => n,
        }
    }
    pub fn pkts(self) -> Option<u64> {
        match self {
            QueueLimit::Pkts(n) => Some(n),
            QueueLimit::Bytes(_) => None,
        }
    }
    pub fn bytes(self) -> Option<u64> {
        match self {
            QueueLimit::Bytes(n) => Some(n),
            QueueLimit::Pkts(_) => None,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueSpec {
    /// Tail drop once the limit (not counting the packet on the wire) is reached.
    Droptail { limit: QueueLimit },
    /// RED (Floyd & Jacobson 1993) as ns-2's `Queue/RED`; see `red.rs` and `docs/red.md`. The queue is
    /// measured in the unit of the limit; `min_th` and `max_th` are in that unit (fractions allowed).
    Red {
        limit: QueueLimit,
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

/// What a flow carries (the engine's own label, derived from `Traffic`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowKind {
    Tcp,
    Cbr,
    Voip,
    Web,
}

/// Which way a flow's data crosses a dumbbell.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Forward,
    /// Data over the reverse bottleneck, ACKs over the forward one.
    Reverse,
}

/// Where a flow goes: a dumbbell flow's direction, or a parking-lot flow's hops (inclusive).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RouteSpec {
    Dumbbell { direction: Direction },
    ParkingLot { first_hop: usize, last_hop: usize },
}

/// A one-way access delay: fixed, or drawn per flow from the run's seed (uniform on [low, high]).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum DelaySpec {
    Fixed { delay_ns: u64 },
    Uniform { low_ns: u64, high_ns: u64 },
}

/// One interval [start, stop) in which the application offers data.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Interval {
    pub start_ns: u64,
    pub stop_ns: u64,
}

/// How much a TCP flow sends.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Transfer {
    /// Bulk: always data to send while active.
    Unlimited,
    /// A finite transfer of `bytes` (then the flow completion time is reported).
    Finite { bytes: u64 },
}

/// How fast a TCP flow's application writes data (`sim/app_rate.rs`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AppRate {
    /// Data is always there to send (a bulk or finite transfer written at once).
    Unlimited,
    /// The application writes `rate_bps` of payload: one segment at the start of each active
    /// interval, then one every `mss * 8 / rate_bps` seconds.
    Limited { rate_bps: u64 },
}

/// A VoIP source's packet pattern.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum VoicePattern {
    /// A packet every interval while active.
    Constant,
    /// On/off talk spurts with exponential periods (Brady 1969).
    TalkSpurts { mean_on_ns: u64, mean_off_ns: u64 },
}

/// One algorithm parameter value as the catalog types it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(untagged)]
pub enum ParamSetting {
    Bool(bool),
    Number(f64),
    Text(String),
}

impl From<&ParamSetting> for ccsim_cc::ParamValue {
    fn from(v: &ParamSetting) -> Self {
        match v {
            ParamSetting::Bool(b) => ccsim_cc::ParamValue::Bool(*b),
            ParamSetting::Number(x) => ccsim_cc::ParamValue::Number(*x),
            ParamSetting::Text(s) => ccsim_cc::ParamValue::Text(s.clone()),
        }
    }
}

/// What a flow carries, each kind with exactly its own fields.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Traffic {
    /// A TCP connection driven by a congestion-control algorithm.
    Tcp {
        algorithm: String,
        /// The parameters the scenario sets; the algorithm's own defaults apply to the others (its
        /// parameters can depend on each other, e.g. a preset and the values it implies).
        params: BTreeMap<String, ParamSetting>,
        tcp: TcpConfig,
        transfer: Transfer,
        app_rate: AppRate,
    },
    /// Web-like background: short TCP transfers arriving as a Poisson process (`arrival_rate` per
    /// second) with Pareto sizes (mean `size_mean_bytes`, shape `size_shape`), each with `algorithm`.
    Web {
        algorithm: String,
        params: BTreeMap<String, ParamSetting>,
        tcp: TcpConfig,
        arrival_rate: f64,
        size_mean_bytes: u64,
        size_shape: f64,
    },
    /// Constant bit rate, UDP-like: `rate_bps` on the wire, `payload_bytes` + `header_bytes` a packet.
    Cbr { rate_bps: u64, payload_bytes: u64, header_bytes: u64 },
    /// Voice: `payload_bytes` (+ `header_bytes` of IP/UDP/RTP) every `interval_ns`.
    Voip { payload_bytes: u64, header_bytes: u64, interval_ns: u64, pattern: VoicePattern },
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub name: String,
    /// Active intervals [start, stop): ordered, disjoint, inside the run. A TCP flow keeps its
    /// connection state across the gaps.
    pub intervals: Vec<Interval>,
    /// A random start: the first interval starts at `intervals[0].start_ns + U * start_spread_ns`, U
    /// uniform on [0, 1) drawn per flow from the run's seed (`sim/start.rs`); 0 for a fixed start.
    pub start_spread_ns: u64,
    pub access_delay: DelaySpec,
    pub route: RouteSpec,
    pub traffic: Traffic,
}

impl FlowSpec {
    /// The active intervals [start, stop) of the application.
    pub fn active_intervals(&self) -> Vec<(u64, u64)> {
        self.intervals.iter().map(|iv| (iv.start_ns, iv.stop_ns)).collect()
    }

    pub fn kind(&self) -> FlowKind {
        match self.traffic {
            Traffic::Tcp { .. } => FlowKind::Tcp,
            Traffic::Web { .. } => FlowKind::Web,
            Traffic::Cbr { .. } => FlowKind::Cbr,
            Traffic::Voip { .. } => FlowKind::Voip,
        }
    }

    /// Algorithm, parameters and TCP settings of a TCP or web flow.
    pub fn congestion_control(&self) -> Option<(&str, &BTreeMap<String, ParamSetting>, &TcpConfig)> {
        match &self.traffic {
            Traffic::Tcp { algorithm, params, tcp, .. } | Traffic::Web { algorithm, params, tcp, .. } => {
                Some((algorithm.as_str(), params, tcp))
            }
            Traffic::Cbr { .. } | Traffic::Voip { .. } => None,
        }
    }

    /// The transfer size of a finite TCP flow.
    pub fn transfer_bytes(&self) -> Option<u64> {
        match self.traffic {
            Traffic::Tcp { transfer: Transfer::Finite { bytes }, .. } => Some(bytes),
            _ => None,
        }
    }
}

/// TCP machine settings of one flow (the front end writes FreeBSD 9 values, the CHD paper's testbed,
/// except the minimum RTO, which follows Linux and ns-2; see `docs/choices.md`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpConfig {
    /// Payload bytes per segment.
    pub mss_bytes: u64,
    /// Header bytes on the wire per segment (IP + TCP + options); link occupancy counts wire bytes.
    pub header_bytes: u64,
    pub initial_window_pkts: u64,
    /// ssthresh when the connection starts (`tcp/startup.rs`).
    pub initial_ssthresh: InitialSsthresh,
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
    /// The profile the front end expanded into these knobs (`freebsd9`, `linux`, `ns2`), recorded
    /// for humans reading `meta.json`; the engine reads only the knobs (docs/profiles.md).
    pub profile: String,
    /// How the retransmission timeout is estimated (see `RtoEstimator`).
    pub rto_estimator: RtoEstimator,
    /// Clock granularity: G of RFC 6298 with `rfc6298`, ns-2's `tcpTick_` with `ns2` (RTT samples
    /// and the RTO in whole ticks).
    pub timer_granularity_ns: u64,
    /// ns-2 `maxburst_`: at most this many segments sent in response to one ACK or timeout (fast
    /// retransmissions aside); 0 = no limit.
    pub max_burst_pkts: u32,
    /// ns-2 `Agent/TCP` keeps `ssthresh_` as a whole number of packets (at least 2) while `cwnd_` is
    /// fractional: a loss rounds the new ssthresh down to whole segments and leaves cwnd unrounded.
    pub ssthresh_whole_packets: bool,
    /// SACK-based loss recovery (with `sack`): RFC 6675 or ns-2's Sack1 (`tcp/recovery/ns2_sack1.rs`).
    pub sack_recovery: SackRecovery,
    /// Where slow start ends (FreeBSD cwnd <= ssthresh, Linux cwnd < ssthresh capped at ssthresh).
    pub slow_start_rule: SlowStartRule,
    /// The window during SACK loss recovery: RFC 6675 (cwnd = ssthresh) or PRR (RFC 6937).
    pub recovery_window: RecoveryWindow,
    /// When the receiver holds an ACK back (with `delayed_ack` on): RFC 5681 or Linux quick-ack.
    pub delayed_ack_rule: DelayedAckRule,
    /// How losses are detected: duplicate ACKs / RFC 6675 IsLost, or RACK-TLP (RFC 8985, needs SACK).
    pub loss_detection: LossDetection,
    /// Which partial ACKs of a NewReno recovery (SACK off) restart the retransmission timer.
    pub partial_ack_rto: PartialAckRto,
    /// Host send jitter: each segment leaves the sending host after a delay drawn uniformly from
    /// [0, this] (keeping order), modelling interrupt and scheduling latency (`sim/host.rs`).
    pub send_jitter_ns: u64,
}

/// `tcp.partial_ack_rto`: RFC 6582 section 4's two timer variants of NewReno recovery.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PartialAckRto {
    /// "Impatient": only the first partial ACK restarts the timer (RFC 6582 step 5; ns-2.35
    /// `Agent/TCP/Newreno` with its default `newreno_changes1_ 1`, `partialnewack_helper`).
    First,
    /// "Slow-but-steady": every partial ACK restarts it, as every ACK of new data does (FreeBSD
    /// `tcp_do_segment` re-arms TT_REXMT for any ACK below snd_max; Linux `tcp_rearm_rto` from `tcp_ack`).
    Every,
}

/// The SACK-based loss recovery of a TCP flow.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SackRecovery {
    /// RFC 6675: pipe from the scoreboard, IsLost() with DupThresh, NextSeg() rules 1-3.
    Rfc6675,
    /// ns-2.35 `Agent/TCP/Sack1`: a counted `pipe_`, every hole below the highest SACK retransmitted.
    Ns2Sack1,
}

/// The retransmission-timer estimator of a TCP flow.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RtoEstimator {
    /// RFC 6298 on every valid (Karn) sample, in nanoseconds, G = `timer_granularity_ns`.
    Rfc6298,
    /// ns-2's `TcpAgent` (tcp/tcp.cc `rtt_update`, `rtt_timeout`, `rtt_backoff`; ns-2.35): one timed
    /// segment per RTT, samples and the RTO in ticks of `timer_granularity_ns`, see `tcp/rtt_ns2.rs`.
    Ns2,
    /// Linux's `tcp_rtt_estimator` / `tcp_set_rto`: RTO = SRTT + max(4 mdev, min RTO) with a per-round
    /// maximum deviation (`tcp/linux_rto.rs`).
    Linux,
    /// FreeBSD's `tcp_xmit_timer` / `TCPT_RANGESET`: SRTT + 4 RTTVAR in whole ticks of
    /// `timer_granularity_ns`, plus `tcp_rexmit_slop` (200 ms), at least the minimum RTO
    /// (`tcp_rexmit_min`) and two ticks above the sample (`tcp/rtt_freebsd.rs`).
    Freebsd,
}

/// `tcp.slow_start_rule`; see `ccsim_cc::SlowStartRule`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SlowStartRule {
    Freebsd,
    Linux,
}

/// `tcp.recovery_window`; see `tcp::prr`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryWindow {
    Rfc6675,
    Prr,
}

/// `tcp.delayed_ack_rule`; see `tcp::quickack`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DelayedAckRule {
    Rfc5681,
    Linux,
}

/// `tcp.loss_detection`; see `tcp::rack` and `tcp::tlp`.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LossDetection {
    Dupack,
    RackTlp,
}

/// A connection's slow-start threshold before its first loss.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum InitialSsthresh {
    /// Arbitrarily high (RFC 5681 section 3.1): slow start until the first loss.
    Unlimited,
    /// A fixed threshold in bytes (Linux route metric `ssthresh`, FreeBSD host cache `rmx_ssthresh`,
    /// ns-2 `window_` / `max_ssthresh_`).
    Bytes { bytes: u64 },
    /// Slow start off: one byte below the initial window, so the flow starts in congestion avoidance
    /// under either slow-start test (`cwnd <= ssthresh` or `cwnd < ssthresh`).
    BelowInitialWindow,
}

/// Plain seconds, milliseconds, microseconds or nanoseconds, for messages.
fn fmt_ns(ns: u64) -> String {
    for (unit, mult) in [("s", 1_000_000_000u64), ("ms", 1_000_000), ("us", 1_000)] {
        if ns >= mult && ns % (mult / 1000).max(1) == 0 {
            let text = format!("{:.3}", ns as f64 / mult as f64);
            return format!("{}{unit}", text.trim_end_matches('0').trim_end_matches('.'));
        }
    }
    format!("{ns}ns")
}

/// The JSON Schema of the resolved document (`docs/resolved-scenario.schema.json`), pretty-printed.
pub fn resolved_schema_json() -> String {
    let schema = schemars::schema_for!(Scenario);
    serde_json::to_string_pretty(&schema).expect("schema serialises") + "\n"
}

impl Scenario {
    /// Parses a resolved document; a missing, unknown or mistyped field is a `SimError::Scenario`
    /// naming its path (`flows[0].traffic.tcp.sack`), also inside a `kind`-tagged object, where
    /// serde alone stops at the object (`error_path`). The reason carries no line and column: the
    /// path says where.
    pub fn from_json(text: &str) -> Result<Scenario, SimError> {
        if let Ok(scenario) = serde_json::from_str::<Scenario>(text) {
            return scenario.check_format();
        }
        let de = &mut serde_json::Deserializer::from_str(text);
        let scenario: Scenario = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let reason = if inner.line() > 0 {
                let text = inner.to_string();
                let at = format!(" at line {} column {}", inner.line(), inner.column());
                text.strip_suffix(&at).map_or(text.clone(), str::to_string)
            } else {
                inner.to_string()
            };
            if let Some(field) = error_path::locate(text, &path, &reason) {
                return SimError::scenario(field, reason);
            }
            // serde names a missing or unknown key in backticks: append it to the path.
            let key = if reason.starts_with("missing field") || reason.starts_with("unknown field") {
                reason.split('`').nth(1).map(|k| k.to_string())
            } else {
                None
            };
            let field = match (path.as_str(), key) {
                (".", Some(k)) => k,
                (".", None) => "scenario".to_string(),
                (p, Some(k)) => format!("{p}.{k}"),
                (p, None) => p.to_string(),
            };
            SimError::scenario(field, reason)
        })?;
        scenario.check_format()
    }

    fn check_format(self) -> Result<Scenario, SimError> {
        let scenario = self;
        if scenario.ccsim_resolved != RESOLVED_FORMAT {
            return Err(SimError::scenario(
                "ccsim_resolved",
                format!("format version {} is not the one this engine reads ({RESOLVED_FORMAT})", scenario.ccsim_resolved),
            ));
        }
        Ok(scenario)
    }

    /// Checks every invariant the engine relies on (the single owner of these rules); the first
    /// problem is returned, named by its path in the resolved document.
    pub fn validate(&self) -> Result<(), SimError> {
        fn err(field: impl Into<String>, reason: impl Into<String>) -> SimError {
            SimError::scenario(field, reason)
        }
        let duration = self.duration_ns;
        if self.ccsim_resolved != RESOLVED_FORMAT {
            return Err(err("ccsim_resolved", format!("must be {RESOLVED_FORMAT}")));
        }
        if duration == 0 {
            return Err(err("duration_ns", "must be > 0"));
        }
        if self.sample_interval_ns == 0 {
            return Err(err("sample_interval_ns", "must be > 0"));
        }
        if self.sample_interval_ns > duration {
            return Err(err(
                "sample_interval_ns",
                format!("{} is longer than the run ({})", fmt_ns(self.sample_interval_ns), fmt_ns(duration)),
            ));
        }
        let (start, end) = (self.measure_start_ns, self.measure_end_ns);
        if end <= start {
            return Err(err("measure_end_ns", format!("end {} is not after start {}", fmt_ns(end), fmt_ns(start))));
        }
        if end > duration {
            return Err(err("measure_end_ns", format!("end {} is after the end of the run ({})", fmt_ns(end), fmt_ns(duration))));
        }
        let hops = match &self.topology {
            Topology::Dumbbell(d) => {
                check_link("topology.bottleneck", &d.bottleneck, duration)?;
                check_link("topology.reverse", &d.reverse, duration)?;
                if d.access_rate_bps == 0 {
                    return Err(err("topology.access_rate_bps", "must be > 0"));
                }
                check_queue("topology.access_queue", &d.access_queue)?;
                check_queue("topology.reverse_access_queue", &d.reverse_access_queue)?;
                None
            }
            Topology::ParkingLot(p) => {
                if p.hops.is_empty() {
                    return Err(err("topology.hops", "at least one hop is needed"));
                }
                for (k, h) in p.hops.iter().enumerate() {
                    check_link(&format!("topology.hops[{k}]"), h, duration)?;
                }
                if p.reverse_hops.len() != p.hops.len() {
                    return Err(err("topology.reverse_hops", "needs one entry per forward hop"));
                }
                for (k, h) in p.reverse_hops.iter().enumerate() {
                    check_link(&format!("topology.reverse_hops[{k}]"), h, duration)?;
                }
                if p.access_rate_bps == 0 {
                    return Err(err("topology.access_rate_bps", "must be > 0"));
                }
                check_queue("topology.access_queue", &p.access_queue)?;
                check_queue("topology.reverse_access_queue", &p.reverse_access_queue)?;
                Some(p.hops.len())
            }
        };
        if self.flows.is_empty() {
            return Err(err("flows", "at least one flow is needed"));
        }
        for (i, f) in self.flows.iter().enumerate() {
            let at = |k: &str| format!("flows[{i}].{k}");
            if f.name.is_empty() {
                return Err(err(at("name"), "must not be empty"));
            }
            if f.intervals.is_empty() {
                return Err(err(at("intervals"), "needs at least one interval"));
            }
            let mut prev_stop = 0;
            for (k, iv) in f.intervals.iter().enumerate() {
                let iv_at = |key: &str| format!("flows[{i}].intervals[{k}].{key}");
                if iv.start_ns >= duration {
                    return Err(err(iv_at("start_ns"), format!("{} is at or after the end of the run ({})", fmt_ns(iv.start_ns), fmt_ns(duration))));
                }
                if iv.stop_ns <= iv.start_ns {
                    return Err(err(iv_at("stop_ns"), format!("{} is not after start ({})", fmt_ns(iv.stop_ns), fmt_ns(iv.start_ns))));
                }
                if iv.stop_ns > duration {
                    return Err(err(iv_at("stop_ns"), format!("{} is after the end of the run ({})", fmt_ns(iv.stop_ns), fmt_ns(duration))));
                }
                if k > 0 && iv.start_ns < prev_stop {
                    return Err(err(iv_at("start_ns"), "intervals must be in order and must not overlap"));
                }
                prev_stop = iv.stop_ns;
            }
            let first = f.intervals[0];
            if first.start_ns.saturating_add(f.start_spread_ns) >= first.stop_ns {
                return Err(err(
                    at("start_spread_ns"),
                    format!(
                        "the latest start {} is not before the first interval's stop ({})",
                        fmt_ns(first.start_ns.saturating_add(f.start_spread_ns)),
                        fmt_ns(first.stop_ns)
                    ),
                ));
            }
            if let DelaySpec::Uniform { low_ns, high_ns } = f.access_delay {
                if high_ns < low_ns {
                    return Err(err(at("access_delay"), "uniform range needs low <= high"));
                }
            }
            match (hops, f.route) {
                (Some(n), RouteSpec::ParkingLot { first_hop, last_hop }) => {
                    if first_hop > last_hop || last_hop >= n {
                        return Err(err(at("route"), format!("must be [first, last] with 0 <= first <= last < {n} hops")));
                    }
                }
                (None, RouteSpec::Dumbbell { .. }) => {}
                (None, RouteSpec::ParkingLot { .. }) => return Err(err(at("route"), "only a parking-lot topology has hops")),
                (Some(_), RouteSpec::Dumbbell { .. }) => {
                    return Err(err(at("route"), "a parking-lot flow needs its hops (direction is a dumbbell feature)"))
                }
            }
            let tr = |k: &str| format!("flows[{i}].traffic.{k}");
            match &f.traffic {
                Traffic::Tcp { transfer, app_rate, .. } => {
                    if *transfer == (Transfer::Finite { bytes: 0 }) {
                        return Err(err(tr("transfer.bytes"), "must be > 0"));
                    }
                    if *app_rate == (AppRate::Limited { rate_bps: 0 }) {
                        return Err(err(tr("app_rate.rate_bps"), "must be > 0"));
                    }
                }
                Traffic::Web { arrival_rate, size_mean_bytes, size_shape, .. } => {
                    if !(arrival_rate.is_finite() && *arrival_rate > 0.0) {
                        return Err(err(tr("arrival_rate"), "web traffic needs an arrival rate > 0 per second"));
                    }
                    if *size_mean_bytes == 0 {
                        return Err(err(tr("size_mean_bytes"), "web traffic needs a mean transfer size > 0"));
                    }
                    if !(size_shape.is_finite() && *size_shape > 1.0) {
                        return Err(err(tr("size_shape"), "the Pareto shape must be > 1 (a finite mean)"));
                    }
                }
                Traffic::Cbr { rate_bps, payload_bytes, .. } => {
                    if *rate_bps == 0 {
                        return Err(err(tr("rate_bps"), "must be > 0"));
                    }
                    if *payload_bytes == 0 {
                        return Err(err(tr("payload_bytes"), "must be > 0"));
                    }
                }
                Traffic::Voip { payload_bytes, interval_ns, pattern, .. } => {
                    if *payload_bytes == 0 {
                        return Err(err(tr("payload_bytes"), "must be > 0"));
                    }
                    if *interval_ns == 0 {
                        return Err(err(tr("interval_ns"), "must be > 0"));
                    }
                    if let VoicePattern::TalkSpurts { mean_on_ns, mean_off_ns } = pattern {
                        if *mean_on_ns == 0 {
                            return Err(err(tr("pattern.mean_on_ns"), "must be > 0"));
                        }
                        if *mean_off_ns == 0 {
                            return Err(err(tr("pattern.mean_off_ns"), "must be > 0"));
                        }
                    }
                }
            }
            let Some((_, _, t)) = f.congestion_control() else { continue };
            let tcp_at = |k: &str| format!("flows[{i}].traffic.tcp.{k}");
            if t.mss_bytes == 0 || t.mss_bytes > 65_000 {
                return Err(err(tcp_at("mss_bytes"), "must be in [1, 65000]"));
            }
            if t.initial_window_pkts == 0 {
                return Err(err(tcp_at("initial_window_pkts"), "must be >= 1"));
            }
            if let InitialSsthresh::Bytes { bytes } = t.initial_ssthresh {
                if bytes < t.mss_bytes {
                    return Err(err(tcp_at("initial_ssthresh.bytes"), format!("{bytes}B is smaller than one segment ({}B)", t.mss_bytes)));
                }
            }
            if t.min_rto_ns == 0 {
                return Err(err(tcp_at("min_rto_ns"), "must be > 0"));
            }
            if t.min_rto_ns > t.max_rto_ns {
                return Err(err(tcp_at("max_rto_ns"), format!("{} is below min_rto ({})", fmt_ns(t.max_rto_ns), fmt_ns(t.min_rto_ns))));
            }
            if !(t.min_rto_ns <= t.initial_rto_ns && t.initial_rto_ns <= t.max_rto_ns) {
                return Err(err(
                    tcp_at("initial_rto_ns"),
                    format!(
                        "{} is outside [min_rto, max_rto] = [{}, {}]",
                        fmt_ns(t.initial_rto_ns),
                        fmt_ns(t.min_rto_ns),
                        fmt_ns(t.max_rto_ns)
                    ),
                ));
            }
            if t.rwnd_bytes < t.mss_bytes {
                return Err(err(tcp_at("rwnd_bytes"), format!("{}B is smaller than one segment ({}B)", t.rwnd_bytes, t.mss_bytes)));
            }
            if t.dupack_threshold == 0 {
                return Err(err(tcp_at("dupack_threshold"), "must be >= 1"));
            }
            if t.timer_granularity_ns == 0 {
                return Err(err(tcp_at("timer_granularity_ns"), "must be > 0"));
            }
            if matches!(t.rto_estimator, RtoEstimator::Ns2 | RtoEstimator::Freebsd) && t.timer_granularity_ns > t.max_rto_ns {
                return Err(err(
                    tcp_at("timer_granularity_ns"),
                    format!("a tick of {} is longer than max_rto ({})", fmt_ns(t.timer_granularity_ns), fmt_ns(t.max_rto_ns)),
                ));
            }
            if t.delayed_ack && t.delayed_ack_timeout_ns == 0 {
                return Err(err(tcp_at("delayed_ack_timeout_ns"), "must be > 0 when delayed ACKs are on"));
            }
            // The Linux recovery mechanisms work on the RFC 6675 scoreboard recovery.
            if t.sack_recovery == SackRecovery::Ns2Sack1 {
                if t.loss_detection == LossDetection::RackTlp {
                    return Err(err(tcp_at("loss_detection"), "rack_tlp needs sack_recovery = rfc6675"));
                }
                if t.recovery_window == RecoveryWindow::Prr {
                    return Err(err(tcp_at("recovery_window"), "prr needs sack_recovery = rfc6675"));
                }
            }
        }
        Ok(())
    }
}

fn check_link(field: &str, l: &LinkSpec, duration: u64) -> Result<(), SimError> {
    if l.rate_bps == 0 {
        return Err(SimError::scenario(format!("{field}.rate_bps"), "must be > 0"));
    }
    check_loss(&format!("{field}.loss_rate"), l.loss_rate)?;
    check_loss_model(field, l)?;
    let mut after = 0;
    for (k, c) in l.loss_changes.iter().enumerate() {
        let at = |key: &str| format!("{field}.loss_changes[{k}].{key}");
        if c.at_ns <= after {
            let what = if k == 0 { "after 0s (loss_rate holds from 0s)".to_string() } else { format!("after the previous change ({})", fmt_ns(after)) };
            return Err(SimError::scenario(at("at_ns"), format!("{} must be {what}", fmt_ns(c.at_ns))));
        }
        if c.at_ns >= duration {
            return Err(SimError::scenario(at("at_ns"), format!("{} is at or after the end of the run ({})", fmt_ns(c.at_ns), fmt_ns(duration))));
        }
        check_loss(&at("loss_rate"), c.loss_rate)?;
        after = c.at_ns;
    }
    check_queue(&format!("{field}.queue"), &l.queue)
}

fn check_loss_model(field: &str, l: &LinkSpec) -> Result<(), SimError> {
    let LossModel::GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good, loss_bad } = l.loss_model else { return Ok(()) };
    let at = |key: &str| format!("{field}.loss_model.{key}");
    for (key, p) in [("p_good_to_bad", p_good_to_bad), ("p_bad_to_good", p_bad_to_good)] {
        if !(p > 0.0 && p <= 1.0) {
            return Err(SimError::scenario(at(key), format!("{p} must be in (0, 1]: the chain must leave each state")));
        }
    }
    for (key, p) in [("loss_good", loss_good), ("loss_bad", loss_bad)] {
        if !(0.0..=1.0).contains(&p) {
            return Err(SimError::scenario(at(key), format!("{p} must be in [0, 1]")));
        }
    }
    if l.loss_rate != 0.0 || !l.loss_changes.is_empty() {
        return Err(SimError::scenario(format!("{field}.loss_rate"), "a Gilbert-Elliott link has no Bernoulli loss_rate or loss_changes (0 and none)"));
    }
    Ok(())
}

fn check_loss(field: &str, p: f64) -> Result<(), SimError> {
    if !(0.0..1.0).contains(&p) {
        return Err(SimError::scenario(field, format!("{p} would drop every packet: must be in [0, 1)")));
    }
    Ok(())
}

/// Every queue is finite: a limit of at least one packet, RED thresholds inside it.
fn check_queue(field: &str, queue: &QueueSpec) -> Result<(), SimError> {
    match *queue {
        QueueSpec::Droptail { limit } => {
            if limit.value() == 0 {
                return Err(SimError::scenario(field, "must hold at least 1 packet"));
            }
        }
        QueueSpec::Red { limit, min_th, max_th, max_p, w_q, mean_pkt_bytes, .. } => {
            let q = |k: &str| format!("{field}.{k}");
            let limit = limit.value();
            if limit == 0 {
                return Err(SimError::scenario(q("limit"), "must hold at least 1 packet"));
            }
            if !(min_th.is_finite() && min_th > 0.0) {
                return Err(SimError::scenario(q("min_th"), "must be > 0"));
            }
            if !(max_th.is_finite() && max_th > min_th) {
                return Err(SimError::scenario(q("max_th"), format!("{max_th} must be above min_th ({min_th})")));
            }
            if max_th > limit as f64 {
                return Err(SimError::scenario(q("max_th"), format!("{max_th} is above the limit ({limit})")));
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

