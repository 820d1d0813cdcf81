//! JSON-Schema normalizers for provider tool and output schemas.
//!
//! # Use cases
//! - [`strict`] / [`strict_report`]: OpenAI strict structured outputs and strict tools. Every
//!   object is closed (`additionalProperties: false`) and lists all properties in `required`;
//!   optional properties become nullable. `$defs`/`$ref` (recursive types included), unions,
//!   `allOf`, arrays and tuples are walked; unsupported keywords are removed. Constructs strict
//!   mode cannot express (free-form `dict`, `dict[str, T]`, `Any`, `patternProperties`, ...)
//!   are never closed silently: [`strict_report`] lists them in [`Report::non_strict`] (with a
//!   JSON pointer and the field name) so a provider can send `strict: false` instead, and
//!   [`strict`] fails with an error naming the field.
//! - [`bedrock`]: Bedrock Converse tool input schemas: refs inlined, `oneOf`/`anyOf`/`allOf`
//!   collapsed into one object with a tag enum, meta keywords stripped.
//! - [`gemini`]: Gemini `responseSchema` (OpenAPI 3.0 subset): refs inlined, type arrays to
//!   `nullable`, `const` to `enum`, `oneOf` to `anyOf`, unsupported keywords and formats dropped.
//!   [`gemini_function`] additionally keeps only the fields function declarations accept.
//! - [`strict_tree`] / [`strict_report_tree`]: the strict normalizer on a [`tree::Node`] generic
//!   over its string handle, for bindings that walk their own objects (the Python binding
//!   reuses the caller's `str` objects instead of going through JSON text). The `serde_json`
//!   entry points run the same code on a tree borrowed from the [`serde_json::Value`].
//!   [`strict`] and [`strict_tree`] skip the lossy-rewrite report they would discard.
//!
//! # Compatibility
//! The outputs of [`strict_report_with`] in [`StrictOptions::reference`] mode, [`bedrock`] and
//! [`gemini`] match the reference behaviour pinned by the conformance vectors. Where the
//! reference is limited (strict mode ignoring `$defs`, `$ref` and unions; optional properties
//! left non-nullable) helikon's default does better and documents the difference.
//!
//! # Limitations
//! - Only local refs are resolved (`#`, `#/$defs/NAME`, `#/definitions/NAME`); others are
//!   reported (strict) or replaced by `{"type": "object"}` (Bedrock, Gemini).
//! - OpenAI's size limits (total properties, nesting levels, enum sizes) are not checked.
//! - A `oneOf` becomes `anyOf`: strict mode cannot enforce exclusivity.
//!
//! # Budgets
//! Work is linear in the schema size except for `$ref` expansion, which is bounded by
//! [`Limits`] (default 10 000 nodes visited, depth 64); a hostile schema (a `$ref` fan-out
//! bomb) yields [`SchemaError::TooLarge`] instead of exhausting memory.
//!
//! # Test strategy
//! `tests/` runs every case of the shared conformance vectors (`strict_schema.json`,
//! `bedrock_rewrite.json`, `gemini_sanitize.json`), helikon's extensions (refs, unions,
//! free-form reporting, budgets, the BR-01 and BR-03 field cases) and idempotence, and checks
//! on those vectors and on random schemas that the report-free [`strict`] path agrees with
//! [`strict_report`]; the Python suite checks a corpus of pydantic-generated schemas against
//! their own example instances and the dict boundary against the JSON-text one; a cargo-fuzz
//! target in `fuzz/` feeds arbitrary JSON to all entry points.
mod bedrock;
mod budget;
mod error;
mod gemini;
mod location;
mod report;
mod strict;
mod text;
pub mod tree;

pub use bedrock::{bedrock, bedrock_with};
pub use budget::{Limits, DEFAULT_MAX_DEPTH, DEFAULT_MAX_NODES};
pub use error::SchemaError;
pub use gemini::{gemini, gemini_function, gemini_with};
pub use report::{Issue, IssueKind, Report, Rewrite, RewriteKind};
pub use strict::{
    strict, strict_report, strict_report_tree, strict_report_with, strict_tree, strict_with,
    StrictOptions,
};
pub use text::{bedrock_json, gemini_json, strict_json, strict_report_json};

/// Parse schema text, mapping a syntax error to [`SchemaError::InvalidJson`].
///
/// The parser stops at 128 levels of JSON nesting, which always means more than 64 schema
/// levels; that is reported as [`SchemaError::TooDeep`].
///
/// # Errors
/// [`SchemaError::InvalidJson`] when `text` is not JSON, [`SchemaError::TooDeep`] when it nests
/// past the parser's limit.
pub fn parse(text: &str) -> Result<serde_json::Value, SchemaError> {
    serde_json::from_str(text).map_err(|e| {
        let msg = e.to_string();
        if msg.starts_with("recursion limit exceeded") {
            SchemaError::TooDeep {
                limit: DEFAULT_MAX_DEPTH,
                path: format!("line {} column {} of the JSON text", e.line(), e.column()),
            }
        } else {
            SchemaError::InvalidJson(msg)
        }
    })
}
