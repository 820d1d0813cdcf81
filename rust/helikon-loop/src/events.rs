//! The agent events a transition emits, tagged by `type` in snake_case.
//!
//! Only the events the pure machine produces live here. The driver-level events (run_started,
//! token/reasoning/tool-call deltas, handoff_item, agent_updated, guardrail_triggered,
//! approval_requested, permission_denied, run_interrupted) are produced and owned by the Python driver.
use serde::{Deserialize, Serialize};

use crate::error::AgentError;
use crate::items::Item;
use crate::usage::Usage;

/// One event of a run's stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    TurnStarted {
        turn: u32,
    },
    /// A settled assistant message.
    MessageOutput {
        item: Item,
    },
    /// A settled tool call (a `tool_call` item).
    ToolCallItem {
        item: Item,
    },
    /// A tool's result (a `tool_result` item; errors are one text part with `is_error`).
    ToolOutputItem {
        item: Item,
    },
    RepairStarted {
        attempt: u32,
    },
    StructuredOutputFailed {
        schema_errors: Vec<String>,
        final_text: String,
    },
    /// The driver began compacting the conversation.
    CompactionStarted {
        tokens_before: u64,
    },
    /// Compaction finished: the conversation went from `tokens_before` to `tokens_after`.
    CompactionCompleted {
        tokens_before: u64,
        tokens_after: u64,
    },
    RunCompleted {
        usage: Usage,
    },
    RunFailed {
        error: AgentError,
    },
}

impl AgentEvent {
    /// The event's spec name in PascalCase (`TurnStarted`, ...), as the vectors list them.
    pub fn kind(&self) -> &'static str {
        match self {
            AgentEvent::TurnStarted { .. } => "TurnStarted",
            AgentEvent::MessageOutput { .. } => "MessageOutput",
            AgentEvent::ToolCallItem { .. } => "ToolCallItem",
            AgentEvent::ToolOutputItem { .. } => "ToolOutputItem",
            AgentEvent::RepairStarted { .. } => "RepairStarted",
            AgentEvent::StructuredOutputFailed { .. } => "StructuredOutputFailed",
            AgentEvent::CompactionStarted { .. } => "CompactionStarted",
            AgentEvent::CompactionCompleted { .. } => "CompactionCompleted",
            AgentEvent::RunCompleted { .. } => "RunCompleted",
            AgentEvent::RunFailed { .. } => "RunFailed",
        }
    }
}
