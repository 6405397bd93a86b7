//! The simulation: builds the network and the flows from a resolved scenario, runs the event loop,
//! samples the measurements, and checks conservation at the end.

use std::time::Duration;

use ccsim_cc::{CongestionControl, ParamMap, ParamValue, Rng, Time};

use crate::error::SimError;
use crate::event::{Event, EventQueue};
use crate::histogram::Histogram;
use crate::link::{Drop, Link};
use crate::packet::{Packet, PacketKind};
use crate::scenario::{FlowSpec, Scenario};
use crate::table::{Table, TableBuilder};
use crate::tcp::{Receiver, Sender};
use crate::topology::{self, Route};

/// Per-flow bookkeeping around the sender and receiver.
struct Flow {
    name: String,
    algorithm: String,
    sender: Sender,
    receiver: Receiver,
    route: Route,
    start: Time,
    stop: Time,
    bytes: Option<u64>,
    delack_timeout: Duration,
    rto_scheduled: Option<Time>,
    delack_scheduled: Option<Time>,
    completed_at: Option<Time>,
    // Packet accounting for the conservation check.
    data_delivered_pkts: u64,
    data_delivered_payload: u64,
    data_dropped_pkts: u64,
    data_dropped_payload: u64,
    acks_delivered: u64,
    acks_dropped: u64,
    drops_queue: u64,
    drops_random: u64,
    // Summary window.
    rcv_at_window_start: u64,
    rcv_at_window_end: Option<u64>,
    rtt_hist: Histogram,
    // Snapshot at the previous sample, for per-interval rates.
    prev_rcv: u64,
    prev_wire: u64,
    prev_retx: u64,
    prev_timeouts: u64,
}

/// Counters of the event loop, reported with the results.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    pub events: u64,
    pub bottleneck_packets: u64,
}

/// Everything a run produces.
pub struct RunOutput {
    pub flows: Table,
    pub cc_metrics: Table,
    pub links: Table,
    pub flow_summary: Table,
    pub link_summary: Table,
    pub run_summary: Vec<(String, f64)>,
    pub stats: RunStats,
    /// Algorithm parameters actually used, per flow (defaults filled in).
    pub params_used: Vec<(String, String, Vec<(String, String)>)>,
}

pub struct Simulation {
    scenario: Scenario,
    now: Time,
    end: Time,
    measure_start: Time,
    measure_end: Time,
    sample_interval: Duration,
    events: EventQueue,
    links: Vec<Link>,
    flows: Vec<Flow>,
    bottleneck: u32,
    out: Vec<Packet>,
    series_flows: TableBuilder,
    series_cc: TableBuilder,
    series_links: TableBuilder,
    stats: RunStats,
    finished: bool,
}

fn to_param_map(flow_field: &str, spec: &FlowSpec) -> Result<ParamMap, SimError> {
    let mut map = ParamMap::new();
    for (k, v) in &spec.params {
        let value = match v {
            serde_json::Value::Bool(b) => ParamValue::Bool(*b),
            serde_json::Value::Number(n) => ParamValue::Number(n.as_f64().unwrap_or(f64::NAN)),
            serde_json::Value::String(s) => ParamValue::Text(s.clone()),
            other => return Err(SimError::scenario(format!("{flow_field}.params.{k}"), format!("unsupported value {other}"))),
        };
        map.insert(k.clone(), value);
    }
    Ok(map)
}

fn ms(d: Option<Duration>) -> f64 {
    d.map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
}

