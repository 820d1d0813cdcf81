//! A JSON-Schema subset validator for structured output.
//!
//! Supported keywords: `type` (string or array, incl. `null`; `integer` accepts numbers
//! without a fractional part), `enum`, `const`, `properties`, `required`, `items` (schema or
//! tuple array), `prefixItems`, `minItems`/`maxItems`, `minLength`/`maxLength`,
//! `minimum`/`maximum`/`exclusiveMinimum`/`exclusiveMaximum`, `allOf`, `anyOf`, `oneOf`,
//! `not`, boolean schemas, and local `$ref` (`#`, `#/$defs/..`, any `#/` JSON pointer).
//! Everything else (`format`, `pattern`, `additionalProperties`, annotations) is ignored:
//! unknown object fields are accepted, as the reference does.
//!
//! [`OutputSchema::compile`] checks the keywords above are well formed and every `$ref`
//! resolves, once; [`OutputSchema::validate`] then cannot fail on the schema itself except
//! for a `$ref` loop that never consumes the value, which it reports as an error.
use std::cell::Cell;
use std::cmp::Ordering;

use serde_json::{Map, Number, Value};

const TYPES: [&str; 7] = [
    "null", "boolean", "object", "array", "string", "number", "integer",
];
/// Schema applications in a row (`$ref`, `allOf`, ...) without descending into the value.
const MAX_HOPS: u32 = 32;
/// Schema applications allowed per value node (plus a floor); bounds nested `anyOf`/`oneOf`
/// blow-ups while leaving room for any realistic schema.
const STEPS_PER_NODE: u64 = 64;
const MIN_STEPS: u64 = 10_000;

/// A compiled (checked) output schema.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputSchema {
    root: Value,
}

impl OutputSchema {
    /// Check `schema` once. Errors name the offending keyword by JSON pointer.
    pub fn compile(schema: Value) -> Result<Self, String> {
        check_schema(&schema, &schema, "#")?;
        Ok(OutputSchema { root: schema })
    }

    /// The schema as given.
    pub fn as_value(&self) -> &Value {
        &self.root
    }

    /// Every problem with `instance`; empty when it is valid.
    pub fn validate(&self, instance: &Value) -> Vec<String> {
        let walk = Walk {
            root: &self.root,
            steps: Cell::new(0),
            budget: node_count(instance)
                .saturating_mul(STEPS_PER_NODE)
                .saturating_add(MIN_STEPS),
        };
        let mut errors = Vec::new();
        walk.check(&self.root, instance, "", 0, &mut errors);
        if walk.steps.get() > walk.budget {
            errors.push("schema too costly to check against this value".to_owned());
        }
        errors
    }
}

/// One validation run: the root for `$ref` and the step budget.
struct Walk<'a> {
    root: &'a Value,
    steps: Cell<u64>,
    budget: u64,
}

/// Number of values in `v` (itself included), without recursion.
fn node_count(v: &Value) -> u64 {
    let mut stack = vec![v];
    let mut n: u64 = 0;
    while let Some(v) = stack.pop() {
        n += 1;
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(fields) => stack.extend(fields.values()),
            _ => {}
        }
    }
    n
}

