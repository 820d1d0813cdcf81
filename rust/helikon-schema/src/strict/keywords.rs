//! Which keywords OpenAI strict mode accepts, and small JSON-type helpers.
use crate::tree::{to_value, Node, Num, Text};

/// `format` values strict mode accepts on strings.
pub(crate) const STRING_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Value constraints strict mode accepts and that are copied unchanged.
pub(crate) const KEPT_CONSTRAINTS: &[&str] = &[
    "pattern",
    "multipleOf",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
];

/// Annotations strict mode accepts (copied unchanged, moved onto wrappers).
pub(crate) const ANNOTATIONS: &[&str] = &["title", "description"];

/// Scalar JSON-Schema type names (a `["T", "null"]` type array is enough to make them nullable).
pub(crate) const SCALAR_TYPES: &[&str] = &["string", "number", "integer", "boolean", "null"];

/// True if the `type` keyword value names `name` (as the string or inside an array).
pub(crate) fn type_includes<S: Text>(ty: Option<&Node<S>>, name: &str) -> bool {
    match ty {
        Some(Node::Str(t)) => t.as_str() == name,
        Some(Node::Array(ts)) => ts.iter().any(|t| t.as_str() == Some(name)),
        _ => false,
    }
}

/// The JSON-Schema type name of a JSON value.
pub(crate) fn type_of<S>(v: &Node<S>) -> &'static str {
    match v {
        Node::Null => "null",
        Node::Bool(_) => "boolean",
        Node::Num(Num::Pos(_) | Num::Neg(_)) => "integer",
        Node::Num(Num::Float(f)) => {
            if f.fract() == 0.0 {
                "integer"
            } else {
                "number"
            }
        }
        Node::Str(_) => "string",
        Node::Array(_) => "array",
        Node::Object(_) => "object",
    }
}

/// The `type` implied by a list of scalar literal values (`enum` / `const`), or `None` when a
/// value is an object or array.
pub(crate) fn type_of_literals<'v, S: Text + 'v>(
    values: impl IntoIterator<Item = &'v Node<S>>,
) -> Option<Node<S>> {
    let mut names: Vec<&'static str> = Vec::new();
    for v in values {
        let t = type_of(v);
        if t == "array" || t == "object" {
            return None;
        }
        if !names.contains(&t) {
            names.push(t);
        }
    }
    if names.contains(&"number") {
        names.retain(|t| *t != "integer");
    }
    match names.as_slice() {
        [] => None,
        [one] => Some(Node::text(one)),
        many => Some(Node::Array(many.iter().map(|t| Node::text(t)).collect())),
    }
}

/// Annotation-only keywords strict mode rejects; removing them never changes which values
/// validate, but they are still reported.
pub(crate) const DROPPED_ANNOTATIONS: &[&str] = &[
    "default",
    "examples",
    "example",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$schema",
    "$id",
    "$anchor",
    "discriminator",
    "contentMediaType",
    "contentEncoding",
];

/// A compact, bounded rendering of a JSON value for report texts.
pub(crate) fn short<S: Text>(v: &Node<S>) -> String {
    let text = to_value(v).to_string();
    if text.chars().count() <= 60 {
        return text;
    }
    let cut: String = text.chars().take(57).collect();
    format!("{cut}...")
}
