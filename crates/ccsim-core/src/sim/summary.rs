//! The end-of-run summaries: one row per flow, one per link, the run's scalars, and the algorithm
//! parameters each flow used.

use std::time::Duration;

use ccsim_cc::{ParamValue, Time};

use crate::link::Link;
use crate::scenario::{FlowKind, Scenario};
use crate::sim::flow::{App, Flow};
use crate::sim::output::RunStats;
use crate::sim::series::{series_table, Name};
use crate::table::Table;

pub(crate) fn ms(d: Option<Duration>) -> f64 {
    d.map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
}

series_table! {
    /// One row per flow and per web transfer (`SUMMARY_COLUMNS` in `meter.rs` counts them).
    FlowSummaryRows {
        flow: u64,
        name: String,
        kind: &'static str,
        algorithm: String,
        start_s: f64,
        stop_s: f64,
        access_delay_ms: f64,
        goodput_bps: f64,
        active_s: f64,
        goodput_active_bps: f64,
        in_jain: bool,
        bytes_delivered: u64,
        data_pkts_sent: u64,
        // ACKs the sender received over the whole run (the receiver's ACK frequency: a per-ACK
        // window increase grows with it). The kernel testbed reads `tcpi_segs_in` less the SYN-ACK.
        acks_received: u64,
        // Retransmissions, fast retransmits, timeouts, drops and the loss rate: over the summary
        // window, as the kernel testbed counts them (`ccsim compare` compares like with like); the
        // whole run's retransmissions and timeouts are `retransmits_run`, `timeouts_run`.
        retransmits: u64,
        fast_retransmits: u64,
        timeouts: u64,
        drops_queue: u64,
        drops_random: u64,
        loss_rate: f64,
        rtt_mean_ms: f64,
        rtt_p50_ms: f64,
        rtt_p95_ms: f64,
        rtt_p99_ms: f64,
        rtt_min_ms: f64,
        rtt_max_ms: f64,
        fct_s: f64,
        completed: bool,
        owd_mean_ms: f64,
        owd_p50_ms: f64,
        owd_p95_ms: f64,
        owd_p99_ms: f64,
        owd_max_ms: f64,
        jitter_ms: f64,
        stream_lost_pkts: f64,
        retransmits_run: u64,
        timeouts_run: u64,
    }
}

/// The flow summary table and the goodputs the run's scalars are computed from.
pub(crate) struct FlowSummary {
    pub table: Table,
    /// Goodput of each TCP flow active in the window (Jain's index is over these; the table's
    /// `in_jain` column names them).
    pub tcp_goodputs: Vec<f64>,
    pub total_goodput: f64,
}

/// Time a flow's schedule is on inside [from, to), in seconds.
fn active_seconds(intervals: &[(Time, Time)], from: Time, to: Time) -> f64 {
    intervals.iter().map(|&(a, b)| if b.max(from).min(to) > a.max(from) { (b.min(to) - a.max(from)).as_secs_f64() } else { 0.0 }).sum()
}

