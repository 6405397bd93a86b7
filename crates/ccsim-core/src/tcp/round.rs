//! Rounds and RTT-sample filtering as FreeBSD's h_ertt module takes them (sys/netinet/khelp/h_ertt.c):
//! a round ends when the first segment sent after the previous round ended is acknowledged (the
//! marked packet); the round's smallest and largest RTT samples go to the algorithm with it; and
//! ACKs that were probably held by the receiver's delayed-ACK timer give no sample (their delay is
//! not path delay; see docs/choices.md).

use std::time::Duration;

use ccsim_cc::{RoundSample, Time};

/// Marked-packet round tracking and the delayed-ACK guess of one sender.
#[derive(Clone, Debug, Default)]
pub struct Rounds {
    marker: Option<u64>,
    index: u64,
    started: Time,
    delivered_at_start: u64,
    /// The round's largest and smallest RTT sample, in nanoseconds (compared on every ACK).
    max_rtt_ns: Option<u64>,
    min_rtt_ns: Option<u64>,
    /// h_ertt's delayed-ACK guess: up when an ACK covers more than one segment, down when it covers
    /// one; while non-zero, single-segment ACKs give the algorithm no RTT sample.
    dlyack_guess: u8,
}

impl Rounds {
    /// The first round starts with the connection.
    pub fn start(&mut self, now: Time) {
        self.started = now;
    }

    /// A segment ending at `seq_end` left: it marks the round if none is marked.
    #[inline]
    pub fn on_send(&mut self, seq_end: u64) {
        if self.marker.is_none() {
            self.marker = Some(seq_end);
        }
    }

    /// Whether this ACK's RTT sample is to be withheld from the algorithm as probably delayed by the
    /// receiver (a single-segment ACK while the guess is up), updating the guess.
    #[inline]
    pub fn delayed_ack_suspected(&mut self, newly_acked: u64, newly_sacked: u64, mss: u64) -> bool {
        let held_back = newly_acked > 0 && newly_acked <= mss && newly_sacked == 0 && self.dlyack_guess > 0;
        if newly_acked > mss {
            self.dlyack_guess = (self.dlyack_guess + 1).min(5);
        } else if newly_acked > 0 {
            self.dlyack_guess = self.dlyack_guess.saturating_sub(1);
        }
        held_back
    }

    /// A sample of `n` nanoseconds given to the algorithm: the round's extremes.
    #[inline]
    pub fn observe(&mut self, n: u64) {
        self.max_rtt_ns = Some(self.max_rtt_ns.map_or(n, |m| m.max(n)));
        self.min_rtt_ns = Some(self.min_rtt_ns.map_or(n, |m| m.min(n)));
    }

    /// Whether snd_una has reached the marked segment.
    #[inline]
    pub fn ended_by(&self, snd_una: u64) -> bool {
        self.marker.is_some_and(|m| snd_una >= m)
    }

    /// Closes the round at `now` (with this ACK's sample `rtt`, the lifetime `min_rtt` and the bytes
    /// `delivered` so far) and starts the next one.
    pub fn close(&mut self, now: Time, rtt: Option<Duration>, min_rtt: Option<Duration>, delivered: u64) -> RoundSample {
        let r = RoundSample {
            now,
            index: self.index,
            rtt,
            max_rtt_in_round: self.max_rtt_ns.map(Duration::from_nanos),
            min_rtt_in_round: self.min_rtt_ns.map(Duration::from_nanos),
            min_rtt,
            // A timeout in the round clears the SACK scoreboard, which can take `delivered` (snd_una
            // plus SACKed) below the round's start: nothing counts as delivered then.
            delivered_bytes: delivered.saturating_sub(self.delivered_at_start),
            duration: now - self.started,
        };
        *self = Rounds { marker: None, index: self.index + 1, started: now, delivered_at_start: delivered, max_rtt_ns: None, min_rtt_ns: None, dlyack_guess: self.dlyack_guess };
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_ends_when_the_marked_segment_is_acknowledged() {
        let mut r = Rounds::default();
        r.start(Time::from_millis(0));
        r.on_send(1000);
        r.on_send(2000); // the marker stays on the first segment
        assert!(!r.ended_by(999));
        assert!(r.ended_by(1000));
        r.observe(40_000_000);
        r.observe(30_000_000);
        let s = r.close(Time::from_millis(40), None, None, 1000);
        assert_eq!((s.index, s.delivered_bytes), (0, 1000));
        assert_eq!(s.min_rtt_in_round, Some(Duration::from_millis(30)));
        assert_eq!(s.max_rtt_in_round, Some(Duration::from_millis(40)));
        assert!(!r.ended_by(5000), "no segment marks the next round until one is sent");
    }

    #[test]
    fn a_round_whose_sacked_data_a_timeout_forgot_delivered_nothing() {
        let mut r = Rounds::default();
        r.start(Time::from_millis(0));
        r.on_send(1000);
        r.close(Time::from_millis(40), None, None, 9000); // 8000 SACKed beyond snd_una 1000
        r.on_send(10_000);
        let s = r.close(Time::from_millis(80), None, None, 2000); // a timeout cleared the scoreboard
        assert_eq!(s.delivered_bytes, 0);
    }

    #[test]
    fn single_segment_acks_after_stretched_ones_are_suspected_delayed() {
        let mut r = Rounds::default();
        assert!(!r.delayed_ack_suspected(1000, 0, 1000), "no guess yet");
        assert!(!r.delayed_ack_suspected(2000, 0, 1000), "a two-segment ACK raises the guess");
        assert!(r.delayed_ack_suspected(1000, 0, 1000), "then a one-segment ACK is suspected (and lowers it)");
        assert!(!r.delayed_ack_suspected(1000, 0, 1000), "guess back at zero");
        assert!(!r.delayed_ack_suspected(2000, 0, 1000));
        assert!(!r.delayed_ack_suspected(1000, 500, 1000), "an ACK that SACKs is not held back");
    }
}
