//! Conversation items: the spec's tagged shapes (`{"type": "user_message", ...}`).
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::content::{text_of, ContentPart};

/// One conversation item, tagged by `type` in snake_case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Item {
    /// System instructions (or a compaction summary).
    System { content: Vec<ContentPart> },
    /// A user turn.
    UserMessage { content: Vec<ContentPart> },
    /// An assistant turn; `agent` names the agent that produced it (always serialized).
    AssistantMessage {
        content: Vec<ContentPart>,
        #[serde(default)]
        agent: Option<String>,
        /// Opaque provider state carried back to the same provider (response ids, thought
        /// signatures); never interpreted here. Omitted when absent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider_data: Option<Value>,
    },
    /// A tool call the model asked for.
    ToolCall(ToolCall),
    /// The result of a tool call.
    ToolResult(ToolResult),
}

impl Item {
    /// A user message holding one text part.
    pub fn user_text(text: impl Into<String>) -> Self {
        Item::UserMessage {
            content: vec![ContentPart::text(text)],
        }
    }

    /// The concatenated text of an assistant message, `None` for any other item.
    pub fn assistant_text(&self) -> Option<String> {
        match self {
            Item::AssistantMessage { content, .. } => Some(text_of(content)),
            _ => None,
        }
    }
}

/// A tool call: `{"call_id", "name", "args"}` (inside an [`Item`] it also has `"type"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub call_id: String,
    pub name: String,
    /// The parsed JSON arguments; `{}` when absent.
    #[serde(default = "empty_object")]
    pub args: Value,
    /// Opaque provider state for this call (e.g. a Gemini thought signature).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_data: Option<Value>,
}

/// A tool result; `is_error` marks an error outcome fed back to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    pub call_id: String,
    pub content: Vec<ContentPart>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub is_error: bool,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_false(b: &bool) -> bool {
    !*b
}

/// Serde adapter for `Vec<ToolCall>` fields written as tool_call items.
///
/// Serializes each call with `"type": "tool_call"`; deserializing accepts the tag or its
/// absence (a bare `{"call_id", "name", "args"}`), and rejects any other tag.
pub mod tool_call_items {
    use super::{ToolCall, Value};
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize)]
    struct Out<'a> {
        #[serde(rename = "type")]
        kind: &'static str,
        call_id: &'a str,
        name: &'a str,
        args: &'a Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        provider_data: &'a Option<Value>,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct In {
        #[serde(rename = "type", default)]
        kind: Option<String>,
        call_id: String,
        name: String,
        #[serde(default = "super::empty_object")]
        args: Value,
        #[serde(default)]
        provider_data: Option<Value>,
    }

    pub fn serialize<S: Serializer>(calls: &[ToolCall], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(calls.iter().map(|c| Out {
            kind: "tool_call",
            call_id: &c.call_id,
            name: &c.name,
            args: &c.args,
            provider_data: &c.provider_data,
        }))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ToolCall>, D::Error> {
        let raw = Vec::<In>::deserialize(d)?;
        raw.into_iter()
            .map(|c| match c.kind.as_deref() {
                None | Some("tool_call") => Ok(ToolCall {
                    call_id: c.call_id,
                    name: c.name,
                    args: c.args,
                    provider_data: c.provider_data,
                }),
                Some(other) => Err(D::Error::custom(format!(
                    "expected a tool_call item, found type `{other}`"
                ))),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn items_round_trip_in_the_spec_shapes() {
        let items = json!([
            {"type": "system", "content": [{"type": "text", "text": "sys"}]},
            {"type": "user_message", "content": [{"type": "text", "text": "hi"}]},
            {"type": "assistant_message", "content": [], "agent": null},
            {"type": "assistant_message", "content": [{"type": "text", "text": "x"}],
             "agent": "a"},
            {"type": "tool_call", "call_id": "1", "name": "n", "args": {"k": [1]}},
            {"type": "tool_result", "call_id": "1", "content": [], "is_error": true},
            {"type": "tool_result", "call_id": "2", "content": []},
        ]);
        let parsed: Vec<Item> = serde_json::from_value(items.clone()).unwrap();
        assert_eq!(serde_json::to_value(&parsed).unwrap(), items);
    }

    #[test]
    fn defaults_fill_missing_agent_args_and_is_error() {
        let parsed: Vec<Item> = serde_json::from_value(json!([
            {"type": "assistant_message", "content": []},
            {"type": "tool_call", "call_id": "1", "name": "n"},
            {"type": "tool_result", "call_id": "1", "content": [], "is_error": false},
        ]))
        .unwrap();
        assert_eq!(
            serde_json::to_value(&parsed).unwrap(),
            json!([
                {"type": "assistant_message", "content": [], "agent": null},
                {"type": "tool_call", "call_id": "1", "name": "n", "args": {}},
                {"type": "tool_result", "call_id": "1", "content": []},
            ])
        );
    }

    #[test]
    fn unknown_item_types_are_rejected() {
        let err = serde_json::from_value::<Item>(json!({"type": "bogus"})).unwrap_err();
        assert!(err.to_string().contains("bogus"), "{err}");
    }

    #[derive(Debug, Serialize, Deserialize)]
    struct Calls {
        #[serde(with = "tool_call_items")]
        calls: Vec<ToolCall>,
    }

    #[test]
    fn tool_call_items_accept_a_missing_tag_and_write_it() {
        let c: Calls = serde_json::from_value(json!({"calls": [
            {"call_id": "1", "name": "a", "args": {}},
            {"type": "tool_call", "call_id": "2", "name": "b"},
        ]}))
        .unwrap();
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            json!({"calls": [
                {"type": "tool_call", "call_id": "1", "name": "a", "args": {}},
                {"type": "tool_call", "call_id": "2", "name": "b", "args": {}},
            ]})
        );
    }

    #[test]
    fn tool_call_items_reject_other_tags_and_fields() {
        let bad_tag = json!({"calls": [{"type": "tool_result", "call_id": "1", "name": "a"}]});
        assert!(serde_json::from_value::<Calls>(bad_tag).is_err());
        let extra = json!({"calls": [{"call_id": "1", "name": "a", "content": []}]});
        assert!(serde_json::from_value::<Calls>(extra).is_err());
    }
}