pub(crate) fn flow_summary(flows: &[Flow], measure_start: Time, measure_end: Time) -> FlowSummary {
    let window_s = (measure_end - measure_start).as_secs_f64();
    let mut fs = FlowSummaryRows::with_capacity(flows.iter().filter(|f| !matches!(f.app, App::Web(_))).count());
    let mut tcp_goodputs = Vec::new();
    let mut total_goodput = 0.0;
    for (i, f) in flows.iter().enumerate() {
        if matches!(f.app, App::Web(_)) {
            continue; // the generator itself moves no data: its transfers have rows of their own
        }
        let (id, sched, c) = (&f.id, &f.schedule, &f.counters);
        let delivered = f.delivered_bytes();
        let end_rcv = f.window.rcv_at_end.unwrap_or(delivered);
        let goodput = (end_rcv - f.window.rcv_at_start.min(end_rcv)) as f64 * 8.0 / window_s;
        // Goodput while the application was on: an on/off flow's window average hides the rate it
        // took while it was on. A flow that finished early (bytes = ...) counts until completion.
        let on_until = sched.completed_at.map_or(measure_end, |t| t.min(measure_end));
        let active_s = active_seconds(&sched.intervals, measure_start, on_until);
        let goodput_active = if active_s > 0.0 { goodput * window_s / active_s } else { f64::NAN };
        let active_in_window = sched.intervals.iter().any(|&(a, b)| a < measure_end && b > measure_start);
        // Jain's index is over the TCP flows: streams send at their application's rate and do not
        // compete for a share (docs/reports.md).
        let in_jain = active_in_window && id.kind == FlowKind::Tcp;
        if in_jain {
            tcp_goodputs.push(goodput);
        }
        total_goodput += goodput;
        let (sent_pkts, _, _) = f.sent();
        let h = &f.window.rtt_hist;
        let [p50, p95, p99] = h.quantiles([0.5, 0.95, 0.99]).map(|v| v / 1e6);
        let kind = match id.kind {
            FlowKind::Tcp => "tcp",
            FlowKind::Cbr => "cbr",
            FlowKind::Voip => "voip",
            FlowKind::Web => "web",
        };
        let (rtt_min, rtt_max) = match &f.app {
            App::Tcp { sender, .. } => sender.rtt_range(),
            App::Finished(done) => done.rtt_range,
            App::Stream { .. } | App::Web(_) => (None, None),
        };
        let run = f.loss_counts();
        let w = f.window.counts_at_end.unwrap_or(run).since(f.window.counts_at_start);
        // Streams: what a VoIP or video application sees at the receiver (NaN for TCP).
        let (owd, jitter_ms, lost) = match &f.app {
            App::Stream { sink, .. } => (Some(&sink.owd_hist), sink.jitter_ns / 1e6, sink.lost() as f64),
            App::Tcp { .. } | App::Finished(_) | App::Web(_) => (None, f64::NAN, f64::NAN),
        };
        let [o50, o95, o99] = owd.map_or([f64::NAN; 3], |h| h.quantiles([0.5, 0.95, 0.99]).map(|v| v / 1e6));
        fs.push(
            i as u64,
            id.name.clone(),
            kind,
            id.algorithm.clone(),
            sched.start.as_secs_f64(),
            sched.stop.as_secs_f64(),
            f.access_delay_ns as f64 / 1e6,
            goodput,
            active_s,
            goodput_active,
            in_jain,
            delivered,
            sent_pkts,
            c.acks_delivered,
            w.retransmits,
            w.fast_retransmits,
            w.timeouts,
            w.drops_queue,
            w.drops_random,
            if w.data_pkts_sent == 0 { 0.0 } else { w.data_dropped_pkts as f64 / w.data_pkts_sent as f64 },
            h.mean() / 1e6,
            p50,
            p95,
            p99,
            ms(rtt_min),
            ms(rtt_max),
            match (sched.bytes, sched.completed_at) {
                (Some(_), Some(t)) => (t - sched.start).as_secs_f64(),
                _ => f64::NAN,
            },
            sched.completed_at.is_some(),
            owd.map_or(f64::NAN, |h| h.mean() / 1e6),
            o50,
            o95,
            o99,
            owd.map_or(f64::NAN, |h| if h.count() == 0 { f64::NAN } else { h.max() as f64 / 1e6 }),
            jitter_ms,
            lost,
            run.retransmits,
            run.timeouts,
        );
    }
    FlowSummary { table: fs.finish(Vec::new()), tcp_goodputs, total_goodput }
}

fn utilisation(l: &Link, window_s: f64) -> f64 {
    l.window.tx_bytes as f64 * 8.0 / (l.rate_bps as f64 * window_s)
}

/// Utilisations this close to the highest count as equally busy: the tie goes to drops.
const BUSY_TIE: f64 = 0.01;

