//! `$ref` resolution, inlining of refs that carry siblings, and `allOf` merging.
use std::borrow::Cow;

use super::keywords::{ANNOTATIONS, DROPPED_ANNOTATIONS};
use super::nullable::make_nullable;
use super::{DefId, Normalizer};
use crate::error::SchemaError;
use crate::location::unescape_ref_segment;
use crate::report::{IssueKind, RewriteKind};
use crate::tree::{Node, Obj, Text};

/// A resolved `$ref`.
pub(super) struct Target<'a, 'r, S> {
    /// `""` for the root, else `$defs` or `definitions`.
    pub(super) table: &'static str,
    /// The definition's name (empty for the root).
    pub(super) name: Cow<'r, str>,
    pub(super) value: &'a Node<S>,
}

impl<S> Target<'_, '_, S> {
    /// True if this target is the definition `id`.
    pub(super) fn is(&self, id: &DefId<'_>) -> bool {
        id.0 == self.table && id.1 == self.name
    }

    /// The id pushed while the target is being expanded.
    pub(super) fn id<'x>(&self) -> DefId<'x> {
        (self.table, Cow::Owned(self.name.clone().into_owned()))
    }
}

impl<'a, S: Text> Normalizer<'a, S> {
    /// Resolve `#`, `#/$defs/NAME` and `#/definitions/NAME` against the root.
    pub(super) fn resolve<'r>(&self, r: &'r str) -> Option<Target<'a, 'r, S>> {
        if r == "#" {
            return Some(Target {
                table: "",
                name: Cow::Borrowed(""),
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
        let name = if rest.contains(['%', '~']) {
            Cow::Owned(unescape_ref_segment(rest))
        } else {
            Cow::Borrowed(rest)
        };
        let root: &'a Obj<S> = self.root_map;
        let value = root.get(table)?.as_object()?.get(&name)?;
        Some(Target { table, name, value })
    }

    /// True if the definition is being normalized or inlined (a ref to it is recursive).
    pub(super) fn is_expanding(&self, target: &Target<'_, '_, S>) -> bool {
        self.expanding.iter().any(|id| target.is(id))
    }

    /// A node with `$ref`: kept as a bare ref, inlined when it carries siblings, or wrapped as
    /// `anyOf: [ref]` when it points into a definition being expanded.
    pub(super) fn ref_node(
        &mut self,
        m: &Obj<S>,
        r: &Node<S>,
        depth: usize,
        root: bool,
    ) -> Result<Node<S>, SchemaError> {
        let Node::Str(r_text) = r else {
            self.issue(IssueKind::Invalid, || "`$ref` is not a string".into());
            return Ok(Node::Object(m.clone()));
        };
        let mut siblings = Obj::new();
        let mut nullable = false;
        for (k, v) in m.iter() {
            match k.as_str() {
                "$ref" => {}
                "$defs" | "definitions" if root => {}
                "nullable" => nullable = matches!(v, Node::Bool(true)),
                key if DROPPED_ANNOTATIONS.contains(&key) => {
                    self.lossy(RewriteKind::KeywordRemoved, || {
                        format!("removed `{key}`, which OpenAI strict mode does not support")
                    });
                }
                _ => siblings.push_new(k.clone(), v.clone()),
            }
        }
        let r = r_text.as_str();
        let Some(target) = self.resolve(r) else {
            self.issue(IssueKind::UnresolvableRef, || {
                format!(
                    "`$ref: {r}` cannot be resolved (supported: `#`, `#/$defs/NAME`, \
                     `#/definitions/NAME`)"
                )
            });
            return Ok(bare_ref(r_text, siblings));
        };
        let out = if siblings.is_empty() {
            bare_ref(r_text, siblings)
        } else if self.is_expanding(&target) {
            self.wrap_recursive(r_text, siblings)
        } else if let Node::Object(tm) = target.value {
            self.inline(tm, &target, siblings, depth)?
        } else {
            self.issue(IssueKind::Invalid, || {
                format!("`$ref: {r}` points to a non-object schema")
            });
            bare_ref(r_text, siblings)
        };
        Ok(if nullable { make_nullable(out) } else { out })
    }

    fn wrap_recursive(&mut self, r: &S, siblings: Obj<S>) -> Node<S> {
        let mut out = Obj::new();
        out.push_new(
            S::from_static("anyOf"),
            Node::Array(vec![bare_ref(r, Obj::new())]),
        );
        let mut extra = Vec::new();
        for (k, v) in siblings {
            if ANNOTATIONS.contains(&k.as_str()) {
                out.insert(k, v);
            } else {
                extra.push(format!("`{}`", k.as_str()));
            }
        }
        if !extra.is_empty() {
            let r = r.as_str();
            self.issue(IssueKind::RecursiveRefSiblings, || {
                format!(
                    "`$ref: {r}` points into a recursive definition and also carries {}, which \
                     cannot be inlined",
                    extra.join(", ")
                )
            });
        }
        Node::Object(out)
    }

    fn inline(
        &mut self,
        target_map: &Obj<S>,
        target: &Target<'a, '_, S>,
        siblings: Obj<S>,
        depth: usize,
    ) -> Result<Node<S>, SchemaError> {
        let mut combined = target_map.clone();
        if target.table.is_empty() {
            combined.shift_remove("$defs");
            combined.shift_remove("definitions");
        }
        combined.extend(siblings);
        let title = match combined.get("title").and_then(Node::as_str) {
            Some(t) => t.to_owned(),
            None if target.name.is_empty() => self.loc.field().to_owned(),
            None => target.name.clone().into_owned(),
        };
        let outer = self.loc.enter(target.table, &target.name, &title);
        self.expanding.push(target.id());
        let result = self
            .enter(depth + 1)
            .and_then(|()| self.node_map(&combined, depth + 1, false));
        self.expanding.pop();
        self.loc.leave(outer);
        result
    }

    /// `allOf`: one member merges into the node; several merge when they are all objects with
    /// distinct properties; anything else is reported.
    pub(super) fn all_of(
        &mut self,
        m: &Obj<S>,
        all: &Node<S>,
        depth: usize,
    ) -> Result<Node<S>, SchemaError> {
        let mut siblings = m.clone();
        siblings.shift_remove("allOf");
        let merged = match all {
            Node::Array(members) if members.len() == 1 => members[0].as_object().cloned(),
            Node::Array(members) => self.merge_objects(members),
            _ => None,
        };
        let combined = match merged {
            Some(mut merged) => {
                merged.extend(siblings);
                merged
            }
            None => {
                self.issue(IssueKind::AllOf, || {
                    "`allOf` whose members are not all objects with distinct properties cannot \
                     be expressed in OpenAI strict mode"
                        .into()
                });
                siblings
            }
        };
        self.enter(depth + 1)?;
        self.node_map(&combined, depth + 1, false)
    }

    fn merge_objects(&self, members: &[Node<S>]) -> Option<Obj<S>> {
        let mut props: Obj<S> = Obj::new();
        let mut required: Vec<Node<S>> = Vec::new();
        let mut out = Obj::new();
        for member in members {
            let mut mm = member.as_object()?;
            if let Some(r) = mm.get("$ref") {
                if mm
                    .keys()
                    .any(|k| k.as_str() != "$ref" && !ANNOTATIONS.contains(&k.as_str()))
                {
                    return None;
                }
                let target = self.resolve(r.as_str()?)?;
                if self.is_expanding(&target) {
                    return None;
                }
                mm = target.value.as_object()?;
            }
            for (k, v) in mm.iter() {
                match k.as_str() {
                    "type" if v.as_str() == Some("object") => {}
                    "additionalProperties" if matches!(v, Node::Bool(false)) => {}
                    "properties" => {
                        for (name, schema) in v.as_object()?.iter() {
                            match props.get(name.as_str()) {
                                Some(prev) if prev != schema => return None,
                                Some(_) => {}
                                None => props.push_new(name.clone(), schema.clone()),
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
                    key if ANNOTATIONS.contains(&key) || DROPPED_ANNOTATIONS.contains(&key) => {
                        if ANNOTATIONS.contains(&key) && !out.contains_key(key) {
                            out.push_new(k.clone(), v.clone());
                        }
                    }
                    _ => return None,
                }
            }
        }
        out.insert(S::from_static("type"), Node::text("object"));
        out.insert(S::from_static("properties"), Node::Object(props));
        out.insert(S::from_static("required"), Node::Array(required));
        Some(out)
    }
}

/// `{"$ref": r}` followed by `rest`.
fn bare_ref<S: Text>(r: &S, rest: Obj<S>) -> Node<S> {
    let mut out = Obj::with_capacity(rest.len() + 1);
    out.push_new(S::from_static("$ref"), Node::Str(r.clone()));
    out.extend(rest);
    Node::Object(out)
}
