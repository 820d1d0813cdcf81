//! Binding of the heuristic token counter's character count: `heuristic_token_chars(items)`.
//!
//! Use case: `helikon.sessions.HeuristicTokenCounter` estimates a conversation's size before
//! every compaction decision, which runs after each append. The count is the spec's rule
//! (shared/conformance/token_counter.json): Unicode scalar values across text and reasoning
//! parts (recursing into nested `tool_result` parts), plus name and compact-JSON arguments of
//! every tool call, item or inline `tool_use` part; media parts, call ids and agent names
//! count zero. Python divides by four.
//!
//! No JSON crosses the boundary: the walk reads the caller's objects in place. Item models
//! (`helikon.core.items`) are read by attribute (`type`, then `content`, `text`, `name` or
//! `args`), their dict form by key, exactly as the Python rule accepted both. Text lengths are
//! `len(str)` (O(1) in CPython); only tool arguments are measured character by character, as
//! the length `json.dumps(v, separators=(",", ":"), ensure_ascii=False, default=str)` would
//! have, without building that text: exact `dict` (with `str` keys), `list`, `tuple`, `str`,
//! `int`, `float`, `bool` and `None` are measured natively (a float by its `repr`, as `json`
//! writes it); anything else, a string with lone surrogates, or nesting deeper than
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
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyMapping, PySequence, PyString,
    PyTuple,
};

/// Deepest nested `tool_result` part the walk follows before raising `ValueError`.
const MAX_PART_DEPTH: usize = 256;

/// Deepest argument nesting measured natively; deeper values go to `json.dumps`.
const MAX_JSON_DEPTH: usize = 128;

/// The `type` tags the walk tells apart.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Tag {
    /// `text` or `reasoning` part: counts `text`.
    Text,
    /// `image` or `audio` part: counts zero.
    Media,
    /// `tool_use` part: counts `name` + compact JSON of `args`.
    ToolUse,
    /// `tool_call` item: counts `name` + compact JSON of `args`.
    ToolCall,
    /// `tool_result` part: counts its `content` parts.
    ToolResult,
    /// Any other tag (messages), or a `type` that is not a string.
    Other,
}

/// The tag a `type` value names.
fn tag_of(value: &Bound<'_, PyAny>) -> Tag {
    let Ok(text) = value.cast::<PyString>() else {
        return Tag::Other;
    };
    match text.to_str() {
        Ok("text" | "reasoning") => Tag::Text,
        Ok("image" | "audio") => Tag::Media,
        Ok("tool_use") => Tag::ToolUse,
        Ok("tool_call") => Tag::ToolCall,
        Ok("tool_result") => Tag::ToolResult,
        _ => Tag::Other,
    }
}

/// How a node is read: by key (an exact `dict`, or another mapping via `.get`), or by
/// attribute (an item model, with the tag of its `type` attribute if it has one).
enum Node<'a, 'py> {
    Dict(&'a Bound<'py, PyDict>),
    Mapping(&'a Bound<'py, PyAny>),
    Object(&'a Bound<'py, PyAny>, Option<Tag>),
}

impl<'a, 'py> Node<'a, 'py> {
    /// Classify `obj`. An object with a string `type` attribute is read by attribute before
    /// the (slower) `collections.abc.Mapping` check, so item models never pay for it.
    fn of(obj: &'a Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(dict) = obj.cast_exact::<PyDict>() {
            return Ok(Node::Dict(dict));
        }
        let tag = match obj.getattr_opt(intern!(obj.py(), "type"))? {
            Some(value) if value.is_instance_of::<PyString>() => Some(tag_of(&value)),
            _ => None,
        };
        if tag.is_none() && obj.cast::<PyMapping>().is_ok() {
            return Ok(Node::Mapping(obj));
        }
        Ok(Node::Object(obj, tag))
    }

    /// `mapping.get(key)` (the `None` object when missing); attributes for an object.
    fn get(&self, key: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyAny>> {
        let py = key.py();
        match self {
            Node::Dict(dict) => Ok(dict
                .get_item(key)?
                .unwrap_or_else(|| py.None().into_bound(py))),
            Node::Mapping(map) => map.call_method1(intern!(py, "get"), (key,)),
            Node::Object(obj, _) => obj.getattr(key),
        }
    }

    /// The node's tag: its `type` key or attribute.
    fn tag(&self) -> PyResult<Option<Tag>> {
        match self {
            Node::Object(_, tag) => Ok(*tag),
            Node::Dict(dict) => Ok(Some(tag_of(&self.get(intern!(dict.py(), "type"))?))),
            Node::Mapping(map) => Ok(Some(tag_of(&self.get(intern!(map.py(), "type"))?))),
        }
    }
}

