//! OpenAI strict-mode normalization.
//!
//! Every object gets `additionalProperties: false` and lists all its properties in `required`;
//! optional properties become nullable (`null` stands for "absent"). Unlike the reference
//! normalizer this one also walks `$defs`/`definitions`, `$ref`, `anyOf`/`oneOf`/`allOf`,
//! arrays and tuples, and it never silently closes a free-form object: such constructs are
//! listed in [`Report::non_strict`], and [`strict`] fails on them.
//!
//! Definitions stay definitions (so recursive types keep working); a `$ref` that carries sibling
//! keywords is inlined (or, when it points into a definition being expanded, wrapped as
//! `anyOf: [{"$ref": ...}]`), because strict mode rejects siblings next to `$ref`.
//!
//! The normalizer works on a [`Node`] tree generic over its string handle, so the
//! `serde_json` entry points here and a language binding that walks its own objects share this
//! one implementation. [`strict_tree`] skips the lossy-rewrite report (the formatted texts
//! [`strict`] would discard); only the non-strict constructs it must fail on are collected.
mod keywords;
mod node;
mod nullable;
mod refs;
mod scan;

use std::borrow::Cow;

use serde_json::Value;

use crate::budget::{Budget, Limits};
use crate::error::SchemaError;
use crate::location::Location;
use crate::report::{IssueKind, Report, ReportBuilder, RewriteKind};
use crate::tree::{borrow, to_value, Node, Obj, Text};

/// Knobs for [`strict_report_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StrictOptions {
    /// Make properties that were optional nullable (default `true`). `false` reproduces the
    /// reference normalizer, which makes them required with their type unchanged.
    pub nullable_optional: bool,
    /// Node and depth budgets.
    pub limits: Limits,
}

impl Default for StrictOptions {
    fn default() -> Self {
        Self {
            nullable_optional: true,
            limits: Limits::default(),
        }
    }
}

impl StrictOptions {
    /// The reference normalizer's choices: optional properties keep their type.
    pub fn reference() -> Self {
        Self {
            nullable_optional: false,
            ..Self::default()
        }
    }
}

/// Normalize `schema` for OpenAI strict mode, failing if any construct cannot be strict.
///
/// # Errors
/// [`SchemaError::NotStrict`] naming the first offending field (e.g. `Ticket.meta: free-form
/// object (dict) cannot be expressed ...`), or a budget error for hostile schemas.
pub fn strict(schema: &Value) -> Result<Value, SchemaError> {
    strict_with(schema, &StrictOptions::default())
}

/// [`strict`] with explicit options.
///
/// # Errors
/// As [`strict`].
pub fn strict_with(schema: &Value, opts: &StrictOptions) -> Result<Value, SchemaError> {
    strict_tree(&borrow(schema), opts).map(|out| to_value(&out))
}

/// Normalize `schema` and report every lossy rewrite and every non-strict construct.
///
/// The schema is returned even when [`Report::non_strict`] is non-empty; it then closes the
/// offending objects and must not be sent with `strict: true` (send the original schema with
/// `strict: false` instead).
///
/// # Errors
/// Only budget errors ([`SchemaError::TooLarge`], [`SchemaError::TooDeep`]).
pub fn strict_report(schema: &Value) -> Result<(Value, Report), SchemaError> {
    strict_report_with(schema, &StrictOptions::default())
}

/// [`strict_report`] with explicit options.
///
/// # Errors
/// As [`strict_report`].
pub fn strict_report_with(
    schema: &Value,
    opts: &StrictOptions,
) -> Result<(Value, Report), SchemaError> {
    let (out, report) = strict_report_tree(&borrow(schema), opts)?;
    Ok((to_value(&out), report))
}

/// [`strict_with`] on a [`Node`] tree. It builds no lossy-rewrite report, so it costs less
/// than [`strict_report_tree`]; the output is the same.
///
/// # Errors
/// As [`strict`].
pub fn strict_tree<S: Text>(
    schema: &Node<S>,
    opts: &StrictOptions,
) -> Result<Node<S>, SchemaError> {
    let (out, report) = run(schema, opts, false)?;
    if report.non_strict.is_empty() {
        Ok(out)
    } else {
        Err(SchemaError::NotStrict(report.non_strict))
    }
}

/// [`strict_report_with`] on a [`Node`] tree.
///
/// # Errors
/// As [`strict_report`].
pub fn strict_report_tree<S: Text>(
    schema: &Node<S>,
    opts: &StrictOptions,
) -> Result<(Node<S>, Report), SchemaError> {
    run(schema, opts, true)
}

fn run<S: Text>(
    schema: &Node<S>,
    opts: &StrictOptions,
    report_lossy: bool,
) -> Result<(Node<S>, Report), SchemaError> {
    let Node::Object(root) = schema else {
        let mut report = ReportBuilder::default();
        report.issue(
            "",
            "",
            IssueKind::Invalid,
            "the schema is not a JSON object".into(),
        );
        return Ok((schema.clone(), report.finish()));
    };
    let title = root.get("title").and_then(Node::as_str).unwrap_or_default();
    let mut n = Normalizer {
        root: schema,
        root_map: root,
        opts,
        report_lossy,
        budget: Budget::new(opts.limits),
        report: ReportBuilder::default(),
        expanding: Vec::new(),
        loc: Location::new(title),
    };
    let out = n.root(root)?;
    Ok((out, n.report.finish()))
}

