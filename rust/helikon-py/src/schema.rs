//! Binding for `helikon-schema`: JSON text in, JSON text out; errors become
//! `helikon.errors.SchemaError`.
use helikon_schema::SchemaError;
use pyo3::prelude::*;

use crate::errors::helikon_error;

/// Schema text above this size is normalized with the GIL released.
const DETACH_ABOVE_BYTES: usize = 64 * 1024;

fn run(
    py: Python<'_>,
    size: usize,
    work: impl FnOnce() -> Result<String, SchemaError> + Send,
) -> PyResult<String> {
    let result = if size > DETACH_ABOVE_BYTES {
        py.detach(work)
    } else {
        work()
    };
    result.map_err(|e| helikon_error(py, "SchemaError", e.to_string()))
}

/// OpenAI strict-mode normalization; fails on constructs strict mode cannot express.
#[pyfunction]
fn schema_strict(py: Python<'_>, schema_json: &str) -> PyResult<String> {
    run(py, schema_json.len(), || {
        helikon_schema::strict_json(schema_json)
    })
}

/// Strict-mode normalization plus its report: `{"schema", "lossy", "non_strict"}`.
#[pyfunction]
fn schema_strict_report(py: Python<'_>, schema_json: &str) -> PyResult<String> {
    run(py, schema_json.len(), || {
        helikon_schema::strict_report_json(schema_json)
    })
}

/// Bedrock Converse tool-input schema rewrite.
#[pyfunction]
fn schema_bedrock(py: Python<'_>, schema_json: &str) -> PyResult<String> {
    run(py, schema_json.len(), || {
        helikon_schema::bedrock_json(schema_json)
    })
}

/// Gemini schema sanitizing (`for_function=True` for function declarations).
#[pyfunction]
#[pyo3(signature = (schema_json, *, for_function = false))]
fn schema_gemini(py: Python<'_>, schema_json: &str, for_function: bool) -> PyResult<String> {
    run(py, schema_json.len(), || {
        helikon_schema::gemini_json(schema_json, for_function)
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(schema_strict, m)?)?;
    m.add_function(wrap_pyfunction!(schema_strict_report, m)?)?;
    m.add_function(wrap_pyfunction!(schema_bedrock, m)?)?;
    m.add_function(wrap_pyfunction!(schema_gemini, m)?)?;
    Ok(())
}
