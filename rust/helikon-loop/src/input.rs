//! `TransitionInput`: what the driver feeds the machine after each side effect.
use serde::{Deserialize, Serialize};

use crate::content::ContentPart;
use crate::items::Item;
use crate::usage::Usage;

/// `"start"` | `{"model_response": {...}}` | `{"tool_results": [...]}` | `{"defer": {...}}`
/// | `{"decisions": [...]}` | `{"compaction_started": {...}}` |
/// `{"compaction_completed": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransitionInput {
    /// Begin (or resume) a turn.
    Start,
    /// The settled items of one model call.
    ModelResponse(ModelResponse),
    /// One outcome per tool call of the `ExecutingTools` state.
    ToolResults(Vec<ToolOutcome>),
    /// In `ExecutingTools`: some calls wait for a person. `results` hold the outcomes of the
    /// calls that were decided, `pending` the ids of the others.
    Defer(Deferral),
    /// In `NeedsApproval`: one decision per pending call.
    Decisions(Vec<Decision>),
    /// In `CallingModel`: the driver begins compacting the conversation.
    CompactionStarted(CompactionStart),
    /// In `Compacting`: the compaction finished.
    CompactionCompleted(CompactionEnd),
}

/// The `defer` input: which calls wait, and the outcomes of the rest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Deferral {
    /// Ids of the calls that wait for a decision (at least one).
    pub pending: Vec<String>,
    /// One outcome per call that does not wait.
    #[serde(default)]
    pub results: Vec<ToolOutcome>,
}

/// A person's answer for one pending call: `{"call_id", "decision": "approve"}`,
/// `{"call_id", "decision": "deny", "reason"}` or `{"call_id", "decision": "edit", "args"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    pub call_id: String,
    #[serde(flatten)]
    pub verdict: Verdict,
}

/// What was decided for a call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Verdict {
    /// Run the call as the model gave it.
    Approve,
    /// Do not run it; the model reads `approval denied: <reason>`.
    Deny { reason: String },
    /// Run it with these arguments instead.
    Edit { args: serde_json::Value },
}

/// The `compaction_started` input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompactionStart {
    /// The conversation's size in tokens before compaction.
    pub tokens_before: u64,
}

/// The `compaction_completed` input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompactionEnd {
    /// The conversation's size in tokens after compaction.
    pub tokens_after: u64,
    /// What the summarising model call cost (added to the run's total).
    #[serde(default)]
    pub usage: Usage,
}

impl TransitionInput {
    /// The variant name in snake_case, as used in `invalid transition:` messages.
    pub fn name(&self) -> &'static str {
        match self {
            TransitionInput::Start => "start",
            TransitionInput::ModelResponse(_) => "model_response",
            TransitionInput::ToolResults(_) => "tool_results",
            TransitionInput::Defer(_) => "defer",
            TransitionInput::Decisions(_) => "decisions",
            TransitionInput::CompactionStarted(_) => "compaction_started",
            TransitionInput::CompactionCompleted(_) => "compaction_completed",
        }
    }
}

/// One model call's result, aggregated by the driver.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelResponse {
    /// Assistant messages and tool calls in the order the model produced them. Other item
    /// kinds are ignored by the machine.
    pub items: Vec<Item>,
    #[serde(default)]
    pub usage: Usage,
    /// Recorded for the driver; the machine ignores it.
    #[serde(default)]
    pub finish_reason: String,
    /// The driver's own verdict on the final text (e.g. from pydantic). When present in a
    /// `Finalizing`/`RepairingOutput` state it replaces the built-in schema validation:
    /// empty `errors` = valid. Tool calls in the response fail validation regardless.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation: Option<Validation>,
}

/// An external validation verdict: the list of problems (empty when valid).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Validation {
    pub errors: Vec<String>,
}

