//! Every `cases` entry of the shared `transition.json` vectors, driven through the JSON entry
//! point (so the shapes the Python driver reads are checked at every step), and through the
//! typed `transition` to check the outcome references the binding's `LoopRun` hands out.
//!
//! Fixture adaptations (the vectors are written for the reference's Rust types):
//! `config.tools` may be bare names (they become `{"name": ...}`), `output_type.fields` becomes
//! a JSON schema (`u32` = non-negative integer, `string` = string, every field required), and
//! `config.model_settings` is dropped: the caller's settings live in the driver, and the
//! constrained request always carries its own `response_format`.
//!
//! One expectation is the project's own (see [`project_expectations`]): in
//! `handoff_wins_over_regular_tool_call` the regular call runs before the handoff and its
//! result reaches the target's transcript (field case BR-27), where the vector drops it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use helikon_loop::{
    call_refs, event_refs, transition, transition_json, AgentEvent, EventRef, Item, LoopConfig,
    LoopState, NextAction, TransitionCtx, TransitionInput,
};
use serde_json::{json, Map, Value};

fn shared_dir() -> PathBuf {
    match std::env::var_os("HELIKON_SHARED") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    }
}

fn load() -> Value {
    let path = shared_dir().join("conformance/transition.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn field_schema(kind: &str) -> Value {
    match kind {
        "u32" => json!({"type": "integer", "minimum": 0}),
        "string" => json!({"type": "string"}),
        other => panic!("unknown field type {other}"),
    }
}

fn output_schema(fields: &Map<String, Value>) -> Value {
    let properties: Map<String, Value> = fields
        .iter()
        .map(|(k, v)| (k.clone(), field_schema(v.as_str().unwrap())))
        .collect();
    let required: Vec<&String> = fields.keys().collect();
    json!({"type": "object", "properties": properties, "required": required})
}

fn config_json(case_config: &Value) -> Value {
    let mut c = case_config.as_object().unwrap().clone();
    c.remove("model_settings");
    if let Some(Value::Array(tools)) = c.get_mut("tools") {
        for t in tools.iter_mut() {
            if let Value::String(name) = t {
                *t = json!({"name": name});
            }
        }
    }
    if let Some(out @ Value::Object(_)) = c.get_mut("output_type") {
        let fields = out["fields"].as_object().unwrap().clone();
        *out = json!({"name": out["name"], "schema": output_schema(&fields)});
    }
    Value::Object(c)
}

fn pascal(snake: &str) -> String {
    snake
        .split('_')
        .map(|w| {
            let mut cs = w.chars();
            cs.next()
                .map(|f| f.to_uppercase().chain(cs).collect::<String>())
                .unwrap_or_default()
        })
        .collect()
}

fn texts_contain(actual: &str, wanted: &Value, ctx: &str) {
    let wanted: Vec<&str> = match wanted {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().map(|s| s.as_str().unwrap()).collect(),
        _ => panic!("{ctx}: bad text_contains"),
    };
    for w in wanted {
        assert!(
            actual.contains(w),
            "{ctx}: {actual:?} does not contain {w:?}"
        );
    }
}

/// Structural equality where an expected `text_contains` stands for a `text` substring check.
fn matches(actual: &Value, expected: &Value, ctx: &str) {
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => {
            // `text_contains` replaces `text`: same keys otherwise, text checked by substring.
            let substitute = |k: &String| {
                if k == "text_contains" {
                    "text".to_owned()
                } else {
                    k.clone()
                }
            };
            let mut ak: Vec<&String> = a.keys().collect();
            let mut ek: Vec<String> = e.keys().map(substitute).collect();
            ak.sort();
            ek.sort();
            assert_eq!(ak, ek.iter().collect::<Vec<_>>(), "{ctx}: keys differ");
            for (k, w) in e {
                if k == "text_contains" {
                    texts_contain(a["text"].as_str().unwrap(), w, ctx);
                } else {
                    matches(&a[k], w, &format!("{ctx}.{k}"));
                }
            }
        }
        (Value::Array(a), Value::Array(e)) => {
            assert_eq!(
                a.len(),
                e.len(),
                "{ctx}: length differs: {actual} vs {expected}"
            );
            for (i, (x, y)) in a.iter().zip(e).enumerate() {
                matches(x, y, &format!("{ctx}[{i}]"));
            }
        }
        _ => assert_eq!(actual, expected, "{ctx}"),
    }
}

