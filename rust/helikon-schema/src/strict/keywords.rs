//! Which keywords OpenAI strict mode accepts, and small JSON-type helpers.
use serde_json::Value;

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
pub(crate) fn type_includes(ty: Option<&Value>, name: &str) -> bool {
    match ty {
        Some(Value::String(t)) => t == name,
        Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str() == Some(name)),
        _ => false,
    }
}

/// The JSON-Schema type name of a JSON value.
pub(crate) fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) => {
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) {
                "integer"
            } else {
                "number"
            }
        }
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The `type` implied by a list of scalar literal values (`enum` / `const`), or `None` when a
/// value is an object or array.
pub(crate) fn type_of_literals<'v>(values: impl IntoIterator<Item = &'v Value>) -> Option<Value> {
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
        [one] => Some(Value::String((*one).to_owned())),
        many => Some(Value::Array(
            many.iter()
                .map(|t| Value::String((*t).to_owned()))
                .collect(),
        )),
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
pub(crate) fn short(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() <= 60 {
        return text;
    }
    let cut: String = text.chars().take(57).collect();
    format!("{cut}...")
}
