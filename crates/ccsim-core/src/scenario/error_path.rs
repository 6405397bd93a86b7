//! Where in a resolved document a deserialization error is.
//!
//! serde reads a `kind`-tagged object (`Traffic`, `Topology`, `QueueSpec`, ...) into a buffer before it
//! knows the variant, and `serde_path_to_error` cannot follow it into that buffer
//! (dtolnay/path-to-error#1, serde-rs/serde#1621): a `u32` overflow in
//! `flows[0].traffic.tcp.abc_limit` is reported at `flows[0].traffic`, a missing
//! `topology.bottleneck.loss_rate` as `topology.loss_rate`. [`locate`] walks the document against the
//! JSON Schema of its own types ([`super::resolved_schema_json`]) below the reported path and returns
//! the path of the value (or key) that breaks it and that serde's message describes. Only the error
//! path runs this.

use serde_json::{Map, Value};

/// What is wrong at a path.
#[derive(Debug, PartialEq)]
enum Problem {
    /// A required key is missing (the path ends with it).
    Missing(String),
    /// A key the type does not have (the path ends with it).
    Unknown(String),
    /// The value at the path has the wrong type, range or variant.
    Value(Value),
}

#[derive(Debug)]
struct Violation {
    path: String,
    problem: Problem,
}

/// The path below `serde_path` (as `serde_path_to_error` prints it, `.` for the root) of the value
/// that serde's `message` is about, or None if the schema walk finds none that fits the message.
pub(crate) fn locate(text: &str, serde_path: &str, message: &str) -> Option<String> {
    let doc: Value = serde_json::from_str(text).ok()?;
    let schema: Value = serde_json::from_str(&super::resolved_schema_json()).ok()?;
    let walker = Walker { definitions: schema.get("definitions").and_then(Value::as_object)? };
    let under = if serde_path == "." { "" } else { serde_path };
    walker
        .violations(&schema, &doc, "")
        .into_iter()
        .filter(|v| is_under(&v.path, under))
        .find(|v| describes(message, &v.problem))
        .map(|v| v.path)
}

/// `path` is `prefix` or lies below it (`prefix.key`, `prefix[i]`).
fn is_under(path: &str, prefix: &str) -> bool {
    prefix.is_empty()
        || path.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with('.') || rest.starts_with('['))
}

/// serde's message names the same problem (its key in backticks, or the offending value).
fn describes(message: &str, problem: &Problem) -> bool {
    match problem {
        Problem::Missing(key) => message.starts_with("missing field") && message.contains(&format!("`{key}`")),
        Problem::Unknown(key) => message.starts_with("unknown field") && message.contains(&format!("`{key}`")),
        Problem::Value(value) => match value {
            // `unknown variant `zzz``, `invalid type: string "yes"`
            Value::String(s) => message.contains(&format!("`{s}`")) || message.contains(&format!("{s:?}")),
            // `invalid value: integer `-1``, `invalid type: floating point `1.5``, `boolean `true``
            Value::Number(n) => message.contains(&format!("`{n}`")),
            Value::Bool(b) => message.contains(&format!("`{b}`")),
            Value::Null => message.contains("null"),
            Value::Array(_) => message.contains("sequence"),
            Value::Object(_) => message.contains("map"),
        },
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

struct Walker<'a> {
    definitions: &'a Map<String, Value>,
}

impl Walker<'_> {
    /// Follows `$ref` (`#/definitions/Name`) to the schema it names.
    fn resolve<'s>(&'s self, mut schema: &'s Value) -> &'s Value {
        while let Some(name) = schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/definitions/")) {
            match self.definitions.get(name) {
                Some(s) => schema = s,
                None => break,
            }
        }
        schema
    }

    /// Every place where `node` (at `path`) breaks `schema`, in the order of the walk.
    fn violations(&self, schema: &Value, node: &Value, path: &str) -> Vec<Violation> {
        let schema = self.resolve(schema);
        let mut out = Vec::new();
        if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
            for s in all {
                out.extend(self.violations(s, node, path));
            }
        }
        if let Some(alternatives) = schema.get("oneOf").or_else(|| schema.get("anyOf")).and_then(Value::as_array) {
            out.extend(self.alternative_violations(alternatives, node, path));
            return out;
        }
        if !type_fits(schema, node) || schema.get("enum").and_then(Value::as_array).is_some_and(|e| !e.contains(node)) {
            out.push(Violation { path: path.to_string(), problem: Problem::Value(node.clone()) });
            return out;
        }
        match node {
            Value::Object(map) => {
                let properties = schema.get("properties").and_then(Value::as_object);
                for key in schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str) {
                    if !map.contains_key(key) {
                        out.push(Violation { path: join(path, key), problem: Problem::Missing(key.to_string()) });
                    }
                }
                for (key, value) in map {
                    match (properties.and_then(|p| p.get(key)), schema.get("additionalProperties")) {
                        (Some(s), _) => out.extend(self.violations(s, value, &join(path, key))),
                        (None, Some(Value::Bool(false))) => {
                            out.push(Violation { path: join(path, key), problem: Problem::Unknown(key.clone()) })
                        }
                        (None, Some(s @ Value::Object(_))) => out.extend(self.violations(s, value, &join(path, key))),
                        (None, _) => {}
                    }
                }
            }
            Value::Array(items) => {
                if let Some(s) = schema.get("items") {
                    for (i, item) in items.iter().enumerate() {
                        out.extend(self.violations(s, item, &format!("{path}[{i}]")));
                    }
                }
            }
            _ => {}
        }
        out
    }

    /// `oneOf`/`anyOf`: none if one alternative fits; else the violations of the alternative the
    /// node means (its `kind`, or the one whose keys it has), or the node itself.
    fn alternative_violations(&self, alternatives: &[Value], node: &Value, path: &str) -> Vec<Violation> {
        let mut tried = Vec::new();
        for alternative in alternatives {
            let v = self.violations(alternative, node, path);
            if v.is_empty() {
                return v;
            }
            tried.push(v);
        }
        if let Value::Object(map) = node {
            let kind_of = |a: &Value| {
                let a = self.resolve(a);
                a.pointer("/properties/kind/enum").and_then(Value::as_array).cloned().unwrap_or_default()
            };
            if let Some(kind) = map.get("kind") {
                if let Some(i) = alternatives.iter().position(|a| kind_of(a).contains(kind)) {
                    return tried.swap_remove(i);
                }
                if alternatives.iter().any(|a| !kind_of(a).is_empty()) {
                    return vec![Violation { path: join(path, "kind"), problem: Problem::Value(kind.clone()) }];
                }
            }
            // Externally tagged (`{"pkts": 84}`): the one alternative that has every key of the node.
            let has_keys = |a: &Value| {
                let props = self.resolve(a).get("properties").and_then(Value::as_object);
                props.is_some_and(|p| map.keys().all(|k| p.contains_key(k)))
            };
            let fitting: Vec<usize> = (0..alternatives.len()).filter(|&i| has_keys(&alternatives[i])).collect();
            if let [i] = fitting[..] {
                return tried.swap_remove(i);
            }
        }
        vec![Violation { path: path.to_string(), problem: Problem::Value(node.clone()) }]
    }
}

