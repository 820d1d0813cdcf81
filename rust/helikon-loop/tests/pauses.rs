//! Approval pauses and compaction: the inputs that enter and leave `NeedsApproval` and
//! `Compacting`, what each emits, and the inputs they refuse.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod support;

use helikon_loop::{LoopState, TransitionInput};
use serde_json::{json, Value};
use support::*;

fn executing(ids: &[&str]) -> LoopState {
    let calls: Vec<Value> = ids
        .iter()
        .map(|id| json!({"call_id": id, "name": "a", "args": {"n": id}}))
        .collect();
    state(json!({"state": "ExecutingTools", "turn": 1, "calls": calls, "usage": usage(3)}))
}

fn defer(pending: &[&str], done: &[&str]) -> TransitionInput {
    let results: Vec<Value> = done
        .iter()
        .map(|id| json!({"call_id": id, "ok": [{"type": "text", "text": format!("ran {id}")}]}))
        .collect();
    input(json!({"defer": {"pending": pending, "results": results}}))
}

fn decisions(list: Value) -> TransitionInput {
    input(json!({ "decisions": list }))
}

#[test]
fn defer_pauses_with_the_waiting_calls_as_the_model_gave_them() {
    let out = run(
        &executing(&["1", "2", "3"]),
        defer(&["3", "1"], &["2"]),
        &plain(),
    );
    let v = as_json(&out);
    // pending in call order, arguments untouched; the decided call's output is emitted
    assert_eq!(
        v["next_state"],
        json!({"state": "NeedsApproval", "turn": 1, "usage": usage(3), "pending": [
            {"type": "tool_call", "call_id": "1", "name": "a", "args": {"n": "1"}},
            {"type": "tool_call", "call_id": "3", "name": "a", "args": {"n": "3"}},
        ]})
    );
    assert_eq!(v["next_action"]["action"], "AwaitApproval");
    assert_eq!(v["next_action"]["pending"], v["next_state"]["pending"]);
    assert_eq!(kinds(&out), ["ToolOutputItem"]);
    assert_eq!(v["events"][0]["item"]["call_id"], "2");
    assert_eq!(v["events"][0]["item"]["content"][0]["text"], "ran 2");
    assert_eq!(out.next_state.usage().unwrap().total_tokens, 3);
}

#[test]
fn defer_must_cover_every_call_exactly_once() {
    for (pending, done, problem) in [
        (
            vec![],
            vec!["1", "2"],
            "no call waits; feed tool_results instead",
        ),
        (vec!["1"], vec![], "no outcome for call_id `2`"),
        (vec!["1", "2"], vec!["2"], "two outcomes for call_id `2`"),
        (vec!["1", "9"], vec!["2"], "unknown call_id `9`"),
    ] {
        let out = run(&executing(&["1", "2"]), defer(&pending, &done), &plain());
        assert_eq!(out.next_state.name(), "Failed");
        assert_eq!(
            failure(&out),
            format!("invalid transition: defer do not match the pending calls ({problem})")
        );
    }
}

fn paused() -> LoopState {
    let out = run(
        &executing(&["1", "2", "3", "4"]),
        defer(&["1", "2", "3"], &["4"]),
        &plain(),
    );
    out.next_state
}

#[test]
fn decisions_deny_at_once_and_run_approved_and_edited_calls() {
    let out = run(
        &paused(),
        decisions(json!([
            {"call_id": "3", "decision": "edit", "args": {"n": "edited"}},
            {"call_id": "2", "decision": "deny", "reason": "not today"},
            {"call_id": "1", "decision": "approve"},
        ])),
        &plain(),
    );
    let v = as_json(&out);
    assert_eq!(kinds(&out), ["ToolOutputItem"]);
    assert_eq!(
        v["events"][0]["item"],
        json!({"type": "tool_result", "call_id": "2", "is_error": true,
               "content": [{"type": "text", "text": "approval denied: not today"}]})
    );
    let run_calls = json!([
        {"type": "tool_call", "call_id": "1", "name": "a", "args": {"n": "1"}},
        {"type": "tool_call", "call_id": "3", "name": "a", "args": {"n": "edited"}},
    ]);
    assert_eq!(
        v["next_action"],
        json!({"action": "ExecuteTools", "calls": run_calls})
    );
    assert_eq!(
        v["next_state"],
        json!({"state": "ExecutingTools", "turn": 1, "usage": usage(3), "calls": run_calls})
    );
    // their results finish the turn as usual
    let done = run(&out.next_state, results(&["3", "1"]), &plain());
    assert_eq!(done.next_state.name(), "CallingModel");
    assert_eq!(
        kinds(&done),
        ["ToolOutputItem", "ToolOutputItem", "TurnStarted"]
    );
}

