//! Binding for `helikon-loop`: the compile-once `LoopConfig`, the JSON `transition`, and
//! `LoopRun`, one run's machine holding its state natively between transitions.
//!
//! `LoopRun` is the driver's per-turn path. Inputs arrive as Python values (item dicts in
//! their JSON shape, tuples), never as a serialized state; the outcome comes back as small
//! tuples that point into the driver's own inputs (see `helikon_loop::event_refs`), so the
//! driver reuses the items it already holds instead of decoding them again. A value with no
//! exact JSON form here raises `TypeError`, and the driver repeats the step through
//! `LoopRun.step_json` with JSON text, which behaves exactly as `transition` does.
use helikon_loop::{
    call_refs, event_refs, needs_conversation, transition as run_transition, transition_json,
    ContentPart, EventRef, Item, LoopConfig as Config, LoopState, ModelResponse, NextAction,
    ToolOutcome, ToolOutcomeResult, TransitionCtx, TransitionInput, Usage, Validation,
};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde_json::{Map, Number, Value};

use crate::errors::{from_loop, raise, Class};

/// JSON text above this size is handled with the GIL released; below it the release costs
/// more than the work.
const DETACH_ABOVE_BYTES: usize = 64 * 1024;

/// Nesting deeper than this is left to the JSON-text path (whose parser has its own limit).
const MAX_DEPTH: usize = 100;

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
            Err(e) => Err(from_loop(py, e)),
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
    result.map_err(|e| raise(py, Class::Config, e.to_string()))
}

/// The state a run starts in: `CallingModel` at turn 0 with zero usage, as JSON.
#[pyfunction]
fn initial_state(py: Python<'_>) -> PyResult<String> {
    serde_json::to_string(&LoopState::initial())
        .map_err(|e| raise(py, Class::Config, e.to_string()))
}

/// One run's state machine: the state stays here between transitions.
#[pyclass(module = "helikon._native", name = "LoopRun")]
pub struct LoopRun {
    config: Py<LoopConfig>,
    state: LoopState,
}

#[pymethods]
impl LoopRun {
    #[new]
    #[pyo3(signature = (config, state_json = None))]
    fn new(
        py: Python<'_>,
        config: Bound<'_, LoopConfig>,
        state_json: Option<&str>,
    ) -> PyResult<Self> {
        let state = match state_json {
            Some(text) => serde_json::from_str(text)
                .map_err(|e| raise(py, Class::Config, format!("state: {e}")))?,
            None => LoopState::initial(),
        };
        Ok(LoopRun {
            config: config.unbind(),
            state,
        })
    }

