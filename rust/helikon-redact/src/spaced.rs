//! Secrets whose key and value are separated by blanks only: command-line flags
//! (`--password hunter2`, `--api-key "k"`) and netrc entries (`machine h login u password
//! p`, or `password p` on the line after `login u`).
//!
//! `--name=value` is the key-name pass's ([`crate::keyvalue`]); here the flag is followed by
//! blanks and then its value, one shell word ([`crate::value::shell_word_end`]). The flag's
//! name must be secret-named ([`crate::names`]: `--password`, `--db-password`, `--token`,
//! `--client-secret`; not `--password-file` or `--tokens`). A value that starts with `-`
//! is the next flag, and the value rules of [`crate::context`] apply as for `KEY=value`:
//! help-text metavariables (`--password PASSWORD`, `--token <token>`), references
//! (`--token $GH_TOKEN`, `--password "$(pass show db)"`) and placeholders are left alone.
//!
//! netrc's `password` keyword counts only in a netrc shape: after `machine NAME` or
//! `login NAME` on its own line, or alone with its value on a line right after a `login` or
//! `machine` line. Both searches jump between literal hits (`--`, `password`), and each hit
//! reads one flag name and one word: linear.
use memchr::memmem;

use crate::context::{self, Skip};
use crate::finding::{Finding, FindingKind};
use crate::names;
use crate::value::shell_word_end;

fn is_hspace(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// The lines of one text, asked about at increasing positions: each line's bounds are
/// found once, however many hits it holds (the scans stay linear on one long line).
struct Lines<'a> {
    bytes: &'a [u8],
    current: Option<(usize, usize)>,
}

impl<'a> Lines<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Self {
            bytes,
            current: None,
        }
    }

    /// The line holding byte `at` (positions asked must not decrease).
    fn at(&mut self, at: usize) -> (usize, usize) {
        match self.current {
            Some((s, e)) if s <= at && at <= e => (s, e),
            _ => {
                let line = line_of(self.bytes, at);
                self.current = Some(line);
                line
            }
        }
    }
}

/// The line around byte `at`: `(start, end)`, `end` at the `\n` (or the text end).
fn line_of(bytes: &[u8], at: usize) -> (usize, usize) {
    let start = bytes
        .get(..at)
        .and_then(|b| memchr::memrchr(b'\n', b))
        .map_or(0, |i| i + 1);
    let end = bytes
        .get(at..)
        .and_then(|b| memchr::memchr(b'\n', b))
        .map_or(bytes.len(), |i| at + i);
    (start, end)
}

/// The value word after blanks at `from` (up to `eol`, trailing `\r` excluded):
/// `(start, end)`, or `None` if the line ends first.
fn value_after(bytes: &[u8], from: usize, eol: usize) -> Option<(usize, usize)> {
    let mut v = from;
    while v < eol && bytes.get(v).is_some_and(|&b| is_hspace(b)) {
        v += 1;
    }
    if v == from || v >= eol {
        return None;
    }
    let mut limit = eol;
    if bytes.get(limit.wrapping_sub(1)) == Some(&b'\r') {
        limit -= 1;
    }
    let end = shell_word_end(bytes, v, limit);
    (end > v).then_some((v, end))
}

/// Is the value `text[vs..ve]` of key `key` a secret to mask?
fn is_secret_value(text: &str, key: &str, vs: usize, ve: usize, mask: &str) -> bool {
    let value = text.get(vs..ve).unwrap_or_default();
    let cx = context::ValueCx {
        key,
        quoted: false,
        shell_word: true,
        allow_code: false,
        typed_default: false,
    };
    value != mask
        && !matches!(
            context::non_secret_value(&cx, value),
            Some(Skip::Past | Skip::Into)
        )
}

/// Append the values of `--secret-flag VALUE` and netrc passwords in `text`.
pub(crate) fn scan(text: &str, mask: &str, out: &mut Vec<Finding>) {
    flags(text, mask, out);
    netrc(text, mask, out);
}

fn flags(text: &str, mask: &str, out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    let mut lines = Lines::new(bytes);
    let mut from = 0usize;
    static DASHES: std::sync::LazyLock<memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memmem::Finder::new(b"--"));
    while let Some(i) = bytes.get(from..).and_then(|b| DASHES.find(b)) {
        let at = from + i;
        from = at + 2;
        // `--` must start a word (`-o --password`, not `a--password`).
        if at > 0
            && bytes
                .get(at - 1)
                .is_some_and(|b| !b.is_ascii_whitespace() && *b != b'"' && *b != b'\'')
        {
            continue;
        }
        let name_start = at + 2;
        let mut name_end = name_start;
        while bytes
            .get(name_end)
            .is_some_and(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        {
            name_end += 1;
        }
        from = name_end.max(from);
        if name_end == name_start || !bytes.get(name_end).is_some_and(|&b| is_hspace(b)) {
            continue;
        }
        let name = text.get(name_start..name_end).unwrap_or_default();
        if !names::is_secret_name(name) {
            continue;
        }
        let (_, eol) = lines.at(name_end);
        let Some((vs, ve)) = value_after(bytes, name_end, eol) else {
            continue;
        };
        if bytes.get(vs) == Some(&b'-') {
            continue;
        }
        let key = text.get(at..name_end).unwrap_or_default();
        if is_secret_value(text, key, vs, ve, mask) {
            out.push(Finding::new(FindingKind::SecretKeyValue, vs, ve));
            from = ve;
        }
    }
}

