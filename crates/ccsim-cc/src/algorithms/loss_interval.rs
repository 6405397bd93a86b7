//! # TFRC-style average event interval (RFC 5348 section 5.4), used by mPERT
//!
//! mPERT (Kotla & Reddy, IWQoS 2008, as summarised by Budzisz et al. 2009, Fig. 2 and section II)
//! estimates the packet loss rate `p` and the early-response (back-off) rate `p'` "as for TFRC": the
//! rate is the inverse of a weighted mean of the last n = 8 intervals between events, measured in
//! packets, with weights w_0..w_7 = 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2 (RFC 5348 section 5.4, the most
//! recent interval weighted 1).
//!
//! BPF twin (the Linux testbed, `docs/kernel.md`): `python/ccsim/kernel/bpf/loss_interval.h`.
//!
//! Rules implemented (RFC 5348 section 5.4, with k = number of closed intervals, k <= n):
//! * I_0 is the open interval: packets since the most recent event; I_1 .. I_k the closed intervals,
//!   most recent first.
//! * I_tot0 = sum_{i=0}^{k-1} I_i * w_i;  I_tot1 = sum_{i=1}^{k} I_i * w_{i-1};  W_tot = sum_{i=0}^{k-1} w_i.
//! * I_mean = max(I_tot0, I_tot1) / W_tot; rate = 1 / I_mean.
//!   (The max makes a long event-free open interval lower the rate, never raise it.)
//!
//! Differences from RFC 5348 (and why):
//! * The first interval is counted from the start of the connection (packets delivered before the
//!   first event), instead of TFRC's synthetic first interval derived from the receive rate: mPERT is
//!   a window-based sender with no receive-rate equation to invert. So a rate exists after the first
//!   event.
//! * Packets are counted as bytes acknowledged / MSS (real-valued), not as sequence numbers seen by
//!   a receiver; an "event" is whatever the owner records (a loss event, an early response).
//! * No rate exists before the first event ([`IntervalEstimator::mean_interval`] returns `None`), as
//!   RFC 5348 ("the receiver does not calculate an average loss interval" before the first loss).

/// TFRC weights for n = 8 intervals, w_0 (most recent) first (RFC 5348 section 5.4).
pub const TFRC_WEIGHTS: [f64; 8] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];

/// Weighted average of the intervals (in packets) between events, TFRC style.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IntervalEstimator {
    /// Closed intervals I_1..I_k, most recent first (only the first `closed` entries are valid).
    history: [f64; 8],
    closed: usize,
    /// The open interval I_0: packets since the most recent event (or since the start).
    open: f64,
    /// Events recorded so far.
    events: u64,
}

impl IntervalEstimator {
    pub fn new() -> IntervalEstimator {
        IntervalEstimator::default()
    }

    /// Counts `packets` more packets into the open interval (non-finite or negative input ignored).
    pub fn add_packets(&mut self, packets: f64) {
        if packets.is_finite() && packets > 0.0 {
            self.open = (self.open + packets).min(1e18);
        }
    }

    /// An event (a loss event, an early response) closes the open interval.
    pub fn on_event(&mut self) {
        self.history.copy_within(0..7, 1);
        self.history[0] = self.open;
        self.closed = (self.closed + 1).min(TFRC_WEIGHTS.len());
        self.open = 0.0;
        self.events = self.events.saturating_add(1);
    }

    pub fn events(&self) -> u64 {
        self.events
    }

    pub fn open_interval(&self) -> f64 {
        self.open
    }

    /// I_mean of RFC 5348 section 5.4 in packets, `None` before the first event.
    pub fn mean_interval(&self) -> Option<f64> {
        let k = self.closed;
        if k == 0 {
            return None;
        }
        let w = &TFRC_WEIGHTS;
        // I_i for i = 0..=k: I_0 = open, I_i = history[i - 1].
        let interval = |i: usize| if i == 0 { self.open } else { self.history[i - 1] };
        let w_tot: f64 = w[..k].iter().sum();
        let i_tot0: f64 = (0..k).map(|i| interval(i) * w[i]).sum();
        let i_tot1: f64 = (1..=k).map(|i| interval(i) * w[i - 1]).sum();
        Some(i_tot0.max(i_tot1) / w_tot)
    }