    /// Begin (or resume) a turn: the `start` input.
    fn start<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        self.step(py, TransitionInput::Start, "[]", true)
    }

    /// Feed one model response: `items` are item dicts in their JSON shape, `usage` a
    /// 6-tuple (see `usage`) or `None`, `validation` the driver's verdict (a list of
    /// problems) or `None`. `conversation_json` is read only when a handoff is taken.
    #[pyo3(signature = (items, usage, finish_reason, validation = None, conversation_json = "[]"))]
    fn model_response<'py>(
        &mut self,
        py: Python<'py>,
        items: &Bound<'py, PyAny>,
        usage: &Bound<'py, PyAny>,
        finish_reason: String,
        validation: Option<Vec<String>>,
        conversation_json: &str,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let items: Vec<Item> = serde_json::from_value(to_value(items, 0)?)
            .map_err(|e| raise(py, Class::Config, format!("input: {e}")))?;
        let usage = usage_from_py(usage)?;
        let response = ModelResponse {
            items,
            usage,
            finish_reason,
            validation: validation.map(|errors| Validation { errors }),
        };
        self.step(
            py,
            TransitionInput::ModelResponse(response),
            conversation_json,
            true,
        )
    }

    /// Feed the tool results: one `(call_id, is_error, payload)` per call, where `payload` is
    /// the error text, or the content: one text part's text, or a list of part dicts.
    fn tool_results<'py>(
        &mut self,
        py: Python<'py>,
        results: &Bound<'py, PyList>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let mut outcomes = Vec::with_capacity(results.len());
        for r in results.iter() {
            let (call_id, is_error, payload): (String, bool, Bound<'py, PyAny>) = r.extract()?;
            let result = if is_error {
                ToolOutcomeResult::Error(payload.extract()?)
            } else if let Ok(text) = payload.cast::<PyString>() {
                ToolOutcomeResult::Ok(vec![ContentPart::text(text.to_str()?)])
            } else {
                let parts: Vec<ContentPart> = serde_json::from_value(to_value(&payload, 0)?)
                    .map_err(|e| raise(py, Class::Config, format!("input: {e}")))?;
                ToolOutcomeResult::Ok(parts)
            };
            outcomes.push(ToolOutcome { call_id, result });
        }
        self.step(py, TransitionInput::ToolResults(outcomes), "[]", true)
    }

    /// Any input as JSON text (`"start"`, `{"model_response": ...}`, `{"tool_results":
    /// [...]}`, `{"defer": ...}`, `{"decisions": [...]}`, `{"compaction_started": ...}`,
    /// `{"compaction_completed": ...}`), for values and inputs the typed methods do not take.
    #[pyo3(signature = (input_json, conversation_json = "[]"))]
    fn step_json<'py>(
        &mut self,
        py: Python<'py>,
        input_json: &str,
        conversation_json: &str,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let input: TransitionInput = serde_json::from_str(input_json)
            .map_err(|e| raise(py, Class::Config, format!("input: {e}")))?;
        self.step(py, input, conversation_json, false)
    }

    /// The state's variant name (`CallingModel`, `ExecutingTools`, ..., `Done`, `Failed`).
    #[getter]
    fn state(&self) -> &'static str {
        self.state.name()
    }

    /// The running usage as `(input, output, cached_input, reasoning, total, cache_write)`
    /// tokens, or `None` in `Failed`.
    #[getter]
    fn usage(&self) -> Option<(u64, u64, u64, u64, u64, u64)> {
        self.state.usage().map(usage_tuple)
    }

    /// The final answer's text in the `Done` state, else `None`.
    #[getter]
    fn output_text(&self) -> Option<String> {
        match &self.state {
            LoopState::Done { output, .. } => Some(output.text.clone()),
            _ => None,
        }
    }

    /// The handoff transcript (a JSON array of items) in the `ApplyingHandoff` state.
    fn transcript_json(&self, py: Python<'_>) -> PyResult<Option<String>> {
        match &self.state {
            LoopState::ApplyingHandoff { transcript, .. } => serde_json::to_string(transcript)
                .map(Some)
                .map_err(|e| raise(py, Class::Config, format!("state: {e}"))),
            _ => Ok(None),
        }
    }

    /// The state as JSON (what `LoopRun(config, state_json)` resumes from).
    fn state_json(&self, py: Python<'_>) -> PyResult<String> {
        serde_json::to_string(&self.state)
            .map_err(|e| raise(py, Class::Config, format!("state: {e}")))
    }

    fn __repr__(&self) -> String {
        format!("LoopRun(state={:?})", self.state.name())
    }
}

impl LoopRun {
    /// Run one transition and describe its outcome as
    /// `(action, events, payload, appends_json)`; see the stub for the shapes. With `refs`,
    /// item events and calls point into the input; without, they are all JSON.
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        input: TransitionInput,
        conversation_json: &str,
        refs: bool,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let cfg = self.config.get();
        let config = &cfg.inner;
        let (items, results) = match &input {
            TransitionInput::ModelResponse(r) if refs => (r.items.clone(), Vec::new()),
            TransitionInput::ToolResults(r) if refs => (Vec::new(), r.clone()),
            _ => (Vec::new(), Vec::new()),
        };
        let conversation: Vec<Item> = if needs_conversation(&self.state, &input, config) {
            let parse = || serde_json::from_str(conversation_json);
            let parsed = if conversation_json.len() > DETACH_ABOVE_BYTES {
                py.detach(parse)
            } else {
                parse()
            };
            parsed.map_err(|e| raise(py, Class::Config, format!("conversation: {e}")))?
        } else {
            Vec::new()
        };
        let ctx = TransitionCtx {
            config,
            conversation: &conversation,
        };
        let outcome = run_transition(&self.state, input, &ctx);
        let outcome_err = |e: serde_json::Error| raise(py, Class::Config, format!("outcome: {e}"));
        let events = PyList::empty(py);
        for r in event_refs(&outcome.events, &items, &results) {
            let ev = match r {
                EventRef::TurnStarted(turn) => ("turn_started", turn).into_pyobject(py)?,
                EventRef::MessageOutput(i) => ("message_output", i).into_pyobject(py)?,
                EventRef::ToolCallItem(i) => ("tool_call_item", i).into_pyobject(py)?,
                EventRef::ToolOutputItem(i) => ("tool_output_item", i).into_pyobject(py)?,
                EventRef::RunCompleted(u) => ("run_completed", usage_tuple(u)).into_pyobject(py)?,
                EventRef::Other(ev) => {
                    let text = serde_json::to_string(ev).map_err(outcome_err)?;
                    ("event", text).into_pyobject(py)?
                }
            };
            events.append(ev)?;
        }
        let (action, payload): (&str, Bound<'py, PyAny>) = match &outcome.next_action {
            NextAction::CallModel { request } => {
                let text = serde_json::to_string(request).map_err(outcome_err)?;
                ("CallModel", PyString::new(py, &text).into_any())
            }
            NextAction::ExecuteTools { calls } => {
                let list = PyList::empty(py);
                for (call, found) in calls.iter().zip(call_refs(calls, &items)) {
                    match found {
                        Some(i) => list.append(i)?,
                        None => list.append(serde_json::to_string(call).map_err(outcome_err)?)?,
                    }
                }
                ("ExecuteTools", list.into_any())
            }
            NextAction::Handoff { target } => ("Handoff", PyString::new(py, target).into_any()),
            NextAction::AwaitApproval { pending } => {
                let list = PyList::empty(py);
                for call in pending {
                    list.append(serde_json::to_string(call).map_err(outcome_err)?)?;
                }
                ("AwaitApproval", list.into_any())
            }
            NextAction::Compact => ("Compact", py.None().into_bound(py)),
            NextAction::Terminate => ("Terminate", py.None().into_bound(py)),
        };
        let appends = if outcome.conversation_appends.is_empty() {
            None
        } else {
            Some(serde_json::to_string(&outcome.conversation_appends).map_err(outcome_err)?)
        };
        self.state = outcome.next_state;
        (action, events, payload, appends).into_pyobject(py)
    }
}

