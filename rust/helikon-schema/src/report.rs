//! What a strict normalization changed (lossy rewrites) and what it could not express.
use std::collections::HashSet;

use serde::Serialize;

/// The kind of a lossy rewrite, stable for machine use (`snake_case` in JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RewriteKind {
    /// An optional property became required and nullable: the model sends `null` for absent.
    OptionalToNullable,
    /// An optional property became required (reference mode, type unchanged).
    OptionalToRequired,
    /// A keyword strict mode does not support was removed (constraint or annotation).
    KeywordRemoved,
    /// A `format` value strict mode does not support was removed.
    FormatRemoved,
    /// `oneOf` became `anyOf` (exclusivity is no longer enforced).
    OneOfToAnyOf,
    /// A tuple (`prefixItems` / array-form `items`) became an array of a union.
    TupleToArray,
    /// A missing `type` was inferred from `properties` or `items`.
    TypeInferred,
}

impl RewriteKind {
    /// The `snake_case` name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OptionalToNullable => "optional_to_nullable",
            Self::OptionalToRequired => "optional_to_required",
            Self::KeywordRemoved => "keyword_removed",
            Self::FormatRemoved => "format_removed",
            Self::OneOfToAnyOf => "one_of_to_any_of",
            Self::TupleToArray => "tuple_to_array",
            Self::TypeInferred => "type_inferred",
        }
    }
}

/// The kind of a construct strict mode cannot express, stable for machine use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IssueKind {
    /// An object with no fixed properties (`dict`, `{"type": "object"}`).
    FreeFormObject,
    /// An object whose values follow a schema under arbitrary keys (`dict[str, T]`).
    MapObject,
    /// An object with fixed properties that also allows extra keys (`extra="allow"`).
    ExtraProperties,
    /// `patternProperties`.
    PatternProperties,
    /// A value of any type (`typing.Any`, `{}`, `true`).
    Unconstrained,
    /// An array without an item schema.
    ArrayWithoutItems,
    /// A `$ref` this normalizer cannot resolve.
    UnresolvableRef,
    /// A `$ref` to a recursive definition carrying sibling constraints.
    RecursiveRefSiblings,
    /// An `allOf` whose members cannot be merged into one object.
    AllOf,
    /// The root is not an object schema.
    RootNotObject,
    /// A value that is not a valid schema (wrong JSON type for a keyword or node).
    Invalid,
}

impl IssueKind {
    /// The `snake_case` name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::FreeFormObject => "free_form_object",
            Self::MapObject => "map_object",
            Self::ExtraProperties => "extra_properties",
            Self::PatternProperties => "pattern_properties",
            Self::Unconstrained => "unconstrained",
            Self::ArrayWithoutItems => "array_without_items",
            Self::UnresolvableRef => "unresolvable_ref",
            Self::RecursiveRefSiblings => "recursive_ref_siblings",
            Self::AllOf => "all_of",
            Self::RootNotObject => "root_not_object",
            Self::Invalid => "invalid",
        }
    }

    /// How a caller gets past this construct.
    pub fn hint(self) -> &'static str {
        match self {
            Self::FreeFormObject => "set strict=False or give the field a fixed shape",
            Self::MapObject => "set strict=False or use a list of key/value models",
            Self::ExtraProperties => "set strict=False or forbid extra keys",
            Self::Unconstrained | Self::ArrayWithoutItems => {
                "set strict=False or give the field a concrete type"
            }
            Self::RootNotObject => "set strict=False or wrap the value in a model",
            _ => "set strict=False",
        }
    }
}

/// One lossy rewrite: the output accepts different values than the input did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rewrite {
    /// JSON pointer into the input schema (`/properties/meta`, `/$defs/Addr/properties/zip`).
    pub path: String,
    /// Dotted field name (`Ticket.meta`); empty for an untitled root.
    pub field: String,
    /// Machine-readable kind.
    pub kind: RewriteKind,
    /// What was done, in words.
    pub what: String,
}

