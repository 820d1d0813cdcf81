//! The helikon agent-loop state machine: a pure transition function over serializable states.
//!
//! # Use
//!
//! A driver (helikon's Python runner) holds a [`LoopState`] and feeds the machine one
//! [`TransitionInput`] at a time — `start`, a settled model response, or the results of the
//! tool calls it was asked to run. [`transition`] returns a [`TransitionOutcome`]: the next
//! state, the [`AgentEvent`]s to yield, the [`NextAction`] to perform (call the model with a
//! [`RequestPlan`], execute tools, hand off, or terminate) and items to append to the
//! conversation. States, inputs and outcomes serialize to JSON in the spec's tagged shapes,
//! so a durable runner can persist a state and resume at any transition boundary.
//! [`transition_json`] is the text-in/text-out form; a driver that keeps its inputs can use
//! [`event_refs`] and [`call_refs`] to take the outcome's items by position instead of
//! decoding them again (the binding's `LoopRun` does).
//!
//! The machine covers turns and the max-turn guard, tool fan-out, handoff routing (the first
//! transfer-tool call wins; regular calls of the same response run first and their results
//! reach the target's transcript, field case BR-27), and structured output: a constrained `Finalizing` turn, one
//! `RepairingOutput` turn with a synthesized repair message, then success or
//! `InvalidStructuredOutput`. Approval pauses: a `defer` input in `ExecutingTools` moves to
//! `NeedsApproval { pending }` (action `AwaitApproval`) and `decisions` leave it (denials
//! become error results, approved and edited calls run). Compaction: `compaction_started`
//! in `CallingModel` moves to `Compacting` (action `Compact`, event `CompactionStarted`) and
//! `compaction_completed` returns to `CallingModel` with the due model call. Answers are checked by a JSON-Schema subset ([`OutputSchema`])
//! unless the driver passes its own verdict in [`ModelResponse::validation`].
//!
//! # Limitations
//!
//! - Pure: no IO, clock or randomness. Message bodies stay with the driver; the machine sees
//!   only the items of the current input, plus the conversation when building a handoff
//!   transcript. Request messages are the driver's conversation.
//! - Unknown tool names are not detected here: the driver answers them with an error result.
//! - `start` in `Compacting` or `NeedsApproval` fails with `NotImplemented` (as the shared
//!   vectors pin): a pause is left only by its own input.
//! - Compaction is entered only from `CallingModel`; what to summarise is the driver's.
//! - JSON object key order is preserved (`serde_json/preserve_order`), so tool arguments and
//!   unmodelled content parts pass through byte-for-byte in key order.
//! - The schema subset ignores `format`, `pattern` and `additionalProperties` (unknown fields
//!   are accepted).
//!
//! # Tests
//!
//! `tests/conformance.rs` runs every case of the shared `transition.json` vectors
//! (`$HELIKON_SHARED`, default `../../../shared` from this crate). `tests/pairs.rs` covers
//! every state/input pair including the invalid ones, `tests/roundtrip.rs` the JSON shapes,
//! `tests/validate.rs` the schema subset; unit tests sit beside the serde code. Fuzz targets
//! in `fuzz/` feed arbitrary JSON to [`transition_json`] and [`OutputSchema`].
mod approval;
mod compaction;
mod config;
mod content;
mod error;
mod events;
mod handoff;
mod input;
mod items;
mod json;
mod outcome;
mod refs;
mod state;
mod structured;
mod transition;
mod usage;
mod validate;

pub use approval::denial_text;
pub use config::{
    ConfigError, HandoffSpec, LoopConfig, OutputMode, OutputType, ToolSpec, DEFAULT_MAX_TURNS,
    DEFAULT_OUTPUT_TOOL,
};
pub use content::{text_of, ContentPart};
pub use error::AgentError;
pub use events::AgentEvent;
pub use handoff::transcript;
pub use input::{
    CompactionEnd, CompactionStart, Decision, Deferral, ModelResponse, ToolOutcome,
    ToolOutcomeResult, TransitionInput, Validation, Verdict,
};
pub use items::{tool_call_items, Item, ToolCall, ToolResult};
pub use json::{needs_conversation, transition_json, JsonError};
pub use outcome::{NextAction, RequestPlan, ResponseFormat, TransferToolDef, TransitionOutcome};
pub use refs::{call_refs, event_refs, EventRef};
pub use state::{FinalOutput, LoopState, PendingHandoff};
pub use transition::{transition, TransitionCtx};
pub use usage::Usage;
pub use validate::OutputSchema;
