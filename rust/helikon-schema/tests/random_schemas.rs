//! Deterministic pseudo-random schemas (no extra dependencies): every normalizer terminates
//! without panicking, and the strict output is a fixed point. The fuzz target in `fuzz/` does
//! the same on arbitrary bytes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use helikon_schema::{bedrock, gemini, gemini_function, strict, strict_report, SchemaError};
use serde_json::{json, Map, Value};

/// xorshift64*: small, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const TYPES: &[&str] = &[
    "string", "integer", "number", "boolean", "null", "object", "array",
];
const NAMES: &[&str] = &["a", "b", "c", "kind", "A", "B", "Node"];

fn schema(rng: &mut Rng, depth: usize) -> Value {
    if depth > 5 {
        return json!({"type": rng.pick(TYPES)});
    }
    let mut m = Map::new();
    for _ in 0..rng.below(4) + 1 {
        match rng.below(22) {
            0 => {
                m.insert("type".into(), json!(rng.pick(TYPES)));
            }
            1 => {
                m.insert("type".into(), json!([rng.pick(TYPES), rng.pick(TYPES)]));
            }
            2 | 3 => {
                let mut props = Map::new();
                for _ in 0..rng.below(3) {
                    props.insert(rng.pick(NAMES).into(), schema(rng, depth + 1));
                }
                m.insert("properties".into(), Value::Object(props));
                m.insert("type".into(), json!("object"));
            }
            4 => {
                m.insert("required".into(), json!([rng.pick(NAMES), rng.pick(NAMES)]));
            }
            5 => {
                m.insert("items".into(), schema(rng, depth + 1));
            }
            6 => {
                m.insert(
                    "prefixItems".into(),
                    json!([schema(rng, depth + 1), schema(rng, depth + 1)]),
                );
            }
            7 | 8 => {
                let key = rng.pick(&["anyOf", "oneOf", "allOf"]);
                let members: Vec<Value> = (0..rng.below(3) + 1)
                    .map(|_| schema(rng, depth + 1))
                    .collect();
                m.insert(key.into(), Value::Array(members));
            }
            9 | 10 => {
                m.insert("$ref".into(), json!(format!("#/$defs/{}", rng.pick(NAMES))));
            }
            11 => {
                m.insert(
                    "$ref".into(),
                    json!(rng.pick(&["#", "#/definitions/A", "x"])),
                );
            }
            12 => {
                let v = match rng.below(3) {
                    0 => json!(true),
                    1 => json!(false),
                    _ => schema(rng, depth + 1),
                };
                m.insert("additionalProperties".into(), v);
            }
            13 => {
                m.insert("enum".into(), json!(["x", 1, null]));
            }
            14 => {
                m.insert("const".into(), json!(rng.pick(NAMES)));
            }
            15 => {
                m.insert(
                    "format".into(),
                    json!(rng.pick(&["date-time", "uri", "int32", "uuid"])),
                );
            }
            16 => {
                m.insert("nullable".into(), json!(true));
            }
            17 => {
                m.insert("default".into(), json!(null));
            }
            18 => {
                m.insert("description".into(), json!("d"));
            }
            19 => {
                m.insert("minLength".into(), json!(1));
            }
            20 => {
                m.insert("patternProperties".into(), json!({"^x": {}}));
            }
            _ => {
                m.insert("title".into(), json!(rng.pick(NAMES)));
            }
        }
    }
    Value::Object(m)
}

/// A schema shaped like generator output (pydantic, schemars): typed nodes, local refs,
/// optional fields, unions, annotations, unsupported keywords.
fn plausible(rng: &mut Rng, depth: usize) -> Value {
    const SCALARS: &[&str] = &["string", "integer", "number", "boolean"];
    let leaf = depth > 4;
    let mut v = match rng.below(if leaf { 3 } else { 12 }) {
        0 => json!({"type": rng.pick(SCALARS)}),
        1 => json!({"type": "string", "format": rng.pick(&["date-time", "uri", "uuid"]),
                    "minLength": 1}),
        2 => json!({"$ref": format!("#/$defs/{}", rng.pick(&["A", "B", "Node"]))}),
        3 => json!({"enum": ["x", "y"], "type": "string"}),
        4 => json!({"const": 3}),
        5 => json!({"anyOf": [plausible(rng, depth + 1), {"type": "null"}], "default": null}),
        6 => json!({"oneOf": [plausible(rng, depth + 1), plausible(rng, depth + 1)],
                    "discriminator": {"propertyName": "kind"}}),
        7 => json!({"allOf": [{"$ref": format!("#/$defs/{}", rng.pick(&["A", "B"]))}],
                    "description": "wrapped"}),
        8 => json!({"type": "array", "items": plausible(rng, depth + 1), "uniqueItems": true}),
        9 => json!({"type": "array", "prefixItems": [plausible(rng, depth + 1),
                                                      plausible(rng, depth + 1)]}),
        10 => json!({"$ref": format!("#/$defs/{}", rng.pick(&["A", "Node"])),
                     "description": "with sibling"}),
        _ => {
            let mut props = Map::new();
            let mut required = Vec::new();
            for name in &NAMES[..rng.below(4) + 1] {
                props.insert((*name).into(), plausible(rng, depth + 1));
                if rng.below(2) == 0 {
                    required.push(json!(name));
                }
            }
            json!({"type": "object", "properties": props, "required": required})
        }
    };
    if rng.below(4) == 0 {
        v["title"] = json!(rng.pick(NAMES));
    }
    if rng.below(5) == 0 {
        v["default"] = json!(1);
    }
    v
}

