//! The heuristic token counter's rule (the spec's default counter for compaction,
//! `shared/conformance/token_counter.json`): `count = ceil(chars / 4)`, where `chars` counts
//! Unicode scalar values across text and reasoning parts (recursing into nested `tool_result`
//! parts), plus the name and compact-JSON arguments of every tool call (item or inline
//! `tool_use` part); media parts, call ids and agent names count zero.
//!
//! The rule is written once, over two small traits a host implements for its own values:
//! [`walk::Node`] (an item or content part) and [`json::JsonNode`] (a tool call's arguments).
//! The Python binding implements them on live Python objects (no JSON copy); this crate
//! implements them on [`serde_json::Value`] (the items' tagged JSON form, [`value`]), which is
//! how the conformance vectors are checked here.
//!
//! Modules: [`walk`] (which fields count), [`json`] (compact-JSON length arithmetic, as
//! Python's `json.dumps(v, separators=(",", ":"), ensure_ascii=False)` writes it), [`value`]
//! (the rule on `serde_json::Value`).

pub mod json;
pub mod value;
pub mod walk;

pub use json::{JsonNode, JsonView, MAX_JSON_DEPTH};
pub use walk::{item_chars, part_chars, Form, Level, Node, Tag, TooDeep, MAX_PART_DEPTH};

/// Tokens for `chars` characters: `ceil(chars / 4)` (0 for 0).
///
/// ```
/// assert_eq!(helikon_tokens::tokens_from_chars(0), 0);
/// assert_eq!(helikon_tokens::tokens_from_chars(5), 2);
/// ```
#[must_use]
pub fn tokens_from_chars(chars: usize) -> usize {
    chars.div_ceil(4)
}
