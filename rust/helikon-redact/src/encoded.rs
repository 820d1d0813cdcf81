//! Encoded forms of a known value (attack R12): the spellings a tool prints a registered
//! secret in without printing its bytes as they are.
//!
//! For each known value the automaton also holds:
//!
//! * its JSON-escaped forms: `"` `\` and control characters escaped (`\n`, `\u001b`), then
//!   also `/` as `\/`, then also every non-ASCII character as `\uXXXX` (surrogate pairs
//!   past U+FFFF), as `json.dumps`, `JSON.stringify` and PHP print them;
//! * its URL-encoded forms: every byte outside `[A-Za-z0-9-._~]` as `%XX`, and the form
//!   encoding with a blank as `+` (hex digits match in either case, as every known value
//!   does);
//! * its base64, standard and URL-safe alphabets, at each of the three alignments a value
//!   can have inside a longer encoded text (`base64("user:" + secret)`): the characters
//!   that encode only the value's own bytes (so up to two of its first bytes and the last
//!   partial group stay outside the match);
//! * its hexadecimal form.
//!
//! A form equal to the value, or shorter than the value's length floor, is not added.
use crate::known::MIN_SECRET_LEN;

const B64_STD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Every encoded form of `value` that differs from it (deduplicated, in a fixed order).
pub(crate) fn variants(value: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |s: String| {
        if s != value && s.len() >= MIN_SECRET_LEN && !out.contains(&s) {
            out.push(s);
        }
    };
    add(json(value, false, false));
    add(json(value, false, true));
    add(json(value, true, false));
    add(json(value, true, true));
    add(url(value, false));
    add(url(value, true));
    let bytes = value.as_bytes();
    for skip in 0..3 {
        let Some(rest) = bytes.get(skip..) else {
            break;
        };
        let whole = rest.len() - rest.len() % 3;
        let std = base64(rest.get(..whole).unwrap_or_default());
        add(std.replace('+', "-").replace('/', "_"));
        add(std);
    }
    // The value encoded alone: padded, and unpadded (its last partial group included).
    let full = base64_padded(bytes);
    add(full.replace('+', "-").replace('/', "_"));
    add(full
        .trim_end_matches('=')
        .replace('+', "-")
        .replace('/', "_"));
    add(full.trim_end_matches('=').to_string());
    add(full);
    add(bytes.iter().map(|b| format!("{b:02x}")).collect());
    out
}

/// `value` as a JSON string body; `slash`: `/` as `\/`; `ascii`: non-ASCII as `\uXXXX`.
fn json(value: &str, slash: bool, ascii: bool) -> String {
    let mut s = String::with_capacity(value.len() + 8);
    for c in value.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            '/' if slash => s.push_str("\\/"),
            '\n' => s.push_str("\\n"),
            '\r' => s.push_str("\\r"),
            '\t' => s.push_str("\\t"),
            '\u{8}' => s.push_str("\\b"),
            '\u{c}' => s.push_str("\\f"),
            c if (c as u32) < 0x20 || (ascii && !c.is_ascii()) => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    s.push_str(&format!("\\u{u:04x}"));
                }
            }
            c => s.push(c),
        }
    }
    s
}

/// `value` percent-encoded; `form`: a blank as `+`.
fn url(value: &str, form: bool) -> String {
    let mut s = String::with_capacity(value.len() * 3);
    for &b in value.as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            s.push(char::from(b));
        } else if form && b == b' ' {
            s.push('+');
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// Standard base64 of `bytes` with `=` padding.
fn base64_padded(bytes: &[u8]) -> String {
    let whole = bytes.len() - bytes.len() % 3;
    let mut s = base64(bytes.get(..whole).unwrap_or_default());
    let rest = bytes.get(whole..).unwrap_or_default();
    if !rest.is_empty() {
        let tail = base64(rest);
        let keep = rest.len() + 1;
        s.push_str(tail.get(..keep).unwrap_or_default());
        s.push_str(&"=".repeat(4 - keep));
    }
    s
}

/// Standard base64 of `bytes` (a multiple of 3 long, so no padding; a shorter last
/// group is encoded as if padded with zero bytes).
fn base64(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() / 3 * 4);
    for g in bytes.chunks(3) {
        let n = g.iter().fold(0u32, |acc, &b| (acc << 8) | u32::from(b)) << (8 * (3 - g.len()));
        for i in 0..4 {
            let idx = ((n >> (18 - 6 * i)) & 63) as usize;
            s.push(char::from(*B64_STD.get(idx).unwrap_or(&b'A')));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn forms() {
        assert_eq!(
            json("a\"b\\c/d\n\u{1b}é😀", true, true),
            "a\\\"b\\\\c\\/d\\n\\u001b\\u00e9\\ud83d\\ude00"
        );
        assert_eq!(url("a b/c", false), "a%20b%2Fc");
        assert_eq!(url("a b/c", true), "a+b%2Fc");
        assert_eq!(base64(b"hunter2hu"), "aHVudGVyMmh1");
        assert_eq!(base64_padded(b"hunter2hunter2"), "aHVudGVyMmh1bnRlcjI=");
        assert_eq!(base64_padded(b"hunter2hunter"), "aHVudGVyMmh1bnRlcg==");
        let v = variants("hunter2hunter2");
        for b64 in ["aHVudGVyMmh1bnRl", "dW50ZXIyaHVudGVy", "bnRlcjJodW50ZXIy"] {
            assert!(v.contains(&b64.to_string()), "{v:?}");
        }
        assert!(
            v.contains(&"68756e7465723268756e74657232".to_string()),
            "{v:?}"
        );
        assert!(!v.contains(&"hunter2hunter2".to_string()));
    }
}
