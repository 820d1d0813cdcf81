//! One prefilter pass for the literal-led matchers: where a token can start, where a URL's
//! `://` stands, and whether `PRIVATE KEY` occurs.
//!
//! The token literals ([`crate::tokens::LITERALS`]), `://` and `PRIVATE KEY` go into one
//! packed multi-literal searcher (SIMD Teddy where the CPU has it, Rabin-Karp otherwise).
//! A pass lists every position where one of them starts, overlapping ones included (the
//! search resumes one byte after each hit), so the token and URL matchers only look at
//! those positions and text without any of them costs this one pass. The key-name pass
//! has its own, single-byte trigger (`:`/`=`) and the known values their own automaton.
use aho_corasick::packed::{Config, MatchKind, Searcher};
use aho_corasick::Span;

use crate::pem;
use crate::tokens::{LITERALS, SHORT_LITERALS};

/// The compiled searcher.
#[derive(Debug)]
pub(crate) struct Triggers {
    searcher: Searcher,
    /// One finder per [`SHORT_LITERALS`] entry.
    short: Vec<memchr::memmem::Finder<'static>>,
}

/// Where the literals of one text start (sorted byte offsets).
#[derive(Debug, Default)]
pub(crate) struct Hits {
    /// Possible token starts.
    pub(crate) tokens: Vec<usize>,
    /// Positions of `://`.
    pub(crate) urls: Vec<usize>,
    /// The text holds `PRIVATE KEY`.
    pub(crate) pem: bool,
}

/// `://`, after the token literals.
const URL_ID: usize = LITERALS.len();
/// `PRIVATE KEY`, last.
const PEM_ID: usize = LITERALS.len() + 1;

impl Triggers {
    /// `None` when no packed searcher can be built (Rabin-Karp, the fallback, always can).
    pub(crate) fn compile() -> Option<Self> {
        let searcher = Config::new()
            .match_kind(MatchKind::LeftmostFirst)
            .builder()
            .extend(LITERALS.iter().copied().chain(["://", pem::KEYWORD]))
            .build()?;
        let short = SHORT_LITERALS
            .iter()
            .map(|l| memchr::memmem::Finder::new(l.as_bytes()))
            .collect();
        Some(Self { searcher, short })
    }

    /// Fill `hits` (cleared first) for `text`.
    pub(crate) fn find(&self, text: &str, hits: &mut Hits) {
        hits.tokens.clear();
        hits.urls.clear();
        hits.pem = false;
        let bytes = text.as_bytes();
        let mut at = 0usize;
        while at < bytes.len() {
            let Some(m) = self.searcher.find_in(bytes, Span::from(at..bytes.len())) else {
                break;
            };
            match m.pattern().as_usize() {
                URL_ID => hits.urls.push(m.start()),
                PEM_ID => hits.pem = true,
                _ => hits.tokens.push(m.start()),
            }
            at = m.start() + 1;
        }
        // Short literals: their starts merged in, keeping the list sorted.
        let before = hits.tokens.len();
        for finder in &self.short {
            hits.tokens.extend(finder.find_iter(bytes));
        }
        if hits.tokens.len() > before {
            hits.tokens.sort_unstable();
            hits.tokens.dedup();
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_start_is_listed() {
        let t = Triggers::compile().unwrap();
        let mut hits = Hits::default();
        t.find(
            "xoxoxb- https://a:b@c ghp_x -----BEGIN PRIVATE KEY-----",
            &mut hits,
        );
        assert_eq!(hits.tokens, vec![0, 2, 22]);
        assert_eq!(hits.urls, vec![13]);
        assert!(hits.pem);
        t.find("plain text", &mut hits);
        assert!(hits.tokens.is_empty() && hits.urls.is_empty() && !hits.pem);
    }
}
