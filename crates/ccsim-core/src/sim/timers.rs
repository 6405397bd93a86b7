//! The TCP timer events. Timers are lazy: the sender and receiver move their deadlines freely; the
//! loop keeps one event at or before each deadline and, when it fires, re-arms or acts as due.

use ccsim_cc::Time;

use crate::event::Event;
use crate::sim::flow::App;
use crate::sim::Simulation;

impl Simulation {
    /// Puts the sender's new packets on its first link and keeps its RTO timer event in place.
    pub(super) fn transmit_from_sender(&mut self, f: u32) {
        if let Some(host) = &mut self.flows[f as usize].host {
            for pkt in &self.out {
                if let Some(t) = host.hold(self.now, pkt) {
                    self.events.schedule(t, Event::HostDepart(f));
                }
            }
        } else {
            // A new segment is at hop 0: the first link of the forward route, looked up once.
            let first = self.flows[f as usize].route.forward[0];
            for i in 0..self.out.len() {
                let pkt = self.out[i];
                debug_assert_eq!(pkt.hop, 0);
                self.enqueue_on_link(first, pkt);
            }
        }
        self.out.clear();
        let flow = &mut self.flows[f as usize];
        let App::Tcp { sender, .. } = &flow.app else { return };
        if let Some(d) = sender.timer_deadline() {
            if needs_event(&mut flow.timers.rto_scheduled, d) {
                self.events.schedule(d, Event::RtoTimer(f));
            }
        }
        if let Some(d) = sender.pacing_deadline() {
            if needs_event(&mut flow.timers.pace_scheduled, d) {
                self.events.schedule(d, Event::PaceTimer(f));
            }
        }
    }

    /// A paced sender's pacing clock may allow its next segment (the event may be stale).
    #[inline(never)] // only paced senders have them
    pub(super) fn on_pace_timer(&mut self, f: u32) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        if flow.timers.pace_scheduled == Some(now) {
            flow.timers.pace_scheduled = None;
        }
        let App::Tcp { sender, .. } = &mut flow.app else { return };
        sender.on_pacing_timer(now, &mut self.out);
        self.transmit_from_sender(f);
    }

    /// The segments due to leave flow `f`'s host go to its access link; one event for the next.
    pub(super) fn on_host_depart(&mut self, f: u32) {
        let now = self.now;
        // A segment in its host is at hop 0: the first link of the forward route, looked up once.
        let first = self.flows[f as usize].route.forward[0];
        while let Some(pkt) = self.flows[f as usize].host.as_mut().and_then(|h| h.release(now)) {
            debug_assert_eq!(pkt.hop, 0);
            self.enqueue_on_link(first, pkt);
        }
        if let Some(t) = self.flows[f as usize].host.as_ref().and_then(|h| h.next_departure()) {
            self.events.schedule(t, Event::HostDepart(f));
        }
    }

    #[inline(always)]
    pub(super) fn sync_delack_timer(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        let App::Tcp { receiver, .. } = &flow.app else { return };
        if let Some(d) = receiver.delack_deadline() {
            if needs_event(&mut flow.timers.delack_scheduled, d) {
                self.events.schedule(d, Event::DelayedAck(f as u32));
            }
        }
    }

    /// The event may be stale (the deadline moved); re-arm or fire as due. The sender's
    /// retransmission timer carries the RTO and, with RACK-TLP, the probe and reordering timeouts.
    #[inline(never)] // rare next to packet deliveries: kept out of the event loop
    pub(super) fn on_rto_timer(&mut self, f: u32) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        if flow.timers.rto_scheduled == Some(now) {
            flow.timers.rto_scheduled = None;
        }
        let App::Tcp { sender, .. } = &mut flow.app else { return };
        match sender.timer_deadline() {
            Some(d) if d <= now => {
                sender.on_timer(now, &mut self.out);
                self.transmit_from_sender(f);
            }
            Some(d) => {
                if needs_event(&mut flow.timers.rto_scheduled, d) {
                    self.events.schedule(d, Event::RtoTimer(f));
                }
            }
            None => {}
        }
    }

    #[inline(never)] // rare next to packet deliveries: kept out of the event loop
    pub(super) fn on_delack_timer(&mut self, f: u32) {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        if flow.timers.delack_scheduled == Some(now) {
            flow.timers.delack_scheduled = None;
        }
        let App::Tcp { receiver, .. } = &mut flow.app else { return };
        if let Some(ack) = receiver.on_delack_timer(now, &mut self.sacks) {
            self.enqueue_on_route(ack);
        }
        self.sync_delack_timer(f as usize);
    }
}

/// True if deadline `d` needs a new event: none is scheduled at or before it. Notes `d` as scheduled.
fn needs_event(scheduled: &mut Option<Time>, d: Time) -> bool {
    if scheduled.map_or(true, |s| s > d) {
        *scheduled = Some(d);
        true
    } else {
        false
    }
}
