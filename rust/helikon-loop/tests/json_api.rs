//! The text entry points: `LoopConfig::from_json` and `transition_json`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use helikon_loop::{needs_conversation, transition_json, LoopConfig, DEFAULT_MAX_TURNS};
use serde_json::{json, Value};
use support::*;

fn config_error(text: &str) -> String {
    LoopConfig::from_json(text).unwrap_err().to_string()
}

#[test]
fn config_defaults_and_round_trip() {
    let c = LoopConfig::from_json("{}").unwrap();
    assert_eq!(c.max_turns, DEFAULT_MAX_TURNS);
    assert!(c.tools.is_empty() && c.handoffs.is_empty() && c.output_type.is_none());
    let full = json!({"max_turns": 3, "tools": [{"name": "a", "description": "A"}],
        "handoffs": [{"tool_name": "transfer_to_x", "target": "X", "description": "D"}],
        "output_type": {"name": "Answer", "schema": {"type": "object"}}});
    let c = LoopConfig::from_value(full.clone()).unwrap();
    assert_eq!(c.to_value(), full);
}

#[test]
fn config_errors_name_the_field() {
    for (text, prefix) in [
        ("[]", "config: expected a JSON object"),
        ("{", "config: EOF"),
        (r#"{"max_turns": "x"}"#, "max_turns: invalid type"),
        (r#"{"max_turns": 0}"#, "max_turns: must be at least 1"),
        (r#"{"tools": {}}"#, "tools: expected an array"),
        (
            r#"{"tools": [{"name": "a"}, {}]}"#,
            "tools[1]: missing field `name`",
        ),
        (
            r#"{"tools": [{"name": "a", "schema": {}}]}"#,
            "tools[0]: unknown field `schema`",
        ),
        (
            r#"{"tools": [{"name": ""}]}"#,
            "tools[0].name: must not be empty",
        ),
        (
            r#"{"tools": [{"name": "a"}], "handoffs": [{"tool_name": "a", "target": "X"}]}"#,
            "handoffs[0].tool_name: tool name collision: `a` is already used",
        ),
        (
            r#"{"handoffs": [{"tool_name": "t"}]}"#,
            "handoffs[0]: missing field `target`",
        ),
        (
            r#"{"output_type": {"name": "A"}}"#,
            "output_type: missing field `schema`",
        ),
        (
            r#"{"output_type": {"name": "", "schema": {}}}"#,
            "output_type.name: must not be",
        ),
        (
            r#"{"output_type": {"name": "A", "schema": {"type": "x"}}}"#,
            "output_type.schema: #/type",
        ),
        (r#"{"max_turn": 3}"#, "max_turn: unknown field"),
    ] {
        let e = config_error(text);
        assert!(e.starts_with(prefix), "{text}: {e}");
    }
}

#[test]
fn none_state_is_the_initial_state() {
    let out = transition_json(None, "\"start\"", &plain(), "[]").unwrap();
    let out: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        out["next_state"],
        json!({"state": "CallingModel", "turn": 0, "usage": usage(0)})
    );
    assert_eq!(out["events"], json!([{"type": "turn_started", "turn": 0}]));
    assert_eq!(out["next_action"]["action"], "CallModel");
}

#[test]
fn bad_json_arguments_name_the_argument() {
    let cfg = plain();
    let e = transition_json(Some("{"), "\"start\"", &cfg, "[]").unwrap_err();
    assert!(e.to_string().starts_with("state: "), "{e}");
    let e = transition_json(Some(r#"{"state": "Nope"}"#), "\"start\"", &cfg, "[]").unwrap_err();
    assert!(
        e.to_string().starts_with("state: unknown variant `Nope`"),
        "{e}"
    );
    let e = transition_json(None, "\"go\"", &cfg, "[]").unwrap_err();
    assert!(
        e.to_string().starts_with("input: unknown variant `go`"),
        "{e}"
    );
}

#[test]
fn conversation_is_parsed_only_for_a_handoff() {
    let cfg = config(json!({"handoffs": [{"tool_name": "transfer_to_x", "target": "X"}]}));
    let plain_call = json!({"model_response": {"items": [call("1", "a")]}}).to_string();
    // Not needed: even invalid conversation JSON is never read.
    assert!(transition_json(None, &plain_call, &cfg, "not json").is_ok());
    let handoff = json!({"model_response": {"items": [call("1", "transfer_to_x")]}});
    let e = transition_json(None, &handoff.to_string(), &cfg, "not json").unwrap_err();
    assert!(e.to_string().starts_with("conversation: "), "{e}");
    let conv = json!([{"type": "user_message", "content": [{"type": "text", "text": "q"}]}]);
    let out = transition_json(None, &handoff.to_string(), &cfg, &conv.to_string()).unwrap();
    let out: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(out["next_state"]["transcript"][0], conv[0]);

    let initial = helikon_loop::LoopState::initial();
    assert!(needs_conversation(&initial, &input(handoff.clone()), &cfg));
    assert!(!needs_conversation(&initial, &input(json!("start")), &cfg));
    let at_limit = state(json!({"state": "CallingModel", "turn": 16}));
    assert!(!needs_conversation(&at_limit, &input(handoff), &cfg));
}

#[test]
fn key_order_of_passed_through_values_is_kept() {
    let i = r#"{"model_response": {"items": [{"type": "tool_call", "call_id": "1", "name": "a",
        "args": {"zeta": 1, "alpha": {"y": 2, "b": 3}}}]}}"#;
    let out = transition_json(None, i, &plain(), "[]").unwrap();
    assert!(
        out.contains(r#""args":{"zeta":1,"alpha":{"y":2,"b":3}}"#),
        "{out}"
    );
}
