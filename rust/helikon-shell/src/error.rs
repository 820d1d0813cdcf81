//! Errors of this crate (only rule construction can fail; analysis never does).

/// A rule set or pattern that cannot be compiled.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ShellError {
    /// The rules JSON does not parse or has an unknown field or value.
    #[error("invalid command policy rules: {0}")]
    InvalidRules(String),
    /// A path glob does not compile.
    #[error("invalid path pattern `{pattern}`: {message}")]
    InvalidGlob { pattern: String, message: String },
}
