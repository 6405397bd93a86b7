//! One module per algorithm. Register a new one in `registry.rs` (`builtin_algorithms!`).

pub mod newreno;
pub mod loss_interval;
pub mod pert;
pub mod mpert;
pub mod binomial;
pub mod delay_probability;
pub mod hd;
pub mod chd;
