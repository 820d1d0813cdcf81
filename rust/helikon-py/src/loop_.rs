//! Binding for `helikon-loop`: the compile-once `LoopConfig` and the JSON `transition`.
use helikon_loop::{transition_json, LoopConfig as Config, LoopState};
use pyo3::prelude::*;

use crate::errors::helikon_error;

/// JSON text above this size is handled with the GIL released; below it the release costs
/// more than the work.
const DETACH_ABOVE_BYTES: usize = 64 * 1024;

/// A parsed and checked loop configuration (`max_turns`, tools, handoffs, output type).
#[pyclass(frozen, module = "helikon._native", name = "LoopConfig")]
pub struct LoopConfig {
    inner: Config,
}

#[pymethods]
impl LoopConfig {
    #[new]
    fn new(py: Python<'_>, config_json: &str) -> PyResult<Self> {
        match Config::from_json(config_json) {
            Ok(inner) => Ok(LoopConfig { inner }),
            Err(e) => Err(helikon_error(py, "ConfigError", e.to_string())),
        }
    }

    /// The run's turn limit.
    #[getter]
    fn max_turns(&self) -> u32 {
        self.inner.max_turns
    }

    /// The configuration as JSON, in the shape the constructor reads.
    fn to_json(&self) -> String {
        self.inner.to_value().to_string()
    }

    fn __repr__(&self) -> String {
        format!(
            "LoopConfig(max_turns={}, tools={}, handoffs={}, output_type={})",
            self.inner.max_turns,
            self.inner.tools.len(),
            self.inner.handoffs.len(),
            self.inner
                .output_type
                .as_ref()
                .map_or("None".to_owned(), |o| format!("{:?}", o.name)),
        )
    }
}

/// One transition: `(state, input, config, conversation) -> outcome`, all JSON text.
#[pyfunction]
#[pyo3(signature = (state_json, input_json, config, conversation_json = "[]"))]
fn transition(
    py: Python<'_>,
    state_json: Option<&str>,
    input_json: &str,
    config: &Bound<'_, LoopConfig>,
    conversation_json: &str,
) -> PyResult<String> {
    let config = &config.get().inner;
    let size = state_json.map_or(0, str::len) + input_json.len() + conversation_json.len();
    let run = || transition_json(state_json, input_json, config, conversation_json);
    let result = if size > DETACH_ABOVE_BYTES {
        py.detach(run)
    } else {
        run()
    };
    result.map_err(|e| helikon_error(py, "ConfigError", e.to_string()))
}

/// The state a run starts in: `CallingModel` at turn 0 with zero usage, as JSON.
#[pyfunction]
fn initial_state(py: Python<'_>) -> PyResult<String> {
    serde_json::to_string(&LoopState::initial())
        .map_err(|e| helikon_error(py, "ConfigError", e.to_string()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<LoopConfig>()?;
    m.add_function(wrap_pyfunction!(transition, m)?)?;
    m.add_function(wrap_pyfunction!(initial_state, m)?)?;
    Ok(())
}
