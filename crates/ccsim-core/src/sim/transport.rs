//! Packets along their routes: from link to link, dropped with the cause counted, and handed to the
//! receiving end (data) or the sender (ACKs) after the last hop.

use crate::error::SimError;
use crate::event::Event;
use crate::link::Drop;
use crate::packet::{Packet, PacketKind};
use crate::sim::flow::App;
use crate::sim::Simulation;

impl Simulation {
    pub(super) fn on_link_deliver(&mut self, l: u32) {
        let in_window = self.in_window;
        let link = &mut self.links[l as usize];
        let mut pkt = link.deliver_head(self.now, in_window);
        if let Some(t) = link.head_arrival() {
            self.events.schedule(t, Event::LinkDeliver(l));
        }
        pkt.hop += 1;
        // The next hop read once from the route (its length and the link in one look-up).
        let route = &self.flows[pkt.flow as usize].route;
        let next = match pkt.kind {
            PacketKind::Data => route.forward.get(pkt.hop as usize),
            PacketKind::Ack => route.reverse.get(pkt.hop as usize),
        };
        if let Some(&next) = next {
            self.enqueue_on_link(next, pkt);
            return;
        }
        match pkt.kind {
            PacketKind::Data => self.deliver_data(pkt),
            PacketKind::Ack => self.deliver_ack(pkt),
        }
    }

    /// Puts `pkt` on the link of its next hop; a drop is counted against its flow.
    #[inline(never)]
    pub(super) fn enqueue_on_route(&mut self, pkt: Packet) {
        let route = &self.flows[pkt.flow as usize].route;
        let l = match pkt.kind {
            PacketKind::Data => route.forward[pkt.hop as usize],
            PacketKind::Ack => route.reverse[pkt.hop as usize],
        };
        self.enqueue_on_link(l, pkt);
    }

    /// Puts `pkt` on link `l` (the one of its hop).
    /// The common admission (`Link::enqueue_admitted`) here, the rest (growth, random loss, RED,
    /// drops) a call: a smaller function to enter for every packet.
    #[inline]
    pub(super) fn enqueue_on_link(&mut self, l: u32, pkt: Packet) {
        match self.links[l as usize].enqueue_admitted(self.now, &pkt) {
            Some(Some(t)) => self.events.schedule(t, Event::LinkDeliver(l)),
            Some(None) => {}
            None => self.enqueue_on_link_slow(l, pkt),
        }
    }

    #[inline(never)]
    fn enqueue_on_link_slow(&mut self, l: u32, pkt: Packet) {
        if !self.links[l as usize].try_reserve_one() {
            let link = &self.links[l as usize].name;
            let e = SimError::Resources(format!("the packets held by link {link} (its queue and its bandwidth-delay product)"));
            self.fail(e);
            return;
        }
        match self.links[l as usize].enqueue(self.now, pkt) {
            Ok(Some(t)) => self.events.schedule(t, Event::LinkDeliver(l)),
            Ok(None) => {}
            Err(why) => {
                let f = pkt.flow as usize;
                let c = &mut self.flows[f].counters;
                match why {
                    Drop::Queue => c.drops_queue += 1,
                    Drop::Random => c.drops_random += 1,
                }
                match pkt.kind {
                    PacketKind::Data => {
                        c.data_dropped_pkts += 1;
                        c.data_dropped_payload += pkt.len as u64;
                    }
                    PacketKind::Ack => {
                        c.acks_dropped += 1;
                        self.sacks.release(&pkt);
                    }
                }
                self.flows[f].release_if_finished();
            }
        }
    }

    fn deliver_data(&mut self, pkt: Packet) {
        let f = pkt.flow as usize;
        let now = self.now;
        let in_window = self.in_window;
        let flow = &mut self.flows[f];
        flow.counters.data_delivered_pkts += 1;
        flow.counters.data_delivered_payload += pkt.len as u64;
        let ack = match &mut flow.app {
            App::Tcp { receiver, .. } => {
                let ack = receiver.on_data(now, &pkt, flow.timers.delack_timeout, &mut self.sacks);
                let sched = &mut flow.schedule;
                if sched.completed_at.is_none() && sched.bytes.is_some_and(|b| receiver.rcv_nxt() >= b) {
                    sched.completed_at = Some(now);
                }
                ack
            }
            App::Stream { sink, .. } => {
                sink.on_packet(now, &pkt, in_window);
                None
            }
            App::Web(_) | App::Finished(_) => None, // a generator sends nothing itself; nothing reaches a finished transfer
        };
        if let Some(ack) = ack {
            // A new ACK is at hop 0: the first link of the reverse route.
            let first = self.flows[f].route.reverse[0];
            self.enqueue_on_link(first, ack);
        }
        self.sync_delack_timer(f);
        self.flows[f].release_if_finished();
    }

    fn deliver_ack(&mut self, pkt: Packet) {
        let f = pkt.flow as usize;
        let now = self.now;
        let in_window = self.in_window;
        let flow = &mut self.flows[f];
        flow.counters.acks_delivered += 1;
        let taken;
        let sack: &[(u64, u64)] = if pkt.n_sack > 0 {
            taken = self.sacks.take(&pkt);
            &taken[..pkt.n_sack as usize]
        } else {
            &[]
        };
        let App::Tcp { sender, .. } = &mut flow.app else { return };
        let rtt = sender.on_ack(now, &pkt, sack, &mut self.out);
        if let (Some(r), true) = (rtt, in_window) {
            flow.window.rtt_hist.record(r.as_nanos() as u64);
        }
        self.transmit_from_sender(f as u32);
        self.flows[f].release_if_finished();
    }
}
