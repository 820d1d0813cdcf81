//! Widening a normalized schema so that it also accepts `null`.
use super::keywords::{ANNOTATIONS, SCALAR_TYPES};
use crate::tree::{Node, Obj, Text};

/// True if the schema visibly accepts `null` (type, enum, const or an `anyOf` member).
pub(crate) fn accepts_null<S: Text>(v: &Node<S>) -> bool {
    let Node::Object(m) = v else {
        return matches!(v, Node::Bool(true));
    };
    if m.is_empty() {
        return true;
    }
    match m.get("type") {
        Some(Node::Str(t)) if t.as_str() == "null" => return true,
        Some(Node::Array(ts)) if ts.iter().any(|t| t.as_str() == Some("null")) => return true,
        _ => {}
    }
    if matches!(m.get("const"), Some(Node::Null)) {
        return true;
    }
    if let Some(Node::Array(e)) = m.get("enum") {
        if e.iter().any(Node::is_null) {
            return true;
        }
    }
    if let Some(Node::Array(members)) = m.get("anyOf") {
        return members.iter().any(accepts_null);
    }
    false
}

/// `{"type": "null"}`.
pub(crate) fn null_schema<S: Text>() -> Node<S> {
    let mut m = Obj::with_capacity(1);
    m.push_new(S::from_static("type"), Node::text("null"));
    Node::Object(m)
}

/// Return `v` widened to also accept `null`, in the shape strict mode accepts:
/// scalars get a `["T", "null"]` type, unions get a `{"type": "null"}` member, anything else
/// (objects, arrays, refs, enums) is wrapped as `anyOf: [v, {"type": "null"}]`.
pub(crate) fn make_nullable<S: Text>(v: Node<S>) -> Node<S> {
    if accepts_null(&v) {
        return v;
    }
    let Node::Object(mut m) = v else {
        return v;
    };
    if let Some(Node::Array(members)) = m.get_mut("anyOf") {
        members.push(null_schema());
        return Node::Object(m);
    }
    let literal = m.contains_key("enum") || m.contains_key("const");
    if !literal && !m.contains_key("$ref") {
        match m.get_mut("type") {
            Some(ty @ Node::Str(_)) if ty.as_str().is_some_and(|t| SCALAR_TYPES.contains(&t)) => {
                let t = std::mem::replace(ty, Node::Null);
                *ty = Node::Array(vec![t, Node::text("null")]);
                return Node::Object(m);
            }
            Some(Node::Array(ts))
                if ts
                    .iter()
                    .all(|t| t.as_str().is_some_and(|t| SCALAR_TYPES.contains(&t))) =>
            {
                ts.push(Node::text("null"));
                return Node::Object(m);
            }
            _ => {}
        }
    }
    let mut outer = Obj::with_capacity(ANNOTATIONS.len() + 1);
    for key in ANNOTATIONS {
        if let Some(a) = m.shift_remove(key) {
            outer.push_new(S::from_static(key), a);
        }
    }
    outer.push_new(
        S::from_static("anyOf"),
        Node::Array(vec![Node::Object(m), null_schema()]),
    );
    Node::Object(outer)
}
