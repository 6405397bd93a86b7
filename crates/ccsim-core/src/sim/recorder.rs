//! The recorder: the measurement window, the per-interval series (sampling), the run statistics,
//! and the assembly of the results at the end of the run.

use std::time::Duration;

use ccsim_cc::Time;

use crate::link::Link;
use crate::scenario::Scenario;
use crate::sim::flow::{App, Flow, SampleSnapshot, Schedule};
use crate::sim::output::{RunOutput, RunStats};
use crate::sim::series::{CcSeries, FlowRow, FlowSeries, LinkSeries, MetricNames, Name, StreamSeries, ROW_BATCH};
use crate::sim::summary::{self, ms};
use crate::tcp::Sender;

pub(crate) struct Recorder {
    sample_interval: Duration,
    measure_start: Time,
    measure_end: Time,
    flows: FlowSeries,
    streams: StreamSeries,
    cc: CcSeries,
    links: LinkSeries,
    /// The flows the per-interval series may have rows of (the scenario's TCP and stream flows),
    /// listed at the first sample: web transfers, which can be many thousands, are never visited.
    sampled: Option<Vec<u32>>,
    /// The run's end: its samples are at every multiple of `sample_interval` up to it.
    end: Time,
    /// The buffer a flow's algorithm writes its metrics into, kept between samples so a row
    /// allocates nothing.
    metrics: Vec<ccsim_cc::Metric>,
    /// A batch of a sample's metric rows (name, value), written into their table a column at a time.
    metric_rows: Vec<(Name, f64)>,
    /// The `cc_metrics` table's metric names, each once.
    metric_names: MetricNames,
    /// The links' numbers `0..links`, the `link` column of a sample's rows.
    link_ids: Vec<Name>,
    /// A batch of a sample's flow rows, written into their table a column at a time.
    flow_rows: Vec<FlowRow>,
    /// The flow of each metric in `metric_rows`.
    metric_flows: Vec<u64>,
    /// Where the previous sample's rows of the flows and metrics tables are.
    block: Option<Block>,
    /// Unchanged flows' rows are copied (`sample`); false in the tests that check the copies,
    /// which also set `redo_metrics` to take the path of an algorithm whose number of metrics
    /// changed at every sample, and read `repeated`, the samples whose rows were copies.
    pub(crate) repeat_rows: bool,
    pub(crate) redo_metrics: bool,
    pub(crate) repeated: u64,
    pub stats: RunStats,
}

impl Recorder {
    pub fn new(sample_interval: Duration, measure_start: Time, measure_end: Time, end: Time) -> Recorder {
        Recorder {
            sample_interval,
            measure_start,
            measure_end,
            end,
            flows: FlowSeries::default(),
            streams: StreamSeries::default(),
            cc: CcSeries::default(),
            links: LinkSeries::default(),
            sampled: None,
            metrics: Vec::new(),
            metric_rows: Vec::new(),
            metric_names: MetricNames::default(),
            link_ids: Vec::new(),
            flow_rows: Vec::new(),
            metric_flows: Vec::new(),
            block: None,
            repeat_rows: true,
            redo_metrics: false,
            repeated: 0,
            stats: RunStats::default(),
        }
    }

    pub fn sample_interval(&self) -> Duration {
        self.sample_interval
    }

    /// Values the per-interval tables hold so far.
    pub fn cells(&self) -> usize {
        self.flows.cells() + self.streams.cells() + self.cc.cells() + self.links.cells()
    }

    /// A per-interval table could not grow for want of memory.
    pub fn out_of_memory(&self) -> bool {
        self.flows.out_of_memory() || self.streams.out_of_memory() || self.cc.out_of_memory() || self.links.out_of_memory()
    }

    /// The edges of the summary window, as events to schedule.
    pub fn window_edges(&self) -> (Time, Time) {
        (self.measure_start, self.measure_end)
    }

    /// `now` is inside the summary window.
    pub fn in_window(&self, now: Time) -> bool {
        now >= self.measure_start && now < self.measure_end
    }

    /// The summary window opens (`start`) or closes: note each flow's delivered bytes and loss
    /// counters, and each link's counts (`Link::open_window`, `Link::close_window`).
    pub fn window_edge(&self, start: bool, flows: &mut [Flow], links: &mut [Link]) {
        for l in links {
            if start {
                l.open_window();
            } else {
                l.close_window();
            }
        }
        for f in flows {
            let (delivered, counts) = (f.delivered_bytes(), f.loss_counts());
            if start {
                f.window.rcv_at_start = delivered;
                f.window.counts_at_start = counts;
            } else {
                f.window.rcv_at_end = Some(delivered);
                f.window.counts_at_end = Some(counts);
            }
        }
    }

