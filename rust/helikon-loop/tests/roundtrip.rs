//! JSON shapes: every state round-trips exactly; terse states fill defaults; outcomes
//! round-trip too.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use helikon_loop::{LoopState, TransitionOutcome};
use serde_json::{json, Value};
use support::*;

fn full_states() -> Vec<Value> {
    let tc = json!({"type": "tool_call", "call_id": "1", "name": "a", "args": {"k": "v"}});
    vec![
        json!({"state": "CallingModel", "turn": 2, "usage": usage(1)}),
        json!({"state": "ExecutingTools", "turn": 1, "calls": [tc], "usage": usage(2)}),
        json!({"state": "ApplyingHandoff", "target": "X", "usage": usage(3),
               "transcript": [{"type": "user_message", "content": [{"type": "text",
                                                                   "text": "hi"}]}]}),
        json!({"state": "Finalizing", "turn": 3, "usage": usage(4)}),
        json!({"state": "RepairingOutput", "turn": 3, "usage": usage(5)}),
        json!({"state": "Compacting", "turn": 1, "usage": usage(6), "tokens_before": 40}),
        json!({"state": "NeedsApproval", "turn": 2, "pending": [tc], "usage": usage(8)}),
        json!({"state": "Done", "usage": usage(7), "output": {"text": "ab", "content": [
            {"type": "text", "text": "a"}, {"type": "reasoning", "text": "r",
                                            "signature": "s"},
            {"type": "text", "text": "b"}]}}),
        json!({"state": "Failed", "error": {"kind": "MaxTurnsExceeded", "max_turns": 3,
                                            "message": "max turns (3) exceeded"}}),
        json!({"state": "Failed", "error": {"kind": "InvalidStructuredOutput",
            "message": "invalid structured output after one repair attempt",
            "schema_errors": ["x"], "final_text": "t"}}),
        json!({"state": "Failed", "error": {"kind": "NotImplemented", "feature": "approval",
                                            "message": "not yet implemented: approval"}}),
        json!({"state": "Failed", "error": {"kind": "Other", "message": "m"}}),
    ]
}

#[test]
fn every_state_round_trips_exactly() {
    for v in full_states() {
        let s: LoopState = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(&s).unwrap(), v);
        let text = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<LoopState>(&text).unwrap(), s);
    }
}

#[test]
fn terse_states_fill_defaults() {
    let zero = usage(0);
    for (terse, full) in [
        (
            json!({"state": "CallingModel"}),
            json!({"state": "CallingModel", "turn": 0,
                                                   "usage": zero}),
        ),
        (
            json!({"state": "ExecutingTools", "turn": 1, "calls": [{"call_id": "1", "name": "a"}]}),
            json!({"state": "ExecutingTools", "turn": 1, "usage": zero, "calls": [
             {"type": "tool_call", "call_id": "1", "name": "a", "args": {}}]}),
        ),
        (
            json!({"state": "ApplyingHandoff", "target": "X"}),
            json!({"state": "ApplyingHandoff", "target": "X", "transcript": [], "usage": zero}),
        ),
        (
            json!({"state": "Compacting"}),
            json!({"state": "Compacting", "turn": 0, "usage": zero, "tokens_before": 0}),
        ),
        (
            json!({"state": "NeedsApproval"}),
            json!({"state": "NeedsApproval", "turn": 0, "pending": [], "usage": zero}),
        ),
        (
            json!({"state": "Done"}),
            json!({"state": "Done", "usage": zero,
                                           "output": {"text": "", "content": []}}),
        ),
    ] {
        let s: LoopState = serde_json::from_value(terse).unwrap();
        assert_eq!(serde_json::to_value(&s).unwrap(), full);
    }
    assert_eq!(
        serde_json::to_value(LoopState::initial()).unwrap(),
        json!({"state": "CallingModel", "turn": 0, "usage": zero})
    );
}

#[test]
fn malformed_states_are_rejected() {
    for v in [
        json!({"state": "Thinking"}),
        json!({"turn": 1}),
        json!({"state": "ApplyingHandoff"}),
        json!({"state": "Failed"}),
        json!({"state": "CallingModel", "turn": -1}),
        json!({"state": "ExecutingTools", "calls": [{"type": "tool_result", "call_id": "1",
                                                      "name": "a"}]}),
    ] {
        assert!(
            serde_json::from_value::<LoopState>(v.clone()).is_err(),
            "{v}"
        );
    }
}

#[test]
fn outcomes_round_trip() {
    let cfg = structured();
    let s = state(json!({"state": "Finalizing"}));
    let outcome = run(&s, response(json!([assistant("nope")])), &cfg);
    let v = serde_json::to_value(&outcome).unwrap();
    let back: TransitionOutcome = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(back, outcome);
    assert_eq!(serde_json::to_value(&back).unwrap(), v);

    let outcome = run(
        &LoopState::initial(),
        response(json!([call("1", "a")])),
        &plain(),
    );
    let v = serde_json::to_value(&outcome).unwrap();
    assert_eq!(
        serde_json::from_value::<TransitionOutcome>(v).unwrap(),
        outcome
    );
}
