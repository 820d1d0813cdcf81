//! `LoopState`: one variant per phase of a run, serialized as `{"state": "<Variant>", ...}`.
use serde::{Deserialize, Serialize};

use crate::content::{text_of, ContentPart};
use crate::error::AgentError;
use crate::items::{tool_call_items, Item, ToolCall};
use crate::usage::Usage;

/// The loop's position between two transitions. Terminal: `Done`, `Failed`.
///
/// Missing `usage`, `turn`, `calls`, `transcript`, `pending`, `tokens_before` and `output`
/// fields default to zero / empty when deserializing, so a hand-written state can be terse;
/// serializing always writes every field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state")]
pub enum LoopState {
    /// About to call the model for `turn`.
    CallingModel {
        #[serde(default)]
        turn: u32,
        #[serde(default)]
        usage: Usage,
    },
    /// The model asked for tool calls; the driver runs them and feeds back results.
    ExecutingTools {
        #[serde(default)]
        turn: u32,
        #[serde(default, with = "tool_call_items")]
        calls: Vec<ToolCall>,
        #[serde(default)]
        usage: Usage,
        /// The handoff the same response asked for, taken once `calls` have their results
        /// (field case BR-27). Omitted when there is none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        handoff: Option<PendingHandoff>,
    },
    /// Delegate to `target`, giving it `transcript`.
    ApplyingHandoff {
        target: String,
        #[serde(default)]
        transcript: Vec<Item>,
        #[serde(default)]
        usage: Usage,
    },
    /// The constrained turn asking the model for the configured output type.
    Finalizing {
        #[serde(default)]
        turn: u32,
        #[serde(default)]
        usage: Usage,
    },
    /// A repair turn after a failed structured-output validation (`attempt` counts them
    /// from 1; the output type's `retries` bounds it).
    RepairingOutput {
        #[serde(default)]
        turn: u32,
        #[serde(default)]
        usage: Usage,
        #[serde(default = "first_attempt", skip_serializing_if = "is_first_attempt")]
        attempt: u32,
    },
    /// The driver is compacting the conversation before the model call of `turn`
    /// (entered by `compaction_started`, left by `compaction_completed`).
    Compacting {
        #[serde(default)]
        turn: u32,
        #[serde(default)]
        usage: Usage,
        /// The conversation's size in tokens when compaction began.
        #[serde(default)]
        tokens_before: u64,
    },
    /// Paused: the `pending` calls of `turn` wait for a person's decisions (entered by
    /// `defer`, left by `decisions`). The turn's other calls already have their results.
    NeedsApproval {
        #[serde(default)]
        turn: u32,
        #[serde(default, with = "tool_call_items")]
        pending: Vec<ToolCall>,
        #[serde(default)]
        usage: Usage,
        /// The handoff the paused turn's response asked for (field case BR-27), taken after
        /// the decisions and the approved calls' results. Omitted when there is none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        handoff: Option<PendingHandoff>,
    },
    /// Terminal success.
    Done {
        #[serde(default)]
        output: FinalOutput,
        #[serde(default)]
        usage: Usage,
    },
    /// Terminal failure.
    Failed { error: AgentError },
}

/// A handoff waiting for the regular tool calls of its response to finish.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingHandoff {
    /// The target agent's name.
    pub target: String,
    /// The transcript built when the handoff was asked for (the calls' results are added).
    #[serde(default)]
    pub transcript: Vec<Item>,
}

impl LoopState {
    /// The state a run starts in: `CallingModel` at turn 0 with zero usage.
    pub fn initial() -> Self {
        LoopState::CallingModel {
            turn: 0,
            usage: Usage::default(),
        }
    }

    /// The variant name, as written in `state`.
    pub fn name(&self) -> &'static str {
        match self {
            LoopState::CallingModel { .. } => "CallingModel",
            LoopState::ExecutingTools { .. } => "ExecutingTools",
            LoopState::ApplyingHandoff { .. } => "ApplyingHandoff",
            LoopState::Finalizing { .. } => "Finalizing",
            LoopState::RepairingOutput { .. } => "RepairingOutput",
            LoopState::Compacting { .. } => "Compacting",
            LoopState::NeedsApproval { .. } => "NeedsApproval",
            LoopState::Done { .. } => "Done",
            LoopState::Failed { .. } => "Failed",
        }
    }

    /// True for `Done` and `Failed`.
    pub fn is_terminal(&self) -> bool {
        matches!(self, LoopState::Done { .. } | LoopState::Failed { .. })
    }

    /// The running usage total (`None` for states that do not carry one).
    pub fn usage(&self) -> Option<Usage> {
        match self {
            LoopState::CallingModel { usage, .. }
            | LoopState::ExecutingTools { usage, .. }
            | LoopState::ApplyingHandoff { usage, .. }
            | LoopState::Finalizing { usage, .. }
            | LoopState::RepairingOutput { usage, .. }
            | LoopState::Compacting { usage, .. }
            | LoopState::NeedsApproval { usage, .. }
            | LoopState::Done { usage, .. } => Some(*usage),
            LoopState::Failed { .. } => None,
        }
    }
}

/// A successful run's answer: the last assistant message's content and its text.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FinalOutput {
    /// Concatenated text parts of `content` (untrimmed).
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub content: Vec<ContentPart>,
}

impl FinalOutput {
    /// The output of a response: its last assistant message, or empty when there is none.
    pub(crate) fn from_items(items: &[Item]) -> Self {
        let last = items.iter().rev().find_map(|item| match item {
            Item::AssistantMessage { content, .. } => Some(content),
            _ => None,
        });
        match last {
            Some(content) => FinalOutput {
                text: text_of(content),
                content: content.clone(),
            },
            None => FinalOutput::default(),
        }
    }
}

fn first_attempt() -> u32 {
    1
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_first_attempt(n: &u32) -> bool {
    *n == 1
}
