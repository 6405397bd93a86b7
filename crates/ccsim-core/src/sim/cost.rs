//! What a run will cost, estimated from the built simulation before its first event (docs/safety.md).
//!
//! Legal values can ask for more than a machine has: a 1 ns sample interval (10^10 samples in 10 s),
//! a 1000 Gbit/s CBR source (8 x 10^7 events per simulated second), 10^9 web arrivals per second, a
//! run of 10^9 s. The front end compares this estimate with its budget and refuses such a run before
//! anything is allocated. The engine owns the figures (its events, its tables, its memory); the front
//! end owns the limits and what its own copy of the tables costs.
//!
//! The model, an order of magnitude (tests/test_budget.py compares it with real runs):
//! - each flow offers wire bytes to the first link of its route: a TCP flow as fast as its access
//!   link and its receive window over the base RTT allow (or its transfer size), a web generator
//!   arrivals x mean size, a CBR source its rate, a VoIP source one packet per interval while talking;
//! - a link carries at most its rate for the whole run; when the flows crossing it offer more, each
//!   keeps its share, and a flow's throughput is that of its most loaded link;
//! - every packet a link carries is one event (`Event::LinkDeliver`, one per packet per hop); a TCP
//!   flow's delivered segments cause ACKs (one per segment, one per two with delayed ACKs) over the
//!   reverse route and one timer event each; a stream's packets cost one emit event each, also those
//!   its access queue drops; samples and web arrivals are one event each;
//! - memory: the per-interval tables (one row per sampled flow, per link and per algorithm metric at
//!   each sample), the summary rows (web transfers included), each web transfer's state (kept to the
//!   end of the run), and the packets the links hold at most (queue limit plus bandwidth-delay
//!   product, and never more than arrive).
//!
//! Each part of the cost is attributed to the resolved field that drives it (`sample_interval_ns`,
//! `flows[2].traffic.rate_bps`, ...), so a refusal names the key to change.
//!
//! While the run goes, `meter.rs` meters the same parts as they grow.

use std::collections::BTreeMap;
use std::mem::size_of;

use crate::link::Link;
use crate::packet::ack_wire_bytes;
use crate::scenario::{Traffic, VoicePattern};
use crate::sim::flow::{App, Flow};
use crate::sim::meter::{EventLimit, MemoryLimit, FLOW_BYTES, HELD_PACKET_BYTES, SUMMARY_COLUMNS};
use crate::sim::Simulation;

/// Columns of the per-interval tables, as `recorder.rs` writes them (checked by a test). A flow
/// has rows only within its life (recorder.rs), so for a flow that starts late or stops early the
/// count is an upper bound.
pub const FLOW_SERIES_COLUMNS: f64 = 12.0;
pub const STREAM_SERIES_COLUMNS: f64 = 10.0;
pub const LINK_SERIES_COLUMNS: f64 = 12.0;
pub const CC_SERIES_COLUMNS: f64 = 4.0;

/// A string cell (link name, metric name): the `String` and its text.
const STRING_CELL_BYTES: f64 = 24.0 + 24.0;

/// The cost of a run. Counts are `f64`: an absurd scenario must give an absurd number, not overflow.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cost {
    /// Events the loop will process.
    pub events: f64,
    /// Sampling instants, and the values (cells) the per-interval tables will hold.
    pub samples: f64,
    pub series_cells: f64,
    /// Values of the per-flow summary table (one row per flow and per web transfer).
    pub summary_cells: f64,
    pub web_transfers: f64,
    /// Packets carried over the bottleneck (link 0).
    pub bottleneck_packets: f64,
    /// Memory of the engine's own state at the end of the run (tables, flows, held packets).
    pub engine_bytes: f64,
    /// The same figures split by the resolved field that drives them.
    pub drivers: Vec<Driver>,
}

/// The part of the cost driven by one field of the resolved document.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Driver {
    pub field: String,
    pub events: f64,
    /// Table values (series and summary) this field adds; the front end prices its own copy of them.
    pub cells: f64,
    pub engine_bytes: f64,
}

impl Simulation {
    /// The estimated cost of running this simulation from the start to the end (see the module doc).
    pub fn cost(&self) -> Cost {
        estimate(self)
    }

