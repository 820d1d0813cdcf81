//! helikon's strict normalizer beyond the reference: refs, unions, reporting, field case BR-01.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use helikon_schema::{strict, strict_report, IssueKind, Report, RewriteKind, SchemaError};
use serde_json::{json, Value};

fn report(v: &Value) -> (Value, Report) {
    let (out, report) = strict_report(v).expect("within budget");
    let (again, again_report) = strict_report(&out).expect("within budget");
    assert_eq!(again, out, "not idempotent for {v}");
    assert!(
        again_report.lossy.is_empty(),
        "second pass rewrote: {again_report:?}"
    );
    (out, report)
}

fn issues(r: &Report) -> Vec<(String, String, IssueKind)> {
    r.non_strict
        .iter()
        .map(|i| (i.path.clone(), i.field.clone(), i.kind))
        .collect()
}

/// BR-01: `class Ticket(BaseModel): title: str; meta: dict` as pydantic v2 emits it.
fn ticket() -> Value {
    json!({
        "properties": {
            "title": {"title": "Title", "type": "string"},
            "meta": {"additionalProperties": true, "title": "Meta", "type": "object"}
        },
        "required": ["title", "meta"],
        "title": "Ticket",
        "type": "object"
    })
}

#[test]
fn br01_free_form_dict_fails_naming_the_field() {
    let err = strict(&ticket()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Ticket.meta: free-form object (dict) cannot be expressed in OpenAI strict mode; set \
         strict=False or give the field a fixed shape (schema path /properties/meta)"
    );
    let SchemaError::NotStrict(list) = err else {
        panic!("wrong error")
    };
    assert_eq!(list.len(), 1);
}

#[test]
fn br01_report_lists_meta_as_non_strict() {
    let (out, report) = report(&ticket());
    assert_eq!(
        issues(&report),
        vec![(
            "/properties/meta".into(),
            "Ticket.meta".into(),
            IssueKind::FreeFormObject
        )]
    );
    assert!(report.lossy.is_empty());
    assert_eq!(out["required"], json!(["title", "meta"]));
}

#[test]
fn several_issues_are_all_named_in_the_error() {
    let schema = json!({
        "type": "object", "title": "T",
        "properties": {
            "a": {"type": "object", "additionalProperties": {"type": "integer"}},
            "b": {},
            "c": {"type": "array"}
        },
        "required": ["a", "b", "c"]
    });
    let err = strict(&schema).unwrap_err().to_string();
    assert_eq!(
        err,
        "T.a: object with arbitrary keys (dict[str, ...]) cannot be expressed in OpenAI strict \
         mode; set strict=False or use a list of key/value models (schema path /properties/a); \
         2 more non-strict construct(s): T.b, T.c"
    );
}

#[test]
fn refs_with_siblings_are_inlined_and_bare_refs_kept() {
    let schema = json!({
        "$defs": {"Addr": {"type": "object", "title": "Addr",
                           "properties": {"street": {"type": "string"}}, "required": ["street"]}},
        "type": "object", "title": "M",
        "properties": {
            "a": {"$ref": "#/$defs/Addr"},
            "c": {"$ref": "#/$defs/Addr", "description": "home", "default": null}
        },
        "required": ["a", "c"]
    });
    let (out, report) = report(&schema);
    let addr = json!({"type": "object", "title": "Addr", "properties": {"street": {"type": "string"}},
                      "required": ["street"], "additionalProperties": false});
    assert_eq!(out["$defs"]["Addr"], addr);
    assert_eq!(out["properties"]["a"], json!({"$ref": "#/$defs/Addr"}));
    let mut inlined = addr.clone();
    inlined["description"] = json!("home");
    assert_eq!(out["properties"]["c"], inlined);
    assert!(report.is_strict());
    let kinds: Vec<_> = report
        .lossy
        .iter()
        .map(|r| (r.path.as_str(), r.kind))
        .collect();
    assert_eq!(kinds, vec![("/properties/c", RewriteKind::KeywordRemoved)]);
}

#[test]
fn recursive_root_ref_is_inlined_and_self_refs_stay() {
    // pydantic: class Node(BaseModel): val: int; children: list["Node"] = []
    let schema = json!({
        "$defs": {"Node": {"type": "object", "title": "Node",
            "properties": {"val": {"type": "integer"},
                           "children": {"type": "array", "default": [],
                                        "items": {"$ref": "#/$defs/Node"}},
                           "parent": {"$ref": "#/$defs/Node", "description": "up"}},
            "required": ["val"]}},
        "$ref": "#/$defs/Node"
    });
    let (out, report) = report(&schema);
    let node = json!({"type": "object", "title": "Node",
        "properties": {
            "val": {"type": "integer"},
            "children": {"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/Node"}},
                                   {"type": "null"}]},
            "parent": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}], "description": "up"}
        },
        "required": ["val", "children", "parent"], "additionalProperties": false});
    assert_eq!(out["$defs"]["Node"], node);
    let mut root = node.clone();
    root["$defs"] = json!({"Node": node});
    assert_eq!(out, root);
    assert!(report.is_strict(), "{:?}", report.non_strict);
    assert!(strict(&schema).is_ok());
}

