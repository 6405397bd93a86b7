//! A flow's algorithm parameters, from the resolved scenario's typed settings to the algorithm's `ParamMap`.

use std::collections::BTreeMap;

use ccsim_cc::{ParamMap, ParamValue};

use crate::scenario::ParamSetting;

pub(crate) fn to_param_map(params: &BTreeMap<String, ParamSetting>) -> ParamMap {
    params.iter().map(|(k, v)| (k.clone(), ParamValue::from(v))).collect()
}
