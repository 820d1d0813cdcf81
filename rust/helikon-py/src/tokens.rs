//! Binding of the heuristic token counter's character count: `heuristic_token_chars(items)`.
//!
//! Use case: `helikon.sessions.HeuristicTokenCounter` estimates a conversation's size before
//! every compaction decision, which runs after each append. The rule (which fields count, and
//! compact-JSON lengths) is the pure crate `helikon-tokens`, tested there on the conformance
//! vectors; this file only reads Python objects for it, implementing its `Node` (items and
//! parts) and `JsonNode` (tool arguments) traits. Python divides by four.
//!
//! No JSON crosses the boundary: the walk reads the caller's objects in place. Item models
//! (`helikon.core.items`) are read by attribute (`type`, then `content`, `text`, `name` or
//! `args`), their dict form by key, exactly as the Python rule accepted both. Text lengths are
//! `len(str)` (O(1) in CPython); only tool arguments are measured character by character, as
//! the length `json.dumps(v, separators=(",", ":"), ensure_ascii=False, default=str)` would
//! have, without building that text: exact `dict` (with `str` keys), `list`, `tuple`, `str`,
//! `int`, `float`, `bool` and `None` are handed to the rule (a float measured by its `repr`, as
//! `json` writes it); anything else, a string with lone surrogates, or nesting deeper than
//! `MAX_JSON_DEPTH` is measured by calling that `json.dumps` on the sub-value, which composes
//! exactly and keeps `json`'s own errors (circular references, unsupported keys).
//!
//! Limitations: the walk holds the GIL (it reads Python objects throughout). `tool_result`
//! parts nested deeper than `MAX_PART_DEPTH` raise `ValueError` instead of recursing further.
//! An object outside the item models and mappings is read by its `type` attribute; one with
//! no recognised `type` counts its `content` list (as a nested tool result would) or zero.
//!
//! Tests: tests/sessions/test_token_native.py compares this walk with the Python reference
//! walk (tests/sessions/_token_reference.py) on the conformance vectors and on seeded random
//! conversations (non-ASCII text, emoji, control characters, floats, nested tool results,
//! model and dict items mixed), and checks the errors.
use helikon_tokens::json::{json_len, string_len, JsonNode, JsonView};
use helikon_tokens::walk::{item_chars, Form, Level, Node, Tag, TooDeep};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyMapping, PySequence, PyString,
    PyTuple,
};

/// A Python error, or the rule's own (tool results nested too deep: `ValueError`).
struct Fail(PyErr);

impl From<PyErr> for Fail {
    fn from(err: PyErr) -> Self {
        Fail(err)
    }
}

impl From<TooDeep> for Fail {
    fn from(err: TooDeep) -> Self {
        Fail(PyValueError::new_err(err.to_string()))
    }
}

/// The tag a `type` value names (`Other` for a non-string).
fn tag_of(value: &Bound<'_, PyAny>) -> Tag {
    match value
        .cast::<PyString>()
        .map(|text| text.to_str().map(Tag::of))
    {
        Ok(Ok(tag)) => tag,
        _ => Tag::Other,
    }
}

/// How a node is read: by key (an exact `dict`, or another mapping via `.get`), or by
/// attribute (an item model, with the tag of its `type` attribute if it has one).
enum Kind {
    Dict,
    Mapping,
    Object(Option<Tag>),
}

/// An item or part, as the rule reads it.
struct PyNode<'py> {
    obj: Bound<'py, PyAny>,
    kind: Kind,
}

impl<'py> PyNode<'py> {
    /// Classify `obj`. An object with a string `type` attribute is read by attribute before
    /// the (slower) `collections.abc.Mapping` check, so item models never pay for it.
    fn of(obj: Bound<'py, PyAny>) -> PyResult<Self> {
        if obj.cast_exact::<PyDict>().is_ok() {
            return Ok(PyNode {
                obj,
                kind: Kind::Dict,
            });
        }
        let tag = match obj.getattr_opt(intern!(obj.py(), "type"))? {
            Some(value) if value.is_instance_of::<PyString>() => Some(tag_of(&value)),
            _ => None,
        };
        if tag.is_none() && obj.cast::<PyMapping>().is_ok() {
            return Ok(PyNode {
                obj,
                kind: Kind::Mapping,
            });
        }
        Ok(PyNode {
            obj,
            kind: Kind::Object(tag),
        })
    }