    /// One row per flow and per link for the interval ending `now`.
    pub fn sample(&mut self, now: Time, flows: &mut [Flow], links: &mut [Link]) {
        let secs = self.sample_interval.as_secs_f64();
        let t = now.as_secs_f64();
        let from = Time(now.0.saturating_sub(self.sample_interval.as_nanos() as u64));
        // Web transfers are reported in the summary (completion times), not here; neither is the
        // generator, which moves no data itself.
        let first = self.sampled.is_none();
        let sampled = self.sampled.take().unwrap_or_else(|| {
            (0..flows.len() as u32).filter(|&i| !flows[i as usize].id.background && !matches!(flows[i as usize].app, App::Web(_))).collect()
        });
        let room = self.sample_flows(now, t, from, secs, first, &sampled, flows, links.len());
        self.sampled = Some(sampled);
        if room {
            self.sample_links(now, t, secs, links);
        }
    }

    /// The rows of the flows (`sampled`) for the interval (from, now]; false, and no row
    /// written, if the tables have no room for the sample's rows.
    #[allow(clippy::too_many_arguments)]
    fn sample_flows(&mut self, now: Time, t: f64, from: Time, secs: f64, first: bool, sampled: &[u32], flows: &mut [Flow], links: usize) -> bool {
        // At the first sample, room for every row the run's samples can add (this one and those
        // after it, a row per flow and per link each): the tables then never grow by copying
        // themselves (docs/performance.md, "Sampling").
        let interval_ns = self.sample_interval.as_nanos().max(1) as u64;
        let samples_left = (self.end.0 / interval_ns).saturating_sub(now.0 / interval_ns) as usize + 1;
        if first {
            let streams = sampled.iter().filter(|&&i| matches!(flows[i as usize].app, App::Stream { .. })).count();
            self.flows.reserve_run(samples_left.saturating_mul(sampled.len() - streams));
            self.streams.reserve_run(samples_left.saturating_mul(streams));
            self.links.reserve_run(samples_left.saturating_mul(links));
        }
        // Room for this sample's rows at once: a row is then a store per column, not a check and a
        // possible growth per value. Without the room the sample is not taken (the run then ends
        // with `SimError::Resources`, see `out_of_memory`).
        if !(self.flows.reserve(sampled.len()) && self.streams.reserve(sampled.len()) && self.links.reserve(links)) {
            return false;
        }
        // When the TCP flows that get a row are those that got one at the previous sample, their
        // rows (and metric rows) start as copies of that sample's and only the flows whose sender
        // or receiver moved since are read again: most flows of a run of many flows wait out a
        // retransmission timeout from one sample to the next (docs/performance.md, "Sampling").
        let (rows_at, metrics_at) = (self.flows.len(), self.cc.len());
        let block = self.block.take();
        let repeat = self.repeat_rows && block.is_some_and(|b| self.cc.reserve(b.metrics) && same_flows_keep_rows(sampled, flows, now, from, b.rows));
        if let (true, Some(b)) = (repeat, block) {
            self.flows.repeat_rows(b.rows_at, b.rows, t);
            self.cc.repeat_rows(b.metrics_at, b.metrics, t);
            self.repeated += 1;
        }
        let (mut rows, mut metrics_differ) = (0, repeat && self.redo_metrics);
        for &i in sampled.iter() {
            let f = &mut flows[i as usize];
            let (sched, prev) = (&f.schedule, &mut f.snapshot);
            // `active`: the application was on during some of the interval (from, now].
            let active = || sched.intervals.iter().any(|&(a, b)| a < now && b > from);
            let flow = i as u64;
            match &mut f.app {
                App::Tcp { sender: s, receiver } => {
                    let delivered = receiver.rcv_nxt();
                    let stats = s.stats();
                    let keep = if repeat { prev.kept } else { keeps_row(sched, now, from, delivered, stats.wire_bytes_sent, prev) };
                    if keep {
                        let same_sender = repeat && s.changes() == prev.changes;
                        if same_sender && delivered == prev.rcv {
                            // the copy holds, but for the application's schedule
                            self.flows.set_active(rows_at + rows, active());
                            rows += 1;
                            continue;
                        }
                        let w = s.window();
                        let row = FlowRow {
                            flow,
                            goodput_bps: (delivered - prev.rcv) as f64 * 8.0 / secs,
                            send_rate_bps: (stats.wire_bytes_sent - prev.wire) as f64 * 8.0 / secs,
                            cwnd_bytes: w.cwnd_bytes,
                            cwnd_pkts: w.cwnd_pkts(),
                            ssthresh_bytes: if w.ssthresh_bytes == u64::MAX { f64::INFINITY } else { w.ssthresh_bytes as f64 },
                            srtt_ms: ms(s.srtt()),
                            rtt_ms: ms(s.latest_rtt()),
                            retransmits: stats.retransmits - prev.retx,
                            timeouts: stats.timeouts - prev.timeouts,
                            active: active(),
                        };
                        if repeat {
                            self.flows.set_flow_row(rows_at + rows, t, &row);
                            if !same_sender {
                                // the algorithm's metrics over its copied ones, if as many
                                s.cc_metrics(&mut self.metrics);
                                metrics_differ |= self.metrics.len() != prev.metrics_len as usize;
                                if !metrics_differ {
                                    for (k, &(n, v)) in self.metrics.iter().enumerate() {
                                        self.cc.set_metric(metrics_at + prev.metrics_off + k, self.metric_names.key(n), v);
                                    }
                                }
                                self.metrics.clear();
                            }
                        } else {
                            if self.flow_rows.len() == ROW_BATCH {
                                self.flows.extend_rows(t, &mut self.flow_rows);
                            }
                            self.flow_rows.push(row);
                            // The algorithm appends its metrics to those of the batch's other
                            // flows; each gets its flow's number alongside.
                            let (off, len) = self.add_flow_metrics(t, s, flow, metrics_at);
                            (prev.metrics_off, prev.metrics_len) = (off, len);
                        }
                        rows += 1;
                    }
                    prev.kept = keep;
                    prev.changes = s.changes();
                    prev.rcv = delivered;
                    prev.wire = stats.wire_bytes_sent;
                    prev.retx = stats.retransmits;
                    prev.timeouts = stats.timeouts;
                }
                App::Web(_) | App::Finished(_) => {} // neither is sampled (see above)
                App::Stream { source, sink, .. } => {
                    let (delivered, wire) = (sink.payload_bytes, source.wire_bytes_sent);
                    let c = std::mem::take(&mut sink.interval);
                    if keeps_row(sched, now, from, delivered, wire, prev) {
                        self.streams.push_reserved(
                            t,
                            flow,
                            (delivered - prev.rcv) as f64 * 8.0 / secs,
                            (wire - prev.wire) as f64 * 8.0 / secs,
                            c.packets,
                            if c.packets == 0 { f64::NAN } else { c.owd_sum_ns as f64 / c.packets as f64 / 1e6 },
                            if c.packets == 0 { f64::NAN } else { c.owd_max_ns as f64 / 1e6 },
                            sink.jitter_ns / 1e6,
                            sink.lost(),
                            active(),
                        );
                    }
                    prev.rcv = delivered;
                    prev.wire = wire;
                }
            }
        }
        self.flows.extend_rows(t, &mut self.flow_rows);
        if metrics_differ {
            // A changed flow's algorithm reported more or fewer metrics than at the previous
            // sample: this sample's metric rows again, each flow's from its algorithm.
            self.cc.truncate(metrics_at);
            for &i in sampled.iter() {
                let f = &mut flows[i as usize];
                if let (App::Tcp { sender, .. }, true) = (&f.app, f.snapshot.kept) {
                    (f.snapshot.metrics_off, f.snapshot.metrics_len) = self.add_flow_metrics(t, sender, i as u64, metrics_at);
                }
            }
        }
        self.cc.extend_metrics(t, &mut self.metric_rows, &mut self.metric_flows);
        self.block = Some(Block { rows_at, rows, metrics_at, metrics: self.cc.len() - metrics_at });
        if first {
            // as many metric rows in each sample after this one as in this one (a guess: flows
            // that have not started yet have none here)
            self.cc.reserve_run((self.cc.cells() / CcSeries::COLUMNS).saturating_mul(samples_left - 1));
        }
        true
    }

