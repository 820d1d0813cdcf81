//! `helikon._native` shell area: Bash command analysis, command policies, path rules.
//!
//! Conversions, GIL release and error mapping only; the logic is in `helikon-shell`.
use pyo3::prelude::*;

use helikon_shell::{CommandPolicy as Policy, PathRule as Rule, ShellError};

use crate::errors::helikon_error;

fn config_error(py: Python<'_>, e: ShellError) -> PyErr {
    helikon_error(py, "ConfigError", e.to_string())
}

/// Analyse a Bash command; returns the analysis as JSON text.
#[pyfunction]
fn shell_analyze(py: Python<'_>, command: &str) -> String {
    py.detach(|| helikon_shell::analyze(command).to_json())
}

/// The top-level simple commands of a Bash command as source text.
#[pyfunction]
fn shell_split(py: Python<'_>, command: &str) -> Vec<String> {
    py.detach(|| helikon_shell::split(command))
}

/// Does a gitignore-style path pattern match a path?
#[pyfunction]
fn path_rule_matches(py: Python<'_>, pattern: &str, path: &str) -> PyResult<bool> {
    helikon_shell::path_rule_matches(pattern, path).map_err(|e| config_error(py, e))
}

/// Lexically clean a path (`..` collapsed, backslashes to `/`).
#[pyfunction]
fn clean_path(path: &str) -> String {
    helikon_shell::clean_path(path)
}

/// A compiled set of deny/allow lists and guard rules.
#[pyclass(frozen, module = "helikon._native", name = "CommandPolicy")]
struct CommandPolicy {
    inner: Policy,
    rules_json: String,
}

#[pymethods]
impl CommandPolicy {
    #[new]
    fn new(py: Python<'_>, rules_json: &str) -> PyResult<Self> {
        let inner = Policy::from_json(rules_json).map_err(|e| config_error(py, e))?;
        Ok(CommandPolicy {
            inner,
            rules_json: rules_json.to_string(),
        })
    }

    /// Check a Bash command; returns the verdict as JSON text.
    fn check(&self, py: Python<'_>, command: &str) -> String {
        py.detach(|| self.inner.check(command).to_json())
    }

    /// Check a path written by a Write/Edit tool against the write guards.
    fn check_write(&self, py: Python<'_>, path: &str) -> String {
        py.detach(|| self.inner.check_write(path).to_json())
    }

    #[getter]
    fn rules_json(&self) -> &str {
        &self.rules_json
    }

    fn __repr__(&self) -> String {
        format!("CommandPolicy({:?})", self.rules_json)
    }
}

/// A compiled gitignore-style path rule.
#[pyclass(frozen, module = "helikon._native", name = "PathRule")]
struct PathRule {
    inner: Rule,
}

#[pymethods]
impl PathRule {
    #[new]
    fn new(py: Python<'_>, pattern: &str) -> PyResult<Self> {
        Ok(PathRule {
            inner: Rule::new(pattern).map_err(|e| config_error(py, e))?,
        })
    }

    fn matches(&self, path: &str) -> bool {
        self.inner.matches(path)
    }

    #[getter]
    fn pattern(&self) -> &str {
        self.inner.pattern()
    }

    fn __repr__(&self) -> String {
        format!("PathRule({:?})", self.inner.pattern())
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(shell_analyze, m)?)?;
    m.add_function(wrap_pyfunction!(shell_split, m)?)?;
    m.add_function(wrap_pyfunction!(path_rule_matches, m)?)?;
    m.add_function(wrap_pyfunction!(clean_path, m)?)?;
    m.add_class::<CommandPolicy>()?;
    m.add_class::<PathRule>()?;
    Ok(())
}
