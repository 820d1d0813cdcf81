//! Credentials a URL carries besides a password (attack R5): signed-URL query parameters
//! and a token standing alone as the user name.
//!
//! From each `://` (listed by [`crate::triggers`]) the URL runs to the first whitespace,
//! quote, `<`, `>` or backtick. Inside it:
//!
//! * the value of a query parameter named `X-Amz-Signature`, `X-Amz-Credential`,
//!   `X-Amz-Security-Token`, `X-Goog-Signature`, `X-Goog-Credential`, `Signature`
//!   (CloudFront, GCS V2), `sig` (Azure SAS), `X-Ms-Signature` or `GoogleAccessId`'s partner
//!   `Signature` (any case) is masked up to the next `&`, `;` or `#`;
//! * a user name without a password that reads as a token, 20 or more characters of
//!   `[A-Za-z0-9_-.]` holding both a letter and a digit, is masked: a Sentry DSN's public
//!   key (`https://<32 hex>@o1.ingest.sentry.io/2`) or a token given as the user
//!   (`https://ghp_...@github.com/o/r.git`). `git@`, `user@` and other names stay.
//!
//! A URL is read once: a `://` inside the URL already read (a redirect parameter) is not
//! a new start, so the scan is linear.
use crate::finding::{Finding, FindingKind};

/// Query parameters whose value is a signature or credential (compared ASCII
/// case-insensitively).
const SIGNED_PARAMS: &[&str] = &[
    "x-amz-signature",
    "x-amz-credential",
    "x-amz-security-token",
    "x-goog-signature",
    "x-goog-credential",
    "x-ms-signature",
    "signature",
    "sig",
];

/// Shortest user name read as a token.
const MIN_TOKEN_USER: usize = 20;

fn ends_url(c: u8) -> bool {
    c.is_ascii_whitespace() || matches!(c, b'"' | b'\'' | b'<' | b'>' | b'`')
}

/// Append the signed parameters and token user names of every URL, given the positions
/// of every `://` in `text` (sorted).
pub(crate) fn scan(text: &str, schemes: &[usize], out: &mut Vec<Finding>) {
    let b = text.as_bytes();
    let mut done = 0usize;
    for &s in schemes {
        if s < done {
            continue;
        }
        let end = b
            .get(s..)
            .and_then(|r| r.iter().position(|&c| ends_url(c)))
            .map_or(b.len(), |i| s + i);
        token_user(b, s + 3, end, out);
        if let Some(q) = b
            .get(s..end)
            .and_then(|u| u.iter().position(|&c| c == b'?'))
        {
            params(b, s + q + 1, end, out);
        }
        done = end;
    }
}

/// `://USER@` with no `:` in USER, USER a token: masked.
fn token_user(b: &[u8], from: usize, end: usize, out: &mut Vec<Finding>) {
    let Some(host) = b.get(from..end) else {
        return;
    };
    let user_end = host
        .iter()
        .position(|&c| !(c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.')));
    let Some(n) = user_end else {
        return;
    };
    if host.get(n) != Some(&b'@') || n < MIN_TOKEN_USER {
        return;
    }
    let user = host.get(..n).unwrap_or_default();
    let letter = user.iter().any(u8::is_ascii_alphabetic);
    let digit = user.iter().any(u8::is_ascii_digit);
    if letter && digit {
        out.push(Finding::new(FindingKind::UrlPassword, from, from + n));
    }
}

/// The query `b[from..end]`: mask the values of [`SIGNED_PARAMS`].
fn params(b: &[u8], from: usize, end: usize, out: &mut Vec<Finding>) {
    let mut at = from;
    while at < end {
        let stop = b
            .get(at..end)
            .and_then(|r| r.iter().position(|&c| matches!(c, b'&' | b';' | b'#')))
            .map_or(end, |i| at + i);
        if let Some(eq) = b
            .get(at..stop)
            .and_then(|p| p.iter().position(|&c| c == b'='))
        {
            let name = b.get(at..at + eq).unwrap_or_default();
            let value = at + eq + 1;
            if value < stop
                && SIGNED_PARAMS
                    .iter()
                    .any(|p| p.as_bytes().eq_ignore_ascii_case(name))
            {
                out.push(Finding::new(FindingKind::UrlPassword, value, stop));
            }
        }
        if b.get(stop) == Some(&b'#') {
            return;
        }
        at = stop + 1;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn masked(text: &str) -> Vec<&str> {
        let schemes: Vec<usize> = text.match_indices("://").map(|(i, _)| i).collect();
        let mut out = Vec::new();
        scan(text, &schemes, &mut out);
        out.iter().map(|f| &text[f.start..f.end]).collect()
    }

    #[test]
    fn signed_params_and_token_users() {
        assert_eq!(
            masked("https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIA%2F1&X-Amz-Signature=ab12 x"),
            vec!["AKIA%2F1", "ab12"]
        );
        assert_eq!(
            masked("https://a.blob.core.windows.net/c?sv=1&sig=Zm9v%3D#f"),
            vec!["Zm9v%3D"]
        );
        assert_eq!(
            masked("dsn https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/5"),
            vec!["0123456789abcdef0123456789abcdef"]
        );
        assert!(masked("ssh://git@github.com/o/r https://example.com/?q=sig").is_empty());
        assert!(masked("https://docs.example.com/?signature_help=1&page=2").is_empty());
    }
}