    /// The rows of the links for the interval ending `now`.
    fn sample_links(&mut self, now: Time, t: f64, secs: f64, links: &mut [Link]) {
        // Every link's row as an idle link's first, then the rows of the links that were not idle.
        let base = self.links.len();
        let in_window = self.in_window(now);
        if self.link_ids.len() != links.len() {
            self.link_ids = (0..links.len() as u32).map(Name).collect();
        }
        self.links.push_idle(t, &self.link_ids);
        for (l, link) in links.iter_mut().enumerate() {
            if link.idle_in_interval() {
                continue; // idle as below, told with fewer reads (most access links)
            }
            let q = link.queue_state(now);
            let queue_avg = link.average_queue();
            let c = &link.interval;
            // Every counter of an interval moves with an arrival (the drops) or a departure (the
            // bytes and delays), so these two being zero means every counter is.
            let idle = (c.arrivals | c.departures | q.pkts) == 0 && queue_avg.is_none();
            debug_assert!(!idle || (c.drops_queue | c.drops_random | c.drops_early | c.tx_bytes | c.qdelay_max_ns | q.bytes) == 0 && c.qdelay_sum_ns == 0);
            if idle {
                // Nothing arrived at or left the link in the interval, nothing waits in it and its
                // discipline keeps no average (most access links of a run of many flows): its row
                // is the idle row written above (a link's rate is > 0, so its utilisation is 0.0),
                // and it has no counters to reset.
                continue;
            }
            let c = link.take_interval(in_window);
            let capacity_bits = link.rate_bps as f64 * secs;
            self.links.set_row(
                base + l,
                t,
                Name(l as u32),
                q.pkts,
                q.bytes,
                if c.departures == 0 { f64::NAN } else { c.qdelay_sum_ns as f64 / c.departures as f64 / 1e6 },
                c.qdelay_max_ns as f64 / 1e6,
                c.drops_queue,
                c.drops_random,
                c.tx_bytes as f64 * 8.0 / capacity_bits,
                c.tx_bytes,
                c.drops_early,
                queue_avg.unwrap_or(f64::NAN),
            );
        }
    }