    /// Sets (or clears) the memory limit the run is metered against (`meter.rs`).
    pub fn set_memory_limit(&mut self, limit: Option<MemoryLimit>) {
        self.meter.set_limit(limit);
    }

    /// Sets (or clears) how many events the run may process (`meter.rs`).
    pub fn set_event_limit(&mut self, limit: Option<EventLimit>) {
        self.meter.set_event_limit(limit);
    }
}

fn estimate(sim: &Simulation) -> Cost {
    let s = &sim.scenario;
    let run_s = s.duration_ns as f64 / 1e9;
    let mut drivers: BTreeMap<String, Driver> = BTreeMap::new();
    let mut add = |field: &str, events: f64, cells: f64, bytes: f64| {
        let d = drivers.entry(field.to_string()).or_insert_with(|| Driver { field: field.to_string(), ..Driver::default() });
        d.events += events;
        d.cells += cells;
        d.engine_bytes += bytes;
    };

    // What each flow offers its first link over the run, in wire bytes, and its packet size.
    let offers: Vec<Offer> = sim.flows.iter().enumerate().map(|(i, f)| offer(sim, i, f)).collect();

    // Each link's load and capacity over the run; a flow keeps the share of its most loaded link.
    let mut demand = vec![0.0; sim.links.len()];
    for (f, o) in sim.flows.iter().zip(&offers) {
        let access = f.route.forward[0] as usize;
        let at_access = o.wire_bytes.min(link_bytes(&sim.links[access], run_s));
        for &l in &f.route.forward {
            demand[l as usize] += if l as usize == access { o.wire_bytes } else { at_access };
        }
    }
    let share: Vec<f64> = sim.links.iter().zip(&demand).map(|(l, &d)| if d > 0.0 { (link_bytes(l, run_s) / d).min(1.0) } else { 1.0 }).collect();

    let mut carried = vec![0.0; sim.links.len()]; // packets each link carries
    let mut cells_per_sample = 0.0;
    let mut string_cells_per_sample = 0.0;
    let mut web_transfers = 0.0;
    for (i, (f, o)) in sim.flows.iter().zip(&offers).enumerate() {
        let mut events = o.emits;
        // Hop by hop: a stream's packets thin out at each full link; TCP (elastic) sends only what
        // its most loaded link passes, so each of its hops carries that.
        let elastic = matches!(f.app, App::Tcp { .. } | App::Web(_));
        let end_share = f.route.forward.iter().map(|&l| share[l as usize]).fold(1.0, f64::min);
        let mut passing = 1.0;
        for &l in &f.route.forward {
            // (a stream keeps its share of what reaches each link: the shares compound)
            passing = if elastic { end_share } else { passing * share[l as usize] };
            let pkts = o.wire_bytes * passing / o.packet_bytes;
            carried[l as usize] += pkts;
            events += pkts;
        }
        if elastic {
            let delivered = o.wire_bytes * end_share / o.packet_bytes;
            let acks = delivered * o.acks_per_segment;
            events += acks * (f.route.reverse.len() as f64 + 1.0); // each ACK's hops and a timer event
            for &l in &f.route.reverse {
                carried[l as usize] += acks;
            }
        }
        match &s.flows[i].traffic {
            Traffic::Web { .. } => {
                web_transfers += o.transfers;
                add(&o.field, events + o.transfers, o.transfers * SUMMARY_COLUMNS, o.transfers * FLOW_BYTES);
            }
            _ => add(&o.field, events, 0.0, 0.0),
        }
        match &f.app {
            App::Tcp { sender, .. } => {
                let mut names = Vec::new();
                sender.cc_metrics(&mut names);
                let metrics = names.len() as f64;
                cells_per_sample += FLOW_SERIES_COLUMNS + metrics * CC_SERIES_COLUMNS;
                string_cells_per_sample += metrics;
            }
            App::Stream { .. } => cells_per_sample += STREAM_SERIES_COLUMNS,
            App::Web(_) | App::Finished(_) => {}
        }
    }
    cells_per_sample += sim.links.len() as f64 * LINK_SERIES_COLUMNS;
    string_cells_per_sample += sim.links.len() as f64;

    // The sampling: one event and one row per sampled flow, link and metric each time.
    let samples = (s.duration_ns / s.sample_interval_ns) as f64;
    let series_cells = samples * cells_per_sample;
    let series_bytes = series_cells * 8.0 + samples * string_cells_per_sample * STRING_CELL_BYTES;
    add("sample_interval_ns", samples, series_cells, series_bytes);

    // The packets a link holds at once: its queue and what is on the wire, never more than arrive.
    let smallest = smallest_packets(sim);
    for (l, link) in sim.links.iter().enumerate() {
        let packet_bytes = smallest[l];
        let (limit_pkts, limit_bytes) = link.queue_limit();
        let queue = match (limit_pkts, limit_bytes) {
            (Some(p), Some(b)) => (p as f64).min(b as f64 / packet_bytes),
            (Some(p), None) => p as f64,
            (None, Some(b)) => b as f64 / packet_bytes,
            (None, None) => f64::INFINITY,
        };
        let on_wire = link.rate_bps as f64 * link.delay.as_secs_f64() / 8.0 / packet_bytes;
        let held = (queue + on_wire + 1.0).min(carried[l] / share[l].max(1e-300) + 1.0);
        add(&queue_field(&link.name), 0.0, 0.0, held * HELD_PACKET_BYTES);
    }

    // The flows and links themselves, and the summary rows of the scenario's flows.
    let base_bytes = sim.flows.len() as f64 * FLOW_BYTES + (sim.links.len() * size_of::<Link>()) as f64;
    add("flows", 2.0 * sim.flows.len() as f64, sim.flows.len() as f64 * SUMMARY_COLUMNS, base_bytes);

    let drivers: Vec<Driver> = drivers.into_values().collect();
    Cost {
        events: drivers.iter().map(|d| d.events).sum(),
        samples,
        series_cells,
        summary_cells: (sim.flows.len() as f64 + web_transfers) * SUMMARY_COLUMNS,
        web_transfers,
        bottleneck_packets: carried.get(sim.bottleneck as usize).copied().unwrap_or(0.0),
        engine_bytes: drivers.iter().map(|d| d.engine_bytes).sum(),
        drivers,
    }
}

