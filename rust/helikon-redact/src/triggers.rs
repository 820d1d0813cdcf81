//! One prefilter pass for the literal-led matchers: where a token can start (the token
//! formats and the vendor table), where a URL's `://` stands, whether `PRIVATE KEY` occurs,
//! where a cookie header and a program with credential flags may stand.
//!
//! The token literals ([`crate::tokens::LITERALS`]), `://` and `PRIVATE KEY` go into one
//! packed multi-literal searcher (SIMD Teddy where the CPU has it, Rabin-Karp otherwise).
//! A pass lists every position where one of them starts, overlapping ones included (the
//! search resumes one byte after each hit), so the token and URL matchers only look at
//! those positions and text without any of them costs this one pass. The key-name pass
//! has its own, single-byte trigger (`:`/`=`) and the known values their own automaton.
use aho_corasick::packed::{Config, MatchKind, Searcher};
use aho_corasick::Span;

use crate::tokens::{LITERALS, SHORT_LITERALS};
use crate::{cliflags, cookie, pem, vendor};

/// The compiled searcher.
#[derive(Debug)]
pub(crate) struct Triggers {
    searcher: Searcher,
    /// The second pass (cookie words, program flags, Discord starts).
    second: Searcher,
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
    /// `(literal id, start)` of the vendor-table literals (module `vendor`).
    pub(crate) vendor: Vec<(usize, usize)>,
    /// Starts of the Discord literals (module `vendor`).
    pub(crate) discord: Vec<usize>,
    /// Starts of the cookie words (module `cookie`).
    pub(crate) cookies: Vec<usize>,
    /// `(literal id, start, end)` of the program-flag literals (module `cliflags`).
    pub(crate) flags: Vec<(usize, usize, usize)>,
}

/// `://`, after the token literals.
const URL_ID: usize = LITERALS.len();
/// `PRIVATE KEY`.
const PEM_ID: usize = LITERALS.len() + 1;
/// The vendor-table literals, last (module `vendor`, in its order).
const VENDOR_FROM: usize = LITERALS.len() + 2;

/// The second pass: the cookie words, then the program-flag literals, then the Discord
/// starts.
const FLAGS_FROM: usize = cookie::LITERALS.len();
const DISCORD_FROM: usize = FLAGS_FROM + cliflags::LITERALS.len();
/// The vendor literals past the first pass's 64 (module `vendor`).
const VENDOR2_FROM: usize = DISCORD_FROM + vendor::DISCORD_LITERALS.len();

/// Teddy, the SIMD searcher, takes at most 64 literals; past that the packed searcher
/// falls back to Rabin-Karp, measured 50x slower here (102 literals: 59-90 MB/s against
/// 3.6-4.1 GB/s for 45). So the literals form two passes of at most 64 each.
const TEDDY_MAX: usize = 64;

fn packed<'a>(literals: impl Iterator<Item = &'a str>) -> Option<Searcher> {
    let literals: Vec<&str> = literals.collect();
    if literals.len() > TEDDY_MAX {
        return None;
    }
    Config::new()
        .match_kind(MatchKind::LeftmostFirst)
        .builder()
        .extend(literals)
        .build()
}

impl Triggers {
    /// `None` when no packed searcher can be built (Rabin-Karp, the fallback, always can).
    pub(crate) fn compile() -> Option<Self> {
        let searcher = packed(
            LITERALS
                .iter()
                .copied()
                .chain(["://", pem::KEYWORD])
                .chain(vendor::literals()),
        )?;
        let second = packed(
            cookie::LITERALS
                .iter()
                .chain(cliflags::LITERALS)
                .chain(vendor::DISCORD_LITERALS)
                .chain(vendor::SECOND_LITERALS)
                .copied(),
        )?;
        let short = SHORT_LITERALS
            .iter()
            .map(|l| memchr::memmem::Finder::new(l.as_bytes()))
            .collect();
        Some(Self {
            searcher,
            second,
            short,
        })
    }

    /// Fill `hits` (cleared first) for `text`.
    pub(crate) fn find(&self, text: &str, hits: &mut Hits) {
        hits.tokens.clear();
        hits.urls.clear();
        hits.pem = false;
        hits.vendor.clear();
        hits.cookies.clear();
        hits.flags.clear();
        hits.discord.clear();
        let bytes = text.as_bytes();
        let mut at = 0usize;
        while at < bytes.len() {
            let Some(m) = self.searcher.find_in(bytes, Span::from(at..bytes.len())) else {
                break;
            };
            match m.pattern().as_usize() {
                URL_ID => hits.urls.push(m.start()),
                PEM_ID => hits.pem = true,
                id if id >= VENDOR_FROM => hits.vendor.push((id - VENDOR_FROM, m.start())),
                _ => hits.tokens.push(m.start()),
            }
            at = m.start() + 1;
        }
        let first_vendor = hits.vendor.len();
        let mut at = 0usize;
        while at < bytes.len() {
            let Some(m) = self.second.find_in(bytes, Span::from(at..bytes.len())) else {
                break;
            };
            match m.pattern().as_usize() {
                id if id >= VENDOR2_FROM => hits
                    .vendor
                    .push((vendor::second_id(id - VENDOR2_FROM), m.start())),
                id if id >= DISCORD_FROM => hits.discord.push(m.start()),
                id if id >= FLAGS_FROM => hits.flags.push((id - FLAGS_FROM, m.start(), m.end())),
                _ => hits.cookies.push(m.start()),
            }
            at = m.start() + 1;
        }
        if hits.vendor.len() > first_vendor && first_vendor > 0 {
            hits.vendor.sort_unstable_by_key(|&(_, start)| start);
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
