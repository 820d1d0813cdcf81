//! Structured output: validating the answer, the repair turns, and the one-call modes.
//!
//! An answer is the text of the response's last assistant message, or, in
//! [`OutputMode::Tool`], the arguments of the output tool's call. A valid answer ends the
//! run; an invalid one gets a repair turn (a constrained turn after a message listing the
//! errors: a user message, or the output call's error result) until `retries` repair turns
//! were spent, then the run fails with `InvalidStructuredOutput`.
use serde_json::Value;

use crate::config::{LoopConfig, OutputMode, OutputType};
use crate::content::ContentPart;
use crate::error::AgentError;
use crate::events::AgentEvent;
use crate::input::ModelResponse;
use crate::items::{Item, ToolCall, ToolResult};
use crate::outcome::{NextAction, TransitionOutcome};
use crate::state::{FinalOutput, LoopState};
use crate::transition::{call_model, complete, fail, message_outputs};
use crate::usage::Usage;

/// Which turn produced the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// A regular turn that answered without regular calls (one-call modes only).
    Open,
    Finalizing,
    /// The repair turn numbered `attempt` (from 1).
    Repairing(u32),
}

/// The text of the output tool call's result when the answer is accepted.
const ACCEPTED: &str = "Final result accepted.";
/// The result of a regular call made next to the output tool's call (it is not run).
const NOT_RUN: &str = "Not run: the final result was given in the same response.";

/// What a response answers with.
struct Answer {
    /// The answer's JSON text (the output call's arguments, serialized, or the message text).
    text: String,
    /// The output tool's call, in [`OutputMode::Tool`].
    call: Option<ToolCall>,
    /// The other calls' names.
    others: Vec<String>,
}

fn answer_of(items: &[Item], out: &OutputType) -> Answer {
    let mut call = None;
    let mut others = Vec::new();
    for item in items {
        if let Item::ToolCall(c) = item {
            if out.mode == OutputMode::Tool && c.name == out.tool_name && call.is_none() {
                call = Some(c.clone());
            } else {
                others.push(c.name.clone());
            }
        }
    }
    let text = match &call {
        Some(c) => c.args.to_string(),
        None => FinalOutput::from_items(items).text,
    };
    Answer { text, call, others }
}

/// Whether a regular turn's response is an answer the machine judges here: an output-tool
/// call (tool mode), or a text answer in a one-call mode.
pub(crate) fn answers_now(items: &[Item], config: &LoopConfig) -> bool {
    let Some(out) = &config.output_type else {
        return false;
    };
    let has_calls = items.iter().any(|i| matches!(i, Item::ToolCall(_)));
    match out.mode {
        OutputMode::Finalize => false,
        OutputMode::Native => !has_calls,
        OutputMode::Tool => !has_calls || answer_of(items, out).call.is_some(),
    }
}

pub(crate) fn on_final_response(
    phase: Phase,
    turn: u32,
    usage: Usage,
    response: ModelResponse,
    config: &LoopConfig,
) -> TransitionOutcome {
    let Some(out) = &config.output_type else {
        let state = match phase {
            Phase::Open => "CallingModel",
            Phase::Finalizing => "Finalizing",
            Phase::Repairing(_) => "RepairingOutput",
        };
        let message = format!("internal: {state} without output type");
        return fail(AgentError::other(message), Vec::new());
    };
    let usage = usage + response.usage;
    let answer = answer_of(&response.items, out);
    let errors = problems(phase, &response, &answer, out);
    if errors.is_empty() {
        return accept(response.items, answer, usage);
    }
    let attempt = match phase {
        Phase::Open if answer.call.is_none() && out.mode == OutputMode::Tool => {
            // a text answer that is not the output: ask for it, as finalize mode does
            let mut events = message_outputs(response.items);
            events.push(AgentEvent::TurnStarted { turn: turn + 1 });
            let state = LoopState::Finalizing {
                turn: turn + 1,
                usage,
            };
            return call_model(state, events, out.constrained_request(None));
        }
        Phase::Open | Phase::Finalizing => 1,
        Phase::Repairing(n) => n.saturating_add(1),
    };
    retry(attempt, turn, usage, response.items, answer, errors, out)
}