/// What one flow offers to the first link of its route over the whole run.
struct Offer {
    /// The resolved field that drives this flow's load (its rate, its arrival rate, or the duration).
    field: String,
    wire_bytes: f64,
    /// Wire bytes of one data packet.
    packet_bytes: f64,
    /// Events at the source that are not link deliveries (a stream's emits).
    emits: f64,
    transfers: f64,
    /// ACKs per delivered data segment (TCP).
    acks_per_segment: f64,
}

fn offer(sim: &Simulation, i: usize, f: &Flow) -> Offer {
    let spec = &sim.scenario.flows[i];
    let active_s: f64 = spec.intervals.iter().map(|iv| (iv.stop_ns - iv.start_ns) as f64 / 1e9).sum();
    let at = |key: &str| format!("flows[{i}].traffic.{key}");
    match &spec.traffic {
        Traffic::Tcp { tcp, .. } | Traffic::Web { tcp, .. } => {
            let packet_bytes = (tcp.mss_bytes + tcp.header_bytes) as f64;
            let per_payload = packet_bytes / tcp.mss_bytes as f64;
            // At most the access link's rate, and a receive window per base RTT (propagation).
            let rtt_s: f64 = f.route.forward.iter().chain(&f.route.reverse).map(|&l| sim.links[l as usize].delay.as_secs_f64()).sum();
            let window_bps = if rtt_s > 0.0 { tcp.rwnd_bytes as f64 * per_payload * 8.0 / rtt_s } else { f64::INFINITY };
            let access_bps = sim.links[f.route.forward[0] as usize].rate_bps as f64;
            let most = access_bps.min(window_bps) * active_s / 8.0;
            let (field, wire_bytes, transfers) = match &spec.traffic {
                Traffic::Web { arrival_rate, size_mean_bytes, .. } => {
                    let transfers = arrival_rate * active_s;
                    (at("arrival_rate"), most.min(transfers * *size_mean_bytes as f64 * per_payload), transfers)
                }
                _ => {
                    let size = spec.transfer_bytes().map_or(f64::INFINITY, |b| b as f64 * per_payload);
                    ("duration_ns".to_string(), most.min(size), 0.0)
                }
            };
            let acks_per_segment = if tcp.delayed_ack { 0.5 } else { 1.0 };
            Offer { field, wire_bytes, packet_bytes, emits: 0.0, transfers, acks_per_segment }
        }
        Traffic::Cbr { rate_bps, payload_bytes, header_bytes } => {
            let packet_bytes = (payload_bytes + header_bytes) as f64;
            let wire_bytes = *rate_bps as f64 * active_s / 8.0;
            Offer { field: at("rate_bps"), wire_bytes, packet_bytes, emits: wire_bytes / packet_bytes, transfers: 0.0, acks_per_segment: 0.0 }
        }
        Traffic::Voip { payload_bytes, header_bytes, interval_ns, pattern } => {
            let packet_bytes = (payload_bytes + header_bytes) as f64;
            let talking = match pattern {
                VoicePattern::Constant => 1.0,
                VoicePattern::TalkSpurts { mean_on_ns, mean_off_ns } => *mean_on_ns as f64 / (*mean_on_ns + *mean_off_ns) as f64,
            };
            let packets = active_s * 1e9 / *interval_ns as f64 * talking;
            Offer { field: at("interval_ns"), wire_bytes: packets * packet_bytes, packet_bytes, emits: packets, transfers: 0.0, acks_per_segment: 0.0 }
        }
    }
}

