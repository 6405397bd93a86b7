//! Packets on the wire. One struct for data segments and ACKs; it is `Copy` and moves through link
//! queues by value (no allocation per packet).

use ccsim_cc::Time;

/// Maximum SACK blocks per ACK: 3 fit beside the 12-byte timestamp option (RFC 2018 section 3).
pub const MAX_SACK_BLOCKS: usize = 3;

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
    pub n_sack: u8,
    /// Data: this segment is a retransmission. ACK: the segment whose send time is echoed was one.
    pub retx: bool,
    pub wire_bytes: u32,
    /// Payload bytes (0 for an ACK).
    pub len: u32,
    /// Data: first sequence number. ACK: cumulative acknowledgement (next byte expected).
    pub seq: u64,
    /// Data: send time. ACK: send time of the data segment that caused this ACK (timestamp echo).
    pub tx_time: Time,
    pub sack: [(u64, u64); MAX_SACK_BLOCKS],
}

impl Packet {
    pub fn data(flow: u32, seq: u64, len: u32, header: u32, now: Time, retx: bool) -> Packet {
        Packet {
            flow,
            kind: PacketKind::Data,
            hop: 0,
            n_sack: 0,
            retx,
            wire_bytes: len + header,
            len,
            seq,
            tx_time: now,
            sack: [(0, 0); MAX_SACK_BLOCKS],
        }
    }

    pub fn sack_blocks(&self) -> &[(u64, u64)] {
        &self.sack[..self.n_sack as usize]
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
