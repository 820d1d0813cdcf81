//! The transition function: `(state, input, ctx) -> outcome`. Pure: no IO, clock or RNG.
use crate::approval::{on_decisions, on_defer};
use crate::compaction::{on_compaction_completed, on_compaction_started};
use crate::config::LoopConfig;
use crate::error::AgentError;
use crate::events::AgentEvent;
use crate::handoff::transcript;
use crate::input::{ModelResponse, ToolOutcome, ToolOutcomeResult, TransitionInput};
use crate::items::{Item, ToolCall, ToolResult};
use crate::outcome::{NextAction, TransitionOutcome};
use crate::state::{FinalOutput, LoopState, PendingHandoff};
use crate::structured::{answers_now, on_final_response, Phase};
use crate::usage::Usage;
use crate::ContentPart;

/// Everything a transition reads besides the state and the input.
#[derive(Debug, Clone, Copy)]
pub struct TransitionCtx<'a> {
    pub config: &'a LoopConfig,
    /// The driver's conversation so far. Read only to build a handoff transcript, so a driver
    /// may pass an empty slice whenever no handoff is possible (see
    /// [`crate::needs_conversation`]).
    pub conversation: &'a [Item],
}

/// Advance the machine by one input.
///
/// Cost is O(items in `input`) plus, when a handoff is taken, O(conversation) for the
/// transcript. Never panics; a state/input pair the machine does not drive ends in
/// `Failed(Other)` with a message starting `invalid transition:`.
pub fn transition(
    state: &LoopState,
    input: TransitionInput,
    ctx: &TransitionCtx<'_>,
) -> TransitionOutcome {
    use LoopState as S;
    use TransitionInput as I;
    let config = ctx.config;
    match (state, input) {
        (S::CallingModel { turn, .. }, _) if *turn >= config.max_turns => fail(
            AgentError::MaxTurnsExceeded {
                max_turns: config.max_turns,
            },
            Vec::new(),
        ),
        (S::CallingModel { turn, usage }, I::Start) => start(*turn, *usage, config),
        (S::CallingModel { turn, usage }, I::ModelResponse(response)) => {
            on_model_response(*turn, *usage, response, ctx)
        }
        (
            S::ExecutingTools {
                turn,
                calls,
                usage,
                handoff,
            },
            I::ToolResults(results),
        ) => on_tool_results(*turn, calls, *usage, results, handoff.as_ref(), config),
        (S::Finalizing { turn, usage }, I::ModelResponse(response)) => {
            on_final_response(Phase::Finalizing, *turn, *usage, response, config)
        }
        (
            S::RepairingOutput {
                turn,
                usage,
                attempt,
            },
            I::ModelResponse(response),
        ) => on_final_response(Phase::Repairing(*attempt), *turn, *usage, response, config),
        (
            S::ExecutingTools {
                turn,
                calls,
                usage,
                handoff,
            },
            I::Defer(deferral),
        ) => on_defer(*turn, calls, *usage, deferral, handoff.clone()),
        (
            S::NeedsApproval {
                turn,
                pending,
                usage,
                handoff,
            },
            I::Decisions(decisions),
        ) => on_decisions(*turn, pending, *usage, decisions, handoff.as_ref(), config),
        (S::CallingModel { turn, usage }, I::CompactionStarted(start)) => {
            on_compaction_started(*turn, *usage, start)
        }
        (
            S::Compacting {
                turn,
                usage,
                tokens_before,
            },
            I::CompactionCompleted(end),
        ) => on_compaction_completed(*turn, *usage, *tokens_before, end, config),
        // `start` does not leave a pause: the vectors pin these two as not implemented.
        (S::Compacting { .. }, I::Start) => not_implemented("compaction"),
        (S::NeedsApproval { .. }, I::Start) => not_implemented("approval"),
        (state, input) => fail(
            AgentError::invalid_transition(state.name(), input.name()),
            Vec::new(),
        ),
    }
}

/// A terminal failure: `events` then `RunFailed`, state `Failed`, action `Terminate`.
pub(crate) fn fail(error: AgentError, mut events: Vec<AgentEvent>) -> TransitionOutcome {
    events.push(AgentEvent::RunFailed {
        error: error.clone(),
    });
    TransitionOutcome {
        next_state: LoopState::Failed { error },
        events,
        next_action: NextAction::Terminate,
        conversation_appends: Vec::new(),
    }
}

/// A terminal success: `events` then `RunCompleted`, state `Done`, action `Terminate`.
pub(crate) fn complete(
    output: FinalOutput,
    usage: Usage,
    mut events: Vec<AgentEvent>,
) -> TransitionOutcome {
    events.push(AgentEvent::RunCompleted { usage });
    TransitionOutcome {
        next_state: LoopState::Done { output, usage },
        events,
        next_action: NextAction::Terminate,
        conversation_appends: Vec::new(),
    }
}

