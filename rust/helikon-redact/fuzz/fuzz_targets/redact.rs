//! Fuzz the redactor: no panic on any input, and the invariants the crate promises.
//!
//! Input layout: the first line (up to `\n`) is a known secret, the rest is the text. Run:
//! `cargo +nightly fuzz run redact` (or `RUSTC_BOOTSTRAP=1 cargo fuzz run redact`).
#![no_main]

use helikon_redact::{to_char_offsets, Redactor};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let (secret, text) = input.split_once('\n').unwrap_or(("", input));
    let Ok(r) = Redactor::new([secret]) else {
        return;
    };

    // Findings are sorted, disjoint, on char boundaries, and agree with redact().
    let found = r.findings(text);
    let mut spliced = String::new();
    let mut at = 0;
    for f in &found {
        assert!(at <= f.start && f.start < f.end && f.end <= text.len());
        assert!(text.is_char_boundary(f.start) && text.is_char_boundary(f.end));
        spliced.push_str(&text[at..f.start]);
        spliced.push_str(r.mask());
        at = f.end;
    }
    spliced.push_str(&text[at..]);
    let once = r.redact(text);
    assert_eq!(once, spliced);
    // The borrowing form agrees, and borrows exactly when nothing was found.
    let cow = r.redact_cow(text);
    assert_eq!(cow, once);
    assert_eq!(
        matches!(cow, std::borrow::Cow::Borrowed(_)),
        found.is_empty()
    );

    // Char offsets are monotone and within the char count.
    let chars = to_char_offsets(text, &found);
    let n = text.chars().count();
    assert!(chars.iter().all(|f| f.start < f.end && f.end <= n));

    // An alphanumeric known secret never survives (the mask breaks any alnum run).
    if helikon_redact::is_usable_secret(secret) && secret.bytes().all(|b| b.is_ascii_alphanumeric())
    {
        let lower = once.to_ascii_lowercase();
        assert!(!lower.contains(&secret.to_ascii_lowercase()));
    }

    // Idempotent.
    assert_eq!(r.redact(&once), once);

    // A cut (attack R9): the head and tail shown are a prefix and a suffix of the redacted
    // text, within the limit, on char boundaries (they are `String`s).
    let keep = text.len() / 3;
    let head = r.redact_head(text, keep);
    assert!(head.len() <= keep && once.starts_with(&head));
    let tail = r.redact_tail(text, keep);
    assert!(tail.len() <= keep.max(once.len()) && once.ends_with(&tail));
});
