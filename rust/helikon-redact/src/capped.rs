//! Redaction of text that is shown cut: the first part of an output whose rest is dropped,
//! the last part of one whose start is dropped.
//!
//! A cut made before redaction leaks: a secret whose key falls in the dropped part leaves
//! its value in the kept part with nothing to say it is one, and a token or known value
//! straddling the cut leaves a piece too short to match its shape. So a capture that cuts
//! keeps [`CUT_GUARD`] more bytes than it shows on the dropped side of each cut, these
//! functions redact the kept part *with* that context, and only then cut the redacted text.
//! A prefix or suffix of redacted text shows nothing the whole did not.
//!
//! The cut itself prefers a line boundary near the limit (then a blank), so a secret the
//! scanner cannot know (a value registered only with a later redactor) is dropped or kept
//! whole with its line rather than split. A tail that starts inside a private-key block
//! whose BEGIN marker was dropped (a block longer than the guard) is shown from after the
//! block's END marker.
//!
//! What the guard cannot give: context further away than [`CUT_GUARD`] bytes. A value
//! longer than the guard whose key lies beyond it (a YAML block scalar of more than 16 KiB)
//! is not known as a secret in a tail.
use crate::Redactor;

/// Bytes of context a capture keeps beyond each cut it shows (beyond the head's end and
/// before the tail's start). Larger than any private key in PEM form (an 8192-bit RSA key
/// is about 6.5 KB).
pub const CUT_GUARD: usize = 16 * 1024;

/// How far back from the limit a line boundary is looked for, at most (bytes); past it a
/// blank, then any character boundary, is used.
const LINE_LOOKBACK: usize = 4096;
/// How far back from the limit a blank is looked for when no line boundary is near.
const BLANK_LOOKBACK: usize = 256;

impl Redactor {
    /// `head` redacted, then cut to at most `keep` bytes at a safe boundary.
    ///
    /// `head` is the start of a longer text that is not shown past `keep` bytes; it should
    /// hold up to [`CUT_GUARD`] bytes more than `keep`, the context that tells whether the
    /// bytes before the cut belong to a secret. The result is a prefix of
    /// `self.redact(head)`, ending after a newline when one lies within 4 KiB of the
    /// limit, else after a blank within 256 bytes, else at the last character boundary.
    ///
    /// ```
    /// let r = helikon_redact::Redactor::new(Vec::<String>::new()).unwrap();
    /// let head = "ok\nAPI_KEY=abcdefghijklmnop more";
    /// assert_eq!(r.redact_head(head, 14), "ok\n");
    /// ```
    pub fn redact_head(&self, head: &str, keep: usize) -> String {
        let red = self.redact_cow(head);
        if red.len() <= keep {
            return red.into_owned();
        }
        let end = head_cut(&red, keep);
        red.get(..end).unwrap_or_default().to_string()
    }

    /// `tail` redacted, then cut to its last `keep` bytes at most, from a safe boundary.
    ///
    /// `tail` is the end of a longer text whose start is not shown; it should hold up to
    /// [`CUT_GUARD`] bytes more than `keep` before the part shown, the context that tells
    /// whether the first bytes shown belong to a secret (a key in the dropped part, a
    /// token straddling the cut). The result is a suffix of `self.redact(tail)`, starting
    /// after a newline when one lies within 4 KiB of the limit, else after a blank within
    /// 256 bytes, else at the first character boundary; never inside a private-key block
    /// whose BEGIN marker is not in `tail`.
    ///
    /// ```
    /// let r = helikon_redact::Redactor::new(Vec::<String>::new()).unwrap();
    /// let tail = "x API_KEY=abcdefghijklmnop\nrest\n";
    /// assert_eq!(r.redact_tail(tail, 12), "rest\n");
    /// ```
    pub fn redact_tail(&self, tail: &str, keep: usize) -> String {
        let red = self.redact_cow(tail);
        let floor = self.rules.pem.orphan_end(&red).unwrap_or(0);
        if red.len() <= keep && floor == 0 {
            return red.into_owned();
        }
        let start = tail_cut(&red, red.len().saturating_sub(keep).max(floor));
        red.get(start..).unwrap_or_default().to_string()
    }
}

/// The end of the kept prefix of `red`, at most `keep`.
fn head_cut(red: &str, keep: usize) -> usize {
    let mut limit = keep.min(red.len());
    while !red.is_char_boundary(limit) {
        limit -= 1;
    }
    let bytes = red.as_bytes();
    let window = |back: usize| limit.saturating_sub(back)..limit;
    let before = |range: std::ops::Range<usize>, hit: fn(u8) -> bool| {
        bytes
            .get(range.clone())
            .and_then(|b| b.iter().rposition(|&c| hit(c)).map(|i| range.start + i + 1))
    };
    before(window(LINE_LOOKBACK), |c| c == b'\n')
        .or_else(|| before(window(BLANK_LOOKBACK), |c| c == b' ' || c == b'\t'))
        .unwrap_or(limit)
}

/// The start of the kept suffix of `red`, at least `from`.
fn tail_cut(red: &str, from: usize) -> usize {
    let mut start = from.min(red.len());
    while !red.is_char_boundary(start) {
        start += 1;
    }
    if start == 0 {
        return 0;
    }
    let bytes = red.as_bytes();
    let after = |back: usize, hit: fn(u8) -> bool| {
        let end = start.saturating_add(back).min(red.len());
        bytes
            .get(start - 1..end)
            .and_then(|b| b.iter().position(|&c| hit(c)).map(|i| start + i))
    };
    after(LINE_LOOKBACK, |c| c == b'\n')
        .or_else(|| after(BLANK_LOOKBACK, |c| c == b' ' || c == b'\t'))
        .unwrap_or(start)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn head_cut_prefers_a_line_then_a_blank() {
        assert_eq!(head_cut("aaa\nbbb ccc", 9), 4);
        assert_eq!(head_cut(&format!("{} xy", "a".repeat(5000)), 5002), 5001);
        assert_eq!(head_cut(&"a".repeat(600), 500), 500);
        assert_eq!(head_cut("é", 1), 0);
    }

    #[test]
    fn tail_cut_prefers_a_line_then_a_blank() {
        assert_eq!(tail_cut("aaa bbb\nccc", 2), 8);
        assert_eq!(tail_cut("aaa\nbbb", 4), 4);
        assert_eq!(tail_cut("aa bbb", 1), 3);
        assert_eq!(tail_cut(&"a".repeat(600), 100), 100);
        assert_eq!(tail_cut("é", 1), 2);
    }
}
