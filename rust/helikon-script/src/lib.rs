//! helikon-script: sandboxed [Rhai](https://rhai.rs) script tools for the `agents.toml`
//! sidecar.
//!
//! # Use cases
//!
//! A sidecar declares a tool as a Rhai script (`script = "tool.rhai"` or
//! `inline = '''...'''`) exposing `fn run(args)`. [`ScriptTool::compile`] parses it once;
//! [`ScriptTool::call`] runs `run` with the model's JSON arguments (as a Rhai map) and
//! returns its result as JSON text. The Python binding (`helikon._native.ScriptTool`) holds a
//! compiled tool and calls it with the GIL released.
//!
//! # The sandbox
//!
//! * No file, network or process access: the engine has only Rhai's standard packages
//!   (arithmetic, strings, arrays, maps, math, time), none of which reaches outside the
//!   process; `import` resolves no module, `eval` is disabled, `print` and `debug` go
//!   nowhere.
//! * Every call runs under [`Limits`]: an operation-count cap (a runaway loop stops with
//!   [`ScriptError::TooManyOperations`]), a call-depth cap (deep recursion stops with
//!   [`ScriptError::TooDeep`] before the Rust stack does), string, array and map size caps
//!   and a cap on the result's JSON size ([`ScriptError::TooLarge`]), and a wall-clock budget
//!   ([`ScriptError::Timeout`]), checked at every operation, so no script can keep a thread
//!   busy past its budget. A map grown key by key is bounded by the operation cap (Rhai checks
//!   sizes on whole values, not on each insertion).
//! * Expression nesting is capped at compile time, so a hostile source cannot exhaust the
//!   parser's stack either.
//!
//! # Limitations
//!
//! Rhai integers are 64-bit and floats `f64`; a JSON number outside `i64` arrives as a float.
//! A result that is not JSON-representable (a function pointer, a timestamp) is refused.
//!
//! # Test strategy
//!
//! `tests/sandbox.rs` runs the spec's `lookup_spending` example, an infinite loop, deep
//! recursion, a huge string and array, attempts to reach files, modules and `eval`, and
//! compile errors; the Python tests run the same through the sidecar. The fuzz target
//! (`fuzz/fuzz_targets/script.rs`) compiles and calls arbitrary sources and arguments under
//! small limits: no input may panic or outlive its budget.
mod engine;
mod error;
mod limits;
mod tool;

pub use error::ScriptError;
pub use limits::Limits;
pub use tool::ScriptTool;