/// The run's bottleneck: the busiest link over the window, whatever the topology (a parking lot's
/// first hop is not necessarily its bottleneck). Among links within `BUSY_TIE` of the highest
/// utilisation, the one with the most queue drops (overflow and AQM), then the longest mean
/// queueing delay, then the topology's own order (its nominal bottleneck first), wins. Random
/// (configured) loss does not count: it says nothing about congestion.
pub(crate) fn busiest_link(links: &[Link], window_s: f64) -> usize {
    let top = links.iter().map(|l| utilisation(l, window_s)).fold(0.0, f64::max);
    let mut best: Option<usize> = None;
    for (i, l) in links.iter().enumerate() {
        if utilisation(l, window_s) < top - BUSY_TIE {
            continue;
        }
        let key = |l: &Link| {
            let q = l.qdelay_hist().mean();
            (l.window.drops_queue, if q.is_nan() { 0.0 } else { q })
        };
        best = match best {
            Some(b) if key(&links[b]) >= key(l) => Some(b),
            _ => Some(i),
        };
    }
    best.unwrap_or(0)
}

series_table! {
    /// One row per link.
    LinkSummaryRows {
        link: String,
        rate_bps: u64,
        bottleneck: bool,
        utilisation: f64,
        qdelay_mean_ms: f64,
        qdelay_p50_ms: f64,
        qdelay_p95_ms: f64,
        qdelay_p99_ms: f64,
        qdelay_max_ms: f64,
        arrivals: u64,
        departures: u64,
        drops_queue: u64,
        drops_random: u64,
        loss_rate: f64,
        drops_early: u64,
    }
}

pub(crate) fn link_summary(links: &[Link], window_s: f64, bottleneck: usize) -> Table {
    let mut ls = LinkSummaryRows::with_capacity(links.len());
    for (i, l) in links.iter().enumerate() {
        let c = &l.window;
        let h = l.qdelay_hist();
        let [p50, p95, p99] = h.quantiles([0.5, 0.95, 0.99]).map(|v| v / 1e6);
        ls.push(
            l.name.clone(),
            l.rate_bps,
            i == bottleneck,
            utilisation(l, window_s),
            h.mean() / 1e6,
            p50,
            p95,
            p99,
            h.max() as f64 / 1e6,
            c.arrivals,
            h.count(), // the window's departures (see `Link::window`)
            c.drops_queue,
            c.drops_random,
            if c.arrivals == 0 { 0.0 } else { (c.drops_queue + c.drops_random) as f64 / c.arrivals as f64 },
            c.drops_early,
        );
    }
    ls.finish(Vec::new())
}

series_table! {
    /// One row per non-empty bucket of a delay histogram.
    DelayHistRows {
        what: &'static str,
        name: Name,
        value_ms: f64,
        count: u64,
    }
}

/// The per-packet delay histograms of the summary window as a long table (what, name, value_ms,
/// count; name = the link's or the flow's): every link's queueing delay (links that carried packets) and every TCP flow's
/// RTT samples, for CDFs of per-packet samples rather than of interval means. A histogram has a
/// few rows: its name is written once (a dictionary column), not once per row.
pub(crate) fn delay_hist(flows: &[Flow], links: &[Link]) -> Table {
    let rtt_flows = || flows.iter().filter(|f| matches!(f.app, App::Tcp { .. }) && !f.id.background);
    let rows = links.iter().map(|l| l.qdelay_hist().buckets_used()).sum::<usize>()
        + rtt_flows().map(|f| f.window.rtt_hist.buckets_used()).sum::<usize>();
    let mut t = DelayHistRows::with_capacity(rows);
    let mut names = Vec::new();
    for l in links {
        let h = l.qdelay_hist();
        if h.count() > 0 {
            let name = Name(names.len() as u32);
            names.push(l.name.clone());
            h.for_each_bucket(|v, c| t.push("qdelay", name, v / 1e6, c));
        }
    }
    for f in rtt_flows() {
        let h = &f.window.rtt_hist;
        if h.count() > 0 {
            let name = Name(names.len() as u32);
            names.push(f.id.name.clone());
            h.for_each_bucket(|v, c| t.push("rtt", name, v / 1e6, c));
        }
    }
    t.finish(names)
}