fn usage_tuple(u: Usage) -> (u64, u64, u64, u64, u64, u64) {
    (
        u.input_tokens,
        u.output_tokens,
        u.cached_input_tokens,
        u.reasoning_tokens,
        u.total_tokens,
        u.cache_write_input_tokens,
    )
}

fn usage_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Usage> {
    if obj.is_none() {
        return Ok(Usage::default());
    }
    let (input, output, cached, reasoning, total, cache_write): (u64, u64, u64, u64, u64, u64) =
        obj.extract().map_err(|_| not_json("usage"))?;
    Ok(Usage {
        input_tokens: input,
        output_tokens: output,
        cached_input_tokens: cached,
        reasoning_tokens: reasoning,
        total_tokens: total,
        cache_write_input_tokens: cache_write,
    })
}

fn not_json(what: &str) -> PyErr {
    PyTypeError::new_err(format!(
        "LoopRun: {what} has no exact JSON form here; use step_json"
    ))
}

/// A Python value of exactly JSON's data model (what `json.dumps` writes and reads back as
/// the same value): `None`, `bool`, `int` within 64 bits, finite `float`, `str`, `list`, and
/// `dict` with `str` keys, exact types only. Anything else (a tuple, a subclass, NaN, ...)
/// is a `TypeError`, so the driver takes the JSON-text path, which converts it as before.
fn to_value(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(not_json("a value nested this deep"));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if obj.is_exact_instance_of::<PyString>() {
        let s = obj.cast::<PyString>().map_err(|_| not_json("a str"))?;
        return Ok(Value::String(
            s.to_str().map_err(|_| not_json("a str"))?.to_owned(),
        ));
    }
    if let Ok(b) = obj.cast_exact::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_exact_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::Number(i.into()));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::Number(u.into()));
        }
        return Err(not_json("an int beyond 64 bits"));
    }
    if let Ok(f) = obj.cast_exact::<PyFloat>() {
        return Number::from_f64(f.value())
            .map(Value::Number)
            .ok_or_else(|| not_json("a non-finite float"));
    }
    if let Ok(d) = obj.cast_exact::<PyDict>() {
        let mut map = Map::with_capacity(d.len());
        for (k, v) in d.iter() {
            if !k.is_exact_instance_of::<PyString>() {
                return Err(not_json("a key that is not a str"));
            }
            let key = k.cast::<PyString>().map_err(|_| not_json("a str"))?;
            let key = key.to_str().map_err(|_| not_json("a str"))?.to_owned();
            map.insert(key, to_value(&v, depth + 1)?);
        }
        return Ok(Value::Object(map));
    }
    if let Ok(l) = obj.cast_exact::<PyList>() {
        let mut out = Vec::with_capacity(l.len());
        for v in l.iter() {
            out.push(to_value(&v, depth + 1)?);
        }
        return Ok(Value::Array(out));
    }
    Err(not_json(&format!(
        "a {}",
        obj.get_type()
            .name()
            .map_or_else(|_| "value".to_owned(), |n| n.to_string())
    )))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<LoopConfig>()?;
    m.add_class::<LoopRun>()?;
    m.add_function(wrap_pyfunction!(transition, m)?)?;
    m.add_function(wrap_pyfunction!(initial_state, m)?)?;
    Ok(())
}
