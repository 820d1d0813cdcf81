//! Vendor tokens found by a literal prefix and a bounded body: one table, one matcher.
//!
//! The formats of [`crate::tokens`] each have their own shape; the ones here share one:
//! a prefix, then a run of an alphabet between a minimum and a maximum length, then a
//! boundary. Their prefixes go into the same SIMD trigger pass as every other literal
//! (module `triggers`), so text without one costs nothing more. A candidate reads at most
//! `max + 1` body bytes, so a scan is linear whatever the text repeats.
//!
//! | vendor | prefix | body |
//! | --- | --- | --- |
//! | Google OAuth client secret | `GOCSPX-` | 28+ `[A-Za-z0-9_-]` |
//! | Google OAuth access token | `ya29.` | 20+ `[A-Za-z0-9_-]` (dots allowed) |
//! | Shopify | `shpat_`, `shpss_`, `shpca_`, `shppa_` | 32 hex |
//! | HashiCorp Vault | `hvs.`, `hvb.`, `hvr.` | 24+ `[A-Za-z0-9_-]` |
//! | DigitalOcean | `dop_v1_`, `doo_v1_`, `dor_v1_` | 64 hex |
//! | Linear | `lin_api_` | 40 alphanumerics |
//! | Doppler | `dp.pt.`, `dp.st.`, `dp.sa.`, `dp.ct.`, `dp.scim.`, `dp.audit.` | 40+ alphanumerics |
//! | Grafana | `glsa_` (service account), `glc_` (cloud) | 32+ `[A-Za-z0-9_=-]` |
//! | Databricks | `dapi` | 32 hex (an optional `-N` suffix) |
//! | Postman | `PMAK-` | 24 hex, `-`, 34 hex (or the 24 hex alone) |
//! | New Relic | `NRAK-` | 27 upper alphanumerics |
//! | Atlassian | `ATATT` | 50+ `[A-Za-z0-9_=-]` |
//! | Square | `sq0csp-` (secret), `sq0atp-` (access token) | 40+ / 22+ `[A-Za-z0-9_-]` |
//! | Groq | `gsk_` | 40-64 alphanumerics |
//! | xAI | `xai-` | 40-128 alphanumerics |
//! | NVIDIA | `nvapi-` | 40-128 `[A-Za-z0-9_-]` |
//! | Figma | `figd_` | 30-64 `[A-Za-z0-9_-]` |
//! | Replicate | `r8_` | 30-48 alphanumerics |
//! | Supabase | `sbp_` | 40-48 alphanumerics |
//! | age | `AGE-SECRET-KEY-1` | 50-70 upper alphanumerics |
//! | Perplexity | `pplx-` | 40-64 alphanumerics |
//! | Tailscale | `tskey-` | 20-128 `[A-Za-z0-9_-]` (`auth-`, `api-`, `client-` kinds) |
//! | HubSpot | `pat-na1-`, `pat-eu1-` | a 36-byte UUID |
//! | Telegram bot | `NNNNNNNN:AA` (8-10 digits) | 33 `[A-Za-z0-9_-]` |
//! | Discord bot | `MT?` (an id from 2022 on) | `24-26 . 6 . 27-38` of `[A-Za-z0-9_-]` |
//!
//! Discord tokens of older bots (ids not starting with 1) have no literal the trigger pass
//! can use; they are caught by their key name (`DISCORD_TOKEN=`) or the `Authorization:
//! Bot ...` header.
use crate::finding::{Finding, FindingKind};

/// What a body byte may be.
#[derive(Debug, Clone, Copy)]
enum Alphabet {
    /// `[A-Za-z0-9_-]`
    Url,
    /// `[A-Za-z0-9_.-]`
    UrlDot,
    /// `[0-9a-f]`
    Hex,
    /// `[A-Za-z0-9]`
    Alnum,
    /// `[A-Z0-9]`
    Upper,
    /// `[A-Za-z0-9_=-]`
    UrlPad,
}

impl Alphabet {
    fn has(self, c: u8) -> bool {
        match self {
            Self::Url => c.is_ascii_alphanumeric() || c == b'_' || c == b'-',
            Self::UrlDot => c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'),
            Self::Hex => c.is_ascii_digit() || (b'a'..=b'f').contains(&c),
            Self::Alnum => c.is_ascii_alphanumeric(),
            Self::Upper => c.is_ascii_uppercase() || c.is_ascii_digit(),
            Self::UrlPad => c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'='),
        }
    }
}

/// One row: prefix, body alphabet, body length bounds.
struct Row {
    prefix: &'static str,
    body: Alphabet,
    min: usize,
    max: usize,
}

const fn row(prefix: &'static str, body: Alphabet, min: usize, max: usize) -> Row {
    Row {
        prefix,
        body,
        min,
        max,
    }
}

