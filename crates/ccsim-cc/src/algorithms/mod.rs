//! One module per algorithm. Register a new one in `registry.rs` (`builtin_algorithms!`). Each module's
//! doc comment names its BPF twin in `python/ccsim/kernel/bpf/` when it has one, and the twin names the
//! module (`tests/test_kernel.py` checks both).

pub mod newreno;
pub mod loss_interval;
pub mod pert;
pub mod mpert;
pub mod binomial;
pub mod delay_probability;
pub mod hd;
pub mod chd;
pub mod rate_estimators;
pub mod westwood;
pub mod tcp_limit;
pub mod htcp_increase;
pub mod htcp;
pub mod delay_aimd;
pub mod linux_cong;
pub mod cubic;
pub mod vegas;
pub mod bbr;
