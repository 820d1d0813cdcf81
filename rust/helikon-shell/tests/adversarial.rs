//! The adversarial suite in the repository's tests/data/bash_adversarial.json (also run by
//! the Python tests through the binding).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use helikon_shell::CommandPolicy;

#[test]
fn adversarial_suite() {
    let doc = common::load(common::repo().join("tests/data/bash_adversarial.json"));
    let cases = doc["cases"].as_array().unwrap();
    assert!(cases.len() >= 80);
    let mut failures = Vec::new();
    for case in cases {
        let id = case["id"].as_str().unwrap();
        let command = case["command"].as_str().unwrap();
        let policy = CommandPolicy::from_json(&case["rules"].to_string()).unwrap();
        let v = policy.check(command);
        let expect = case["expect"].as_str().unwrap();
        if v.verdict != expect {
            failures.push(format!(
                "{id}: {command:?} -> {} (want {expect}); {:?}",
                v.verdict, v.explain
            ));
            continue;
        }
        if let Some(line) = case.get("line").and_then(|l| l.as_u64()) {
            if v.line != Some(line as u32) {
                failures.push(format!("{id}: line {:?} (want {line})", v.line));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
