//! The JSON-Schema subset used for structured output.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use helikon_loop::OutputSchema;
use serde_json::{json, Value};

fn errors(schema: Value, instance: Value) -> Vec<String> {
    OutputSchema::compile(schema).unwrap().validate(&instance)
}

fn ok(schema: Value, instance: Value) {
    let e = errors(schema, instance.clone());
    assert!(e.is_empty(), "{instance}: {e:?}");
}

#[test]
fn struct_fields_are_required_and_unknown_fields_ignored() {
    let s = json!({"type": "object", "additionalProperties": false,
        "properties": {"subtype": {"type": "string"},
                       "confidence": {"type": "integer", "minimum": 0}},
        "required": ["subtype", "confidence"]});
    ok(
        s.clone(),
        json!({"subtype": "AML", "confidence": 92, "extra": true}),
    );
    assert_eq!(
        errors(s.clone(), json!({"subtype": "AML"})),
        ["missing field `confidence`"]
    );
    assert_eq!(
        errors(s.clone(), json!({"subtype": 1, "confidence": 1.5})),
        // Fields are checked in the order the answer lists them.
        [
            "at `subtype`: expected string, found integer",
            "at `confidence`: expected integer, found number"
        ]
    );
    assert_eq!(errors(s, json!([1])), ["expected object, found array"]);
}

#[test]
fn types_nullable_arrays_and_integers() {
    ok(json!({"type": ["string", "null"]}), json!(null));
    ok(json!({"type": "integer"}), json!(3.0));
    ok(json!({"type": "number"}), json!(3));
    assert_eq!(
        errors(json!({"type": ["string", "null"]}), json!(1)),
        ["expected string or null, found integer"]
    );
    assert_eq!(
        errors(json!({"type": "boolean"}), json!("true")),
        ["expected boolean, found string"]
    );
}

#[test]
fn numeric_bounds_are_exact_for_large_integers() {
    let s = json!({"type": "integer", "minimum": 0, "maximum": 4294967295u64});
    ok(s.clone(), json!(4294967295u64));
    assert_eq!(
        errors(s.clone(), json!(4294967296u64)),
        ["4294967296 is greater than the maximum 4294967295"]
    );
    assert_eq!(errors(s, json!(-1)), ["-1 is less than the minimum 0"]);
    let ex = json!({"exclusiveMinimum": 0, "exclusiveMaximum": 1.5});
    ok(ex.clone(), json!(1));
    assert_eq!(errors(ex.clone(), json!(0)).len(), 1);
    assert_eq!(errors(ex, json!(1.5)).len(), 1);
}

#[test]
fn enum_const_lengths_and_items() {
    assert_eq!(
        errors(json!({"enum": ["a", "b"]}), json!("c")),
        ["expected one of [\"a\",\"b\"], found \"c\""]
    );
    assert_eq!(
        errors(json!({"const": 1}), json!(2)),
        ["expected 1, found 2"]
    );
    assert_eq!(
        errors(json!({"minLength": 2}), json!("é")),
        ["length 1 is less than 2"]
    );
    assert_eq!(
        errors(json!({"maxItems": 1}), json!([1, 2])),
        ["item count 2 is greater than 1"]
    );
    assert_eq!(
        errors(
            json!({"type": "array", "items": {"type": "string"}}),
            json!(["a", 1])
        ),
        ["at `[1]`: expected string, found integer"]
    );
    let tuple = json!({"prefixItems": [{"type": "string"}], "items": {"type": "integer"}});
    ok(tuple.clone(), json!(["a", 1, 2]));
    assert_eq!(errors(tuple, json!([1, "a"])).len(), 2);
}

#[test]
fn refs_into_defs_and_nested_paths() {
    let s = json!({
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}},
        "required": ["items"],
        "$defs": {"Item": {"type": "object", "properties": {"n": {"type": "integer"}},
                           "required": ["n"]}},
    });
    ok(s.clone(), json!({"items": [{"n": 1}]}));
    assert_eq!(
        errors(s.clone(), json!({"items": [{"n": 1}, {}]})),
        ["at `items[1]`: missing field `n`"]
    );
    assert_eq!(
        errors(s, json!({"items": [{"n": "x"}]})),
        ["at `items[0].n`: expected integer, found string"]
    );
    let legacy = json!({"definitions": {"A": {"type": "string"}}, "$ref": "#/definitions/A"});
    assert_eq!(errors(legacy, json!(1)).len(), 1);
}

#[test]
fn combinators() {
    let optional = json!({"anyOf": [{"type": "integer"}, {"type": "null"}]});
    ok(optional.clone(), json!(null));
    ok(optional.clone(), json!(1));
    assert_eq!(
        errors(optional, json!("x")),
        [
            "matches no alternative of anyOf: expected integer, found string; \
                 or expected null, found string"
        ]
    );
    let one = json!({"oneOf": [{"type": "integer"}, {"type": "number"}]});
    ok(one.clone(), json!(1.5));
    assert_eq!(
        errors(one, json!(1)),
        ["matches more than one alternative of oneOf"]
    );
    assert_eq!(
        errors(json!({"allOf": [{"minimum": 2}, {"maximum": 1}]}), json!(3)).len(),
        1
    );
    assert_eq!(
        errors(json!({"not": {"type": "null"}}), json!(null)).len(),
        1
    );
    ok(json!(true), json!({"anything": 1}));
    assert_eq!(errors(json!(false), json!(1)), ["no value is allowed here"]);
}

#[test]
fn ref_loops_are_reported_not_followed_forever() {
    let s = json!({"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}},
                   "$ref": "#/$defs/A"});
    let e = errors(s, json!(1));
    assert!(e.iter().any(|m| m.contains("loop")), "{e:?}");
    // A recursive type that consumes the value at each level is fine.
    let tree = json!({"$defs": {"T": {"type": "object", "properties": {
        "kids": {"type": "array", "items": {"$ref": "#/$defs/T"}}}}}, "$ref": "#/$defs/T"});
    ok(tree, json!({"kids": [{"kids": [{"kids": []}]}]}));
}

#[test]
fn malformed_schemas_fail_to_compile_with_a_pointer() {
    for (schema, needle) in [
        (json!({"$ref": "#/$defs/Missing"}), "#/$ref"),
        (json!({"type": "int"}), "#/type"),
        (json!({"required": "x"}), "#/required"),
        (json!({"properties": {"a": 3}}), "#/properties/a"),
        (json!({"anyOf": {}}), "#/anyOf"),
        (json!({"items": [{"minimum": "0"}]}), "#/items/0/minimum"),
        (json!({"maxLength": -1}), "#/maxLength"),
        (json!("string"), "#"),
    ] {
        let e = OutputSchema::compile(schema.clone()).unwrap_err();
        assert!(e.starts_with(needle), "{schema}: {e}");
    }
}

#[test]
fn exponential_alternatives_hit_the_step_budget() {
    // Both alternatives recurse: 2^depth applications without the budget.
    let s = json!({"$defs": {"N": {"anyOf": [
        {"type": "object", "properties": {"k": {"$ref": "#/$defs/N"}}},
        {"type": "object", "properties": {"k": {"$ref": "#/$defs/N"}}, "required": ["k"]},
    ]}}, "$ref": "#/$defs/N"});
    let mut deep = json!(1);
    for _ in 0..40 {
        deep = json!({ "k": deep });
    }
    let e = errors(s, deep);
    assert!(e.iter().any(|m| m.contains("too costly")), "{e:?}");
}
