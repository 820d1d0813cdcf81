//! Structured output modes (finalize, native, tool) and the bounded repair turns.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use helikon_loop::{LoopState, NextAction, ResponseFormat};
use serde_json::{json, Value};
use support::*;

fn with_mode(mode: &str, retries: u32) -> helikon_loop::LoopConfig {
    config(
        json!({"max_turns": 6, "tools": [{"name": "a"}], "output_type": {
        "name": "Answer", "mode": mode, "retries": retries, "schema": {
            "type": "object",
            "properties": {"value": {"type": "integer", "minimum": 0}},
            "required": ["value"],
        }}}),
    )
}

fn calling() -> LoopState {
    state(json!({"state": "CallingModel", "turn": 1, "usage": usage(0)}))
}

fn start_plan(cfg: &helikon_loop::LoopConfig) -> Value {
    let s = state(json!({"state": "CallingModel", "turn": 0}));
    as_json(&run(&s, input(json!("start")), cfg))["next_action"]["request"].clone()
}

fn output_call(id: &str, args: Value) -> Value {
    json!({"type": "tool_call", "call_id": id, "name": "final_result", "args": args})
}

#[test]
fn finalize_mode_is_the_default_and_keeps_the_finalizing_turn() {
    let cfg = with_mode("finalize", 1);
    assert_eq!(cfg.to_value()["output_type"].get("mode"), None);
    let plan = start_plan(&cfg);
    assert_eq!(plan["tools"], json!(["a"]));
    assert_eq!(plan["response_format"], json!("unchanged"));
    let out = run(
        &calling(),
        response(json!([assistant("{\"value\": 1}")])),
        &cfg,
    );
    assert!(matches!(
        out.next_state,
        LoopState::Finalizing { turn: 2, .. }
    ));
}

#[test]
fn native_mode_sends_the_format_with_the_tools_and_a_valid_answer_ends_the_run() {
    let cfg = with_mode("native", 1);
    let plan = start_plan(&cfg);
    assert_eq!(plan["tools"], json!(["a"]));
    assert_eq!(plan["response_format"]["name"], "Answer");
    assert_eq!(plan["clear_tool_choice"], false);
    let out = run(
        &calling(),
        response(json!([assistant("{\"value\": 1}")])),
        &cfg,
    );
    assert_eq!(kinds(&out), ["MessageOutput", "RunCompleted"]);
    assert!(matches!(out.next_state, LoopState::Done { .. }));
    // a tool call still runs the tool
    let out = run(&calling(), response(json!([call("c1", "a")])), &cfg);
    assert!(matches!(out.next_action, NextAction::ExecuteTools { .. }));
}

#[test]
fn native_mode_invalid_answer_gets_a_repair_turn_then_fails() {
    let cfg = with_mode("native", 1);
    let out = run(
        &calling(),
        response(json!([assistant("{\"value\": -1}")])),
        &cfg,
    );
    assert_eq!(kinds(&out), ["MessageOutput", "RepairStarted"]);
    let j = as_json(&out);
    assert_eq!(j["next_state"]["state"], "RepairingOutput");
    assert_eq!(j["next_action"]["request"]["tools"], json!([]));
    assert_eq!(j["conversation_appends"][0]["type"], "user_message");
    let out = run(&out.next_state, response(json!([assistant("nope")])), &cfg);
    assert!(failure(&out).starts_with("invalid structured output"));
}

#[test]
fn retries_bound_the_repair_turns_and_zero_fails_at_once() {
    let cfg = with_mode("finalize", 3);
    let mut s = state(json!({"state": "Finalizing", "turn": 1}));
    for attempt in 1..=3 {
        let out = run(&s, response(json!([assistant("x")])), &cfg);
        assert_eq!(
            as_json(&out)["events"][1],
            json!({"type": "repair_started", "attempt": attempt})
        );
        s = out.next_state;
    }
    let out = run(&s, response(json!([assistant("x")])), &cfg);
    assert_eq!(
        kinds(&out),
        ["MessageOutput", "StructuredOutputFailed", "RunFailed"]
    );
    // the attempt survives a state round trip
    let j = serde_json::to_value(&s).unwrap();
    assert_eq!(j["attempt"], 3);
    let zero = with_mode("finalize", 0);
    let s = state(json!({"state": "Finalizing", "turn": 1}));
    let out = run(&s, response(json!([assistant("x")])), &zero);
    assert_eq!(
        kinds(&out),
        ["MessageOutput", "StructuredOutputFailed", "RunFailed"]
    );
}

