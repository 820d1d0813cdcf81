//! Widening a normalized schema so that it also accepts `null`.
use serde_json::{json, Map, Value};

use super::keywords::{ANNOTATIONS, SCALAR_TYPES};

/// True if the schema visibly accepts `null` (type, enum, const or an `anyOf` member).
pub(crate) fn accepts_null(v: &Value) -> bool {
    let Value::Object(m) = v else {
        return matches!(v, Value::Bool(true));
    };
    if m.is_empty() {
        return true;
    }
    match m.get("type") {
        Some(Value::String(t)) if t == "null" => return true,
        Some(Value::Array(ts)) if ts.iter().any(|t| t.as_str() == Some("null")) => return true,
        _ => {}
    }
    if matches!(m.get("const"), Some(Value::Null)) {
        return true;
    }
    if let Some(Value::Array(e)) = m.get("enum") {
        if e.iter().any(Value::is_null) {
            return true;
        }
    }
    if let Some(Value::Array(members)) = m.get("anyOf") {
        return members.iter().any(accepts_null);
    }
    false
}

/// Return `v` widened to also accept `null`, in the shape strict mode accepts:
/// scalars get a `["T", "null"]` type, unions get a `{"type": "null"}` member, anything else
/// (objects, arrays, refs, enums) is wrapped as `anyOf: [v, {"type": "null"}]`.
pub(crate) fn make_nullable(v: Value) -> Value {
    if accepts_null(&v) {
        return v;
    }
    let Value::Object(mut m) = v else {
        return v;
    };
    if let Some(Value::Array(members)) = m.get_mut("anyOf") {
        members.push(json!({"type": "null"}));
        return Value::Object(m);
    }
    let literal = m.contains_key("enum") || m.contains_key("const");
    if !literal && !m.contains_key("$ref") {
        match m.get_mut("type") {
            Some(Value::String(t)) if SCALAR_TYPES.contains(&t.as_str()) => {
                let t = std::mem::take(t);
                m.insert("type".into(), json!([t, "null"]));
                return Value::Object(m);
            }
            Some(Value::Array(ts))
                if ts
                    .iter()
                    .all(|t| t.as_str().is_some_and(|t| SCALAR_TYPES.contains(&t))) =>
            {
                ts.push(json!("null"));
                return Value::Object(m);
            }
            _ => {}
        }
    }
    let mut outer = Map::new();
    for key in ANNOTATIONS {
        if let Some(a) = m.shift_remove(*key) {
            outer.insert((*key).to_owned(), a);
        }
    }
    outer.insert("anyOf".into(), json!([Value::Object(m), {"type": "null"}]));
    Value::Object(outer)
}
