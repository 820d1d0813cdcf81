//! Where a secret key name and its separator stand in a text: the search the key-name
//! pass ([`crate::keyvalue`]) runs, written by hand.
//!
//! A match is a secret word ([`crate::names`]) directly followed by a separator, as the
//! pattern `KEY SEP` (ASCII, leftmost-first) would find it, where `KEY` is one of
//!
//! 1. `[_.-]` + a word of [`names::SUFFIXES`] (case-insensitive; an `_` inside a word
//!    stands for any of `_.-`): `_API_KEY`, `.token`, `-Secret`;
//! 2. a word boundary + a word of [`names::BARE`] (same rules): `password`, `API-KEY`;
//! 3. a lowercase letter or digit + a suffix in camel case (case-sensitive): `tSecret`,
//!    `rApiKey`;
//! 4. an uppercase letter or digit + a word of [`names::GLUED`] in uppercase
//!    (case-sensitive): `PGPASSWORD`, `APITOKEN`, `MYSECRET`;
//!
//! and `SEP` is one of `\\?["'][ \t]*[:=]` (after a quoted key), `[:=]`, or `[ \t]+=[ \t]`
//! (`key = value`, TOML/INI). The tests check the search against that pattern compiled
//! with `regex`.
//!
//! Every match ends in its only `:` or `=`, so matches are ordered by separator and the
//! leftmost match is the first separator that has one. The search therefore jumps from
//! separator to separator (`memchr2`); at each it reads back over the spaces and quote of
//! `SEP` to where a word must end, and compares, from their last byte backwards, the few
//! words that end in the two bytes found there (most separators stop at that lookup). Each separator costs a bounded number of byte reads, so
//! the search is linear.
use crate::names;

/// One key-name match: `text[start..end]`, whose separator (`:` or `=`) is at `sep`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KeyMatch {
    pub(crate) start: usize,
    pub(crate) sep: usize,
    pub(crate) end: usize,
}

/// A word of the key vocabulary as matched backwards.
struct Word {
    /// ASCII uppercase, `_` standing for `[_.-]`; or, for a camel form, the word with its
    /// humps (`ApiKey`), compared exactly.
    text: Vec<u8>,
    /// May follow `[_.-]` (a word of [`names::SUFFIXES`]).
    suffix: bool,
    /// May follow a word boundary (a word of [`names::BARE`]).
    bare: bool,
    /// A camel form: follows `[a-z0-9]`, compared case-sensitively.
    camel: bool,
    /// A glued uppercase form: follows `[A-Z0-9]`, compared case-sensitively.
    glued: bool,
}

/// The leftmost match starting at or after `pos` (bytes before `pos` still count as the
/// context of a word boundary).
pub(crate) fn next_match(text: &str, pos: usize) -> Option<KeyMatch> {
    let bytes = text.as_bytes();
    let mut from = pos;
    while let Some(c) = bytes
        .get(from..)
        .and_then(|b| memchr::memchr2(b':', b'=', b))
    {
        let sep = from + c;
        if let Some(m) = match_at_sep(bytes, pos, sep) {
            return Some(m);
        }
        from = sep + 1;
    }
    None
}

