//! Binding for `helikon-schema`; errors become `helikon.errors.SchemaError`.
//!
//! Two boundaries:
//! - `schema_strict_dict` / `schema_strict_report_dict` take the caller's dict and return a new
//!   one, walking the Python objects directly (no JSON text): input strings are kept as handles
//!   and reused in the output, so neither keys nor values are copied. An input that is not a
//!   plain JSON tree (tuples, subclasses, non-finite floats, huge ints, nesting past the JSON
//!   parser's limit, cycles) returns `None`, and the caller takes the JSON-text path, whose
//!   errors and conversions it keeps.
//! - `schema_strict`, `schema_strict_report`, `schema_bedrock`, `schema_gemini`: JSON text in,
//!   JSON text out.
use helikon_schema::tree::{known_word, Node, Num, Obj, Text};
use helikon_schema::{Report, SchemaError, StrictOptions};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::errors::from_schema;

/// Schema text above this size is normalized with the GIL released.
const DETACH_ABOVE_BYTES: usize = 64 * 1024;

/// Container nesting past which a dict goes to the JSON-text path, whose parser stops at 128
/// levels (and which reports cycles as such).
const MAX_PLAIN_DEPTH: usize = 100;

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
    result.map_err(|e| from_schema(py, &e))
}

/// A string of a schema tree: one of the caller's `str` objects, or a keyword the normalizer
/// adds.
#[derive(Clone)]
enum PyText<'py> {
    Static(&'static str),
    /// A caller's string that is a schema keyword (or type name, ...): read as the static
    /// word, without a C call.
    Word(Bound<'py, PyString>, &'static str),
    /// Any other caller's string; only built once its UTF-8 form was checked ([`to_node`]).
    Py(Bound<'py, PyString>),
}

impl<'py> PyText<'py> {
    fn new(s: Bound<'py, PyString>) -> Option<Self> {
        Some(match known_word(s.to_str().ok()?) {
            Some(word) => PyText::Word(s, word),
            None => PyText::Py(s),
        })
    }
}

impl Text for PyText<'_> {
    fn as_str(&self) -> &str {
        match self {
            PyText::Static(s) | PyText::Word(_, s) => s,
            // cannot fail: checked when the handle was made, and the UTF-8 form is cached
            PyText::Py(s) => s.to_str().unwrap_or_default(),
        }
    }

    fn from_static(s: &'static str) -> Self {
        PyText::Static(s)
    }

    fn same_text(&self, other: &Self) -> bool {
        match (self, other) {
            (PyText::Py(a), PyText::Py(b)) if a.is(b) => true,
            _ => self.as_str() == other.as_str(),
        }
    }
}

type PyNode<'py> = Node<PyText<'py>>;

/// The schema tree of `v`, or `None` when `v` is not a plain JSON tree.
fn to_node<'py>(v: &Bound<'py, PyAny>, depth: usize) -> Option<PyNode<'py>> {
    if let Ok(s) = v.cast_exact::<PyString>() {
        return PyText::new(s.clone()).map(Node::Str);
    }
    if let Ok(d) = v.cast_exact::<PyDict>() {
        if depth >= MAX_PLAIN_DEPTH {
            return None;
        }
        let mut out = Obj::with_capacity(d.len());
        for (k, val) in d.iter() {
            let k = PyText::new(k.cast_into_exact::<PyString>().ok()?)?;
            let child = to_node(&val, depth + 1)?;
            out.push_new(k, child);
        }
        return Some(Node::Object(out));
    }
    if let Ok(l) = v.cast_exact::<PyList>() {
        if depth >= MAX_PLAIN_DEPTH {
            return None;
        }
        let mut out = Vec::with_capacity(l.len());
        for item in l.iter() {
            out.push(to_node(&item, depth + 1)?);
        }
        return Some(Node::Array(out));
    }
    if v.is_none() {
        return Some(Node::Null);
    }
    if let Ok(b) = v.cast_exact::<PyBool>() {
        return Some(Node::Bool(b.is_true()));
    }
    if let Ok(i) = v.cast_exact::<PyInt>() {
        // as serde_json reads JSON: non-negative integers as u64, negative ones as i64
        if let Ok(n) = i.extract::<i64>() {
            return Some(Node::Num(u64::try_from(n).map_or(Num::Neg(n), Num::Pos)));
        }
        return i.extract::<u64>().ok().map(|u| Node::Num(Num::Pos(u)));
    }
    if let Ok(f) = v.cast_exact::<PyFloat>() {
        let f = f.value();
        return f.is_finite().then_some(Node::Num(Num::Float(f)));
    }
    None
}

