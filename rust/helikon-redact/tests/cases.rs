//! The project's redaction cases, `tests/data/redaction_cases.json` at the repo root (the
//! same file `tests/test_redaction.py` loads through the Python binding).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use helikon_redact::{Redactor, DEFAULT_MASK};
use serde_json::Value;

fn load() -> Vec<Value> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/redaction_cases.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc["cases"].as_array().unwrap().clone()
}

fn build(case: &Value) -> Redactor {
    let extra: Vec<String> = case["extra_secrets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let env: Vec<(String, String)> = case["env"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect();
    Redactor::builder()
        .with_extra_secrets(extra)
        .with_env(env)
        .mask(case["mask"].as_str().unwrap_or(DEFAULT_MASK))
        .build()
        .unwrap()
}

#[test]
fn at_least_forty_cases() {
    assert!(load().len() >= 40);
}

#[test]
fn every_case_redacts_as_expected() {
    let mut failures = Vec::new();
    for case in load() {
        let name = case["name"].as_str().unwrap();
        let input = case["input"].as_str().unwrap();
        let expected = case["expected"].as_str().unwrap();
        let r = build(&case);
        let got = r.redact(input);
        if got != expected {
            failures.push(format!(
                "{name}:\n  input    {input:?}\n  expected {expected:?}\n  got      {got:?}"
            ));
            continue;
        }
        if r.redact(&got) != got {
            failures.push(format!("{name}: not idempotent: {:?}", r.redact(&got)));
        }
        if let Some(kinds) = case.get("kinds").and_then(Value::as_array) {
            let want: Vec<&str> = kinds.iter().map(|k| k.as_str().unwrap()).collect();
            let have: Vec<&str> = r.findings(input).iter().map(|f| f.kind.as_str()).collect();
            if want != have {
                failures.push(format!("{name}: kinds {have:?}, expected {want:?}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