/// Wire bytes `link` can carry in `run_s` seconds.
fn link_bytes(link: &Link, run_s: f64) -> f64 {
    link.rate_bps as f64 * run_s / 8.0
}

/// The smallest packet crossing each link (an ACK is 52 bytes), which bounds how many a byte limit
/// holds: one pass over the routes (one per link would be links x flows, 0.75 s at 10,000 flows).
fn smallest_packets(sim: &Simulation) -> Vec<f64> {
    let mut smallest = vec![f64::INFINITY; sim.links.len()];
    for (i, f) in sim.flows.iter().enumerate() {
        let data = match &sim.scenario.flows[i].traffic {
            Traffic::Tcp { tcp, .. } | Traffic::Web { tcp, .. } => (tcp.mss_bytes + tcp.header_bytes) as f64,
            Traffic::Cbr { payload_bytes, header_bytes, .. } | Traffic::Voip { payload_bytes, header_bytes, .. } => {
                (payload_bytes + header_bytes) as f64
            }
        };
        for &l in &f.route.forward {
            smallest[l as usize] = smallest[l as usize].min(data);
        }
        if matches!(f.app, App::Tcp { .. } | App::Web(_)) {
            for &l in &f.route.reverse {
                smallest[l as usize] = smallest[l as usize].min(ack_wire_bytes(0) as f64);
            }
        }
    }
    smallest.into_iter().map(|s| if s.is_finite() { s.max(1.0) } else { 1500.0 }).collect()
}

/// The resolved field of the queue of the link named `name` (the names of `topology.rs`).
fn queue_field(name: &str) -> String {
    if let Some(k) = name.strip_prefix("reverse_hop") {
        format!("topology.reverse_hops[{k}].queue")
    } else if let Some(k) = name.strip_prefix("hop") {
        format!("topology.hops[{k}].queue")
    } else if name.starts_with("reverse_access:") {
        "topology.reverse_access_queue".to_string()
    } else if name.starts_with("access:") {
        "topology.access_queue".to_string()
    } else {
        format!("topology.{name}.queue")
    }
}

#[cfg(test)]
mod tests {
    //! The estimate against the engine's own counts, and the ceilings of `meter.rs`.

    use serde_json::Value;

    use super::*;
    use crate::error::SimError;
    use crate::fixtures::{self, cbr, newreno, web};
    use crate::sim::meter::EventLimit;
    use crate::Time;

    const S: u64 = 1_000_000_000;