    /// `mapping.get(key)` (the `None` object when missing); attributes for an object.
    fn get(&self, key: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>> {
        let py = key.py();
        match self.kind {
            Kind::Dict => match self.obj.cast_exact::<PyDict>() {
                Ok(dict) => Ok(dict
                    .get_item(key)?
                    .unwrap_or_else(|| py.None().into_bound(py))),
                Err(_) => self.obj.get_item(key),
            },
            Kind::Mapping => self.obj.call_method1(intern!(py, "get"), (key,)),
            Kind::Object(_) => self.obj.getattr(key),
        }
    }

    /// Sum `visit` over the parts of `content`.
    fn sum_parts(
        content: &Bound<'py, PyAny>,
        visit: &mut dyn FnMut(&Self) -> Result<usize, Fail>,
    ) -> Result<usize, Fail> {
        let mut total = 0usize;
        if let Ok(list) = content.cast_exact::<PyList>() {
            for part in list.iter() {
                total = total.saturating_add(visit(&PyNode::of(part)?)?);
            }
        } else {
            for part in content.try_iter()? {
                total = total.saturating_add(visit(&PyNode::of(part?)?)?);
            }
        }
        Ok(total)
    }
}

impl<'py> Node for PyNode<'py> {
    type Error = Fail;

    fn form(&self) -> Form {
        match self.kind {
            Kind::Object(_) => Form::Model,
            Kind::Dict | Kind::Mapping => Form::Mapping,
        }
    }

    fn tag(&self) -> Result<Option<Tag>, Fail> {
        match self.kind {
            Kind::Object(tag) => Ok(tag),
            Kind::Dict | Kind::Mapping => {
                Ok(Some(tag_of(&self.get(intern!(self.obj.py(), "type"))?)))
            }
        }
    }

    fn text_chars(&self) -> Result<usize, Fail> {
        let py = self.obj.py();
        Ok(match self.kind {
            Kind::Object(_) => match self.obj.getattr_opt(intern!(py, "text"))? {
                Some(text) => str_len(&text)?,
                None => 0,
            },
            Kind::Dict | Kind::Mapping => or_empty_len(&self.get(intern!(py, "text"))?)?,
        })
    }

    fn name_chars(&self) -> Result<usize, Fail> {
        let name = self.get(intern!(self.obj.py(), "name"))?;
        Ok(match self.kind {
            Kind::Object(_) => str_len(&name)?,
            Kind::Dict | Kind::Mapping => or_empty_len(&name)?,
        })
    }

    fn args_chars(&self) -> Result<usize, Fail> {
        let args = self.get(intern!(self.obj.py(), "args"))?;
        Ok(json_len(&PyArg(args), 0)?)
    }

    fn content_chars(
        &self,
        level: Level,
        visit: &mut dyn FnMut(&Self) -> Result<usize, Fail>,
    ) -> Result<usize, Fail> {
        let py = self.obj.py();
        match self.kind {
            // a model: its `content` if it has one (a part's only when it is a list)
            Kind::Object(_) => match self.obj.getattr_opt(intern!(py, "content"))? {
                Some(content) if level == Level::Item || content.is_instance_of::<PyList>() => {
                    Self::sum_parts(&content, visit)
                }
                _ => Ok(0),
            },
            // a mapping: `content or ()`
            Kind::Dict | Kind::Mapping => {
                let content = self.get(intern!(py, "content"))?;
                if content.is_none() || !content.is_truthy()? {
                    return Ok(0);
                }
                Self::sum_parts(&content, visit)
            }
        }
    }
}

/// A tool call's arguments (or a value inside them), as the JSON length rule reads it.
struct PyArg<'py>(Bound<'py, PyAny>);

impl<'py> JsonNode for PyArg<'py> {
    type Error = PyErr;