#[test]
fn all_denied_goes_straight_to_the_next_turn_or_the_turn_limit() {
    let deny_all = json!([
        {"call_id": "1", "decision": "deny", "reason": "a"},
        {"call_id": "2", "decision": "deny", "reason": "b"},
        {"call_id": "3", "decision": "deny", "reason": "c"},
    ]);
    let out = run(&paused(), decisions(deny_all.clone()), &plain());
    assert_eq!(
        kinds(&out),
        [
            "ToolOutputItem",
            "ToolOutputItem",
            "ToolOutputItem",
            "TurnStarted"
        ]
    );
    let v = as_json(&out);
    assert_eq!(
        v["next_state"],
        json!({"state": "CallingModel", "turn": 2, "usage": usage(3)})
    );
    assert_eq!(v["next_action"]["action"], "CallModel");
    let tight = config(json!({"max_turns": 2, "tools": [{"name": "a"}]}));
    let out = run(&paused(), decisions(deny_all), &tight);
    assert_eq!(failure(&out), "max turns (2) exceeded");
    assert_eq!(
        kinds(&out),
        [
            "ToolOutputItem",
            "ToolOutputItem",
            "ToolOutputItem",
            "RunFailed"
        ]
    );
}

#[test]
fn decisions_must_answer_every_pending_call_exactly_once() {
    for (list, problem) in [
        (
            json!([{"call_id": "1", "decision": "approve"}]),
            "no decision for call_id `2`",
        ),
        (
            json!([{"call_id": "1", "decision": "approve"}, {"call_id": "1", "decision": "approve"},
                   {"call_id": "2", "decision": "approve"}, {"call_id": "3", "decision": "approve"}]),
            "two decisions for call_id `1`",
        ),
        (
            json!([{"call_id": "4", "decision": "approve"}]),
            "unknown call_id `4`",
        ),
    ] {
        let out = run(&paused(), decisions(list), &plain());
        assert_eq!(out.next_state.name(), "Failed");
        assert_eq!(
            failure(&out),
            format!("invalid transition: decisions do not match the pending calls ({problem})")
        );
    }
}

#[test]
fn a_pause_is_left_only_by_decisions() {
    let out = run(&paused(), results(&["1", "2", "3"]), &plain());
    assert_eq!(
        failure(&out),
        "invalid transition: tool_results in state NeedsApproval"
    );
    let out = run(&paused(), input(json!("start")), &plain());
    assert_eq!(failure(&out), "not yet implemented: approval");
    // a paused state survives JSON and resumes the same way
    let text = serde_json::to_string(&paused()).unwrap();
    let back: LoopState = serde_json::from_str(&text).unwrap();
    assert_eq!(back, paused());
}

#[test]
fn compaction_is_a_visible_phase_that_returns_to_the_due_model_call() {
    let s = state(json!({"state": "CallingModel", "turn": 2, "usage": usage(1)}));
    let out = run(
        &s,
        input(json!({"compaction_started": {"tokens_before": 900}})),
        &plain(),
    );
    let v = as_json(&out);
    assert_eq!(
        v["next_state"],
        json!({"state": "Compacting", "turn": 2, "usage": usage(1), "tokens_before": 900})
    );
    assert_eq!(v["next_action"], json!({"action": "Compact"}));
    assert_eq!(
        v["events"],
        json!([{"type": "compaction_started", "tokens_before": 900}])
    );
    let end = input(json!({"compaction_completed": {"tokens_after": 120, "usage": usage(2)}}));
    let out = run(&out.next_state, end, &plain());
    let v = as_json(&out);
    assert_eq!(
        v["events"],
        json!([{"type": "compaction_completed", "tokens_before": 900, "tokens_after": 120}])
    );
    assert_eq!(
        v["next_state"],
        json!({"state": "CallingModel", "turn": 2, "usage": usage(3)})
    );
    assert_eq!(v["next_action"]["action"], "CallModel");
    assert_eq!(v["next_action"]["request"]["tools"], json!(["a"]));
}

