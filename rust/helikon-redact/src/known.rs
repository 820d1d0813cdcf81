//! The known-value scan: literal occurrences of registered secret values.
//!
//! Values come from secret-named environment variables and from extra secrets the caller
//! registers. Before the automaton is built, values that would corrupt ordinary output are
//! discarded: shorter than [`MIN_SECRET_LEN`] bytes, all ASCII digits, or a common word
//! ([`COMMON_WORDS`], case-insensitive). A value with surrounding whitespace is also
//! registered trimmed (an env value read from a file often keeps its newline).
//!
//! Matching is ASCII case-insensitive (the spec's scan is case-sensitive; a secret that a
//! tool upper-cased is still the secret) and runs one Aho-Corasick pass, leftmost-longest.
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

use crate::error::RedactError;
use crate::finding::{Finding, FindingKind};

/// The length floor of the spec, in bytes.
pub const MIN_SECRET_LEN: usize = 8;

/// Largest total length of known values (bytes) compiled to a full DFA.
const MAX_DFA_BYTES: usize = 64 * 1024;

/// Values never treated as secrets (compared case-insensitively). The first seven are the
/// spec's; the rest are ordinary words of at least eight letters often found as placeholder
/// values in configuration.
pub const COMMON_WORDS: &[&str] = &[
    "true",
    "false",
    "dev",
    "prod",
    "test",
    "none",
    "null",
    "password",
    "development",
    "production",
    "localhost",
    "undefined",
    "disabled",
    "anonymous",
    "optional",
    "required",
    "placeholder",
];

/// Would `value` be kept as a known secret?
///
/// ```
/// use helikon_redact::is_usable_secret;
/// assert!(is_usable_secret("hunter2hunter2"));
/// assert!(!is_usable_secret("short"));
/// assert!(!is_usable_secret("12345678"));
/// assert!(!is_usable_secret("Production"));
/// ```
pub fn is_usable_secret(value: &str) -> bool {
    value.len() >= MIN_SECRET_LEN
        && !value.bytes().all(|b| b.is_ascii_digit())
        && !value.trim().is_empty()
        && !COMMON_WORDS.iter().any(|w| w.eq_ignore_ascii_case(value))
}

/// A compiled set of known secret values.
#[derive(Clone)]
pub(crate) struct KnownValues {
    automaton: Option<AhoCorasick>,
    count: usize,
    /// Some value contains a line break.
    multiline: bool,
}

/// Never print the automaton: its states spell the secrets.
impl std::fmt::Debug for KnownValues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnownValues")
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}

impl KnownValues {
    /// Filter `values` and build the automaton (none when nothing is left).
    pub(crate) fn build<'a>(
        values: impl IntoIterator<Item = &'a str>,
    ) -> Result<Self, RedactError> {
        let mut kept: Vec<&str> = Vec::new();
        for v in values {
            for candidate in [v, v.trim()] {
                if is_usable_secret(candidate) && !kept.contains(&candidate) {
                    kept.push(candidate);
                }
            }
        }
        if kept.is_empty() {
            return Ok(Self {
                automaton: None,
                count: 0,
                multiline: false,
            });
        }
        // A full DFA scans a byte per table lookup; its size grows with the total length of
        // the values, so very large sets fall back to the automatic choice (an NFA).
        let total: usize = kept.iter().map(|v| v.len()).sum();
        let kind = (total <= MAX_DFA_BYTES).then_some(AhoCorasickKind::DFA);
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .ascii_case_insensitive(true)
            .kind(kind)
            .build(&kept)
            .map_err(|e| RedactError::Build(format!("known-secret automaton: {e}")))?;
        Ok(Self {
            automaton: Some(automaton),
            count: kept.len(),
            multiline: kept.iter().any(|v| v.contains(['\n', '\r'])),
        })
    }

    /// Does some value contain a line break (so a match may cross lines)?
    pub(crate) fn multiline(&self) -> bool {
        self.multiline
    }

    /// How many distinct values are scanned for.
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// Append every occurrence in `text`.
    pub(crate) fn scan(&self, text: &str, out: &mut Vec<Finding>) {
        if let Some(ac) = &self.automaton {
            for m in ac.find_iter(text) {
                let (start, end) = widen_to_char_boundaries(text, m.start(), m.end());
                out.push(Finding::new(FindingKind::KnownValue, start, end));
            }
        }
    }
}

/// A case-insensitive ASCII match always lies on char boundaries of valid UTF-8 when the
/// pattern does; this keeps the invariant explicit should a pattern start mid-character.
fn widen_to_char_boundaries(text: &str, mut start: usize, mut end: usize) -> (usize, usize) {
    while start > 0 && !text.is_char_boundary(start) {
        start -= 1;
    }
    while end < text.len() && !text.is_char_boundary(end) {
        end += 1;
    }
    (start, end)
}