    fn view(&self) -> PyResult<JsonView<Self>> {
        let value = &self.0;
        if value.is_none() {
            return Ok(JsonView::Null);
        }
        if let Ok(text) = value.cast_exact::<PyString>() {
            return Ok(match text.encode_utf8() {
                Ok(utf8) => JsonView::Str(string_len(text.code_point_len()?, utf8.as_bytes())),
                // lone surrogates: json writes them as they are
                Err(_) => JsonView::Measured(dumps_len(value)?),
            });
        }
        if let Ok(flag) = value.cast_exact::<PyBool>() {
            return Ok(JsonView::Bool(flag.is_true()));
        }
        if value.is_exact_instance_of::<PyInt>() {
            return Ok(match value.extract::<i64>() {
                Ok(n) => JsonView::Int(n),
                Err(_) => JsonView::Measured(value.repr()?.code_point_len()?),
            });
        }
        if let Ok(float) = value.cast_exact::<PyFloat>() {
            return Ok(JsonView::Float(float.value()));
        }
        if let Ok(list) = value.cast_exact::<PyList>() {
            return Ok(JsonView::Array(list.iter().map(PyArg).collect()));
        }
        if let Ok(tuple) = value.cast_exact::<PyTuple>() {
            return Ok(JsonView::Array(tuple.iter().map(PyArg).collect()));
        }
        if let Ok(dict) = value.cast_exact::<PyDict>() {
            // Snapshot first: measuring a value can run Python code (`default=str`), which
            // must not see a live dict iterator.
            let pairs: Vec<_> = dict.iter().collect();
            if pairs
                .iter()
                .any(|(k, _)| !k.is_exact_instance_of::<PyString>())
            {
                // json converts or rejects non-str keys itself
                return Ok(JsonView::Measured(dumps_len(value)?));
            }
            return Ok(JsonView::Object(
                pairs
                    .into_iter()
                    .map(|(k, v)| (PyArg(k), PyArg(v)))
                    .collect(),
            ));
        }
        Ok(JsonView::Measured(dumps_len(value)?))
    }

    fn fallback_len(&self) -> PyResult<usize> {
        dumps_len(&self.0)
    }
}

/// Characters of a whole conversation: items are models or their dict form.
#[pyfunction]
fn heuristic_token_chars(items: &Bound<'_, PyAny>) -> PyResult<usize> {
    let count = |item: Bound<'_, PyAny>| -> PyResult<usize> {
        item_chars(&PyNode::of(item)?).map_err(|Fail(err)| err)
    };
    let mut total = 0usize;
    if let Ok(list) = items.cast_exact::<PyList>() {
        for item in list.iter() {
            total = total.saturating_add(count(item)?);
        }
        return Ok(total);
    }
    if let Ok(tuple) = items.cast_exact::<PyTuple>() {
        for item in tuple.iter() {
            total = total.saturating_add(count(item)?);
        }
        return Ok(total);
    }
    let textual = items.is_instance_of::<PyString>()
        || items.is_instance_of::<PyBytes>()
        || items.is_instance_of::<PyByteArray>();
    if textual || items.cast::<PySequence>().is_err() {
        let kind = items.get_type().qualname()?;
        return Err(PyTypeError::new_err(format!(
            "heuristic_token_chars() takes a sequence of items (a list or tuple of item models \
             or their dicts), not {kind}"
        )));
    }
    for item in items.try_iter()? {
        total = total.saturating_add(count(item?)?);
    }
    Ok(total)
}

/// `len(value)`: code points of a `str`.
fn str_len(value: &Bound<'_, PyAny>) -> PyResult<usize> {
    match value.cast_exact::<PyString>() {
        Ok(text) => text.code_point_len(),
        Err(_) => value.len(),
    }
}

/// `len(str(value or ""))`.
fn or_empty_len(value: &Bound<'_, PyAny>) -> PyResult<usize> {
    if let Ok(text) = value.cast_exact::<PyString>() {
        return text.code_point_len();
    }
    if value.is_none() || !value.is_truthy()? {
        return Ok(0);
    }
    value.str()?.code_point_len()
}

/// Length of the compact `json.dumps` text of `value`, computed by `json` itself.
fn dumps_len(value: &Bound<'_, PyAny>) -> PyResult<usize> {
    static DUMPS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let py = value.py();
    let dumps = DUMPS.get_or_try_init(py, || -> PyResult<Py<PyAny>> {
        let kwargs = PyDict::new(py);
        kwargs.set_item("separators", (",", ":"))?;
        kwargs.set_item("ensure_ascii", false)?;
        kwargs.set_item("default", py.get_type::<PyString>())?;
        let dumps = py.import("json")?.getattr("dumps")?;
        let partial = py.import("functools")?.getattr("partial")?;
        Ok(partial.call((dumps,), Some(&kwargs))?.unbind())
    })?;
    dumps.bind(py).call1((value,))?.len()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(heuristic_token_chars, m)?)?;
    Ok(())
}
