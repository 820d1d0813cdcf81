//! Every case of `conformance/bedrock_rewrite.json` and `conformance/gemini_sanitize.json`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use helikon_schema::{bedrock, gemini};
use serde_json::Value;

/// The `enum` arrays of `v` in document order (their order is significant for Bedrock tags).
fn enums(v: &Value, out: &mut Vec<Value>) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            for k in keys {
                if k == "enum" {
                    out.push(m[k].clone());
                } else {
                    enums(&m[k], out);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| enums(i, out)),
        _ => {}
    }
}

#[test]
fn bedrock_matches_every_vector() {
    let cases = common::cases("bedrock_rewrite.json");
    for (i, case) in cases.iter().enumerate() {
        let input = &case["input"];
        let before = input.clone();
        let out = bedrock(input).expect("within budget");
        assert_eq!(out, case["expect"], "case {i}: {input}");
        let (mut got, mut want) = (Vec::new(), Vec::new());
        enums(&out, &mut got);
        enums(&case["expect"], &mut want);
        assert_eq!(got, want, "case {i}: enum order");
        assert_eq!(input, &before, "case {i}: input modified");
        let idempotent = case["idempotent"].as_bool().expect("idempotent flag");
        let again = bedrock(&out).unwrap();
        assert_eq!(again == out, idempotent, "case {i}: idempotence flag");
    }
}

#[test]
fn gemini_matches_every_vector() {
    for (i, case) in common::cases("gemini_sanitize.json").iter().enumerate() {
        let input = &case["input"];
        let before = input.clone();
        let out = gemini(input).expect("within budget");
        assert_eq!(out, case["expect"], "case {i}: {input}");
        assert_eq!(input, &before, "case {i}: input modified");
    }
}
