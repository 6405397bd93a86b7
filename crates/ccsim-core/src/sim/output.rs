//! What a run hands back.

use ccsim_cc::ParamValue;

use crate::table::Table;

/// Counters of the event loop, reported with the results.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    pub events: u64,
    pub bottleneck_packets: u64,
}

/// Everything a run produces.
pub struct RunOutput {
    pub flows: Table,
    /// Per stream flow and sample interval: received rate, one-way delay, jitter, loss.
    pub streams: Table,
    pub cc_metrics: Table,
    pub links: Table,
    pub flow_summary: Table,
    pub link_summary: Table,
    /// Per-packet delay distributions over the summary window, from the histograms: one row per
    /// non-empty bucket (`what` = "qdelay" per link, "rtt" per TCP flow).
    pub delay_hist: Table,
    pub run_summary: Vec<(String, f64)>,
    pub stats: RunStats,
    /// Algorithm parameters actually used, per flow (defaults filled in).
    pub params_used: Vec<(String, String, Vec<(String, ParamValue)>)>,
}
