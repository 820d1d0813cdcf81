//! Collapsing `oneOf`/`anyOf`/`allOf` into one flat object for Bedrock.
//!
//! Variants are rewritten first; non-object results are ignored. When every variant has a
//! `properties` map, the tag is the first property name of the first variant (sorted) that every
//! variant pins to one string (`const` or a one-element `enum`); it becomes a string enum of the
//! variants' values. Other properties are unioned in variant order.
use serde_json::{json, Map, Value};

use super::{permissive, Rewriter};
use crate::error::SchemaError;

impl<'a> Rewriter<'a> {
    pub(super) fn collapse(
        &mut self,
        variants: &'a [Value],
        depth: usize,
    ) -> Result<Value, SchemaError> {
        let mut objects: Vec<Map<String, Value>> = Vec::new();
        for variant in variants {
            if let Value::Object(m) = self.node(variant, depth + 1)? {
                objects.push(m);
            }
        }
        if objects.is_empty() {
            return Ok(permissive());
        }
        let props: Vec<Option<&Map<String, Value>>> = objects
            .iter()
            .map(|o| o.get("properties").and_then(Value::as_object))
            .collect();
        let tag = if props.iter().all(Option::is_some) {
            find_tag(&props)
        } else {
            None
        };
        let mut union = Map::new();
        for p in props.iter().flatten() {
            for (name, schema) in *p {
                if Some(name) == tag.as_ref().map(|(n, _)| n) {
                    if !union.contains_key(name) {
                        if let Some((_, values)) = &tag {
                            union.insert(name.clone(), json!({"type": "string", "enum": values}));
                        }
                    }
                    continue;
                }
                let merged = match union.get(name) {
                    None => schema.clone(),
                    Some(prev) => merge(prev, schema),
                };
                union.insert(name.clone(), merged);
            }
        }
        let mut out = Map::new();
        out.insert("type".into(), json!("object"));
        if !union.is_empty() {
            out.insert("properties".into(), Value::Object(union));
        }
        Ok(Value::Object(out))
    }
}

/// The tag property and its values in variant order, de-duplicated.
fn find_tag(props: &[Option<&Map<String, Value>>]) -> Option<(String, Vec<String>)> {
    let first = props.first().copied().flatten()?;
    let mut names: Vec<&String> = first.keys().collect();
    names.sort();
    'names: for name in names {
        let mut values: Vec<String> = Vec::new();
        for p in props {
            let Some(value) = p.and_then(|p| p.get(name)).and_then(pinned_string) else {
                continue 'names;
            };
            if !values.iter().any(|v| v == value) {
                values.push(value.to_owned());
            }
        }
        return Some((name.clone(), values));
    }
    None
}

/// The single string a property schema pins (`const: "x"` or `enum: ["x"]`).
fn pinned_string(schema: &Value) -> Option<&str> {
    if let Some(Value::String(s)) = schema.get("const") {
        return Some(s);
    }
    match schema.get("enum") {
        Some(Value::Array(values)) if values.len() == 1 => values[0].as_str(),
        _ => None,
    }
}

/// Merge two schemas of one property name: equal schemas stay, two objects union their
/// properties first-wins, anything else becomes `{"type": "object"}`.
fn merge(prev: &Value, next: &Value) -> Value {
    if prev == next {
        return prev.clone();
    }
    match (
        prev.get("properties").and_then(Value::as_object),
        next.get("properties").and_then(Value::as_object),
    ) {
        (Some(a), Some(b)) => {
            let mut props = a.clone();
            for (k, v) in b {
                if !props.contains_key(k) {
                    props.insert(k.clone(), v.clone());
                }
            }
            json!({"type": "object", "properties": props})
        }
        _ => permissive(),
    }
}