impl Walk<'_> {
    fn check(&self, schema: &Value, v: &Value, path: &str, hops: u32, errs: &mut Vec<String>) {
        let steps = self.steps.get() + 1;
        self.steps.set(steps);
        if steps > self.budget {
            return;
        }
        let obj = match schema {
            Value::Bool(true) => return,
            Value::Bool(false) => return errs.push(at(path, "no value is allowed here")),
            Value::Object(obj) => obj,
            _ => return,
        };
        if hops > MAX_HOPS {
            return errs.push(at(path, "schema references loop without reaching a value"));
        }
        if let Some(target) = obj.get("$ref").and_then(Value::as_str) {
            match resolve(self.root, target) {
                Some(sub) => self.check(sub, v, path, hops + 1, errs),
                None => errs.push(at(path, &format!("unresolvable $ref `{target}`"))),
            }
        }
        if let Some(t) = obj.get("type") {
            if !type_matches(t, v) {
                let msg = format!("expected {}, found {}", type_list(t), kind_of(v));
                return errs.push(at(path, &msg));
            }
        }
        if let Some(Value::Array(options)) = obj.get("enum") {
            if !options.contains(v) {
                let msg = format!(
                    "expected one of {}, found {v}",
                    Value::Array(options.clone())
                );
                errs.push(at(path, &msg));
            }
        }
        if let Some(c) = obj.get("const") {
            if c != v {
                errs.push(at(path, &format!("expected {c}, found {v}")));
            }
        }
        match v {
            Value::Number(n) => check_number(obj, n, path, errs),
            Value::String(s) => check_length(obj, s.chars().count(), "length", path, errs),
            Value::Array(items) => self.check_array(obj, items, path, errs),
            Value::Object(fields) => self.check_object(obj, fields, path, errs),
            Value::Null | Value::Bool(_) => {}
        }
        self.check_combinators(obj, v, path, hops, errs);
    }

    fn check_array(
        &self,
        obj: &Map<String, Value>,
        items: &[Value],
        path: &str,
        errs: &mut Vec<String>,
    ) {
        check_length(obj, items.len(), "item count", path, errs);
        let prefix = match (obj.get("prefixItems"), obj.get("items")) {
            (Some(Value::Array(p)), _) | (None, Some(Value::Array(p))) => p.as_slice(),
            _ => &[],
        };
        let rest = match obj.get("items") {
            Some(s @ (Value::Object(_) | Value::Bool(_))) => Some(s),
            _ => None,
        };
        for (i, item) in items.iter().enumerate() {
            let sub = prefix.get(i).or(rest);
            if let Some(sub) = sub {
                self.check(sub, item, &format!("{path}[{i}]"), 0, errs);
            }
        }
    }

    fn check_object(
        &self,
        obj: &Map<String, Value>,
        fields: &Map<String, Value>,
        path: &str,
        errs: &mut Vec<String>,
    ) {
        if let Some(Value::Array(required)) = obj.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !fields.contains_key(name) {
                    errs.push(at(path, &format!("missing field `{name}`")));
                }
            }
        }
        if let Some(Value::Object(props)) = obj.get("properties") {
            for (name, value) in fields {
                if let Some(sub) = props.get(name) {
                    let child = if path.is_empty() {
                        name.clone()
                    } else {
                        format!("{path}.{name}")
                    };
                    self.check(sub, value, &child, 0, errs);
                }
            }
        }
    }

    fn check_combinators(
        &self,
        obj: &Map<String, Value>,
        v: &Value,
        path: &str,
        hops: u32,
        errs: &mut Vec<String>,
    ) {
        if let Some(Value::Array(all)) = obj.get("allOf") {
            for sub in all {
                self.check(sub, v, path, hops + 1, errs);
            }
        }
        for keyword in ["anyOf", "oneOf"] {
            let Some(Value::Array(alternatives)) = obj.get(keyword) else {
                continue;
            };
            let results: Vec<Vec<String>> = alternatives
                .iter()
                .map(|sub| {
                    let mut e = Vec::new();
                    self.check(sub, v, "", hops + 1, &mut e);
                    e
                })
                .collect();
            let passing = results.iter().filter(|e| e.is_empty()).count();
            if passing == 0 {
                let why: Vec<String> = results.into_iter().map(|e| e.join(", ")).collect();
                let msg = format!("matches no alternative of {keyword}: {}", why.join("; or "));
                errs.push(at(path, &msg));
            } else if keyword == "oneOf" && passing > 1 {
                errs.push(at(path, "matches more than one alternative of oneOf"));
            }
        }
        if let Some(not) = obj.get("not") {
            let mut e = Vec::new();
            self.check(not, v, "", hops + 1, &mut e);
            if e.is_empty() {
                errs.push(at(path, "matches a schema it must not match (not)"));
            }
        }
    }
}

fn at(path: &str, msg: &str) -> String {
    if path.is_empty() {
        msg.to_owned()
    } else {
        format!("at `{path}`: {msg}")
    }
}