fn not_implemented(feature: &str) -> TransitionOutcome {
    let feature = feature.to_owned();
    fail(AgentError::NotImplemented { feature }, Vec::new())
}

pub(crate) fn call_model(
    next_state: LoopState,
    events: Vec<AgentEvent>,
    request: crate::RequestPlan,
) -> TransitionOutcome {
    TransitionOutcome {
        next_state,
        events,
        next_action: NextAction::CallModel {
            request: Box::new(request),
        },
        conversation_appends: Vec::new(),
    }
}

fn start(turn: u32, usage: Usage, config: &LoopConfig) -> TransitionOutcome {
    let events = vec![AgentEvent::TurnStarted { turn }];
    match &config.output_type {
        // With no tools and no handoffs the first turn is the constrained one; a handoff is a
        // tool the model must be offered, so an agent with handoffs starts with a plain turn.
        Some(out) if config.tools.is_empty() && config.handoffs.is_empty() => call_model(
            LoopState::Finalizing { turn, usage },
            events,
            out.constrained_request(None),
        ),
        _ => call_model(
            LoopState::CallingModel { turn, usage },
            events,
            config.plain_request(),
        ),
    }
}

fn on_model_response(
    turn: u32,
    usage: Usage,
    response: ModelResponse,
    ctx: &TransitionCtx<'_>,
) -> TransitionOutcome {
    let config = ctx.config;
    if answers_now(&response.items, config) {
        return on_final_response(Phase::Open, turn, usage, response, config);
    }
    let usage = usage + response.usage;
    let items = response.items;
    let has_calls = items.iter().any(|i| matches!(i, Item::ToolCall(_)));
    if !has_calls {
        let output = FinalOutput::from_items(&items);
        let mut events = message_outputs(items);
        return match &config.output_type {
            Some(out) => {
                events.push(AgentEvent::TurnStarted { turn: turn + 1 });
                let state = LoopState::Finalizing {
                    turn: turn + 1,
                    usage,
                };
                call_model(state, events, out.constrained_request(None))
            }
            None => complete(output, usage, events),
        };
    }
    let handoff = items.iter().find_map(|i| match i {
        Item::ToolCall(c) => config.handoff_for(&c.name),
        _ => None,
    });
    if let Some(handoff) = handoff {
        let target = handoff.target.clone();
        let regular: Vec<ToolCall> = items
            .iter()
            .filter_map(|i| match i {
                Item::ToolCall(c) if config.handoff_for(&c.name).is_none() => Some(c.clone()),
                _ => None,
            })
            .collect();
        if !regular.is_empty() {
            // BR-27: the regular calls run first; the handoff follows their results.
            let pending = PendingHandoff {
                transcript: transcript(ctx.conversation, &target),
                target,
            };
            return execute_tools(turn, usage, items, Some(pending), config);
        }
        let events = items
            .into_iter()
            .filter_map(|item| match item {
                Item::AssistantMessage { .. } => Some(AgentEvent::MessageOutput { item }),
                Item::ToolCall(ref c) if config.handoff_for(&c.name).is_some() => {
                    Some(AgentEvent::ToolCallItem { item })
                }
                _ => None,
            })
            .collect();
        return TransitionOutcome {
            next_state: LoopState::ApplyingHandoff {
                target: target.clone(),
                transcript: transcript(ctx.conversation, &target),
                usage,
            },
            events,
            next_action: NextAction::Handoff { target },
            conversation_appends: Vec::new(),
        };
    }
    execute_tools(turn, usage, items, None, config)
}

/// `MessageOutput` / `ToolCallItem` for the response's items, then run its regular calls
/// (the transfer calls are the pending `handoff`'s own: they get their results when it is
/// taken).
fn execute_tools(
    turn: u32,
    usage: Usage,
    items: Vec<Item>,
    handoff: Option<PendingHandoff>,
    config: &LoopConfig,
) -> TransitionOutcome {
    let mut events = Vec::with_capacity(items.len());
    let mut calls = Vec::new();
    for item in items {
        match item {
            Item::AssistantMessage { .. } => events.push(AgentEvent::MessageOutput { item }),
            Item::ToolCall(call) => {
                if config.handoff_for(&call.name).is_none() {
                    calls.push(call.clone());
                }
                events.push(AgentEvent::ToolCallItem {
                    item: Item::ToolCall(call),
                });
            }
            _ => {}
        }
    }
    TransitionOutcome {
        next_state: LoopState::ExecutingTools {
            turn,
            calls: calls.clone(),
            usage,
            handoff,
        },
        events,
        next_action: NextAction::ExecuteTools { calls },
        conversation_appends: Vec::new(),
    }
}

/// `MessageOutput` for every assistant message, in order; other items are dropped.
pub(crate) fn message_outputs(items: Vec<Item>) -> Vec<AgentEvent> {
    items
        .into_iter()
        .filter(|i| matches!(i, Item::AssistantMessage { .. }))
        .map(|item| AgentEvent::MessageOutput { item })
        .collect()
}

