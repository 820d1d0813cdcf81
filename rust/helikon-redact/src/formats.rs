//! Credentials named by a file format whose key is too common a word for the key-name
//! pass: docker's `config.json` (`"auths": {"host": {"auth": "BASE64"}}`) and `.npmrc`'s
//! legacy `_auth=BASE64`.
//!
//! `auth` alone is an ordinary word (`"auth": "oauth2"`, `auth: true`), so it is not
//! secret-named ([`crate::names`]); here the value must also read as the base64 of
//! `user:password` the formats store: at least 8 base64 characters (`=` padding allowed)
//! and nothing else. The other keys of these files are secret-named and found by the
//! key-name pass: `identitytoken`, `registrytoken`, `_authToken`, `_password`. Each
//! literal hit reads one value: linear.
use memchr::memmem;

use crate::finding::{Finding, FindingKind};

/// Shortest base64 `user:password` accepted.
const MIN_AUTH_LEN: usize = 8;

fn is_b64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=')
}

/// The base64 run starting at `at`, if it is long enough and decodes to `user:password`
/// (a `:` in the decoded bytes): its end.
fn b64_run(bytes: &[u8], at: usize) -> Option<usize> {
    let run = bytes.get(at..)?;
    let len = run.iter().position(|&b| !is_b64(b)).unwrap_or(run.len());
    let value = run.get(..len)?;
    (len >= MIN_AUTH_LEN && decodes_with_colon(value)).then_some(at + len)
}

/// Does the standard base64 `value` decode to bytes holding a `:`? Decodes in 4-character
/// groups, stopping at padding; a character outside the alphabet fails.
fn decodes_with_colon(value: &[u8]) -> bool {
    fn sextet(c: u8) -> Option<u32> {
        match c {
            b'A'..=b'Z' => Some(u32::from(c - b'A')),
            b'a'..=b'z' => Some(u32::from(c - b'a') + 26),
            b'0'..=b'9' => Some(u32::from(c - b'0') + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    }
    let body = value.split(|&b| b == b'=').next().unwrap_or_default();
    for group in body.chunks(4) {
        let mut acc = 0u32;
        for &c in group {
            let Some(v) = sextet(c) else {
                return false;
            };
            acc = (acc << 6) | v;
        }
        let bits = 6 * group.len();
        let acc = acc << (24 - bits);
        let n = bits / 8;
        let decoded = [(acc >> 16) as u8, (acc >> 8) as u8, acc as u8];
        if decoded.iter().take(n).any(|&b| b == b':') {
            return true;
        }
    }
    false
}

fn skip_blanks(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(|&b| b == b' ' || b == b'\t') {
        i += 1;
    }
    i
}

/// Append docker `"auth": "..."` and npmrc `_auth=...` values found in `text`.
pub(crate) fn scan(text: &str, out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    // docker: `"auth"`, blanks, `:`, blanks, `"BASE64"`.
    static DOCKER: std::sync::LazyLock<memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memmem::Finder::new(b"\"auth\""));
    static NPMRC: std::sync::LazyLock<memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memmem::Finder::new(b"_auth"));
    for at in DOCKER.find_iter(bytes) {
        let mut i = skip_blanks(bytes, at + 6);
        if bytes.get(i) != Some(&b':') {
            continue;
        }
        i = skip_blanks(bytes, i + 1);
        if bytes.get(i) != Some(&b'"') {
            continue;
        }
        if let Some(end) = b64_run(bytes, i + 1).filter(|&e| bytes.get(e) == Some(&b'"')) {
            out.push(Finding::new(FindingKind::SecretKeyValue, i + 1, end));
        }
    }
    // npmrc: `_auth=BASE64` (also `//host/:_auth=`), the value ending its word.
    for at in NPMRC.find_iter(bytes) {
        let starts_key = at == 0
            || bytes
                .get(at - 1)
                .is_some_and(|&b| b.is_ascii_whitespace() || b == b':');
        let mut i = skip_blanks(bytes, at + 5);
        if !starts_key || bytes.get(i) != Some(&b'=') {
            continue;
        }
        i = skip_blanks(bytes, i + 1);
        let ends_word = |e: usize| bytes.get(e).is_none_or(|b| b.is_ascii_whitespace());
        if let Some(end) = b64_run(bytes, i).filter(|&e| ends_word(e)) {
            out.push(Finding::new(FindingKind::SecretKeyValue, i, end));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        scan(text, &mut out);
        out.iter().map(|f| &text[f.start..f.end]).collect()
    }

    #[test]
    fn docker_and_npmrc() {
        let docker = r#"{"auths": {"ghcr.io": {"auth": "dXNlcjpwYXNzd29yZA=="}}}"#;
        assert_eq!(masked(docker), ["dXNlcjpwYXNzd29yZA=="]);
        assert_eq!(masked("\"auth\" :\"Zm9vOmJhcg==\""), ["Zm9vOmJhcg=="]);
        assert_eq!(masked("_auth=Zm9vOmJhcg==\n"), ["Zm9vOmJhcg=="]);
        assert_eq!(
            masked("//r.example/:_auth = Zm9vOmJhcg=="),
            ["Zm9vOmJhcg=="]
        );
        assert_eq!(masked(r#"{"auth": "oauth2"}"#), Vec::<&str>::new());
        assert_eq!(masked(r#"{"auth": "required"}"#), Vec::<&str>::new());
        assert_eq!(
            masked(r#"{"auth": "BasicAuthentication"}"#),
            Vec::<&str>::new()
        );
        assert_eq!(masked(r#"{"auth": "with space here"}"#), Vec::<&str>::new());
        assert_eq!(masked("x_auth=Zm9vOmJhcg=="), Vec::<&str>::new());
        assert_eq!(masked("_authToken=abc"), Vec::<&str>::new());
    }
}
