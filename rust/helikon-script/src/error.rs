//! What can go wrong compiling or calling a script tool.
use thiserror::Error;

/// A script tool error; its text is what the model (or the sidecar's author) reads.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ScriptError {
    /// The source does not parse.
    #[error("the script does not compile: {0}")]
    Compile(String),
    /// The source has no `fn run(args)` taking one argument.
    #[error("the script has no fn run(args) taking one argument")]
    NoRun,
    /// The arguments are not a JSON value.
    #[error("the arguments are not JSON: {0}")]
    BadArgs(String),
    /// The operation-count cap was reached (a runaway loop).
    #[error("the script was stopped after {0} operations (a runaway loop?)")]
    TooManyOperations(u64),
    /// Nested calls went past the call-depth cap (runaway recursion).
    #[error("the script was stopped: calls nested deeper than {0} (runaway recursion?)")]
    TooDeep(usize),
    /// A string, array or map grew past its cap.
    #[error("the script was stopped: {0}")]
    TooLarge(String),
    /// The wall-clock budget ran out.
    #[error("the script was stopped after {0} ms (its time budget)")]
    Timeout(u128),
    /// The script reached for something the sandbox does not have (a module, `eval`, an
    /// unknown function such as a file or network call).
    #[error("the script used something the sandbox does not provide: {0}")]
    Forbidden(String),
    /// The script failed (a `throw`, a type error, an index out of range...).
    #[error("the script failed: {0}")]
    Runtime(String),
    /// `run` returned a value that has no JSON form.
    #[error("the script's result is not JSON-representable: {0}")]
    BadResult(String),
}
