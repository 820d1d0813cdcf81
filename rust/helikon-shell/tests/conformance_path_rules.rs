//! path_rules.json: globs, the path cleaner, and rule tool scoping.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use helikon_shell::{clean_path, path_rule_matches, PathRule};
use serde_json::Value;

/// Rule scoping is the pipeline's (read -> Read; edit -> Edit/Write; tool -> exact name); the
/// glob is this crate's.
fn rule_matches(rule: &str, pattern: &str, tool: &str, args: &Value) -> bool {
    let path = args.get("path").and_then(Value::as_str);
    match rule.split_once('.').map(|x| x.1) {
        Some("tool") => tool == pattern,
        Some("read") => {
            tool == "Read" && path.is_some_and(|p| PathRule::new(pattern).unwrap().matches(p))
        }
        Some("edit") => {
            (tool == "Edit" || tool == "Write")
                && path.is_some_and(|p| PathRule::new(pattern).unwrap().matches(p))
        }
        _ => panic!("unknown rule {rule}"),
    }
}

#[test]
fn path_rule_vectors() {
    let doc = common::conformance("path_rules.json");
    let cases = doc["cases"].as_array().unwrap();
    for case in cases {
        match case["kind"].as_str().unwrap() {
            "glob" => {
                let (p, path) = (
                    case["pattern"].as_str().unwrap(),
                    case["path"].as_str().unwrap(),
                );
                assert_eq!(
                    path_rule_matches(p, path).unwrap(),
                    case["expect_match"].as_bool().unwrap(),
                    "{p} vs {path}"
                );
            }
            "clean_path" => {
                assert_eq!(
                    clean_path(case["path"].as_str().unwrap()),
                    case["expect"].as_str().unwrap(),
                    "{case}"
                );
            }
            "rule" => {
                let got = rule_matches(
                    case["rule"].as_str().unwrap(),
                    case["pattern"].as_str().unwrap(),
                    case["tool"].as_str().unwrap(),
                    &case["args"],
                );
                assert_eq!(got, case["expect_match"].as_bool().unwrap(), "{case}");
            }
            other => panic!("unknown kind {other}"),
        }
    }
    assert!(cases.len() > 80);
}

#[test]
fn invalid_glob_is_an_error() {
    assert!(PathRule::new("a[").is_err());
    assert!(path_rule_matches("{a,", "a").is_err());
}