/// The `str` object for a tree string: the caller's own, or an interned keyword.
fn text<'py>(py: Python<'py>, t: PyText<'py>) -> Bound<'py, PyString> {
    macro_rules! interned {
        ($s:expr; $($lit:literal)*) => {
            match $s {
                $($lit => intern!(py, $lit).clone(),)*
                other => PyString::new(py, other),
            }
        };
    }
    match t {
        PyText::Py(s) | PyText::Word(s, _) => s,
        PyText::Static(s) => interned!(s;
            "type" "items" "anyOf" "required" "additionalProperties" "properties" "$ref"
            "title" "description" "null" "object" "array" "string" "number" "integer" "boolean"),
    }
}

/// A new Python value for a tree (fresh dicts and lists; strings and numbers are immutable).
fn to_py<'py>(py: Python<'py>, n: PyNode<'py>) -> PyResult<Bound<'py, PyAny>> {
    Ok(match n {
        Node::Null => py.None().into_bound(py),
        Node::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
        Node::Num(Num::Pos(u)) => u.into_pyobject(py)?.into_any(),
        Node::Num(Num::Neg(i)) => i.into_pyobject(py)?.into_any(),
        Node::Num(Num::Float(f)) => PyFloat::new(py, f).into_any(),
        Node::Str(t) => text(py, t).into_any(),
        Node::Array(items) => PyList::new(py, items.into_iter().map(Out))?.into_any(),
        Node::Object(m) => {
            let d = PyDict::new(py);
            for (k, v) in m {
                d.set_item(text(py, k), to_py(py, v)?)?;
            }
            d.into_any()
        }
    })
}

/// A tree on its way into a Python list.
struct Out<'py>(PyNode<'py>);

impl<'py> IntoPyObject<'py> for Out<'py> {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, self.0)
    }
}

/// OpenAI strict-mode normalization of a dict into a new dict; `None` when `schema` is not a
/// plain JSON tree (use `schema_strict` on its JSON text then).
#[pyfunction]
fn schema_strict_dict<'py>(
    py: Python<'py>,
    schema: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(tree) = to_node(schema, 0) else {
        return Ok(None);
    };
    match helikon_schema::strict_tree(&tree, &StrictOptions::default()) {
        Ok(out) => to_py(py, out).map(Some),
        Err(e) => Err(from_schema(py, &e)),
    }
}

/// [`schema_strict_dict`] plus the report: `(schema, lossy, non_strict)`, each entry a tuple
/// `(path, field, kind, what | reason)`; `None` when `schema` is not a plain JSON tree.
#[pyfunction]
fn schema_strict_report_dict<'py>(
    py: Python<'py>,
    schema: &Bound<'py, PyAny>,
) -> PyResult<Option<Bound<'py, PyTuple>>> {
    let Some(tree) = to_node(schema, 0) else {
        return Ok(None);
    };
    let (out, report) = helikon_schema::strict_report_tree(&tree, &StrictOptions::default())
        .map_err(|e| from_schema(py, &e))?;
    let Report { lossy, non_strict } = report;
    let lossy = lossy
        .into_iter()
        .map(|r| (r.path, r.field, r.kind.as_str(), r.what))
        .collect::<Vec<_>>();
    let non_strict = non_strict
        .into_iter()
        .map(|i| (i.path, i.field, i.kind.as_str(), i.reason))
        .collect::<Vec<_>>();
    let entries = (
        to_py(py, out)?,
        PyList::new(py, lossy)?,
        PyList::new(py, non_strict)?,
    );
    Ok(Some(entries.into_pyobject(py)?))
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
    m.add_function(wrap_pyfunction!(schema_strict_dict, m)?)?;
    m.add_function(wrap_pyfunction!(schema_strict_report_dict, m)?)?;
    m.add_function(wrap_pyfunction!(schema_strict, m)?)?;
    m.add_function(wrap_pyfunction!(schema_strict_report, m)?)?;
    m.add_function(wrap_pyfunction!(schema_bedrock, m)?)?;
    m.add_function(wrap_pyfunction!(schema_gemini, m)?)?;
    Ok(())
}