    /// The single-flow path (10 Mbit/s, 20 ms each way, 84 packets) for `seconds`, sampled every 100 ms.
    fn sim(seconds: u64, traffic: &[Value]) -> Simulation {
        let doc = fixtures::dumbbell(10_000_000, 20_000_000, 84, seconds * S, 100_000_000, traffic);
        Simulation::from_json(&doc.to_string(), 1).expect("a valid resolved document")
    }

    fn top_driver(cost: &Cost, by: impl Fn(&Driver) -> f64) -> &str {
        &cost.drivers.iter().max_by(|a, b| by(a).total_cmp(&by(b))).expect("drivers").field
    }

    /// The smallest packet on link `l` by its definition: a look at every flow (the estimate's
    /// one pass over the routes must give the same).
    fn smallest_packet_of(sim: &Simulation, l: u32) -> f64 {
        let mut smallest = f64::INFINITY;
        for (i, f) in sim.flows.iter().enumerate() {
            if f.route.forward.contains(&l) {
                smallest = smallest.min(match &sim.scenario.flows[i].traffic {
                    Traffic::Tcp { tcp, .. } | Traffic::Web { tcp, .. } => (tcp.mss_bytes + tcp.header_bytes) as f64,
                    Traffic::Cbr { payload_bytes, header_bytes, .. } | Traffic::Voip { payload_bytes, header_bytes, .. } => {
                        (payload_bytes + header_bytes) as f64
                    }
                });
            }
            if f.route.reverse.contains(&l) && matches!(f.app, App::Tcp { .. } | App::Web(_)) {
                smallest = smallest.min(ack_wire_bytes(0) as f64);
            }
        }
        if smallest.is_finite() { smallest.max(1.0) } else { 1500.0 }
    }

    #[test]
    fn the_smallest_packet_of_each_link_is_that_of_the_flows_crossing_it() {
        let mut small_cbr = cbr(1_000_000);
        small_cbr["payload_bytes"] = 20.into();
        let s = sim(1, &[newreno(), small_cbr, web(2.0, 100_000), cbr(5_000_000)]);
        let smallest = smallest_packets(&s);
        assert_eq!(smallest.len(), s.links.len());
        for l in 0..s.links.len() {
            assert_eq!(smallest[l], smallest_packet_of(&s, l as u32), "link {}", s.links[l].name);
        }
        // the check can fail: the links differ (a 48-byte CBR packet, ACKs, full segments)
        assert!(smallest.iter().any(|&b| b < 52.0) && smallest.iter().any(|&b| b > 1000.0), "{smallest:?}");
    }

    #[test]
    fn the_series_cells_are_counted_exactly() {
        let mut s = sim(10, &[newreno(), cbr(1_000_000)]);
        let cost = s.cost();
        assert_eq!(cost.samples, 100.0);
        s.run_until(s.end()).unwrap();
        assert_eq!(cost.series_cells, s.recorder.cells() as f64);
    }

    #[test]
    fn the_events_of_a_bulk_transfer_are_within_a_factor_of_two() {
        let mut s = sim(10, &[newreno()]);
        let estimated = s.cost().events;
        s.run_until(s.end()).unwrap();
        let actual = s.recorder.stats.events as f64;
        assert!(estimated > actual / 2.0 && estimated < actual * 2.0, "estimated {estimated}, processed {actual}");
    }

    #[test]
    fn a_1000_gbit_cbr_source_is_priced_at_one_emit_per_packet_and_blamed_on_its_rate() {
        let cost = sim(10, &[newreno(), cbr(1_000_000_000_000)]).cost();
        let emits = 1e12 * 10.0 / 8.0 / 1028.0;
        assert!(cost.events > emits && cost.events < 3.0 * emits, "{} events for {emits} emits", cost.events);
        assert_eq!(top_driver(&cost, |d| d.events), "flows[1].traffic.rate_bps");
        // its packets are dropped at the 1 Gbit/s access link: the bottleneck carries at most its rate
        assert!(cost.bottleneck_packets <= 10e6 * 10.0 / 8.0 / 1028.0 + 1.0, "{}", cost.bottleneck_packets);
    }