#[test]
fn unions_optional_refs_and_discriminators() {
    let schema = json!({
        "$defs": {
            "Cat": {"type": "object", "properties": {"kind": {"const": "cat", "type": "string"}},
                    "required": ["kind"]},
            "Dog": {"type": "object", "properties": {"kind": {"const": "dog", "type": "string"}},
                    "required": ["kind"]}
        },
        "type": "object",
        "properties": {
            "pet": {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}],
                    "discriminator": {"propertyName": "kind"}},
            "maybe": {"anyOf": [{"$ref": "#/$defs/Cat"}, {"type": "null"}], "default": null},
            "lit": {"enum": [1, "x"]},
            "n": {"type": "integer", "nullable": true}
        },
        "required": ["pet", "lit", "n"]
    });
    let (out, report) = report(&schema);
    let p = &out["properties"];
    assert_eq!(
        p["pet"],
        json!({"anyOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}]})
    );
    assert_eq!(
        p["maybe"],
        json!({"anyOf": [{"$ref": "#/$defs/Cat"}, {"type": "null"}]})
    );
    assert_eq!(
        p["lit"],
        json!({"enum": [1, "x"], "type": ["integer", "string"]})
    );
    assert_eq!(p["n"], json!({"type": ["integer", "null"]}));
    assert!(report.is_strict());
    let kinds: Vec<_> = report
        .lossy
        .iter()
        .map(|r| (r.field.as_str(), r.kind))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("pet", RewriteKind::OneOfToAnyOf),
            ("pet", RewriteKind::KeywordRemoved),
            ("maybe", RewriteKind::KeywordRemoved),
            ("maybe", RewriteKind::OptionalToNullable),
        ]
    );
}

#[test]
fn all_of_members_merge_or_are_reported() {
    let schema = json!({
        "$defs": {"Base": {"type": "object", "properties": {"id": {"type": "string"}},
                           "required": ["id"]}},
        "type": "object",
        "properties": {
            "one": {"allOf": [{"$ref": "#/$defs/Base"}], "description": "d"},
            "two": {"allOf": [{"$ref": "#/$defs/Base"},
                              {"type": "object", "properties": {"n": {"type": "integer"}}}]},
            "bad": {"allOf": [{"type": "string"}, {"minLength": 1}]}
        },
        "required": ["one", "two", "bad"]
    });
    let (out, report) = report(&schema);
    let p = &out["properties"];
    assert_eq!(p["one"]["description"], json!("d"));
    assert_eq!(p["one"]["required"], json!(["id"]));
    assert_eq!(
        p["two"],
        json!({"type": "object",
               "properties": {"id": {"type": "string"},
                              "n": {"type": ["integer", "null"]}},
               "required": ["id", "n"], "additionalProperties": false})
    );
    assert_eq!(
        issues(&report),
        vec![
            ("/properties/bad".into(), "bad".into(), IssueKind::AllOf),
            (
                "/properties/bad".into(),
                "bad".into(),
                IssueKind::Unconstrained
            ),
        ]
    );
}

#[test]
fn unsupported_keywords_formats_and_tuples() {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "url": {"type": "string", "format": "uri", "minLength": 3, "pattern": "^h"},
            "when": {"type": "string", "format": "date-time"},
            "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}],
                     "minItems": 2, "maxItems": 2},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
            "x": {"properties": {"y": {"type": "boolean"}}, "required": ["y"]}
        },
        "required": ["url", "when", "pair", "tags", "x"]
    });
    let (out, report) = report(&schema);
    let p = &out["properties"];
    assert_eq!(p["url"], json!({"type": "string", "pattern": "^h"}));
    assert_eq!(p["when"], json!({"type": "string", "format": "date-time"}));
    assert_eq!(
        p["pair"],
        json!({"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
               "minItems": 2, "maxItems": 2})
    );
    assert_eq!(
        p["tags"],
        json!({"type": "array", "items": {"type": "string"}})
    );
    assert_eq!(
        p["x"],
        json!({"type": "object", "properties": {"y": {"type": "boolean"}}, "required": ["y"],
               "additionalProperties": false})
    );
    assert!(out.get("$schema").is_none());
    assert!(report.is_strict());
    let kinds: Vec<_> = report
        .lossy
        .iter()
        .map(|r| (r.field.as_str(), r.kind))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("", RewriteKind::KeywordRemoved),
            ("url", RewriteKind::FormatRemoved),
            ("url", RewriteKind::KeywordRemoved),
            ("pair", RewriteKind::TupleToArray),
            ("tags", RewriteKind::KeywordRemoved),
            ("x", RewriteKind::TypeInferred),
        ]
    );
}

