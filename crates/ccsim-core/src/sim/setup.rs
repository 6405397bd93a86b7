//! The scenario's flows as the simulation runs them: each flow's application, built from its spec.

use std::time::Duration;

use ccsim_cc::Rng;

use crate::error::SimError;
use crate::scenario::{AppRate, Scenario, Traffic, VoicePattern};
use crate::sim::app_rate::RateLimitedApp;
use crate::sim::flow::{App, Flow, Identity, Schedule};
use crate::sim::host::SendJitter;
use crate::sim::params::{controller, to_param_map};
use crate::sim::start;
use crate::sim::web::{TransferFactory, WebGenerator};
use crate::stream::{StreamPattern, StreamSource};
use crate::tcp::{Receiver, Sender};
use crate::topology::{self, Route};

/// Flow `i` of the scenario on `route`; the algorithm is built (and its parameters checked) here.
pub(crate) fn scenario_flow(scenario: &Scenario, i: usize, name: String, route: Route, access_delay_ns: u64, seed: u64) -> Result<Flow, SimError> {
    let spec = &scenario.flows[i];
    let field = format!("flows[{i}].traffic");
    let mut app_rate = None;
    let app = match &spec.traffic {
        Traffic::Tcp { algorithm, params, tcp, app_rate: rate, .. } => {
            let cc = controller(&field, algorithm, &to_param_map(params), tcp, Rng::new(seed, topology::streams::flow_cc(i)))?;
            // A rate-limited application has written one segment when the connection starts.
            let mut bytes = spec.transfer_bytes();
            if let AppRate::Limited { rate_bps } = *rate {
                let limited = RateLimitedApp::new(rate_bps, tcp.mss_bytes, bytes);
                bytes = Some(limited.first_write());
                app_rate = Some(limited);
            }
            App::Tcp {
                sender: Box::new(Sender::new(i as u32, tcp, cc, bytes)),
                receiver: Receiver::for_flow(i as u32, tcp),
            }
        }
        Traffic::Web { arrival_rate, size_mean_bytes, size_shape, .. } => App::Web(WebGenerator {
            rng: Rng::new(seed, topology::streams::flow_app(i)),
            active: false,
            spawned: 0,
            arrival_rate: *arrival_rate,
            size_mean_bytes: *size_mean_bytes,
            size_shape: *size_shape,
            transfers: TransferFactory::new(&field, i, spec, seed)?,
        }),
        Traffic::Cbr { .. } | Traffic::Voip { .. } => {
            App::Stream { source: stream_source(i, &spec.traffic, seed), sink: Box::default(), active: false }
        }
    };
    let intervals = start::intervals(spec, i, seed);
    let cc = spec.congestion_control();
    let algorithm = cc.map_or_else(String::new, |(algorithm, _, _)| algorithm.to_string());
    let id = Identity { name, kind: spec.kind(), algorithm, spec: i, background: false };
    let delack_timeout = Duration::from_nanos(cc.map_or(0, |(_, _, tcp)| tcp.delayed_ack_timeout_ns));
    let mut flow = Flow::new(id, app, route, Schedule::new(intervals, spec.transfer_bytes()), access_delay_ns, delack_timeout);
    flow.app_rate = app_rate;
    if let Some((_, _, tcp)) = cc {
        flow.host = SendJitter::new(tcp.send_jitter_ns, Rng::new(seed, topology::streams::send_jitter(i)));
    }
    Ok(flow)
}

/// A stream's source from its traffic spec (every value written by the front end).
fn stream_source(i: usize, traffic: &Traffic, seed: u64) -> StreamSource {
    let rng = Rng::new(seed, topology::streams::flow_app(i));
    match *traffic {
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
