//! Every case of `shared/conformance/redaction.json`.
//!
//! Five cases record spec behaviour helikon deliberately changes; each asserts helikon's
//! output instead, and the test checks all five are still in the vectors:
//!
//! - `{"OPENAI_API_KEY": "sk-abc"}` is left unchanged by the reference because JSON object
//!   keys are not scanned; helikon masks a string directly under a secret-named key.
//! - `TOKEN=abc123` and `SECRET=abc`: the spec needs a `_` before `TOKEN`/`SECRET`; issue
//!   14 makes a name that *is* `TOKEN` or `SECRET` secret-named too.
//! - `BAR_TOKEN=secret FOO=1` and `A_TOKEN=sk-abc123xyz; using sk-abc123xyz`: the spec
//!   masks an unquoted value to the end of the line; issue 14 masks to the end of the
//!   value (the shell word), so the rest of the line is kept (and a known value in it is
//!   still masked).
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

/// Cases where helikon deliberately differs from the reference: input -> helikon output.
fn differs(input: &Value) -> Option<Value> {
    let table = [
        (
            json!({"OPENAI_API_KEY": "sk-abc"}),
            json!({"OPENAI_API_KEY": "***"}),
        ),
        (json!("TOKEN=abc123"), json!("TOKEN=***")),
        (json!("SECRET=abc"), json!("SECRET=***")),
        (
            json!("BAR_TOKEN=secret FOO=1"),
            json!("BAR_TOKEN=*** FOO=1"),
        ),
        (
            json!("A_TOKEN=sk-abc123xyz; using sk-abc123xyz"),
            json!("A_TOKEN=***; using ***"),
        ),
    ];
    table
        .into_iter()
        .find(|(i, _)| i == input)
        .map(|(_, out)| out)
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
        let expect = match differs(input) {
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
        stronger_seen, 5,
        "every case helikon changes on purpose should be in the vectors"
    );
}
