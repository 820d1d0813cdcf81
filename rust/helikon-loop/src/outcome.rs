//! `TransitionOutcome` and `NextAction`: what the driver does after a transition.
use serde::de::Error as _;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::events::AgentEvent;
use crate::items::{tool_call_items, Item, ToolCall};
use crate::state::LoopState;

/// The result of one transition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransitionOutcome {
    pub next_state: LoopState,
    /// Events to yield, in order.
    pub events: Vec<AgentEvent>,
    pub next_action: NextAction,
    /// Items the driver appends to its conversation before acting on `next_action`
    /// (today only the synthesized repair message).
    pub conversation_appends: Vec<Item>,
}

/// The side effect to run next, tagged by `action`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action")]
pub enum NextAction {
    /// Call the model, then feed back `model_response`.
    CallModel { request: Box<RequestPlan> },
    /// Run the calls (concurrently), then feed back `tool_results`, one per call.
    ExecuteTools {
        #[serde(with = "tool_call_items")]
        calls: Vec<ToolCall>,
    },
    /// Run `target` with the transcript held by the `ApplyingHandoff` state.
    Handoff { target: String },
    /// Pause: ask a person about `pending`, then feed back `decisions` (one per call).
    AwaitApproval {
        #[serde(with = "tool_call_items")]
        pending: Vec<ToolCall>,
    },
    /// Compact the conversation, then feed back `compaction_completed`.
    Compact,
    /// The state is terminal; stop driving.
    Terminate,
}

/// How to shape the next model request. Messages are the driver's conversation (plus
/// `conversation_appends`); the plan says which tools to offer and which format to demand.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestPlan {
    /// Names of the tools to advertise: real tools, then one transfer tool per handoff.
    pub tools: Vec<String>,
    /// Definitions of the synthetic transfer tools listed in `tools`.
    pub transfer_tool_defs: Vec<TransferToolDef>,
    pub response_format: ResponseFormat,
    /// True on constrained turns: drop any caller `tool_choice`.
    pub clear_tool_choice: bool,
    /// On a repair turn, the synthesized user message (also in `conversation_appends`).
    pub repair_message: Option<Item>,
}

/// A synthetic `transfer_to_<slug>` tool: no arguments, described by the target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransferToolDef {
    pub name: String,
    pub description: String,
    pub schema: Value,
}

/// `"unchanged"` (the caller's model settings as-is) or the injected JSON-schema format
/// `{"type": "json_schema", "name", "schema", "strict"}`.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseFormat {
    Unchanged,
    JsonSchema {
        name: String,
        schema: Value,
        strict: bool,
    },
}

impl Serialize for ResponseFormat {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ResponseFormat::Unchanged => serializer.serialize_str("unchanged"),
            ResponseFormat::JsonSchema {
                name,
                schema,
                strict,
            } => {
                let mut m = serializer.serialize_map(Some(4))?;
                m.serialize_entry("type", "json_schema")?;
                m.serialize_entry("name", name)?;
                m.serialize_entry("schema", schema)?;
                m.serialize_entry("strict", strict)?;
                m.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for ResponseFormat {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
        enum Tagged {
            JsonSchema {
                name: String,
                schema: Value,
                strict: bool,
            },
        }
        match Value::deserialize(deserializer)? {
            Value::String(s) if s == "unchanged" => Ok(ResponseFormat::Unchanged),
            v @ Value::Object(_) => match serde_json::from_value(v) {
                Ok(Tagged::JsonSchema {
                    name,
                    schema,
                    strict,
                }) => Ok(ResponseFormat::JsonSchema {
                    name,
                    schema,
                    strict,
                }),
                Err(e) => Err(D::Error::custom(e)),
            },
            _ => Err(D::Error::custom(
                "response_format must be \"unchanged\" or a json_schema object",
            )),
        }
    }
}