impl Simulation {
    pub fn new(scenario: Scenario, seed: u64) -> Result<Simulation, SimError> {
        scenario.validate()?;
        let names: Vec<String> = scenario
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| f.name.clone().unwrap_or_else(|| format!("flow{i}")))
            .collect();
        let network = topology::build(&scenario, seed, &names);
        let end = Time(scenario.duration_ns);
        let mut flows = Vec::with_capacity(scenario.flows.len());
        for ((i, spec), route) in scenario.flows.iter().enumerate().zip(network.routes) {
            let field = format!("flows[{i}]");
            let params = to_param_map(&field, spec)?;
            let init = Sender::cc_init(&spec.tcp, Rng::new(seed, topology::streams::flow_cc(i)));
            let cc = ccsim_cc::build(&spec.algorithm, &params, &init).map_err(|e| SimError::from_cc(&field, e))?;
            let stop = Time(spec.stop_ns.unwrap_or(scenario.duration_ns).min(scenario.duration_ns));
            flows.push(Flow {
                name: names[i].clone(),
                algorithm: spec.algorithm.clone(),
                sender: Sender::new(i as u32, &spec.tcp, cc, spec.bytes),
                receiver: Receiver::new(i as u32, spec.tcp.delayed_ack, spec.tcp.mss_bytes),
                route,
                start: Time(spec.start_ns),
                stop,
                bytes: spec.bytes,
                delack_timeout: Duration::from_nanos(spec.tcp.delayed_ack_timeout_ns),
                rto_scheduled: None,
                delack_scheduled: None,
                completed_at: None,
                data_delivered_pkts: 0,
                data_delivered_payload: 0,
                data_dropped_pkts: 0,
                data_dropped_payload: 0,
                acks_delivered: 0,
                acks_dropped: 0,
                drops_queue: 0,
                drops_random: 0,
                rcv_at_window_start: 0,
                rcv_at_window_end: None,
                rtt_hist: Histogram::default(),
                prev_rcv: 0,
                prev_wire: 0,
                prev_retx: 0,
                prev_timeouts: 0,
            });
        }
        let mut events = EventQueue::default();
        for (i, f) in flows.iter().enumerate() {
            events.schedule(f.start, Event::FlowStart(i as u32));
            if f.stop < end {
                events.schedule(f.stop, Event::FlowStop(i as u32));
            }
        }
        let sample_interval = Duration::from_nanos(scenario.sample_interval_ns);
        if Time::ZERO + sample_interval <= end {
            events.schedule(Time::ZERO + sample_interval, Event::Sample);
        }
        let measure_start = Time(scenario.measure_start_ns);
        let measure_end = Time(scenario.measure_end_ns());
        events.schedule(measure_start, Event::Measure(true));
        events.schedule(measure_end, Event::Measure(false));
        Ok(Simulation {
            scenario,
            now: Time::ZERO,
            end,
            measure_start,
            measure_end,
            sample_interval,
            events,
            links: network.links,
            flows,
            bottleneck: network.bottleneck,
            out: Vec::with_capacity(64),
            series_flows: TableBuilder::default(),
            series_cc: TableBuilder::default(),
            series_links: TableBuilder::default(),
            stats: RunStats::default(),
            finished: false,
        })
    }

    pub fn from_json(text: &str, seed: u64) -> Result<Simulation, SimError> {
        Simulation::new(Scenario::from_json(text)?, seed)
    }

    pub fn now(&self) -> Time {
        self.now
    }

    pub fn end(&self) -> Time {
        self.end
    }

    fn in_window(&self) -> bool {
        self.now >= self.measure_start && self.now < self.measure_end
    }

    /// Processes every event up to and including time `t` (capped at the end of the run).
    pub fn run_until(&mut self, t: Time) {
        let t = t.min(self.end);
        while let Some(next) = self.events.peek_time() {
            if next > t {
                break;
            }
            let (time, event) = self.events.pop().expect("peeked");
            self.now = time;
            self.stats.events += 1;
            self.handle(event);
        }
        self.now = self.now.max(t);
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::LinkDeliver(l) => self.on_link_deliver(l),
            Event::FlowStart(f) => {
                let now = self.now;
                let flow = &mut self.flows[f as usize];
                flow.sender.start(now, &mut self.out);
                self.transmit_from_sender(f);
            }
            Event::FlowStop(f) => self.flows[f as usize].sender.stop(),
            Event::RtoTimer(f) => self.on_rto_timer(f),
            Event::DelayedAck(f) => self.on_delack_timer(f),
            Event::Sample => self.sample(),
            Event::Measure(start) => {
                for f in &mut self.flows {
                    if start {
                        f.rcv_at_window_start = f.receiver.rcv_nxt;
                    } else {
                        f.rcv_at_window_end = Some(f.receiver.rcv_nxt);
                    }
                }
            }
        }
    }

    fn on_link_deliver(&mut self, l: u32) {
        let in_window = self.in_window();
        let link = &mut self.links[l as usize];
        let mut pkt = link.deliver_head(self.now, in_window);
        if let Some(t) = link.head_arrival() {
            self.events.schedule(t, Event::LinkDeliver(l));
        }
        if l == self.bottleneck {
            self.stats.bottleneck_packets += 1;
        }
        let f = pkt.flow as usize;
        let route_len = match pkt.kind {
            PacketKind::Data => self.flows[f].route.forward.len(),
            PacketKind::Ack => self.flows[f].route.reverse.len(),
        };
        pkt.hop += 1;
        if (pkt.hop as usize) < route_len {
            self.enqueue_on_route(pkt);
            return;
        }
        match pkt.kind {
            PacketKind::Data => self.deliver_data(pkt),
            PacketKind::Ack => self.deliver_ack(pkt),
        }
    }

    fn enqueue_on_route(&mut self, pkt: Packet) {
        let f = pkt.flow as usize;
        let route = match pkt.kind {
            PacketKind::Data => &self.flows[f].route.forward,
            PacketKind::Ack => &self.flows[f].route.reverse,
        };
        let l = route[pkt.hop as usize];
        let in_window = self.in_window();
        match self.links[l as usize].enqueue(self.now, pkt, in_window) {
            Ok(Some(t)) => self.events.schedule(t, Event::LinkDeliver(l)),
            Ok(None) => {}
            Err(why) => {
                let flow = &mut self.flows[f];
                match why {
                    Drop::Queue => flow.drops_queue += 1,
                    Drop::Random => flow.drops_random += 1,
                }
                match pkt.kind {
                    PacketKind::Data => {
                        flow.data_dropped_pkts += 1;
                        flow.data_dropped_payload += pkt.len as u64;
                    }
                    PacketKind::Ack => flow.acks_dropped += 1,
                }
            }
        }
    }

    fn deliver_data(&mut self, pkt: Packet) {
        let f = pkt.flow as usize;
        let now = self.now;
        let flow = &mut self.flows[f];
        flow.data_delivered_pkts += 1;
        flow.data_delivered_payload += pkt.len as u64;
        let ack = flow.receiver.on_data(now, &pkt, flow.delack_timeout);
        if flow.completed_at.is_none() && flow.bytes.is_some_and(|b| flow.receiver.rcv_nxt >= b) {
            flow.completed_at = Some(now);
        }
        if let Some(ack) = ack {
            self.enqueue_on_route(ack);
        }
        self.sync_delack_timer(f);
    }

    fn deliver_ack(&mut self, pkt: Packet) {
        let f = pkt.flow as usize;
        let now = self.now;
        let in_window = self.in_window();
        let flow = &mut self.flows[f];
        flow.acks_delivered += 1;
        let rtt = flow.sender.on_ack(now, &pkt, &mut self.out);
        if let (Some(r), true) = (rtt, in_window) {
            flow.rtt_hist.record(r.as_nanos() as u64);
        }
        self.transmit_from_sender(f as u32);
    }

    /// Puts the sender's new packets on its first link and keeps its RTO timer event in place.
    fn transmit_from_sender(&mut self, f: u32) {
        let mut out = std::mem::take(&mut self.out);
        for pkt in out.drain(..) {
            self.enqueue_on_route(pkt);
        }
        self.out = out;
        let flow = &mut self.flows[f as usize];
        if let Some(d) = flow.sender.rto_deadline {
            if flow.rto_scheduled.map_or(true, |s| s > d) {
                flow.rto_scheduled = Some(d);
                self.events.schedule(d, Event::RtoTimer(f));
            }
        }
    }

    fn sync_delack_timer(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        if let Some(d) = flow.receiver.delack_deadline {
            if flow.delack_scheduled.map_or(true, |s| s > d) {
                flow.delack_scheduled = Some(d);
                self.events.schedule(d, Event::DelayedAck(f as u32));
            }
        }
    }

    /// Timers are lazy: the event may be stale (the deadline moved); re-arm or fire as due.
    fn on_rto_timer(&mut self, f: u32) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        if flow.rto_scheduled == Some(now) {
            flow.rto_scheduled = None;
        }
        match flow.sender.rto_deadline {
            Some(d) if d <= now => {
                flow.sender.on_rto(now, &mut self.out);
                self.transmit_from_sender(f);
            }
            Some(d) => {
                if flow.rto_scheduled.map_or(true, |s| s > d) {
                    flow.rto_scheduled = Some(d);
                    self.events.schedule(d, Event::RtoTimer(f));
                }
            }
            None => {}
        }
    }

    fn on_delack_timer(&mut self, f: u32) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        if flow.delack_scheduled == Some(now) {
            flow.delack_scheduled = None;
        }
        if let Some(ack) = flow.receiver.on_delack_timer(now) {
            self.enqueue_on_route(ack);
        }
        self.sync_delack_timer(f as usize);
    }

    fn sample(&mut self) {
        let now = self.now;
        let secs = self.sample_interval.as_secs_f64();
        let t = now.as_secs_f64();
        for (i, f) in self.flows.iter_mut().enumerate() {
            let s = &f.sender;
            let rcv = f.receiver.rcv_nxt;
            self.series_flows
                .f64("time_s", t)
                .u64("flow", i as u64)
                .f64("goodput_bps", (rcv - f.prev_rcv) as f64 * 8.0 / secs)
                .f64("send_rate_bps", (s.stats.wire_bytes_sent - f.prev_wire) as f64 * 8.0 / secs)
                .u64("cwnd_bytes", s.w.cwnd_bytes)
                .f64("cwnd_pkts", s.w.cwnd_pkts())
                .f64("ssthresh_bytes", if s.w.ssthresh_bytes == u64::MAX { f64::INFINITY } else { s.w.ssthresh_bytes as f64 })
                .f64("srtt_ms", ms(s.srtt()))
                .f64("rtt_ms", ms(s.latest_rtt))
                .u64("retransmits", s.stats.retransmits - f.prev_retx)
                .u64("timeouts", s.stats.timeouts - f.prev_timeouts);
            for (name, value) in s.cc.metrics() {
                self.series_cc.f64("time_s", t).u64("flow", i as u64).str("name", name).f64("value", value);
            }
            f.prev_rcv = rcv;
            f.prev_wire = s.stats.wire_bytes_sent;
            f.prev_retx = s.stats.retransmits;
            f.prev_timeouts = s.stats.timeouts;
        }
        for link in &mut self.links {
            let q = link.queue_state(now);
            let c = std::mem::take(&mut link.interval);
            let capacity_bits = link.rate_bps as f64 * secs;
            self.series_links
                .f64("time_s", t)
                .str("link", &link.name)
                .u64("queue_pkts", q.pkts)
                .u64("queue_bytes", q.bytes)
                .f64("qdelay_mean_ms", if c.departures == 0 { f64::NAN } else { c.qdelay_sum_ns as f64 / c.departures as f64 / 1e6 })
                .f64("qdelay_max_ms", c.qdelay_max_ns as f64 / 1e6)
                .u64("drops_queue", c.drops_queue)
                .u64("drops_random", c.drops_random)
                .f64("utilisation", c.tx_bytes as f64 * 8.0 / capacity_bits)
                .u64("tx_bytes", c.tx_bytes);
        }
        let next = now + self.sample_interval;
        if next <= self.end {
            self.events.schedule(next, Event::Sample);
        }
    }

    /// Test hook: loses one packet inside a link without accounting, to prove the check catches it.
    #[doc(hidden)]
    pub fn debug_lose_packet(&mut self) -> bool {
        self.links.iter_mut().any(|l| l.debug_lose_packet())
    }

    /// Every packet sent is delivered, dropped, or still inside a link; the same for payload bytes;
    /// and the receiver never holds more in-order data than was sent.
    pub fn check_conservation(&self) -> Result<(), SimError> {
        let mut inside_data = vec![(0u64, 0u64); self.flows.len()];
        let mut inside_acks = vec![0u64; self.flows.len()];
        for l in &self.links {
            for p in l.packets_inside() {
                match p.kind {
                    PacketKind::Data => {
                        inside_data[p.flow as usize].0 += 1;
                        inside_data[p.flow as usize].1 += p.len as u64;
                    }
                    PacketKind::Ack => inside_acks[p.flow as usize] += 1,
                }
            }
        }
        for (i, f) in self.flows.iter().enumerate() {
            let s = &f.sender.stats;
            let accounted = f.data_delivered_pkts + f.data_dropped_pkts + inside_data[i].0;
            if s.data_pkts_sent != accounted {
                return Err(SimError::Conservation(format!(
                    "flow {}: {} data packets sent but {} delivered + {} dropped + {} in flight = {}",
                    f.name, s.data_pkts_sent, f.data_delivered_pkts, f.data_dropped_pkts, inside_data[i].0, accounted
                )));
            }
            let bytes = f.data_delivered_payload + f.data_dropped_payload + inside_data[i].1;
            if s.payload_bytes_sent != bytes {
                return Err(SimError::Conservation(format!(
                    "flow {}: {} payload bytes sent but {} accounted for",
                    f.name, s.payload_bytes_sent, bytes
                )));
            }
            let acks = f.acks_delivered + f.acks_dropped + inside_acks[i];
            if f.receiver.acks_sent != acks {
                return Err(SimError::Conservation(format!(
                    "flow {}: {} ACKs sent but {} accounted for",
                    f.name, f.receiver.acks_sent, acks
                )));
            }
            if f.receiver.rcv_nxt > f.sender.snd_max {
                return Err(SimError::Conservation(format!(
                    "flow {}: receiver holds {} bytes in order but only {} were sent",
                    f.name, f.receiver.rcv_nxt, f.sender.snd_max
                )));
            }
        }
        Ok(())
    }

    /// Runs to the end, checks conservation and returns the results.
    pub fn finish(mut self) -> Result<RunOutput, SimError> {
        self.run_until(self.end);
        self.finished = true;
        self.check_conservation()?;
        Ok(self.collect())
    }

    fn collect(self) -> RunOutput {
        let window = self.measure_end - self.measure_start;
        let window_s = window.as_secs_f64();
        let mut fs = TableBuilder::default();
        let mut goodputs = Vec::new();
        let mut total_goodput = 0.0;
        let mut params_used = Vec::new();
        for (i, f) in self.flows.iter().enumerate() {
            let end_rcv = f.rcv_at_window_end.unwrap_or(f.receiver.rcv_nxt);
            let goodput = (end_rcv - f.rcv_at_window_start.min(end_rcv)) as f64 * 8.0 / window_s;
            let active_in_window = f.start < self.measure_end && f.stop > self.measure_start;
            if active_in_window {
                goodputs.push(goodput);
            }
            total_goodput += goodput;
            let s = &f.sender.stats;
            let h = &f.rtt_hist;
            let q = |x: f64| h.quantile(x) / 1e6;
            fs.u64("flow", i as u64)
                .str("name", &f.name)
                .str("algorithm", &f.algorithm)
                .f64("start_s", f.start.as_secs_f64())
                .f64("stop_s", f.stop.as_secs_f64())
                .f64("goodput_bps", goodput)
                .u64("bytes_delivered", f.receiver.rcv_nxt)
                .u64("data_pkts_sent", s.data_pkts_sent)
                .u64("retransmits", s.retransmits)
                .u64("fast_retransmits", s.fast_retransmits)
                .u64("timeouts", s.timeouts)
                .u64("drops_queue", f.drops_queue)
                .u64("drops_random", f.drops_random)
                .f64("loss_rate", if s.data_pkts_sent == 0 { 0.0 } else { f.data_dropped_pkts as f64 / s.data_pkts_sent as f64 })
                .f64("rtt_mean_ms", h.mean() / 1e6)
                .f64("rtt_p50_ms", q(0.5))
                .f64("rtt_p95_ms", q(0.95))
                .f64("rtt_p99_ms", q(0.99))
                .f64("rtt_min_ms", ms(f.sender.rtt.min))
                .f64("rtt_max_ms", ms(f.sender.rtt.max))
                .f64("fct_s", match (f.bytes, f.completed_at) {
                    (Some(_), Some(t)) => (t - f.start).as_secs_f64(),
                    _ => f64::NAN,
                })
                .bool("completed", f.completed_at.is_some());
            let spec = &self.scenario.flows[i];
            let info = ccsim_cc::catalog().into_iter().find(|a| a.name == spec.algorithm);
            let mut used = Vec::new();
            if let Some(info) = info {
                for p in info.params {
                    let v = spec.params.get(p.name).map(|v| v.to_string()).unwrap_or_else(|| p.default.to_string());
                    used.push((p.name.to_string(), v));
                }
            }
            params_used.push((f.name.clone(), spec.algorithm.clone(), used));
        }
        let mut ls = TableBuilder::default();
        for l in &self.links {
            let c = &l.window;
            let h = &l.qdelay_hist;
            let q = |x: f64| h.quantile(x) / 1e6;
            ls.str("link", &l.name)
                .u64("rate_bps", l.rate_bps)
                .f64("utilisation", c.tx_bytes as f64 * 8.0 / (l.rate_bps as f64 * window_s))
                .f64("qdelay_mean_ms", h.mean() / 1e6)
                .f64("qdelay_p50_ms", q(0.5))
                .f64("qdelay_p95_ms", q(0.95))
                .f64("qdelay_p99_ms", q(0.99))
                .f64("qdelay_max_ms", h.max() as f64 / 1e6)
                .u64("arrivals", c.arrivals)
                .u64("departures", c.departures)
                .u64("drops_queue", c.drops_queue)
                .u64("drops_random", c.drops_random)
                .f64("loss_rate", if c.arrivals == 0 { 0.0 } else { (c.drops_queue + c.drops_random) as f64 / c.arrivals as f64 });
        }
        let b = &self.links[self.bottleneck as usize];
        let jain = jain_index(&goodputs);
        let run_summary = vec![
            ("duration_s".to_string(), self.end.as_secs_f64()),
            ("measure_start_s".to_string(), self.measure_start.as_secs_f64()),
            ("measure_end_s".to_string(), self.measure_end.as_secs_f64()),
            ("flows".to_string(), self.flows.len() as f64),
            ("jain_index".to_string(), jain),
            ("total_goodput_bps".to_string(), total_goodput),
            ("bottleneck_rate_bps".to_string(), b.rate_bps as f64),
            ("bottleneck_utilisation".to_string(), b.window.tx_bytes as f64 * 8.0 / (b.rate_bps as f64 * window_s)),
            ("goodput_share_of_capacity".to_string(), total_goodput / b.rate_bps as f64),
            ("bottleneck_qdelay_mean_ms".to_string(), b.qdelay_hist.mean() / 1e6),
            ("bottleneck_qdelay_p95_ms".to_string(), b.qdelay_hist.quantile(0.95) / 1e6),
            ("bottleneck_drops_queue".to_string(), b.window.drops_queue as f64),
            ("bottleneck_drops_random".to_string(), b.window.drops_random as f64),
            ("events".to_string(), self.stats.events as f64),
            ("bottleneck_packets".to_string(), self.stats.bottleneck_packets as f64),
        ];
        RunOutput {
            flows: self.series_flows.finish(),
            cc_metrics: self.series_cc.finish(),
            links: self.series_links.finish(),
            flow_summary: fs.finish(),
            link_summary: ls.finish(),
            run_summary,
            stats: self.stats,
            params_used,
        }
    }
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
