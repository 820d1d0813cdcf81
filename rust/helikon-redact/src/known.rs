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
//! A single value of at most [`MAX_SINGLE_LEN`] bytes (an agent run's one token, say) is
//! searched for directly instead: `memchr` on both cases of its first byte, then a compare.
//! The result is the same (leftmost, non-overlapping), without the automaton's tables, which
//! a redactor built per run would otherwise pull into the cache on every call.
use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

use crate::encoded;
use crate::error::RedactError;
use crate::finding::{Finding, FindingKind};

/// The length floor of the spec, in bytes.
pub const MIN_SECRET_LEN: usize = 8;

/// Longest single value searched for without an automaton; the compare after each
/// candidate reads at most this many bytes, so the search stays linear.
const MAX_SINGLE_LEN: usize = 64;

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
    unusable_reason(value).is_none()
}

/// Why `value` would *not* be kept as a known secret (`None` when it would): `"shorter
/// than 8 bytes"`, `"all digits"`, `"blank"` or `"a common word"`. The reason never
/// quotes the value.
///
/// ```
/// use helikon_redact::unusable_reason;
/// assert_eq!(unusable_reason("hunter2hunter2"), None);
/// assert_eq!(unusable_reason("12345678"), Some("all digits"));
/// ```
pub fn unusable_reason(value: &str) -> Option<&'static str> {
    if value.len() < MIN_SECRET_LEN {
        Some("shorter than 8 bytes")
    } else if value.bytes().all(|b| b.is_ascii_digit()) {
        Some("all digits")
    } else if value.trim().is_empty() {
        Some("blank")
    } else if COMMON_WORDS.iter().any(|w| w.eq_ignore_ascii_case(value)) {
        Some("a common word")
    } else {
        None
    }
}

/// A compiled set of known secret values.
#[derive(Clone)]
pub(crate) struct KnownValues {
    automaton: Option<AhoCorasick>,
    /// The one value, when there is one and it is short (searched for without `automaton`).
    single: Option<Vec<u8>>,
    count: usize,
    /// Some value contains a line break.
    multiline: bool,
    /// Every byte some value holds (ASCII letters in both cases, as matching ignores case).
    bytes: [bool; 256],
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
        let mut originals: Vec<&str> = Vec::new();
        for v in values {
            for candidate in [v, v.trim()] {
                if is_usable_secret(candidate) && !originals.contains(&candidate) {
                    originals.push(candidate);
                }
            }
        }
        let count = originals.len();
        // Each value, then its encoded forms (attack R12, module `encoded`).
        let mut kept: Vec<String> = originals.iter().map(|v| (*v).to_string()).collect();
        for v in &originals {
            for form in encoded::variants(v) {
                if !kept.contains(&form) {
                    kept.push(form);
                }
            }
        }
        if kept.is_empty() {
            return Ok(Self {
                automaton: None,
                single: None,
                count: 0,
                multiline: false,
                bytes: [false; 256],
            });
        }
        let mut bytes = [false; 256];
        for b in kept.iter().flat_map(|v| v.bytes()) {
            for c in [b, b.to_ascii_lowercase(), b.to_ascii_uppercase()] {
                if let Some(slot) = bytes.get_mut(usize::from(c)) {
                    *slot = true;
                }
            }
        }
        let multiline = kept.iter().any(|v| v.contains(['\n', '\r']));
        if let [one] = kept.as_slice() {
            if one.len() <= MAX_SINGLE_LEN {
                return Ok(Self {
                    automaton: None,
                    single: Some(one.as_bytes().to_vec()),
                    count: 1,
                    multiline,
                    bytes,
                });
            }
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
            single: None,
            count,
            multiline,
            bytes,
        })
    }

    /// Can no value match across a piece of `mask`? True when no value holds a byte of
    /// the mask (ignoring ASCII case). Then, in a text whose known values were all found
    /// and masked, a new scan finds none: a leftmost-longest scan leaves no occurrence that
    /// overlaps none of its matches, so every occurrence left would have to take a byte
    /// from a mask.
    pub(crate) fn inert_under(&self, mask: &str) -> bool {
        !mask
            .bytes()
            .any(|b| self.bytes.get(usize::from(b)).copied().unwrap_or(true))
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
        if let Some(value) = &self.single {
            find_single(text, value, out);
        } else if let Some(ac) = &self.automaton {
            for m in ac.find_iter(text) {
                let (start, end) = widen_to_char_boundaries(text, m.start(), m.end());
                out.push(Finding::new(FindingKind::KnownValue, start, end));
            }
        }
    }
}

/// Every occurrence of `value` in `text` (ASCII case-insensitively), leftmost first and
/// non-overlapping: what a leftmost-longest automaton over this one value reports.
fn find_single(text: &str, value: &[u8], out: &mut Vec<Finding>) {
    let hay = text.as_bytes();
    let Some(&first) = value.first() else {
        return;
    };
    let (lower, upper) = (first.to_ascii_lowercase(), first.to_ascii_uppercase());
    let mut at = 0usize;
    while let Some(i) = hay.get(at..).and_then(|h| memchr::memchr2(lower, upper, h)) {
        let s = at + i;
        let Some(seen) = hay.get(s..s + value.len()) else {
            break;
        };
        if seen.eq_ignore_ascii_case(value) {
            let (start, end) = widen_to_char_boundaries(text, s, s + value.len());
            out.push(Finding::new(FindingKind::KnownValue, start, end));
            at = s + value.len();
        } else {
            at = s + 1;
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The direct search of one value finds what the automaton over that value finds.
    #[test]
    fn single_value_search_agrees_with_the_automaton() {
        const PIECES: &[&str] = &[
            "hunter2", "HUNTER2", "Hunter", "h", "2", "x", " ", "é", "\n",
        ];
        for value in ["hunter2hunter2", "2hunter2", "ééhunter"] {
            let ac = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .ascii_case_insensitive(true)
                .build([value])
                .unwrap();
            let mut state = 0x2545_F491_4F6C_DD1Du64;
            for _ in 0..20_000 {
                let mut next = || {
                    state ^= state >> 12;
                    state ^= state << 25;
                    state ^= state >> 27;
                    state.wrapping_mul(0x2545_F491_4F6C_DD1D)
                };
                let n = (next() % 12) as usize;
                let text: String = (0..n)
                    .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                    .collect();
                let mut got = Vec::new();
                find_single(&text, value.as_bytes(), &mut got);
                let want: Vec<Finding> = ac
                    .find_iter(&text)
                    .map(|m| Finding::new(FindingKind::KnownValue, m.start(), m.end()))
                    .collect();
                assert_eq!(got, want, "{value:?} in {text:?}");
            }
        }
    }

    #[test]
    fn one_value_counts_once_and_its_encoded_forms_are_searched_too() {
        // Attack R12: the value's encoded forms join it, so even one value needs the
        // automaton; the count is of values, not forms.
        let one = KnownValues::build(["hunter2hunter2", "hunter2hunter2", "short"]).unwrap();
        assert!(one.automaton.is_some() && one.single.is_none());
        assert_eq!(one.len(), 1);
        let mut out = Vec::new();
        one.scan("a HUNTER2hunter2 b", &mut out);
        assert_eq!(out, vec![Finding::new(FindingKind::KnownValue, 2, 16)]);
        let two = KnownValues::build(["hunter2hunter2", "letmein-please"]).unwrap();
        assert!(two.automaton.is_some() && two.single.is_none());
    }
}
