//! The scenario's flows as the simulation runs them: each flow's application, built from its spec.

use std::time::Duration;

use ccsim_cc::{Rng, Time};

use crate::error::SimError;
use crate::scenario::{FlowKind, FlowSpec, Scenario};
use crate::sim::flow::{App, Flow, Identity, Schedule};
use crate::sim::params::to_param_map;
use crate::sim::web::{TransferFactory, WebGenerator};
use crate::stream::{StreamPattern, StreamSink, StreamSource};
use crate::tcp::{Receiver, Sender};
use crate::topology::{self, Route};

/// Flow `i` of the scenario on `route`; the algorithm is built (and its parameters checked) here.
pub(crate) fn scenario_flow(scenario: &Scenario, i: usize, name: String, route: Route, access_delay_ns: u64, seed: u64) -> Result<Flow, SimError> {
    let spec = &scenario.flows[i];
    let field = format!("flows[{i}]");
    let app = match spec.kind {
        FlowKind::Tcp => {
            let params = to_param_map(&field, spec)?;
            let init = Sender::cc_init(&spec.tcp, Rng::new(seed, topology::streams::flow_cc(i)));
            let cc = ccsim_cc::build(&spec.algorithm, &params, &init).map_err(|e| SimError::from_cc(&field, e))?;
            App::Tcp {
                sender: Sender::new(i as u32, &spec.tcp, cc, spec.bytes),
                receiver: Receiver::new(i as u32, spec.tcp.delayed_ack, spec.tcp.mss_bytes),
            }
        }
        FlowKind::Web => App::Web(WebGenerator {
            rng: Rng::new(seed, topology::streams::flow_app(i)),
            active: false,
            spawned: 0,
            transfers: TransferFactory::new(&field, i, spec, seed)?,
        }),
        FlowKind::Cbr | FlowKind::Voip => App::Stream { source: stream_source(i, spec, seed), sink: StreamSink::default(), active: false },
    };
    let intervals = spec.active_intervals(scenario.duration_ns).into_iter().map(|(a, b)| (Time(a), Time(b))).collect();
    let id = Identity { name, kind: spec.kind, algorithm: spec.algorithm.clone(), spec: i, background: false };
    let delack_timeout = Duration::from_nanos(spec.tcp.delayed_ack_timeout_ns);
    Ok(Flow::new(id, app, route, Schedule::new(intervals, spec.bytes), access_delay_ns, delack_timeout))
}

/// A stream's source from its spec. Defaults: CBR 1000 B payload + 28 B IP/UDP; VoIP G.711,
/// 160 B every 20 ms + 40 B IP/UDP/RTP, talk spurts with Brady's means (1.0 s on, 1.35 s off).
fn stream_source(i: usize, spec: &FlowSpec, seed: u64) -> StreamSource {
    let rng = Rng::new(seed, topology::streams::flow_app(i));
    match spec.kind {
        FlowKind::Cbr => {
            let payload = spec.payload_bytes.unwrap_or(1000);
            let header = spec.header_bytes.unwrap_or(28);
            let rate = spec.rate_bps.unwrap_or(1).max(1);
            // The interval that gives `rate_bps` on the wire (payload + header).
            let interval = Duration::from_nanos(((payload + header) as u128 * 8 * 1_000_000_000 / rate as u128).max(1) as u64);
            StreamSource::new(i as u32, payload as u32, header as u32, StreamPattern::Constant { interval }, rng)
        }
        _ => {
            let payload = spec.payload_bytes.unwrap_or(160);
            let header = spec.header_bytes.unwrap_or(40);
            let interval = Duration::from_nanos(spec.interval_ns.unwrap_or(20_000_000));
            let pattern = if spec.talk_spurts {
                StreamPattern::OnOff {
                    interval,
                    mean_on: Duration::from_nanos(spec.mean_on_ns.unwrap_or(1_000_000_000)),
                    mean_off: Duration::from_nanos(spec.mean_off_ns.unwrap_or(1_350_000_000)),
                }
            } else {
                StreamPattern::Constant { interval }
            };
            StreamSource::new(i as u32, payload as u32, header as u32, pattern, rng)
        }
    }
}
