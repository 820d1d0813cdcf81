//! `$ref` resolution, inlining of refs that carry siblings, and `allOf` merging.
use serde_json::{json, Map, Value};

use super::keywords::{ANNOTATIONS, DROPPED_ANNOTATIONS};
use super::nullable::make_nullable;
use super::Normalizer;
use crate::error::SchemaError;
use crate::location::{escape_segment, unescape_ref_segment};
use crate::report::{IssueKind, RewriteKind};

type Obj = Map<String, Value>;

/// A resolved `$ref`.
pub(super) struct Target<'a> {
    /// `#`, `$defs/NAME` or `definitions/NAME`.
    pub(super) id: String,
    /// The definition's name (empty for the root).
    pub(super) name: String,
    /// JSON pointer of the definition.
    pub(super) pointer: String,
    pub(super) value: &'a Value,
}

impl<'a> Normalizer<'a> {
    /// Resolve `#`, `#/$defs/NAME` and `#/definitions/NAME` against the root.
    pub(super) fn resolve(&self, r: &str) -> Option<Target<'a>> {
        if r == "#" {
            return Some(Target {
                id: "#".into(),
                name: String::new(),
                pointer: String::new(),
                value: self.root,
            });
        }
        let (table, rest) = if let Some(rest) = r.strip_prefix("#/$defs/") {
            ("$defs", rest)
        } else {
            ("definitions", r.strip_prefix("#/definitions/")?)
        };
        if rest.contains('/') {
            return None;
        }
        let name = unescape_ref_segment(rest);
        let root: &'a Obj = self.root_map;
        let value = root.get(table)?.as_object()?.get(&name)?;
        Some(Target {
            id: format!("{table}/{name}"),
            pointer: format!("/{table}/{}", escape_segment(&name)),
            name,
            value,
        })
    }

    /// A node with `$ref`: kept as a bare ref, inlined when it carries siblings, or wrapped as
    /// `anyOf: [ref]` when it points into a definition being expanded.
    pub(super) fn ref_node(
        &mut self,
        m: &Obj,
        r: &Value,
        depth: usize,
        root: bool,
    ) -> Result<Value, SchemaError> {
        let Value::String(r) = r else {
            self.issue(IssueKind::Invalid, "`$ref` is not a string".into());
            return Ok(Value::Object(m.clone()));
        };
        let mut siblings = Map::new();
        let mut nullable = false;
        for (k, v) in m {
            match k.as_str() {
                "$ref" => {}
                "$defs" | "definitions" if root => {}
                "nullable" => nullable = v == &Value::Bool(true),
                k if DROPPED_ANNOTATIONS.contains(&k) => self.lossy(
                    RewriteKind::KeywordRemoved,
                    format!("removed `{k}`, which OpenAI strict mode does not support"),
                ),
                _ => {
                    siblings.insert(k.to_owned(), v.clone());
                }
            }
        }
        let Some(target) = self.resolve(r) else {
            self.issue(
                IssueKind::UnresolvableRef,
                format!(
                    "`$ref: {r}` cannot be resolved (supported: `#`, `#/$defs/NAME`, \
                     `#/definitions/NAME`)"
                ),
            );
            let mut out = Map::new();
            out.insert("$ref".into(), Value::String(r.clone()));
            out.extend(siblings);
            return Ok(Value::Object(out));
        };
        let out = if siblings.is_empty() {
            json!({ "$ref": r })
        } else if self.expanding.contains(&target.id) {
            self.wrap_recursive(r, siblings)
        } else if let Value::Object(tm) = target.value {
            self.inline(tm, &target, siblings, depth)?
        } else {
            self.issue(
                IssueKind::Invalid,
                format!("`$ref: {r}` points to a non-object schema"),
            );
            let mut out = Map::new();
            out.insert("$ref".into(), Value::String(r.clone()));
            out.extend(siblings);
            Value::Object(out)
        };
        Ok(if nullable { make_nullable(out) } else { out })
    }

    fn wrap_recursive(&mut self, r: &str, siblings: Obj) -> Value {
        let mut out = Map::new();
        out.insert("anyOf".into(), json!([{ "$ref": r }]));
        let mut extra = Vec::new();
        for (k, v) in siblings {
            if ANNOTATIONS.contains(&k.as_str()) {
                out.insert(k, v);
            } else {
                extra.push(format!("`{k}`"));
            }
        }
        if !extra.is_empty() {
            self.issue(
                IssueKind::RecursiveRefSiblings,
                format!(
                    "`$ref: {r}` points into a recursive definition and also carries {}, which \
                     cannot be inlined",
                    extra.join(", ")
                ),
            );
        }
        Value::Object(out)
    }

    fn inline(
        &mut self,
        target_map: &Obj,
        target: &Target<'a>,
        siblings: Obj,
        depth: usize,
    ) -> Result<Value, SchemaError> {
        let mut combined = target_map.clone();
        if target.id == "#" {
            combined.shift_remove("$defs");
            combined.shift_remove("definitions");
        }
        combined.extend(siblings);
        let title = match combined.get("title").and_then(Value::as_str) {
            Some(t) => t.to_owned(),
            None if target.name.is_empty() => self.loc.field().to_owned(),
            None => target.name.clone(),
        };
        let saved = self.loc.replace(target.pointer.clone(), title);
        self.expanding.push(target.id.clone());
        let result = self
            .enter(depth + 1)
            .and_then(|()| self.node_map(&combined, depth + 1, false));
        self.expanding.pop();
        self.loc.restore(saved);
        result
    }

    /// `allOf`: one member merges into the node; several merge when they are all objects with
    /// distinct properties; anything else is reported.
    pub(super) fn all_of(
        &mut self,
        m: &Obj,
        all: &Value,
        depth: usize,
    ) -> Result<Value, SchemaError> {
        let mut siblings = m.clone();
        siblings.shift_remove("allOf");
        let merged = match all {
            Value::Array(members) if members.len() == 1 => members[0].as_object().cloned(),
            Value::Array(members) => self.merge_objects(members),
            _ => None,
        };
        let combined = match merged {
            Some(mut merged) => {
                merged.extend(siblings);
                merged
            }
            None => {
                self.issue(
                    IssueKind::AllOf,
                    "`allOf` whose members are not all objects with distinct properties cannot \
                     be expressed in OpenAI strict mode"
                        .into(),
                );
                siblings
            }
        };
        self.enter(depth + 1)?;
        self.node_map(&combined, depth + 1, false)
    }

    fn merge_objects(&self, members: &[Value]) -> Option<Obj> {
        let mut props = Map::new();
        let mut required: Vec<Value> = Vec::new();
        let mut out = Map::new();
        for member in members {
            let mut mm = member.as_object()?;
            if let Some(r) = mm.get("$ref") {
                if mm
                    .keys()
                    .any(|k| k != "$ref" && !ANNOTATIONS.contains(&k.as_str()))
                {
                    return None;
                }
                let target = self.resolve(r.as_str()?)?;
                if self.expanding.contains(&target.id) {
                    return None;
                }
                mm = target.value.as_object()?;
            }
            for (k, v) in mm {
                match k.as_str() {
                    "type" if v.as_str() == Some("object") => {}
                    "additionalProperties" if v == &Value::Bool(false) => {}
                    "properties" => {
                        for (name, schema) in v.as_object()? {
                            match props.get(name) {
                                Some(prev) if prev != schema => return None,
                                Some(_) => {}
                                None => {
                                    props.insert(name.clone(), schema.clone());
                                }
                            }
                        }
                    }
                    "required" => {
                        for name in v.as_array()? {
                            if !required.contains(name) {
                                required.push(name.clone());
                            }
                        }
                    }
                    k if ANNOTATIONS.contains(&k) || DROPPED_ANNOTATIONS.contains(&k) => {
                        if ANNOTATIONS.contains(&k) && !out.contains_key(k) {
                            out.insert(k.to_owned(), v.clone());
                        }
                    }
                    _ => return None,
                }
            }
        }
        out.insert("type".into(), json!("object"));
        out.insert("properties".into(), Value::Object(props));
        out.insert("required".into(), Value::Array(required));
        Some(out)
    }
}
