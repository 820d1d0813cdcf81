//! The transcript handed to a handoff target.
use crate::items::Item;

/// `conversation` minus system, tool_call and tool_result items, plus a trailing user note
/// saying the conversation was transferred to `target`.
///
/// Built from `conversation` alone: the response that requested the handoff is included only
/// if the driver appended it before the transition.
pub fn transcript(conversation: &[Item], target: &str) -> Vec<Item> {
    let mut out: Vec<Item> = conversation
        .iter()
        .filter(|i| matches!(i, Item::UserMessage { .. } | Item::AssistantMessage { .. }))
        .cloned()
        .collect();
    out.push(Item::user_text(format!(
        "This conversation was transferred to you ({target}) from another agent. \
         Continue helping the user from here."
    )));
    out
}