fn strip_type(calls: &Value) -> Value {
    let mut calls = calls.clone();
    for c in calls.as_array_mut().unwrap() {
        assert_eq!(c["type"], "tool_call");
        c.as_object_mut().unwrap().remove("type");
    }
    calls
}

fn check_event_field(event: &Value, key: &str, want: &Value, ctx: &str) {
    let ctx = &format!("{ctx} field {key}");
    match key {
        "error" => assert_eq!(&event["error"]["message"], want, "{ctx}"),
        "error_starts_with" => {
            let message = event["error"]["message"].as_str().unwrap();
            assert!(
                message.starts_with(want.as_str().unwrap()),
                "{ctx}: {message}"
            );
        }
        "schema_errors_contains" => {
            let errors = event["schema_errors"].as_array().unwrap();
            let w = want.as_str().unwrap();
            assert!(
                errors.iter().any(|e| e.as_str().unwrap().contains(w)),
                "{ctx}: {errors:?}"
            );
        }
        _ => {
            let actual = event.get(key).or_else(|| event["item"].get(key));
            matches(actual.unwrap_or(&Value::Null), want, ctx);
        }
    }
}

fn check_request(request: &Value, outcome: &Value, want: &Map<String, Value>, ctx: &str) {
    for (key, w) in want {
        let ctx = &format!("{ctx} request.{key}");
        match key.as_str() {
            "tools" | "transfer_tool_defs" => assert_eq!(&request[key], w, "{ctx}"),
            "response_format" if w == "unchanged" => assert_eq!(&request[key], w, "{ctx}"),
            "response_format" => {
                for (k, v) in w.as_object().unwrap() {
                    assert_eq!(&request[key][k], v, "{ctx}.{k}");
                }
                assert!(request[key]["schema"].is_object(), "{ctx}: schema missing");
            }
            "tool_choice" => {
                assert!(w.is_null());
                assert_eq!(request["clear_tool_choice"], true, "{ctx}");
            }
            "messages" if w == "conversation" => {
                assert!(request["repair_message"].is_null(), "{ctx}");
                assert_eq!(outcome["conversation_appends"], json!([]), "{ctx}");
            }
            "messages" if w == "conversation+repair" => {
                let message = &request["repair_message"];
                assert_eq!(message["type"], "user_message", "{ctx}");
                assert_eq!(outcome["conversation_appends"], json!([message]), "{ctx}");
            }
            other => panic!("{ctx}: unhandled request expectation {other}"),
        }
    }
    // Constrained turns (and only they) clear the tool choice.
    let constrained = request["response_format"] != "unchanged";
    assert_eq!(
        request["clear_tool_choice"], constrained,
        "{ctx}: clear_tool_choice"
    );
}

fn check_error(error: &Value, want: &Map<String, Value>, ctx: &str) {
    for (key, w) in want {
        let ctx = &format!("{ctx} error.{key}");
        if key == "schema_errors_nonempty" {
            let n = error["schema_errors"].as_array().map_or(0, Vec::len);
            assert_eq!(n > 0, w.as_bool().unwrap(), "{ctx}");
        } else {
            assert_eq!(&error[key], w, "{ctx}");
        }
    }
}

