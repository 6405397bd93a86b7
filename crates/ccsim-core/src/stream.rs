//! Streaming (UDP-like) traffic: a constant-bit-rate source and a VoIP source with optional on/off
//! talk spurts, and the receiver that measures what a streaming application sees: per-packet one-way
//! delay, interarrival jitter (RFC 3550 section 6.4.1) and loss.

use std::time::Duration;

use ccsim_cc::{Rng, Time};

use crate::histogram::Histogram;
use crate::packet::Packet;

/// How a stream emits packets.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamPattern {
    /// One packet of `payload_bytes` every `interval`.
    Constant { interval: Duration },
    /// Talk spurts: exponential on and off periods (Brady's two-state model); packets every
    /// `interval` while on.
    OnOff { interval: Duration, mean_on: Duration, mean_off: Duration },
}

/// The sending side of a stream.
#[derive(Clone, Debug)]
pub struct StreamSource {
    flow: u32,
    payload_bytes: u32,
    header_bytes: u32,
    pattern: StreamPattern,
    rng: Rng,
    next_seq: u64,
    /// End of the current talk spurt (on/off pattern).
    spurt_end: Time,
    pub packets_sent: u64,
    pub wire_bytes_sent: u64,
}

impl StreamSource {
    pub fn new(flow: u32, payload_bytes: u32, header_bytes: u32, pattern: StreamPattern, rng: Rng) -> StreamSource {
        StreamSource { flow, payload_bytes, header_bytes, pattern, rng, next_seq: 0, spurt_end: Time::ZERO, packets_sent: 0, wire_bytes_sent: 0 }
    }

    pub fn payload_sent(&self) -> u64 {
        self.packets_sent * self.payload_bytes as u64
    }

    /// Called when the source starts: returns the time of the first packet.
    pub fn start(&mut self, now: Time) -> Time {
        match self.pattern {
            StreamPattern::Constant { .. } => now,
            StreamPattern::OnOff { mean_on, .. } => {
                self.spurt_end = now + exp_duration(&mut self.rng, mean_on);
                now
            }
        }
    }

    /// Emits the packet due now and returns it with the time of the next one.
    pub fn emit(&mut self, now: Time) -> (Packet, Time) {
        // Sequence numbers count packets (payload offsets would hide the packet boundaries).
        let mut pkt = Packet::data(self.flow, self.next_seq, self.payload_bytes, self.header_bytes, now, false);
        pkt.seq = self.next_seq;
        self.next_seq += 1;
        self.packets_sent += 1;
        self.wire_bytes_sent += pkt.wire_bytes as u64;
        let next = match self.pattern {
            StreamPattern::Constant { interval } => now + interval,
            StreamPattern::OnOff { interval, mean_on, mean_off } => {
                let next = now + interval;
                if next < self.spurt_end {
                    next
                } else {
                    // Silence, then a new spurt.
                    let resume = self.spurt_end + exp_duration(&mut self.rng, mean_off);
                    self.spurt_end = resume + exp_duration(&mut self.rng, mean_on);
                    resume.max(next)
                }
            }
        };
        (pkt, next)
    }
}

fn exp_duration(rng: &mut Rng, mean: Duration) -> Duration {
    Duration::from_nanos(rng.exponential(mean.as_nanos() as f64).round() as u64)
}

/// Counters of a stream receiver over one sampling interval.
#[derive(Clone, Debug, Default)]
pub struct SinkInterval {
    pub packets: u64,
    pub payload_bytes: u64,
    pub owd_sum_ns: u128,
    pub owd_max_ns: u64,
}

/// The receiving side: one-way delay, RFC 3550 jitter, loss by sequence number.
#[derive(Clone, Debug, Default)]
pub struct StreamSink {
    pub received: u64,
    pub payload_bytes: u64,
    /// Highest sequence number received plus one (packets below it not received are lost).
    pub expected: u64,
    /// RFC 3550 interarrival jitter J, in nanoseconds (kept as f64 like the RFC's estimator).
    pub jitter_ns: f64,
    last_transit_ns: Option<i128>,
    pub interval: SinkInterval,
    /// One-way delays of packets received inside the summary window.
    pub owd_hist: Histogram,
    pub window_received: u64,
    pub window_expected_start: Option<u64>,
}