/// The table (see the module doc). Bodies of unbounded formats are capped at 1024 bytes
/// read; a longer run is still masked up to where the run ends (see [`scan`]).
const ROWS: &[Row] = &[
    row("GOCSPX-", Alphabet::Url, 28, 64),
    row("ya29.", Alphabet::UrlDot, 20, 2048),
    row("shpat_", Alphabet::Hex, 32, 32),
    row("shpss_", Alphabet::Hex, 32, 32),
    row("shpca_", Alphabet::Hex, 32, 32),
    row("shppa_", Alphabet::Hex, 32, 32),
    row("hvs.", Alphabet::Url, 24, 512),
    row("hvb.", Alphabet::Url, 24, 512),
    row("hvr.", Alphabet::Url, 24, 512),
    row("dop_v1_", Alphabet::Hex, 64, 64),
    row("doo_v1_", Alphabet::Hex, 64, 64),
    row("dor_v1_", Alphabet::Hex, 64, 64),
    row("lin_api_", Alphabet::Alnum, 40, 40),
    row("dp.pt.", Alphabet::Alnum, 40, 64),
    row("dp.st.", Alphabet::UrlDot, 40, 128),
    row("dp.sa.", Alphabet::Alnum, 40, 64),
    row("dp.ct.", Alphabet::Alnum, 40, 64),
    row("dp.scim.", Alphabet::Alnum, 40, 64),
    row("dp.audit.", Alphabet::Alnum, 40, 64),
    row("glsa_", Alphabet::UrlPad, 32, 128),
    row("glc_", Alphabet::UrlPad, 32, 512),
    row("dapi", Alphabet::Hex, 32, 32),
    // 24 hex, `-`, 34 hex (the part after the dash is the secret half).
    row("PMAK-", Alphabet::Url, 59, 59),
    row("PMAK-", Alphabet::Hex, 24, 24),
    row("NRAK-", Alphabet::Upper, 27, 27),
    row("ATATT", Alphabet::UrlPad, 50, 512),
    row("sq0csp-", Alphabet::Url, 40, 64),
    row("sq0atp-", Alphabet::Url, 22, 64),
    // Rows of the second pass (`SECOND`).
    row("gsk_", Alphabet::Alnum, 40, 64),
    row("xai-", Alphabet::Alnum, 40, 128),
    row("nvapi-", Alphabet::Url, 40, 128),
    row("figd_", Alphabet::Url, 30, 64),
    row("r8_", Alphabet::Alnum, 30, 48),
    row("sbp_", Alphabet::Alnum, 40, 48),
    row("AGE-SECRET-KEY-1", Alphabet::Upper, 50, 70),
    row("pplx-", Alphabet::Alnum, 40, 64),
    row("tskey-", Alphabet::Url, 20, 128),
    row("pat-na1-", Alphabet::Url, 36, 36),
    row("pat-eu1-", Alphabet::Url, 36, 36),
];

/// The literal of a Telegram bot token (after its digits).
const TELEGRAM: &str = ":AA";

/// First three characters of a Discord bot token whose user id starts with `1`.
const DISCORD: &[&str] = &[
    "MTA", "MTE", "MTI", "MTM", "MTQ", "MTU", "MTY", "MTc", "MTg", "MTk",
];

/// The literals of the shared trigger pass (module `triggers`), in id order: a row's
/// prefix starts with one of them (rows sharing a start share a literal, so the pass keeps
/// within its 64 literals), then Telegram's.
const TRIGGERS: &[&str] = &[
    "GOCSPX-", "ya29.", "shp", "hvs.", "hvb.", "hvr.", "dop_v1_", "doo_v1_", "dor_v1_", "lin_api_",
    "dp.", "glsa_", "glc_", "dapi", "PMAK-", "NRAK-", "ATATT", "sq0", TELEGRAM,
];

/// The vendor literals of the second trigger pass (the first holds 64, Teddy's limit):
/// their ids follow [`TRIGGERS`]'.
pub(crate) const SECOND_LITERALS: &[&str] = &[
    "gsk_",
    "xai-",
    "nvapi-",
    "figd_",
    "r8_",
    "sbp_",
    "AGE-SECRET-KEY-1",
    "pplx-",
    "tskey-",
    "pat-",
];

/// The literal of vendor id `id` (first pass, then [`SECOND_LITERALS`]).
fn trigger(id: usize) -> Option<&'static str> {
    TRIGGERS
        .get(id)
        .or_else(|| SECOND_LITERALS.get(id.checked_sub(TRIGGERS.len())?))
        .copied()
}

/// The vendor id of the second pass's `i`-th vendor literal.
pub(crate) const fn second_id(i: usize) -> usize {
    TRIGGERS.len() + i
}

