//! [`Redactor`]: built once from known secrets and a mask, then applied to many texts.
use std::borrow::Cow;

use serde_json::Value;

use crate::error::RedactError;
use crate::finding::{self, Finding};
use crate::known::KnownValues;
use crate::passes::with_scratch;
use crate::rules::{rules, Rules};
use crate::{context, keyvalue, names, pem};

/// The spec's replacement marker.
pub const DEFAULT_MASK: &str = "***";

/// Most scans [`Redactor::findings`] runs over one text (see there).
pub const MAX_PASSES: usize = 4;

/// Longest mask accepted, in bytes.
pub const MAX_MASK_LEN: usize = 256;

/// A compiled redactor: the shared pattern rules plus this redactor's known secret values.
///
/// Immutable after [`RedactorBuilder::build`]; `Send + Sync`, cheap to share behind an `Arc`.
#[derive(Debug, Clone)]
pub struct Redactor {
    pub(crate) rules: &'static Rules,
    pub(crate) known: KnownValues,
    pub(crate) mask: String,
    /// The mask holds a byte of `PRIVATE KEY`, so masking could spell a PEM marker.
    pub(crate) mask_may_spell_pem: bool,
    /// No known value holds a byte of the mask (see [`KnownValues::inert_under`]): repeated
    /// scans, which see only masked known values, skip the known-value scan.
    pub(crate) known_inert: bool,
}

/// Collects known secrets and the mask for a [`Redactor`].
#[derive(Clone)]
pub struct RedactorBuilder {
    secrets: Vec<String>,
    mask: String,
}

/// Shows how many secrets are registered, never their values.
impl std::fmt::Debug for RedactorBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedactorBuilder")
            .field("secrets", &self.secrets.len())
            .field("mask", &self.mask)
            .finish()
    }
}

impl Default for RedactorBuilder {
    fn default() -> Self {
        Self {
            secrets: Vec::new(),
            mask: DEFAULT_MASK.to_string(),
        }
    }
}

impl RedactorBuilder {
    /// Register literal secret values (the spec's `with_extra_secrets`). Values under the
    /// length floor, all-digit values and common words are dropped at build time.
    pub fn with_extra_secrets<I, S>(mut self, secrets: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.secrets.extend(secrets.into_iter().map(Into::into));
        self
    }

    /// Register the values of the secret-named variables in `env` (see
    /// [`names::is_secret_name`]); other variables are ignored, and so are values that are
    /// file paths (`GOOGLE_APPLICATION_CREDENTIALS=/home/u/sa.json` names where the secret
    /// is kept; masking every mention of the path would hide ordinary output).
    pub fn with_env<I, K, V>(mut self, env: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<str>,
        V: Into<String>,
    {
        self.secrets.extend(
            env.into_iter()
                .map(|(k, v)| (k, v.into()))
                .filter(|(k, v)| {
                    names::is_secret_name(k.as_ref()) && !context::is_file_path(v.trim())
                })
                .map(|(_, v)| v),
        );
        self
    }

    /// Register this process's secret-named environment variables (non-UTF-8 ones skipped).
    pub fn with_process_env(self) -> Self {
        self.with_env(
            std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
        )
    }

    /// Use `mask` instead of `***`.
    pub fn mask(mut self, mask: impl Into<String>) -> Self {
        self.mask = mask.into();
        self
    }

    /// Compile.
    ///
    /// # Errors
    /// [`RedactError::Config`] when the mask is longer than [`MAX_MASK_LEN`];
    /// [`RedactError::Build`] when a rule or the known-value automaton cannot be compiled.
    pub fn build(self) -> Result<Redactor, RedactError> {
        if self.mask.len() > MAX_MASK_LEN {
            return Err(RedactError::Config(format!(
                "mask is {} bytes; at most {MAX_MASK_LEN} are allowed",
                self.mask.len()
            )));
        }
        let known = KnownValues::build(self.secrets.iter().map(String::as_str))?;
        Ok(Redactor {
            rules: rules()?,
            known_inert: known.inert_under(&self.mask),
            known,
            mask_may_spell_pem: self
                .mask
                .bytes()
                .any(|b| pem::KEYWORD.as_bytes().contains(&b)),
            mask: self.mask,
        })
    }
}

impl Redactor {
    /// Start a builder (no known secrets, mask `***`).
    pub fn builder() -> RedactorBuilder {
        RedactorBuilder::default()
    }

