//! Beyond the reference: an optional plain value keeps its type instead of becoming an object.
#![allow(clippy::unwrap_used)]
use serde_json::json;

#[test]
fn optional_number_keeps_its_type_and_description() {
    let input = json!({"type": "object", "properties": {"temperature_c": {
        "anyOf": [{"type": "number"}, {"type": "null"}],
        "default": null, "description": "Degrees Celsius", "title": "Temperature C"
    }}});
    let out = helikon_schema::bedrock(&input).unwrap();
    assert_eq!(
        out["properties"]["temperature_c"],
        json!({"type": "number", "description": "Degrees Celsius", "title": "Temperature C"})
    );
}

#[test]
fn optional_object_still_collapses_as_the_reference_does() {
    let input = json!({"anyOf": [
        {"type": "object", "properties": {"a": {"type": "string"}}}, {"type": "null"}
    ]});
    let out = helikon_schema::bedrock(&input).unwrap();
    assert_eq!(
        out,
        json!({"type": "object", "properties": {"a": {"type": "string"}}})
    );
}
