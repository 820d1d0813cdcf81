//! Shared builders for the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use helikon_loop::{
    transition, AgentEvent, Item, LoopConfig, LoopState, TransitionCtx, TransitionInput,
    TransitionOutcome,
};
use serde_json::{json, Value};

pub fn config(v: Value) -> LoopConfig {
    LoopConfig::from_value(v).unwrap()
}

/// One real tool `a`, no output type, no handoffs.
pub fn plain() -> LoopConfig {
    config(json!({"max_turns": 4, "tools": [{"name": "a"}]}))
}

/// No tools, output type `Answer {value: u32}`.
pub fn structured() -> LoopConfig {
    config(
        json!({"max_turns": 4, "output_type": {"name": "Answer", "schema": {
            "type": "object",
            "properties": {"value": {"type": "integer", "minimum": 0}},
            "required": ["value"],
        }}}),
    )
}

pub fn state(v: Value) -> LoopState {
    serde_json::from_value(v).unwrap()
}

pub fn input(v: Value) -> TransitionInput {
    serde_json::from_value(v).unwrap()
}

pub fn usage(n: u64) -> Value {
    json!({"input_tokens": n, "output_tokens": n, "cached_input_tokens": n,
           "reasoning_tokens": n, "total_tokens": n})
}

pub fn assistant(text: &str) -> Value {
    json!({"type": "assistant_message", "content": [{"type": "text", "text": text}],
           "agent": "t"})
}

pub fn call(id: &str, name: &str) -> Value {
    json!({"type": "tool_call", "call_id": id, "name": name, "args": {}})
}

pub fn response(items: Value) -> TransitionInput {
    input(json!({"model_response": {"items": items, "usage": usage(1), "finish_reason": "stop"}}))
}

pub fn results(ids: &[&str]) -> TransitionInput {
    let list: Vec<Value> = ids
        .iter()
        .map(|id| json!({"call_id": id, "ok": [{"type": "text", "text": "r"}]}))
        .collect();
    input(json!({ "tool_results": list }))
}

pub fn run(state: &LoopState, input: TransitionInput, config: &LoopConfig) -> TransitionOutcome {
    run_with(state, input, config, &[])
}

pub fn run_with(
    state: &LoopState,
    input: TransitionInput,
    config: &LoopConfig,
    conversation: &[Item],
) -> TransitionOutcome {
    let ctx = TransitionCtx {
        config,
        conversation,
    };
    transition(state, input, &ctx)
}

pub fn kinds(outcome: &TransitionOutcome) -> Vec<&'static str> {
    outcome.events.iter().map(AgentEvent::kind).collect()
}

pub fn as_json(outcome: &TransitionOutcome) -> Value {
    serde_json::to_value(outcome).unwrap()
}

/// The `RunFailed` error message (panics when the last event is not `RunFailed`).
pub fn failure(outcome: &TransitionOutcome) -> String {
    match outcome.events.last() {
        Some(AgentEvent::RunFailed { error }) => error.to_string(),
        other => panic!("expected RunFailed, got {other:?}"),
    }
}
