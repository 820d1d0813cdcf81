//! The hand-written token scanner against the patterns it implements, compiled with `regex`
//! as one leftmost-first alternation ([`Fallback`], the oracle), on texts built to sit on
//! every edge: literal prefixes, runs just under and over each length bound, word bytes
//! around them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use crate::triggers::{Hits, Triggers};

/// The regex oracle: the same patterns as one leftmost-first alternation.
fn oracle(fallback: &Fallback, text: &str) -> Vec<(FindingKind, usize, usize)> {
    let mut out = Vec::new();
    fallback.scan(text, &mut out);
    out.into_iter().map(|f| (f.kind, f.start, f.end)).collect()
}

fn scan(triggers: &Triggers, text: &str) -> Vec<(FindingKind, usize, usize)> {
    let mut hits = Hits::default();
    triggers.find(text, &mut hits);
    let mut out = Vec::new();
    super::scan(text, &hits.tokens, &mut out);
    out.into_iter().map(|f| (f.kind, f.start, f.end)).collect()
}

#[test]
fn literals_and_shapes_start_alike() {
    assert_eq!(PATTERNS.len(), FORMATS.len());
    let kinds: Vec<FindingKind> = FORMATS.iter().map(|(k, _)| *k).collect();
    assert_eq!(kinds, PATTERN_KINDS);
    let firsts: Vec<u8> = FORMATS
        .iter()
        .flat_map(|(_, shape)| shape.first_bytes().iter().copied())
        .collect();
    for l in LITERALS.iter().chain(SHORT_LITERALS) {
        assert!(firsts.contains(&l.as_bytes()[0]), "{l}");
    }
    for b in firsts {
        assert!(
            LITERALS
                .iter()
                .chain(SHORT_LITERALS)
                .any(|l| l.as_bytes()[0] == b),
            "{}",
            b as char
        );
    }
}

#[test]
fn known_tokens() {
    let t = Triggers::compile().unwrap();
    let scan = |text: &str| scan(&t, text);
    let gh = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
    assert_eq!(
        scan(&format!("x {gh} AKIAIOSFODNN7EXAMPLE")),
        vec![
            (FindingKind::GithubToken, 2, 42),
            (FindingKind::AwsAccessKey, 43, 63)
        ]
    );
    let hook = "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX";
    assert_eq!(scan(hook), vec![(FindingKind::SlackToken, 33, hook.len())]);
    assert_eq!(
        scan("sk-learn-something-long-enough-to-look-like-one"),
        vec![]
    );
    assert_eq!(scan("ghp_short"), vec![]);
    let sg = format!(
        "SG.{}.{}",
        "a1B2c3D4e5F6g7H8i9J0k_",
        "Z".repeat(20) + &"x-9".repeat(8)
    );
    assert_eq!(scan(&sg), vec![(FindingKind::SendgridKey, 0, sg.len())]);
    let tw = format!("sid SK{} ok", "0a1B".repeat(8));
    assert_eq!(scan(&tw), vec![(FindingKind::TwilioKey, 4, 38)]);
    let mg = format!("api:key-{}@", "3f9a".repeat(8));
    assert_eq!(scan(&mg), vec![(FindingKind::MailgunKey, 4, 40)]);
    assert_eq!(scan("SKU123 key-value SG.too.short"), vec![]);
}

/// Random texts from edge pieces: the scanner and the oracle agree on every one.
#[test]
fn agrees_with_the_patterns() {
    const PIECES: &[&str] = &[
        "AKIA",
        "ASIA",
        "AIza",
        "AKI",
        "ghp_",
        "gho_",
        "gh",
        "github_pat_",
        "glpat-",
        "glptt-",
        "gl",
        "glagent-",
        "xoxb-",
        "xox",
        "xoxz-",
        "xapp-",
        "xapp-12-",
        "hooks.slack.com/",
        "services/",
        "triggers/",
        "sk-",
        "sk-ant-",
        "sk-proj-",
        "sk-None-",
        "sk_live_",
        "rk_test_",
        "sk_",
        "whsec_",
        "hf_",
        "npm_",
        "pypi-AgEIcHlwaS5vcmc",
        "pypi-",
        "eyJ",
        "eyJhbGciOiJI",
        "SG.",
        "SK",
        "key-",
        "0123456789abcdef0123456789abcdef",
        "0123456789abcdefABCDEF",
        "AbCdEfGhIjKlMnOpQrStUv",
        ".",
        "-",
        "_",
        "/",
        " ",
        "\n",
        "é",
        "x",
        "Z",
        "9",
        "=",
        "\"",
        "@",
    ];
    let (formats, fallback) = (Triggers::compile().unwrap(), Fallback::compile().unwrap());
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let alphabets: [&[u8]; 4] = [
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
        b"abcXYZ0189",
        b"abcXYZ0189_-",
        b"0123456789",
    ];
    for _ in 0..30_000 {
        let mut text = String::new();
        for _ in 0..1 + next() % 8 {
            if next() % 2 == 0 {
                text.push_str(PIECES[(next() % PIECES.len() as u64) as usize]);
            } else {
                let alpha = alphabets[(next() % 4) as usize];
                let len = match next() % 10 {
                    0 => 250 + next() % 10,
                    1..=3 => next() % 8,
                    _ => 6 + next() % 50,
                };
                for _ in 0..len {
                    text.push(alpha[(next() % alpha.len() as u64) as usize] as char);
                }
            }
        }
        assert_eq!(scan(&formats, &text), oracle(&fallback, &text), "{text:?}");
    }
}

/// Candidates inside one long run exhaust the read budget; the regex takes over and finds
/// the same tokens.
#[test]
fn long_runs_of_candidates_fall_back_to_the_regex() {
    let triggers = Triggers::compile().unwrap();
    let fallback = Fallback::compile().unwrap();
    for unit in [
        "-eyJ",
        "-xoxb",
        "-xapp-1-",
        "-sk-ant-",
        "-sk-proj-",
        "-AIza",
        "-glpat-",
    ] {
        for tail in ["", ".aaaaaaaa.bbb", " end"] {
            let text = format!("{}{tail}", unit.repeat(3_000));
            let t = Text::new(text.as_bytes());
            let mut hits = Hits::default();
            triggers.find(&text, &mut hits);
            for &s in &hits.tokens {
                token_at(&t, s);
            }
            assert!(
                t.read.get() > budget(text.len()),
                "{unit}: {}",
                t.read.get()
            );
            assert_eq!(
                scan(&triggers, &text),
                oracle(&fallback, &text),
                "{unit}{tail}"
            );
        }
    }
}
