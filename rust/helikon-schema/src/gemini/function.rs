//! The extra rules for Gemini function declarations (`parameters`).
use std::collections::HashSet;

use serde_json::{json, Map, Value};

use super::{permissive, Sanitizer};
use crate::error::SchemaError;

/// Fields of Gemini's `Schema` message that function declarations accept.
const SCHEMA_FIELDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "maxItems",
    "minItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "items",
    "minimum",
    "maximum",
];

/// Keep only Gemini `Schema` fields; `required` names only existing properties.
pub(super) fn restrict(mut out: Map<String, Value>) -> Value {
    out.retain(|k, _| SCHEMA_FIELDS.contains(&k.as_str()));
    let names: HashSet<String> = match out.get("properties") {
        Some(Value::Object(p)) => p.keys().cloned().collect(),
        _ => HashSet::new(),
    };
    if let Some(Value::Array(required)) = out.get_mut("required") {
        let mut seen = HashSet::new();
        required.retain(|r| {
            r.as_str()
                .is_some_and(|name| names.contains(name) && seen.insert(name.to_owned()))
        });
        if required.is_empty() {
            out.shift_remove("required");
        }
    } else {
        out.shift_remove("required");
    }
    Value::Object(out)
}

/// A `$ref`'s own `description` and `title` override the inlined target's.
pub(super) fn keep_ref_annotations(target: Value, node: &Map<String, Value>) -> Value {
    let Value::Object(mut t) = target else {
        return target;
    };
    for key in ["description", "title"] {
        if let Some(v @ Value::String(_)) = node.get(key) {
            t.insert(key.to_owned(), v.clone());
        }
    }
    Value::Object(t)
}

/// Merge one sanitized `allOf` member into the node: properties and required are unioned,
/// other keys fill in what the node lacks.
pub(super) fn merge_into(out: &mut Map<String, Value>, member: Map<String, Value>) {
    for (k, v) in member {
        match (k.as_str(), out.get_mut(&k), v) {
            ("properties", Some(Value::Object(props)), Value::Object(more)) => {
                for (name, schema) in more {
                    props.entry(name).or_insert(schema);
                }
            }
            ("required", Some(Value::Array(req)), Value::Array(more)) => {
                for name in more {
                    if !req.contains(&name) {
                        req.push(name);
                    }
                }
            }
            (_, Some(_), _) => {}
            (_, None, v) => {
                out.insert(k, v);
            }
        }
    }
}

impl<'a> Sanitizer<'a> {
    /// Tuple-form `items` (an array of schemas) become a union of the positions' schemas.
    pub(super) fn tuple_items(
        &mut self,
        list: &'a [Value],
        depth: usize,
    ) -> Result<Value, SchemaError> {
        let mut seen = HashSet::new();
        let mut members = Vec::new();
        for item in list {
            let s = self.node(item, depth + 1)?;
            if seen.insert(s.to_string()) {
                members.push(s);
            }
        }
        Ok(match members.len() {
            0 => permissive(),
            1 => members.pop().unwrap_or_else(permissive),
            _ => json!({ "anyOf": members }),
        })
    }
}