    /// Flow `flow`'s metric rows, from its algorithm `sender`, into the batch; where they start
    /// among this sample's metric rows (which start at `metrics_at`), and how many.
    fn add_flow_metrics(&mut self, t: f64, sender: &Sender, flow: u64, metrics_at: usize) -> (usize, u32) {
        if self.metric_rows.len() >= ROW_BATCH {
            self.cc.extend_metrics(t, &mut self.metric_rows, &mut self.metric_flows);
        }
        let before = self.metric_rows.len();
        sender.cc_metrics(&mut self.metrics);
        let names = &mut self.metric_names;
        self.metric_rows.extend(self.metrics.drain(..).map(|(n, v)| (names.key(n), v)));
        let added = self.metric_rows.len() - before;
        self.metric_flows.extend(std::iter::repeat_n(flow, added));
        (self.cc.len() + before - metrics_at, added as u32)
    }

    /// The series recorded so far and the summaries of the finished run.
    pub fn finish(self, scenario: &Scenario, flows: &[Flow], links: &[Link], end: Time) -> RunOutput {
        let (measure_start, measure_end) = (self.measure_start, self.measure_end);
        let window_s = (measure_end - measure_start).as_secs_f64();
        let flow_summary = summary::flow_summary(flows, measure_start, measure_end);
        let mut run_summary = vec![
            ("duration_s".to_string(), end.as_secs_f64()),
            ("measure_start_s".to_string(), measure_start.as_secs_f64()),
            ("measure_end_s".to_string(), measure_end.as_secs_f64()),
            ("flows".to_string(), flows.len() as f64),
        ];
        let bottleneck = summary::busiest_link(links, window_s);
        run_summary.extend(summary::run_summary(&flow_summary, links, bottleneck, window_s, &self.stats));
        let link_names: Vec<String> = links.iter().map(|l| l.name.clone()).collect();
        RunOutput {
            flows: self.flows.finish(Vec::new()),
            streams: self.streams.finish(Vec::new()),
            cc_metrics: self.cc.finish(self.metric_names.into_strings()),
            links: self.links.finish(link_names),
            flow_summary: flow_summary.table,
            link_summary: summary::link_summary(links, window_s, bottleneck),
            delay_hist: summary::delay_hist(flows, links),
            run_summary,
            stats: self.stats,
            params_used: summary::params_used(scenario, flows),
        }
    }
}

/// A flow gets a row of the interval (from, now] once it has started, and after it stopped only
/// while something still moves: a frozen cwnd there would draw a flow that runs when it does not
/// (off periods keep their rows).
#[inline]
fn keeps_row(sched: &Schedule, now: Time, from: Time, delivered: u64, wire: u64, prev: &SampleSnapshot) -> bool {
    sched.start < now && (from < sched.stop || delivered != prev.rcv || wire != prev.wire)
}

/// The TCP flows that get a row at this sample are those that got one at the previous, which
/// gave `rows` rows.
fn same_flows_keep_rows(sampled: &[u32], flows: &[Flow], now: Time, from: Time, rows: usize) -> bool {
    let mut kept = 0;
    for &i in sampled {
        let f = &flows[i as usize];
        if let App::Tcp { sender, receiver } = &f.app {
            let keep = keeps_row(&f.schedule, now, from, receiver.rcv_nxt(), sender.stats().wire_bytes_sent, &f.snapshot);
            if keep != f.snapshot.kept {
                return false;
            }
            kept += keep as usize;
        }
    }
    kept == rows
}

/// Where a sample's rows are: the flows table's from `rows_at` (`rows` of them), the metrics
/// table's from `metrics_at` (`metrics`).
#[derive(Clone, Copy)]
struct Block {
    rows_at: usize,
    rows: usize,
    metrics_at: usize,
    metrics: usize,
}