#[test]
fn compaction_inputs_elsewhere_are_invalid() {
    let start = input(json!({"compaction_started": {"tokens_before": 1}}));
    let out = run(&executing(&["1"]), start, &plain());
    assert_eq!(
        failure(&out),
        "invalid transition: compaction_started in state ExecutingTools"
    );
    let end = input(json!({"compaction_completed": {"tokens_after": 1}}));
    let s = state(json!({"state": "CallingModel", "turn": 0}));
    assert_eq!(
        failure(&run(&s, end, &plain())),
        "invalid transition: compaction_completed in state CallingModel"
    );
    // the turn limit is checked first, as for every input in CallingModel
    let s = state(json!({"state": "CallingModel", "turn": 4}));
    let start = input(json!({"compaction_started": {"tokens_before": 1}}));
    assert_eq!(failure(&run(&s, start, &plain())), "max turns (4) exceeded");
}

fn executing_with_handoff() -> LoopState {
    state(json!({
        "state": "ExecutingTools", "turn": 1, "usage": usage(3),
        "calls": [
            {"call_id": "1", "name": "a", "args": {"n": "1"}},
            {"call_id": "2", "name": "a", "args": {"n": "2"}},
        ],
        "handoff": {"target": "billing", "transcript": [
            {"type": "user_message", "content": [{"type": "text", "text": "hi"}]},
            {"type": "system", "content": [{"type": "text", "text": "transferred"}]},
        ]},
    }))
}

#[test]
fn a_handoff_pending_at_the_pause_is_kept_and_taken_after_the_approved_calls() {
    // field case BR-27 with an approval: the handoff survives the pause (and a persisted
    // state), then the approved call runs and the handoff happens
    let paused = run(&executing_with_handoff(), defer(&["2"], &["1"]), &plain());
    let v = as_json(&paused);
    assert_eq!(v["next_state"]["state"], "NeedsApproval");
    assert_eq!(v["next_state"]["handoff"]["target"], "billing");
    let reloaded = state(v["next_state"].clone());
    let decided = run(
        &reloaded,
        decisions(json!([{"call_id": "2", "decision": "approve"}])),
        &plain(),
    );
    let d = as_json(&decided);
    assert_eq!(d["next_state"]["state"], "ExecutingTools");
    assert_eq!(d["next_state"]["handoff"]["target"], "billing");
    let results = input(json!({"tool_results": [
        {"call_id": "2", "ok": [{"type": "text", "text": "ran 2"}]}
    ]}));
    let done = run(&state(d["next_state"].clone()), results, &plain());
    let r = as_json(&done);
    assert_eq!(r["next_action"]["action"], "Handoff");
    assert_eq!(r["next_state"]["target"], "billing");
}

#[test]
fn a_handoff_pending_at_the_pause_happens_when_every_waiting_call_is_denied() {
    let paused = run(&executing_with_handoff(), defer(&["2"], &["1"]), &plain());
    let v = as_json(&paused);
    let decided = run(
        &state(v["next_state"].clone()),
        decisions(json!([{"call_id": "2", "decision": "deny", "reason": "no"}])),
        &plain(),
    );
    let d = as_json(&decided);
    assert_eq!(d["next_action"]["action"], "Handoff");
    assert_eq!(d["next_state"]["state"], "ApplyingHandoff");
    assert_eq!(kinds(&decided), ["ToolOutputItem"]);
    assert_eq!(
        d["events"][0]["item"]["content"][0]["text"],
        "approval denied: no"
    );
    // the transcript notes the denied call before the transfer note
    let transcript = d["next_state"]["transcript"].as_array().unwrap();
    let note = transcript[transcript.len() - 2]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(note.contains("failed: approval denied: no"), "{note}");
}
