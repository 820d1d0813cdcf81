//! Approval pauses: `ExecutingTools --defer--> NeedsApproval --decisions--> ...`.
//!
//! A driver whose permission pipeline answers `AskUser` for some calls of a turn, and that is
//! configured to defer rather than ask inline, feeds `defer`: the outcomes of the calls that
//! were decided (they ran, or were refused) and the ids of the calls that wait. The machine
//! pauses in `NeedsApproval` holding the waiting calls as the model gave them. Later, perhaps
//! in another process from a persisted state, the driver feeds one decision per waiting
//! call: denials become error results at once; approved and edited calls (with the new
//! arguments) go to `ExecutingTools`, and their results finish the turn as usual.
use crate::config::LoopConfig;
use crate::error::AgentError;
use crate::input::{Decision, Deferral, ToolOutcome, ToolOutcomeResult, Verdict};
use crate::items::ToolCall;
use crate::outcome::{NextAction, TransitionOutcome};
use crate::state::{LoopState, PendingHandoff};
use crate::transition::{cover, fail, next_turn, output_event, take_handoff};
use crate::usage::Usage;

/// The error text the model reads for a call a person denied.
pub fn denial_text(reason: &str) -> String {
    format!("approval denied: {reason}")
}

fn invalid(what: &str, problem: &str) -> TransitionOutcome {
    let error = AgentError::other(format!(
        "invalid transition: {what} do not match the pending calls ({problem})"
    ));
    fail(error, Vec::new())
}

pub(crate) fn on_defer(
    turn: u32,
    calls: &[ToolCall],
    usage: Usage,
    deferral: Deferral,
    handoff: Option<PendingHandoff>,
) -> TransitionOutcome {
    if deferral.pending.is_empty() {
        return invalid("defer", "no call waits; feed tool_results instead");
    }
    let ids = deferral
        .results
        .iter()
        .map(|r| r.call_id.as_str())
        .chain(deferral.pending.iter().map(String::as_str));
    if let Some(problem) = cover(calls, ids, "outcome") {
        return invalid("defer", &problem);
    }
    let pending: Vec<ToolCall> = calls
        .iter()
        .filter(|c| deferral.pending.contains(&c.call_id))
        .cloned()
        .collect();
    let events = deferral.results.into_iter().map(output_event).collect();
    TransitionOutcome {
        next_state: LoopState::NeedsApproval {
            turn,
            pending: pending.clone(),
            usage,
            handoff,
        },
        events,
        next_action: NextAction::AwaitApproval { pending },
        conversation_appends: Vec::new(),
    }
}

pub(crate) fn on_decisions(
    turn: u32,
    pending: &[ToolCall],
    usage: Usage,
    decisions: Vec<Decision>,
    handoff: Option<&PendingHandoff>,
    config: &LoopConfig,
) -> TransitionOutcome {
    if let Some(problem) = cover(
        pending,
        decisions.iter().map(|d| d.call_id.as_str()),
        "decision",
    ) {
        return invalid("decisions", &problem);
    }
    let mut events = Vec::new();
    let mut run = Vec::new();
    // in the order of the pending calls, whatever the order of the decisions
    for call in pending {
        let Some(decision) = decisions.iter().find(|d| d.call_id == call.call_id) else {
            continue; // unreachable: `cover` checked every call has a decision
        };
        match &decision.verdict {
            Verdict::Approve => run.push(call.clone()),
            Verdict::Edit { args } => run.push(ToolCall {
                args: args.clone(),
                ..call.clone()
            }),
            Verdict::Deny { reason } => events.push(output_event(ToolOutcome {
                call_id: call.call_id.clone(),
                result: ToolOutcomeResult::Error(denial_text(reason)),
            })),
        }
    }
    if run.is_empty() {
        // every waiting call was denied: the handoff the response asked for happens now
        if let Some(pending_handoff) = handoff {
            return take_handoff(pending_handoff, pending, usage, events);
        }
        return next_turn(turn, usage, events, config);
    }
    TransitionOutcome {
        next_state: LoopState::ExecutingTools {
            turn,
            calls: run.clone(),
            usage,
            // taken once the approved calls have their results (field case BR-27)
            handoff: handoff.cloned(),
        },
        events,
        next_action: NextAction::ExecuteTools { calls: run },
        conversation_appends: Vec::new(),
    }
}
