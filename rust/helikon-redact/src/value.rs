//! Where the value of a secret-named key ends.
//!
//! [`crate::keyvalue`] finds the key and its separator; [`Shape::extent`] reads the value:
//!
//! - a quoted value (`"..."`, `'...'`, or JSON-escaped `\"...\"`) ends at its closing quote
//!   when a delimiter follows it; the quotes are kept (`"password": "***"`,
//!   `api_key = "***"`, `f(api_key="***", n=1)`) except when a shell-style `KEY="v"` ends
//!   the line: there the quotes are part of the word and masked with it (`B_TOKEN=***`, as
//!   the spec);
//! - a value inside an enclosing quote that starts right before the key
//!   (`-H "X-Api-Key: abc" url`) ends at that quote;
//! - a URL query parameter (`?api_key=...&x=1`) ends at `&`, `#` or whitespace;
//! - an unquoted value after a quoted key (`"api_key": 123,`) ends at `,`, `}` or `]`;
//! - an `Authorization` value (`Digest username="u", response="..."`) runs to the end of
//!   the line: every part of it may be a credential;
//! - a shell-style `KEY=value` is one shell word ([`shell_word_end`]): it ends at unquoted
//!   whitespace or at a command separator, so `BAR_TOKEN=*** FOO=1` and
//!   `docker run -e PW=*** -e USER=app img` keep the rest of the line (issue 14; the spec
//!   masked to the end of the line);
//! - any other unquoted value (`password: v`, `password = v` in INI) is a phrase
//!   ([`phrase_end`]): it runs over spaces, because YAML and INI values may hold them, but
//!   stops before the next thing that reads as another key (`host: db`, `user=bob`), a flag
//!   (`--user`) or a comment (` # ...`).
//!
//! Each reader reads the value's bytes once (plus one lookahead word, never re-read as a
//! value), so the key-name pass stays linear.

/// Byte classes.
fn is_hspace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r')
}

/// Can this byte follow a closing quote so that the quote really ends the value?
fn is_delimiter(b: u8) -> bool {
    b.is_ascii_whitespace()
        || matches!(
            b,
            b',' | b';' | b')' | b']' | b'}' | b'&' | b'|' | b'>' | b'+'
        )
}

/// The quote token opening at `at` (`"`, `'`, `\"` or `\'`), if any.
fn quote_at(bytes: &[u8], at: usize) -> Option<&'static [u8]> {
    match (bytes.get(at), bytes.get(at + 1)) {
        (Some(b'"'), _) => Some(b"\""),
        (Some(b'\''), _) => Some(b"'"),
        (Some(b'\\'), Some(b'"')) => Some(b"\\\""),
        (Some(b'\\'), Some(b'\'')) => Some(b"\\'"),
        _ => None,
    }
}

