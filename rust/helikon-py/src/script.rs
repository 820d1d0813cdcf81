//! Binding of `helikon-script`: the compile-once `ScriptTool` pyclass.
//!
//! Compile errors become `helikon.errors.ConfigError`; a failed call (a runaway loop, deep
//! recursion, a size limit, a `throw`, a forbidden function) becomes
//! `helikon.errors.ToolError`, whose text the model reads. Calls run with the GIL released.
use std::time::Duration;

use helikon_script::{Limits, ScriptTool};
use pyo3::prelude::*;

use crate::errors::{from_script_call, from_script_compile};

/// A compiled Rhai script tool (see `helikon.cli.script_tool` for the documented API).
#[pyclass(frozen, name = "ScriptTool", module = "helikon._native")]
pub struct PyScriptTool {
    inner: ScriptTool,
}

#[pymethods]
impl PyScriptTool {
    /// Compile `source` (it must define `fn run(args)`) under the given limits (the crate's
    /// defaults where `None`).
    #[new]
    #[pyo3(signature = (
        source,
        *,
        max_operations=None,
        max_call_depth=None,
        max_string_bytes=None,
        max_array_items=None,
        timeout_ms=None
    ))]
    fn new(
        py: Python<'_>,
        source: &str,
        max_operations: Option<u64>,
        max_call_depth: Option<usize>,
        max_string_bytes: Option<usize>,
        max_array_items: Option<usize>,
        timeout_ms: Option<u64>,
    ) -> PyResult<Self> {
        let d = Limits::default();
        let limits = Limits {
            max_operations: max_operations.unwrap_or(d.max_operations),
            max_call_depth: max_call_depth.unwrap_or(d.max_call_depth),
            max_string_bytes: max_string_bytes.unwrap_or(d.max_string_bytes),
            max_array_items: max_array_items.unwrap_or(d.max_array_items),
            timeout: timeout_ms.map_or(d.timeout, Duration::from_millis),
            ..d
        };
        let source = source.to_string();
        py.detach(move || ScriptTool::compile(&source, limits))
            .map(|inner| Self { inner })
            .map_err(|e| from_script_compile(py, e))
    }

    /// Call `run(args)` with `args_json` (JSON text); the result as JSON text.
    fn call(&self, py: Python<'_>, args_json: &str) -> PyResult<String> {
        py.detach(|| self.inner.call(args_json))
            .map_err(|e| from_script_call(py, e))
    }

    /// The operation cap of each call.
    #[getter]
    fn max_operations(&self) -> u64 {
        self.inner.limits().max_operations
    }

    /// The wall-clock budget of each call, in milliseconds.
    #[getter]
    fn timeout_ms(&self) -> u128 {
        self.inner.limits().timeout.as_millis()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyScriptTool>()?;
    Ok(())
}