#[test]
fn constructs_strict_mode_cannot_express_are_reported() {
    let schema = json!({
        "type": "object", "title": "R",
        "$defs": {"Loop": {"type": "object", "properties": {
            "next": {"$ref": "#/$defs/Loop", "minProperties": 1}}, "required": ["next"]}},
        "properties": {
            "any": {"title": "Any"},
            "map": {"type": "object", "additionalProperties": {"type": "string"}},
            "extra": {"type": "object", "properties": {"a": {"type": "string"}},
                      "required": ["a"], "additionalProperties": true},
            "pat": {"type": "object", "properties": {}, "patternProperties": {"^x": {}}},
            "remote": {"$ref": "https://example.com/s.json"},
            "list": {"type": "array", "items": true},
            "loop": {"$ref": "#/$defs/Loop"}
        },
        "required": ["any", "map", "extra", "pat", "remote", "list", "loop"]
    });
    let (_, report) = report(&schema);
    let got: Vec<_> = report
        .non_strict
        .iter()
        .map(|i| (i.field.as_str(), i.kind))
        .collect();
    assert_eq!(
        got,
        vec![
            ("R.any", IssueKind::Unconstrained),
            ("R.map", IssueKind::MapObject),
            ("R.extra", IssueKind::ExtraProperties),
            ("R.pat", IssueKind::PatternProperties),
            ("R.remote", IssueKind::UnresolvableRef),
            ("R.list[]", IssueKind::Unconstrained),
            ("Loop.next", IssueKind::RecursiveRefSiblings),
        ]
    );
    assert_eq!(report.non_strict[6].path, "/$defs/Loop/properties/next");
}

/// Each definition has `fan` properties that reference the next one with a sibling keyword,
/// so inlining would grow as fan^depth.
fn fan_out_bomb(levels: usize, fan: usize, with_siblings: bool) -> Value {
    let mut defs = serde_json::Map::new();
    for level in 0..levels {
        let mut props = serde_json::Map::new();
        for i in 0..fan {
            let mut r = json!({"$ref": format!("#/$defs/D{}", level + 1)});
            if with_siblings {
                r["description"] = json!("x");
            }
            props.insert(format!("p{i}"), r);
        }
        defs.insert(
            format!("D{level}"),
            json!({"type": "object", "properties": props}),
        );
    }
    defs.insert(format!("D{levels}"), json!({"type": "string"}));
    json!({"$defs": defs, "$ref": "#/$defs/D0"})
}

#[test]
fn ref_fan_out_bomb_hits_the_node_budget() {
    let err = strict_report(&fan_out_bomb(30, 10, true)).unwrap_err();
    assert!(
        matches!(err, SchemaError::TooLarge { limit: 10_000, .. }),
        "{err}"
    );
    assert!(err
        .to_string()
        .starts_with("schema too large: more than 10000 schema nodes"));
    // Without siblings the refs stay refs: linear, and strict.
    let (_, report) = strict_report(&fan_out_bomb(30, 10, false)).unwrap();
    assert!(report.is_strict(), "{:?}", report.non_strict);
    for f in [
        helikon_schema::bedrock,
        helikon_schema::gemini,
        helikon_schema::gemini_function,
    ] {
        let err = f(&fan_out_bomb(30, 10, false)).unwrap_err();
        assert!(matches!(err, SchemaError::TooLarge { .. }), "{err}");
    }
}

#[test]
fn deep_nesting_hits_the_depth_budget() {
    let mut v = json!({"type": "string"});
    for _ in 0..100 {
        v = json!({"type": "object", "properties": {"a": v}, "required": ["a"]});
    }
    let err = strict(&v).unwrap_err();
    assert!(
        matches!(err, SchemaError::TooDeep { limit: 64, .. }),
        "{err}"
    );
    // Bedrock and Gemini cut deep nesting instead of failing (the reference behaviour).
    let b = helikon_schema::bedrock(&v).unwrap();
    assert_eq!(
        b.pointer(&"/properties/a".repeat(64)),
        Some(&json!({"type": "object"}))
    );
    let g = helikon_schema::gemini(&v).unwrap();
    assert_eq!(
        g.pointer(&"/properties/a".repeat(65)),
        Some(&json!({"type": "object"}))
    );
}

