//! Arbitrary state / input through `transition`, then `event_refs` and `call_refs`: every
//! reference must point at an input entry equal to what the outcome carries (what the
//! binding's `LoopRun` relies on). Input layout: two NUL-separated JSON texts.
#![no_main]

use helikon_loop::{
    call_refs, event_refs, transition, AgentEvent, EventRef, Item, LoopConfig, LoopState,
    NextAction, ToolOutcomeResult, TransitionCtx, TransitionInput,
};
use libfuzzer_sys::fuzz_target;

const CONFIG: &str = r#"{"max_turns": 3, "tools": [{"name": "a"}],
  "handoffs": [{"tool_name": "transfer_to_x", "target": "X"}]}"#;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(config) = LoopConfig::from_json(CONFIG) else {
        return;
    };
    let (state, input) = text.split_once('\0').unwrap_or(("", text));
    let state: LoopState = if state.is_empty() {
        LoopState::initial()
    } else {
        let Ok(s) = serde_json::from_str(state) else {
            return;
        };
        s
    };
    let Ok(input) = serde_json::from_str::<TransitionInput>(input) else {
        return;
    };
    let (items, results) = match &input {
        TransitionInput::ModelResponse(r) => (r.items.clone(), Vec::new()),
        TransitionInput::ToolResults(r) => (Vec::new(), r.clone()),
        TransitionInput::Defer(d) => (Vec::new(), d.results.clone()),
        TransitionInput::Start
        | TransitionInput::Decisions(_)
        | TransitionInput::CompactionStarted(_)
        | TransitionInput::CompactionCompleted(_) => (Vec::new(), Vec::new()),
    };
    let ctx = TransitionCtx {
        config: &config,
        conversation: &[],
    };
    let out = transition(&state, input, &ctx);
    for (event, r) in out
        .events
        .iter()
        .zip(event_refs(&out.events, &items, &results))
    {
        match (event, r) {
            (AgentEvent::MessageOutput { item }, EventRef::MessageOutput(i))
            | (AgentEvent::ToolCallItem { item }, EventRef::ToolCallItem(i)) => {
                assert_eq!(&items[i], item);
            }
            (
                AgentEvent::ToolOutputItem {
                    item: Item::ToolResult(t),
                },
                EventRef::ToolOutputItem(i),
            ) => {
                assert_eq!(results[i].call_id, t.call_id);
                match &results[i].result {
                    ToolOutcomeResult::Ok(parts) => assert_eq!(&t.content, parts),
                    ToolOutcomeResult::Error(_) => assert!(t.is_error),
                }
            }
            (AgentEvent::TurnStarted { turn }, EventRef::TurnStarted(t)) => assert_eq!(*turn, t),
            (AgentEvent::RunCompleted { usage }, EventRef::RunCompleted(u)) => {
                assert_eq!(*usage, u)
            }
            (e, EventRef::Other(o)) => assert_eq!(e, o),
            (e, r) => panic!("{e:?} referenced as {r:?}"),
        }
    }
    if let NextAction::ExecuteTools { calls } = &out.next_action {
        for (call, found) in calls.iter().zip(call_refs(calls, &items)) {
            if let Some(i) = found {
                assert!(matches!(&items[i], Item::ToolCall(c) if c == call));
            }
        }
    }
});
