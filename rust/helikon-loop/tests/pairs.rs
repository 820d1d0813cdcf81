//! Every state x input pair, including the ones the machine refuses.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use helikon_loop::{LoopConfig, LoopState, NextAction, TransitionInput};
use serde_json::{json, Value};
use support::*;

fn all_states() -> Vec<(&'static str, Value)> {
    vec![
        ("CallingModel", json!({"state": "CallingModel", "turn": 1})),
        (
            "ExecutingTools",
            json!({"state": "ExecutingTools", "turn": 1, "calls": [call("1", "a")]}),
        ),
        (
            "ApplyingHandoff",
            json!({"state": "ApplyingHandoff", "target": "X"}),
        ),
        ("Finalizing", json!({"state": "Finalizing", "turn": 1})),
        (
            "RepairingOutput",
            json!({"state": "RepairingOutput", "turn": 1}),
        ),
        ("Compacting", json!({"state": "Compacting", "turn": 1})),
        (
            "NeedsApproval",
            json!({"state": "NeedsApproval", "pending": [call("1", "a")]}),
        ),
        ("Done", json!({"state": "Done"})),
        (
            "Failed",
            json!({"state": "Failed", "error": {"kind": "Other", "message": "earlier"}}),
        ),
    ]
}

fn all_inputs() -> Vec<(&'static str, TransitionInput)> {
    vec![
        ("start", input(json!("start"))),
        (
            "model_response",
            response(json!([assistant("{\"value\": 1}")])),
        ),
        ("tool_results", results(&["1"])),
        ("defer", input(json!({"defer": {"pending": ["1"]}}))),
        (
            "decisions",
            input(json!({"decisions": [{"call_id": "1", "decision": "approve"}]})),
        ),
        (
            "compaction_started",
            input(json!({"compaction_started": {"tokens_before": 9}})),
        ),
        (
            "compaction_completed",
            input(json!({"compaction_completed": {"tokens_after": 3}})),
        ),
    ]
}

/// Expected (next state, action, events) for each pair, with an output type configured for
/// Finalizing/RepairingOutput and a plain config otherwise.
fn expected(state: &str, input: &str) -> (&'static str, &'static str, Vec<&'static str>) {
    match (state, input) {
        ("CallingModel", "start") => ("CallingModel", "CallModel", vec!["TurnStarted"]),
        ("CallingModel", "model_response") => {
            ("Done", "Terminate", vec!["MessageOutput", "RunCompleted"])
        }
        ("ExecutingTools", "tool_results") => (
            "CallingModel",
            "CallModel",
            vec!["ToolOutputItem", "TurnStarted"],
        ),
        ("Finalizing" | "RepairingOutput", "model_response") => {
            ("Done", "Terminate", vec!["MessageOutput", "RunCompleted"])
        }
        ("ExecutingTools", "defer") => ("NeedsApproval", "AwaitApproval", vec![]),
        ("NeedsApproval", "decisions") => ("ExecutingTools", "ExecuteTools", vec![]),
        ("CallingModel", "compaction_started") => {
            ("Compacting", "Compact", vec!["CompactionStarted"])
        }
        ("Compacting", "compaction_completed") => {
            ("CallingModel", "CallModel", vec!["CompactionCompleted"])
        }
        _ => ("Failed", "Terminate", vec!["RunFailed"]),
    }
}

fn expected_failure(state: &str, input: &str) -> Option<String> {
    match (state, input) {
        ("Compacting", "start") => Some("not yet implemented: compaction".into()),
        ("NeedsApproval", "start") => Some("not yet implemented: approval".into()),
        _ => Some(format!("invalid transition: {input} in state {state}")),
    }
}

fn action_name(action: &NextAction) -> &'static str {
    match action {
        NextAction::CallModel { .. } => "CallModel",
        NextAction::ExecuteTools { .. } => "ExecuteTools",
        NextAction::Handoff { .. } => "Handoff",
        NextAction::AwaitApproval { .. } => "AwaitApproval",
        NextAction::Compact => "Compact",
        NextAction::Terminate => "Terminate",
    }
}

