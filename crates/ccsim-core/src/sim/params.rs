//! A flow's algorithm: the resolved scenario's typed parameter settings as the algorithm's `ParamMap`,
//! and the controller built from them.

use std::collections::BTreeMap;

use ccsim_cc::{Cc, ParamMap, ParamValue, Rng};

use crate::error::SimError;
use crate::scenario::{ParamSetting, TcpConfig};
use crate::tcp::Sender;

pub(crate) fn to_param_map(params: &BTreeMap<String, ParamSetting>) -> ParamMap {
    params.iter().map(|(k, v)| (k.clone(), ParamValue::from(v))).collect()
}

/// The controller of one connection; a bad algorithm or parameter is a scenario error naming `field`.
pub(crate) fn controller(field: &str, algorithm: &str, params: &ParamMap, tcp: &TcpConfig, rng: Rng) -> Result<Cc, SimError> {
    ccsim_cc::build(algorithm, params, &Sender::cc_init(tcp, rng)).map_err(|e| SimError::from_cc(field, e))
}
