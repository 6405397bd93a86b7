//! Topology builders. A topology is a set of unidirectional links plus, for each flow, a forward route
//! (data) and a reverse route (ACKs) as lists of link ids: source routing keeps the core independent of
//! the shape, so a parking lot (several bottlenecks, cross traffic entering and leaving at each hop)
//! is another builder, not a change to the engine.

use std::time::Duration;

use ccsim_cc::Rng;

use crate::link::Link;
use crate::queue::{self, DropTail};
use crate::scenario::{Dumbbell, LinkSpec, QueueSpec, Scenario, Topology};

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
    Link::new(name.to_string(), spec.rate_bps, Duration::from_nanos(spec.delay_ns), spec.loss_rate, queue::build(&spec.queue), rng)
}

/// An access link: fast, unlimited queue, no random loss.
fn access_link(name: String, rate_bps: u64, delay_ns: u64, rng: Rng) -> Link {
    Link::new(name, rate_bps, Duration::from_nanos(delay_ns), 0.0, Box::new(DropTail { limit_pkts: None, limit_bytes: None }), rng)
}

pub fn build(scenario: &Scenario, seed: u64, flow_names: &[String]) -> Network {
    match &scenario.topology {
        Topology::Dumbbell(d) => dumbbell(d, scenario, seed, flow_names),
    }
}

/// Senders i = 0..N each behind `access_i` (rate `access_rate_bps`, one-way delay of the flow), one
/// bottleneck, receivers right behind it; ACKs return over `reverse` and `reverse_access_i`.
fn dumbbell(d: &Dumbbell, scenario: &Scenario, seed: u64, flow_names: &[String]) -> Network {
    let reverse = d.reverse.clone().unwrap_or(LinkSpec {
        rate_bps: d.bottleneck.rate_bps,
        delay_ns: d.bottleneck.delay_ns,
        queue: QueueSpec::Droptail { limit_pkts: Some(10_000), limit_bytes: None },
        loss_rate: 0.0,
    });
    let mut links = vec![
        link_from_spec("bottleneck", &d.bottleneck, Rng::new(seed, streams::BOTTLENECK)),
        link_from_spec("reverse", &reverse, Rng::new(seed, streams::REVERSE)),
    ];
    let mut routes = Vec::with_capacity(scenario.flows.len());
    for (i, f) in scenario.flows.iter().enumerate() {
        let fwd = links.len() as u32;
        links.push(access_link(format!("access:{}", flow_names[i]), d.access_rate_bps, f.access_delay_ns, Rng::new(seed, streams::access(i))));
        let rev = links.len() as u32;
        links.push(access_link(format!("reverse_access:{}", flow_names[i]), d.access_rate_bps, f.access_delay_ns, Rng::new(seed, streams::reverse_access(i))));
        routes.push(Route { forward: vec![fwd, 0], reverse: vec![1, rev] });
    }
    Network { links, routes, bottleneck: 0 }
}
