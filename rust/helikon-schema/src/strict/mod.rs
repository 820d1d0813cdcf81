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
mod keywords;
mod node;
mod nullable;
mod refs;

use serde_json::{Map, Value};

use crate::budget::{Budget, Limits};
use crate::error::SchemaError;
use crate::location::{escape_segment, Location};
use crate::report::{IssueKind, Report, ReportBuilder};

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
    let (out, report) = strict_report_with(schema, opts)?;
    if report.non_strict.is_empty() {
        Ok(out)
    } else {
        Err(SchemaError::NotStrict(report.non_strict))
    }
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
    let Value::Object(root) = schema else {
        let mut report = ReportBuilder::default();
        report.issue(
            "",
            "",
            IssueKind::Invalid,
            "the schema is not a JSON object".into(),
        );
        return Ok((schema.clone(), report.finish()));
    };
    let title = root
        .get("title")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut n = Normalizer {
        root: schema,
        root_map: root,
        opts,
        budget: Budget::new(opts.limits),
        report: ReportBuilder::default(),
        expanding: Vec::new(),
        loc: Location::new(title),
    };
    let out = n.root(root)?;
    Ok((out, n.report.finish()))
}

/// One normalization run.
pub(crate) struct Normalizer<'a> {
    root: &'a Value,
    root_map: &'a Map<String, Value>,
    opts: &'a StrictOptions,
    budget: Budget,
    report: ReportBuilder,
    /// Ids (`#`, `$defs/NAME`, `definitions/NAME`) of definitions being normalized or inlined.
    expanding: Vec<String>,
    loc: Location,
}

impl<'a> Normalizer<'a> {
    fn root(&mut self, root: &'a Map<String, Value>) -> Result<Value, SchemaError> {
        self.expanding.push("#".into());
        let body = self.root_body(root)?;
        self.expanding.pop();
        let Value::Object(mut body) = body else {
            return Ok(body);
        };
        if body.get("type").and_then(Value::as_str) != Some("object") {
            self.issue(
                IssueKind::RootNotObject,
                "the root schema must be an object (type: object) in OpenAI strict mode".into(),
            );
        }
        let mut out = Map::new();
        for (key, value) in root {
            if key == "$defs" || key == "definitions" {
                body.shift_remove(key);
                let defs = self.definitions(key, value)?;
                out.insert(key.clone(), defs);
            } else if let Some(v) = body.shift_remove(key) {
                out.insert(key.clone(), v);
            }
        }
        out.extend(body);
        Ok(Value::Object(out))
    }

    fn root_body(&mut self, root: &'a Map<String, Value>) -> Result<Value, SchemaError> {
        if !matches!(root.get("$ref"), Some(Value::String(_))) {
            self.enter(0)?;
            return self.node_map(root, 0, true);
        }
        // Strict mode needs an object at the root: inline the referenced definition (following
        // a chain of refs), the root's own keys winning.
        let mut combined: Map<String, Value> = root
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "$defs" | "definitions"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let mut seen: Vec<String> = Vec::new();
        let mut name = String::new();
        while let Some(Value::String(r)) = combined.get("$ref") {
            let Some(target) = self.resolve(r) else { break };
            let Value::Object(tm) = target.value else {
                break;
            };
            if target.id == "#" || seen.contains(&target.id) {
                break;
            }
            self.budget.tick(String::new)?;
            let mut next = tm.clone();
            for (k, v) in combined {
                if k != "$ref" {
                    next.insert(k, v);
                }
            }
            combined = next;
            seen.push(target.id);
            name = target.name;
        }
        if self.loc.field().is_empty() {
            let title = combined
                .get("title")
                .and_then(Value::as_str)
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

    fn definitions(&mut self, key: &str, defs: &'a Value) -> Result<Value, SchemaError> {
        let Value::Object(defs) = defs else {
            self.issue(IssueKind::Invalid, format!("`{key}` is not an object"));
            return Ok(defs.clone());
        };
        let mut out = Map::new();
        for (name, def) in defs {
            let title = def.get("title").and_then(Value::as_str).unwrap_or(name);
            let saved = self
                .loc
                .replace(format!("/{key}/{}", escape_segment(name)), title.to_owned());
            self.expanding.push(format!("{key}/{name}"));
            let result = self.node(def, 1);
            self.expanding.pop();
            self.loc.restore(saved);
            out.insert(name.clone(), result?);
        }
        Ok(Value::Object(out))
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

    fn issue(&mut self, kind: IssueKind, reason: String) {
        self.report
            .issue(self.loc.pointer(), self.loc.field(), kind, reason);
    }

    fn lossy(&mut self, kind: crate::report::RewriteKind, what: String) {
        self.report
            .lossy(self.loc.pointer(), self.loc.field(), kind, what);
    }
}