#[test]
fn input_is_never_modified_and_garbage_is_reported() {
    for v in [
        json!(null),
        json!(3),
        json!("s"),
        json!(true),
        json!({"type": 5}),
        json!({"type": "object", "properties": 5}),
        json!({"anyOf": 1}),
        json!({"$ref": 1}),
        json!({"allOf": [1, 2]}),
        json!({"$defs": 1, "type": "object"}),
    ] {
        let before = v.clone();
        let (_, report) = strict_report(&v).unwrap();
        assert_eq!(v, before);
        assert!(!report.is_strict(), "{v} should be reported");
    }
}

#[test]
fn text_entry_points_parse_serialize_and_map_errors() {
    let out = helikon_schema::strict_json(
        r#"{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}"#,
    )
    .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap(),
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"],
               "additionalProperties": false})
    );
    let report: Value =
        serde_json::from_str(&helikon_schema::strict_report_json(&ticket().to_string()).unwrap())
            .unwrap();
    assert_eq!(
        report["non_strict"],
        json!([{"path": "/properties/meta", "field": "Ticket.meta", "kind": "free_form_object",
                "reason": "free-form object (dict) cannot be expressed in OpenAI strict mode"}])
    );
    assert_eq!(report["lossy"], json!([]));
    assert_eq!(report["schema"]["required"], json!(["title", "meta"]));
    assert!(matches!(
        helikon_schema::strict_json("{"),
        Err(SchemaError::InvalidJson(_))
    ));
    let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
    assert!(matches!(
        helikon_schema::bedrock_json(&deep),
        Err(SchemaError::TooDeep { .. })
    ));
    assert_eq!(
        helikon_schema::gemini_json(r#"{"type":["string","null"]}"#, true).unwrap(),
        r#"{"nullable":true,"type":"string"}"#
    );
}

#[test]
fn long_ref_chains_are_cut_not_overflowing_the_stack() {
    let mut defs = serde_json::Map::new();
    for i in 0..3000 {
        defs.insert(
            format!("D{i}"),
            json!({"$ref": format!("#/$defs/D{}", i + 1)}),
        );
    }
    defs.insert("D3000".into(), json!({"type": "string"}));
    let schema = json!({"$defs": defs, "type": "object",
                        "properties": {"a": {"$ref": "#/$defs/D0"}}, "required": ["a"]});
    assert_eq!(
        helikon_schema::bedrock(&schema).unwrap()["properties"]["a"],
        json!({"type": "object"})
    );
    assert_eq!(
        helikon_schema::gemini(&schema).unwrap()["properties"]["a"],
        json!({"type": "object"})
    );
    // Strict mode keeps bare refs as refs: nothing is expanded.
    let (out, report) = strict_report(&schema).unwrap();
    assert_eq!(out["properties"]["a"], json!({"$ref": "#/$defs/D0"}));
    assert!(report.is_strict());
    // A root ref chain is followed iteratively.
    let mut root = schema.clone();
    for key in ["properties", "type", "required"] {
        root.as_object_mut().unwrap().remove(key);
    }
    root["$ref"] = json!("#/$defs/D0");
    let (out, report) = strict_report(&root).unwrap();
    assert_eq!(out["type"], json!("string"));
    assert_eq!(report.non_strict[0].kind, IssueKind::RootNotObject);
}

#[test]
fn a_definition_inlined_many_times_reports_each_construct_once() {
    // 20 free-form properties and 20 removed keywords, inlined three times (refs with siblings):
    // past the size where duplicates are found by scanning, each is still listed once.
    let mut props = serde_json::Map::new();
    for i in 0..20 {
        props.insert(
            format!("f{i}"),
            json!({"type": "object", "default": {}, "title": format!("F{i}")}),
        );
    }
    let schema = json!({
        "$defs": {"Bag": {"type": "object", "title": "Bag", "properties": props}},
        "type": "object", "title": "Root",
        "properties": {
            "a": {"$ref": "#/$defs/Bag", "description": "a"},
            "b": {"$ref": "#/$defs/Bag", "description": "b"},
            "c": {"$ref": "#/$defs/Bag", "description": "c"}
        },
        "required": ["a", "b", "c"]
    });
    let (_, report) = strict_report(&schema).unwrap();
    let issues = issues(&report);
    assert_eq!(issues.len(), 20, "{issues:?}");
    assert!(issues.iter().all(
        |(path, _, kind)| path.starts_with("/$defs/Bag/properties/f")
            && *kind == IssueKind::FreeFormObject
    ));
    let removed: Vec<_> = report
        .lossy
        .iter()
        .filter(|r| r.kind == RewriteKind::KeywordRemoved)
        .collect();
    assert_eq!(removed.len(), 20);
    let optional = report
        .lossy
        .iter()
        .filter(|r| r.kind == RewriteKind::OptionalToNullable)
        .count();
    assert_eq!(optional, 20);
    let err = strict(&schema).unwrap_err();
    let SchemaError::NotStrict(list) = err else {
        panic!("wrong error")
    };
    assert_eq!(list, report.non_strict);
}
