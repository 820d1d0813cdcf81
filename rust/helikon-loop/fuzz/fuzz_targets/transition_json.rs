//! Arbitrary state / input / conversation text through the JSON entry point: it must return
//! (Ok or a parse error), never panic. Input layout: three NUL-separated JSON texts.
#![no_main]

use helikon_loop::{transition_json, LoopConfig};
use libfuzzer_sys::fuzz_target;

const CONFIG: &str = r#"{"max_turns": 3, "tools": [{"name": "a"}],
  "handoffs": [{"tool_name": "transfer_to_x", "target": "X"}],
  "output_type": {"name": "Answer", "schema": {"type": "object",
    "properties": {"value": {"type": "integer", "minimum": 0}}, "required": ["value"]}}}"#;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(config) = LoopConfig::from_json(CONFIG) else { return };
    let mut parts = text.splitn(3, '\0');
    let state = parts.next().filter(|s| !s.is_empty());
    let input = parts.next().unwrap_or("\"start\"");
    let conversation = parts.next().unwrap_or("[]");
    if let Ok(out) = transition_json(state, input, &config, conversation) {
        // Whatever comes out must be valid JSON whose next_state parses back.
        let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
        assert!(v.get("next_state").is_some());
        let next = v["next_state"].to_string();
        let again = transition_json(Some(&next), "\"start\"", &config, "[]");
        assert!(again.is_ok());
    }
});