    #[test]
    fn web_arrivals_are_priced_per_transfer_and_blamed_on_the_arrival_rate() {
        let cost = sim(10, &[web(1e9, 50_000)]).cost();
        assert_eq!(cost.web_transfers, 1e10);
        assert_eq!(cost.summary_cells, (1e10 + 1.0) * SUMMARY_COLUMNS);
        assert_eq!(top_driver(&cost, |d| d.engine_bytes), "flows[0].traffic.arrival_rate");
        assert!(cost.engine_bytes >= 1e10 * FLOW_BYTES);
    }

    #[test]
    fn a_tiny_sample_interval_is_blamed_on_the_sample_interval() {
        let doc = fixtures::dumbbell(10_000_000, 20_000_000, 84, 10 * S, 1, &[newreno()]);
        let cost = Simulation::from_json(&doc.to_string(), 1).unwrap().cost();
        assert_eq!(cost.samples, 1e10);
        assert_eq!(top_driver(&cost, |d| d.engine_bytes), "sample_interval_ns");
        assert_eq!(top_driver(&cost, |d| d.events), "sample_interval_ns");
    }

    #[test]
    fn an_absurd_duration_gives_an_absurd_but_finite_estimate() {
        let cost = sim(1_000_000_000, &[newreno()]).cost();
        // 10 Mbit/s for 1e9 s: about 8e11 segments, each an event at two links, an ACK and a timer
        assert!(cost.events.is_finite() && cost.events > 1e12, "{}", cost.events);
        assert!(cost.engine_bytes.is_finite() && cost.engine_bytes > 1e12);
    }

    #[test]
    fn the_event_ceiling_stops_the_run_naming_the_field_and_the_run_stays_stopped() {
        let mut s = sim(10, &[newreno(), cbr(1_000_000_000_000)]);
        s.set_event_limit(Some(EventLimit { events: 100_000, field: "flows[1].traffic.rate_bps".into() }));
        let err = s.run_until(s.end()).unwrap_err();
        let SimError::Budget { field, reason } = &err else { panic!("{err:?}") };
        assert_eq!(field, "flows[1].traffic.rate_bps");
        assert!(reason.contains("limit of 100000 events"), "{reason}");
        assert_eq!(s.recorder.stats.events, 100_001);
        assert!(s.now() < Time::from_secs(1));
        assert_eq!(s.run_until(s.end()).unwrap_err(), err);
    }

    #[test]
    fn a_ceiling_cleared_again_lets_the_same_run_go_to_the_end() {
        let mut s = sim(1, &[newreno(), cbr(100_000_000)]);
        s.set_event_limit(Some(EventLimit { events: 1000, field: "duration_ns".into() }));
        s.set_event_limit(None);
        s.run_until(s.end()).unwrap();
        assert!(s.recorder.stats.events > 10_000 && s.now() == s.end());
    }

    #[test]
    fn the_memory_meter_stops_a_run_whose_tables_outgrow_the_limit() {
        let doc = fixtures::dumbbell(10_000_000, 20_000_000, 84, 10 * S, 1_000_000, &[newreno()]);
        let mut s = Simulation::from_json(&doc.to_string(), 1).unwrap();
        s.set_memory_limit(Some(MemoryLimit { bytes: 1e6, front_end_bytes_per_cell: 48.0 }));
        let err = s.run_until(s.end()).unwrap_err();
        assert!(matches!(err, SimError::Resources(_)), "{err:?}");
        // 1 MB at 56 bytes a value: stopped at the first sample past that, well before the end
        let cells = s.recorder.cells() as f64;
        assert!(cells > 1000.0 && cells * 56.0 < 1e6 + 100.0 * 56.0, "{cells} cells");
        assert!(s.now() < Time::from_secs(2), "{:?}", s.now());
        // stopped at the sample that failed (every 1 ms): the event after it is not handled
        assert_eq!(s.now().as_nanos() % 1_000_000, 0, "{:?}", s.now());
        let events = s.recorder.stats.events;
        assert_eq!(s.run_until(s.end()).unwrap_err(), err);
        assert_eq!((s.recorder.stats.events, s.now().as_nanos() % 1_000_000), (events, 0));
    }
}