#[test]
fn tool_mode_offers_the_output_tool_and_its_call_ends_the_run() {
    let cfg = with_mode("tool", 1);
    assert_eq!(start_plan(&cfg)["tools"], json!(["a", "final_result"]));
    let items = json!([
        assistant("done"),
        output_call("o1", json!({"value": 7})),
        call("c2", "a")
    ]);
    let out = run(&calling(), response(items), &cfg);
    assert_eq!(
        kinds(&out),
        [
            "MessageOutput",
            "ToolCallItem",
            "ToolOutputItem",
            "ToolCallItem",
            "ToolOutputItem",
            "MessageOutput",
            "RunCompleted"
        ]
    );
    let j = as_json(&out);
    assert_eq!(j["next_state"]["output"]["text"], "{\"value\":7}");
    assert_eq!(
        j["events"][2]["item"]["content"][0]["text"],
        "Final result accepted."
    );
    assert_eq!(
        j["events"][4]["item"]["content"][0]["text"],
        "Not run: the final result was given in the same response."
    );
    let appended: Vec<&str> = j["conversation_appends"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        appended,
        ["tool_result", "tool_result", "assistant_message"]
    );
}

#[test]
fn tool_mode_invalid_call_is_answered_with_the_errors_and_a_repair_turn() {
    let cfg = with_mode("tool", 1);
    let out = run(
        &calling(),
        response(json!([output_call("o1", json!({"value": "x"}))])),
        &cfg,
    );
    assert_eq!(
        kinds(&out),
        ["ToolCallItem", "ToolOutputItem", "RepairStarted"]
    );
    let j = as_json(&out);
    let result = &j["conversation_appends"][0];
    assert_eq!(
        (result["call_id"].as_str(), result["is_error"].as_bool()),
        (Some("o1"), Some(true))
    );
    assert!(result["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("`Answer`"));
    assert_eq!(j["next_state"]["state"], "RepairingOutput");
}

#[test]
fn tool_mode_text_answers_end_the_run_when_valid_else_fall_back_to_finalizing() {
    let cfg = with_mode("tool", 1);
    let out = run(
        &calling(),
        response(json!([assistant("{\"value\": 2}")])),
        &cfg,
    );
    assert!(matches!(out.next_state, LoopState::Done { .. }));
    let out = run(&calling(), response(json!([assistant("It is two.")])), &cfg);
    assert_eq!(kinds(&out), ["MessageOutput", "TurnStarted"]);
    assert!(matches!(
        out.next_state,
        LoopState::Finalizing { turn: 2, .. }
    ));
    match out.next_action {
        NextAction::CallModel { request } => {
            assert!(request.tools.is_empty());
            assert!(matches!(
                request.response_format,
                ResponseFormat::JsonSchema { .. }
            ));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_driver_verdict_decides_in_the_one_call_modes() {
    let cfg = with_mode("native", 1);
    let r = input(
        json!({"model_response": {"items": [assistant("{\"value\": 1}")],
        "validation": {"errors": ["too small"]}}}),
    );
    let out = run(&calling(), r, &cfg);
    let j = as_json(&out);
    assert!(j["conversation_appends"][0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("- too small"));
}

#[test]
fn the_output_tool_name_must_not_clash() {
    let bad = helikon_loop::LoopConfig::from_value(json!({"tools": [{"name": "final_result"}],
        "output_type": {"name": "A", "mode": "tool", "schema": {"type": "object"}}}));
    assert_eq!(
        bad.unwrap_err().to_string(),
        "output_type.tool_name: tool name collision: `final_result` is already used"
    );
    let renamed = helikon_loop::LoopConfig::from_value(json!({"tools": [{"name": "final_result"}],
        "output_type": {"name": "A", "mode": "tool", "tool_name": "answer", "schema": {"type": "object"}}}));
    assert!(renamed.is_ok());
}