/// Position of the closing `quote` in `bytes[from..limit]`; backslash escapes the next byte
/// of a plain quote. Returns the index of the first byte of the closing token.
pub(crate) fn find_close(bytes: &[u8], from: usize, limit: usize, quote: &[u8]) -> Option<usize> {
    let mut i = from;
    while i < limit {
        let b = bytes.get(i).copied()?;
        if quote.len() == 2 {
            if b == b'\\' && bytes.get(i + 1) == quote.get(1) {
                return Some(i);
            }
        } else if b == b'\\' {
            i += 2;
            continue;
        } else if Some(&b) == quote.first() {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Where the closing token at `close` ends, if a delimiter (or the line end) follows it.
fn closed_at(bytes: &[u8], close: Option<usize>, quote: &[u8], eol: usize) -> Option<usize> {
    let end = close? + quote.len();
    if end >= eol
        || bytes
            .get(end)
            .is_some_and(|&b| is_delimiter(b) || b == b'\\')
    {
        Some(end)
    } else {
        None
    }
}

/// Does `bytes[at..]` start with `name=` or `name:` (an identifier-like key, then its
/// separator), reading at most a bounded prefix?
fn key_at(bytes: &[u8], at: usize, limit: usize) -> bool {
    const MAX_KEY: usize = 128;
    let first = bytes.get(at).copied().unwrap_or_default();
    if !(first.is_ascii_alphabetic() || first == b'_' || first == b'"' || first == b'\'') {
        return false;
    }
    let mut i = at + 1;
    while i < limit && i - at <= MAX_KEY {
        match bytes.get(i).copied() {
            Some(b) if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.') => i += 1,
            Some(b'"' | b'\'') if first == b'"' || first == b'\'' => i += 1,
            Some(b'=') => return bytes.get(i + 1) != Some(&b'='),
            Some(b':') => {
                return bytes
                    .get(i + 1)
                    .is_none_or(|&c| c.is_ascii_whitespace() || c == b'"' || c == b'\'')
            }
            _ => return false,
        }
    }
    false
}

/// A command separator at `i` ends a shell word here: `;`, `&`, `|` or `,` followed by
/// whitespace, the line end, the same byte (`&&`, `||`, `;;`) or another `key=` (`;Endpoint
/// Suffix=` in a connection string, `&page=2`, `,user=bob`).
fn separator_ends_word(bytes: &[u8], i: usize, limit: usize) -> bool {
    let Some(&b) = bytes.get(i) else {
        return true;
    };
    if !matches!(b, b';' | b'&' | b'|' | b',') {
        return false;
    }
    match bytes.get(i + 1).copied() {
        None => true,
        Some(n) if n.is_ascii_whitespace() || n == b => true,
        Some(_) => i + 1 >= limit || key_at(bytes, i + 1, limit),
    }
}

/// The end of a shell word starting at `start` (at most `limit`): unquoted whitespace or a
/// command separator ends it; quotes, `\` escapes, `$(...)`, `${...}` and backquotes inside
/// the word are read through. An unterminated quote runs to `limit` (the safe side).
pub(crate) fn shell_word_end(bytes: &[u8], start: usize, limit: usize) -> usize {
    let mut i = start;
    while i < limit {
        let Some(&b) = bytes.get(i) else {
            return limit;
        };
        match b {
            b if b.is_ascii_whitespace() => return i,
            b'\\' => i += 2,
            b'"' | b'\'' | b'`' => match find_close(bytes, i + 1, limit, &[b]) {
                Some(c) => i = c + 1,
                // A closing quote of an enclosing string (`X="a;KEY=v"`): the word ends
                // before it when nothing but blanks follows on the line.
                None if i > start
                    && bytes
                        .get(i + 1..limit)
                        .is_some_and(|r| r.iter().all(u8::is_ascii_whitespace)) =>
                {
                    return i
                }
                None => return limit,
            },
            b'$' if matches!(bytes.get(i + 1), Some(b'(' | b'{')) => {
                let (open, close) = if bytes.get(i + 1) == Some(&b'(') {
                    (b'(', b')')
                } else {
                    (b'{', b'}')
                };
                match matching(bytes, i + 1, limit, open, close) {
                    Some(c) => i = c + 1,
                    None => return limit,
                }
            }
            _ if separator_ends_word(bytes, i, limit) => return i,
            _ => i += 1,
        }
    }
    limit.min(bytes.len())
}

/// The bracket closing the one opening at `at` (nesting counted, quotes not), before
/// `limit`.
fn matching(bytes: &[u8], at: usize, limit: usize, open: u8, close: u8) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = at;
    while i < limit {
        let b = *bytes.get(i)?;
        if b == open {
            depth += 1;
        } else if b == close {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                return Some(i);
            }
        }
        i += 1;
    }
    None
}

/// The end of an unquoted phrase value starting at `start` (at most `limit`, the line's
/// content end): words separated by blanks, up to (not including) the blank before a word
/// that is another key (`host: db`, `user=bob`), a flag (`-u`, `--user`) or a comment
/// (`#`, `//`). Blanks inside brackets or quotes do not count (`Field(..., min_length=8)`
/// is one value). A `,` or `;` ending the last word before such a stop is left out too.
pub(crate) fn phrase_end(bytes: &[u8], start: usize, limit: usize) -> usize {
    let mut i = start;
    let mut depth = 0usize;
    while i < limit {
        let Some(&b) = bytes.get(i) else {
            break;
        };
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'"' | b'\'' => {
                if let Some(c) = find_close(bytes, i + 1, limit, &[b]) {
                    i = c;
                }
            }
            b if is_hspace(b) && depth == 0 => {
                let word_end = i;
                let mut next = i;
                while next < limit && bytes.get(next).is_some_and(|&c| is_hspace(c)) {
                    next += 1;
                }
                if next >= limit {
                    return word_end;
                }
                let c = bytes.get(next).copied().unwrap_or_default();
                let n = bytes.get(next + 1).copied().unwrap_or_default();
                let stop = (c == b'-' && (n == b'-' || n.is_ascii_alphabetic()))
                    || c == b'#'
                    || (c == b'/' && n == b'/')
                    || key_at(bytes, next, limit);
                if stop {
                    let mut e = word_end;
                    while e > start && bytes.get(e - 1).is_some_and(|&x| x == b',' || x == b';') {
                        e -= 1;
                    }
                    return e;
                }
                i = next;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    limit.min(bytes.len())
}

/// What the value reader needs to know about a key and its line.
#[derive(Clone, Copy)]
pub(crate) struct Shape<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) eol: usize,
    pub(crate) content_end: usize,
    pub(crate) shell_word: bool,
    pub(crate) key_quoted: bool,
    /// The key is an `Authorization` header name.
    pub(crate) auth: bool,
    pub(crate) sep: u8,
    pub(crate) pre: Option<u8>,
    pub(crate) enclosing: Option<&'static [u8]>,
}

impl Shape<'_> {
    /// The value starting at `v_start` (see the module doc): `(start, end, quoted)`, where
    /// `quoted` says the value was a quoted string whose quotes are kept outside the span.
    pub(crate) fn extent(&self, v_start: usize) -> (usize, usize, bool) {
        let (bytes, eol, content_end) = (self.bytes, self.eol, self.content_end);
        if v_start >= content_end {
            return (v_start, v_start, false);
        }
        if let Some(q) = quote_at(bytes, v_start) {
            let close = find_close(bytes, v_start + q.len(), eol, q);
            match closed_at(bytes, close, q, eol) {
                // The spec's shell word: at the end of the word the quotes go with it.
                Some(end)
                    if self.shell_word
                        && (end >= content_end
                            || bytes.get(end).is_some_and(|b| b.is_ascii_whitespace())) =>
                {
                    (v_start, end, true)
                }
                Some(end) => (v_start + q.len(), end - q.len(), true),
                None => (v_start, content_end, false),
            }
        } else if let Some(q) = self.enclosing {
            let close = find_close(bytes, v_start, eol, q);
            match (close, closed_at(bytes, close, q, eol)) {
                (Some(c), Some(_)) => (v_start, trim_end(bytes, v_start, c), false),
                _ => (v_start, content_end, false),
            }
        } else if self.sep == b'=' && matches!(self.pre, Some(b'?' | b'&')) {
            let end = bytes
                .get(v_start..content_end)
                .and_then(|v| {
                    v.iter().position(|&b| {
                        b.is_ascii_whitespace()
                            || matches!(b, b'&' | b'#' | b'"' | b'\'' | b'<' | b'>')
                    })
                })
                .map_or(content_end, |i| v_start + i);
            (v_start, end, false)
        } else if self.key_quoted && self.sep == b':' {
            let end = bytes
                .get(v_start..content_end)
                .and_then(|v| v.iter().position(|&b| matches!(b, b',' | b'}' | b']')))
                .map_or(content_end, |i| v_start + i);
            (v_start, trim_end(bytes, v_start, end), false)
        } else if self.auth {
            (v_start, content_end, false)
        } else if self.shell_word {
            (v_start, shell_word_end(bytes, v_start, content_end), false)
        } else {
            (v_start, phrase_end(bytes, v_start, content_end), false)
        }
    }
}