/// Characters of a whole conversation: items are models or their dict form.
#[pyfunction]
fn heuristic_token_chars(items: &Bound<'_, PyAny>) -> PyResult<usize> {
    let mut total = 0usize;
    if let Ok(list) = items.cast_exact::<PyList>() {
        for item in list.iter() {
            total = total.saturating_add(item_chars(&item)?);
        }
        return Ok(total);
    }
    if let Ok(tuple) = items.cast_exact::<PyTuple>() {
        for item in tuple.iter() {
            total = total.saturating_add(item_chars(&item)?);
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
        total = total.saturating_add(item_chars(&item?)?);
    }
    Ok(total)
}

/// One item: a tool call counts name + args; any other item sums its content parts.
fn item_chars(item: &Bound<'_, PyAny>) -> PyResult<usize> {
    let py = item.py();
    let node = Node::of(item)?;
    match (&node, node.tag()?) {
        (Node::Object(..), Some(Tag::ToolCall)) => call_chars(&node, false),
        (Node::Object(obj, _), _) => match obj.getattr_opt(intern!(py, "content"))? {
            Some(content) => parts_chars(&content, 0),
            None => Ok(0),
        },
        (_, Some(Tag::ToolCall)) => call_chars(&node, true),
        (_, _) => truthy_parts_chars(&node.get(intern!(py, "content"))?, 0),
    }
}

/// One content part, `depth` levels of `tool_result` deep.
fn part_chars(part: &Bound<'_, PyAny>, depth: usize) -> PyResult<usize> {
    if depth > MAX_PART_DEPTH {
        return Err(PyValueError::new_err(format!(
            "tool_result parts nested deeper than {MAX_PART_DEPTH} levels"
        )));
    }
    let py = part.py();
    let node = Node::of(part)?;
    match (&node, node.tag()?) {
        (Node::Object(obj, _), Some(Tag::Text)) => match obj.getattr_opt(intern!(py, "text"))? {
            Some(text) => str_len(&text),
            None => Ok(0),
        },
        (Node::Object(..), Some(Tag::Media)) => Ok(0),
        (Node::Object(..), Some(Tag::ToolUse)) => call_chars(&node, false),
        (Node::Object(obj, _), _) => match obj.getattr_opt(intern!(py, "content"))? {
            Some(content) if content.is_instance_of::<PyList>() => parts_chars(&content, depth + 1),
            _ => Ok(0),
        },
        (_, Some(Tag::Text)) => or_empty_len(&node.get(intern!(py, "text"))?),
        (_, Some(Tag::ToolUse)) => call_chars(&node, true),
        (_, Some(Tag::ToolResult)) => {
            truthy_parts_chars(&node.get(intern!(py, "content"))?, depth + 1)
        }
        (_, _) => Ok(0),
    }
}

/// `len(name)` + compact-JSON length of `args`; `lenient` (the dict form) reads the name as
/// `str(name or "")` and missing args as `None`.
fn call_chars(node: &Node<'_, '_>, lenient: bool) -> PyResult<usize> {
    let py = match node {
        Node::Dict(dict) => dict.py(),
        Node::Mapping(obj) | Node::Object(obj, _) => obj.py(),
    };
    let name = node.get(intern!(py, "name"))?;
    let name_len = if lenient {
        or_empty_len(&name)?
    } else {
        str_len(&name)?
    };
    Ok(name_len.saturating_add(json_len(&node.get(intern!(py, "args"))?, 0)?))
}

/// `sum(part_chars(p) for p in content)`.
fn parts_chars(content: &Bound<'_, PyAny>, depth: usize) -> PyResult<usize> {
    let mut total = 0usize;
    if let Ok(list) = content.cast_exact::<PyList>() {
        for part in list.iter() {
            total = total.saturating_add(part_chars(&part, depth)?);
        }
    } else {
        for part in content.try_iter()? {
            total = total.saturating_add(part_chars(&part?, depth)?);
        }
    }
    Ok(total)
}

/// `sum(part_chars(p) for p in (content or ()))`.
fn truthy_parts_chars(content: &Bound<'_, PyAny>, depth: usize) -> PyResult<usize> {
    if content.is_none() || !content.is_truthy()? {
        return Ok(0);
    }
    parts_chars(content, depth)
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

/// Extra characters `json` writes for each byte of a UTF-8 string: 1 for `"`, `\` and the
/// controls with a short escape (`\b \t \n \f \r`), 5 for the other controls (`\u00XX`).
/// Bytes of multi-byte sequences are all >= 0x80, so they never match.
const ESCAPE_EXTRA: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = 5;
        b += 1;
    }
    table[0x08] = 1;
    table[0x09] = 1;
    table[0x0a] = 1;
    table[0x0c] = 1;
    table[0x0d] = 1;
    table[b'"' as usize] = 1;
    table[b'\\' as usize] = 1;
    table
};

