//! Shared helpers for the integration tests: loading conformance vectors.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use serde_json::Value;

/// The shared/ directory: `$HELIKON_SHARED`, else `../../../shared` from this crate.
pub fn shared_dir() -> PathBuf {
    match std::env::var_os("HELIKON_SHARED") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    }
}

/// Load `conformance/<name>` as JSON.
pub fn vectors(name: &str) -> Value {
    let path = shared_dir().join("conformance").join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).expect("conformance file is JSON")
}

/// The `cases` list of a vector file (must be non-empty).
pub fn cases(name: &str) -> Vec<Value> {
    let v = vectors(name);
    let cases = v["cases"].as_array().expect("cases array").clone();
    assert!(!cases.is_empty(), "{name} has no cases");
    cases
}

/// Resolve a JSON pointer, panicking when it does not exist.
pub fn at<'a>(v: &'a Value, pointer: &str) -> &'a Value {
    v.pointer(pointer)
        .unwrap_or_else(|| panic!("no value at {pointer} in {v}"))
}

/// Sort every `required` array so that outputs compare as the vectors say (as sets).
pub fn sort_required(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, child) in m.iter_mut() {
                if k == "required" {
                    if let Value::Array(names) = child {
                        if names.iter().all(Value::is_string) {
                            names.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
                            continue;
                        }
                    }
                }
                sort_required(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(sort_required),
        _ => {}
    }
}
