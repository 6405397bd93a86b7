//! Topology builders. A topology is a set of unidirectional links plus, for each flow, a forward route
//! (data) and a reverse route (ACKs) as lists of link ids: source routing keeps the core independent of
//! the shape, so a parking lot (several bottlenecks, cross traffic entering and leaving at each hop)
//! is another builder, not a change to the engine.

use std::time::Duration;

use ccsim_cc::Rng;

use crate::link::Link;
use crate::loss_schedule::LossSchedule;
use crate::random_loss::LinkLoss;
use crate::queue;
use crate::scenario::{DelaySpec, Direction, Dumbbell, LinkSpec, ParkingLot, QueueSpec, RouteSpec, Scenario, Topology};

/// Stable random-stream ids, so adding a flow never changes another component's draws.
pub mod streams {
    pub const BOTTLENECK: u64 = 1;
    pub const REVERSE: u64 = 2;
    pub fn access(flow: usize) -> u64 {
        1_000 + 2 * flow as u64
    }
    pub fn reverse_access(flow: usize) -> u64 {
        1_001 + 2 * flow as u64
    }
    pub fn flow_cc(flow: usize) -> u64 {
        1_000_000 + flow as u64
    }
    pub fn flow_app(flow: usize) -> u64 {
        2_000_000 + flow as u64
    }
    pub fn web_transfer(flow: usize, k: u64) -> u64 {
        (1 << 62) | ((flow as u64) << 32) | (k & 0xFFFF_FFFF)
    }
    pub fn access_delay(flow: usize) -> u64 {
        3_000_000 + flow as u64
    }
    /// The sending host's jitter of simulation flow `flow` (an index of the run's flows, web
    /// transfers included).
    pub fn send_jitter(flow: usize) -> u64 {
        (1 << 61) | flow as u64
    }
    pub fn flow_start(flow: usize) -> u64 {
        5_000_000 + flow as u64
    }
    pub fn hop(k: usize) -> u64 {
        4_000_000 + 2 * k as u64
    }
    pub fn reverse_hop(k: usize) -> u64 {
        4_000_001 + 2 * k as u64
    }
}

/// Each flow's one-way access delay: fixed, or drawn from its own stream of the run's seed.
pub fn access_delays(scenario: &Scenario, seed: u64) -> Vec<u64> {
    scenario
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| match f.access_delay {
            DelaySpec::Fixed { delay_ns } => delay_ns,
            DelaySpec::Uniform { low_ns: lo, high_ns: hi } => {
                let u = Rng::new(seed, streams::access_delay(i)).uniform();
                lo + ((hi - lo) as f64 * u).round() as u64
            }
        })
        .collect()
}

pub struct Route {
    pub forward: Vec<u32>,
    pub reverse: Vec<u32>,
}

pub struct Network {
    pub links: Vec<Link>,
    pub routes: Vec<Route>,
    /// The link whose utilisation is the run's utilisation.
    pub bottleneck: u32,
}

fn link_from_spec(name: &str, spec: &LinkSpec, rng: Rng) -> Link {
    Link::new(name.to_string(), spec.rate_bps, Duration::from_nanos(spec.delay_ns), LinkLoss::new(&spec.loss_model, LossSchedule::new(spec.loss_rate, &spec.loss_changes)), queue::build(&spec.queue), rng)
}

/// An access link: the flow's own delay, the topology's access rate and queue (finite, like a host's
/// interface queue: Linux `txqueuelen`), no random loss.
fn access_link(name: String, rate_bps: u64, delay_ns: u64, queue: &QueueSpec, rng: Rng) -> Link {
    Link::new(name, rate_bps, Duration::from_nanos(delay_ns), LinkLoss::bernoulli(LossSchedule::constant(0.0)), queue::build(queue), rng)
}

/// Rate and queues shared by every flow's access link pair.
struct Access<'a> {
    rate_bps: u64,
    queue: &'a QueueSpec,
    reverse_queue: &'a QueueSpec,
}

pub fn build(scenario: &Scenario, seed: u64, flow_names: &[String], access_delays: &[u64]) -> Network {
    match &scenario.topology {
        Topology::Dumbbell(d) => dumbbell(d, scenario, seed, flow_names, access_delays),
        Topology::ParkingLot(p) => parking_lot(p, scenario, seed, flow_names, access_delays),
    }
}