fn check_step(step: &Value, outcome: &Value, ctx: &str) {
    let state = &outcome["next_state"];
    let action = &outcome["next_action"];
    let events = outcome["events"].as_array().unwrap();
    for (key, want) in step.as_object().unwrap() {
        let ctx = &format!("{ctx} {key}");
        match key.as_str() {
            "input" => {}
            "expect_state" => assert_eq!(&state["state"], want, "{ctx}: {outcome}"),
            "expect_turn" => assert_eq!(&state["turn"], want, "{ctx}"),
            "expect_action" => assert_eq!(&action["action"], want, "{ctx}: {outcome}"),
            "expect_request" => {
                assert_eq!(action["action"], "CallModel", "{ctx}");
                check_request(&action["request"], outcome, want.as_object().unwrap(), ctx);
            }
            "expect_calls" => {
                assert_eq!(&strip_type(&action["calls"]), want, "{ctx}: action");
                assert_eq!(&strip_type(&state["calls"]), want, "{ctx}: state");
            }
            "expect_events" => {
                let kinds: Vec<String> = events
                    .iter()
                    .map(|e| pascal(e["type"].as_str().unwrap()))
                    .collect();
                let want: Vec<&str> = want
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|k| k.as_str().unwrap())
                    .collect();
                assert_eq!(kinds, want, "{ctx}: {outcome}");
            }
            "expect_event_fields" => {
                let want = want.as_array().unwrap();
                assert_eq!(want.len(), events.len(), "{ctx}");
                for (i, (event, fields)) in events.iter().zip(want).enumerate() {
                    for (k, w) in fields.as_object().unwrap() {
                        check_event_field(event, k, w, &format!("{ctx}[{i}]"));
                    }
                }
            }
            "expect_final_text" => assert_eq!(&state["output"]["text"], want, "{ctx}"),
            "expect_usage" => {
                assert_eq!(&state["usage"], want, "{ctx}");
                for e in events.iter().filter(|e| e["type"] == "run_completed") {
                    assert_eq!(&e["usage"], want, "{ctx}: run_completed");
                }
            }
            "expect_error" => check_error(&state["error"], want.as_object().unwrap(), ctx),
            "expect_target" => {
                assert_eq!(&state["target"], want, "{ctx}: state");
                assert_eq!(&action["target"], want, "{ctx}: action");
            }
            "expect_transcript" => matches(&state["transcript"], want, ctx),
            "expect_conversation_appends" => matches(&outcome["conversation_appends"], want, ctx),
            other => panic!("{ctx}: unhandled expectation {other}"),
        }
    }
    // Every terminal outcome terminates, and only terminal outcomes do.
    let terminal = matches!(state["state"].as_str(), Some("Done" | "Failed"));
    assert_eq!(
        action["action"] == "Terminate",
        terminal,
        "{ctx}: {outcome}"
    );
}

/// The typed transition of the same step: every item event and call points at its input
/// entry (`event_refs` / `call_refs`, which `LoopRun` relies on), none falls back to `Other`.
fn check_refs(state: Option<&str>, input: &Value, config: &LoopConfig, conv: &str, ctx: &str) {
    let state: LoopState =
        state.map_or_else(LoopState::initial, |s| serde_json::from_str(s).unwrap());
    let input: TransitionInput = serde_json::from_value(input.clone()).unwrap();
    let conversation: Vec<Item> = serde_json::from_str(conv).unwrap();
    let (items, results) = match &input {
        TransitionInput::ModelResponse(r) => (r.items.clone(), Vec::new()),
        TransitionInput::ToolResults(r) => (Vec::new(), r.clone()),
        TransitionInput::Defer(d) => (Vec::new(), d.results.clone()),
        _ => (Vec::new(), Vec::new()),
    };
    let ctx_ = TransitionCtx {
        config,
        conversation: &conversation,
    };
    let out = transition(&state, input, &ctx_);
    let refs = event_refs(&out.events, &items, &results);
    for (event, r) in out.events.iter().zip(&refs) {
        match (event, *r) {
            (AgentEvent::MessageOutput { item }, EventRef::MessageOutput(i))
            | (AgentEvent::ToolCallItem { item }, EventRef::ToolCallItem(i)) => {
                assert_eq!(&items[i], item, "{ctx}")
            }
            (AgentEvent::ToolOutputItem { item }, EventRef::ToolOutputItem(i)) => {
                let Item::ToolResult(t) = item else {
                    panic!("{ctx}: {item:?}")
                };
                assert_eq!(t.call_id, results[i].call_id, "{ctx}");
            }
            (AgentEvent::TurnStarted { turn }, EventRef::TurnStarted(t)) => {
                assert_eq!(*turn, t, "{ctx}")
            }
            (AgentEvent::RunCompleted { usage }, EventRef::RunCompleted(u)) => {
                assert_eq!(*usage, u, "{ctx}")
            }
            (
                AgentEvent::RepairStarted { .. }
                | AgentEvent::StructuredOutputFailed { .. }
                | AgentEvent::RunFailed { .. },
                EventRef::Other(o),
            ) => assert_eq!(event, o, "{ctx}"),
            (e, r) => panic!("{ctx}: {e:?} referenced as {r:?}"),
        }
    }
    if let NextAction::ExecuteTools { calls } = &out.next_action {
        for (call, found) in calls.iter().zip(call_refs(calls, &items)) {
            let i = found.unwrap_or_else(|| panic!("{ctx}: call {call:?} not found"));
            assert!(matches!(&items[i], Item::ToolCall(c) if c == call), "{ctx}");
        }
    }
}

