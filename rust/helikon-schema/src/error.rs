//! The one error type of the crate.
use crate::report::Issue;

/// Why a schema could not be normalized.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// The schema text is not JSON (only raised by the `*_json` helpers).
    #[error("schema is not valid JSON: {0}")]
    InvalidJson(String),
    /// The schema grew past the node budget, usually a `$ref` fan-out.
    #[error(
        "schema too large: more than {limit} schema nodes after $ref expansion (at {path}); \
         an oversized schema or a $ref fan-out"
    )]
    TooLarge {
        /// The node budget that was exceeded.
        limit: usize,
        /// JSON pointer of the node that crossed the budget.
        path: String,
    },
    /// The schema nests deeper than the depth budget.
    #[error("schema too deep: nesting exceeds {limit} levels (at {path})")]
    TooDeep {
        /// The depth budget that was exceeded.
        limit: usize,
        /// JSON pointer of the node that crossed the budget.
        path: String,
    },
    /// `strict()` found constructs OpenAI strict mode cannot express.
    #[error("{}", not_strict_message(.0))]
    NotStrict(Vec<Issue>),
}

fn not_strict_message(issues: &[Issue]) -> String {
    let Some(first) = issues.first() else {
        return "schema is not strict-compatible".to_owned();
    };
    let mut msg = first.message();
    if issues.len() > 1 {
        let others: Vec<&str> = issues[1..].iter().map(Issue::display_field).collect();
        msg.push_str(&format!(
            "; {} more non-strict construct(s): {}",
            issues.len() - 1,
            others.join(", ")
        ));
    }
    msg
}
