//! Outcome references: where an outcome's events and calls already live in the driver.
//!
//! Most of what a transition emits is the driver's own input handed back: `MessageOutput`
//! and `ToolCallItem` carry items of the model response, `ToolOutputItem` carries a tool
//! result, and `ExecuteTools` lists the response's calls. A driver that keeps its input can
//! take these by position instead of decoding them again; [`event_refs`] and [`call_refs`]
//! say which position. Anything else (and anything not found verbatim in the input) is
//! [`EventRef::Other`]: the driver decodes that event itself.
use crate::events::AgentEvent;
use crate::input::ToolOutcome;
use crate::items::{Item, ToolCall};
use crate::usage::Usage;

/// One outcome event, by reference where possible.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EventRef<'a> {
    /// `TurnStarted { turn }`.
    TurnStarted(u32),
    /// `MessageOutput` whose item is `items[index]` of the model response.
    MessageOutput(usize),
    /// `ToolCallItem` whose item is `items[index]` of the model response.
    ToolCallItem(usize),
    /// `ToolOutputItem` for `results[index]` of the tool results (its item is the result's
    /// `tool_result`: the `ok` parts, or one text part with `is_error` for an error).
    ToolOutputItem(usize),
    /// `RunCompleted { usage }`.
    RunCompleted(Usage),
    /// Any other event, or an item event whose item is not in the input as it is.
    Other(&'a AgentEvent),
}

/// Each of `events` as an [`EventRef`]; `items` are the model response's items (empty for
/// other inputs) and `results` the tool results (empty for other inputs).
///
/// Item events are matched in order: each search starts after the previous match, so equal
/// items map to distinct positions. A tool output matches the next result with its call id.
pub fn event_refs<'a>(
    events: &'a [AgentEvent],
    items: &[Item],
    results: &[ToolOutcome],
) -> Vec<EventRef<'a>> {
    let mut next_item = 0;
    let mut next_result = 0;
    events
        .iter()
        .map(|event| match event {
            AgentEvent::TurnStarted { turn } => EventRef::TurnStarted(*turn),
            AgentEvent::RunCompleted { usage } => EventRef::RunCompleted(*usage),
            AgentEvent::MessageOutput { item } => match find(items, item, &mut next_item) {
                Some(i) => EventRef::MessageOutput(i),
                None => EventRef::Other(event),
            },
            AgentEvent::ToolCallItem { item } => match find(items, item, &mut next_item) {
                Some(i) => EventRef::ToolCallItem(i),
                None => EventRef::Other(event),
            },
            AgentEvent::ToolOutputItem {
                item: Item::ToolResult(r),
            } => {
                let found = results
                    .iter()
                    .skip(next_result)
                    .position(|o| o.call_id == r.call_id && output_item_matches(o, r))
                    .map(|p| p + next_result);
                match found {
                    Some(i) => {
                        next_result = i + 1;
                        EventRef::ToolOutputItem(i)
                    }
                    None => EventRef::Other(event),
                }
            }
            _ => EventRef::Other(event),
        })
        .collect()
}

/// For each call, the position of the same `tool_call` item in `items` (in order), or
/// `None` when it is not there verbatim.
pub fn call_refs(calls: &[ToolCall], items: &[Item]) -> Vec<Option<usize>> {
    let mut next = 0;
    calls
        .iter()
        .map(|call| {
            let found = items
                .iter()
                .skip(next)
                .position(|i| matches!(i, Item::ToolCall(c) if c == call))
                .map(|p| p + next);
            if let Some(i) = found {
                next = i + 1;
            }
            found
        })
        .collect()
}

fn find(items: &[Item], item: &Item, next: &mut usize) -> Option<usize> {
    let found = items
        .iter()
        .skip(*next)
        .position(|i| i == item)
        .map(|p| p + *next);
    if let Some(i) = found {
        *next = i + 1;
    }
    found
}

