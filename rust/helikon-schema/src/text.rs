//! JSON-text entry points for bindings: parse, normalize, serialize.
use serde_json::{json, Value};

use crate::error::SchemaError;
use crate::report::Report;
use crate::{bedrock, gemini, gemini_function, parse, strict, strict_report};

/// [`strict`] on schema text.
///
/// # Errors
/// [`SchemaError::InvalidJson`] or any error of [`strict`].
pub fn strict_json(schema: &str) -> Result<String, SchemaError> {
    Ok(strict(&parse(schema)?)?.to_string())
}

/// [`strict_report`] on schema text: `{"schema": ..., "lossy": [...], "non_strict": [...]}`,
/// each entry `{"path", "field", "kind", "what" | "reason"}`.
///
/// # Errors
/// [`SchemaError::InvalidJson`] or a budget error.
pub fn strict_report_json(schema: &str) -> Result<String, SchemaError> {
    let (out, report) = strict_report(&parse(schema)?)?;
    Ok(report_value(out, &report).to_string())
}

/// [`bedrock`] on schema text.
///
/// # Errors
/// [`SchemaError::InvalidJson`] or a budget error.
pub fn bedrock_json(schema: &str) -> Result<String, SchemaError> {
    Ok(bedrock(&parse(schema)?)?.to_string())
}

/// [`gemini`] (or [`gemini_function`] when `for_function`) on schema text.
///
/// # Errors
/// [`SchemaError::InvalidJson`] or a budget error.
pub fn gemini_json(schema: &str, for_function: bool) -> Result<String, SchemaError> {
    let schema = parse(schema)?;
    let out = if for_function {
        gemini_function(&schema)?
    } else {
        gemini(&schema)?
    };
    Ok(out.to_string())
}

fn report_value(schema: Value, report: &Report) -> Value {
    let lossy: Vec<Value> = report
        .lossy
        .iter()
        .map(|r| json!({"path": r.path, "field": r.field, "kind": r.kind.as_str(), "what": r.what}))
        .collect();
    let non_strict: Vec<Value> = report
        .non_strict
        .iter()
        .map(|i| {
            json!({"path": i.path, "field": i.field, "kind": i.kind.as_str(), "reason": i.reason})
        })
        .collect();
    json!({"schema": schema, "lossy": lossy, "non_strict": non_strict})
}
