//! The simulation: builds the network and the flows from a resolved scenario, runs the event loop,
//! samples the measurements, and checks conservation at the end.

use std::time::Duration;

use ccsim_cc::{CongestionControl, ParamMap, ParamValue, Rng, Time};

use crate::error::SimError;
use crate::event::{Event, EventQueue};
use crate::histogram::Histogram;
use crate::link::{Drop, Link};
use crate::packet::{Packet, PacketKind};
use crate::scenario::{FlowKind, FlowSpec, ParamSetting, Scenario, Traffic, VoicePattern};
use crate::stream::{StreamPattern, StreamSink, StreamSource};
use crate::table::{Table, TableBuilder};
use crate::tcp::{Receiver, Sender};
use crate::topology::{self, Route};

/// What runs at a flow's two ends.
#[allow(clippy::large_enum_variant)]
enum App {
    Tcp { sender: Sender, receiver: Receiver },
    Stream { source: StreamSource, sink: StreamSink, active: bool },
    /// Spawns short TCP transfers (each a flow of its own, on this flow's links).
    Web { rng: Rng, active: bool, spawned: u64 },
}

/// Per-flow bookkeeping around the sender and receiver.
struct Flow {
    name: String,
    kind: FlowKind,
    algorithm: String,
    app: App,
    route: Route,
    /// Active intervals [start, stop) of the application.
    intervals: Vec<(Time, Time)>,
    start: Time,
    stop: Time,
    access_delay_ns: u64,
    bytes: Option<u64>,
    /// Spawned by a web generator: in the summary, not in the per-interval series.
    background: bool,
    /// Index of the scenario flow this one comes from (itself, or its web generator).
    spec: usize,
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

impl Flow {
    /// A flow with its counters at zero.
    #[allow(clippy::too_many_arguments)]
    fn new(
        name: String,
        kind: FlowKind,
        algorithm: String,
        app: App,
        route: Route,
        intervals: Vec<(Time, Time)>,
        access_delay_ns: u64,
        bytes: Option<u64>,
        background: bool,
        spec: usize,
        delack_timeout: Duration,
    ) -> Flow {
        Flow {
            name,
            kind,
            algorithm,
            app,
            route,
            start: intervals[0].0,
            stop: intervals[intervals.len() - 1].1,
            intervals,
            access_delay_ns,
            bytes,
            background,
            spec,
            delack_timeout,
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
        }
    }

    /// Unique payload bytes delivered to the receiving application (in order for TCP).
    fn delivered_bytes(&self) -> u64 {
        match &self.app {
            App::Tcp { receiver, .. } => receiver.rcv_nxt,
            App::Stream { sink, .. } => sink.payload_bytes,
            App::Web { .. } => 0,
        }
    }

    /// (data packets, payload bytes, wire bytes) sent by the source.
    fn sent(&self) -> (u64, u64, u64) {
        match &self.app {
            App::Tcp { sender, .. } => (sender.stats.data_pkts_sent, sender.stats.payload_bytes_sent, sender.stats.wire_bytes_sent),
            App::Stream { source, .. } => (source.packets_sent, source.payload_sent(), source.wire_bytes_sent),
            App::Web { .. } => (0, 0, 0),
        }
    }

