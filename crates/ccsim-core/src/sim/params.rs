//! A flow's algorithm parameters, from the scenario's JSON values to the algorithm's `ParamMap`.

use ccsim_cc::{ParamMap, ParamValue};

use crate::error::SimError;
use crate::scenario::FlowSpec;

pub(crate) fn to_param_map(flow_field: &str, spec: &FlowSpec) -> Result<ParamMap, SimError> {
    let mut map = ParamMap::new();
    for (k, v) in &spec.params {
        let value = match v {
            serde_json::Value::Bool(b) => ParamValue::Bool(*b),
            serde_json::Value::Number(n) => ParamValue::Number(n.as_f64().unwrap_or(f64::NAN)),
            serde_json::Value::String(s) => ParamValue::Text(s.clone()),
            other => return Err(SimError::scenario(format!("{flow_field}.params.{k}"), format!("unsupported value {other}"))),
        };
        map.insert(k.clone(), value);
    }
    Ok(map)
}