/// The steps this project expects where it departs from the shared vector on purpose.
fn project_expectations(case: &Value) -> Value {
    if case["id"] != "handoff_wins_over_regular_tool_call" {
        return case.clone();
    }
    // BR-27: the response's regular call `c0` runs first; the transfer call `c1` waits.
    let mut case = case.clone();
    let response = case["steps"][0]["input"].clone();
    let result = json!({"call_id": "c0", "ok": [{"type": "text", "text": "$1,840 spent"}]});
    case["steps"] = json!([
        {
            "input": response,
            "expect_state": "ExecutingTools",
            "expect_action": "ExecuteTools",
            "expect_calls": [{"call_id": "c0", "name": "lookup_spending",
                              "args": {"period": "last_month"}}],
            "expect_events": ["MessageOutput", "ToolCallItem", "ToolCallItem"],
            "expect_event_fields": [{}, {"call_id": "c0"}, {"call_id": "c1"}],
        },
        {
            "input": {"tool_results": [result]},
            "expect_state": "ApplyingHandoff",
            "expect_target": "budgeting specialist",
            "expect_action": "Handoff",
            "expect_events": ["ToolOutputItem"],
            "expect_event_fields": [{"call_id": "c0"}],
            "expect_transcript": [
                {"type": "user_message", "content": [{"type": "text", "text": "help me budget"}]},
                {"type": "assistant_message", "agent": null, "content": [{"type": "text",
                    "text": "Before the transfer I called these tools:\n- lookup_spending \
                             {\"period\":\"last_month\"} -> $1,840 spent"}]},
                {"type": "user_message",
                 "content": [{"type": "text", "text_contains": "transferred"}]},
            ],
        },
    ]);
    case
}

#[test]
fn every_transition_case_passes() {
    let vectors = load();
    let cases = vectors["cases"].as_array().unwrap();
    assert!(!cases.is_empty());
    let mut steps_run = 0;
    for case in cases {
        let case = &project_expectations(case);
        let id = case["id"].as_str().unwrap();
        let config = LoopConfig::from_value(config_json(&case["config"]))
            .unwrap_or_else(|e| panic!("{id}: config: {e}"));
        let conversation = case.get("conversation").cloned().unwrap_or(json!([]));
        let conversation = conversation.to_string();
        let mut state = case.get("initial_state").map(Value::to_string);
        for (i, step) in case["steps"].as_array().unwrap().iter().enumerate() {
            let ctx = format!("{id} step {i}");
            let input = step["input"].to_string();
            let out = transition_json(state.as_deref(), &input, &config, &conversation)
                .unwrap_or_else(|e| panic!("{ctx}: {e}"));
            let outcome: Value = serde_json::from_str(&out).unwrap();
            check_step(step, &outcome, &ctx);
            check_refs(
                state.as_deref(),
                &step["input"],
                &config,
                &conversation,
                &ctx,
            );
            state = Some(outcome["next_state"].to_string());
            steps_run += 1;
        }
    }
    assert!(steps_run >= cases.len());
}
