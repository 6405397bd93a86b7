//! Simulated time: integer nanoseconds since the start of the run.
//!
//! Time is always passed in to an algorithm, never read from a clock (quinn-proto, smoltcp `Instant`),
//! so a run is a pure function of (scenario, seed). Intervals use `std::time::Duration`.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::time::Duration;

/// An instant of simulated time, in nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Time {
        Time(ns)
    }
    pub const fn from_millis(ms: u64) -> Time {
        Time(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Time {
        Time(s * 1_000_000_000)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Time elapsed since `earlier`, zero if `earlier` is later (never panics).
    pub fn saturating_since(self, earlier: Time) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    fn add(self, d: Duration) -> Time {
        Time(self.0.saturating_add(d.as_nanos() as u64))
    }
}

impl AddAssign<Duration> for Time {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub<Time> for Time {
    type Output = Duration;
    fn sub(self, earlier: Time) -> Duration {
        self.saturating_since(earlier)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.6}s", self.as_secs_f64())
    }
}
