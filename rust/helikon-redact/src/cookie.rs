//! Cookie headers (attack R5): `Cookie:` and `Set-Cookie:` carry session identifiers under
//! names that say nothing (`sessionid`, `_gh_sess`, `connect.sid`), so every cookie value
//! of the header is masked and the cookie names and attributes stay:
//! `Cookie: sessionid=***; theme=***`, `Set-Cookie: sid=***; Path=/; HttpOnly`.
//!
//! A header is `Cookie` or `Set-Cookie` (any case; the word may follow `-`, `_` or a
//! non-word byte, as in `X-Cookie`), then an optional closing quote of a quoted key
//! (`"Cookie": "..."`, `'cookie': '...'`), optional blanks and a `:` or `=`. Its value
//! runs to the end of the line or to the quote that opened it. Each `;`-separated
//! `name=value` pair whose name is not a cookie attribute (`Path`, `Domain`, `Expires`,
//! `Max-Age`, `SameSite`, ...) has its value masked.
//!
//! Candidates are the positions of `ookie`/`OOKIE` from the trigger pass; each reads its
//! own line once, and a header's value is skipped past, so the scan is linear.
use crate::finding::{Finding, FindingKind};

/// The trigger literals (the cookie word without its first letter, which may be either
/// case).
pub(crate) const LITERALS: &[&str] = &["ookie", "OOKIE"];

/// Cookie attributes of `Set-Cookie`, whose values are not secrets.
const ATTRIBUTES: &[&str] = &[
    "path",
    "domain",
    "expires",
    "max-age",
    "samesite",
    "secure",
    "httponly",
    "priority",
    "partitioned",
    "version",
    "comment",
];

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Append cookie values, given every position of a [`LITERALS`] entry (sorted).
pub(crate) fn scan(text: &str, hits: &[usize], mask: &str, out: &mut Vec<Finding>) {
    let b = text.as_bytes();
    let mut done = 0usize;
    for &h in hits {
        if h < done || h == 0 {
            continue;
        }
        if let Some(end) = header_at(b, h, mask, out) {
            done = end;
        }
    }
}

/// The header whose cookie word's `ookie` is at `h`: mask its values, return its end.
fn header_at(b: &[u8], h: usize, mask: &str, out: &mut Vec<Finding>) -> Option<usize> {
    let c = h - 1;
    if !matches!(b.get(c), Some(b'C' | b'c')) {
        return None;
    }
    if c > 0 && b.get(c - 1).is_some_and(|&p| p.is_ascii_alphanumeric()) {
        return None;
    }
    let mut p = h + 5;
    if matches!(b.get(p), Some(b'"' | b'\'')) {
        p += 1;
    }
    while matches!(b.get(p), Some(b' ' | b'\t')) {
        p += 1;
    }
    if !matches!(b.get(p), Some(b':' | b'=')) {
        return None;
    }
    p += 1;
    while matches!(b.get(p), Some(b' ' | b'\t')) {
        p += 1;
    }
    let quote = match b.get(p) {
        Some(&q @ (b'"' | b'\'')) => {
            p += 1;
            Some(q)
        }
        _ => None,
    };
    let end = b
        .get(p..)
        .and_then(|r| {
            r.iter()
                .position(|&x| x == b'\n' || x == b'\r' || Some(x) == quote)
        })
        .map_or(b.len(), |i| p + i);
    pairs(b, p, end, mask, out);
    Some(end)
}

/// Mask the values of the `name=value` pairs in `b[from..end]`.
fn pairs(b: &[u8], from: usize, end: usize, mask: &str, out: &mut Vec<Finding>) {
    let mut at = from;
    while at < end {
        let stop = b
            .get(at..end)
            .and_then(|r| r.iter().position(|&x| x == b';'))
            .map_or(end, |i| at + i);
        let pair = b.get(at..stop).unwrap_or_default();
        if let Some(eq) = pair.iter().position(|&x| x == b'=') {
            let name = pair.get(..eq).unwrap_or_default().trim_ascii();
            let (mut vs, mut ve) = (at + eq + 1, stop);
            while vs < ve && b.get(vs).is_some_and(|x| x.is_ascii_whitespace()) {
                vs += 1;
            }
            // A cookie value holds no blank or quote: one ends it (a header inside a quoted
            // argument, `-H 'Cookie: sid=v' URL`).
            if let Some(i) = b.get(vs..ve).and_then(|v| {
                v.iter()
                    .position(|&x| x.is_ascii_whitespace() || x == b'"' || x == b'\'')
            }) {
                ve = vs + i;
            }
            let attribute = ATTRIBUTES
                .iter()
                .any(|a| a.as_bytes().eq_ignore_ascii_case(name));
            let value = b.get(vs..ve).unwrap_or_default();
            if !attribute
                && !name.is_empty()
                && name.iter().all(|&x| is_word(x) || b"-.%$".contains(&x))
                && !value.is_empty()
                && value != mask.as_bytes()
            {
                out.push(Finding::new(FindingKind::SecretKeyValue, vs, ve));
            }
        }
        at = stop + 1;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn masked(text: &str) -> Vec<&str> {
        let hits: Vec<usize> = LITERALS
            .iter()
            .flat_map(|l| text.match_indices(l).map(|(i, _)| i))
            .collect();
        let mut hits = hits;
        hits.sort_unstable();
        let mut out = Vec::new();
        scan(text, &hits, "***", &mut out);
        out.iter().map(|f| &text[f.start..f.end]).collect()
    }

    #[test]
    fn headers_in_several_spellings() {
        assert_eq!(
            masked("Cookie: sessionid=abc123; theme=dark\nok"),
            vec!["abc123", "dark"]
        );
        assert_eq!(
            masked("< set-cookie: _gh_sess=Zm9v%3D; Path=/; HttpOnly; SameSite=Lax"),
            vec!["Zm9v%3D"]
        );
        assert_eq!(
            masked("curl -H 'Cookie: sid=s3cr3t' https://x"),
            vec!["s3cr3t"]
        );
        assert_eq!(
            masked("{\"Cookie\": \"connect.sid=s%3Aabc\"}"),
            vec!["s%3Aabc"]
        );
        assert!(masked("cookie consent: accepted, cookies: none").is_empty());
        assert!(masked("Cookie: sid=***").is_empty());
    }
}
