//! The one place Rust errors become Python exceptions.
//!
//! Exception classes live in `helikon/errors.py`; they are looked up by name at raise time so
//! the Python tree stays the single source of truth.
use pyo3::prelude::*;
use pyo3::types::PyAnyMethods;

/// Raise `helikon.errors.<class_name>(message)`.
#[allow(dead_code)]
pub fn helikon_error(py: Python<'_>, class_name: &str, message: String) -> PyErr {
    match py
        .import("helikon.errors")
        .and_then(|m| m.getattr(class_name))
    {
        Ok(cls) => match cls.call1((message.clone(),)) {
            Ok(inst) => PyErr::from_value(inst),
            Err(e) => e,
        },
        Err(_) => pyo3::exceptions::PyRuntimeError::new_err(message),
    }
}
