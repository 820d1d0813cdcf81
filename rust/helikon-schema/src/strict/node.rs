//! Normalizing one schema node: objects, arrays, unions and scalar keywords.
use std::collections::HashSet;

use serde_json::{json, Map, Value};

use super::keywords::{
    short, type_includes, type_of_literals, ANNOTATIONS, KEPT_CONSTRAINTS, STRING_FORMATS,
};
use super::nullable::{accepts_null, make_nullable};
use super::Normalizer;
use crate::error::SchemaError;
use crate::report::{IssueKind, RewriteKind};

type Obj = Map<String, Value>;

impl Normalizer<'_> {
    /// Normalize any schema value at `depth`, charging the budgets.
    pub(super) fn node(&mut self, v: &Value, depth: usize) -> Result<Value, SchemaError> {
        self.enter(depth)?;
        match v {
            Value::Object(m) => self.node_map(m, depth, false),
            Value::Bool(true) => {
                self.issue(
                    IssueKind::Unconstrained,
                    "a value of any type (`true` schema) cannot be expressed in OpenAI strict mode"
                        .into(),
                );
                Ok(v.clone())
            }
            _ => {
                self.issue(
                    IssueKind::Invalid,
                    format!("`{}` is not a schema object", short(v)),
                );
                Ok(v.clone())
            }
        }
    }

    /// Normalize a schema object whose budgets the caller has already charged.
    pub(super) fn node_map(
        &mut self,
        m: &Obj,
        depth: usize,
        root: bool,
    ) -> Result<Value, SchemaError> {
        if let Some(r) = m.get("$ref") {
            return self.ref_node(m, r, depth, root);
        }
        if let Some(all) = m.get("allOf") {
            return self.all_of(m, all, depth);
        }
        let ty = self.node_type(m);
        let is_object = type_includes(ty.as_ref(), "object");
        let is_array = type_includes(ty.as_ref(), "array");
        let mut out = Map::new();
        let mut nullable = false;
        let mut items_done = false;
        for (key, value) in m {
            match key.as_str() {
                "type" | "enum" | "const" => {
                    out.insert(key.clone(), value.clone());
                }
                "properties" => match value {
                    Value::Object(props) => {
                        let p = self.properties(props, m.get("required"), is_object, depth)?;
                        out.insert(key.clone(), Value::Object(p));
                    }
                    _ => self.issue(IssueKind::Invalid, "`properties` is not an object".into()),
                },
                "required" => {
                    if !is_object {
                        out.insert(key.clone(), value.clone());
                    }
                }
                "additionalProperties" => {
                    if !is_object {
                        self.removed(key);
                    }
                }
                "patternProperties" => self.issue(
                    IssueKind::PatternProperties,
                    "`patternProperties` (keys matching a pattern) cannot be expressed in OpenAI \
                     strict mode"
                        .into(),
                ),
                "items" | "prefixItems" => {
                    if !items_done {
                        items_done = true;
                        if let Some(items) = self.items(m, depth)? {
                            out.insert("items".into(), items);
                        }
                    }
                }
                "anyOf" | "oneOf" => {
                    if out.contains_key("anyOf") {
                        self.issue(
                            IssueKind::Invalid,
                            "`anyOf` and `oneOf` on one node cannot be expressed".into(),
                        );
                    } else {
                        let members = self.union(key, value, depth)?;
                        out.insert("anyOf".into(), members);
                    }
                }
                "format" => match value {
                    Value::String(f)
                        if type_includes(ty.as_ref(), "string")
                            && STRING_FORMATS.contains(&f.as_str()) =>
                    {
                        out.insert(key.clone(), value.clone());
                    }
                    _ => self.lossy(
                        RewriteKind::FormatRemoved,
                        format!(
                            "removed `format: {}`, which OpenAI strict mode does not support here",
                            short(value)
                        ),
                    ),
                },
                "nullable" => nullable = value == &Value::Bool(true),
                "$defs" | "definitions" if root => {}
                k if ANNOTATIONS.contains(&k) || KEPT_CONSTRAINTS.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                _ => self.removed(key),
            }
        }
        if !m.contains_key("type") {
            if let Some(t) = ty {
                out.insert("type".into(), t);
            }
        }
        if is_object {
            self.close_object(m, &mut out);
        }
        if is_array && !items_done {
            self.issue(
                IssueKind::ArrayWithoutItems,
                "an array without an item schema (list[Any]) cannot be expressed in OpenAI \
                 strict mode"
                    .into(),
            );
        }
        let out = Value::Object(out);
        Ok(if nullable { make_nullable(out) } else { out })
    }

    fn removed(&mut self, key: &str) {
        self.lossy(
            RewriteKind::KeywordRemoved,
            format!("removed `{key}`, which OpenAI strict mode does not support"),
        );
    }

    /// The node's type: declared, or inferred from literals, `properties` or `items`.
    fn node_type(&mut self, m: &Obj) -> Option<Value> {
        if let Some(t) = m.get("type") {
            let valid = match t {
                Value::String(_) => true,
                Value::Array(ts) => !ts.is_empty() && ts.iter().all(Value::is_string),
                _ => false,
            };
            if !valid {
                self.issue(
                    IssueKind::Invalid,
                    format!("`type: {}` is not valid", short(t)),
                );
            }
            return Some(t.clone());
        }
        if m.contains_key("anyOf") || m.contains_key("oneOf") {
            return None;
        }
        if let Some(e) = m.get("enum") {
            return match e {
                Value::Array(values) => type_of_literals(values),
                _ => None,
            };
        }
        if let Some(c) = m.get("const") {
            return type_of_literals([c]);
        }
        let inferred = if m.contains_key("properties") {
            "object"
        } else if m.contains_key("items") || m.contains_key("prefixItems") {
            "array"
        } else {
            self.issue(
                IssueKind::Unconstrained,
                "a value of any type (no `type`, e.g. typing.Any) cannot be expressed in OpenAI \
                 strict mode"
                    .into(),
            );
            return None;
        };
        self.lossy(
            RewriteKind::TypeInferred,
            format!("added `type: {inferred}` to a schema that had none"),
        );
        Some(Value::String(inferred.to_owned()))
    }

    fn properties(
        &mut self,
        props: &Obj,
        required: Option<&Value>,
        is_object: bool,
        depth: usize,
    ) -> Result<Obj, SchemaError> {
        let req: HashSet<&str> = match required {
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            _ => HashSet::new(),
        };
        let mut out = Map::new();
        for (name, pv) in props {
            let mark = self.loc.mark();
            self.loc.push_property(name);
            let child = self.node(pv, depth + 1);
            let child = match child {
                Ok(c) if is_object && !req.contains(name.as_str()) => Ok(self.optional(c)),
                other => other,
            };
            self.loc.reset(mark);
            out.insert(name.clone(), child?);
        }
        Ok(out)
    }

    /// An optional property becomes required (and nullable unless in reference mode).
    fn optional(&mut self, child: Value) -> Value {
        if !self.opts.nullable_optional {
            self.lossy(
                RewriteKind::OptionalToRequired,
                "optional field is now required".into(),
            );
            return child;
        }
        let what = if accepts_null(&child) {
            "optional field is now required; `null` stands for absent"
        } else {
            "optional field is now required and nullable; `null` stands for absent"
        };
        self.lossy(RewriteKind::OptionalToNullable, what.into());
        make_nullable(child)
    }

    /// `required` lists every property; extra keys are closed off, and reported unless the
    /// object already had a fixed shape.
    fn close_object(&mut self, m: &Obj, out: &mut Obj) {
        let props = m.get("properties").and_then(Value::as_object);
        if let Some(props) = props {
            let names = props.keys().map(|k| Value::String(k.clone())).collect();
            out.insert("required".into(), Value::Array(names));
        }
        let extra = m.get("additionalProperties");
        let open = match extra {
            None => props.is_none(),
            Some(Value::Bool(b)) => *b,
            Some(Value::Object(_)) => true,
            Some(other) => {
                self.issue(
                    IssueKind::Invalid,
                    format!("`additionalProperties: {}` is not valid", short(other)),
                );
                false
            }
        };
        if open {
            let schema_valued = extra
                .and_then(Value::as_object)
                .is_some_and(|s| !s.is_empty());
            let (kind, reason) = match (props.is_some(), schema_valued) {
                (false, false) => (
                    IssueKind::FreeFormObject,
                    "free-form object (dict) cannot be expressed in OpenAI strict mode",
                ),
                (false, true) => (
                    IssueKind::MapObject,
                    "object with arbitrary keys (dict[str, ...]) cannot be expressed in OpenAI \
                     strict mode",
                ),
                (true, _) => (
                    IssueKind::ExtraProperties,
                    "object that allows extra keys (additionalProperties) cannot be expressed \
                     in OpenAI strict mode",
                ),
            };
            self.issue(kind, reason.into());
        }
        out.insert("additionalProperties".into(), Value::Bool(false));
    }

    /// The output `items`: a normalized item schema, or a union for tuple forms.
    fn items(&mut self, m: &Obj, depth: usize) -> Result<Option<Value>, SchemaError> {
        let (key, members) = match (m.get("prefixItems"), m.get("items")) {
            (Some(Value::Array(p)), _) => ("prefixItems", p),
            (None, Some(Value::Array(i))) => ("items", i),
            (None, Some(single)) => {
                let mark = self.loc.mark();
                self.loc.push_items("items");
                let r = self.node(single, depth + 1);
                self.loc.reset(mark);
                return r.map(Some);
            }
            _ => {
                self.issue(IssueKind::Invalid, "`prefixItems` is not an array".into());
                return Ok(None);
            }
        };
        let mut seen = HashSet::new();
        let mut list = Vec::new();
        for (i, member) in members.iter().enumerate() {
            let mark = self.loc.mark();
            self.loc.push_items(key);
            self.loc.push_ptr(&i.to_string());
            let r = self.node(member, depth + 1);
            self.loc.reset(mark);
            let r = r?;
            if seen.insert(r.to_string()) {
                list.push(r);
            }
        }
        if key == "prefixItems" {
            if let Some(rest @ Value::Object(_)) = m.get("items") {
                let mark = self.loc.mark();
                self.loc.push_items("items");
                let r = self.node(rest, depth + 1);
                self.loc.reset(mark);
                let r = r?;
                if seen.insert(r.to_string()) {
                    list.push(r);
                }
            }
        }
        self.lossy(
            RewriteKind::TupleToArray,
            format!(
                "tuple of {} positions became an array whose items may be any position's type",
                members.len()
            ),
        );
        Ok(match list.len() {
            0 => {
                self.issue(
                    IssueKind::ArrayWithoutItems,
                    "an empty tuple cannot be expressed in OpenAI strict mode".into(),
                );
                None
            }
            1 => list.pop(),
            _ => Some(json!({ "anyOf": list })),
        })
    }

    fn union(&mut self, key: &str, value: &Value, depth: usize) -> Result<Value, SchemaError> {
        let Value::Array(members) = value else {
            self.issue(IssueKind::Invalid, format!("`{key}` is not an array"));
            return Ok(value.clone());
        };
        if members.is_empty() {
            self.issue(IssueKind::Invalid, format!("`{key}` is empty"));
        }
        if key == "oneOf" {
            self.lossy(
                RewriteKind::OneOfToAnyOf,
                "`oneOf` became `anyOf` (strict mode has no `oneOf`); exclusivity is not enforced"
                    .into(),
            );
        }
        let mut out = Vec::with_capacity(members.len());
        for (i, member) in members.iter().enumerate() {
            let mark = self.loc.mark();
            self.loc.push_ptr(key);
            self.loc.push_ptr(&i.to_string());
            let r = self.node(member, depth + 1);
            self.loc.reset(mark);
            out.push(r?);
        }
        Ok(Value::Array(out))
    }
}
