//! The generic tree the strict normalizer works on: conversions, object semantics, and the
//! report-free `strict_tree` path agreeing with the reporting path on every conformance vector.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use helikon_schema::tree::{borrow, to_value, Node, Num, Obj};
use helikon_schema::{strict, strict_report_tree, strict_tree, Limits, SchemaError, StrictOptions};
use serde_json::{json, Value};

#[test]
fn borrow_and_to_value_round_trip_numbers_and_order() {
    let v = json!({"z": 1, "a": [-2, 1.5, 2.0, -0.0, 18446744073709551615u64, null, true, "s"],
                   "m": {"y": {}, "b": []}});
    let tree = borrow(&v);
    assert_eq!(to_value(&tree).to_string(), v.to_string());
    let a = tree.get("a").and_then(Node::as_array).unwrap();
    assert!(matches!(a[0], Node::Num(Num::Neg(-2))));
    assert!(matches!(a[2], Node::Num(Num::Float(f)) if f == 2.0));
    assert!(matches!(a[4], Node::Num(Num::Pos(u64::MAX))));
}

#[test]
fn objects_keep_insertion_order_and_compare_as_maps() {
    let mut m: Obj<&str> = Obj::new();
    m.insert("b", Node::Num(Num::Pos(1)));
    m.insert("a", Node::Null);
    m.insert("b", Node::Bool(true)); // replaced in place
    assert_eq!(m.keys().copied().collect::<Vec<_>>(), ["b", "a"]);
    assert_eq!(m.get("b"), Some(&Node::Bool(true)));
    assert_eq!(m.shift_remove("b"), Some(Node::Bool(true)));
    assert_eq!(m.keys().copied().collect::<Vec<_>>(), ["a"]);

    let (xv, yv) = (json!({"p": 1, "q": 2.0}), json!({"q": 2.0, "p": 1}));
    let (x, y) = (borrow(&xv), borrow(&yv));
    assert_eq!(x, y, "objects compare as maps");
    assert!(!x.identical(&y), "but render differently");
    assert_ne!(
        borrow(&json!(1)),
        borrow(&json!(1.0)),
        "integer and float differ"
    );
    assert!(borrow(&json!(0.0)) == borrow(&json!(-0.0)));
    assert!(!borrow(&json!(0.0)).identical(&borrow(&json!(-0.0))));
}

fn agree(input: &Value) {
    let opts = StrictOptions::default();
    let tree = borrow(input);
    let (out, report) = strict_report_tree(&tree, &opts).unwrap();
    match strict_tree(&tree, &opts) {
        Ok(fast) => {
            assert!(report.is_strict(), "{input}");
            assert_eq!(
                to_value(&fast).to_string(),
                to_value(&out).to_string(),
                "{input}"
            );
            assert_eq!(strict(input).unwrap(), to_value(&fast));
        }
        Err(SchemaError::NotStrict(issues)) => {
            assert_eq!(issues, report.non_strict, "{input}");
            assert_eq!(
                strict(input).unwrap_err().to_string(),
                SchemaError::NotStrict(issues).to_string()
            );
        }
        Err(e) => panic!("{e} for {input}"),
    }
}

#[test]
fn strict_tree_agrees_with_the_report_on_every_vector() {
    let mut n = 0;
    for file in [
        "strict_schema.json",
        "bedrock_rewrite.json",
        "gemini_sanitize.json",
    ] {
        for case in common::cases(file) {
            agree(&case["input"]);
            n += 1;
        }
    }
    assert!(n >= 30, "only {n} vectors");
}

#[test]
fn strict_tree_keeps_the_budgets() {
    // a $ref fan-out: 10^6 expansions if nothing stopped it
    let mut defs = serde_json::Map::new();
    for level in 0..6 {
        let refd = json!({"$ref": format!("#/$defs/D{}", level + 1), "description": "x"});
        let props: serde_json::Map<String, Value> =
            (0..10).map(|i| (format!("p{i}"), refd.clone())).collect();
        defs.insert(
            format!("D{level}"),
            json!({"type": "object", "properties": props}),
        );
    }
    defs.insert("D6".into(), json!({"type": "string"}));
    let bomb = json!({"$defs": defs, "$ref": "#/$defs/D0"});
    let opts = StrictOptions {
        limits: Limits {
            max_nodes: 5_000,
            ..Limits::default()
        },
        ..StrictOptions::default()
    };
    assert!(matches!(
        strict_tree(&borrow(&bomb), &opts),
        Err(SchemaError::TooLarge { limit: 5_000, .. })
    ));
    let mut deep = json!({"type": "string"});
    for _ in 0..70 {
        deep = json!({"type": "array", "items": deep});
    }
    let root = json!({"type": "object", "properties": {"a": deep}, "required": ["a"]});
    assert!(matches!(
        strict_tree(&borrow(&root), &StrictOptions::default()),
        Err(SchemaError::TooDeep { limit: 64, .. })
    ));
}