/// The run's scalars after its duration, window and flow count: fairness, goodput, the bottleneck
/// (`bottleneck_link`: its row in the link summary, chosen by `busiest_link`).
pub(crate) fn run_summary(flows: &FlowSummary, links: &[Link], bottleneck: usize, window_s: f64, stats: &RunStats) -> Vec<(String, f64)> {
    let total_goodput = flows.total_goodput;
    let b = &links[bottleneck];
    vec![
        ("jain_index".to_string(), jain_index(&flows.tcp_goodputs)),
        ("jain_flows".to_string(), flows.tcp_goodputs.len() as f64),
        ("total_goodput_bps".to_string(), total_goodput),
        ("bottleneck_link".to_string(), bottleneck as f64),
        ("bottleneck_rate_bps".to_string(), b.rate_bps as f64),
        ("bottleneck_utilisation".to_string(), utilisation(b, window_s)),
        ("goodput_share_of_capacity".to_string(), total_goodput / b.rate_bps as f64),
        ("bottleneck_qdelay_mean_ms".to_string(), b.qdelay_hist().mean() / 1e6),
        ("bottleneck_qdelay_p95_ms".to_string(), b.qdelay_hist().quantile(0.95) / 1e6),
        ("bottleneck_drops_queue".to_string(), b.window.drops_queue as f64),
        ("bottleneck_drops_random".to_string(), b.window.drops_random as f64),
        ("events".to_string(), stats.events as f64),
        ("bottleneck_packets".to_string(), stats.bottleneck_packets as f64),
    ]
}

/// Parameters actually used, typed, in the algorithm's catalog order (the algorithm's default for
/// each one the scenario leaves out): once per scenario flow (a web generator's transfers share them).
pub(crate) fn params_used(scenario: &Scenario, flows: &[Flow]) -> Vec<(String, String, Vec<(String, ParamValue)>)> {
    let mut params_used = Vec::new();
    // Built once: the catalog is every algorithm's description, made afresh on each call.
    let catalog = ccsim_cc::catalog();
    let mut last: Option<usize> = None;
    for f in flows.iter().filter(|f| !f.id.background) {
        let spec = &scenario.flows[f.id.spec];
        let Some((algorithm, params, _)) = spec.congestion_control() else {
            params_used.push((f.id.name.clone(), String::new(), Vec::new()));
            continue;
        };
        // Flows mostly share their algorithm: the last one found is tried first.
        let info = match last {
            Some(i) if catalog[i].name == algorithm => Some(&catalog[i]),
            _ => {
                last = catalog.iter().position(|a| a.name == algorithm);
                last.map(|i| &catalog[i])
            }
        };
        let used = info
            .map(|info| {
                info.params.iter().map(|p| (p.name.to_string(), params.get(p.name).map_or(p.default.clone(), ParamValue::from))).collect()
            })
            .unwrap_or_default();
        params_used.push((f.id.name.clone(), algorithm.to_string(), used));
    }
    params_used
}

/// Jain's fairness index (sum x)^2 / (n * sum x^2); 1 for a single flow, NaN for none.
pub fn jain_index(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    let sum: f64 = x.iter().sum();
    let sq: f64 = x.iter().map(|v| v * v).sum();
    if x.is_empty() || sq == 0.0 {
        f64::NAN
    } else {
        sum * sum / (n * sq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn active_seconds_counts_only_on_time_inside_the_window() {
        let s = Time::from_secs;
        // on 0-10 s and 20-30 s, window 5-25 s: 5 s + 5 s
        assert_eq!(active_seconds(&[(s(0), s(10)), (s(20), s(30))], s(5), s(25)), 10.0);
        // an interval wholly outside the window counts nothing
        assert_eq!(active_seconds(&[(s(30), s(40))], s(5), s(25)), 0.0);
        assert_eq!(active_seconds(&[(s(0), s(5))], s(5), s(25)), 0.0);
    }

    #[test]
    fn jain_index_of_known_sets() {
        assert_eq!(jain_index(&[1.0, 1.0, 1.0]), 1.0);
        assert!((jain_index(&[4.9, 3.9]) - 77.44 / 78.44).abs() < 1e-12);
        assert!(jain_index(&[]).is_nan());
    }
}
