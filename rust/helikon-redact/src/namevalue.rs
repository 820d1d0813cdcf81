//! Secrets whose name and value sit in separate fields.
//!
//! - Environment lists of Kubernetes, ECS and compose: `- name: DB_PASSWORD` then
//!   `value: …` (YAML, the next lines of the same item), and
//!   `{"name": "DB_PASSWORD", "value": "…"}` (JSON, the same object). The `value` of an entry
//!   whose `name` is secret-named ([`crate::names`]) is masked; `valueFrom` (a reference to a
//!   Kubernetes secret) is not a value.
//! - Terraform state and plan JSON: `"db_password": {"sensitive": true, "type": "string",
//!   "value": "…"}`: the `value` of an object under a secret-named key.
//!
//! The search jumps between hits of the literal `name` and of `{` after a secret-named key,
//! and reads a bounded window after each ([`WINDOW`] bytes), so it is linear. Values follow
//! the rules of [`crate::context`] (references, placeholders and masks are left alone).
use memchr::memmem;

use crate::context::{self, Skip};
use crate::finding::{Finding, FindingKind};
use crate::names;

/// How far after a name the `value` field is looked for.
const WINDOW: usize = 400;

fn is_hspace(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Append the values of secret-named entries in `text`.
pub(crate) fn scan(text: &str, mask: &str, out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    static NAME: std::sync::LazyLock<memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memmem::Finder::new(b"name"));
    let mut from = 0usize;
    while let Some(i) = bytes.get(from..).and_then(|b| NAME.find(b)) {
        let at = from + i;
        from = at + 4;
        // `name` as a whole key: after a quote, a blank, `- `, `{` or `,`, and before a quote
        // or the separator.
        let before = at.checked_sub(1).and_then(|p| bytes.get(p).copied());
        let quoted = before == Some(b'"') || before == Some(b'\'');
        let starts = before.is_none_or(|b| {
            b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b'{' | b',' | b'-')
        });
        if !starts {
            continue;
        }
        let mut j = at + 4;
        if quoted {
            if bytes.get(j).copied() != before {
                continue;
            }
            j += 1;
        }
        while bytes.get(j).is_some_and(|&b| is_hspace(b)) {
            j += 1;
        }
        if bytes.get(j) != Some(&b':') {
            continue;
        }
        j += 1;
        let Some((ns, ne)) = scalar(bytes, j) else {
            continue;
        };
        let name = text.get(ns..ne).unwrap_or_default();
        if !names::is_secret_name(name) {
            continue;
        }
        let limit = (ne + WINDOW).min(bytes.len());
        if let Some((vs, ve)) = value_field(bytes, ne, limit) {
            push(text, name, vs, ve, mask, out);
            from = from.max(ve);
        }
    }
    sensitive_objects(text, mask, out);
}

/// A scalar after a separator at `from`: a quoted string's body or a bare word up to the
/// line end, `,` or `}`; `(start, end)`.
fn scalar(bytes: &[u8], from: usize) -> Option<(usize, usize)> {
    let mut i = from;
    while bytes.get(i).is_some_and(|&b| is_hspace(b)) {
        i += 1;
    }
    let q = *bytes.get(i)?;
    if q == b'"' || q == b'\'' {
        let body = i + 1;
        let end = bytes
            .get(body..(body + WINDOW).min(bytes.len()))
            .and_then(|r| memchr::memchr2(q, b'\n', r))?;
        return (bytes.get(body + end) == Some(&q)).then_some((body, body + end));
    }
    // A bare scalar runs to the line end (a YAML value), or to `,`/`}` in a JSON object
    // unless it holds a `${…}` reference.
    let mut e = i;
    while bytes.get(e).is_some_and(|&b| !matches!(b, b'\n' | b'\r')) && e < i + WINDOW {
        e += 1;
    }
    let run = bytes.get(i..e).unwrap_or_default();
    if !run.contains(&b'{') {
        if let Some(p) = run.iter().position(|&b| matches!(b, b',' | b'}' | b'#')) {
            e = i + p;
        }
    }
    while e > i && bytes.get(e - 1).is_some_and(|&b| is_hspace(b)) {
        e -= 1;
    }
    (e > i).then_some((i, e))
}

