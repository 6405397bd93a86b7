//! Applications starting, stopping and emitting: TCP senders, rate-limited TCP applications'
//! writes (`app_rate.rs`), CBR/VoIP streams, and the web generator's transfers.

use ccsim_cc::Time;

use crate::error::SimError;
use crate::event::Event;
use crate::scenario::FlowKind;
use crate::sim::flow::{App, Flow, Identity, Schedule};
use crate::sim::host::SendJitter;
use crate::sim::web::{next_arrival, transfer_size};
use crate::sim::Simulation;
use crate::tcp::{Receiver, Sender};
use crate::topology::{self, Route};

impl Simulation {
    #[inline(never)] // rare next to packet deliveries: kept out of the event loop
    pub(super) fn on_flow_start(&mut self, f: u32) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        if flow.app_rate.is_some() {
            self.start_rate_limited(f);
            return;
        }
        match &mut flow.app {
            App::Tcp { sender, .. } => {
                if now == flow.schedule.start {
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
            App::Web(g) => {
                g.active = true;
                let next = next_arrival(g.arrival_rate, &mut g.rng, now);
                self.events.schedule(next, Event::WebArrival(f));
            }
            App::Finished(_) => {}
        }
    }

    #[inline(never)] // rare next to packet deliveries: kept out of the event loop
    pub(super) fn on_flow_stop(&mut self, f: u32) {
        let flow = &mut self.flows[f as usize];
        if let Some(app) = &mut flow.app_rate {
            app.end();
        }
        match &mut flow.app {
            App::Tcp { sender, .. } => sender.stop(),
            App::Stream { active, .. } => *active = false,
            App::Web(g) => g.active = false,
            App::Finished(_) => {}
        }
    }

    pub(super) fn on_stream_emit(&mut self, f: u32) {
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

    /// A web transfer starts: a new finite TCP flow on the generator's links; then the next arrival.
    /// A transfer whose algorithm cannot be built is an error (see `web.rs`), never skipped.
    #[inline(never)] // rare next to packet deliveries: kept out of the event loop
    pub(super) fn on_web_arrival(&mut self, g: u32) -> Result<(), SimError> {
        let now = self.now;
        if now >= self.end {
            return Ok(());
        }
        let generator = &mut self.flows[g as usize];
        let spec_index = generator.id.spec;
        let App::Web(web) = &mut generator.app else { unreachable!("web arrival event for a flow that is no web generator") };
        if !web.active {
            return Ok(());
        }
        let k = web.spawned;
        web.spawned += 1;
        let size = transfer_size(web.size_mean_bytes, web.size_shape, &mut web.rng);
        let next = next_arrival(web.arrival_rate, &mut web.rng, now);
        let cc = web.transfers.build(ccsim_cc::Rng::new(self.seed, topology::streams::web_transfer(spec_index, k)))?;
        let (algorithm, tcp) = (web.transfers.algorithm.clone(), web.transfers.tcp.clone());
        self.meter.check(now, self.recorder.cells(), self.flows.len(), None)?;
        let id = self.flows.len() as u32;
        if self.flows.try_reserve(1).is_err() {
            let field = format!("flows[{spec_index}].traffic.arrival_rate");
            return Err(SimError::Resources(format!("web transfer {k} of {field} (every transfer keeps its state to the end)")));
        }
        let generator = &self.flows[g as usize];
        let mut transfer = Flow::new(
            Identity { name: format!("{}#{k}", generator.id.name), kind: FlowKind::Web, algorithm, spec: spec_index, background: true },
            App::Tcp {
                sender: Box::new(Sender::new(id, &tcp, cc, Some(size))),
                receiver: Receiver::for_flow(id, &tcp),
            },
            Route { forward: generator.route.forward.clone(), reverse: generator.route.reverse.clone() },
            Schedule::new(vec![(now, self.end)], Some(size)),
            generator.access_delay_ns,
            generator.timers.delack_timeout,
        );
        transfer.host = SendJitter::new(tcp.send_jitter_ns, ccsim_cc::Rng::new(self.seed, topology::streams::send_jitter(id as usize)));
        self.flows.push(transfer);
        self.start_transfer(id, now);
        if next < self.end {
            self.events.schedule(next, Event::WebArrival(g));
        }
        Ok(())
    }

    fn start_transfer(&mut self, id: u32, now: Time) {
        if let App::Tcp { sender, .. } = &mut self.flows[id as usize].app {
            sender.start(now, &mut self.out);
        }
        self.transmit_from_sender(id);
    }

    /// A rate-limited TCP application's interval starts (`on_flow_start`).
    pub(super) fn start_rate_limited(&mut self, f: u32) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        let (App::Tcp { sender, .. }, Some(app)) = (&mut flow.app, &mut flow.app_rate) else { return };
        if now == flow.schedule.start {
            // The sender was built holding the first write; this is the connection's start.
            app.begin(now, 0);
            sender.start(now, &mut self.out);
        } else {
            let end = app.begin(now, sender.snd_max());
            sender.app_wrote(now, end, &mut self.out);
        }
        if let Some(t) = app.next_write().filter(|&t| t < self.end) {
            self.events.schedule(t, Event::AppWrite(f));
        }
        self.transmit_from_sender(f);
    }

    /// A rate-limited application's next write is due (a stale event does nothing).
    #[inline(never)] // rare next to packet deliveries: kept out of the event loop
    pub(super) fn on_app_write(&mut self, f: u32) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        let (App::Tcp { sender, .. }, Some(app)) = (&mut flow.app, &mut flow.app_rate) else { return };
        let Some(end) = app.write_due(now) else { return };
        sender.app_wrote(now, end, &mut self.out);
        if let Some(t) = app.next_write().filter(|&t| t < self.end) {
            self.events.schedule(t, Event::AppWrite(f));
        }
        self.transmit_from_sender(f);
    }
}