/// The literals of the first trigger pass, in the id order [`scan`] expects.
pub(crate) fn literals() -> impl Iterator<Item = &'static str> {
    TRIGGERS.iter().copied()
}

/// The Discord starts, for the second trigger pass (module `triggers`).
pub(crate) const DISCORD_LITERALS: &[&str] = DISCORD;

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The end of a run of `class` bytes from `from`, reading at most `max + 1` bytes:
/// `Some(end)` when the run is between `min` and `max` long.
fn bounded(
    b: &[u8],
    from: usize,
    class: impl Fn(u8) -> bool,
    min: usize,
    max: usize,
) -> Option<usize> {
    let rest = b.get(from..)?;
    let n = rest
        .iter()
        .take(max.saturating_add(1))
        .take_while(|&&c| class(c))
        .count();
    (min..=max).contains(&n).then_some(from + n)
}

/// Append the tokens at `hits`, the `(literal id, start)` pairs of [`literals`], and at
/// `discord`, the starts of [`DISCORD_LITERALS`].
pub(crate) fn scan(text: &str, hits: &[(usize, usize)], discord: &[usize], out: &mut Vec<Finding>) {
    let b = text.as_bytes();
    let push = |out: &mut Vec<Finding>, found: Option<(usize, usize)>| {
        if let Some((start, end)) = found {
            out.push(Finding::new(FindingKind::VendorToken, start, end));
        }
    };
    for &(id, at) in hits {
        let Some(trigger) = trigger(id) else {
            continue;
        };
        if trigger == TELEGRAM {
            push(out, telegram(b, at));
            continue;
        }
        let found = ROWS
            .iter()
            .filter(|r| r.prefix.starts_with(trigger))
            .find_map(|r| lit(b, at, r.prefix).then(|| prefixed(b, at, r)).flatten());
        push(out, found);
    }
    for &at in discord {
        push(out, discord_at(b, at));
    }
}

/// `b[at..]` starts with `prefix`.
fn lit(b: &[u8], at: usize, prefix: &str) -> bool {
    b.get(at..)
        .is_some_and(|r| r.starts_with(prefix.as_bytes()))
}

fn prefixed(b: &[u8], at: usize, r: &Row) -> Option<(usize, usize)> {
    if at > 0
        && b.get(at - 1)
            .is_some_and(|&c| is_word(c) || c == b'-' || c == b'.')
    {
        return None;
    }
    let from = at + r.prefix.len();
    let end = bounded(b, from, |c| r.body.has(c), r.min, r.max)?;
    // The token ends where its alphabet ends: not followed by more word bytes.
    (!b.get(end).is_some_and(|&c| is_word(c))).then_some((at, end))
}

/// `NNNNNNNN:AA` + 33: `at` is the colon.
fn telegram(b: &[u8], at: usize) -> Option<(usize, usize)> {
    let digits = b
        .get(..at)?
        .iter()
        .rev()
        .take(11)
        .take_while(|c| c.is_ascii_digit())
        .count();
    if !(8..=10).contains(&digits) {
        return None;
    }
    let start = at - digits;
    if start > 0 && b.get(start - 1).is_some_and(|&c| is_word(c)) {
        return None;
    }
    let end = bounded(b, at + 3, |c| Alphabet::Url.has(c), 33, 33)?;
    (!b.get(end).is_some_and(|&c| is_word(c) || c == b'-')).then_some((start, end))
}

/// `MT?` + 21-23 `.` 6 `.` 27-38.
fn discord_at(b: &[u8], at: usize) -> Option<(usize, usize)> {
    if at > 0
        && b.get(at - 1)
            .is_some_and(|&c| is_word(c) || c == b'-' || c == b'.')
    {
        return None;
    }
    let url = |c: u8| Alphabet::Url.has(c);
    let p = bounded(b, at + 3, url, 21, 23)?;
    (b.get(p) == Some(&b'.')).then_some(())?;
    let p = bounded(b, p + 1, url, 6, 6)?;
    (b.get(p) == Some(&b'.')).then_some(())?;
    let end = bounded(b, p + 1, url, 27, 38)?;
    (!b.get(end).is_some_and(|&c| is_word(c) || c == b'-')).then_some((at, end))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn bounded_reads_at_most_max_plus_one() {
        assert_eq!(bounded(b"aaaa", 0, |c| c == b'a', 2, 4), Some(4));
        assert_eq!(bounded(b"aaaaa", 0, |c| c == b'a', 2, 4), None);
        assert_eq!(bounded(b"a", 0, |c| c == b'a', 2, 4), None);
    }

    #[test]
    fn every_row_has_its_trigger() {
        for r in ROWS {
            assert!(
                TRIGGERS
                    .iter()
                    .chain(SECOND_LITERALS)
                    .any(|t| r.prefix.starts_with(t)),
                "{}",
                r.prefix
            );
        }
    }
}