impl StreamSink {
    /// Records an arriving packet (its `tx_time` is the send time, `seq` its packet number).
    pub fn on_packet(&mut self, now: Time, pkt: &Packet, in_window: bool) {
        let owd = now.0.saturating_sub(pkt.tx_time.0);
        self.received += 1;
        self.payload_bytes += pkt.len as u64;
        self.expected = self.expected.max(pkt.seq + 1);
        // RFC 3550 6.4.1: D(i-1, i) = (R_i - R_{i-1}) - (S_i - S_{i-1}) = transit_i - transit_{i-1};
        // J += (|D| - J) / 16. Packets are taken in arrival order, as the RFC specifies.
        let transit = now.0 as i128 - pkt.tx_time.0 as i128;
        if let Some(prev) = self.last_transit_ns {
            let d = (transit - prev).abs() as f64;
            self.jitter_ns += (d - self.jitter_ns) / 16.0;
        }
        self.last_transit_ns = Some(transit);
        self.interval.packets += 1;
        self.interval.payload_bytes += pkt.len as u64;
        self.interval.owd_sum_ns += owd as u128;
        self.interval.owd_max_ns = self.interval.owd_max_ns.max(owd);
        if in_window {
            self.owd_hist.record(owd);
            self.window_received += 1;
        }
    }

    /// Packets known lost: sent before the highest one received, never received.
    pub fn lost(&self) -> u64 {
        self.expected.saturating_sub(self.received)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(seq: u64, sent_ms: u64) -> Packet {
        let mut p = Packet::data(0, seq, 160, 40, Time::from_millis(sent_ms), false);
        p.seq = seq;
        p
    }

    #[test]
    fn jitter_and_delay_follow_rfc3550_by_hand() {
        // Packets sent every 20 ms; one-way delays 50, 60, 55, 55 ms.
        // transit differences |D|: 10, 5, 0 ms.
        // J1 = 0 + (10 - 0)/16 = 0.625; J2 = 0.625 + (5 - 0.625)/16 = 0.8984375;
        // J3 = 0.8984375 + (0 - 0.8984375)/16 = 0.84228515625 ms.
        let mut s = StreamSink::default();
        for (i, owd) in [50u64, 60, 55, 55].iter().enumerate() {
            let sent = 20 * i as u64;
            s.on_packet(Time::from_millis(sent + owd), &pkt(i as u64, sent), true);
        }
        assert!((s.jitter_ns / 1e6 - 0.842_285_156_25).abs() < 1e-9, "{}", s.jitter_ns / 1e6);
        assert_eq!(s.interval.owd_max_ns, 60_000_000);
        assert_eq!(s.interval.owd_sum_ns, 220_000_000);
        assert_eq!(s.lost(), 0);
    }

    #[test]
    fn a_gap_in_sequence_numbers_is_loss() {
        let mut s = StreamSink::default();
        for seq in [0u64, 1, 3, 4, 7] {
            s.on_packet(Time::from_millis(100 + seq), &pkt(seq, seq), false);
        }
        assert_eq!(s.expected, 8);
        assert_eq!(s.lost(), 3);
    }

    #[test]
    fn constant_source_spaces_packets_and_onoff_source_pauses() {
        let mut c = StreamSource::new(0, 160, 40, StreamPattern::Constant { interval: Duration::from_millis(20) }, Rng::new(1, 1));
        let t0 = c.start(Time::ZERO);
        let (p, t1) = c.emit(t0);
        assert_eq!((p.seq, p.wire_bytes, t1), (0, 200, Time::from_millis(20)));
        let pattern = StreamPattern::OnOff {
            interval: Duration::from_millis(20),
            mean_on: Duration::from_millis(1000),
            mean_off: Duration::from_millis(1350),
        };
        let mut v = StreamSource::new(0, 160, 40, pattern, Rng::new(1, 2));
        let mut t = v.start(Time::ZERO);
        let mut gaps = 0;
        for _ in 0..2000 {
            let (_, next) = v.emit(t);
            if next - t > Duration::from_millis(20) {
                gaps += 1;
            }
            t = next;
        }
        // 2000 packets = 40 s of talk: about 40 spurts of mean 1 s, each followed by a silence.
        assert!((20..70).contains(&gaps), "{gaps} silences");
        // Talk fraction about 1 / (1 + 1.35) = 0.43 of the elapsed time.
        let fraction = 2000.0 * 0.020 / t.as_secs_f64();
        assert!((0.33..0.53).contains(&fraction), "talk fraction {fraction}");
    }
}
