//! Gemini schema sanitizer (OpenAPI 3.0 subset) for `responseSchema` and function declarations.
//!
//! Refs are inlined (resolved by the last `/` segment against root `$defs` merged with root
//! `definitions`; a cycle or unknown name becomes `{"type": "object"}`), type arrays become
//! `nullable`, `const` becomes a one-item `enum`, `oneOf` becomes `anyOf` with `null` members
//! folded into `nullable`, unsupported keywords and formats are dropped, and nesting is cut at
//! depth 64. Keys are processed in sorted order, which decides where keys interact.
//!
//! [`gemini_function`] runs the same rules and then keeps only the fields a function
//! declaration's `parameters` accepts: sibling `description`/`title` of a `$ref` survive,
//! `allOf` members are merged, tuple `items` become a union, `required` only names existing
//! properties, and keywords outside Gemini's `Schema` message are dropped.
mod function;

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use crate::budget::{Budget, Limits};
use crate::error::SchemaError;

/// Keys removed from every node.
const DROPPED: &[&str] = &[
    "$schema",
    "$id",
    "$anchor",
    "$comment",
    "additionalProperties",
    "unevaluatedProperties",
    "patternProperties",
    "examples",
    "default",
    "$defs",
    "definitions",
];

/// Nodes deeper than this become `{"type": "object"}`.
const DEPTH_CUT: usize = 64;

/// Sanitize a schema for Gemini `responseSchema`.
///
/// # Errors
/// [`SchemaError::TooLarge`] when ref expansion visits more than the default node budget.
pub fn gemini(schema: &Value) -> Result<Value, SchemaError> {
    gemini_with(schema, false, Limits::default())
}

/// Sanitize a schema for a Gemini function declaration's `parameters`.
///
/// # Errors
/// [`SchemaError::TooLarge`] when ref expansion visits more than the default node budget.
pub fn gemini_function(schema: &Value) -> Result<Value, SchemaError> {
    gemini_with(schema, true, Limits::default())
}

/// [`gemini`] (`for_function = false`) or [`gemini_function`] with explicit limits.
///
/// # Errors
/// [`SchemaError::TooLarge`] when ref expansion visits more than `limits.max_nodes` nodes.
pub fn gemini_with(
    schema: &Value,
    for_function: bool,
    limits: Limits,
) -> Result<Value, SchemaError> {
    let mut defs: HashMap<&str, &Value> = HashMap::new();
    if let Value::Object(root) = schema {
        for table in ["$defs", "definitions"] {
            if let Some(Value::Object(t)) = root.get(table) {
                defs.extend(t.iter().map(|(k, v)| (k.as_str(), v)));
            }
        }
    }
    let mut s = Sanitizer {
        defs,
        stack: Vec::new(),
        budget: Budget::new(limits),
        for_function,
    };
    s.node(schema, 0)
}

fn permissive() -> Value {
    json!({"type": "object"})
}

pub(super) struct Sanitizer<'a> {
    defs: HashMap<&'a str, &'a Value>,
    stack: Vec<&'a str>,
    budget: Budget,
    for_function: bool,
}

impl<'a> Sanitizer<'a> {
    pub(super) fn node(&mut self, v: &'a Value, depth: usize) -> Result<Value, SchemaError> {
        let Value::Object(m) = v else {
            return Ok(v.clone());
        };
        if depth > DEPTH_CUT {
            return Ok(permissive());
        }
        self.budget.tick(|| format!("depth {depth}"))?;
        if let Some(Value::String(r)) = m.get("$ref") {
            return self.reference(m, r, depth);
        }
        let mut out = self.map(m, depth)?;
        if !self.for_function {
            return Ok(Value::Object(out));
        }
        if let Some(Value::Array(positions)) = m.get("prefixItems") {
            let items = self.tuple_items(positions, depth)?;
            out.insert("items".into(), items);
        }
        if let Some(Value::Array(members)) = m.get("allOf") {
            out.shift_remove("allOf");
            for member in members {
                if let Value::Object(sm) = self.node(member, depth + 1)? {
                    function::merge_into(&mut out, sm);
                }
            }
        }
        Ok(function::restrict(out))
    }