/// Does `line` (trimmed at the start) begin with `word` and a blank?
fn starts_with_word(line: &[u8], word: &[u8]) -> bool {
    let t = line
        .iter()
        .position(|&b| !is_hspace(b))
        .map_or(&[][..], |i| line.get(i..).unwrap_or_default());
    t.starts_with(word) && t.get(word.len()).is_some_and(|&b| is_hspace(b))
}

fn netrc(text: &str, mask: &str, out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    let mut lines = Lines::new(bytes);
    static PASSWORD: std::sync::LazyLock<memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memmem::Finder::new(b"password"));
    for at in PASSWORD.find_iter(bytes) {
        let after = at + b"password".len();
        let word_start = at == 0
            || bytes
                .get(at - 1)
                .is_some_and(|&b| is_hspace(b) || b == b'\n');
        if !word_start || !bytes.get(after).is_some_and(|&b| is_hspace(b)) {
            continue;
        }
        let (ls, le) = lines.at(at);
        let line = bytes.get(ls..le).unwrap_or_default();
        let netrc_line = starts_with_word(line, b"machine")
            || starts_with_word(line, b"default")
            || login_before(bytes, ls, at);
        let alone = bytes
            .get(ls..at)
            .is_some_and(|b| b.iter().all(|&c| is_hspace(c)))
            && ls > 0
            && {
                let (ps, pe) = line_of(bytes, ls - 1);
                bytes.get(ps..pe).is_some_and(|p| {
                    starts_with_word(p, b"login") || starts_with_word(p, b"machine")
                })
            };
        if !(netrc_line || alone) {
            continue;
        }
        let Some((vs, ve)) = value_after(bytes, after, le) else {
            continue;
        };
        // Alone on its line, the value must be the line's last word.
        let rest_blank = bytes
            .get(ve..le)
            .is_some_and(|r| r.iter().all(u8::is_ascii_whitespace));
        if !netrc_line && !rest_blank {
            continue;
        }
        if is_secret_value(text, "password", vs, ve, mask) {
            out.push(Finding::new(FindingKind::SecretKeyValue, vs, ve));
        }
    }
}

/// Do the two words right before `at` (on its line, from `ls`) read `login NAME`? Reads at
/// most [`LOOK_BACK`] bytes.
fn login_before(bytes: &[u8], ls: usize, at: usize) -> bool {
    const LOOK_BACK: usize = 256;
    let from = ls.max(at.saturating_sub(LOOK_BACK));
    let before = bytes.get(from..at).unwrap_or_default();
    let mut words = before
        .split(|&b| is_hspace(b))
        .filter(|w| !w.is_empty())
        .rev();
    let _name = words.next();
    words.next() == Some(b"login".as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        scan(text, "***", &mut out);
        out.iter().map(|f| &text[f.start..f.end]).collect()
    }

    #[test]
    fn flags_with_a_blank() {
        assert_eq!(masked("mysql --password hunter2 --user bob"), ["hunter2"]);
        assert_eq!(masked("x --api-key 'a b' -v"), ["'a b'"]);
        assert_eq!(masked("x --db-password=h --token t"), ["t"]);
        assert_eq!(masked("x --password --user bob"), Vec::<&str>::new());
        assert_eq!(
            masked("x --password-file /run/pw --tokens 5"),
            Vec::<&str>::new()
        );
        assert_eq!(
            masked("  --password PASSWORD  the password"),
            Vec::<&str>::new()
        );
        assert_eq!(masked("  --token <token>"), Vec::<&str>::new());
        assert_eq!(masked("gh --token $GH_TOKEN"), Vec::<&str>::new());
        assert_eq!(masked("a--password x"), Vec::<&str>::new());
    }

    #[test]
    fn netrc_entries() {
        assert_eq!(masked("machine h login u password p4ss\n"), ["p4ss"]);
        assert_eq!(masked("machine h\n  login u\n  password p4ss\n"), ["p4ss"]);
        assert_eq!(
            masked("default login anonymous password me@x.org"),
            ["me@x.org"]
        );
        assert_eq!(masked("the password is long\n"), Vec::<&str>::new());
        assert_eq!(
            masked("login ok\npassword reset sent\n"),
            Vec::<&str>::new()
        );
    }
}
