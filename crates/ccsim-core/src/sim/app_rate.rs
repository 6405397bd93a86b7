//! A rate-limited application: it writes payload into its TCP connection at `rate_bps`, one
//! segment at a time, so the flow can be held below the rate its path would give it (an
//! application-limited sender, RFC 7661's "rate-limited traffic").
//!
//! While active the application writes one segment at the start of each interval and then one
//! whenever the payload rate allows: the k-th further segment at `start + k * mss * 8 / rate_bps`
//! (computed from the interval's start, so rounding never drifts). Data it has written but the
//! connection has not sent when the interval ends is dropped, as for every flow that stops (the
//! application offers no new data after its stop). Whole segments only: the sender has no Nagle
//! (RFC 896) or autocorking to coalesce small writes, so writing bytes as they accrue would send
//! tiny segments.
//!
//! What the sender does with cwnd while application-limited is the machine's rule for every flow:
//! the window grows only on ACKs that find the sender cwnd-limited (Linux `tcp_is_cwnd_limited`
//! in congestion avoidance) and is never decayed (no RFC 2861 / Linux `tcp_cwnd_application_limited`
//! decay, no RFC 7661 non-validated-phase rules); after an idle period longer than the RTO the
//! window restarts (RFC 5681 section 4.1), as when an on/off flow resumes. docs/choices.md compares
//! this with FreeBSD, Linux and RFC 7661. The events that drive it are handled in `traffic.rs`.

use std::time::Duration;

use ccsim_cc::Time;

/// The writing state of one rate-limited application.
pub(crate) struct RateLimitedApp {
    rate_bps: u64,
    /// Bytes per write: the connection's MSS.
    chunk: u64,
    /// A finite transfer's size: nothing is written beyond it.
    transfer: Option<u64>,
    /// Sequence number up to which data has been written.
    written: u64,
    /// Start of the current active interval and the writes made in it after the first.
    interval_start: Time,
    writes: u64,
    /// When the next write is due; `None` while inactive or when everything is written.
    next: Option<Time>,
}

impl RateLimitedApp {
    pub fn new(rate_bps: u64, mss: u64, transfer: Option<u64>) -> RateLimitedApp {
        RateLimitedApp { rate_bps, chunk: mss, transfer, written: 0, interval_start: Time::ZERO, writes: 0, next: None }
    }

    /// What the application has written by the time the connection first starts (its first segment):
    /// the sender is built with this much data.
    pub fn first_write(&self) -> u64 {
        self.capped(self.chunk)
    }

    fn capped(&self, end: u64) -> u64 {
        self.transfer.map_or(end, |t| end.min(t))
    }

    fn due(&self, k: u64) -> Time {
        let ns = (k as u128 * self.chunk as u128 * 8 * 1_000_000_000).div_ceil(self.rate_bps as u128);
        self.interval_start + Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }

    /// An active interval starts at `now`; the connection has sent everything up to `snd_max`. The
    /// application writes its first segment and returns where its data now ends.
    pub fn begin(&mut self, now: Time, snd_max: u64) -> u64 {
        self.interval_start = now;
        self.writes = 0;
        self.written = self.capped(snd_max + self.chunk);
        self.schedule_next();
        self.written
    }

    /// The interval ends: no more writes.
    pub fn end(&mut self) {
        self.next = None;
    }

    fn schedule_next(&mut self) {
        let complete = self.transfer.is_some_and(|t| self.written >= t);
        self.next = if complete { None } else { Some(self.due(self.writes + 1)) };
    }

    /// The write due at `now`, if this event is the current one (a stale event from an earlier
    /// interval finds another deadline): returns where the data now ends.
    pub fn write_due(&mut self, now: Time) -> Option<u64> {
        if self.next != Some(now) {
            return None;
        }
        self.writes += 1;
        self.written = self.capped(self.written + self.chunk);
        self.schedule_next();
        Some(self.written)
    }

    pub fn next_write(&self) -> Option<Time> {
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_one_segment_at_the_start_then_at_the_payload_rate() {
        // 1000 B every 8 ms at 1 Mbit/s.
        let mut app = RateLimitedApp::new(1_000_000, 1000, None);
        assert_eq!(app.begin(Time::from_millis(100), 0), 1000);
        let mut times = Vec::new();
        while let Some(t) = app.next_write().filter(|&t| t <= Time::from_millis(124)) {
            assert!(app.write_due(t).is_some());
            times.push(t.as_secs_f64() * 1e3);
        }
        assert_eq!(times, vec![108.0, 116.0, 124.0]);
        assert_eq!(app.written, 4000);
        assert_eq!(app.write_due(Time::from_millis(130)), None, "not due: a stale event does nothing");
    }

    #[test]
    fn rounding_does_not_drift_and_a_finite_transfer_stops_the_writes() {
        // 1448 B at 3 Mbit/s: 3.861333 ms per write; the 300th is due at exactly 1158.4 ms.
        let mut app = RateLimitedApp::new(3_000_000, 1448, Some(1448 * 301));
        app.begin(Time::ZERO, 0);
        for _ in 0..299 {
            let t = app.next_write().unwrap();
            app.write_due(t).unwrap();
        }
        assert_eq!(app.next_write(), Some(Time(1_158_400_000)));
        app.write_due(Time(1_158_400_000)).unwrap();
        assert_eq!(app.written, 1448 * 301);
        assert_eq!(app.next_write(), None, "everything written");
    }

    #[test]
    fn a_resumed_interval_writes_after_what_was_sent() {
        let mut app = RateLimitedApp::new(1_000_000, 1000, None);
        app.begin(Time::ZERO, 0);
        app.write_due(Time::from_millis(8)).unwrap();
        app.end();
        assert_eq!(app.next_write(), None);
        // 2000 B written, 1000 B sent: the unsent write is dropped at the stop.
        assert_eq!(app.begin(Time::from_millis(50), 1000), 2000);
        assert_eq!(app.next_write(), Some(Time::from_millis(58)));
    }
}
