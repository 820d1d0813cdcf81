//! Conversions between [`serde_json::Value`] and [`Node`].
use serde_json::{Map, Number, Value};

use super::{Node, Num, Obj, Text};

/// A tree whose strings borrow from `v` (no string is copied).
pub fn borrow(v: &Value) -> Node<&str> {
    match v {
        Value::Null => Node::Null,
        Value::Bool(b) => Node::Bool(*b),
        Value::Number(n) => Node::Num(num(n)),
        Value::String(s) => Node::Str(s.as_str()),
        Value::Array(a) => Node::Array(a.iter().map(borrow).collect()),
        Value::Object(m) => {
            let mut out = Obj::with_capacity(m.len());
            for (k, v) in m {
                out.push_new(k.as_str(), borrow(v));
            }
            Node::Object(out)
        }
    }
}

fn num(n: &Number) -> Num {
    if let Some(u) = n.as_u64() {
        Num::Pos(u)
    } else if let Some(i) = n.as_i64() {
        Num::Neg(i)
    } else {
        Num::Float(n.as_f64().unwrap_or_default())
    }
}

/// The tree as an owned [`Value`].
pub fn to_value<S: Text>(n: &Node<S>) -> Value {
    match n {
        Node::Null => Value::Null,
        Node::Bool(b) => Value::Bool(*b),
        Node::Num(Num::Pos(u)) => Value::Number((*u).into()),
        Node::Num(Num::Neg(i)) => Value::Number((*i).into()),
        Node::Num(Num::Float(f)) => Number::from_f64(*f).map_or(Value::Null, Value::Number),
        Node::Str(s) => Value::String(s.as_str().to_owned()),
        Node::Array(a) => Value::Array(a.iter().map(to_value).collect()),
        Node::Object(m) => {
            let mut out = Map::with_capacity(m.len());
            for (k, v) in m.iter() {
                out.insert(k.as_str().to_owned(), to_value(v));
            }
            Value::Object(out)
        }
    }
}
