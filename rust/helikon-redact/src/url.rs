//! Passwords in URL userinfo: `scheme://user:PASSWORD@host/...`.
//!
//! The regex matches from `://` through the last `@` of the authority (a raw `@` inside a
//! password therefore stays inside the masked span); the password starts after the first
//! `:` of the userinfo. Raw `#` and `?` are accepted inside the password (people do not
//! percent-encode them); a `/` or whitespace ends the candidate. An empty password, or one that is already the mask, is left alone.
//! The userinfo ranges are handed to the key-name pass, which ignores keys inside them
//! (`https://x-access-token:...@`, `://user_token::pw@`): the user name is not a key.
use regex::Regex;

use crate::finding::{Finding, FindingKind};

pub(crate) fn url_regex() -> Result<Regex, regex::Error> {
    Regex::new(r"://[^\s:/?#@\x22'<>]*:[^\s/\x22'<>]*@")
}

/// Append URL passwords to `out` and every userinfo range (`://` to `@`) to `userinfo`.
pub(crate) fn scan(
    re: &Regex,
    text: &str,
    mask: &str,
    out: &mut Vec<Finding>,
    userinfo: &mut Vec<(usize, usize)>,
) {
    for m in re.find_iter(text) {
        userinfo.push((m.start(), m.end()));
        let s = m.as_str();
        let Some(colon) = s.get(3..).and_then(|rest| rest.find(':')) else {
            continue;
        };
        let start = m.start() + 3 + colon + 1;
        let end = m.end() - 1;
        if start < end && text.get(start..end) != Some(mask) {
            out.push(Finding::new(FindingKind::UrlPassword, start, end));
        }
    }
}
