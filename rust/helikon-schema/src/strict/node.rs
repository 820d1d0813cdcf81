//! Normalizing one schema node: objects, arrays, unions and scalar keywords.
use super::keywords::{
    short, type_includes, type_of_literals, ANNOTATIONS, KEPT_CONSTRAINTS, STRING_FORMATS,
};
use super::nullable::{accepts_null, make_nullable};
use super::scan::Keys;
use super::Normalizer;
use crate::error::SchemaError;
use crate::report::{IssueKind, RewriteKind};
use crate::tree::{Node, Obj, Text};

impl<S: Text> Normalizer<'_, S> {
    /// Normalize any schema value at `depth`, charging the budgets.
    pub(super) fn node(&mut self, v: &Node<S>, depth: usize) -> Result<Node<S>, SchemaError> {
        self.enter(depth)?;
        match v {
            Node::Object(m) => self.node_map(m, depth, false),
            Node::Bool(true) => {
                self.issue(IssueKind::Unconstrained, || {
                    "a value of any type (`true` schema) cannot be expressed in OpenAI strict mode"
                        .into()
                });
                Ok(v.clone())
            }
            _ => {
                self.issue(IssueKind::Invalid, || {
                    format!("`{}` is not a schema object", short(v))
                });
                Ok(v.clone())
            }
        }
    }

    /// Normalize a schema object whose budgets the caller has already charged.
    pub(super) fn node_map(
        &mut self,
        m: &Obj<S>,
        depth: usize,
        root: bool,
    ) -> Result<Node<S>, SchemaError> {
        let keys = Keys::scan(m);
        if let Some(r) = keys.reference {
            return self.ref_node(m, r, depth, root);
        }
        if let Some(all) = keys.all_of {
            return self.all_of(m, all, depth);
        }
        let ty = self.node_type(&keys);
        let is_object = type_includes(ty.as_ref(), "object");
        let is_array = type_includes(ty.as_ref(), "array");
        let mut out = Obj::with_capacity(m.len() + 2);
        let mut nullable = false;
        let mut items_done = false;
        for (key, value) in m.iter() {
            match key.as_str() {
                // keys of `m` are unique: only `items` and `anyOf` can be written twice
                "type" | "enum" | "const" => out.push_new(key.clone(), value.clone()),
                "properties" => match value {
                    Node::Object(props) => {
                        let p = self.properties(props, keys.required, is_object, depth)?;
                        out.push_new(key.clone(), Node::Object(p));
                    }
                    _ => self.issue(IssueKind::Invalid, || {
                        "`properties` is not an object".into()
                    }),
                },
                "required" => {
                    if !is_object {
                        out.push_new(key.clone(), value.clone());
                    }
                }
                "additionalProperties" => {
                    if !is_object {
                        self.removed(key.as_str());
                    }
                }
                "patternProperties" => self.issue(IssueKind::PatternProperties, || {
                    "`patternProperties` (keys matching a pattern) cannot be expressed in OpenAI \
                     strict mode"
                        .into()
                }),
                "items" | "prefixItems" => {
                    if !items_done {
                        items_done = true;
                        if let Some(items) = self.items(&keys, depth)? {
                            out.insert(S::from_static("items"), items);
                        }
                    }
                }
                "anyOf" | "oneOf" => {
                    if out.contains_key("anyOf") {
                        self.issue(IssueKind::Invalid, || {
                            "`anyOf` and `oneOf` on one node cannot be expressed".into()
                        });
                    } else {
                        let members = self.union(key.as_str(), value, depth)?;
                        out.insert(S::from_static("anyOf"), members);
                    }
                }
                "format" => match value {
                    Node::Str(f)
                        if type_includes(ty.as_ref(), "string")
                            && STRING_FORMATS.contains(&f.as_str()) =>
                    {
                        out.push_new(key.clone(), value.clone());
                    }
                    _ => self.lossy(RewriteKind::FormatRemoved, || {
                        format!(
                            "removed `format: {}`, which OpenAI strict mode does not support here",
                            short(value)
                        )
                    }),
                },
                "nullable" => nullable = matches!(value, Node::Bool(true)),
                "$defs" | "definitions" if root => {}
                k if ANNOTATIONS.contains(&k) || KEPT_CONSTRAINTS.contains(&k) => {
                    out.push_new(key.clone(), value.clone());
                }
                k => self.removed(k),
            }
        }
        if keys.ty.is_none() {
            if let Some(t) = ty {
                out.push_new(S::from_static("type"), t);
            }
        }
        if is_object {
            self.close_object(&keys, &mut out);
        }
        if is_array && !items_done {
            self.issue(IssueKind::ArrayWithoutItems, || {
                "an array without an item schema (list[Any]) cannot be expressed in OpenAI \
                 strict mode"
                    .into()
            });
        }
        let out = Node::Object(out);
        Ok(if nullable { make_nullable(out) } else { out })
    }

    fn removed(&mut self, key: &str) {
        self.lossy(RewriteKind::KeywordRemoved, || {
            format!("removed `{key}`, which OpenAI strict mode does not support")
        });
    }

    /// The node's type: declared, or inferred from literals, `properties` or `items`.
    fn node_type(&mut self, keys: &Keys<'_, S>) -> Option<Node<S>> {
        if let Some(t) = keys.ty {
            let valid = match t {
                Node::Str(_) => true,
                Node::Array(ts) => !ts.is_empty() && ts.iter().all(Node::is_string),
                _ => false,
            };
            if !valid {
                self.issue(IssueKind::Invalid, || {
                    format!("`type: {}` is not valid", short(t))
                });
            }
            return Some(t.clone());
        }
        if keys.any_of || keys.one_of {
            return None;
        }
        if let Some(e) = keys.enumeration {
            return match e {
                Node::Array(values) => type_of_literals(values),
                _ => None,
            };
        }
        if let Some(c) = keys.constant {
            return type_of_literals([c]);
        }
        let inferred = if keys.properties.is_some() {
            "object"
        } else if keys.items.is_some() || keys.prefix_items.is_some() {
            "array"
        } else {
            self.issue(IssueKind::Unconstrained, || {
                "a value of any type (no `type`, e.g. typing.Any) cannot be expressed in OpenAI \
                 strict mode"
                    .into()
            });
            return None;
        };
        self.lossy(RewriteKind::TypeInferred, || {
            format!("added `type: {inferred}` to a schema that had none")
        });
        Some(Node::text(inferred))
    }

    fn properties(
        &mut self,
        props: &Obj<S>,
        required: Option<&Node<S>>,
        is_object: bool,
        depth: usize,
    ) -> Result<Obj<S>, SchemaError> {
        let req = required.and_then(Node::as_array).unwrap_or_default();
        let mut out = Obj::with_capacity(props.len());
        for (name, pv) in props.iter() {
            let mark = self.loc.mark();
            self.loc.push_property(name.as_str());
            let child = self.node(pv, depth + 1);
            let child = match child {
                Ok(c) if is_object && !is_required(req, name) => Ok(self.optional(c)),
                other => other,
            };
            self.loc.reset(mark);
            out.push_new(name.clone(), child?);
        }
        Ok(out)
    }

    /// An optional property becomes required (and nullable unless in reference mode).
    fn optional(&mut self, child: Node<S>) -> Node<S> {
        if !self.opts.nullable_optional {
            self.lossy(RewriteKind::OptionalToRequired, || {
                "optional field is now required".into()
            });
            return child;
        }
        self.lossy(RewriteKind::OptionalToNullable, || {
            if accepts_null(&child) {
                "optional field is now required; `null` stands for absent".into()
            } else {
                "optional field is now required and nullable; `null` stands for absent".into()
            }
        });
        make_nullable(child)
    }

    /// `required` lists every property; extra keys are closed off, and reported unless the
    /// object already had a fixed shape.
    fn close_object(&mut self, keys: &Keys<'_, S>, out: &mut Obj<S>) {
        let props = keys.properties.and_then(Node::as_object);
        if let Some(props) = props {
            let names = props.keys().map(|k| Node::Str(k.clone())).collect();
            out.insert(S::from_static("required"), Node::Array(names));
        }
        let extra = keys.additional;
        let open = match extra {
            None => props.is_none(),
            Some(Node::Bool(b)) => *b,
            Some(Node::Object(_)) => true,
            Some(other) => {
                self.issue(IssueKind::Invalid, || {
                    format!("`additionalProperties: {}` is not valid", short(other))
                });
                false
            }
        };
        if open {
            let schema_valued = extra
                .and_then(Node::as_object)
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
            self.issue(kind, || reason.into());
        }
        out.insert(S::from_static("additionalProperties"), Node::Bool(false));
    }

    /// The output `items`: a normalized item schema, or a union for tuple forms.
    fn items(&mut self, keys: &Keys<'_, S>, depth: usize) -> Result<Option<Node<S>>, SchemaError> {
        let (key, members) = match (keys.prefix_items, keys.items) {
            (Some(Node::Array(p)), _) => ("prefixItems", p),
            (None, Some(Node::Array(i))) => ("items", i),
            (None, Some(single)) => {
                let mark = self.loc.mark();
                self.loc.push_items("items");
                let r = self.node(single, depth + 1);
                self.loc.reset(mark);
                return r.map(Some);
            }
            _ => {
                self.issue(IssueKind::Invalid, || {
                    "`prefixItems` is not an array".into()
                });
                return Ok(None);
            }
        };
        let mut list: Vec<Node<S>> = Vec::new();
        for (i, member) in members.iter().enumerate() {
            let mark = self.loc.mark();
            self.loc.push_items(key);
            self.loc.push_index(i);
            let r = self.node(member, depth + 1);
            self.loc.reset(mark);
            let r = r?;
            if !list.iter().any(|seen| seen.identical(&r)) {
                list.push(r);
            }
        }
        if key == "prefixItems" {
            if let Some(rest @ Node::Object(_)) = keys.items {
                let mark = self.loc.mark();
                self.loc.push_items("items");
                let r = self.node(rest, depth + 1);
                self.loc.reset(mark);
                let r = r?;
                if !list.iter().any(|seen| seen.identical(&r)) {
                    list.push(r);
                }
            }
        }
        self.lossy(RewriteKind::TupleToArray, || {
            format!(
                "tuple of {} positions became an array whose items may be any position's type",
                members.len()
            )
        });
        Ok(match list.len() {
            0 => {
                self.issue(IssueKind::ArrayWithoutItems, || {
                    "an empty tuple cannot be expressed in OpenAI strict mode".into()
                });
                None
            }
            1 => list.pop(),
            _ => {
                let mut union = Obj::with_capacity(1);
                union.push_new(S::from_static("anyOf"), Node::Array(list));
                Some(Node::Object(union))
            }
        })
    }

    fn union(&mut self, key: &str, value: &Node<S>, depth: usize) -> Result<Node<S>, SchemaError> {
        let Node::Array(members) = value else {
            self.issue(IssueKind::Invalid, || format!("`{key}` is not an array"));
            return Ok(value.clone());
        };
        if members.is_empty() {
            self.issue(IssueKind::Invalid, || format!("`{key}` is empty"));
        }
        if key == "oneOf" {
            self.lossy(RewriteKind::OneOfToAnyOf, || {
                "`oneOf` became `anyOf` (strict mode has no `oneOf`); exclusivity is not enforced"
                    .into()
            });
        }
        // room for the `null` member an optional property adds
        let mut out = Vec::with_capacity(members.len() + 1);
        for (i, member) in members.iter().enumerate() {
            let mark = self.loc.mark();
            self.loc.push_ptr(key);
            self.loc.push_index(i);
            let r = self.node(member, depth + 1);
            self.loc.reset(mark);
            out.push(r?);
        }
        Ok(Node::Array(out))
    }
}

/// True if `name` is listed in `required`.
fn is_required<S: Text>(required: &[Node<S>], name: &S) -> bool {
    required
        .iter()
        .any(|r| matches!(r, Node::Str(r) if r.same_text(name)))
}
