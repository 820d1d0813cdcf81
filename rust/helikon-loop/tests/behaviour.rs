//! Behaviour beyond the shared vectors: handoff details, tool-result matching, the driver's
//! validation verdict, request shapes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use helikon_loop::{AgentEvent, Item, LoopState, NextAction, ResponseFormat};
use serde_json::json;
use support::*;

fn handoff_config() -> helikon_loop::LoopConfig {
    config(
        json!({"tools": [{"name": "a", "description": "A."}], "handoffs": [
            {"tool_name": "transfer_to_x", "target": "X", "description": "Handles X."},
            {"tool_name": "transfer_to_y", "target": "Y", "description": "Handles Y."},
        ]}),
    )
}

#[test]
fn first_handoff_call_wins_and_every_handoff_call_is_reported() {
    let s = state(json!({"state": "CallingModel", "turn": 2, "usage": usage(5)}));
    let items = json!([
        call("c1", "transfer_to_y"),
        assistant("bye"),
        call("c2", "transfer_to_x")
    ]);
    let conversation: Vec<Item> = serde_json::from_value(json!([
        {"type": "system", "content": [{"type": "text", "text": "sys"}]},
        {"type": "user_message", "content": [{"type": "text", "text": "hi"}]},
        call("c9", "a"),
        {"type": "tool_result", "call_id": "c9", "content": []},
        assistant("routing"),
    ]))
    .unwrap();
    let outcome = run_with(&s, response(items), &handoff_config(), &conversation);
    let out = as_json(&outcome);
    assert_eq!(
        out["next_action"],
        json!({"action": "Handoff", "target": "Y"})
    );
    assert_eq!(out["next_state"]["target"], "Y");
    assert_eq!(out["next_state"]["usage"], usage(6));
    assert_eq!(
        kinds(&outcome),
        ["ToolCallItem", "MessageOutput", "ToolCallItem"]
    );
    assert_eq!(out["events"][0]["item"]["call_id"], "c1");
    assert_eq!(out["events"][2]["item"]["call_id"], "c2");
    let transcript = out["next_state"]["transcript"].as_array().unwrap();
    assert_eq!(transcript.len(), 3);
    assert_eq!(transcript[0]["type"], "user_message");
    assert_eq!(transcript[1], assistant("routing"));
    let note = transcript[2]["content"][0]["text"].as_str().unwrap();
    assert!(note.contains("transferred") && note.contains('Y'), "{note}");
}

#[test]
fn regular_calls_run_before_the_handoff_and_their_results_reach_the_transcript() {
    // Field case BR-27: a regular call and a transfer call in one response.
    let s = state(json!({"state": "CallingModel", "turn": 2, "usage": usage(5)}));
    let items = json!([
        assistant("checking"),
        call("c0", "a"),
        call("c1", "transfer_to_y"),
        call("c2", "a"),
        call("c3", "transfer_to_x")
    ]);
    let conversation: Vec<Item> = serde_json::from_value(json!([
        {"type": "user_message", "content": [{"type": "text", "text": "hi"}]},
    ]))
    .unwrap();
    let config = handoff_config();
    let first = run_with(&s, response(items), &config, &conversation);
    let out = as_json(&first);
    assert_eq!(out["next_action"]["action"], "ExecuteTools");
    let pending: Vec<&str> = out["next_action"]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["call_id"].as_str().unwrap())
        .collect();
    assert_eq!(pending, ["c0", "c2"]);
    assert_eq!(
        kinds(&first),
        [
            "MessageOutput",
            "ToolCallItem",
            "ToolCallItem",
            "ToolCallItem",
            "ToolCallItem"
        ]
    );
    assert_eq!(out["next_state"]["handoff"]["target"], "Y");
    // the pending handoff survives a state round trip (a durable runner persists it)
    let text = serde_json::to_string(&first.next_state).unwrap();
    let resumed: LoopState = serde_json::from_str(&text).unwrap();
    assert_eq!(resumed, first.next_state);

    let results = input(json!({"tool_results": [
        {"call_id": "c0", "ok": [{"type": "text", "text": "42"}]},
        {"call_id": "c2", "error": "boom"},
    ]}));
    let second = run_with(&resumed, results, &config, &[]);
    let out = as_json(&second);
    assert_eq!(
        out["next_action"],
        json!({"action": "Handoff", "target": "Y"})
    );
    assert_eq!(kinds(&second), ["ToolOutputItem", "ToolOutputItem"]);
    assert_eq!(out["next_state"]["usage"], usage(6));
    let transcript = out["next_state"]["transcript"].as_array().unwrap();
    assert_eq!(transcript.len(), 3);
    assert_eq!(
        transcript[1]["content"][0]["text"],
        "Before the transfer I called these tools:\n- a {} -> 42\n- a {} -> failed: boom"
    );
    assert_eq!(transcript[1]["type"], "assistant_message");
    let note = transcript[2]["content"][0]["text"].as_str().unwrap();
    assert!(note.contains("transferred") && note.contains('Y'), "{note}");
}

