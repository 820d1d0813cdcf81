//! Binding of `helikon-redact`: the compile-once `Redactor` pyclass.
//!
//! Only primitives and JSON text cross: secrets and the environment arrive as JSON, findings
//! leave as JSON with char (code point) offsets, which is how Python indexes `str`. Error
//! messages name the field, never a secret value.
//!
//! `redact` is the hot path (every tool output): the text is read in place (the UTF-8 view
//! CPython keeps of a `str`, no copy), the very same `str` object comes back when nothing was
//! found, and the GIL is released only for texts long enough ([`DETACH_BYTES`]) that another
//! thread gains more than the release and re-acquisition cost.
use std::borrow::Cow;

use helikon_redact::{to_char_offsets, Redactor as Core};
use pyo3::prelude::*;
use pyo3::types::PyString;
use serde_json::Value;

use crate::errors::{from_redact, raise, Class};

/// Texts of at least this many bytes are scanned with the GIL released (about 50 us of
/// scanning; shorter scans hold the GIL for less time than a thread switch would take).
const DETACH_BYTES: usize = 16 * 1024;

/// Parse JSON without echoing its content: serde's messages can quote a string value.
fn parse(py: Python<'_>, what: &str, text: &str) -> PyResult<Value> {
    serde_json::from_str(text).map_err(|e| {
        raise(
            py,
            Class::Config,
            format!(
                "{what}: invalid JSON at line {}, column {}",
                e.line(),
                e.column()
            ),
        )
    })
}

/// A compiled secret redactor (see `helikon.redaction.Redactor` for the documented API).
#[pyclass(frozen, name = "Redactor", module = "helikon._native")]
pub struct PyRedactor {
    inner: Core,
}

#[pymethods]
impl PyRedactor {
    /// Build from `extra_secrets_json` (a JSON array of strings), `env_json` (a JSON object
    /// of string values; only secret-named keys count) and the mask.
    #[new]
    fn new(py: Python<'_>, extra_secrets_json: &str, env_json: &str, mask: &str) -> PyResult<Self> {
        let extra = match parse(py, "extra_secrets_json", extra_secrets_json)? {
            Value::Array(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(s) => Ok(s),
                    _ => Err(raise(
                        py,
                        Class::Config,
                        format!("extra_secrets[{i}] must be a string"),
                    )),
                })
                .collect::<PyResult<Vec<String>>>()?,
            _ => {
                return Err(raise(
                    py,
                    Class::Config,
                    "extra_secrets_json must be a JSON array of strings".to_string(),
                ))
            }
        };
        let env = match parse(py, "env_json", env_json)? {
            Value::Object(map) => map
                .into_iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k, s)),
                    _ => Err(raise(
                        py,
                        Class::Config,
                        "env values must be strings".to_string(),
                    )),
                })
                .collect::<PyResult<Vec<(String, String)>>>()?,
            _ => {
                return Err(raise(
                    py,
                    Class::Config,
                    "env_json must be a JSON object of strings".to_string(),
                ))
            }
        };
        let mask = mask.to_string();
        let built = py.detach(move || {
            Core::builder()
                .with_extra_secrets(extra)
                .with_env(env)
                .mask(mask)
                .build()
        });
        built
            .map(|inner| Self { inner })
            .map_err(|e| from_redact(py, e))
    }

    /// `text` with every secret replaced by the mask; `text` itself when nothing is found.
    fn redact<'py>(
        &self,
        py: Python<'py>,
        text: &Bound<'py, PyString>,
    ) -> PyResult<Bound<'py, PyString>> {
        let s = text.to_str()?;
        let out = if s.len() >= DETACH_BYTES {
            py.detach(|| self.inner.redact_cow(s))
        } else {
            self.inner.redact_cow(s)
        };
        Ok(match out {
            Cow::Borrowed(_) => text.clone(),
            Cow::Owned(o) => PyString::new(py, &o),
        })
    }

    /// `text` (the start of a longer text, with context past the cut) redacted, then cut to
    /// at most `keep` chars at a safe boundary (see `Redactor::redact_head`).
    fn redact_head(&self, py: Python<'_>, text: &str, keep: usize) -> String {
        let keep = char_bytes(text, keep);
        py.detach(|| self.inner.redact_head(text, keep))
    }

    /// `text` (the end of a longer text, with context before the cut) redacted, then cut to
    /// its last `keep` chars at most, from a safe boundary (see `Redactor::redact_tail`).
    fn redact_tail(&self, py: Python<'_>, text: &str, keep: usize) -> String {
        let from = text.chars().count().saturating_sub(keep);
        let keep = text.len() - char_bytes(text, from);
        py.detach(|| self.inner.redact_tail(text, keep))
    }

    /// The redacted regions as JSON: `[{"kind": str, "start": int, "end": int}, ...]`,
    /// sorted, disjoint, char offsets.
    fn findings(&self, py: Python<'_>, text: &str) -> PyResult<String> {
        let run = || {
            let found = self.inner.findings(text);
            serde_json::to_string(&to_char_offsets(text, &found))
        };
        let out = if text.len() >= DETACH_BYTES {
            py.detach(run)
        } else {
            run()
        };
        out.map_err(|e| raise(py, Class::Helikon, format!("findings: {e}")))
    }

    /// Redact a JSON document: strings redacted, secret-named keys' string values masked.
    fn redact_json(&self, py: Python<'_>, json_text: &str) -> PyResult<String> {
        let value = parse(py, "json_text", json_text)?;
        let out = py.detach(|| serde_json::to_string(&self.inner.redact_value(&value)));
        out.map_err(|e| raise(py, Class::Helikon, format!("redact_json: {e}")))
    }

    /// The replacement marker.
    #[getter]
    fn mask(&self) -> &str {
        self.inner.mask()
    }

    /// How many distinct known secret values survived filtering.
    #[getter]
    fn known_secret_count(&self) -> usize {
        self.inner.known_secret_count()
    }

    fn __repr__(&self) -> String {
        format!(
            "Redactor(mask={:?}, known_secrets={})",
            self.inner.mask(),
            self.inner.known_secret_count()
        )
    }
}

/// The byte length of the first `chars` characters of `text` (all of it when shorter).
fn char_bytes(text: &str, chars: usize) -> usize {
    text.char_indices().nth(chars).map_or(text.len(), |(i, _)| i)
}

/// Why the scanner would ignore `value` as a known secret, or `None` when it keeps it
/// (never quotes the value).
#[pyfunction]
fn unusable_secret_reason(value: &str) -> Option<&'static str> {
    helikon_redact::unusable_reason(value)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyRedactor>()?;
    m.add_function(wrap_pyfunction!(unusable_secret_reason, m)?)?;
    m.add("REDACT_CUT_GUARD", helikon_redact::CUT_GUARD)?;
    Ok(())
}