/// Adds the access link pair of flow `i` and returns (towards the network, towards the host).
fn add_access(links: &mut Vec<Link>, i: usize, name: &str, access: &Access, delay_ns: u64, seed: u64) -> (u32, u32) {
    let up = links.len() as u32;
    let rng = Rng::new(seed, streams::access(i));
    links.push(access_link(format!("access:{name}"), access.rate_bps, delay_ns, access.queue, rng));
    let down = links.len() as u32;
    let rng = Rng::new(seed, streams::reverse_access(i));
    links.push(access_link(format!("reverse_access:{name}"), access.rate_bps, delay_ns, access.reverse_queue, rng));
    (up, down)
}

/// Senders i = 0..N each behind `access_i` (rate `access_rate_bps`, one-way delay of the flow), one
/// bottleneck, receivers right behind it; ACKs return over `reverse` and `reverse_access_i`. A
/// reverse-direction flow sends its data over `reverse` and its ACKs over the bottleneck.
fn dumbbell(d: &Dumbbell, scenario: &Scenario, seed: u64, flow_names: &[String], access_delays: &[u64]) -> Network {
    let access = Access { rate_bps: d.access_rate_bps, queue: &d.access_queue, reverse_queue: &d.reverse_access_queue };
    let mut links = Vec::with_capacity(2 + 2 * scenario.flows.len()); // exactly: a Link is 448 bytes
    links.push(link_from_spec("bottleneck", &d.bottleneck, Rng::new(seed, streams::BOTTLENECK)));
    links.push(link_from_spec("reverse", &d.reverse, Rng::new(seed, streams::REVERSE)));
    let mut routes = Vec::with_capacity(scenario.flows.len());
    for (i, f) in scenario.flows.iter().enumerate() {
        let (up, down) = add_access(&mut links, i, &flow_names[i], &access, access_delays[i], seed);
        // `validate` admits only dumbbell routes on a dumbbell.
        let direction = match f.route {
            RouteSpec::Dumbbell { direction } => direction,
            RouteSpec::ParkingLot { .. } => Direction::Forward,
        };
        routes.push(match direction {
            Direction::Forward => Route { forward: vec![up, 0], reverse: vec![1, down] },
            Direction::Reverse => Route { forward: vec![1, down], reverse: vec![up, 0] },
        });
    }
    Network { links, routes, bottleneck: 0 }
}

/// Hops `hop0 .. hopN-1` in series with their reverse hops; flow i crosses hops
/// first_hop..=last_hop. The run's "bottleneck" is the first hop.
fn parking_lot(p: &ParkingLot, scenario: &Scenario, seed: u64, flow_names: &[String], access_delays: &[u64]) -> Network {
    let n = p.hops.len();
    let access = Access { rate_bps: p.access_rate_bps, queue: &p.access_queue, reverse_queue: &p.reverse_access_queue };
    let mut links = Vec::with_capacity(2 * n + 2 * scenario.flows.len());
    for (k, h) in p.hops.iter().enumerate() {
        links.push(link_from_spec(&format!("hop{k}"), h, Rng::new(seed, streams::hop(k))));
    }
    for (k, spec) in p.reverse_hops.iter().enumerate() {
        links.push(link_from_spec(&format!("reverse_hop{k}"), spec, Rng::new(seed, streams::reverse_hop(k))));
    }
    let mut routes = Vec::with_capacity(scenario.flows.len());
    for (i, f) in scenario.flows.iter().enumerate() {
        // `validate` admits only hop ranges on a parking lot.
        let (first, last) = match f.route {
            RouteSpec::ParkingLot { first_hop, last_hop } => (first_hop, last_hop),
            RouteSpec::Dumbbell { .. } => (0, n - 1),
        };
        let (up, down) = add_access(&mut links, i, &flow_names[i], &access, access_delays[i], seed);
        let mut forward = vec![up];
        forward.extend((first..=last).map(|k| k as u32));
        let mut reverse: Vec<u32> = (first..=last).rev().map(|k| (n + k) as u32).collect();
        reverse.push(down);
        routes.push(Route { forward, reverse });
    }
    Network { links, routes, bottleneck: 0 }
}
