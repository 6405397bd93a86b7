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
}

impl LossSchedule {
    /// The same probability for the whole run.
    pub fn constant(loss_rate: f64) -> LossSchedule {
        LossSchedule { current: loss_rate, changes: Vec::new(), next: 0 }
    }

    /// `initial` from time 0, then each change from its time on (`Scenario::validate` has checked
    /// that the times increase).
    pub fn new(initial: f64, changes: &[LossChange]) -> LossSchedule {
        LossSchedule { current: initial, changes: changes.iter().map(|c| (Time(c.at_ns), c.loss_rate)).collect(), next: 0 }
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
    fn a_lookup_may_skip_several_changes() {
        let changes = [LossChange { at_ns: 10, loss_rate: 0.1 }, LossChange { at_ns: 20, loss_rate: 0.2 }];
        let mut s = LossSchedule::new(0.0, &changes);
        assert_eq!(s.at(Time(25)), 0.2);
        assert_eq!(LossSchedule::constant(0.3).at(Time(u64::MAX)), 0.3);
    }
}