fn is_hspace(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// The match whose separator is the `:`/`=` at `sep`, starting at or after `floor`.
fn match_at_sep(b: &[u8], floor: usize, sep: usize) -> Option<KeyMatch> {
    // Where the key word must end (`w`), and where the match ends.
    let mut j = sep;
    while j > floor && b.get(j - 1).is_some_and(|&c| is_hspace(c)) {
        j -= 1;
    }
    let before = b.get(j.checked_sub(1)?).copied()?;
    let (w, end) = if before == b'"' || before == b'\'' {
        // `\\?["'][ \t]*[:=]`
        let q = j - 1;
        let w = if q > 0 && b.get(q - 1) == Some(&b'\\') {
            q - 1
        } else {
            q
        };
        (w, sep + 1)
    } else if j == sep {
        // `[:=]`
        (sep, sep + 1)
    } else if b.get(sep) == Some(&b'=') && b.get(sep + 1).is_some_and(|&c| is_hspace(c)) {
        // `[ \t]+=[ \t]`
        (j, sep + 2)
    } else {
        return None;
    };
    let start = key_start(b, floor, w)?;
    Some(KeyMatch { start, sep, end })
}

/// The leftmost start at or after `floor` of a key word ending right before `w`.
fn key_start(b: &[u8], floor: usize, w: usize) -> Option<usize> {
    let tail = b.get(w.checked_sub(2)?..w)?;
    let mut best: Option<usize> = None;
    for word in vocabulary().ending_in(tail) {
        let Some(s) = w.checked_sub(word.text.len()) else {
            continue;
        };
        if s < floor || best.is_some_and(|b| b <= s.saturating_sub(1)) {
            continue;
        }
        let Some(seen) = b.get(s..w) else {
            continue;
        };
        let pre = s.checked_sub(1).and_then(|i| b.get(i).copied());
        // A camel form or a suffix starts one byte before the word, a bare word at it.
        let (before, at) = if word.camel {
            let after_hump = pre.is_some_and(|p| p.is_ascii_lowercase() || p.is_ascii_digit());
            (after_hump && seen == word.text.as_slice(), false)
        } else if word.glued {
            let glued = pre.is_some_and(|p| p.is_ascii_uppercase() || p.is_ascii_digit());
            (glued && seen == word.text.as_slice(), false)
        } else if same_word(seen, &word.text) {
            let boundary = pre.is_none_or(|p| !(p.is_ascii_alphanumeric() || p == b'_'));
            (
                word.suffix && matches!(pre, Some(b'_' | b'.' | b'-')),
                word.bare && boundary,
            )
        } else {
            (false, false)
        };
        let start = [(before, s.wrapping_sub(1)), (at, s)]
            .into_iter()
            .find(|&(ok, x)| ok && x >= floor)
            .map(|(_, x)| x);
        if let Some(start) = start {
            best = Some(best.map_or(start, |b| b.min(start)));
        }
    }
    best
}

/// `seen` spells `word` (ASCII case-insensitively; `_` in `word` accepts `_`, `.`, `-`),
/// compared from the end, where words differ first.
fn same_word(seen: &[u8], word: &[u8]) -> bool {
    seen.len() == word.len()
        && seen.iter().rev().zip(word.iter().rev()).all(|(&s, &w)| {
            if w == b'_' {
                matches!(s, b'_' | b'.' | b'-')
            } else {
                s.to_ascii_uppercase() == w
            }
        })
}

/// The words to compare, by their last two bytes (ASCII lowercase).
struct Vocabulary {
    buckets: Vec<([u8; 2], Vec<Word>)>,
    /// `tails[last]` has bit `second_last` set when some word ends in those two ASCII bytes
    /// (lowercase): one lookup rejects most separators.
    tails: [u128; 128],
}

impl Vocabulary {
    /// The words that can end in `tail` (two bytes); most separators follow a word whose
    /// last two letters end no key word, and stop here.
    fn ending_in(&self, tail: &[u8]) -> &[Word] {
        let &[a, b] = tail else {
            return &[];
        };
        let (a, b) = (a.to_ascii_lowercase(), b.to_ascii_lowercase());
        let known = self
            .tails
            .get(usize::from(b))
            .is_some_and(|set| a < 128 && set & (1u128 << a) != 0);
        if !known {
            return &[];
        }
        self.buckets
            .iter()
            .find(|(end, _)| *end == [a, b])
            .map_or(&[], |(_, words)| words.as_slice())
    }

    fn add(&mut self, word: Word) {
        let Some(&[a, b]) = word.text.last_chunk::<2>() else {
            return;
        };
        let end = [a.to_ascii_lowercase(), b.to_ascii_lowercase()];
        if let (Some(set), true) = (self.tails.get_mut(usize::from(end[1])), end[0] < 128) {
            *set |= 1u128 << end[0];
        }
        match self.buckets.iter_mut().find(|(e, _)| *e == end) {
            Some((_, words)) => words.push(word),
            None => self.buckets.push((end, vec![word])),
        }
    }
}

/// The suffixes and bare words (each once) and the camel forms.
fn vocabulary() -> &'static Vocabulary {
    static VOCABULARY: std::sync::LazyLock<Vocabulary> = std::sync::LazyLock::new(|| {
        let mut v = Vocabulary {
            buckets: Vec::new(),
            tails: [0; 128],
        };
        let mut seen: Vec<&str> = Vec::new();
        for w in names::SUFFIXES.iter().chain(names::BARE) {
            if !seen.contains(w) {
                seen.push(w);
                v.add(Word {
                    text: w.as_bytes().to_vec(),
                    suffix: names::SUFFIXES.contains(w),
                    bare: names::BARE.contains(w),
                    camel: false,
                    glued: false,
                });
            }
        }
        for w in names::SUFFIXES {
            v.add(Word {
                text: camel_case(w).into_bytes(),
                suffix: false,
                bare: false,
                camel: true,
                glued: false,
            });
        }
        for w in names::GLUED {
            v.add(Word {
                text: w.as_bytes().to_vec(),
                suffix: false,
                bare: false,
                camel: false,
                glued: true,
            });
        }
        v
    });
    &VOCABULARY
}