/// The next `value` field after `from` in the same entry (before `limit`, a closing `}`, or
/// the next list item `- ` at a line start): the range of its scalar.
fn value_field(bytes: &[u8], from: usize, limit: usize) -> Option<(usize, usize)> {
    let mut i = from;
    while i + 5 <= limit {
        let b = *bytes.get(i)?;
        if b == b'}' {
            return None;
        }
        // A new YAML list item ends the entry.
        if b == b'\n' {
            let mut k = i + 1;
            while bytes.get(k).is_some_and(|&c| is_hspace(c)) {
                k += 1;
            }
            if bytes.get(k) == Some(&b'-') && bytes.get(k + 1).is_some_and(|&c| is_hspace(c)) {
                return None;
            }
        }
        if bytes.get(i..i + 5) == Some(b"value") {
            let before = i.checked_sub(1).and_then(|p| bytes.get(p).copied());
            let quoted = before == Some(b'"') || before == Some(b'\'');
            let starts = before
                .is_none_or(|c| c.is_ascii_whitespace() || matches!(c, b'"' | b'\'' | b'{' | b','));
            let mut j = i + 5;
            if quoted && bytes.get(j).copied() == before {
                j += 1;
            }
            while bytes.get(j).is_some_and(|&c| is_hspace(c)) {
                j += 1;
            }
            if starts && bytes.get(j) == Some(&b':') {
                return scalar(bytes, j + 1);
            }
        }
        i += 1;
    }
    None
}

fn push(text: &str, key: &str, vs: usize, ve: usize, mask: &str, out: &mut Vec<Finding>) {
    let Some(v) = text.get(vs..ve) else {
        return;
    };
    if v.is_empty() || v == mask {
        return;
    }
    let cx = context::ValueCx {
        key,
        quoted: true,
        shell_word: false,
        allow_code: false,
        typed_default: false,
    };
    if matches!(
        context::non_secret_value(&cx, v),
        Some(Skip::Past | Skip::Into)
    ) {
        return;
    }
    out.push(Finding::new(FindingKind::SecretKeyValue, vs, ve));
}

/// `"db_password": {… "value": "…"}`: the `value` of an object under a secret-named key.
fn sensitive_objects(text: &str, mask: &str, out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    static SENSITIVE: std::sync::LazyLock<memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memmem::Finder::new(b"\"sensitive\""));
    let mut from = 0usize;
    while let Some(i) = bytes.get(from..).and_then(|b| SENSITIVE.find(b)) {
        let at = from + i;
        from = at + 11;
        // The object's opening brace and the key before it, looked for backwards.
        let lo = at.saturating_sub(WINDOW);
        let Some(brace) = bytes.get(lo..at).and_then(|r| memchr::memrchr(b'{', r)) else {
            continue;
        };
        let brace = lo + brace;
        let head = bytes.get(lo..brace).unwrap_or_default();
        let Some(colon) = memchr::memrchr(b':', head) else {
            continue;
        };
        let key_end = head
            .get(..colon)
            .and_then(|h| h.iter().rposition(|&c| c == b'"'))
            .map(|p| lo + p);
        let Some(key_end) = key_end else {
            continue;
        };
        let key_start = bytes
            .get(lo..key_end)
            .and_then(|h| memchr::memrchr(b'"', h))
            .map(|p| lo + p + 1);
        let Some(key_start) = key_start else {
            continue;
        };
        let key = text.get(key_start..key_end).unwrap_or_default();
        if !names::is_secret_name(key) {
            continue;
        }
        let limit = (at + WINDOW).min(bytes.len());
        if let Some((vs, ve)) = value_field(bytes, brace + 1, limit) {
            push(text, key, vs, ve, mask, out);
        }
    }
}