/// The run ends with `answer`: the message as it is, or, for an output-tool call, the calls
/// answered and the arguments' JSON as the final assistant message.
fn accept(items: Vec<Item>, answer: Answer, usage: Usage) -> TransitionOutcome {
    let Some(call) = answer.call else {
        let output = FinalOutput::from_items(&items);
        return complete(output, usage, message_outputs(items));
    };
    let (mut events, mut appends) = answer_calls(items, &call.call_id, ACCEPTED, false);
    let content = vec![ContentPart::text(answer.text.clone())];
    let message = Item::AssistantMessage {
        content: content.clone(),
        agent: None,
        provider_data: None,
    };
    events.push(AgentEvent::MessageOutput {
        item: message.clone(),
    });
    appends.push(message);
    let output = FinalOutput {
        text: answer.text,
        content,
    };
    let mut outcome = complete(output, usage, events);
    outcome.conversation_appends = appends;
    outcome
}

/// Events for a response with an output-tool call: messages and calls as they came, each
/// call answered (the output call with `text`, the others as not run). Returns the events
/// and the results to append.
fn answer_calls(
    items: Vec<Item>,
    output_call: &str,
    text: &str,
    is_error: bool,
) -> (Vec<AgentEvent>, Vec<Item>) {
    let mut events = Vec::with_capacity(items.len() * 2);
    let mut results = Vec::new();
    for item in items {
        match item {
            Item::AssistantMessage { .. } => events.push(AgentEvent::MessageOutput { item }),
            Item::ToolCall(call) => {
                let (body, error) = if call.call_id == output_call {
                    (text, is_error)
                } else {
                    (NOT_RUN, false)
                };
                let result = Item::ToolResult(ToolResult {
                    call_id: call.call_id.clone(),
                    content: vec![ContentPart::text(body)],
                    is_error: error,
                });
                events.push(AgentEvent::ToolCallItem {
                    item: Item::ToolCall(call),
                });
                events.push(AgentEvent::ToolOutputItem {
                    item: result.clone(),
                });
                results.push(result);
            }
            _ => {}
        }
    }
    (events, results)
}

/// Repair turn `attempt`, or the failure once `retries` repair turns were spent.
fn retry(
    attempt: u32,
    turn: u32,
    usage: Usage,
    items: Vec<Item>,
    answer: Answer,
    errors: Vec<String>,
    out: &OutputType,
) -> TransitionOutcome {
    if attempt > out.retries {
        let mut events = message_outputs(items);
        let final_text = answer.text;
        events.push(AgentEvent::StructuredOutputFailed {
            schema_errors: errors.clone(),
            final_text: final_text.clone(),
        });
        let error = AgentError::InvalidStructuredOutput {
            schema_errors: errors,
            final_text,
        };
        return fail(error, events);
    }
    let text = repair_text(&out.name, &errors);
    let (mut events, appends, message) = match &answer.call {
        Some(call) => {
            let (events, results) = answer_calls(items, &call.call_id, &text, true);
            let message = results
                .iter()
                .find(|r| matches!(r, Item::ToolResult(t) if t.call_id == call.call_id))
                .cloned();
            (events, results, message)
        }
        None => {
            let message = Item::user_text(text);
            (message_outputs(items), vec![message.clone()], Some(message))
        }
    };
    events.push(AgentEvent::RepairStarted { attempt });
    TransitionOutcome {
        next_state: LoopState::RepairingOutput {
            turn,
            usage,
            attempt,
        },
        events,
        next_action: NextAction::CallModel {
            request: Box::new(out.constrained_request(message)),
        },
        conversation_appends: appends,
    }
}

/// Why `answer` is not a valid answer of type `out`; empty when it is.
fn problems(
    phase: Phase,
    response: &ModelResponse,
    answer: &Answer,
    out: &OutputType,
) -> Vec<String> {
    if !answer.others.is_empty() && (phase != Phase::Open || answer.call.is_none()) {
        return vec![format!(
            "expected only a JSON answer, but the response called tools: {}",
            answer.others.join(", ")
        )];
    }
    if let Some(verdict) = &response.validation {
        return verdict.errors.clone();
    }
    match serde_json::from_str::<Value>(answer.text.trim()) {
        Ok(value) => out.schema.validate(&value),
        Err(e) => vec![format!("response was not valid JSON: {e}")],
    }
}

/// The text of a repair message (a user message, or the output call's error result).
fn repair_text(type_name: &str, errors: &[String]) -> String {
    let listed: Vec<String> = errors.iter().map(|e| format!("- {e}")).collect();
    format!(
        "Your previous response did not match the required output type `{type_name}`.\n\
         Errors:\n{}\n\
         Reply again with only a JSON object that matches the schema, and no other text.",
        listed.join("\n")
    )
}