fn resolve<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        Some(root)
    } else {
        root.pointer(pointer)
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if is_integer(n) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_integer(n: &Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

fn one_type_matches(t: &str, v: &Value) -> bool {
    match (t, v) {
        ("integer", Value::Number(n)) => is_integer(n),
        ("number", Value::Number(_)) => true,
        _ => t == kind_of(v),
    }
}

fn type_matches(t: &Value, v: &Value) -> bool {
    match t {
        Value::String(t) => one_type_matches(t, v),
        Value::Array(ts) => ts
            .iter()
            .filter_map(Value::as_str)
            .any(|t| one_type_matches(t, v)),
        _ => true,
    }
}

fn type_list(t: &Value) -> String {
    match t {
        Value::Array(ts) => {
            let names: Vec<&str> = ts.iter().filter_map(Value::as_str).collect();
            names.join(" or ")
        }
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Exact for integers (as i128), f64 otherwise.
fn compare(a: &Number, b: &Number) -> Option<Ordering> {
    let int = |n: &Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    match (int(a), int(b)) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        _ => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

fn check_number(obj: &Map<String, Value>, n: &Number, path: &str, errs: &mut Vec<String>) {
    let bounds: [(&str, &[Ordering], &str); 4] = [
        ("minimum", &[Ordering::Less], "less than the minimum"),
        ("maximum", &[Ordering::Greater], "greater than the maximum"),
        (
            "exclusiveMinimum",
            &[Ordering::Less, Ordering::Equal],
            "not greater than the exclusive minimum",
        ),
        (
            "exclusiveMaximum",
            &[Ordering::Greater, Ordering::Equal],
            "not less than the exclusive maximum",
        ),
    ];
    for (keyword, failing, words) in bounds {
        if let Some(Value::Number(bound)) = obj.get(keyword) {
            if compare(n, bound).is_some_and(|o| failing.contains(&o)) {
                errs.push(at(path, &format!("{n} is {words} {bound}")));
            }
        }
    }
}

fn check_length(
    obj: &Map<String, Value>,
    len: usize,
    what: &str,
    path: &str,
    errs: &mut Vec<String>,
) {
    let (min_kw, max_kw) = if what == "length" {
        ("minLength", "maxLength")
    } else {
        ("minItems", "maxItems")
    };
    let len = len as u64;
    if let Some(min) = obj.get(min_kw).and_then(Value::as_u64) {
        if len < min {
            errs.push(at(path, &format!("{what} {len} is less than {min}")));
        }
    }
    if let Some(max) = obj.get(max_kw).and_then(Value::as_u64) {
        if len > max {
            errs.push(at(path, &format!("{what} {len} is greater than {max}")));
        }
    }
}

/// Check the supported keywords of `schema` (at JSON pointer `ptr`) are well formed.
fn check_schema(root: &Value, schema: &Value, ptr: &str) -> Result<(), String> {
    let obj = match schema {
        Value::Bool(_) => return Ok(()),
        Value::Object(obj) => obj,
        _ => return Err(format!("{ptr}: a schema must be an object or a boolean")),
    };
    let bad = |kw: &str, want: &str| Err(format!("{ptr}/{kw}: must be {want}"));
    for (kw, value) in obj {
        match (kw.as_str(), value) {
            ("$ref", Value::String(r)) if resolve(root, r).is_none() => {
                return Err(format!("{ptr}/$ref: `{r}` does not resolve in this schema"));
            }
            ("$ref", Value::String(_)) => {}
            ("$ref", _) => return bad(kw, "a string"),
            ("type", Value::String(t)) if TYPES.contains(&t.as_str()) => {}
            ("type", Value::Array(ts))
                if ts
                    .iter()
                    .all(|t| t.as_str().is_some_and(|t| TYPES.contains(&t))) => {}
            ("type", _) => return bad(kw, "a JSON type name or an array of them"),
            ("enum", Value::Array(_)) => {}
            ("enum", _) => return bad(kw, "an array"),
            ("required", Value::Array(names)) if names.iter().all(Value::is_string) => {}
            ("required", _) => return bad(kw, "an array of strings"),
            ("minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum", v)
                if !v.is_number() =>
            {
                return bad(kw, "a number")
            }
            ("minLength" | "maxLength" | "minItems" | "maxItems", v) if !v.is_u64() => {
                return bad(kw, "a non-negative integer")
            }
            ("properties" | "$defs" | "definitions", Value::Object(subs)) => {
                for (name, sub) in subs {
                    check_schema(root, sub, &format!("{ptr}/{kw}/{}", escape(name)))?;
                }
            }
            ("properties" | "$defs" | "definitions", _) => return bad(kw, "an object"),
            ("allOf" | "anyOf" | "oneOf" | "prefixItems", Value::Array(subs)) => {
                for (i, sub) in subs.iter().enumerate() {
                    check_schema(root, sub, &format!("{ptr}/{kw}/{i}"))?;
                }
            }
            ("allOf" | "anyOf" | "oneOf" | "prefixItems", _) => return bad(kw, "an array"),
            ("items", Value::Array(subs)) => {
                for (i, sub) in subs.iter().enumerate() {
                    check_schema(root, sub, &format!("{ptr}/items/{i}"))?;
                }
            }
            ("items" | "not", sub) => check_schema(root, sub, &format!("{ptr}/{kw}"))?,
            _ => {}
        }
    }
    Ok(())
}

fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}