fn plausible_root(rng: &mut Rng) -> Value {
    let mut defs = Map::new();
    for name in ["A", "B", "Node"] {
        let mut props = Map::new();
        props.insert("v".into(), plausible(rng, 2));
        props.insert("next".into(), json!({"$ref": format!("#/$defs/{name}")}));
        defs.insert(
            name.into(),
            json!({"type": "object", "title": name, "properties": props,
                                        "required": ["v"]}),
        );
    }
    let mut props = Map::new();
    for name in &NAMES[..rng.below(4) + 1] {
        props.insert((*name).into(), plausible(rng, 1));
    }
    json!({"type": "object", "title": "Root", "properties": props, "$defs": defs})
}

fn root(rng: &mut Rng) -> Value {
    if rng.below(2) == 0 {
        return plausible_root(rng);
    }
    let mut r = schema(rng, 0);
    if let Value::Object(m) = &mut r {
        if rng.below(2) == 0 {
            let mut defs = Map::new();
            for name in &NAMES[..rng.below(NAMES.len())] {
                defs.insert((*name).into(), schema(rng, 1));
            }
            m.insert(
                rng.pick(&["$defs", "definitions"]).into(),
                Value::Object(defs),
            );
        }
    }
    r
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

#[test]
fn random_schemas_terminate_and_strict_is_a_fixed_point() {
    let mut rng = Rng(env_or("SEED", 0x9E37_79B9_7F4A_7C15));
    let mut strict_count = 0;
    for i in 0..env_or("N", 1500) {
        let input = root(&mut rng);
        let _ = bedrock(&input);
        let _ = gemini(&input);
        let _ = gemini_function(&input);
        let Ok((out, first)) = strict_report(&input) else {
            assert!(
                strict(&input).is_err(),
                "case {i}: strict() passed a budget error"
            );
            continue;
        };
        // the report-free path of strict() agrees with the report, output and refusals alike
        match strict(&input) {
            Ok(fast) => {
                assert!(first.is_strict(), "case {i}: strict() accepted {input}");
                assert_eq!(fast.to_string(), out.to_string(), "case {i}: {input}");
            }
            Err(SchemaError::NotStrict(issues)) => assert_eq!(issues, first.non_strict),
            Err(e) => panic!("case {i}: {e} for {input}"),
        }
        if first.is_strict() {
            strict_count += 1;
            if let Err(why) = obeys_strict_rules(&out, true) {
                panic!("case {i}: reported strict but {why}: {input}\n-> {out}");
            }
        }
        let (again, report) = strict_report(&out).expect("second pass within budget");
        assert_eq!(again, out, "case {i}: not a fixed point for {input}");
        assert!(
            report.lossy.is_empty(),
            "case {i}: {input}\n-> {out}\nrewrote {:?}",
            report.lossy
        );
    }
    assert!(
        strict_count >= 150,
        "only {strict_count} strict outputs checked"
    );
}

const ALLOWED: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
    "title",
    "description",
    "pattern",
    "format",
    "multipleOf",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
];

/// OpenAI's strict-mode rules as far as the schema alone shows them.
fn obeys_strict_rules(v: &Value, root: bool) -> Result<(), String> {
    let Value::Object(m) = v else {
        return Err(format!("{v} is not an object"));
    };
    if let Some(k) = m.keys().find(|k| !ALLOWED.contains(&k.as_str())) {
        return Err(format!("keyword {k}"));
    }
    if root && m.get("type") != Some(&json!("object")) {
        return Err("root is not an object".into());
    }
    for table in ["$defs", "definitions"] {
        if let Some(defs) = m.get(table) {
            if !root {
                return Err("nested definitions".into());
            }
            for d in defs.as_object().ok_or("defs not an object")?.values() {
                obeys_strict_rules(d, false)?;
            }
        }
    }
    if m.contains_key("$ref") {
        let others = m
            .keys()
            .filter(|k| !matches!(k.as_str(), "$ref" | "$defs" | "definitions"));
        return if others.count() == 0 {
            Ok(())
        } else {
            Err("$ref with siblings".into())
        };
    }
    if !["type", "anyOf", "enum", "const"]
        .iter()
        .any(|k| m.contains_key(*k))
    {
        return Err("untyped node".into());
    }
    let types: Vec<&str> = match m.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    if types.contains(&"object") && !m.contains_key("enum") && !m.contains_key("const") {
        if m.get("additionalProperties") != Some(&json!(false)) {
            return Err("open object".into());
        }
        let props = m.get("properties").and_then(Value::as_object);
        let names: Vec<&String> = props.map(|p| p.keys().collect()).unwrap_or_default();
        let required: Vec<&str> = m
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if names.len() != required.len() || names.iter().any(|n| !required.contains(&n.as_str())) {
            return Err("required is not every property".into());
        }
        for p in props.into_iter().flat_map(|p| p.values()) {
            obeys_strict_rules(p, false)?;
        }
    }
    if types.contains(&"array") {
        obeys_strict_rules(m.get("items").ok_or("array without items")?, false)?;
    }
    if let Some(members) = m.get("anyOf") {
        for member in members.as_array().ok_or("anyOf not an array")? {
            obeys_strict_rules(member, false)?;
        }
    }
    Ok(())
}