fn on_tool_results(
    turn: u32,
    calls: &[ToolCall],
    usage: Usage,
    results: Vec<ToolOutcome>,
    handoff: Option<&PendingHandoff>,
    config: &LoopConfig,
) -> TransitionOutcome {
    if let Some(problem) = mismatch(calls, &results) {
        let error = AgentError::other(format!(
            "invalid transition: tool_results do not match the pending calls ({problem})"
        ));
        return fail(error, Vec::new());
    }
    let events: Vec<AgentEvent> = results.into_iter().map(output_event).collect();
    if let Some(pending) = handoff {
        return take_handoff(pending, calls, usage, events);
    }
    next_turn(turn, usage, events, config)
}

/// The `ToolOutputItem` for one outcome (an error is one text part with `is_error`).
pub(crate) fn output_event(outcome: ToolOutcome) -> AgentEvent {
    let (content, is_error) = match outcome.result {
        ToolOutcomeResult::Ok(parts) => (parts, false),
        ToolOutcomeResult::Error(text) => (vec![ContentPart::text(text)], true),
    };
    AgentEvent::ToolOutputItem {
        item: Item::ToolResult(ToolResult {
            call_id: outcome.call_id,
            content,
            is_error,
        }),
    }
}

/// After every call of `turn` has its result: the next model turn, or `MaxTurnsExceeded`
/// after `events`.
pub(crate) fn next_turn(
    turn: u32,
    usage: Usage,
    mut events: Vec<AgentEvent>,
    config: &LoopConfig,
) -> TransitionOutcome {
    let next = turn.saturating_add(1);
    if next >= config.max_turns {
        let max_turns = config.max_turns;
        return fail(AgentError::MaxTurnsExceeded { max_turns }, events);
    }
    events.push(AgentEvent::TurnStarted { turn: next });
    let state = LoopState::CallingModel { turn: next, usage };
    call_model(state, events, config.plain_request())
}

/// The handoff a response asked for, after its regular calls ran (field case BR-27).
///
/// The transcript keeps no tool items (the target may not have the tools, and providers refuse
/// calls to tools a request does not declare), so the calls and their results reach the
/// target as one assistant message before the transfer note:
/// `Before the transfer I called these tools:\n- sum_two {"a":3,"b":4} -> 7`.
pub(crate) fn take_handoff(
    pending: &PendingHandoff,
    calls: &[ToolCall],
    usage: Usage,
    events: Vec<AgentEvent>,
) -> TransitionOutcome {
    let mut text = String::from("Before the transfer I called these tools:");
    for call in calls {
        let result = events.iter().find_map(|e| match e {
            AgentEvent::ToolOutputItem {
                item: Item::ToolResult(r),
            } if r.call_id == call.call_id => Some(r),
            _ => None,
        });
        let args = serde_json::to_string(&call.args).unwrap_or_else(|_| "{}".to_owned());
        let outcome = match result {
            Some(r) if r.is_error => format!("failed: {}", crate::content::text_of(&r.content)),
            Some(r) => crate::content::text_of(&r.content),
            None => "no result".to_owned(),
        };
        text.push_str(&format!("\n- {} {args} -> {outcome}", call.name));
    }
    let mut transcript = pending.transcript.clone();
    let at = transcript.len().saturating_sub(1); // before the trailing transfer note
    transcript.insert(
        at,
        Item::AssistantMessage {
            content: vec![ContentPart::text(text)],
            agent: None,
            provider_data: None,
        },
    );
    let target = pending.target.clone();
    TransitionOutcome {
        next_state: LoopState::ApplyingHandoff {
            target: target.clone(),
            transcript,
            usage,
        },
        events,
        next_action: NextAction::Handoff { target },
        conversation_appends: Vec::new(),
    }
}

/// Each pending call must get exactly one result, and no result may name another call.
fn mismatch(calls: &[ToolCall], results: &[ToolOutcome]) -> Option<String> {
    cover(calls, results.iter().map(|r| r.call_id.as_str()), "result")
}

/// `None` when `ids` name each of `calls` exactly once, else what is wrong (`unknown
/// call_id`, `two <noun>s for call_id`, `no <noun> for call_id`).
pub(crate) fn cover<'a>(
    calls: &[ToolCall],
    ids: impl IntoIterator<Item = &'a str>,
    noun: &str,
) -> Option<String> {
    let mut pending: std::collections::HashMap<&str, bool> =
        calls.iter().map(|c| (c.call_id.as_str(), false)).collect();
    for id in ids {
        match pending.get_mut(id) {
            None => return Some(format!("unknown call_id `{id}`")),
            Some(true) => return Some(format!("two {noun}s for call_id `{id}`")),
            Some(seen) => *seen = true,
        }
    }
    calls
        .iter()
        .find(|c| pending.get(c.call_id.as_str()) == Some(&false))
        .map(|c| format!("no {noun} for call_id `{}`", c.call_id))
}
