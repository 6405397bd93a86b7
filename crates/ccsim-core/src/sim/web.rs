//! Web background traffic: a generator that starts finite TCP transfers at Poisson arrivals with
//! Pareto sizes, each a flow of its own on the generator's links.
//!
//! The transfers' algorithm is built once when the simulation is built ([`TransferFactory::new`]),
//! so a bad algorithm or parameter is a scenario error before the run starts. Each arrival builds
//! its own controller (it has its own random stream); should that build fail anyway, the error ends
//! the run (`Simulation::run_until` returns it) instead of the transfer being skipped.

use std::time::Duration;

use ccsim_cc::{Cc, ParamMap, Rng, Time};

use crate::error::SimError;
use crate::scenario::{FlowSpec, TcpConfig};
use crate::sim::params::{controller, to_param_map};
use crate::topology;

/// A web generator's state: its random stream (arrivals and sizes) and how many it has started.
pub(crate) struct WebGenerator {
    pub rng: Rng,
    pub active: bool,
    pub spawned: u64,
    /// Transfers started per second (Poisson), mean size and Pareto shape of their sizes.
    pub arrival_rate: f64,
    pub size_mean_bytes: u64,
    pub size_shape: f64,
    pub transfers: TransferFactory,
}

/// The transfers' algorithm and parameters, checked at construction.
pub(crate) struct TransferFactory {
    /// The generator's scenario field (`flows[i]`), for errors.
    field: String,
    pub(super) algorithm: String,
    params: ParamMap,
    /// The transfers' TCP settings (the generator's).
    pub(super) tcp: TcpConfig,
}

impl TransferFactory {
    /// Builds one controller for generator `i` of `spec` now, so that a bad algorithm or parameter
    /// is reported at construction, not at the first arrival.
    pub fn new(field: &str, i: usize, spec: &FlowSpec, seed: u64) -> Result<TransferFactory, SimError> {
        let Some((algorithm, params, tcp)) = spec.congestion_control() else {
            return Err(SimError::scenario(field, "web traffic needs an algorithm"));
        };
        let factory =
            TransferFactory { field: field.to_string(), algorithm: algorithm.to_string(), params: to_param_map(params), tcp: tcp.clone() };
        factory.build(Rng::new(seed, topology::streams::flow_cc(i)))?;
        Ok(factory)
    }

    /// The controller of one transfer, with the transfer's own random stream.
    pub fn build(&self, rng: Rng) -> Result<Cc, SimError> {
        controller(&self.field, &self.algorithm, &self.params, &self.tcp, rng)
    }
}

/// Time of the next arrival after `now`: exponential gaps at `arrival_rate` per second.
pub(crate) fn next_arrival(arrival_rate: f64, rng: &mut Rng, now: Time) -> Time {
    now + Duration::from_secs_f64(rng.exponential(1.0 / arrival_rate))
}

/// A transfer's size in bytes. Pareto sizes: x_m = mean (alpha - 1) / alpha, X = x_m U^(-1/alpha),
/// capped at 1000 means.
pub(crate) fn transfer_size(size_mean_bytes: u64, size_shape: f64, rng: &mut Rng) -> u64 {
    let (mean, alpha) = (size_mean_bytes as f64, size_shape);
    let u = 1.0 - rng.uniform(); // (0, 1]
    ((mean * (alpha - 1.0) / alpha) * u.powf(-1.0 / alpha)).min(1000.0 * mean).ceil().max(1.0) as u64
}
