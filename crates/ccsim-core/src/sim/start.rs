//! When each flow's application starts: its first interval begins at a time drawn per flow from the
//! run's seed when the scenario spreads the start (`FlowSpec::start_spread_ns`), as the binomial
//! paper starts its connections "at uniformly chosen random times in [0, 2] seconds" (Bansal &
//! Balakrishnan 2001, section 4). Each flow draws from its own random stream (as the access delays
//! of `topology::access_delays` do), so a run stays a pure function of scenario and seed and adding
//! a flow never moves another flow's start. Only the first interval moves; later intervals of an
//! on/off schedule keep their times.

use ccsim_cc::{Rng, Time};

use crate::scenario::FlowSpec;
use crate::topology;

/// The active intervals of flow `i`, the first one starting at its drawn time.
pub(crate) fn intervals(spec: &FlowSpec, i: usize, seed: u64) -> Vec<(Time, Time)> {
    let mut intervals: Vec<(Time, Time)> = spec.active_intervals().into_iter().map(|(a, b)| (Time(a), Time(b))).collect();
    if spec.start_spread_ns > 0 {
        let u = Rng::new(seed, topology::streams::flow_start(i)).uniform();
        // u in [0, 1): the start stays below start + spread, which `validate` keeps before the stop.
        let offset = ((spec.start_spread_ns as f64 * u) as u64).min(spec.start_spread_ns - 1);
        intervals[0].0 = Time(intervals[0].0 .0 + offset);
    }
    intervals
}
