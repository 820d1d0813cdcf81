//! `gemini_function` (field case BR-03) and Bedrock's equal-schema merge improvement.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use helikon_schema::{bedrock, gemini, gemini_function};
use serde_json::{json, Value};

/// BR-03: `class Filter(BaseModel): model_config = ConfigDict(extra="forbid"); field: str;
/// value: str` and `def search(filters: list[Filter], limit: int | None = None)`, as pydantic v2
/// emits the parameters schema.
fn search_params() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": {"Filter": {
            "additionalProperties": false,
            "properties": {"field": {"title": "Field", "type": "string"},
                           "value": {"title": "Value", "type": "string"}},
            "required": ["field", "value"], "title": "Filter", "type": "object"}},
        "additionalProperties": false,
        "properties": {
            "filters": {"items": {"$ref": "#/$defs/Filter"}, "title": "Filters", "type": "array"},
            "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": null,
                      "title": "Limit"}
        },
        "required": ["filters"], "title": "search", "type": "object"
    })
}

fn keys_anywhere(v: &Value, found: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                if k != "properties" {
                    found.push(k.clone());
                }
                if k == "properties" {
                    if let Value::Object(props) = child {
                        props.values().for_each(|p| keys_anywhere(p, found));
                    }
                } else {
                    keys_anywhere(child, found);
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| keys_anywhere(i, found)),
        _ => {}
    }
}

#[test]
fn br03_function_parameters_carry_only_what_gemini_accepts() {
    let out = gemini_function(&search_params()).unwrap();
    assert_eq!(
        out,
        json!({
            "properties": {
                "filters": {"items": {
                    "properties": {"field": {"title": "Field", "type": "string"},
                                   "value": {"title": "Value", "type": "string"}},
                    "required": ["field", "value"], "title": "Filter", "type": "object"},
                    "title": "Filters", "type": "array"},
                "limit": {"nullable": true, "title": "Limit", "type": "integer"}
            },
            "required": ["filters"], "title": "search", "type": "object"
        })
    );
    let mut keys = Vec::new();
    keys_anywhere(&out, &mut keys);
    for banned in [
        "additionalProperties",
        "$schema",
        "$defs",
        "$ref",
        "default",
        "anyOf",
    ] {
        assert!(!keys.iter().any(|k| k == banned), "{banned} left in {out}");
    }
}

#[test]
fn function_variant_merges_all_of_tuples_and_drops_unknown_fields() {
    let schema = json!({
        "$defs": {"Base": {"type": "object", "properties": {"id": {"type": "string"}},
                           "required": ["id"]}},
        "type": "object",
        "properties": {
            "thing": {"allOf": [{"$ref": "#/$defs/Base"},
                                {"type": "object", "properties": {"n": {"type": "integer"}},
                                 "required": ["n"]}],
                      "description": "merged"},
            "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
            "score": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
            "kind": {"const": "a", "type": "string"},
            "doc": {"$ref": "#/$defs/Base", "description": "the base"}
        },
        "required": ["thing", "ghost", "pair"]
    });
    let out = gemini_function(&schema).unwrap();
    let p = &out["properties"];
    assert_eq!(
        p["thing"],
        json!({"description": "merged", "type": "object",
               "properties": {"id": {"type": "string"}, "n": {"type": "integer"}},
               "required": ["id", "n"]})
    );
    assert_eq!(
        p["pair"],
        json!({"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "string"}]}})
    );
    assert_eq!(p["score"], json!({"type": "number", "maximum": 1}));
    assert_eq!(
        p["tags"],
        json!({"type": "array", "items": {"type": "string"}})
    );
    assert_eq!(p["kind"], json!({"enum": ["a"], "type": "string"}));
    assert_eq!(p["doc"]["description"], json!("the base"));
    assert_eq!(out["required"], json!(["thing", "pair"]));
    // The responseSchema variant keeps the reference behaviour: siblings of a ref are dropped.
    let plain = gemini(&schema).unwrap();
    assert!(plain["properties"]["doc"].get("description").is_none());
    assert!(plain["properties"]["thing"].get("allOf").is_some());
}

#[test]
fn bedrock_keeps_equal_property_schemas_when_collapsing() {
    let schema = json!({"oneOf": [
        {"type": "object", "properties": {"t": {"const": "a"}, "id": {"type": "string"}}},
        {"type": "object", "properties": {"t": {"const": "b"}, "id": {"type": "string"},
                                          "n": {"type": "integer"}}}
    ]});
    assert_eq!(
        bedrock(&schema).unwrap(),
        json!({"type": "object", "properties": {
            "t": {"type": "string", "enum": ["a", "b"]},
            "id": {"type": "string"},
            "n": {"type": "integer"}}})
    );
    // Different non-object schemas for one name still become {"type": "object"}.
    let clash = json!({"anyOf": [
        {"type": "object", "properties": {"v": {"type": "string"}}},
        {"type": "object", "properties": {"v": {"type": "integer"}}}
    ]});
    assert_eq!(
        bedrock(&clash).unwrap(),
        json!({"type": "object", "properties": {"v": {"type": "object"}}})
    );
}
