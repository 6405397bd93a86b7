//! Packets on the wire. One struct for data segments and ACKs; it is `Copy` and moves through link
//! queues by value (no allocation per packet). An ACK's SACK blocks are kept out of line, in the
//! run's `SackStore`, so that every packet is 32 bytes: a packet is copied several times per hop
//! (out of one link's line, into the next), and data segments, most of the packets, never carry
//! SACK blocks.

use ccsim_cc::Time;

/// Maximum SACK blocks per ACK: 3 fit beside the 12-byte timestamp option (RFC 2018 section 3).
pub const MAX_SACK_BLOCKS: usize = 3;

/// The SACK blocks of one ACK, the first `n_sack` of them in use.
pub type SackBlocks = [(u64, u64); MAX_SACK_BLOCKS];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    Data,
    Ack,
}

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub flow: u32,
    pub kind: PacketKind,
    /// Index of the next link on the packet's route (forward route for data, reverse for ACKs).
    pub hop: u8,
    /// ACK: how many SACK blocks it carries (0 for data).
    pub n_sack: u8,
    /// Data: this segment is a retransmission. ACK: the segment whose send time is echoed was one.
    pub retx: bool,
    pub wire_bytes: u32,
    /// Data: payload bytes. ACK (no payload): with SACK blocks, their slot in the `SackStore`
    /// (`sack_slot`); 0 otherwise.
    pub len: u32,
    /// Data: first sequence number. ACK: cumulative acknowledgement (next byte expected).
    pub seq: u64,
    /// Data: send time. ACK: send time of the data segment that caused this ACK (timestamp echo).
    pub tx_time: Time,
}

impl Packet {
    pub fn data(flow: u32, seq: u64, len: u32, header: u32, now: Time, retx: bool) -> Packet {
        Packet { flow, kind: PacketKind::Data, hop: 0, n_sack: 0, retx, wire_bytes: len + header, len, seq, tx_time: now }
    }

    /// An ACK of everything below `cum`, echoing `echo` (send time, retransmission flag), with
    /// `sack` (at most `MAX_SACK_BLOCKS`) put in `store`.
    pub fn ack(flow: u32, cum: u64, echo: (Time, bool), sack: &[(u64, u64)], store: &mut SackStore) -> Packet {
        let n = sack.len().min(MAX_SACK_BLOCKS);
        let slot = if n > 0 { store.put(&sack[..n]) } else { 0 };
        Packet { flow, kind: PacketKind::Ack, hop: 0, n_sack: n as u8, retx: echo.1, wire_bytes: ack_wire_bytes(n), len: slot, seq: cum, tx_time: echo.0 }
    }

    /// The slot of an ACK's SACK blocks in the `SackStore`, if it carries any.
    pub fn sack_slot(&self) -> Option<u32> {
        (self.kind == PacketKind::Ack && self.n_sack > 0).then_some(self.len)
    }
}

/// The SACK blocks of the ACKs in flight, each in a slot from when its ACK is made until it is
/// delivered (`take`) or dropped (`release`). Freed slots are reused, so the store holds at most as
/// many as there have been SACK-carrying ACKs in flight at once.
#[derive(Debug, Default)]
pub struct SackStore {
    slots: Vec<SackBlocks>,
    free: Vec<u32>,
}

impl SackStore {
    #[inline(never)] // a quarter of the ACKs or fewer carry blocks: kept out of the ACK's path
    fn put(&mut self, sack: &[(u64, u64)]) -> u32 {
        // Block by block rather than a copy of a slice of unknown length (a `memcpy` call).
        let blocks: SackBlocks = std::array::from_fn(|i| sack.get(i).copied().unwrap_or((0, 0)));
        match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = blocks;
                slot
            }
            None => {
                self.slots.push(blocks);
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// The SACK blocks of `ack` (its first `n_sack`), freeing its slot.
    #[inline]
    pub fn take(&mut self, ack: &Packet) -> SackBlocks {
        match ack.sack_slot() {
            Some(slot) => {
                self.free.push(slot);
                self.slots[slot as usize]
            }
            None => [(0, 0); MAX_SACK_BLOCKS],
        }
    }

    /// Frees the slot of a dropped ACK's SACK blocks.
    pub fn release(&mut self, ack: &Packet) {
        if let Some(slot) = ack.sack_slot() {
            self.free.push(slot);
        }
    }
}

/// Wire size of an ACK: IP + TCP + timestamp option (52 B) plus the SACK option (2 + 8 per block,
/// padded with two NOPs to a multiple of 4).
pub fn ack_wire_bytes(n_sack: usize) -> u32 {
    if n_sack == 0 {
        52
    } else {
        52 + 4 + 8 * n_sack as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_is_32_bytes_and_an_ack_keeps_its_sack_blocks_in_the_store() {
        assert_eq!(std::mem::size_of::<Packet>(), 32);
        let mut store = SackStore::default();
        let plain = Packet::ack(3, 1000, (Time(5), true), &[], &mut store);
        assert_eq!((plain.n_sack, plain.sack_slot(), plain.wire_bytes), (0, None, 52));
        let a = Packet::ack(3, 1000, (Time(5), true), &[(2000, 3000), (4000, 5000)], &mut store);
        let b = Packet::ack(4, 7000, (Time(6), false), &[(8000, 9000)], &mut store);
        assert_eq!((a.seq, a.tx_time, a.retx, a.n_sack, a.wire_bytes), (1000, Time(5), true, 2, 52 + 4 + 16));
        assert_ne!(a.sack_slot(), b.sack_slot());
        assert_eq!(store.take(&a)[..2], [(2000, 3000), (4000, 5000)]);
        // The freed slot is reused; the other ACK's blocks are untouched.
        let c = Packet::ack(5, 0, (Time(7), false), &[(1, 2), (3, 4), (5, 6), (7, 8)], &mut store);
        assert_eq!(c.sack_slot(), a.sack_slot());
        assert_eq!(c.n_sack as usize, MAX_SACK_BLOCKS);
        store.release(&b);
        let d = Packet::ack(6, 0, (Time(8), false), &[(10, 20)], &mut store);
        assert_eq!(d.sack_slot(), b.sack_slot());
        assert_eq!(store.take(&c), [(1, 2), (3, 4), (5, 6)]);
        assert_eq!(store.take(&d)[..1], [(10, 20)]);
        assert_eq!(store.take(&plain), [(0, 0); MAX_SACK_BLOCKS]);
    }
}