/// The node has the schema's `type` (one or a list), integers within their `format` and `minimum`.
fn type_fits(schema: &Value, node: &Value) -> bool {
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => return true,
    };
    types.iter().any(|t| match *t {
        "object" => node.is_object(),
        "array" => node.is_array(),
        "string" => node.is_string(),
        "boolean" => node.is_boolean(),
        "null" => node.is_null(),
        "number" => node.is_number(),
        "integer" => integer_fits(schema, node),
        _ => true,
    })
}

fn integer_fits(schema: &Value, node: &Value) -> bool {
    let value: i128 = match (node.as_u64(), node.as_i64()) {
        (Some(u), _) => u as i128,
        (None, Some(i)) => i as i128,
        _ => return false, // a fraction or an exponent: serde reads no integer from it
    };
    let (low, high): (i128, i128) = match schema.get("format").and_then(Value::as_str) {
        Some("uint8") => (0, u8::MAX as i128),
        Some("uint16") => (0, u16::MAX as i128),
        Some("uint32") => (0, u32::MAX as i128),
        Some("uint64") | Some("uint") => (0, u64::MAX as i128),
        Some("int8") => (i8::MIN as i128, i8::MAX as i128),
        Some("int16") => (i16::MIN as i128, i16::MAX as i128),
        Some("int32") => (i32::MIN as i128, i32::MAX as i128),
        _ => (i64::MIN as i128, u64::MAX as i128),
    };
    let minimum = schema.get("minimum").and_then(Value::as_f64).map_or(low, |m| low.max(m.ceil() as i128));
    (minimum..=high).contains(&value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_under_a_prefix_at_a_component_boundary() {
        assert!(is_under("flows[0].traffic.tcp", "flows[0].traffic"));
        assert!(is_under("flows[0].traffic", "flows[0].traffic"));
        assert!(is_under("flows[0]", ""));
        assert!(!is_under("flows[0].traffic_x", "flows[0].traffic"));
        assert!(!is_under("flows[10]", "flows[1]"));
    }

    #[test]
    fn integers_fit_their_format() {
        let u32_schema = serde_json::json!({"type": "integer", "format": "uint32", "minimum": 0.0});
        assert!(type_fits(&u32_schema, &Value::from(4_294_967_295u64)));
        assert!(!type_fits(&u32_schema, &Value::from(4_294_967_296u64)));
        assert!(!type_fits(&u32_schema, &Value::from(-1)));
        assert!(!type_fits(&u32_schema, &Value::from(1.5)));
        let u64_schema = serde_json::json!({"type": "integer", "format": "uint64", "minimum": 0.0});
        assert!(type_fits(&u64_schema, &Value::from(u64::MAX)));
    }

    #[test]
    fn the_message_must_describe_the_problem() {
        let p = Problem::Value(Value::from(9_223_372_036_854_775_807u64));
        assert!(describes("invalid value: integer `9223372036854775807`, expected u32", &p));
        assert!(!describes("invalid value: integer `3`, expected u32", &p));
        assert!(describes("invalid type: string \"yes\", expected a boolean", &Problem::Value(Value::from("yes"))));
        assert!(describes("missing field `sack`", &Problem::Missing("sack".into())));
        assert!(!describes("unknown field `sack`", &Problem::Missing("sack".into())));
    }
}
