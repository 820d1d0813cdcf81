//! The rule on `serde_json::Value`: items in their tagged JSON form (`{"type": "user_message",
//! "content": [...]}`, `{"type": "tool_call", "name": ..., "args": ...}`), as the conformance
//! vectors write them.
//!
//! A mapping's `text` and `name` count as `str(value or "")` would in Python: a string its
//! scalar values, `null`, `false`, `0`, `""` and empty containers zero, another value its
//! compact JSON (a number's digits). Missing `args` count as `null`.

use serde_json::Value;

use crate::json::{json_len, string_len, JsonNode, JsonView};
use crate::walk::{item_chars, Form, Level, Node, TooDeep};

/// Characters of a conversation in its tagged JSON form (`items` an array of items).
///
/// ```
/// let items = serde_json::json!([
///     {"type": "user_message", "content": [{"type": "text", "text": "hello"}]},
///     {"type": "tool_call", "call_id": "c", "name": "f", "args": {"a": 1}},
/// ]);
/// assert_eq!(helikon_tokens::value::conversation_chars(&items), Ok(5 + 1 + 7));
/// ```
///
/// # Errors
/// [`TooDeep`] for `tool_result` parts nested past [`crate::MAX_PART_DEPTH`].
pub fn conversation_chars(items: &Value) -> Result<usize, TooDeep> {
    let mut total = 0usize;
    if let Value::Array(list) = items {
        for item in list {
            total = total.saturating_add(item_chars(&Json(item))?);
        }
    }
    Ok(total)
}

/// A `serde_json::Value` read by the rule.
#[derive(Clone, Copy)]
pub struct Json<'a>(pub &'a Value);

fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(flag) => *flag,
        Value::Number(n) => n.as_f64().is_some_and(|x| x != 0.0),
        Value::String(text) => !text.is_empty(),
        Value::Array(list) => !list.is_empty(),
        Value::Object(map) => !map.is_empty(),
    }
}

/// `len(str(value or ""))`.
fn or_empty_len(value: Option<&Value>) -> usize {
    match value {
        Some(Value::String(text)) => text.chars().count(),
        Some(other) if truthy(other) => other.to_string().chars().count(),
        _ => 0,
    }
}

impl Node for Json<'_> {
    type Error = TooDeep;

    fn form(&self) -> Form {
        Form::Mapping
    }

    fn tag(&self) -> Result<Option<crate::Tag>, TooDeep> {
        Ok(Some(match self.0.get("type") {
            Some(Value::String(name)) => crate::Tag::of(name),
            _ => crate::Tag::Other,
        }))
    }

    fn text_chars(&self) -> Result<usize, TooDeep> {
        Ok(or_empty_len(self.0.get("text")))
    }

    fn name_chars(&self) -> Result<usize, TooDeep> {
        Ok(or_empty_len(self.0.get("name")))
    }

    fn args_chars(&self) -> Result<usize, TooDeep> {
        json_len(&Arg::Value(self.0.get("args").unwrap_or(&Value::Null)), 0)
    }

    fn content_chars(
        &self,
        _level: Level,
        visit: &mut dyn FnMut(&Self) -> Result<usize, TooDeep>,
    ) -> Result<usize, TooDeep> {
        let mut total = 0usize;
        if let Some(Value::Array(parts)) = self.0.get("content") {
            for part in parts {
                total = total.saturating_add(visit(&Json(part))?);
            }
        }
        Ok(total)
    }
}

/// A JSON value or object key, measured by [`json_len`].
#[derive(Clone, Copy)]
pub enum Arg<'a> {
    /// A value.
    Value(&'a Value),
    /// An object key.
    Key(&'a str),
}

impl JsonNode for Arg<'_> {
    type Error = TooDeep;

    fn view(&self) -> Result<JsonView<Self>, TooDeep> {
        let value = match self {
            Arg::Key(key) => {
                return Ok(JsonView::Str(string_len(
                    key.chars().count(),
                    key.as_bytes(),
                )))
            }
            Arg::Value(value) => value,
        };
        Ok(match value {
            Value::Null => JsonView::Null,
            Value::Bool(flag) => JsonView::Bool(*flag),
            Value::Number(n) => match n.as_i64() {
                Some(i) => JsonView::Int(i),
                None if n.is_f64() => JsonView::Float(n.as_f64().unwrap_or(f64::NAN)),
                None => JsonView::Measured(n.to_string().len()),
            },
            Value::String(text) => JsonView::Str(string_len(text.chars().count(), text.as_bytes())),
            Value::Array(list) => JsonView::Array(list.iter().map(Arg::Value).collect()),
            Value::Object(map) => JsonView::Object(
                map.iter()
                    .map(|(key, value)| (Arg::Key(key), Arg::Value(value)))
                    .collect(),
            ),
        })
    }

    fn fallback_len(&self) -> Result<usize, TooDeep> {
        Ok(match self {
            Arg::Key(key) => Value::String((*key).to_owned()).to_string().chars().count(),
            Arg::Value(value) => value.to_string().chars().count(),
        })
    }
}