    fn reference(
        &mut self,
        m: &'a Map<String, Value>,
        r: &'a str,
        depth: usize,
    ) -> Result<Value, SchemaError> {
        let name = r.rsplit('/').next().unwrap_or(r);
        let out = match self.defs.get(name).copied() {
            Some(target) if !self.stack.contains(&name) => {
                self.stack.push(name);
                let out = self.node(target, depth + 1);
                self.stack.pop();
                out?
            }
            _ => permissive(),
        };
        Ok(if self.for_function {
            function::keep_ref_annotations(out, m)
        } else {
            out
        })
    }

    /// Rewrite one object's keys in sorted order.
    fn map(
        &mut self,
        m: &'a Map<String, Value>,
        depth: usize,
    ) -> Result<Map<String, Value>, SchemaError> {
        let mut keys: Vec<&'a String> = m.keys().collect();
        keys.sort();
        let mut out = Map::new();
        for key in keys {
            let Some(value) = m.get(key) else { continue };
            match key.as_str() {
                k if DROPPED.contains(&k) => {}
                "const" => {
                    out.insert("enum".into(), json!([value]));
                }
                "type" => type_keyword(value, &mut out),
                "oneOf" | "anyOf" => self.union(value, depth, &mut out)?,
                "format" => {
                    if format_allowed(m.get("type"), value) {
                        out.insert(key.clone(), value.clone());
                    }
                }
                "properties" => {
                    let mut props = Map::new();
                    if let Value::Object(p) = value {
                        for (name, schema) in p {
                            props.insert(name.clone(), self.node(schema, depth + 1)?);
                        }
                    }
                    out.insert(key.clone(), Value::Object(props));
                }
                "items" => {
                    let items = match value {
                        Value::Object(_) => self.node(value, depth + 1)?,
                        Value::Array(list) if self.for_function => self.tuple_items(list, depth)?,
                        _ => value.clone(),
                    };
                    out.insert(key.clone(), items);
                }
                _ => {
                    out.insert(key.clone(), value.clone());
                }
            }
        }
        Ok(out)
    }

    fn union(
        &mut self,
        value: &'a Value,
        depth: usize,
        out: &mut Map<String, Value>,
    ) -> Result<(), SchemaError> {
        let Value::Array(members) = value else {
            out.insert("anyOf".into(), value.clone());
            return Ok(());
        };
        let mut remaining = Vec::new();
        for member in members {
            let m = self.node(member, depth + 1)?;
            if m.get("type").and_then(Value::as_str) == Some("null") {
                out.insert("nullable".into(), Value::Bool(true));
            } else {
                remaining.push(m);
            }
        }
        match (remaining.len(), remaining.pop()) {
            (1, Some(Value::Object(only))) => {
                for (k, v) in only {
                    out.entry(k).or_insert(v);
                }
            }
            (_, last) => {
                remaining.extend(last);
                out.insert("anyOf".into(), Value::Array(remaining));
            }
        }
        Ok(())
    }
}

/// `type`: a type array becomes `nullable` plus one type or an `anyOf` of types.
fn type_keyword(value: &Value, out: &mut Map<String, Value>) {
    let Value::Array(types) = value else {
        out.insert("type".into(), value.clone());
        return;
    };
    let mut non_null = Vec::new();
    for t in types {
        if t.as_str() == Some("null") {
            out.insert("nullable".into(), Value::Bool(true));
        } else if t.is_string() {
            non_null.push(t.clone());
        }
    }
    match non_null.len() {
        0 => {}
        1 => {
            out.insert("type".into(), non_null.swap_remove(0));
        }
        _ => {
            let members = non_null.into_iter().map(|t| json!({ "type": t })).collect();
            out.insert("anyOf".into(), Value::Array(members));
        }
    }
}

/// Formats Gemini recognizes, by type.
fn format_allowed(ty: Option<&Value>, format: &Value) -> bool {
    let ty = match ty {
        Some(Value::String(t)) => Some(t.as_str()),
        Some(Value::Array(ts)) => {
            let non_null: Vec<&str> = ts
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect();
            match non_null.as_slice() {
                [one] => Some(*one),
                _ => None,
            }
        }
        _ => None,
    };
    matches!(
        (ty, format.as_str()),
        (Some("string"), Some("enum" | "date-time"))
            | (Some("integer"), Some("int32" | "int64"))
            | (Some("number"), Some("float" | "double"))
    )
}
