//! Passwords in URL userinfo: `scheme://user:PASSWORD@host/...`.
//!
//! A candidate starts at a `://` (listed by [`crate::triggers`]) and reads, as the pattern
//! `://[^\s:/?#@"'<>]*:[^\s/"'<>]*@` would (Unicode whitespace, leftmost-first): a user
//! name up to the first byte it cannot hold, which must be `:`, then the longest run that
//! can be a password, which must hold an `@`; the match ends at the *last* `@` of that run,
//! so a raw `@` inside a password stays inside the masked span. Raw `#` and `?` are accepted
//! inside the password (people do not percent-encode them); a `/` or whitespace ends the
//! candidate. An empty password, or one that is already the mask, is left alone.
//! Each candidate reads only up to the next `/`, and the next `://` holds one, so the scan
//! is linear.
//!
//! The userinfo ranges are handed to the key-name pass, which ignores keys inside them
//! (`https://x-access-token:...@`, `://user_token::pw@`): the user name is not a key.
use crate::finding::{Finding, FindingKind};

/// Can `c` be part of the user name?
fn in_user(c: char) -> bool {
    !(c.is_whitespace() || matches!(c, ':' | '/' | '?' | '#' | '@' | '"' | '\'' | '<' | '>'))
}

/// Can `c` be part of the password run (which also holds the `@`s)?
fn in_password(c: char) -> bool {
    !(c.is_whitespace() || matches!(c, '/' | '"' | '\'' | '<' | '>'))
}

/// The end of the run of chars of `class` in `text` from byte `from`, and the position of
/// the last `@` in it. ASCII bytes are classified directly; other chars are decoded.
fn run(text: &str, from: usize, class: impl Fn(char) -> bool) -> (usize, Option<usize>) {
    let bytes = text.as_bytes();
    let mut last_at = None;
    let mut i = from;
    while let Some(&b) = bytes.get(i) {
        let (c, len) = if b.is_ascii() {
            (char::from(b), 1)
        } else {
            match text.get(i..).and_then(|rest| rest.chars().next()) {
                Some(c) => (c, c.len_utf8()),
                None => return (i, last_at),
            }
        };
        if !class(c) {
            return (i, last_at);
        }
        if c == '@' {
            last_at = Some(i);
        }
        i += len;
    }
    (text.len(), last_at)
}

/// The userinfo match of the candidate `://` at `s`: `(colon, at)`, the positions of the
/// `:` that ends the user name and of the `@` that ends the userinfo.
fn userinfo_at(text: &str, s: usize) -> Option<(usize, usize)> {
    let (colon, _) = run(text, s + 3, in_user);
    if text.as_bytes().get(colon) != Some(&b':') {
        return None;
    }
    let (_, last_at) = run(text, colon + 1, in_password);
    Some((colon, last_at?))
}

/// Append URL passwords to `out` and every userinfo range (`://` to `@` inclusive) to
/// `userinfo`, given the positions of every `://` in `text` (sorted).
pub(crate) fn scan(
    text: &str,
    schemes: &[usize],
    mask: &str,
    out: &mut Vec<Finding>,
    userinfo: &mut Vec<(usize, usize)>,
) {
    let mut at = 0usize;
    for &s in schemes {
        if s < at {
            continue;
        }
        let Some((colon, end)) = userinfo_at(text, s) else {
            continue;
        };
        userinfo.push((s, end + 1));
        let start = colon + 1;
        if start < end && text.get(start..end) != Some(mask) {
            out.push(Finding::new(FindingKind::UrlPassword, start, end));
        }
        at = end + 1;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use regex::Regex;

    use super::*;

    type Spans = Vec<(usize, usize)>;

    /// `(passwords, userinfo ranges)`.
    fn both(text: &str) -> (Spans, Spans) {
        let mut out = Vec::new();
        let mut userinfo = Vec::new();
        let schemes: Vec<usize> = text.match_indices("://").map(|(i, _)| i).collect();
        scan(text, &schemes, "***", &mut out, &mut userinfo);
        (out.iter().map(|f| (f.start, f.end)).collect(), userinfo)
    }

    /// The scanner finds what the pattern in the module doc finds.
    #[test]
    fn agrees_with_the_pattern() {
        let re = Regex::new(r#"://[^\s:/?#@"'<>]*:[^\s/"'<>]*@"#).unwrap();
        const PIECES: &[&str] = &[
            "://",
            ":",
            "/",
            "@",
            "u",
            "pw",
            "?",
            "#",
            " ",
            "\u{a0}",
            "\u{2028}",
            "é",
            "\"",
            "'",
            "<",
            ">",
            "\n",
            "\u{b}",
            "***",
            "https",
            "x-access-token",
            ":/",
            "//",
        ];
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..30_000 {
            let mut next = || {
                state ^= state >> 12;
                state ^= state << 25;
                state ^= state >> 27;
                state.wrapping_mul(0x2545_F491_4F6C_DD1D)
            };
            let n = 1 + (next() % 16) as usize;
            let text: String = (0..n)
                .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                .collect();
            let (found, userinfo) = both(&text);
            let want: Vec<(usize, usize)> =
                re.find_iter(&text).map(|m| (m.start(), m.end())).collect();
            assert_eq!(userinfo, want, "{text:?}");
            let pw: Vec<(usize, usize)> = want
                .iter()
                .filter_map(|&(s, e)| {
                    let colon = s + 3 + text[s + 3..].find(':')?;
                    let (ps, pe) = (colon + 1, e - 1);
                    (ps < pe && &text[ps..pe] != "***").then_some((ps, pe))
                })
                .collect();
            assert_eq!(found, pw, "{text:?}");
        }
    }

    #[test]
    fn passwords() {
        assert_eq!(both("https://bob:pw123@db:5432").0, vec![(12, 17)]);
        assert_eq!(both("https://bob:p@w@db").0, vec![(12, 15)]);
        assert_eq!(both("https://bob@db https://a:@b").0, vec![]);
    }
}
