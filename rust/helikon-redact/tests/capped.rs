//! Attack R9: an output cut before redaction leaks the secret at the cut. These tests cut
//! the way the captures do (first half and last half kept, `CUT_GUARD` more bytes of context
//! on the dropped side of each cut) and slide every spelling of a secret across both cuts
//! and through the dropped middle, byte by byte: no 8-byte piece of a secret value may
//! survive.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use helikon_redact::{Redactor, CUT_GUARD};

const KNOWN: &str = "Kn0wnV4lue-zq8Rr2T";

/// `(text with the secret, the secret value)`: one spelling per class of matcher.
fn spellings() -> Vec<(String, &'static str)> {
    vec![
        (
            "API_KEY=Qw3rTy8UiOp1AsDfGhJk".into(),
            "Qw3rTy8UiOp1AsDfGhJk",
        ),
        (
            "{\"password\": \"correct horse battery staple zx9\"}".into(),
            "correct horse battery staple zx9",
        ),
        (
            "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8".into(),
            "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
        ),
        (
            "Authorization: Bearer Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5".into(),
            "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5",
        ),
        (format!("login with {KNOWN} now"), KNOWN),
        (
            "git clone https://deploy:S3cr3tPassw0rdX@git.example.com/r.git".into(),
            "S3cr3tPassw0rdX",
        ),
        (
            "db_password: Pa55w0rdLongEnough9".into(),
            "Pa55w0rdLongEnough9",
        ),
        (
            format!(
                "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----",
                ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"; 40].join("\n")
            ),
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
        ),
    ]
}

/// What a capture with room for `cap` bytes shows of `text`.
fn capture(r: &Redactor, text: &str, cap: usize) -> String {
    if text.len() <= cap {
        return r.redact(text);
    }
    let (keep_head, keep_tail) = (cap / 2, cap - cap / 2);
    let head_end = floor(text, (keep_head + CUT_GUARD).min(text.len()));
    let tail_start = ceil(text, text.len().saturating_sub(keep_tail + CUT_GUARD));
    format!(
        "{}\n[... cut ...]\n{}",
        r.redact_head(&text[..head_end], keep_head),
        r.redact_tail(&text[tail_start..], keep_tail)
    )
}

fn floor(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

fn filler(len: usize) -> String {
    let line = "compiling crate number 0042 of the build (ok)\n";
    line.repeat(len / line.len() + 1)[..len].to_string()
}

/// No 8-byte window of `value` is in `out`.
fn assert_no_piece(out: &str, value: &str, what: &str) {
    let b = value.as_bytes();
    for w in b.windows(8.min(b.len())) {
        let piece = std::str::from_utf8(w).unwrap();
        if let Some(at) = out.find(piece) {
            panic!(
                "{what}: {piece:?} leaked in {:?}",
                &out[at.saturating_sub(80)..(at + 40).min(out.len())]
            );
        }
    }
}

fn redactor() -> Redactor {
    Redactor::new([KNOWN]).unwrap()
}

#[test]
fn a_secret_slid_across_the_head_cut_never_leaks() {
    let r = redactor();
    let cap: usize = 4000;
    for (secret, value) in spellings() {
        for lead in (cap / 2 - secret.len() - 8..cap / 2 + 8).step_by(3) {
            let text = format!("{}{secret}{}", filler(lead), filler(CUT_GUARD * 2 + cap));
            let out = capture(&r, &text, cap);
            assert_no_piece(&out, value, &format!("{secret:.20} at {lead}"));
        }
    }
}

#[test]
fn a_secret_slid_across_the_tail_cut_never_leaks() {
    let r = redactor();
    let cap: usize = 4000;
    for (secret, value) in spellings() {
        let back = cap - cap / 2;
        for trail in (back.saturating_sub(8)..back + secret.len() + 8).step_by(3) {
            let text = format!("{}{secret}{}", filler(CUT_GUARD * 2 + cap), filler(trail));
            let out = capture(&r, &text, cap);
            assert_no_piece(
                &out,
                value,
                &format!("{secret:.20} ending {trail} from the end"),
            );
        }
    }
}

#[test]
fn a_key_in_the_dropped_middle_does_not_free_its_value() {
    // The key falls in the dropped part, the value runs into the kept tail: one long line.
    let r = redactor();
    let cap: usize = 4000;
    let back = cap - cap / 2;
    for (key, value) in [
        ("API_KEY=", "Qw3rTy8UiOp1AsDfGhJkLz"),
        ("\"client_secret\": \"", "VeryLongClientSecretValue12345"),
        ("--password ", "Hunter2IsNotAGoodPassword9"),
        ("Authorization: token ", "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5"),
    ] {
        for into_tail in [1, 4, 8, 15] {
            let text = format!(
                "{}{key}{value}\" tail words\n{}",
                filler(CUT_GUARD * 3),
                filler(back - into_tail - 14)
            );
            let out = capture(&r, &text, cap);
            assert_no_piece(&out, value, key);
        }
    }
}

#[test]
fn a_private_key_longer_than_the_guard_is_not_shown_from_its_middle() {
    let r = redactor();
    let body = ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"; 2000].join("\n");
    let text = format!(
        "{}-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\nafter\n",
        filler(CUT_GUARD * 2)
    );
    let out = capture(&r, &text, 4000);
    assert_no_piece(&out, "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC", "tail in a block");
    assert!(out.ends_with("\nafter\n"), "{out:.200}");
}

#[test]
fn cuts_fall_on_line_boundaries_and_keep_the_limit() {
    let r = redactor();
    let text = filler(100_000);
    let head = r.redact_head(&text[..2000 + CUT_GUARD], 2000);
    assert!(head.len() <= 2000 && head.len() > 1900 && head.ends_with('\n'));
    let tail = r.redact_tail(&text[text.len() - 2000 - CUT_GUARD..], 2000);
    assert!(tail.len() <= 2000 && tail.len() > 1900);
    assert!(tail.starts_with("compiling crate"), "{tail:.40}");
}

#[test]
fn ten_megabytes_with_secrets_everywhere_keep_none() {
    let r = redactor();
    let mut text = String::with_capacity(10 << 20);
    let mut i = 0usize;
    while text.len() < 10 << 20 {
        let (secret, _) = &spellings()[i % 7];
        text.push_str(&filler(97 + i % 301));
        text.push(' ');
        text.push_str(secret);
        text.push('\n');
        i += 1;
    }
    for cap in [1000, 30_000, 100_000] {
        let out = capture(&r, &text, cap);
        for (_, value) in spellings() {
            assert_no_piece(&out, value, &format!("10 MB, cap {cap}"));
        }
    }
}