fn output_item_matches(outcome: &ToolOutcome, result: &crate::items::ToolResult) -> bool {
    use crate::input::ToolOutcomeResult as R;
    match &outcome.result {
        R::Ok(parts) => !result.is_error && result.content == *parts,
        R::Error(text) => {
            result.is_error
                && matches!(result.content.as_slice(), [p] if p.as_text() == Some(text.as_str()))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use crate::{transition, LoopConfig, LoopState, TransitionCtx, TransitionInput};
    use serde_json::json;

    fn items(v: serde_json::Value) -> Vec<Item> {
        serde_json::from_value(v).unwrap()
    }

    fn config(v: serde_json::Value) -> LoopConfig {
        LoopConfig::from_value(v).unwrap()
    }

    #[test]
    fn model_response_events_and_calls_point_into_the_items() {
        let cfg = config(json!({"tools": [{"name": "a"}]}));
        let response = items(json!([
            {"type": "assistant_message", "content": [{"type": "text", "text": "hm"}]},
            {"type": "tool_call", "call_id": "1", "name": "a", "args": {"k": 1}},
            {"type": "tool_call", "call_id": "1", "name": "a", "args": {"k": 1}},
        ]));
        let input: TransitionInput = serde_json::from_value(json!({"model_response": {
            "items": serde_json::to_value(&response).unwrap()}}))
        .unwrap();
        let ctx = TransitionCtx {
            config: &cfg,
            conversation: &[],
        };
        let out = transition(&LoopState::initial(), input, &ctx);
        assert_eq!(
            event_refs(&out.events, &response, &[]),
            vec![
                EventRef::MessageOutput(0),
                EventRef::ToolCallItem(1),
                EventRef::ToolCallItem(2),
            ]
        );
        let crate::NextAction::ExecuteTools { calls } = &out.next_action else {
            panic!("expected ExecuteTools, got {:?}", out.next_action);
        };
        assert_eq!(call_refs(calls, &response), vec![Some(1), Some(2)]);
    }

    #[test]
    fn tool_outputs_point_into_the_results_and_turns_and_usage_are_inline() {
        let cfg = config(json!({"tools": [{"name": "a"}], "max_turns": 2}));
        let state: LoopState = serde_json::from_value(json!({"state": "ExecutingTools",
            "turn": 0, "calls": [{"call_id": "1", "name": "a"}, {"call_id": "2", "name": "a"}],
            "usage": {"input_tokens": 3}}))
        .unwrap();
        let input: TransitionInput = serde_json::from_value(json!({"tool_results": [
            {"call_id": "1", "ok": [{"type": "text", "text": "x"}]},
            {"call_id": "2", "error": "boom"},
        ]}))
        .unwrap();
        let TransitionInput::ToolResults(results) = input.clone() else {
            panic!("not tool results");
        };
        let ctx = TransitionCtx {
            config: &cfg,
            conversation: &[],
        };
        let out = transition(&state, input, &ctx);
        assert_eq!(
            event_refs(&out.events, &[], &results),
            vec![
                EventRef::ToolOutputItem(0),
                EventRef::ToolOutputItem(1),
                EventRef::TurnStarted(1),
            ]
        );
        let done = vec![AgentEvent::RunCompleted {
            usage: Usage {
                input_tokens: 3,
                ..Usage::default()
            },
        }];
        let refs = event_refs(&done, &[], &[]);
        assert!(matches!(refs[0], EventRef::RunCompleted(u) if u.input_tokens == 3));
    }

    #[test]
    fn events_not_found_verbatim_are_other() {
        let msg = items(json!([
            {"type": "assistant_message", "content": [{"type": "text", "text": "a"}]}
        ]));
        let other = items(json!([
            {"type": "assistant_message", "content": [{"type": "text", "text": "b"}]}
        ]));
        let events = vec![
            AgentEvent::MessageOutput {
                item: msg[0].clone(),
            },
            AgentEvent::RepairStarted { attempt: 1 },
            AgentEvent::ToolOutputItem {
                item: Item::ToolResult(crate::ToolResult {
                    call_id: "9".into(),
                    content: vec![],
                    is_error: false,
                }),
            },
        ];
        let refs = event_refs(&events, &other, &[]);
        assert!(
            refs.iter().all(|r| matches!(r, EventRef::Other(_))),
            "{refs:?}"
        );
        let call = ToolCall {
            call_id: "1".into(),
            name: "a".into(),
            args: json!({}),
            provider_data: None,
        };
        assert_eq!(call_refs(&[call], &other), vec![None]);
    }
}
