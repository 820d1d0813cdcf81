//! Every case of `conformance/token_counter.json`, and the JSON length rule by hand.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use helikon_tokens::json::{float_len, int_len, json_len, string_len};
use helikon_tokens::value::{conversation_chars, Arg};
use helikon_tokens::{tokens_from_chars, TooDeep, MAX_PART_DEPTH};
use serde_json::{json, Value};

fn shared_dir() -> PathBuf {
    match std::env::var_os("HELIKON_SHARED") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    }
}

#[test]
fn every_vector_counts_as_expected() {
    let path = shared_dir().join("conformance/token_counter.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let vectors: Value = serde_json::from_str(&text).unwrap();
    let cases = vectors["cases"].as_array().unwrap();
    assert!(cases.len() > 5, "too few vectors");
    for (i, case) in cases.iter().enumerate() {
        let chars = conversation_chars(&case["items"]).unwrap();
        assert_eq!(
            tokens_from_chars(chars) as u64,
            case["expect"].as_u64().unwrap(),
            "case {i}: {}",
            case["items"]
        );
    }
}

fn args_len(value: &Value) -> usize {
    json_len(&Arg::Value(value), 0).unwrap()
}

#[test]
fn compact_json_lengths_match_the_serialized_text() {
    for value in [
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(-42),
        json!(i64::MIN),
        json!(u64::MAX),
        json!("a\"b\\c\n\u{1}é🙂"),
        json!([]),
        json!([1, [2, {"k": "v"}], {}]),
        json!({"a": 1, "é": [null, "x"], "q\"": {"n": {}}}),
    ] {
        assert_eq!(
            args_len(&value),
            value.to_string().chars().count(),
            "{value}"
        );
    }
}

#[test]
fn floats_are_measured_as_python_writes_them() {
    // Python: repr(1.5) == '1.5', repr(1e16) == '1e+16', repr(0.0001) == '0.0001',
    // repr(1e-05) == '1e-05', repr(123456789012345680.0) == '1.2345678901234568e+17',
    // repr(2.0) == '2.0', repr(1e100) == '1e+100'
    let cases = [
        (1.5, 3),
        (1e16, 5),
        (0.0001, 6),
        (1e-5, 5),
        (123_456_789_012_345_680.0, 22),
        (2.0, 3),
        (-2.0, 4),
        (1e100, 6),
        (f64::NAN, 3),
        (f64::INFINITY, 8),
        (f64::NEG_INFINITY, 9),
    ];
    for (x, len) in cases {
        assert_eq!(float_len(x), Some(len), "{x}");
    }
}

#[test]
fn scalar_rules() {
    assert_eq!(int_len(0), 1);
    assert_eq!(int_len(-9), 2);
    assert_eq!(int_len(1_000), 4);
    assert_eq!(string_len(0, b""), 2);
    assert_eq!(string_len(3, b"a\tb"), 6);
    assert_eq!(string_len(1, b"\x1f"), 8); // "\u001f"
    assert_eq!(tokens_from_chars(8), 2);
    assert_eq!(tokens_from_chars(9), 3);
}

#[test]
fn deep_tool_results_fail_and_shallow_ones_count() {
    let mut part = json!({"type": "text", "text": "abcd"});
    for _ in 0..MAX_PART_DEPTH {
        part = json!({"type": "tool_result", "content": [part]});
    }
    let items = json!([{"type": "tool_result", "content": [part.clone()]}]);
    assert_eq!(conversation_chars(&items), Ok(4));
    let deeper =
        json!([{"type": "tool_result", "content": [{"type": "tool_result", "content": [part]}]}]);
    assert_eq!(conversation_chars(&deeper), Err(TooDeep));
}

#[test]
fn what_counts_zero() {
    let items = json!([
        {"type": "user_message", "content": [
            {"type": "image", "source": {"url": "https://x/y.png"}},
            {"type": "audio", "source": {"data": "AAAA"}},
            {"type": "unknown_part", "text": "not counted"}
        ]},
        {"type": "assistant_message", "agent": "long-agent-name", "content": []},
        {"type": "tool_result", "call_id": "call_123456", "content": [{"type": "text", "text": "ok"}]},
        {"type": "tool_call", "call_id": "call_123456", "name": "f"}
    ]);
    // "ok" + name "f" + args null
    assert_eq!(conversation_chars(&items), Ok(2 + 1 + 4));
}