#[test]
fn a_state_without_a_pending_handoff_serializes_as_before() {
    let s = state(json!({"state": "ExecutingTools", "turn": 1, "calls": [call("1", "a")]}));
    let text = serde_json::to_value(&s).unwrap();
    assert!(text.get("handoff").is_none(), "{text}");
}

#[test]
fn plain_request_lists_real_then_transfer_tools_with_no_arg_schemas() {
    let outcome = run(
        &LoopState::initial(),
        input(json!("start")),
        &handoff_config(),
    );
    let out = as_json(&outcome);
    let request = &out["next_action"]["request"];
    assert_eq!(
        request["tools"],
        json!(["a", "transfer_to_x", "transfer_to_y"])
    );
    assert_eq!(
        request["transfer_tool_defs"][1],
        json!({
        "name": "transfer_to_y", "description": "Handles Y.",
        "schema": {"type": "object", "properties": {}, "additionalProperties": false}})
    );
    assert_eq!(request["response_format"], "unchanged");
    assert_eq!(request["clear_tool_choice"], false);
    assert_eq!(request["repair_message"], json!(null));
}

#[test]
fn output_type_with_only_handoffs_offers_them_first() {
    // A typed agent whose only tools are handoffs must be able to hand off: its first turn
    // is a plain one offering the transfer tools (a constrained turn offers no tools), and
    // the output type is enforced when it answers itself.
    let mut cfg = structured();
    cfg.handoffs = handoff_config().handoffs;
    let outcome = run(&LoopState::initial(), input(json!("start")), &cfg);
    assert_eq!(outcome.next_state.name(), "CallingModel");
    let NextAction::CallModel { request } = &outcome.next_action else {
        panic!("expected CallModel");
    };
    let names: Vec<&str> = request
        .transfer_tool_defs
        .iter()
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(names, ["transfer_to_x", "transfer_to_y"]);
    assert!(!matches!(
        request.response_format,
        ResponseFormat::JsonSchema { .. }
    ));
}

#[test]
fn tool_calls_carry_args_and_accumulate_usage() {
    let s = state(json!({"state": "CallingModel", "usage": usage(2)}));
    let items = json!([{"type": "tool_call", "call_id": "1", "name": "a", "args": {"q": [1]}},
                       {"type": "user_message", "content": []}]);
    let outcome = run(&s, response(items), &plain());
    let out = as_json(&outcome);
    assert_eq!(out["next_action"]["calls"][0]["args"], json!({"q": [1]}));
    assert_eq!(out["next_state"]["usage"], usage(3));
    // Items other than assistant messages and tool calls produce no event.
    assert_eq!(kinds(&outcome), ["ToolCallItem"]);
}

#[test]
fn error_outcomes_become_one_text_part_marked_as_error() {
    let s = state(
        json!({"state": "ExecutingTools", "calls": [call("1", "a"), call("2", "a")],
                         "usage": usage(7)}),
    );
    let i = input(json!({"tool_results": [
        {"call_id": "2", "error": "unknown tool: a"},
        {"call_id": "1", "ok": [{"type": "image", "source": {"type": "url", "url": "u"}}]},
    ]}));
    let outcome = run(&s, i, &plain());
    let out = as_json(&outcome);
    assert_eq!(
        out["events"][0]["item"],
        json!({"type": "tool_result", "call_id": "2",
        "content": [{"type": "text", "text": "unknown tool: a"}], "is_error": true})
    );
    assert_eq!(
        out["events"][1]["item"],
        json!({"type": "tool_result", "call_id": "1",
        "content": [{"type": "image", "source": {"type": "url", "url": "u"}}]})
    );
    assert_eq!(
        out["next_state"],
        json!({"state": "CallingModel", "turn": 1, "usage": usage(7)})
    );
}

