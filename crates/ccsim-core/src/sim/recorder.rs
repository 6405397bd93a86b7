//! The recorder: the measurement window, the per-interval series (sampling), the run statistics,
//! and the assembly of the results at the end of the run.

use std::time::Duration;

use ccsim_cc::Time;

use crate::link::Link;
use crate::scenario::Scenario;
use crate::sim::flow::{App, Flow};
use crate::sim::output::{RunOutput, RunStats};
use crate::sim::summary::{self, ms};
use crate::table::TableBuilder;

pub(crate) struct Recorder {
    sample_interval: Duration,
    measure_start: Time,
    measure_end: Time,
    flows: TableBuilder,
    streams: TableBuilder,
    cc: TableBuilder,
    links: TableBuilder,
    pub stats: RunStats,
}

impl Recorder {
    pub fn new(sample_interval: Duration, measure_start: Time, measure_end: Time) -> Recorder {
        Recorder {
            sample_interval,
            measure_start,
            measure_end,
            flows: TableBuilder::default(),
            streams: TableBuilder::default(),
            cc: TableBuilder::default(),
            links: TableBuilder::default(),
            stats: RunStats::default(),
        }
    }

    pub fn sample_interval(&self) -> Duration {
        self.sample_interval
    }

    /// Values the per-interval tables hold so far.
    pub fn cells(&self) -> usize {
        [&self.flows, &self.streams, &self.cc, &self.links].iter().map(|t| t.cells()).sum()
    }

    /// A per-interval table could not grow for want of memory.
    pub fn out_of_memory(&self) -> bool {
        [&self.flows, &self.streams, &self.cc, &self.links].iter().any(|t| t.out_of_memory())
    }

    /// The edges of the summary window, as events to schedule.
    pub fn window_edges(&self) -> (Time, Time) {
        (self.measure_start, self.measure_end)
    }

    /// `now` is inside the summary window.
    pub fn in_window(&self, now: Time) -> bool {
        now >= self.measure_start && now < self.measure_end
    }

    /// The summary window opens (`start`) or closes: note each flow's delivered bytes.
    pub fn window_edge(&self, start: bool, flows: &mut [Flow]) {
        for f in flows {
            let delivered = f.delivered_bytes();
            if start {
                f.window.rcv_at_start = delivered;
            } else {
                f.window.rcv_at_end = Some(delivered);
            }
        }
    }

    /// One row per flow and per link for the interval ending `now`.
    pub fn sample(&mut self, now: Time, flows: &mut [Flow], links: &mut [Link]) {
        let secs = self.sample_interval.as_secs_f64();
        let t = now.as_secs_f64();
        let from = Time(now.0.saturating_sub(self.sample_interval.as_nanos() as u64));
        for (i, f) in flows.iter_mut().enumerate() {
            if f.id.background || matches!(f.app, App::Web(_)) {
                continue; // web transfers are reported in the summary (completion times)
            }
            let delivered = f.delivered_bytes();
            let goodput_bps = (delivered - f.snapshot.rcv) as f64 * 8.0 / secs;
            let sched = &f.schedule;
            // `active`: the application was on during some of the interval (from, now].
            let active = sched.intervals.iter().any(|&(a, b)| a < now && b > from);
            // No row before a flow starts, nor after it stopped once nothing moves any more: a frozen
            // cwnd there would draw a flow that runs when it does not (off periods keep their rows).
            let started = sched.start < now;
            let moving = delivered != f.snapshot.rcv || f.sent().2 != f.snapshot.wire;
            let keep = started && (from < sched.stop || moving);
            let prev = &mut f.snapshot;
            prev.rcv = delivered;
            match &mut f.app {
                App::Tcp { sender: s, .. } => {
                    let (stats, w) = (s.stats(), s.window());
                    if !keep {
                        prev.wire = stats.wire_bytes_sent;
                        prev.retx = stats.retransmits;
                        prev.timeouts = stats.timeouts;
                        continue;
                    }
                    self.flows
                        .f64("time_s", t)
                        .u64("flow", i as u64)
                        .f64("goodput_bps", goodput_bps)
                        .f64("send_rate_bps", (stats.wire_bytes_sent - prev.wire) as f64 * 8.0 / secs)
                        .u64("cwnd_bytes", w.cwnd_bytes)
                        .f64("cwnd_pkts", w.cwnd_pkts())
                        .f64("ssthresh_bytes", if w.ssthresh_bytes == u64::MAX { f64::INFINITY } else { w.ssthresh_bytes as f64 })
                        .f64("srtt_ms", ms(s.srtt()))
                        .f64("rtt_ms", ms(s.latest_rtt()))
                        .u64("retransmits", stats.retransmits - prev.retx)
                        .u64("timeouts", stats.timeouts - prev.timeouts)
                        .bool("active", active);
                    for (name, value) in s.cc_metrics() {
                        self.cc.f64("time_s", t).u64("flow", i as u64).str("name", name).f64("value", value);
                    }
                    prev.wire = stats.wire_bytes_sent;
                    prev.retx = stats.retransmits;
                    prev.timeouts = stats.timeouts;
                }
                App::Web(_) | App::Finished(_) => {} // neither gets here (skipped above)
                App::Stream { source, sink, .. } => {
                    let c = std::mem::take(&mut sink.interval);
                    if !keep {
                        prev.wire = source.wire_bytes_sent;
                        continue;
                    }
                    self.streams
                        .f64("time_s", t)
                        .u64("flow", i as u64)
                        .f64("goodput_bps", goodput_bps)
                        .f64("send_rate_bps", (source.wire_bytes_sent - prev.wire) as f64 * 8.0 / secs)
                        .u64("packets", c.packets)
                        .f64("owd_mean_ms", if c.packets == 0 { f64::NAN } else { c.owd_sum_ns as f64 / c.packets as f64 / 1e6 })
                        .f64("owd_max_ms", if c.packets == 0 { f64::NAN } else { c.owd_max_ns as f64 / 1e6 })
                        .f64("jitter_ms", sink.jitter_ns / 1e6)
                        .u64("lost", sink.lost())
                        .bool("active", active);
                    prev.wire = source.wire_bytes_sent;
                }
            }
        }
        for link in links {
            let q = link.queue_state(now);
            let c = std::mem::take(&mut link.interval);
            let capacity_bits = link.rate_bps as f64 * secs;
            self.links
                .f64("time_s", t)
                .str("link", &link.name)
                .u64("queue_pkts", q.pkts)
                .u64("queue_bytes", q.bytes)
                .f64("qdelay_mean_ms", if c.departures == 0 { f64::NAN } else { c.qdelay_sum_ns as f64 / c.departures as f64 / 1e6 })
                .f64("qdelay_max_ms", c.qdelay_max_ns as f64 / 1e6)
                .u64("drops_queue", c.drops_queue)
                .u64("drops_random", c.drops_random)
                .f64("utilisation", c.tx_bytes as f64 * 8.0 / capacity_bits)
                .u64("tx_bytes", c.tx_bytes)
                .u64("drops_early", c.drops_early)
                .f64("queue_avg", link.average_queue().unwrap_or(f64::NAN));
        }
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
        RunOutput {
            flows: self.flows.finish(),
            streams: self.streams.finish(),
            cc_metrics: self.cc.finish(),
            links: self.links.finish(),
            flow_summary: flow_summary.table,
            link_summary: summary::link_summary(links, window_s, bottleneck),
            delay_hist: summary::delay_hist(flows, links),
            run_summary,
            stats: self.stats,
            params_used: summary::params_used(scenario, flows),
        }
    }
}
