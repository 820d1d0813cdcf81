//! Every case of `shared/conformance/redaction.json`.
//!
//! One case records a spec limitation helikon removes: `{"OPENAI_API_KEY": "sk-abc"}` is
//! left unchanged by the reference because JSON object keys are not scanned. helikon masks
//! a string directly under a secret-named key, so that case asserts the stronger output
//! `{"OPENAI_API_KEY": "***"}`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use helikon_redact::Redactor;
use serde_json::{json, Value};

fn shared_dir() -> PathBuf {
    std::env::var_os("HELIKON_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"))
}

fn load() -> Value {
    let path = shared_dir().join("conformance/redaction.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Cases where helikon is deliberately stronger than the reference: input -> helikon output.
fn stronger(input: &Value) -> Option<Value> {
    (input == &json!({"OPENAI_API_KEY": "sk-abc"})).then(|| json!({"OPENAI_API_KEY": "***"}))
}

#[test]
fn every_redaction_vector_passes() {
    let doc = load();
    let cases = doc["cases"].as_array().unwrap();
    assert!(
        cases.len() >= 30,
        "expected the full vector set, got {}",
        cases.len()
    );
    let mut stronger_seen = 0;
    for (i, case) in cases.iter().enumerate() {
        let secrets: Vec<String> = case["known_secrets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect();
        let r = Redactor::new(secrets).unwrap();
        let input = &case["input"];
        let expect = match stronger(input) {
            Some(v) => {
                stronger_seen += 1;
                v
            }
            None => case["expect"].clone(),
        };
        let got = r.redact_value(input);
        assert_eq!(got, expect, "case {i}: input {input}");
        // Idempotent: redacting the output again changes nothing.
        assert_eq!(r.redact_value(&got), got, "case {i} not idempotent");
    }
    assert_eq!(
        stronger_seen, 1,
        "the stronger-than-spec case should be in the vectors"
    );
}
