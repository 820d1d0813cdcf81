//! A compiled script tool and its calls.
use std::time::Instant;

use rhai::{Dynamic, EvalAltResult, Scope, AST};

use crate::engine::{compiler, runner, TIMEOUT_TOKEN};
use crate::error::ScriptError;
use crate::limits::Limits;

/// A script compiled once, called many times (from any thread).
#[derive(Debug, Clone)]
pub struct ScriptTool {
    ast: AST,
    limits: Limits,
}

impl ScriptTool {
    /// Compile `source`, which must define `fn run(args)`.
    ///
    /// # Errors
    /// [`ScriptError::Compile`] for a syntax error (or nesting past the cap),
    /// [`ScriptError::NoRun`] when `run` with one parameter is missing.
    pub fn compile(source: &str, limits: Limits) -> Result<Self, ScriptError> {
        let engine = compiler(&limits);
        let ast = engine
            .compile(source)
            .map_err(|e| ScriptError::Compile(e.to_string()))?;
        if !ast
            .iter_functions()
            .any(|f| f.name == "run" && f.params.len() == 1)
        {
            return Err(ScriptError::NoRun);
        }
        Ok(ScriptTool { ast, limits })
    }

    /// The limits calls run under.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Call `run(args)` with `args_json` (a JSON value, normally an object) and return the
    /// result as JSON text (a string result is a JSON string).
    ///
    /// # Errors
    /// Every [`ScriptError`] but `Compile` and `NoRun`.
    pub fn call(&self, args_json: &str) -> Result<String, ScriptError> {
        let args: serde_json::Value =
            serde_json::from_str(args_json).map_err(|e| ScriptError::BadArgs(e.to_string()))?;
        let args =
            rhai::serde::to_dynamic(args).map_err(|e| ScriptError::BadArgs(e.to_string()))?;
        let started = Instant::now();
        let engine = runner(&self.limits, started + self.limits.timeout);
        let mut scope = Scope::new();
        let out: Dynamic = engine
            .call_fn(&mut scope, &self.ast, "run", (args,))
            .map_err(|e| self.classify(*e, started))?;
        let value: serde_json::Value =
            rhai::serde::from_dynamic(&out).map_err(|e| ScriptError::BadResult(e.to_string()))?;
        let text =
            serde_json::to_string(&value).map_err(|e| ScriptError::BadResult(e.to_string()))?;
        if text.len() > self.limits.max_result_bytes {
            return Err(ScriptError::TooLarge(format!(
                "the result is {} bytes of JSON, over {}",
                text.len(),
                self.limits.max_result_bytes
            )));
        }
        Ok(text)
    }

    fn classify(&self, err: EvalAltResult, started: Instant) -> ScriptError {
        match err {
            EvalAltResult::ErrorTooManyOperations(_) => {
                ScriptError::TooManyOperations(self.limits.max_operations)
            }
            EvalAltResult::ErrorStackOverflow(_) => {
                ScriptError::TooDeep(self.limits.max_call_depth)
            }
            EvalAltResult::ErrorDataTooLarge(what, _) => {
                ScriptError::TooLarge(format!("{what} grew past its limit"))
            }
            EvalAltResult::ErrorTerminated(token, _)
                if token.clone().into_immutable_string().ok().as_deref() == Some(TIMEOUT_TOKEN) =>
            {
                ScriptError::Timeout(started.elapsed().as_millis())
            }
            EvalAltResult::ErrorInFunctionCall(_, _, inner, _) => self.classify(*inner, started),
            e @ (EvalAltResult::ErrorFunctionNotFound(..)
            | EvalAltResult::ErrorModuleNotFound(..)
            | EvalAltResult::ErrorVariableNotFound(..)) => ScriptError::Forbidden(e.to_string()),
            e @ EvalAltResult::ErrorParsing(..) => ScriptError::Forbidden(e.to_string()),
            e => ScriptError::Runtime(e.to_string()),
        }
    }
}
