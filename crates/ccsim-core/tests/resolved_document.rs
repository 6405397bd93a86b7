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
        // inside `kind`-tagged objects (serde alone stops at the object: scenario/error_path.rs)
        (&["topology", "bottleneck", "loss_rate"][..], "topology.bottleneck.loss_rate"),
        (&["flows", "0", "name"][..], "flows[0].name"),
        (&["flows", "0", "traffic", "tcp", "sack"][..], "flows[0].traffic.tcp.sack"),
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
    assert_eq!(refused(&doc), "flows[0].traffic.tcp.sack_permitted");
    let mut doc = single();
    doc["ccsim_resolved"] = Value::from(ccsim_core::scenario::RESOLVED_FORMAT + 1);
    assert_eq!(refused(&doc), "ccsim_resolved");
    let mut doc = single();
    doc["flows"][0]["traffic"]["tcp"] = Value::Null;
    assert_eq!(refused(&doc), "flows[0].traffic.tcp");
}

/// Refused naming `field`, the reason without the document's line and column.
fn refused_with_reason(doc: &Value) -> (String, String) {
    match Scenario::from_json(&doc.to_string()) {
        Err(SimError::Scenario { field, reason }) => (field, reason),
        other => panic!("not a scenario error: {other:?}"),
    }
}

#[test]
fn a_mistyped_value_inside_a_kind_tagged_object_is_named_by_its_own_path() {
    // issue 31: `tcp.abc = 2^63 - 1` was "flows[0].traffic: invalid value ... expected u32"
    let cases: Vec<(&[&str], Value, &str)> = vec![
        (&["flows", "0", "traffic", "tcp", "abc_limit"], Value::from(i64::MAX), "flows[0].traffic.tcp.abc_limit"),
        (&["flows", "0", "traffic", "tcp", "sack"], Value::from(3), "flows[0].traffic.tcp.sack"),
        (&["flows", "0", "traffic", "tcp", "sack"], Value::from("yes"), "flows[0].traffic.tcp.sack"),
        (&["flows", "0", "traffic", "tcp", "initial_ssthresh", "kind"], Value::from("zzz"), "flows[0].traffic.tcp.initial_ssthresh.kind"),
        (&["flows", "0", "traffic", "tcp", "rto_estimator"], Value::from("nope"), "flows[0].traffic.tcp.rto_estimator"),
        (&["flows", "0", "traffic", "transfer", "kind"], Value::from("some"), "flows[0].traffic.transfer.kind"),
        (&["topology", "bottleneck", "rate_bps"], Value::from(-1), "topology.bottleneck.rate_bps"),
        (&["topology", "bottleneck", "queue", "limit", "pkts"], Value::from(-1), "topology.bottleneck.queue.limit.pkts"),
        (&["topology", "reverse", "delay_ns"], Value::from(1.5), "topology.reverse.delay_ns"),
        (&["duration_ns"], Value::from(-1), "duration_ns"),
    ];
    for (path, value, field) in cases {
        let mut doc = single();
        let mut node = &mut doc;
        for key in path {
            node = match key.parse::<usize>() {
                Ok(i) => &mut node[i],
                Err(_) => &mut node[*key],
            };
        }
        *node = value.clone();
        let (got, reason) = refused_with_reason(&doc);
        assert_eq!(got, field, "{path:?} = {value}: {reason}");
        assert!(!reason.contains("line 1"), "{reason}");
    }
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