#[test]
fn tool_results_must_answer_each_pending_call_once() {
    let s = state(json!({"state": "ExecutingTools", "calls": [call("1", "a"), call("2", "a")]}));
    for (ids, problem) in [
        (vec!["1"], "no result for call_id `2`"),
        (vec!["1", "2", "3"], "unknown call_id `3`"),
        (vec!["1", "1", "2"], "two results for call_id `1`"),
    ] {
        let outcome = run(&s, results(&ids), &plain());
        let message = failure(&outcome);
        assert!(message.starts_with("invalid transition:"), "{message}");
        assert!(message.contains(problem), "{message}");
        assert_eq!(kinds(&outcome), ["RunFailed"]);
    }
}

#[test]
fn driver_verdict_replaces_builtin_validation() {
    let s = state(json!({"state": "Finalizing"}));
    let valid = input(json!({"model_response": {"items": [assistant("not json")],
        "finish_reason": "stop", "validation": {"errors": []}}}));
    let outcome = run(&s, valid, &structured());
    assert_eq!(outcome.next_state.name(), "Done");

    let invalid = input(
        json!({"model_response": {"items": [assistant("{\"value\": 1}")],
        "finish_reason": "stop", "validation": {"errors": ["value: must be even"]}}}),
    );
    let outcome = run(&s, invalid, &structured());
    assert_eq!(outcome.next_state.name(), "RepairingOutput");
    let Item::UserMessage { content } = &outcome.conversation_appends[0] else {
        panic!("expected a user message");
    };
    let text = helikon_loop::text_of(content);
    assert!(
        text.contains("value: must be even") && text.contains("`Answer`"),
        "{text}"
    );
}

#[test]
fn tool_calls_fail_validation_even_with_a_passing_verdict() {
    let s = state(json!({"state": "RepairingOutput", "turn": 2}));
    let i = input(
        json!({"model_response": {"items": [assistant("{\"value\": 1}"),
        call("c", "a")], "finish_reason": "tool_calls", "validation": {"errors": []}}}),
    );
    let outcome = run(&s, i, &structured());
    assert_eq!(
        kinds(&outcome),
        ["MessageOutput", "StructuredOutputFailed", "RunFailed"]
    );
    let out = as_json(&outcome);
    let error = &out["next_state"]["error"];
    assert_eq!(error["kind"], "InvalidStructuredOutput");
    assert_eq!(error["final_text"], "{\"value\": 1}");
    assert!(error["schema_errors"][0]
        .as_str()
        .unwrap()
        .contains("called tools: a"));
}

#[test]
fn schema_violations_are_listed_in_the_repair_message() {
    let s = state(json!({"state": "Finalizing", "turn": 3, "usage": usage(1)}));
    let outcome = run(
        &s,
        response(json!([assistant("  {\"value\": -2}\n")])),
        &structured(),
    );
    let out = as_json(&outcome);
    assert_eq!(
        out["next_state"],
        json!({"state": "RepairingOutput", "turn": 3,
                                         "usage": usage(2)})
    );
    assert_eq!(kinds(&outcome), ["MessageOutput", "RepairStarted"]);
    let message = &out["next_action"]["request"]["repair_message"];
    assert_eq!(&out["conversation_appends"][0], message);
    let text = message["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("at `value`: -2 is less than the minimum 0"),
        "{text}"
    );
}

#[test]
fn trimmed_valid_answer_completes_with_untrimmed_text_and_cumulative_usage() {
    let s = state(json!({"state": "RepairingOutput", "usage": usage(4)}));
    let outcome = run(
        &s,
        response(json!([assistant(" {\"value\": 3} ")])),
        &structured(),
    );
    let out = as_json(&outcome);
    assert_eq!(out["next_state"]["output"]["text"], " {\"value\": 3} ");
    assert_eq!(out["next_state"]["usage"], usage(5));
    match outcome.events.last() {
        Some(AgentEvent::RunCompleted { usage }) => assert_eq!(usage.total_tokens, 5),
        other => panic!("expected RunCompleted, got {other:?}"),
    }
}

#[test]
fn done_output_is_the_last_assistant_message() {
    let items = json!([assistant("first"), assistant("second")]);
    let outcome = run(&LoopState::initial(), response(items), &plain());
    let out = as_json(&outcome);
    assert_eq!(
        out["next_state"]["output"],
        json!({"text": "second",
        "content": [{"type": "text", "text": "second"}]})
    );
    assert_eq!(
        kinds(&outcome),
        ["MessageOutput", "MessageOutput", "RunCompleted"]
    );
}
