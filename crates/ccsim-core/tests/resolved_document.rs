//! The resolved document is complete: a whole document builds a run, a document with a field left
//! out is refused naming that field, and the checked-in JSON Schema matches the types.

mod common;
use common::*;

use ccsim_core::{Scenario, SimError, Simulation};
use serde_json::Value;

fn single() -> Value {
    complete(&with_flows(dumbbell(10_000_000, 20 * MS, 84, 0.0, 2 * S), vec![flow("newreno", 0, 2 * S)]))
}

fn refused(doc: &Value) -> String {
    match Scenario::from_json(&doc.to_string()).and_then(|s| Simulation::new(s, 1).map(drop)) {
        Err(SimError::Scenario { field, .. }) => field,
        Err(e) => panic!("not a scenario error: {e}"),
        Ok(()) => panic!("accepted: {doc}"),
    }
}

#[test]
fn a_complete_document_builds_a_run() {
    let doc = single();
    let out = Simulation::new(Scenario::from_json(&doc.to_string()).unwrap(), 1).unwrap().finish().unwrap();
    assert!(summary(&out, "total_goodput_bps") > 8e6);
}

#[test]
fn a_document_with_a_field_left_out_is_refused_naming_it() {
    for (path, field) in [
        (&["duration_ns"][..], "duration_ns"),
        (&["topology", "reverse"][..], "topology.reverse"),
        (&["topology", "access_queue"][..], "topology.access_queue"),
        (&["topology", "reverse_access_queue"][..], "topology.reverse_access_queue"),
        // Inside a `kind`-tagged object serde reports the path up to that object, then the key.
        (&["topology", "bottleneck", "loss_rate"][..], "topology.loss_rate"),
        (&["flows", "0", "name"][..], "flows[0].name"),
        (&["flows", "0", "traffic", "tcp", "sack"][..], "flows[0].traffic.sack"),
        (&["flows", "0", "traffic", "transfer"][..], "flows[0].traffic.transfer"),
        (&["flows", "0", "traffic", "params"][..], "flows[0].traffic.params"),
    ] {
        let mut doc = single();
        let mut node = &mut doc;
        for key in &path[..path.len() - 1] {
            node = match key.parse::<usize>() {
                Ok(i) => &mut node[i],
                Err(_) => &mut node[*key],
            };
        }
        node.as_object_mut().unwrap().remove(path[path.len() - 1]).expect("the field exists");
        assert_eq!(refused(&doc), field, "removing {path:?}");
    }
}

#[test]
fn an_unknown_field_or_format_version_is_refused() {
    let mut doc = single();
    doc["flows"][0]["traffic"]["tcp"]["sack_permitted"] = Value::Bool(true);
    assert_eq!(refused(&doc), "flows[0].traffic.sack_permitted");
    let mut doc = single();
    doc["ccsim_resolved"] = Value::from(ccsim_core::scenario::RESOLVED_FORMAT + 1);
    assert_eq!(refused(&doc), "ccsim_resolved");
    let mut doc = single();
    doc["flows"][0]["traffic"]["tcp"] = Value::Null;
    assert_eq!(refused(&doc), "flows[0].traffic");
}

#[test]
fn every_access_queue_is_finite() {
    for key in ["access_queue", "reverse_access_queue"] {
        let mut doc = single();
        doc["topology"][key] = serde_json::json!({"kind": "droptail", "limit": {"pkts": 0}});
        assert_eq!(refused(&doc), format!("topology.{key}"));
    }
}

#[test]
fn the_checked_in_json_schema_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/resolved-scenario.schema.json");
    let on_disk = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        on_disk == ccsim_core::scenario::resolved_schema_json(),
        "docs/resolved-scenario.schema.json is stale; regenerate with: \
         cargo run -q -p ccsim-core --example resolved_schema > docs/resolved-scenario.schema.json"
    );
}
