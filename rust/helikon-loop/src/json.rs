//! The JSON entry point used by the Python binding.
use crate::config::LoopConfig;
use crate::input::TransitionInput;
use crate::items::Item;
use crate::state::LoopState;
use crate::transition::{transition, TransitionCtx};

/// A JSON argument that did not parse; the message starts with the argument's name.
#[derive(Debug, thiserror::Error)]
pub enum JsonError {
    #[error("state: {0}")]
    State(serde_json::Error),
    #[error("input: {0}")]
    Input(serde_json::Error),
    #[error("conversation: {0}")]
    Conversation(serde_json::Error),
    #[error("outcome: {0}")]
    Outcome(serde_json::Error),
}

/// Whether this transition reads the conversation: only when it takes a handoff.
pub fn needs_conversation(state: &LoopState, input: &TransitionInput, config: &LoopConfig) -> bool {
    let calling = matches!(state, LoopState::CallingModel { turn, .. } if *turn < config.max_turns);
    calling
        && matches!(input, TransitionInput::ModelResponse(r) if r.items.iter().any(|i| {
            matches!(i, Item::ToolCall(c) if config.handoff_for(&c.name).is_some())
        }))
}

/// [`transition`] over JSON text. `state_json = None` means [`LoopState::initial`].
///
/// `conversation_json` (a JSON array of items) is parsed only when the transition takes a
/// handoff (see [`needs_conversation`]), so per-turn cost stays O(input) even when the driver
/// always passes it.
pub fn transition_json(
    state_json: Option<&str>,
    input_json: &str,
    config: &LoopConfig,
    conversation_json: &str,
) -> Result<String, JsonError> {
    let state = match state_json {
        Some(text) => serde_json::from_str(text).map_err(JsonError::State)?,
        None => LoopState::initial(),
    };
    let input: TransitionInput = serde_json::from_str(input_json).map_err(JsonError::Input)?;
    let conversation: Vec<Item> = if needs_conversation(&state, &input, config) {
        serde_json::from_str(conversation_json).map_err(JsonError::Conversation)?
    } else {
        Vec::new()
    };
    let ctx = TransitionCtx {
        config,
        conversation: &conversation,
    };
    let outcome = transition(&state, input, &ctx);
    serde_json::to_string(&outcome).map_err(JsonError::Outcome)
}
