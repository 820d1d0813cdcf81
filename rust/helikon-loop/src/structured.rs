//! Finalizing and repairing: validating the structured answer, one repair turn.
use serde_json::Value;

use crate::config::{LoopConfig, OutputType};
use crate::error::AgentError;
use crate::events::AgentEvent;
use crate::input::ModelResponse;
use crate::items::Item;
use crate::outcome::{NextAction, TransitionOutcome};
use crate::state::{FinalOutput, LoopState};
use crate::transition::{complete, fail, message_outputs};
use crate::usage::Usage;

/// Which constrained turn produced the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Finalizing,
    Repairing,
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
            Phase::Finalizing => "Finalizing",
            Phase::Repairing => "RepairingOutput",
        };
        let message = format!("internal: {state} without output type");
        return fail(AgentError::other(message), Vec::new());
    };
    let usage = usage + response.usage;
    let output = FinalOutput::from_items(&response.items);
    let errors = problems(&response, &output.text, out);
    let mut events = message_outputs(response.items);
    if errors.is_empty() {
        return complete(output, usage, events);
    }
    match phase {
        Phase::Finalizing => {
            events.push(AgentEvent::RepairStarted { attempt: 1 });
            let message = repair_message(&out.name, &errors);
            TransitionOutcome {
                next_state: LoopState::RepairingOutput { turn, usage },
                events,
                next_action: NextAction::CallModel {
                    request: Box::new(out.constrained_request(Some(message.clone()))),
                },
                conversation_appends: vec![message],
            }
        }
        Phase::Repairing => {
            let final_text = output.text;
            events.push(AgentEvent::StructuredOutputFailed {
                schema_errors: errors.clone(),
                final_text: final_text.clone(),
            });
            let error = AgentError::InvalidStructuredOutput {
                schema_errors: errors,
                final_text,
            };
            fail(error, events)
        }
    }
}

/// Why `response` is not a valid answer of type `out`; empty when it is.
fn problems(response: &ModelResponse, text: &str, out: &OutputType) -> Vec<String> {
    let calls: Vec<&str> = response
        .items
        .iter()
        .filter_map(|i| match i {
            Item::ToolCall(c) => Some(c.name.as_str()),
            _ => None,
        })
        .collect();
    if !calls.is_empty() {
        return vec![format!(
            "expected only a JSON answer, but the response called tools: {}",
            calls.join(", ")
        )];
    }
    if let Some(verdict) = &response.validation {
        return verdict.errors.clone();
    }
    match serde_json::from_str::<Value>(text.trim()) {
        Ok(value) => out.schema.validate(&value),
        Err(e) => vec![format!("response was not valid JSON: {e}")],
    }
}

/// The synthesized user message of the repair turn.
fn repair_message(type_name: &str, errors: &[String]) -> Item {
    let listed: Vec<String> = errors.iter().map(|e| format!("- {e}")).collect();
    Item::user_text(format!(
        "Your previous response did not match the required output type `{type_name}`.\n\
         Errors:\n{}\n\
         Reply again with only a JSON object that matches the schema, and no other text.",
        listed.join("\n")
    ))
}
