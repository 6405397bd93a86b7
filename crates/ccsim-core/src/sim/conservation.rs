//! The end-of-run conservation check.

use crate::error::SimError;
use crate::link::Link;
use crate::packet::PacketKind;
use crate::sim::flow::{App, Flow};

/// Every packet sent is delivered, dropped, or still inside a link or its sending host; the same for payload bytes;
/// and the receiver never holds more in-order data than was sent.
pub(crate) fn check(flows: &[Flow], links: &[Link]) -> Result<(), SimError> {
    let mut inside_data = vec![(0u64, 0u64); flows.len()];
    let mut inside_acks = vec![0u64; flows.len()];
    for l in links {
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
    for (i, f) in flows.iter().enumerate() {
        for p in f.host.iter().flat_map(|h| h.held()) {
            inside_data[i].0 += 1;
            inside_data[i].1 += p.len as u64;
        }
    }
    for (i, f) in flows.iter().enumerate() {
        let (name, c) = (&f.id.name, &f.counters);
        let (sent_pkts, sent_payload, _) = f.sent();
        let accounted = c.data_delivered_pkts + c.data_dropped_pkts + inside_data[i].0;
        if sent_pkts != accounted {
            return Err(SimError::Conservation(format!(
                "flow {}: {} data packets sent but {} delivered + {} dropped + {} in flight = {}",
                name, sent_pkts, c.data_delivered_pkts, c.data_dropped_pkts, inside_data[i].0, accounted
            )));
        }
        let bytes = c.data_delivered_payload + c.data_dropped_payload + inside_data[i].1;
        if sent_payload != bytes {
            return Err(SimError::Conservation(format!("flow {name}: {sent_payload} payload bytes sent but {bytes} accounted for")));
        }
        let acks = c.acks_delivered + c.acks_dropped + inside_acks[i];
        if f.acks_sent() != acks {
            return Err(SimError::Conservation(format!("flow {}: {} ACKs sent but {} accounted for", name, f.acks_sent(), acks)));
        }
        let in_order = match &f.app {
            App::Tcp { sender, receiver } => Some((receiver.rcv_nxt(), sender.snd_max())),
            App::Finished(done) => Some((done.rcv_nxt, done.snd_max)),
            App::Stream { .. } | App::Web(_) => None,
        };
        if let Some((rcv_nxt, snd_max)) = in_order {
            if rcv_nxt > snd_max {
                return Err(SimError::Conservation(format!("flow {name}: receiver holds {rcv_nxt} bytes in order but only {snd_max} were sent")));
            }
        }
    }
    Ok(())
}
