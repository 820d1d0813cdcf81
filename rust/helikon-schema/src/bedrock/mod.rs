//! Bedrock Converse tool-input schema rewriter (the spec's `Ruleset::Strict`).
//!
//! Converse's validator rejects `$ref`/`$defs`, `oneOf`/`anyOf`/`allOf` and meta keywords. This
//! rewrite inlines refs (a cycle, a missing name or a foreign ref becomes `{"type": "object"}`),
//! collapses combinators into one object whose shared tag becomes an enum (see `collapse`),
//! strips meta keywords and cuts nesting at depth 64. It is total apart from the node budget.
//!
//! One documented improvement over the reference: when a collapse meets the same property name
//! twice with *equal* schemas, the schema is kept instead of becoming `{"type": "object"}`.
mod collapse;

use serde_json::{json, Map, Value};

use crate::budget::{Budget, Limits};
use crate::error::SchemaError;

/// Keywords removed from every node.
const STRIPPED: &[&str] = &[
    "$schema",
    "$id",
    "$anchor",
    "format",
    "examples",
    "default",
    "$comment",
    "$defs",
    "definitions",
];

/// Nodes at this depth or deeper become `{"type": "object"}`.
const DEPTH_CUT: usize = 64;

/// Rewrite a tool input schema for Bedrock Converse.
///
/// # Errors
/// [`SchemaError::TooLarge`] when ref expansion visits more than the default node budget.
pub fn bedrock(schema: &Value) -> Result<Value, SchemaError> {
    bedrock_with(schema, Limits::default())
}

/// [`bedrock`] with explicit limits (`max_depth` is not used: the depth cut-off is fixed at 64
/// and yields `{"type": "object"}` rather than an error).
///
/// # Errors
/// [`SchemaError::TooLarge`] when ref expansion visits more than `limits.max_nodes` nodes.
pub fn bedrock_with(schema: &Value, limits: Limits) -> Result<Value, SchemaError> {
    let table = match schema {
        Value::Object(root) => match root.get("$defs") {
            Some(Value::Object(defs)) => Some(defs),
            Some(_) => None,
            None => root.get("definitions").and_then(Value::as_object),
        },
        _ => None,
    };
    let mut rw = Rewriter {
        table,
        stack: Vec::new(),
        budget: Budget::new(limits),
    };
    rw.node(schema, 0)
}

/// The one non-null variant of a nullable union of a non-object value, if that is the shape.
fn optional_value(variants: &[Value]) -> Option<&Value> {
    let is_null = |v: &Value| v.get("type").and_then(Value::as_str) == Some("null");
    let mut rest = variants.iter().filter(|v| !is_null(v));
    let value = rest.next()?;
    if rest.next().is_some() || variants.len() < 2 {
        return None;
    }
    let is_object = value.get("type").and_then(Value::as_str) == Some("object")
        || value.get("properties").is_some()
        || value.get("$ref").is_some();
    (!is_object).then_some(value)
}

fn permissive() -> Value {
    json!({"type": "object"})
}

struct Rewriter<'a> {
    table: Option<&'a Map<String, Value>>,
    /// Definition names being expanded (cycle detection).
    stack: Vec<&'a str>,
    budget: Budget,
}

impl<'a> Rewriter<'a> {
    fn node(&mut self, v: &'a Value, depth: usize) -> Result<Value, SchemaError> {
        let Value::Object(m) = v else {
            return Ok(v.clone());
        };
        self.budget.tick(|| format!("depth {depth}"))?;
        if depth >= DEPTH_CUT {
            return Ok(permissive());
        }
        if let Some(r) = m.get("$ref") {
            return self.reference(m, r, depth);
        }
        for key in ["oneOf", "anyOf", "allOf"] {
            if let Some(Value::Array(variants)) = m.get(key) {
                if let Some(value) = optional_value(variants) {
                    return self.optional(m, key, value, depth);
                }
                return self.collapse(variants, depth);
            }
        }
        self.plain(m, depth).map(Value::Object)
    }

    /// `anyOf: [X, {"type": "null"}]` (an optional plain value, as pydantic writes
    /// `float | None`): beyond the reference, which would collapse it to an object, the node
    /// becomes X rewritten, keeping the node's own description/title. Converse has no null
    /// type, so "may be null" is expressed by the field not being required.
    fn optional(
        &mut self,
        m: &'a Map<String, Value>,
        key: &str,
        value: &'a Value,
        depth: usize,
    ) -> Result<Value, SchemaError> {
        let mut out = match self.node(value, depth + 1)? {
            Value::Object(o) => o,
            _ => return Ok(permissive()),
        };
        for (k, v) in m {
            if k != key && !STRIPPED.contains(&k.as_str()) && !out.contains_key(k) {
                if let ("description" | "title", Value::String(_)) = (k.as_str(), v) {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
        Ok(Value::Object(out))
    }

    /// A plain node: strip meta keywords, recurse into properties, items and a schema-valued
    /// additionalProperties, copy everything else.
    fn plain(
        &mut self,
        m: &'a Map<String, Value>,
        depth: usize,
    ) -> Result<Map<String, Value>, SchemaError> {
        let mut out = Map::new();
        for (k, v) in m {
            if STRIPPED.contains(&k.as_str()) {
                continue;
            }
            let rewritten = match (k.as_str(), v) {
                ("properties", Value::Object(props)) => {
                    let mut p = Map::new();
                    for (name, schema) in props {
                        p.insert(name.clone(), self.node(schema, depth + 1)?);
                    }
                    Value::Object(p)
                }
                ("items", Value::Object(_)) | ("additionalProperties", Value::Object(_)) => {
                    self.node(v, depth + 1)?
                }
                ("items", Value::Array(list)) => {
                    let mut out = Vec::with_capacity(list.len());
                    for item in list {
                        out.push(self.node(item, depth + 1)?);
                    }
                    Value::Array(out)
                }
                _ => v.clone(),
            };
            out.insert(k.clone(), rewritten);
        }
        Ok(out)
    }

    /// `$ref`: the rewritten target with the node's other keys copied over it.
    fn reference(
        &mut self,
        m: &'a Map<String, Value>,
        r: &'a Value,
        depth: usize,
    ) -> Result<Value, SchemaError> {
        let name = r.as_str().and_then(|r| {
            r.strip_prefix("#/$defs/")
                .or_else(|| r.strip_prefix("#/definitions/"))
        });
        let target = name.and_then(|n| self.table.and_then(|t| t.get(n)).map(|t| (n, t)));
        let base = match target {
            Some((n, t)) if !self.stack.contains(&n) => {
                self.stack.push(n);
                // Expansion counts as nesting, so a long chain of refs is cut like deep nesting.
                let out = self.node(t, depth + 1);
                self.stack.pop();
                out?
            }
            _ => permissive(),
        };
        let siblings = self.plain(m, depth)?;
        let mut siblings: Map<String, Value> =
            siblings.into_iter().filter(|(k, _)| k != "$ref").collect();
        Ok(match base {
            Value::Object(mut b) => {
                b.append(&mut siblings);
                Value::Object(b)
            }
            other if siblings.is_empty() => other,
            _ => Value::Object(siblings),
        })
    }
}