/// One construct that OpenAI strict mode cannot express.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Issue {
    /// JSON pointer into the input schema.
    pub path: String,
    /// Dotted field name (`Ticket.meta`); empty for an untitled root.
    pub field: String,
    /// Machine-readable kind.
    pub kind: IssueKind,
    /// Why it cannot be strict.
    pub reason: String,
}

impl Issue {
    /// The field name, or `<root>` for an untitled root.
    pub fn display_field(&self) -> &str {
        if self.field.is_empty() {
            "<root>"
        } else {
            &self.field
        }
    }

    /// A one-line message naming the field, the reason, the way out and the schema path.
    pub fn message(&self) -> String {
        let path = if self.path.is_empty() {
            "/"
        } else {
            &self.path
        };
        format!(
            "{}: {}; {} (schema path {})",
            self.display_field(),
            self.reason,
            self.kind.hint(),
            path
        )
    }
}

/// Everything a strict normalization changed or could not express.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    /// Rewrites that change which values validate (or drop information).
    pub lossy: Vec<Rewrite>,
    /// Constructs strict mode cannot express; non-empty means "send `strict: false`".
    pub non_strict: Vec<Issue>,
}

impl Report {
    /// True when the normalized schema can be sent with `strict: true`.
    pub fn is_strict(&self) -> bool {
        self.non_strict.is_empty()
    }
}

/// Below this many entries a duplicate is found by scanning them (no hashing, no copies).
const SCAN_BELOW: usize = 16;

/// Collects entries once each (a definition inlined twice reports once).
#[derive(Debug, Default)]
pub(crate) struct ReportBuilder {
    report: Report,
    /// `(path, kind, text)` of every lossy entry, once there are [`SCAN_BELOW`] of them.
    lossy_seen: Option<HashSet<(String, &'static str, String)>>,
    /// The same for the non-strict entries.
    issues_seen: Option<HashSet<(String, &'static str, String)>>,
}

/// True if `(path, kind, text)` is already among `existing`; records it otherwise.
fn seen_before<'e>(
    existing: impl ExactSizeIterator<Item = (&'e str, &'static str, &'e str)>,
    set: &mut Option<HashSet<(String, &'static str, String)>>,
    (path, kind, text): (&str, &'static str, &str),
) -> bool {
    if set.is_none() {
        if existing.len() < SCAN_BELOW {
            let mut existing = existing;
            return existing.any(|(p, k, t)| k == kind && p == path && t == text);
        }
        *set = Some(
            existing
                .map(|(p, k, t)| (p.to_owned(), k, t.to_owned()))
                .collect(),
        );
    }
    match set {
        Some(set) => !set.insert((path.to_owned(), kind, text.to_owned())),
        None => false,
    }
}

impl ReportBuilder {
    pub(crate) fn lossy(&mut self, path: &str, field: &str, kind: RewriteKind, what: String) {
        let existing = self
            .report
            .lossy
            .iter()
            .map(|r| (r.path.as_str(), r.kind.as_str(), r.what.as_str()));
        if !seen_before(existing, &mut self.lossy_seen, (path, kind.as_str(), &what)) {
            self.report.lossy.push(Rewrite {
                path: path.to_owned(),
                field: field.to_owned(),
                kind,
                what,
            });
        }
    }

    pub(crate) fn issue(&mut self, path: &str, field: &str, kind: IssueKind, reason: String) {
        let existing = self
            .report
            .non_strict
            .iter()
            .map(|i| (i.path.as_str(), i.kind.as_str(), i.reason.as_str()));
        if !seen_before(
            existing,
            &mut self.issues_seen,
            (path, kind.as_str(), &reason),
        ) {
            self.report.non_strict.push(Issue {
                path: path.to_owned(),
                field: field.to_owned(),
                kind,
                reason,
            });
        }
    }

    pub(crate) fn finish(self) -> Report {
        self.report
    }
}