/// The outcome of one tool call: `{"call_id", "ok": [parts]}` or `{"call_id", "error": str}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawOutcome", into = "RawOutcome")]
pub struct ToolOutcome {
    pub call_id: String,
    pub result: ToolOutcomeResult,
}

/// Success content or error text of a tool call.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcomeResult {
    Ok(Vec<ContentPart>),
    Error(String),
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOutcome {
    call_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ok: Option<Vec<ContentPart>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl TryFrom<RawOutcome> for ToolOutcome {
    type Error = String;

    fn try_from(raw: RawOutcome) -> Result<Self, String> {
        let result = match (raw.ok, raw.error) {
            (Some(parts), None) => ToolOutcomeResult::Ok(parts),
            (None, Some(error)) => ToolOutcomeResult::Error(error),
            _ => {
                return Err(format!(
                    "tool result `{}` needs exactly one of `ok` or `error`",
                    raw.call_id
                ))
            }
        };
        Ok(ToolOutcome {
            call_id: raw.call_id,
            result,
        })
    }
}

impl From<ToolOutcome> for RawOutcome {
    fn from(o: ToolOutcome) -> Self {
        let (ok, error) = match o.result {
            ToolOutcomeResult::Ok(parts) => (Some(parts), None),
            ToolOutcomeResult::Error(e) => (None, Some(e)),
        };
        RawOutcome {
            call_id: o.call_id,
            ok,
            error,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn inputs_round_trip() {
        for v in [
            json!("start"),
            json!({"tool_results": [
                {"call_id": "1", "ok": [{"type": "text", "text": "x"}]},
                {"call_id": "2", "error": "boom"},
            ]}),
            json!({"model_response": {
                "items": [{"type": "assistant_message", "content": [], "agent": null}],
                "usage": {"input_tokens": 1, "output_tokens": 2, "cached_input_tokens": 0,
                          "reasoning_tokens": 0, "total_tokens": 3},
                "finish_reason": "stop",
                "validation": {"errors": ["e"]},
            }}),
            json!({"defer": {"pending": ["2"], "results": [{"call_id": "1", "error": "x"}]}}),
            json!({"decisions": [
                {"call_id": "1", "decision": "approve"},
                {"call_id": "2", "decision": "deny", "reason": "no"},
                {"call_id": "3", "decision": "edit", "args": {"k": 1}},
            ]}),
            json!({"compaction_started": {"tokens_before": 900}}),
            json!({"compaction_completed": {"tokens_after": 100, "usage": {
                "input_tokens": 1, "output_tokens": 2, "cached_input_tokens": 0,
                "reasoning_tokens": 0, "total_tokens": 3}}}),
        ] {
            let input: TransitionInput = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(serde_json::to_value(&input).unwrap(), v);
        }
    }

    #[test]
    fn tool_outcome_needs_exactly_one_of_ok_or_error() {
        for v in [
            json!({"tool_results": [{"call_id": "1"}]}),
            json!({"tool_results": [{"call_id": "1", "ok": [], "error": "x"}]}),
        ] {
            assert!(serde_json::from_value::<TransitionInput>(v).is_err());
        }
    }

    #[test]
    fn a_decision_needs_a_known_verdict_and_its_field() {
        for v in [
            json!({"decisions": [{"call_id": "1", "decision": "maybe"}]}),
            json!({"decisions": [{"call_id": "1", "decision": "deny"}]}),
            json!({"decisions": [{"call_id": "1", "decision": "edit"}]}),
            json!({"decisions": [{"call_id": "1"}]}),
            json!({"defer": {"pending": ["1"], "extra": 1}}),
        ] {
            assert!(
                serde_json::from_value::<TransitionInput>(v.clone()).is_err(),
                "{v}"
            );
        }
    }

    #[test]
    fn unknown_inputs_are_rejected() {
        assert!(serde_json::from_value::<TransitionInput>(json!("stop")).is_err());
        assert!(serde_json::from_value::<TransitionInput>(json!({"x": 1})).is_err());
    }
}