    fn acks_sent(&self) -> u64 {
        match &self.app {
            App::Tcp { receiver, .. } => receiver.acks_sent,
            App::Stream { .. } | App::Web { .. } => 0,
        }
    }
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
    /// Per stream flow and sample interval: received rate, one-way delay, jitter, loss.
    pub streams: Table,
    pub cc_metrics: Table,
    pub links: Table,
    pub flow_summary: Table,
    pub link_summary: Table,
    pub run_summary: Vec<(String, f64)>,
    pub stats: RunStats,
    /// Algorithm parameters actually used, per scenario flow: (flow, algorithm, typed values).
    pub params_used: Vec<(String, String, Vec<(String, ParamValue)>)>,
}

pub struct Simulation {
    scenario: Scenario,
    seed: u64,
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
    series_streams: TableBuilder,
    series_cc: TableBuilder,
    series_links: TableBuilder,
    stats: RunStats,
    finished: bool,
}

fn to_param_map(params: &std::collections::BTreeMap<String, ParamSetting>) -> ParamMap {
    params.iter().map(|(k, v)| (k.clone(), ParamValue::from(v))).collect()
}

/// A stream's source from its spec (every value written by the front end).
fn stream_source(i: usize, spec: &FlowSpec, seed: u64) -> StreamSource {
    let rng = Rng::new(seed, topology::streams::flow_app(i));
    match spec.traffic {
        Traffic::Cbr { rate_bps, payload_bytes: payload, header_bytes: header } => {
            let rate = rate_bps.max(1);
            // The interval that gives `rate_bps` on the wire (payload + header).
            let interval = Duration::from_nanos(((payload + header) as u128 * 8 * 1_000_000_000 / rate as u128).max(1) as u64);
            StreamSource::new(i as u32, payload as u32, header as u32, StreamPattern::Constant { interval }, rng)
        }
        Traffic::Voip { payload_bytes: payload, header_bytes: header, interval_ns, pattern } => {
            let interval = Duration::from_nanos(interval_ns);
            let pattern = match pattern {
                VoicePattern::TalkSpurts { mean_on_ns, mean_off_ns } => StreamPattern::OnOff {
                    interval,
                    mean_on: Duration::from_nanos(mean_on_ns),
                    mean_off: Duration::from_nanos(mean_off_ns),
                },
                VoicePattern::Constant => StreamPattern::Constant { interval },
            };
            StreamSource::new(i as u32, payload as u32, header as u32, pattern, rng)
        }
        Traffic::Tcp { .. } | Traffic::Web { .. } => unreachable!("stream_source is called for streams only"),
    }
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
            .map(|f| f.name.clone())
            .collect();
        let access_delays = topology::access_delays(&scenario, seed);
        let network = topology::build(&scenario, seed, &names, &access_delays);
        let end = Time(scenario.duration_ns);
        let mut flows = Vec::with_capacity(scenario.flows.len());
        for ((i, spec), route) in scenario.flows.iter().enumerate().zip(network.routes) {
            let field = format!("flows[{i}].traffic");
            let app = match (spec.kind(), spec.congestion_control()) {
                (FlowKind::Tcp, Some((algorithm, params, tcp))) => {
                    let params = to_param_map(params);
                    let init = Sender::cc_init(tcp, Rng::new(seed, topology::streams::flow_cc(i)));
                    let cc = ccsim_cc::build(algorithm, &params, &init).map_err(|e| SimError::from_cc(&field, e))?;
                    App::Tcp {
                        sender: Sender::new(i as u32, tcp, cc, spec.transfer_bytes()),
                        receiver: Receiver::new(i as u32, tcp.delayed_ack, tcp.mss_bytes),
                    }
                }
                (FlowKind::Web, Some((algorithm, params, tcp))) => {
                    // Check the transfers' algorithm and parameters now, not at the first arrival.
                    let params = to_param_map(params);
                    let init = Sender::cc_init(tcp, Rng::new(seed, topology::streams::flow_cc(i)));
                    ccsim_cc::build(algorithm, &params, &init).map_err(|e| SimError::from_cc(&field, e))?;
                    App::Web { rng: Rng::new(seed, topology::streams::flow_app(i)), active: false, spawned: 0 }
                }
                (FlowKind::Tcp | FlowKind::Web, None) => unreachable!("TCP and web traffic have congestion control"),
                (FlowKind::Cbr | FlowKind::Voip, _) => App::Stream {
                    source: stream_source(i, spec, seed),
                    sink: StreamSink::default(),
                    active: false,
                },
            };
            let intervals: Vec<(Time, Time)> =
                spec.active_intervals().into_iter().map(|(a, b)| (Time(a), Time(b))).collect();
            let cc = spec.congestion_control();
            flows.push(Flow::new(
                names[i].clone(),
                spec.kind(),
                cc.map_or_else(String::new, |(algorithm, _, _)| algorithm.to_string()),
                app,
                route,
                intervals,
                access_delays[i],
                spec.transfer_bytes(),
                false,
                i,
                Duration::from_nanos(cc.map_or(0, |(_, _, tcp)| tcp.delayed_ack_timeout_ns)),
            ));
        }
        let mut events = EventQueue::default();
        for (i, f) in flows.iter().enumerate() {
            for &(a, b) in &f.intervals {
                events.schedule(a, Event::FlowStart(i as u32));
                if b < end {
                    events.schedule(b, Event::FlowStop(i as u32));
                }
            }
        }
        let sample_interval = Duration::from_nanos(scenario.sample_interval_ns);
        if Time::ZERO + sample_interval <= end {
            events.schedule(Time::ZERO + sample_interval, Event::Sample);
        }
        let measure_start = Time(scenario.measure_start_ns);
        let measure_end = Time(scenario.measure_end_ns);
        events.schedule(measure_start, Event::Measure(true));
        events.schedule(measure_end, Event::Measure(false));
        Ok(Simulation {
            scenario,
            seed,
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
            series_streams: TableBuilder::default(),
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
            Event::FlowStart(f) => self.on_flow_start(f),
            Event::FlowStop(f) => match &mut self.flows[f as usize].app {
                App::Tcp { sender, .. } => sender.stop(),
                App::Stream { active, .. } | App::Web { active, .. } => *active = false,
            },
            Event::WebArrival(f) => self.on_web_arrival(f),
            Event::StreamEmit(f) => self.on_stream_emit(f),
            Event::RtoTimer(f) => self.on_rto_timer(f),
            Event::DelayedAck(f) => self.on_delack_timer(f),
            Event::Sample => self.sample(),
            Event::Measure(start) => {
                for f in &mut self.flows {
                    let delivered = f.delivered_bytes();
                    if start {
                        f.rcv_at_window_start = delivered;
                    } else {
                        f.rcv_at_window_end = Some(delivered);
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

    fn on_flow_start(&mut self, f: u32) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        match &mut flow.app {
            App::Tcp { sender, .. } => {
                if now == flow.start {
                    sender.start(now, &mut self.out);
                } else {
                    sender.resume(now, &mut self.out);
                }
                self.transmit_from_sender(f);
            }
            App::Stream { source, active, .. } => {
                *active = true;
                let first = source.start(now);
                self.events.schedule(first, Event::StreamEmit(f));
            }
            App::Web { rng, active, .. } => {
                *active = true;
                let Traffic::Web { arrival_rate: rate, .. } = self.scenario.flows[flow.spec].traffic else { return };
                let next = now + Duration::from_secs_f64(rng.exponential(1.0 / rate));
                self.events.schedule(next, Event::WebArrival(f));
            }
        }
    }

    /// A web transfer starts: a new finite TCP flow on the generator's links; then the next arrival.
    fn on_web_arrival(&mut self, g: u32) {
        let now = self.now;
        if now >= self.end {
            return;
        }
        let spec_index = self.flows[g as usize].spec;
        let Traffic::Web { algorithm, params, tcp, arrival_rate, size_mean_bytes, size_shape } = &self.scenario.flows[spec_index].traffic
        else {
            return;
        };
        let App::Web { rng, active, spawned } = &mut self.flows[g as usize].app else { return };
        if !*active {
            return;
        }
        let k = *spawned;
        *spawned += 1;
        // Pareto sizes: x_m = mean (alpha - 1) / alpha, X = x_m U^(-1/alpha), capped at 1000 means.
        let mean = *size_mean_bytes as f64;
        let alpha = *size_shape;
        let u = 1.0 - rng.uniform(); // (0, 1]
        let size = ((mean * (alpha - 1.0) / alpha) * u.powf(-1.0 / alpha)).min(1000.0 * mean).ceil().max(1.0) as u64;
        let next = now + Duration::from_secs_f64(rng.exponential(1.0 / *arrival_rate));
        let params = to_param_map(params);
        let init = Sender::cc_init(tcp, Rng::new(self.seed, topology::streams::web_transfer(spec_index, k)));
        let Ok(cc) = ccsim_cc::build(algorithm, &params, &init) else { return }; // validated at build
        let id = self.flows.len() as u32;
        let generator = &self.flows[g as usize];
        let flow = Flow::new(
            format!("{}#{k}", generator.name),
            FlowKind::Web,
            algorithm.clone(),
            App::Tcp {
                sender: Sender::new(id, tcp, cc, Some(size)),
                receiver: Receiver::new(id, tcp.delayed_ack, tcp.mss_bytes),
            },
            Route { forward: generator.route.forward.clone(), reverse: generator.route.reverse.clone() },
            vec![(now, self.end)],
            generator.access_delay_ns,
            Some(size),
            true,
            spec_index,
            generator.delack_timeout,
        );
        self.flows.push(flow);
        if let App::Tcp { sender, .. } = &mut self.flows[id as usize].app {
            sender.start(now, &mut self.out);
        }
        self.transmit_from_sender(id);
        if next < self.end {
            self.events.schedule(next, Event::WebArrival(g));
        }
    }

    fn on_stream_emit(&mut self, f: u32) {
        let now = self.now;
        let App::Stream { source, active, .. } = &mut self.flows[f as usize].app else { return };
        if !*active {
            return;
        }
        let (pkt, next) = source.emit(now);
        self.enqueue_on_route(pkt);
        if next < self.end {
            self.events.schedule(next, Event::StreamEmit(f));
        }
    }

    fn deliver_data(&mut self, pkt: Packet) {
        let f = pkt.flow as usize;
        let now = self.now;
        let in_window = self.in_window();
        let flow = &mut self.flows[f];
        flow.data_delivered_pkts += 1;
        flow.data_delivered_payload += pkt.len as u64;
        let ack = match &mut flow.app {
            App::Tcp { receiver, .. } => {
                let ack = receiver.on_data(now, &pkt, flow.delack_timeout);
                if flow.completed_at.is_none() && flow.bytes.is_some_and(|b| receiver.rcv_nxt >= b) {
                    flow.completed_at = Some(now);
                }
                ack
            }
            App::Stream { sink, .. } => {
                sink.on_packet(now, &pkt, in_window);
                None
            }
            App::Web { .. } => None, // a generator sends nothing itself
        };
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
        let App::Tcp { sender, .. } = &mut flow.app else { return };
        let rtt = sender.on_ack(now, &pkt, &mut self.out);
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
        let App::Tcp { sender, .. } = &flow.app else { return };
        if let Some(d) = sender.rto_deadline {
            if flow.rto_scheduled.map_or(true, |s| s > d) {
                flow.rto_scheduled = Some(d);
                self.events.schedule(d, Event::RtoTimer(f));
            }
        }
    }

    fn sync_delack_timer(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        let App::Tcp { receiver, .. } = &flow.app else { return };
        if let Some(d) = receiver.delack_deadline {
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
        let App::Tcp { sender, .. } = &mut flow.app else { return };
        match sender.rto_deadline {
            Some(d) if d <= now => {
                sender.on_rto(now, &mut self.out);
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
        let App::Tcp { receiver, .. } = &mut flow.app else { return };
        if let Some(ack) = receiver.on_delack_timer(now) {
            self.enqueue_on_route(ack);
        }
        self.sync_delack_timer(f as usize);
    }

    fn sample(&mut self) {
        let now = self.now;
        let secs = self.sample_interval.as_secs_f64();
        let t = now.as_secs_f64();
        for (i, f) in self.flows.iter_mut().enumerate() {
            if f.background || matches!(f.app, App::Web { .. }) {
                continue; // web transfers are reported in the summary (completion times)
            }
            let delivered = f.delivered_bytes();
            let goodput_bps = (delivered - f.prev_rcv) as f64 * 8.0 / secs;
            f.prev_rcv = delivered;
            match &mut f.app {
                App::Tcp { sender: s, .. } => {
                    self.series_flows
                        .f64("time_s", t)
                        .u64("flow", i as u64)
                        .f64("goodput_bps", goodput_bps)
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
                    f.prev_wire = s.stats.wire_bytes_sent;
                    f.prev_retx = s.stats.retransmits;
                    f.prev_timeouts = s.stats.timeouts;
                }
                App::Web { .. } => {}
                App::Stream { source, sink, .. } => {
                    let c = std::mem::take(&mut sink.interval);
                    self.series_streams
                        .f64("time_s", t)
                        .u64("flow", i as u64)
                        .f64("goodput_bps", goodput_bps)
                        .f64("send_rate_bps", (source.wire_bytes_sent - f.prev_wire) as f64 * 8.0 / secs)
                        .u64("packets", c.packets)
                        .f64("owd_mean_ms", if c.packets == 0 { f64::NAN } else { c.owd_sum_ns as f64 / c.packets as f64 / 1e6 })
                        .f64("owd_max_ms", if c.packets == 0 { f64::NAN } else { c.owd_max_ns as f64 / 1e6 })
                        .f64("jitter_ms", sink.jitter_ns / 1e6)
                        .u64("lost", sink.lost());
                    f.prev_wire = source.wire_bytes_sent;
                }
            }
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
                .u64("tx_bytes", c.tx_bytes)
                .u64("drops_early", c.drops_early)
                .f64("queue_avg", link.average_queue().unwrap_or(f64::NAN));
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
            let (sent_pkts, sent_payload, _) = f.sent();
            let accounted = f.data_delivered_pkts + f.data_dropped_pkts + inside_data[i].0;
            if sent_pkts != accounted {
                return Err(SimError::Conservation(format!(
                    "flow {}: {} data packets sent but {} delivered + {} dropped + {} in flight = {}",
                    f.name, sent_pkts, f.data_delivered_pkts, f.data_dropped_pkts, inside_data[i].0, accounted
                )));
            }
            let bytes = f.data_delivered_payload + f.data_dropped_payload + inside_data[i].1;
            if sent_payload != bytes {
                return Err(SimError::Conservation(format!(
                    "flow {}: {} payload bytes sent but {} accounted for",
                    f.name, sent_payload, bytes
                )));
            }
            let acks = f.acks_delivered + f.acks_dropped + inside_acks[i];
            if f.acks_sent() != acks {
                return Err(SimError::Conservation(format!("flow {}: {} ACKs sent but {} accounted for", f.name, f.acks_sent(), acks)));
            }
            if let App::Tcp { sender, receiver } = &f.app {
                if receiver.rcv_nxt > sender.snd_max {
                    return Err(SimError::Conservation(format!(
                        "flow {}: receiver holds {} bytes in order but only {} were sent",
                        f.name, receiver.rcv_nxt, sender.snd_max
                    )));
                }
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
        // Parameters actually used, typed, in the algorithm's catalog order (defaults for those the
        // scenario leaves out): once per scenario flow (a web generator's transfers share them).
        for f in self.flows.iter().filter(|f| !f.background) {
            let spec = &self.scenario.flows[f.spec];
            let Some((algorithm, params, _)) = spec.congestion_control() else {
                params_used.push((f.name.clone(), String::new(), Vec::new()));
                continue;
            };
            let info = ccsim_cc::catalog().into_iter().find(|a| a.name == algorithm);
            let used = info
                .map(|info| {
                    info.params
                        .into_iter()
                        .map(|p| (p.name.to_string(), params.get(p.name).map_or(p.default, ParamValue::from)))
                        .collect()
                })
                .unwrap_or_default();
            params_used.push((f.name.clone(), algorithm.to_string(), used));
        }
        for (i, f) in self.flows.iter().enumerate() {
            if matches!(f.app, App::Web { .. }) {
                continue; // the generator itself moves no data: its transfers have rows of their own
            }
            let delivered = f.delivered_bytes();
            let end_rcv = f.rcv_at_window_end.unwrap_or(delivered);
            let goodput = (end_rcv - f.rcv_at_window_start.min(end_rcv)) as f64 * 8.0 / window_s;
            let active_in_window = f.intervals.iter().any(|&(a, b)| a < self.measure_end && b > self.measure_start);
            // Jain's index is over the TCP flows: streams do not compete for a share.
            if active_in_window && f.kind == FlowKind::Tcp {
                goodputs.push(goodput);
            }
            total_goodput += goodput;
            let (sent_pkts, _, _) = f.sent();
            let h = &f.rtt_hist;
            let q = |x: f64| h.quantile(x) / 1e6;
            let kind = match f.kind {
                FlowKind::Tcp => "tcp",
                FlowKind::Cbr => "cbr",
                FlowKind::Voip => "voip",
                FlowKind::Web => "web",
            };
            let (retransmits, fast_retransmits, timeouts, rtt_min, rtt_max) = match &f.app {
                App::Tcp { sender, .. } => {
                    (sender.stats.retransmits, sender.stats.fast_retransmits, sender.stats.timeouts, sender.rtt.min, sender.rtt.max)
                }
                App::Stream { .. } | App::Web { .. } => (0, 0, 0, None, None),
            };
            fs.u64("flow", i as u64)
                .str("name", &f.name)
                .str("kind", kind)
                .str("algorithm", &f.algorithm)
                .f64("start_s", f.start.as_secs_f64())
                .f64("stop_s", f.stop.as_secs_f64())
                .f64("access_delay_ms", f.access_delay_ns as f64 / 1e6)
                .f64("goodput_bps", goodput)
                .u64("bytes_delivered", delivered)
                .u64("data_pkts_sent", sent_pkts)
                .u64("retransmits", retransmits)
                .u64("fast_retransmits", fast_retransmits)
                .u64("timeouts", timeouts)
                .u64("drops_queue", f.drops_queue)
                .u64("drops_random", f.drops_random)
                .f64("loss_rate", if sent_pkts == 0 { 0.0 } else { f.data_dropped_pkts as f64 / sent_pkts as f64 })
                .f64("rtt_mean_ms", h.mean() / 1e6)
                .f64("rtt_p50_ms", q(0.5))
                .f64("rtt_p95_ms", q(0.95))
                .f64("rtt_p99_ms", q(0.99))
                .f64("rtt_min_ms", ms(rtt_min))
                .f64("rtt_max_ms", ms(rtt_max))
                .f64("fct_s", match (f.bytes, f.completed_at) {
                    (Some(_), Some(t)) => (t - f.start).as_secs_f64(),
                    _ => f64::NAN,
                })
                .bool("completed", f.completed_at.is_some());
            // Streams: what a VoIP or video application sees at the receiver (NaN for TCP).
            let (owd, jitter_ms, lost) = match &f.app {
                App::Stream { sink, .. } => (Some(&sink.owd_hist), sink.jitter_ns / 1e6, sink.lost() as f64),
                App::Tcp { .. } | App::Web { .. } => (None, f64::NAN, f64::NAN),
            };
            let oq = |x: f64| owd.map_or(f64::NAN, |h| h.quantile(x) / 1e6);
            fs.f64("owd_mean_ms", owd.map_or(f64::NAN, |h| h.mean() / 1e6))
                .f64("owd_p50_ms", oq(0.5))
                .f64("owd_p95_ms", oq(0.95))
                .f64("owd_p99_ms", oq(0.99))
                .f64("owd_max_ms", owd.map_or(f64::NAN, |h| if h.count() == 0 { f64::NAN } else { h.max() as f64 / 1e6 }))
                .f64("jitter_ms", jitter_ms)
                .f64("stream_lost_pkts", lost);
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
                .f64("loss_rate", if c.arrivals == 0 { 0.0 } else { (c.drops_queue + c.drops_random) as f64 / c.arrivals as f64 })
                .u64("drops_early", c.drops_early);
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
            streams: self.series_streams.finish(),
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
