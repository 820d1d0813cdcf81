//! Errors of building a redactor. Messages never contain a secret value.

/// Why a [`crate::Redactor`] could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RedactError {
    /// An internal rule or the known-secret automaton failed to compile.
    #[error("redaction rules failed to build: {0}")]
    Build(String),
    /// The caller's configuration is unusable (the message names the field, not its value).
    #[error("invalid redaction config: {0}")]
    Config(String),
}