/// A definition being normalized or inlined: table (`""` for the root, `$defs`,
/// `definitions`) and name.
pub(crate) type DefId<'a> = (&'static str, Cow<'a, str>);

/// One normalization run.
pub(crate) struct Normalizer<'a, S> {
    root: &'a Node<S>,
    root_map: &'a Obj<S>,
    opts: &'a StrictOptions,
    /// Build the lossy-rewrite part of the report (`strict_report`); `strict` skips it.
    report_lossy: bool,
    budget: Budget,
    report: ReportBuilder,
    /// Definitions being normalized or inlined.
    expanding: Vec<DefId<'a>>,
    loc: Location,
}

impl<'a, S: Text> Normalizer<'a, S> {
    fn root(&mut self, root: &'a Obj<S>) -> Result<Node<S>, SchemaError> {
        self.expanding.push(("", Cow::Borrowed("")));
        let body = self.root_body(root)?;
        self.expanding.pop();
        let Node::Object(mut body) = body else {
            return Ok(body);
        };
        if body.get("type").and_then(Node::as_str) != Some("object") {
            self.issue(IssueKind::RootNotObject, || {
                "the root schema must be an object (type: object) in OpenAI strict mode".into()
            });
        }
        for (key, value) in root.iter() {
            let k = key.as_str();
            if k == "$defs" || k == "definitions" {
                let defs = self.definitions(k, value)?;
                body.insert(key.clone(), defs);
            }
        }
        // the root's keys in the root's order, then the added ones
        body.sort_like(root);
        Ok(Node::Object(body))
    }

    fn root_body(&mut self, root: &'a Obj<S>) -> Result<Node<S>, SchemaError> {
        if !matches!(root.get("$ref"), Some(Node::Str(_))) {
            self.enter(0)?;
            return self.node_map(root, 0, true);
        }
        // Strict mode needs an object at the root: inline the referenced definition (following
        // a chain of refs), the root's own keys winning.
        let mut combined: Obj<S> = root
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "$defs" | "definitions"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut seen: Vec<DefId<'a>> = Vec::new();
        let mut name = String::new();
        while let Some(Node::Str(r)) = combined.get("$ref") {
            let Some(target) = self.resolve(r.as_str()) else {
                break;
            };
            let Node::Object(tm) = target.value else {
                break;
            };
            if target.table.is_empty() || seen.iter().any(|id| target.is(id)) {
                break;
            }
            self.budget.tick(String::new)?;
            let id = target.id();
            let mut next = tm.clone();
            for (k, v) in combined {
                if k.as_str() != "$ref" {
                    next.insert(k, v);
                }
            }
            combined = next;
            name = id.1.clone().into_owned();
            seen.push(id);
        }
        if self.loc.field().is_empty() {
            let title = combined
                .get("title")
                .and_then(Node::as_str)
                .unwrap_or(&name);
            self.loc = Location::new(title);
        }
        let depth = self.expanding.len();
        self.expanding.extend(seen);
        let out = self
            .enter(0)
            .and_then(|()| self.node_map(&combined, 0, true));
        self.expanding.truncate(depth);
        out
    }

    fn definitions(&mut self, key: &str, defs: &'a Node<S>) -> Result<Node<S>, SchemaError> {
        let Node::Object(defs) = defs else {
            self.issue(IssueKind::Invalid, || format!("`{key}` is not an object"));
            return Ok(defs.clone());
        };
        let table = if key == "$defs" {
            "$defs"
        } else {
            "definitions"
        };
        let mut out = Obj::with_capacity(defs.len());
        for (name, def) in defs.iter() {
            let name_str = name.as_str();
            let title = def.get("title").and_then(Node::as_str).unwrap_or(name_str);
            let outer = self.loc.enter(table, name_str, title);
            self.expanding.push((table, Cow::Borrowed(name_str)));
            let result = self.node(def, 1);
            self.expanding.pop();
            self.loc.leave(outer);
            out.push_new(name.clone(), result?);
        }
        Ok(Node::Object(out))
    }

    /// Depth and node budget check for one node.
    fn enter(&mut self, depth: usize) -> Result<(), SchemaError> {
        let limit = self.budget.limits().max_depth;
        if depth > limit {
            return Err(SchemaError::TooDeep {
                limit,
                path: self.loc.pointer().to_owned(),
            });
        }
        let loc = &self.loc;
        self.budget.tick(|| loc.pointer().to_owned())
    }

    /// Record a construct strict mode cannot express (`reason` is only rendered once).
    fn issue(&mut self, kind: IssueKind, reason: impl FnOnce() -> String) {
        self.report
            .issue(self.loc.pointer(), self.loc.field(), kind, reason());
    }

    /// Record a lossy rewrite, when the report is wanted (`what` is rendered only then).
    fn lossy(&mut self, kind: RewriteKind, what: impl FnOnce() -> String) {
        if self.report_lossy {
            self.report
                .lossy(self.loc.pointer(), self.loc.field(), kind, what());
        }
    }
}
