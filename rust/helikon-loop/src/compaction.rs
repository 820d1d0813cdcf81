//! Compaction as a visible phase: `CallingModel --compaction_started--> Compacting
//! --compaction_completed--> CallingModel`.
//!
//! The driver decides when the conversation is too large and does the summarising itself;
//! the machine only records the phase, so the stream and a persisted state show it, adds the
//! summarising call's usage to the run's total and asks for the model call that was due.
use crate::config::LoopConfig;
use crate::events::AgentEvent;
use crate::input::{CompactionEnd, CompactionStart};
use crate::outcome::{NextAction, TransitionOutcome};
use crate::state::LoopState;
use crate::transition::call_model;
use crate::usage::Usage;

pub(crate) fn on_compaction_started(
    turn: u32,
    usage: Usage,
    start: CompactionStart,
) -> TransitionOutcome {
    let tokens_before = start.tokens_before;
    TransitionOutcome {
        next_state: LoopState::Compacting {
            turn,
            usage,
            tokens_before,
        },
        events: vec![AgentEvent::CompactionStarted { tokens_before }],
        next_action: NextAction::Compact,
        conversation_appends: Vec::new(),
    }
}

pub(crate) fn on_compaction_completed(
    turn: u32,
    usage: Usage,
    tokens_before: u64,
    end: CompactionEnd,
    config: &LoopConfig,
) -> TransitionOutcome {
    let events = vec![AgentEvent::CompactionCompleted {
        tokens_before,
        tokens_after: end.tokens_after,
    }];
    let state = LoopState::CallingModel {
        turn,
        usage: usage + end.usage,
    };
    call_model(state, events, config.plain_request())
}
