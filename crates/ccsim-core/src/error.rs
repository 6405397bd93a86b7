//! Typed errors of the engine. Each names the scenario field (or the invariant) and the reason, so the
//! front end can print one line and exit with code 2.

use ccsim_cc::CcError;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SimError {
    /// A scenario value is invalid: `field` is a dotted path such as `flows[1].start_ns`.
    #[error("{field}: {reason}")]
    Scenario { field: String, reason: String },
    /// The end-of-run packet and byte accounting does not balance: a bug, never a warning.
    #[error("conservation check failed: {0}")]
    Conservation(String),
    /// Memory for what the scenario asks for could not be had (a fallible allocation failed): the run
    /// ends with this error instead of the process aborting. The text says what could not grow.
    #[error("out of memory: {0}")]
    Resources(String),
    /// The run reached a ceiling the front end set on what it may do (its events: `meter.rs`);
    /// `field` is the resolved field that drives most of them, as the estimate (`cost.rs`) says.
    #[error("{field}: {reason}")]
    Budget { field: String, reason: String },
}

impl SimError {
    pub fn scenario(field: impl Into<String>, reason: impl Into<String>) -> SimError {
        SimError::Scenario { field: field.into(), reason: reason.into() }
    }

    /// An algorithm construction error, reported against the flow's `params` (or `algorithm`).
    pub fn from_cc(flow_field: &str, e: CcError) -> SimError {
        match &e {
            CcError::UnknownAlgorithm { .. } => SimError::scenario(format!("{flow_field}.algorithm"), e.to_string()),
            CcError::UnknownParameter { name, .. } | CcError::InvalidParameter { name, .. } => {
                let reason = e.to_string();
                let reason = reason.split_once(": ").map(|(_, r)| r.to_string()).unwrap_or(reason);
                SimError::scenario(format!("{flow_field}.params.{name}"), reason)
            }
        }
    }
}
