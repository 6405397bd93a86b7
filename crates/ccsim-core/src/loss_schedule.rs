//! A link's random loss probability over time: a step function, constant between changes (a loss
//! process that changes during a run, as a dummynet `plr` or netem `loss` changed by a script).

use ccsim_cc::Time;

use crate::scenario::LossChange;

/// The loss probability in force at each time. Lookups must come in non-decreasing time order (the
/// event loop's), so each is O(1) amortised.
#[derive(Clone, Debug)]
pub struct LossSchedule {
    current: f64,
    /// Changes not yet reached: (time, probability from then on), in time order.
    changes: Vec<(Time, f64)>,
    next: usize,
    /// Before this time the probability is 0 (no draw to make): the next change's time while the
    /// probability in force is 0, else `Time::ZERO`. One comparison per packet on a lossless link.
    lossless_until: Time,
}

impl LossSchedule {
    /// The same probability for the whole run.
    pub fn constant(loss_rate: f64) -> LossSchedule {
        LossSchedule::from_parts(loss_rate, Vec::new())
    }

    /// `initial` from time 0, then each change from its time on (`Scenario::validate` has checked
    /// that the times increase).
    pub fn new(initial: f64, changes: &[LossChange]) -> LossSchedule {
        LossSchedule::from_parts(initial, changes.iter().map(|c| (Time(c.at_ns), c.loss_rate)).collect())
    }

    fn from_parts(current: f64, changes: Vec<(Time, f64)>) -> LossSchedule {
        let mut s = LossSchedule { current, changes, next: 0, lossless_until: Time::ZERO };
        s.note_lossless_until();
        s
    }

    fn note_lossless_until(&mut self) {
        self.lossless_until = if self.current > 0.0 {
            Time::ZERO
        } else {
            self.changes.get(self.next).map_or(Time(u64::MAX), |&(t, _)| t)
        };
    }

    /// Before this time the probability is 0 (see the field).
    #[inline]
    pub fn lossless_until(&self) -> Time {
        self.lossless_until
    }

    /// The probability at `now` is 0 for certain; lookups in non-decreasing time order as for `at`
    /// (`false` says only that `at` must be asked).
    #[inline]
    pub fn lossless_at(&self, now: Time) -> bool {
        now < self.lossless_until
    }

    /// The probability at `now`; a change takes effect at its own time.
    pub fn at(&mut self, now: Time) -> f64 {
        while let Some(&(t, p)) = self.changes.get(self.next) {
            if t > now {
                break;
            }
            self.current = p;
            self.next += 1;
        }
        self.note_lossless_until();
        self.current
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_take_effect_at_their_own_time() {
        let changes = [LossChange { at_ns: 10, loss_rate: 0.01 }, LossChange { at_ns: 20, loss_rate: 0.0 }];
        let mut s = LossSchedule::new(0.5, &changes);
        let seen: Vec<f64> = [0, 9, 10, 15, 19, 20, 1000].iter().map(|&t| s.at(Time(t))).collect();
        assert_eq!(seen, vec![0.5, 0.5, 0.01, 0.01, 0.01, 0.0, 0.0]);
    }

    #[test]
    fn lossless_exactly_while_the_probability_is_zero() {
        let changes = [LossChange { at_ns: 10, loss_rate: 0.0 }, LossChange { at_ns: 20, loss_rate: 0.3 }, LossChange { at_ns: 30, loss_rate: 0.0 }];
        let mut s = LossSchedule::new(0.0, &changes);
        let mut seen = Vec::new();
        for t in [0, 5, 9, 10, 19, 20, 25, 29, 30, 1000] {
            // `at` is asked only when `lossless_at` cannot tell, as the link does
            let lossless = s.lossless_at(Time(t)) || s.at(Time(t)) == 0.0;
            seen.push(lossless);
        }
        assert_eq!(seen, vec![true, true, true, true, true, false, false, false, true, true]);
        assert!(!LossSchedule::constant(0.01).lossless_at(Time(0)));
        assert!(LossSchedule::constant(0.0).lossless_at(Time(u64::MAX - 1)));
    }

    #[test]
    fn a_lookup_may_skip_several_changes() {
        let changes = [LossChange { at_ns: 10, loss_rate: 0.1 }, LossChange { at_ns: 20, loss_rate: 0.2 }];
        let mut s = LossSchedule::new(0.0, &changes);
        assert_eq!(s.at(Time(25)), 0.2);
        assert_eq!(LossSchedule::constant(0.3).at(Time(u64::MAX)), 0.3);
    }
}