/// `SECRET_ACCESS_KEY` -> `SecretAccessKey`.
fn camel_case(word: &str) -> String {
    word.split('_')
        .map(|part| {
            let lower = part.to_ascii_lowercase();
            let mut cs = lower.chars();
            cs.next()
                .map(|f| f.to_ascii_uppercase().to_string() + cs.as_str())
                .unwrap_or_default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use regex::Regex;

    use super::*;

    /// The pattern of the module doc, as `regex` source.
    fn pattern() -> String {
        let sep = "[_.-]";
        let alternation = |list: &[&str]| -> String {
            let mut v: Vec<String> = list.iter().map(|w| w.replace('_', sep)).collect();
            v.sort_by_key(|w| std::cmp::Reverse(w.len()));
            v.join("|")
        };
        let camel: Vec<String> = names::SUFFIXES.iter().map(|w| camel_case(w)).collect();
        format!(
            r#"(?-u)(?:(?i:{sep}(?:{suf}))|(?i:\b(?:{bare}))|[a-z0-9](?:{camel})|[A-Z0-9](?:{glued}))(?:\\?["'][ \t]*[:=]|[:=]|[ \t]+=[ \t])"#,
            suf = alternation(names::SUFFIXES),
            bare = alternation(names::BARE),
            camel = camel.join("|"),
            glued = names::GLUED.join("|"),
        )
    }

    #[test]
    fn camel_words() {
        assert_eq!(camel_case("API_KEY"), "ApiKey");
        assert_eq!(camel_case("SECRET_ACCESS_KEY"), "SecretAccessKey");
        let y: Vec<&[u8]> = vocabulary()
            .ending_in(b"Ey")
            .iter()
            .map(|w| w.text.as_slice())
            .collect();
        assert!(y.contains(&b"ApiKey".as_slice()) && y.contains(&b"API_KEY".as_slice()));
        assert!(vocabulary().ending_in(b"ea").is_empty());
        assert!(vocabulary().ending_in(b"y").is_empty());
    }

    #[test]
    fn examples() {
        let at = |t: &str| next_match(t, 0).map(|m| (m.start, m.sep, m.end));
        assert_eq!(at("DB_PASSWORD=x"), Some((2, 11, 12)));
        assert_eq!(at("\"password\": 1"), Some((1, 10, 11)));
        assert_eq!(at("api_key = \"v\""), Some((0, 8, 10)));
        assert_eq!(at("clientSecret: v"), Some((5, 12, 13)));
        assert_eq!(at("TOKEN=abc"), Some((0, 5, 6)));
        assert_eq!(at("AccountKey=abc"), Some((0, 10, 11)));
        assert_eq!(at("SharedAccessKey=abc"), Some((5, 15, 16)));
        assert_eq!(at("client-key-data: x"), Some((6, 15, 16)));
        assert_eq!(at("tokens=1"), None);
        assert_eq!(at("MAX_TOKENS=1"), None);
        assert_eq!(at("x_token =1"), None);
        assert_eq!(at("PGPASSWORD=x"), Some((0, 10, 11)));
        assert_eq!(at("MYPASSWORD=x"), Some((1, 10, 11)));
        assert_eq!(at("APITOKEN: x"), Some((2, 8, 9)));
        assert_eq!(at("mypassword=x"), None);
        assert_eq!(at("APITOKENS=x"), None);
    }

    /// The search finds exactly what the pattern finds, from every start position.
    #[test]
    fn agrees_with_the_pattern() {
        const FRAGMENTS: &[&str] = &[
            "A_TOKEN",
            "api_key",
            "apiKey",
            "X-Api-Key",
            "password",
            "Authorization",
            "PASSWD",
            "secret.key",
            "SECRET-ACCESS_KEY",
            "rSecretAccessKey",
            "9Token",
            "ApiKey",
            "PassWord",
            "PGPASSWORD",
            "APITOKEN",
            "=",
            ":",
            " = ",
            ": ",
            "  ",
            "\t",
            "\"",
            "'",
            "\\",
            "\\\"",
            "\n",
            "x",
            "abc",
            "_",
            "-",
            ".",
            "é",
            "key",
            "token",
            "==",
            "::",
            "TOKEN",
            "Secret",
            "_Key",
        ];
        let re = Regex::new(&pattern()).unwrap();
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..20_000 {
            let mut next = || {
                state ^= state >> 12;
                state ^= state << 25;
                state ^= state >> 27;
                state.wrapping_mul(0x2545_F491_4F6C_DD1D)
            };
            let n = 1 + (next() % 20) as usize;
            let text: String = (0..n)
                .map(|_| FRAGMENTS[(next() % FRAGMENTS.len() as u64) as usize])
                .collect();
            for pos in (0..=text.len()).filter(|&p| text.is_char_boundary(p)) {
                let want = re.find_at(&text, pos).map(|m| {
                    let sep = m.start() + m.as_str().rfind([':', '=']).unwrap();
                    (m.start(), sep, m.end())
                });
                let got = next_match(&text, pos).map(|m| (m.start, m.sep, m.end));
                assert_eq!(got, want, "{text:?} from {pos}");
            }
        }
    }
}