/// Length of `json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)`.
fn json_len(value: &Bound<'_, PyAny>, depth: usize) -> PyResult<usize> {
    if value.is_none() {
        return Ok(4);
    }
    if depth > MAX_JSON_DEPTH {
        return dumps_len(value);
    }
    if let Ok(text) = value.cast_exact::<PyString>() {
        return json_str_len(text);
    }
    if let Ok(flag) = value.cast_exact::<PyBool>() {
        return Ok(if flag.is_true() { 4 } else { 5 });
    }
    if value.is_exact_instance_of::<PyInt>() {
        return match value.extract::<i64>() {
            Ok(n) => Ok(int_len(n)),
            Err(_) => value.repr()?.code_point_len(),
        };
    }
    if let Ok(float) = value.cast_exact::<PyFloat>() {
        let x = float.value();
        return if x.is_nan() {
            Ok(3) // NaN
        } else if x.is_infinite() {
            Ok(if x > 0.0 { 8 } else { 9 }) // Infinity, -Infinity
        } else {
            match float_repr_len(x) {
                Some(len) => Ok(len),
                None => float.repr()?.code_point_len(),
            }
        };
    }
    if let Ok(list) = value.cast_exact::<PyList>() {
        let mut total = 2 + list.len().saturating_sub(1);
        for element in list.iter() {
            total = total.saturating_add(json_len(&element, depth + 1)?);
        }
        return Ok(total);
    }
    if let Ok(tuple) = value.cast_exact::<PyTuple>() {
        let mut total = 2 + tuple.len().saturating_sub(1);
        for element in tuple.iter() {
            total = total.saturating_add(json_len(&element, depth + 1)?);
        }
        return Ok(total);
    }
    if let Ok(dict) = value.cast_exact::<PyDict>() {
        // Snapshot first: measuring a value can run Python code (`default=str`), which must
        // not see a live dict iterator.
        let pairs: Vec<_> = dict.iter().collect();
        if pairs
            .iter()
            .any(|(k, _)| !k.is_exact_instance_of::<PyString>())
        {
            return dumps_len(value); // json converts or rejects non-str keys itself
        }
        // '{' '}', one ':' per pair, ',' between pairs
        let mut total = 2 + pairs.len() + pairs.len().saturating_sub(1);
        for (key, element) in &pairs {
            total = total.saturating_add(json_len(key, depth + 1)?);
            total = total.saturating_add(json_len(element, depth + 1)?);
        }
        return Ok(total);
    }
    dumps_len(value)
}

/// Length of a `str` as a JSON string literal (quotes and escapes included).
///
/// The string is encoded to a temporary `bytes`: the limited API has no in-place read, and
/// `to_str` would attach a UTF-8 copy to a non-ASCII caller's string for its lifetime (an
/// `isascii()` check to pick the path costs more than the copy of a typical argument).
fn json_str_len(text: &Bound<'_, PyString>) -> PyResult<usize> {
    let extra = match text.encode_utf8() {
        Ok(utf8) => escape_extra(utf8.as_bytes()),
        Err(_) => return dumps_len(text), // lone surrogates: json writes them as they are
    };
    Ok(text
        .code_point_len()?
        .saturating_add(extra)
        .saturating_add(2))
}

/// Extra characters the escapes of a UTF-8 string's bytes take.
fn escape_extra(utf8: &[u8]) -> usize {
    utf8.iter()
        .map(|&b| usize::from(ESCAPE_EXTRA[usize::from(b)]))
        .sum()
}

/// Length of `repr(x)` for a finite float, from Rust's shortest round-trip digits (the same
/// digits as Python's repr): fixed notation when the decimal point falls within -3..=16
/// digits of the first digit (with ".0" when integral), else `d.ddde+XX` with at least two
/// exponent digits.
fn float_repr_len(x: f64) -> Option<usize> {
    use std::io::Write;
    let mut buf = [0u8; 48];
    let mut cursor = std::io::Cursor::new(&mut buf[..]);
    write!(cursor, "{:e}", x.abs()).ok()?;
    let written = usize::try_from(cursor.position()).ok()?;
    let text = buf.get(..written)?;
    let e_at = text.iter().position(|&b| b == b'e')?;
    let digits = text
        .get(..e_at)?
        .iter()
        .filter(|b| b.is_ascii_digit())
        .count();
    let exp: i32 = std::str::from_utf8(text.get(e_at + 1..)?)
        .ok()?
        .parse()
        .ok()?;
    let point = exp + 1; // digits before the decimal point
    let body = if !(-3..=16).contains(&point) {
        let exp_digits = if exp.unsigned_abs() >= 100 { 3 } else { 2 };
        digits + usize::from(digits > 1) + 2 + exp_digits // "d.ddd" "e" sign digits
    } else if point <= 0 {
        2 + usize::try_from(-point).ok()? + digits // "0." zeros digits
    } else {
        let point = usize::try_from(point).ok()?;
        if point < digits {
            digits + 1
        } else {
            point + 2 // digits, zeros, ".0"
        }
    };
    Some(body + usize::from(x.is_sign_negative()))
}

/// Decimal digits of `n`, with its sign.
fn int_len(n: i64) -> usize {
    let digits = n
        .unsigned_abs()
        .checked_ilog10()
        .map_or(1, |d| d as usize + 1);
    digits + usize::from(n < 0)
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