fn trim_end(bytes: &[u8], start: usize, mut end: usize) -> usize {
    while end > start && bytes.get(end - 1).is_some_and(|&b| is_hspace(b)) {
        end -= 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words() {
        fn end(t: &str) -> &str {
            &t[..shell_word_end(t.as_bytes(), 0, t.len())]
        }
        assert_eq!(end("abc def"), "abc");
        assert_eq!(end("a\\ b c"), "a\\ b");
        assert_eq!(end("\"a b\"c d"), "\"a b\"c");
        assert_eq!(end("$(vault read x) y"), "$(vault read x)");
        assert_eq!(end("x;y=1"), "x");
        assert_eq!(end("x;y"), "x;y");
        assert_eq!(end("p&ss; echo"), "p&ss");
        assert_eq!(end("abc==;EndpointSuffix=core"), "abc==");
        assert_eq!(end("a&&b"), "a");
        assert_eq!(end("\"unterminated x"), "\"unterminated x");
        assert_eq!(end("abc=\""), "abc=");
        assert_eq!(end("ab\"c d"), "ab\"c d");
    }

    #[test]
    fn phrases() {
        fn end(t: &str) -> &str {
            &t[..phrase_end(t.as_bytes(), 0, t.len())]
        }
        assert_eq!(end("hunter2"), "hunter2");
        assert_eq!(end("correct horse battery"), "correct horse battery");
        assert_eq!(end("hunter2, host: db"), "hunter2");
        assert_eq!(end("hunter2 user=bob"), "hunter2");
        assert_eq!(end("hunter2 --user bob"), "hunter2");
        assert_eq!(end("hunter2  # rotate"), "hunter2");
        assert_eq!(end("a - b"), "a - b");
        assert_eq!(end("f(\"A\", \"b c\")"), "f(\"A\", \"b c\")");
        assert_eq!(end("Field(..., min_length=8)"), "Field(..., min_length=8)");
        assert_eq!(end("g(x=\"a b\", y=1) z"), "g(x=\"a b\", y=1) z");
        assert_eq!(end("'a b' user: x"), "'a b'");
    }
}