#[test]
fn every_state_input_pair() {
    let mut pairs = 0;
    for (state_name, state_json) in all_states() {
        for (input_name, input) in all_inputs() {
            let config: LoopConfig = match state_name {
                "Finalizing" | "RepairingOutput" => structured(),
                _ => plain(),
            };
            let outcome = run(&state(state_json.clone()), input, &config);
            let (next, action, events) = expected(state_name, input_name);
            let ctx = format!("{state_name} x {input_name}");
            assert_eq!(outcome.next_state.name(), next, "{ctx}");
            assert_eq!(action_name(&outcome.next_action), action, "{ctx}");
            assert_eq!(kinds(&outcome), events, "{ctx}");
            assert!(outcome.conversation_appends.is_empty(), "{ctx}");
            if next == "Failed" {
                assert_eq!(
                    Some(failure(&outcome)),
                    expected_failure(state_name, input_name)
                );
                let kind = as_json(&outcome)["next_state"]["error"]["kind"].clone();
                let want = if matches!(state_name, "Compacting" | "NeedsApproval")
                    && input_name == "start"
                {
                    "NotImplemented"
                } else {
                    "Other"
                };
                assert_eq!(kind, want, "{ctx}");
            }
            pairs += 1;
        }
    }
    assert_eq!(pairs, 63);
}

#[test]
fn max_turn_guard_applies_to_every_input_in_calling_model() {
    for (name, input) in all_inputs() {
        let outcome = run(
            &state(json!({"state": "CallingModel", "turn": 4})),
            input,
            &plain(),
        );
        assert_eq!(failure(&outcome), "max turns (4) exceeded", "{name}");
        assert_eq!(kinds(&outcome), ["RunFailed"]);
        let error = &as_json(&outcome)["next_state"]["error"];
        assert_eq!(
            error,
            &json!({"kind": "MaxTurnsExceeded", "max_turns": 4,
                                   "message": "max turns (4) exceeded"})
        );
    }
}

#[test]
fn max_turn_guard_does_not_apply_to_constrained_turns() {
    let s = state(json!({"state": "Finalizing", "turn": 9}));
    let outcome = run(
        &s,
        response(json!([assistant("{\"value\": 2}")])),
        &structured(),
    );
    assert_eq!(outcome.next_state.name(), "Done");
    // A plain answer at the last turn still gets its Finalizing turn.
    let mut cfg = structured();
    cfg.tools.push(helikon_loop::ToolSpec {
        name: "a".into(),
        description: String::new(),
    });
    let s = state(json!({"state": "CallingModel", "turn": 3}));
    let outcome = run(&s, response(json!([assistant("text")])), &cfg);
    assert_eq!(as_json(&outcome)["next_state"]["state"], "Finalizing");
    assert_eq!(as_json(&outcome)["next_state"]["turn"], 4);
}

#[test]
fn constrained_turns_without_output_type_are_internal_errors() {
    for (name, label) in [
        ("Finalizing", "Finalizing"),
        ("RepairingOutput", "RepairingOutput"),
    ] {
        let s = state(json!({"state": name}));
        let outcome = run(&s, response(json!([assistant("{}")])), &plain());
        assert_eq!(
            failure(&outcome),
            format!("internal: {label} without output type")
        );
        assert_eq!(kinds(&outcome), ["RunFailed"]);
    }
}

#[test]
fn terminal_states_refuse_further_input() {
    let done = state(json!({"state": "Done"}));
    assert!(done.is_terminal());
    assert!(LoopState::initial().usage().is_some());
    assert!(!LoopState::initial().is_terminal());
    let outcome = run(&done, input(json!("start")), &plain());
    assert!(failure(&outcome).starts_with("invalid transition:"));
}
