//! AWS secret access keys next to their access key id.
//!
//! A secret access key is 40 characters of base64 (`[A-Za-z0-9/+]`) with no prefix of its
//! own, so alone it cannot be told from other data. Next to an access key id (`AKIA...`,
//! `ASIA...`, found by [`crate::tokens`]) it can: logs and scripts print the pair together
//! (`aws configure set ... AKIA... wJalr...`, `AccessKeyId: AKIA... SecretAccessKey: ...`,
//! a CSV row of `credentials.csv`). Within [`WINDOW`] bytes either side of each key id, on
//! the id's line or the next, a run of exactly 40 such characters with both letter cases
//! and no other word character around it is masked. A git SHA (hex, one case) or a
//! sha256 digest (64 characters) does not qualify.
//!
//! (`aws_secret_access_key = ...` in a `credentials` file is found by the key-name pass:
//! `SECRET_ACCESS_KEY` is secret-named.) Each key id reads at most `2 * WINDOW` bytes, and
//! there is at most one key id per 20 bytes, so the scan is linear.
use crate::finding::{Finding, FindingKind};

/// Bytes searched on each side of an access key id.
pub(crate) const WINDOW: usize = 160;

/// Length of a secret access key.
const SECRET_LEN: usize = 40;

fn is_secret_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'/' || b == b'+'
}

/// Append the secret access keys near the access key ids among `tokens` (sorted findings of
/// the same text).
pub(crate) fn scan(text: &str, tokens: &[Finding], out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    let mut done = 0usize;
    for t in tokens
        .iter()
        .filter(|t| t.kind == FindingKind::AwsAccessKey)
    {
        let id = bytes.get(t.start..t.start + 4).unwrap_or_default();
        if id != b"AKIA" && id != b"ASIA" {
            continue;
        }
        let lo = line_floor(bytes, t.start.saturating_sub(WINDOW), t.start, 1).max(done);
        let hi = line_ceil(bytes, (t.end + WINDOW).min(bytes.len()), t.end, 1);
        let mut i = lo;
        while i < hi {
            if !bytes.get(i).copied().is_some_and(is_secret_byte) {
                i += 1;
                continue;
            }
            let start = i;
            while i < bytes.len() && bytes.get(i).copied().is_some_and(is_secret_byte) {
                i += 1;
            }
            let run = bytes.get(start..i).unwrap_or_default();
            let before = start.checked_sub(1).and_then(|p| bytes.get(p)).copied();
            let after = bytes.get(i).copied();
            let isolated = !before.is_some_and(|b| b == b'_' || b == b'-')
                && !after.is_some_and(|b| b == b'_' || b == b'-');
            if run.len() == SECRET_LEN && isolated && mixed_case(run) {
                out.push(Finding::new(FindingKind::AwsSecretKey, start, i));
            }
        }
        done = hi.max(i).max(done);
    }
}

/// Both an upper- and a lower-case letter: random base64 has both, hex digests do not.
fn mixed_case(run: &[u8]) -> bool {
    run.iter().any(u8::is_ascii_uppercase) && run.iter().any(u8::is_ascii_lowercase)
}

/// `from`, moved forward so that at most `lines` line breaks lie between it and `at`.
fn line_floor(bytes: &[u8], from: usize, at: usize, lines: usize) -> usize {
    let mut seen = 0usize;
    let mut i = at;
    while i > from {
        if bytes.get(i - 1) == Some(&b'\n') {
            seen += 1;
            if seen > lines {
                return i;
            }
        }
        i -= 1;
    }
    from
}

/// `to`, moved back so that at most `lines` line breaks lie between `at` and it.
fn line_ceil(bytes: &[u8], to: usize, at: usize, lines: usize) -> usize {
    let mut seen = 0usize;
    for i in at..to {
        if bytes.get(i) == Some(&b'\n') {
            seen += 1;
            if seen > lines {
                return i;
            }
        }
    }
    to
}