    /// Event rate per packet = 1 / I_mean; `None` before the first event, and `None` when the mean
    /// interval is zero (events with no packet in between: the rate is unbounded).
    pub fn rate(&self) -> Option<f64> {
        match self.mean_interval() {
            Some(m) if m > 0.0 => Some(1.0 / m),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_rate_before_the_first_event() {
        let mut e = IntervalEstimator::new();
        e.add_packets(100.0);
        assert_eq!(e.mean_interval(), None);
        assert_eq!(e.rate(), None);
    }

    #[test]
    fn one_closed_interval_gives_its_length_unless_the_open_one_is_longer() {
        let mut e = IntervalEstimator::new();
        e.add_packets(100.0);
        e.on_event();
        // k = 1: I_tot0 = I_0*w_0 = 0, I_tot1 = I_1*w_0 = 100, W_tot = 1 -> 100.
        assert_eq!(e.mean_interval(), Some(100.0));
        assert_eq!(e.rate(), Some(0.01));
        e.add_packets(250.0);
        // I_tot0 = 250 > I_tot1 = 100: the long open interval lowers the rate.
        assert_eq!(e.mean_interval(), Some(250.0));
    }

    #[test]
    fn weighted_average_over_eight_intervals_by_hand() {
        let mut e = IntervalEstimator::new();
        // Closed intervals, oldest first: 10, 20, ..., 90 (nine events; only the last 8 are kept).
        for i in 1..=9 {
            e.add_packets(10.0 * i as f64);
            e.on_event();
        }
        // Most recent first: I_1..I_8 = 90, 80, 70, 60, 50, 40, 30, 20 (10 has been dropped).
        // Open interval I_0 = 5.
        e.add_packets(5.0);
        // W_tot = 1+1+1+1+0.8+0.6+0.4+0.2 = 6.0
        // I_tot1 = 90*1 + 80*1 + 70*1 + 60*1 + 50*0.8 + 40*0.6 + 30*0.4 + 20*0.2
        //        = 300 + 40 + 24 + 12 + 4 = 380  -> 380/6 = 63.333...
        // I_tot0 = 5*1 + 90*1 + 80*1 + 70*1 + 60*0.8 + 50*0.6 + 40*0.4 + 30*0.2
        //        = 245 + 48 + 30 + 16 + 6 = 345 < 380
        let m = e.mean_interval().unwrap();
        assert!((m - 380.0 / 6.0).abs() < 1e-9, "{m}");
        let r = e.rate().unwrap();
        assert!((r - 6.0 / 380.0).abs() < 1e-12, "{r}");
        assert_eq!(e.events(), 9);
    }

    #[test]
    fn fewer_than_eight_intervals_use_the_first_weights() {
        let mut e = IntervalEstimator::new();
        for len in [40.0, 60.0, 20.0] {
            e.add_packets(len);
            e.on_event();
        }
        // k = 3, I_1..I_3 = 20, 60, 40; I_0 = 0. W_tot = 3.
        // I_tot1 = 20 + 60 + 40 = 120; I_tot0 = 0 + 20 + 60 = 80 -> 120/3 = 40.
        assert_eq!(e.mean_interval(), Some(40.0));
    }

    #[test]
    fn back_to_back_events_have_no_finite_rate() {
        let mut e = IntervalEstimator::new();
        e.on_event();
        assert_eq!(e.mean_interval(), Some(0.0));
        assert_eq!(e.rate(), None);
        e.add_packets(f64::NAN);
        e.add_packets(-3.0);
        assert_eq!(e.open_interval(), 0.0);
    }
}