    /// A redactor with the given extra secrets and the default mask, ignoring the environment.
    ///
    /// # Errors
    /// As [`RedactorBuilder::build`].
    pub fn new<I, S>(extra_secrets: I) -> Result<Self, RedactError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::builder().with_extra_secrets(extra_secrets).build()
    }

    /// The replacement marker.
    pub fn mask(&self) -> &str {
        &self.mask
    }

    /// How many distinct known secret values survived filtering.
    pub fn known_secret_count(&self) -> usize {
        self.known.len()
    }

    /// The regions [`Redactor::redact`] masks: disjoint, sorted, byte offsets.
    ///
    /// Masking can change what a heuristic sees next to a mask (a quote or separator
    /// swallowed by a value, a word boundary appearing), so the scan is repeated over the
    /// masked text until nothing new is found, at most [`MAX_PASSES`] times, and the new
    /// regions are mapped back onto the original. Text without secrets costs one pass, text
    /// with secrets usually two. This is what makes `redact(redact(x)) == redact(x)`.
    pub fn findings(&self, text: &str) -> Vec<Finding> {
        self.findings_repeated(text, true)
    }

    /// [`Redactor::findings`]; `windowed` limits each repeated scan to the lines a mask
    /// touched when that is exact (see [`crate::rescan`]); `false` rescans the whole text
    /// (kept for the test that checks the two agree).
    pub(crate) fn findings_repeated(&self, text: &str, windowed: bool) -> Vec<Finding> {
        with_scratch(|s| {
            self.scan_repeated(text, windowed, s);
            s.found.clone()
        })
    }

    /// `text` with every finding replaced by the mask.
    ///
    /// ```
    /// let r = helikon_redact::Redactor::new(["hunter2hunter2"]).unwrap();
    /// assert_eq!(r.redact("DB_PASSWORD=x\nuse hunter2hunter2"), "DB_PASSWORD=***\nuse ***");
    /// ```
    pub fn redact(&self, text: &str) -> String {
        self.redact_cow(text).into_owned()
    }

    /// [`Redactor::redact`] without a copy when nothing is found: the text itself is
    /// returned, borrowed.
    ///
    /// ```
    /// use std::borrow::Cow;
    /// let r = helikon_redact::Redactor::new(Vec::<String>::new()).unwrap();
    /// assert!(matches!(r.redact_cow("nothing here"), Cow::Borrowed("nothing here")));
    /// assert_eq!(r.redact_cow("password: x"), "password: ***");
    /// ```
    pub fn redact_cow<'t>(&self, text: &'t str) -> Cow<'t, str> {
        with_scratch(|s| {
            self.scan_repeated(text, true, s);
            if s.found.is_empty() {
                Cow::Borrowed(text)
            } else {
                Cow::Owned(finding::apply(text, &s.found, &self.mask))
            }
        })
    }

    /// Redact a JSON value: strings are redacted, arrays and objects recursed, other scalars
    /// returned unchanged. Object keys are never changed, but a string directly under a
    /// secret-named key is masked whole (an `Authorization` value keeps its scheme word).
    ///
    /// Recursion follows the value's nesting; values parsed by `serde_json` are at most 128
    /// levels deep.
    pub fn redact_value(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.redact(s)),
            Value::Array(items) => {
                Value::Array(items.iter().map(|v| self.redact_value(v)).collect())
            }
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        let out = match v {
                            Value::String(s) if names::is_secret_name(k) => {
                                Value::String(self.mask_whole(k, s))
                            }
                            other => self.redact_value(other),
                        };
                        (k.clone(), out)
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// The value of a secret-named key: masked whole, except an auth scheme word.
    fn mask_whole(&self, key: &str, value: &str) -> String {
        let (start, end) = (
            value.len() - value.trim_start().len(),
            value.trim_end().len(),
        );
        if start >= end || value.get(start..end) == Some(self.mask.as_str()) {
            return value.to_string();
        }
        let start = if names::is_auth_header(key) {
            keyvalue::skip_auth_scheme(value.as_bytes(), start, end)
        } else {
            start
        };
        if value.get(start..end) == Some(self.mask.as_str()) {
            return value.to_string();
        }
        let mut out = String::with_capacity(value.len());
        out.push_str(value.get(..start).unwrap_or_default());
        out.push_str(&self.mask);
        out.push_str(value.get(end..).unwrap_or_default());
        out
    }
}
