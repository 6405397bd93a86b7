//! One module per algorithm. Register a new one in `registry.rs` (`builtin_algorithms!`).

pub mod newreno;
