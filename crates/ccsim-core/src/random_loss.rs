//! A link's random loss process (`LinkSpec::loss_model`), counted apart from queue drops:
//! independent (Bernoulli) losses with a probability that may change over time
//! (`loss_schedule.rs`, dummynet `plr`, netem `loss random`), or the Gilbert-Elliott model of bursty
//! loss (netem `loss gemodel`, Linux `loss_gilb_ell` in net/sched/sch_netem.c; Hasslinger and
//! Hohlfeld, "The Gilbert-Elliott model for packet loss in real time services on the Internet",
//! MMB 2008).
//!
//! Gilbert-Elliott: a two-state Markov chain advanced once per packet. In the good state a packet is
//! lost with `loss_good` (netem's 1-k), in the bad state with `loss_bad` (1-h); as netem does, the
//! state moves first (good to bad with `p_good_to_bad`, netem's p; bad to
//! good with `p_bad_to_good`, r) and the packet is lost with the probability of the state it was
//! in. The chain starts in the good state. Stationary loss rate:
//! (r * loss_good + p * loss_bad) / (p + r); with loss_good = 0 and loss_bad = 1 (the simple Gilbert
//! model) losses come in bursts of mean length 1 / r.

use ccsim_cc::{Rng, Time};

use crate::loss_schedule::LossSchedule;
use crate::scenario::LossModel;

/// The loss process of one link, with the time before which it cannot lose a packet (read on every
/// arrival: one comparison on a lossless link).
#[derive(Clone, Debug)]
pub struct LinkLoss {
    lossless_until: Time,
    process: LossProcess,
}

#[derive(Clone, Debug)]
enum LossProcess {
    Bernoulli(LossSchedule),
    GilbertElliott(GilbertElliott),
}

impl LinkLoss {
    /// Independent losses with the probabilities of `schedule`.
    pub fn bernoulli(schedule: LossSchedule) -> LinkLoss {
        LinkLoss { lossless_until: schedule.lossless_until(), process: LossProcess::Bernoulli(schedule) }
    }

    /// The process a link's `loss_model` asks for (`schedule` is its `loss_rate` and changes).
    pub fn new(model: &LossModel, schedule: LossSchedule) -> LinkLoss {
        match *model {
            LossModel::Bernoulli => LinkLoss::bernoulli(schedule),
            LossModel::GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good, loss_bad } => LinkLoss {
                lossless_until: if loss_good == 0.0 && loss_bad == 0.0 { Time(u64::MAX) } else { Time::ZERO },
                process: LossProcess::GilbertElliott(GilbertElliott { p_good_to_bad, p_bad_to_good, loss_good, loss_bad, bad: false }),
            },
        }
    }

    /// The link cannot lose a packet at `now` (arrivals come in non-decreasing time order).
    #[inline]
    pub fn lossless_at(&self, now: Time) -> bool {
        now < self.lossless_until
    }

    /// Whether the packet arriving at `now` is lost (asked when `lossless_at` is false).
    pub fn lost(&mut self, now: Time, rng: &mut Rng) -> bool {
        match &mut self.process {
            LossProcess::Bernoulli(schedule) => {
                let p = schedule.at(now);
                self.lossless_until = schedule.lossless_until();
                p > 0.0 && rng.bernoulli(p)
            }
            LossProcess::GilbertElliott(ge) => ge.lost(rng),
        }
    }
}

/// The Gilbert-Elliott chain of one link.
#[derive(Clone, Debug)]
pub struct GilbertElliott {
    p_good_to_bad: f64,
    p_bad_to_good: f64,
    loss_good: f64,
    loss_bad: f64,
    bad: bool,
}

impl GilbertElliott {
    /// One packet: the state moves, the packet is lost with the probability of the state it found.
    fn lost(&mut self, rng: &mut Rng) -> bool {
        let (move_p, loss_p) = if self.bad { (self.p_bad_to_good, self.loss_bad) } else { (self.p_good_to_bad, self.loss_good) };
        if rng.bernoulli(move_p) {
            self.bad = !self.bad;
        }
        loss_p > 0.0 && rng.bernoulli(loss_p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model's stationary loss rate and mean length of a run of consecutive losses, for the chain
    /// above (loss drawn in the state before the move): losses / run ends, where a run ends at a
    /// lost packet followed by a delivered one.
    fn model(p: f64, r: f64, lg: f64, lb: f64) -> (f64, f64) {
        let (pi_g, pi_b) = (r / (p + r), p / (p + r));
        let loss = pi_g * lg + pi_b * lb;
        let delivered_next = |from_bad: bool| if from_bad { r * (1.0 - lg) + (1.0 - r) * (1.0 - lb) } else { p * (1.0 - lb) + (1.0 - p) * (1.0 - lg) };
        let run_ends = pi_g * lg * delivered_next(false) + pi_b * lb * delivered_next(true);
        (loss, loss / run_ends)
    }

    fn measured(p: f64, r: f64, lg: f64, lb: f64, packets: u64) -> (f64, f64) {
        let model = LossModel::GilbertElliott { p_good_to_bad: p, p_bad_to_good: r, loss_good: lg, loss_bad: lb };
        let mut loss = LinkLoss::new(&model, LossSchedule::constant(0.0));
        let mut rng = Rng::new(7, 3);
        let (mut lost, mut runs, mut previous) = (0u64, 0u64, false);
        for _ in 0..packets {
            let l = !loss.lossless_at(Time::ZERO) && loss.lost(Time::ZERO, &mut rng);
            lost += l as u64;
            runs += (l && !previous) as u64;
            previous = l;
        }
        (lost as f64 / packets as f64, lost as f64 / runs as f64)
    }

    #[test]
    fn a_million_packets_give_the_models_loss_rate_and_burst_length_within_two_percent() {
        for (p, r, lg, lb) in [(0.01, 0.3, 0.0, 1.0), (0.005, 0.1, 0.001, 0.5), (0.05, 0.5, 0.0, 0.8)] {
            let (want_loss, want_burst) = model(p, r, lg, lb);
            let (loss, burst) = measured(p, r, lg, lb, 1_000_000);
            assert!((loss / want_loss - 1.0).abs() < 0.02, "p={p} r={r}: loss {loss} against {want_loss}");
            assert!((burst / want_burst - 1.0).abs() < 0.02, "p={p} r={r}: burst {burst} against {want_burst}");
        }
        // The simple Gilbert model: bursts of mean length 1 / r.
        let (_, burst) = model(0.01, 0.3, 0.0, 1.0);
        assert!((burst - 1.0 / 0.3).abs() < 1e-9);
    }

    #[test]
    fn a_bernoulli_link_stays_lossless_until_its_probability_rises() {
        let changes = [crate::scenario::LossChange { at_ns: 10, loss_rate: 0.5 }];
        let mut loss = LinkLoss::bernoulli(LossSchedule::new(0.0, &changes));
        assert!(loss.lossless_at(Time(9)));
        assert!(!loss.lossless_at(Time(10)));
        let mut rng = Rng::new(1, 1);
        let lost = (0..1000).filter(|_| loss.lost(Time(10), &mut rng)).count();
        assert!((400..600).contains(&lost), "{lost}");
    }
}
