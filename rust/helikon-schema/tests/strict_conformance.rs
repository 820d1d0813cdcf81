//! Every case of `conformance/strict_schema.json`, in reference mode (exact) and in helikon's
//! default mode (exact up to the documented nullable widening of optional properties).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;

use helikon_schema::{
    strict, strict_report, strict_report_with, IssueKind, RewriteKind, SchemaError, StrictOptions,
};
use serde_json::{json, Value};

fn normalized(v: &Value, opts: &StrictOptions) -> (Value, helikon_schema::Report) {
    let (mut out, report) = strict_report_with(v, opts).expect("within budget");
    common::sort_required(&mut out);
    (out, report)
}

/// Pointers of the properties that the input leaves optional, on object nodes reached by the
/// reference's traversal (properties and items).
fn optional_pointers(v: &Value, base: &str, out: &mut BTreeSet<String>) {
    let Value::Object(m) = v else { return };
    if let Some(Value::Object(props)) = m.get("properties") {
        let required: Vec<&str> = m
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, child) in props {
            let p = format!("{base}/properties/{name}");
            if m.get("type") == Some(&json!("object")) && !required.contains(&name.as_str()) {
                out.insert(p.clone());
            }
            optional_pointers(child, &p, out);
        }
    }
    if let Some(items) = m.get("items") {
        optional_pointers(items, &format!("{base}/items"), out);
    }
}

/// The nullable form the default mode must produce for an expected (reference) schema.
fn widened(v: &Value) -> Value {
    match v.get("type") {
        Some(Value::String(t)) if t != "object" && t != "array" => {
            let mut w = v.clone();
            w["type"] = json!([t, "null"]);
            w
        }
        Some(Value::Array(ts)) if ts.contains(&json!("null")) => v.clone(),
        _ => json!({"anyOf": [v, {"type": "null"}]}),
    }
}

#[test]
fn reference_mode_matches_every_vector_exactly_and_is_idempotent() {
    let opts = StrictOptions::reference();
    for (i, case) in common::cases("strict_schema.json").iter().enumerate() {
        let input = &case["input"];
        let before = input.clone();
        let (out, _) = normalized(input, &opts);
        let mut expect = case["expect"].clone();
        common::sort_required(&mut expect);
        assert_eq!(out, expect, "case {i}: {input}");
        assert_eq!(input, &before, "case {i}: input modified");
        let (again, _) = normalized(&out, &opts);
        assert_eq!(again, out, "case {i}: not idempotent");
    }
}

#[test]
fn default_mode_differs_only_by_nullable_optional_properties() {
    let opts = StrictOptions::default();
    for (i, case) in common::cases("strict_schema.json").iter().enumerate() {
        let input = &case["input"];
        let (out, report) = normalized(input, &opts);
        let mut optional = BTreeSet::new();
        optional_pointers(input, "", &mut optional);
        let reported: BTreeSet<String> = report
            .lossy
            .iter()
            .filter(|r| r.kind == RewriteKind::OptionalToNullable)
            .map(|r| r.path.clone())
            .collect();
        assert_eq!(reported, optional, "case {i}: optional properties reported");
        // Rebuild the expected output: widen each optional property of the reference output,
        // deepest first so that pointers stay valid.
        let mut expect = case["expect"].clone();
        common::sort_required(&mut expect);
        for p in optional.iter().rev() {
            let w = widened(common::at(&expect, p));
            *expect.pointer_mut(p).unwrap() = w;
        }
        assert_eq!(out, expect, "case {i}: {input}");
        let (again, again_report) = normalized(&out, &opts);
        assert_eq!(again, out, "case {i}: not idempotent");
        assert!(
            again_report.lossy.is_empty(),
            "case {i}: second pass rewrote {again_report:?}"
        );
    }
}

#[test]
fn free_form_vectors_are_closed_but_reported_never_silently() {
    // Case: {"type": "object"} -> closed as the reference does, and reported as non-strict.
    let (out, report) = strict_report(&json!({"type": "object"})).unwrap();
    assert_eq!(
        out,
        json!({"type": "object", "additionalProperties": false})
    );
    assert_eq!(report.non_strict.len(), 1);
    assert_eq!(report.non_strict[0].kind, IssueKind::FreeFormObject);
    assert_eq!(report.non_strict[0].path, "");
    assert!(matches!(
        strict(&json!({"type": "object"})),
        Err(SchemaError::NotStrict(_))
    ));

    // Case: additionalProperties: true next to fixed properties.
    let input = json!({"type": "object", "additionalProperties": true,
                       "properties": {"k": {"type": "string"}}});
    let (_, report) = strict_report(&input).unwrap();
    let kinds: Vec<_> = report.non_strict.iter().map(|i| i.kind).collect();
    assert_eq!(kinds, vec![IssueKind::ExtraProperties]);

    // Case: a top-level array is not a schema object: unchanged, reported.
    let (out, report) = strict_report(&json!([{"type": "object"}])).unwrap();
    assert_eq!(out, json!([{"type": "object"}]));
    assert_eq!(report.non_strict[0].kind, IssueKind::Invalid);

    // Case: a root array schema is normalized but strict mode needs an object root.
    let (_, report) =
        strict_report(&json!({"type": "array", "items": {"type": "string"}})).unwrap();
    assert_eq!(report.non_strict[0].kind, IssueKind::RootNotObject);
}

#[test]
fn vectors_without_free_form_objects_are_strict() {
    let mut strict_ok = 0;
    for case in common::cases("strict_schema.json") {
        let input = &case["input"];
        let (_, report) = strict_report(input).unwrap();
        let text = input.to_string();
        let free_form = text.contains(r#"{"type":"object"}"#)
            || text.contains(r#""additionalProperties":true"#)
            || input.get("type") != Some(&json!("object"));
        assert_eq!(
            report.is_strict(),
            !free_form,
            "{input}: {:?}",
            report.non_strict
        );
        if !free_form {
            assert!(strict(input).is_ok());
            strict_ok += 1;
        }
    }
    assert!(strict_ok >= 8);
}
