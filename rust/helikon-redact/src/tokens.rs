//! Known token formats, found by shape alone (no key name needed).
//!
//! Each format is an ASCII-only pattern with a distinctive literal prefix, so the combined
//! regex runs a literal prefilter and a DFA: linear time, no backtracking. The combined
//! regex finds the spans; the per-format anchored regexes name them.
//!
//! Shapes are chosen so that git SHAs, UUIDs, base64 blobs without a prefix and kebab-case
//! identifiers such as `sk-learn-something-long` do not match.
use regex::Regex;

use crate::finding::{Finding, FindingKind};

/// `(kind, first bytes, pattern)`; the order is the order of the alternation (most specific
/// first). The first bytes a match can start with let [`TokenFormats::scan`] name a span by
/// running only the formats that can match it.
const FORMATS: &[(FindingKind, &[u8], &str)] = &[
    (
        FindingKind::AwsAccessKey,
        b"A",
        r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b",
    ),
    (
        FindingKind::GithubToken,
        b"g",
        r"\bgh[pousr]_[A-Za-z0-9]{30,255}\b",
    ),
    (
        FindingKind::GithubToken,
        b"g",
        r"\bgithub_pat_[A-Za-z0-9_]{40,255}\b",
    ),
    (
        FindingKind::GitlabToken,
        b"g",
        r"\bgl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|oas|agent)-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]+)*",
    ),
    (
        FindingKind::SlackToken,
        b"x",
        r"\bxox[abposre]-[A-Za-z0-9-]{10,}",
    ),
    (
        FindingKind::SlackToken,
        b"x",
        r"\bxapp-[0-9]+-[A-Za-z0-9-]{10,}",
    ),
    (
        FindingKind::SlackToken,
        b"h",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{16,}",
    ),
    (
        FindingKind::AnthropicKey,
        b"s",
        r"\bsk-ant-[A-Za-z0-9_-]{20,}",
    ),
    (
        FindingKind::OpenaiKey,
        b"s",
        r"\bsk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}",
    ),
    (FindingKind::OpenaiKey, b"s", r"\bsk-[A-Za-z0-9]{32,}\b"),
    (
        FindingKind::StripeKey,
        b"rs",
        r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b",
    ),
    (FindingKind::StripeKey, b"w", r"\bwhsec_[A-Za-z0-9]{24,}\b"),
    (FindingKind::GoogleApiKey, b"A", r"\bAIza[0-9A-Za-z_-]{35,}"),
    (
        FindingKind::HuggingfaceToken,
        b"h",
        r"\bhf_[A-Za-z0-9]{30,}\b",
    ),
    (FindingKind::NpmToken, b"n", r"\bnpm_[A-Za-z0-9]{36,}\b"),
    (
        FindingKind::PypiToken,
        b"p",
        r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}",
    ),
    (
        FindingKind::Jwt,
        b"e",
        r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
    ),
];

/// The compiled formats: one combined regex plus one anchored regex per format.
#[derive(Debug)]
pub(crate) struct TokenFormats {
    any: Regex,
    each: Vec<(FindingKind, &'static [u8], Regex)>,
}

impl TokenFormats {
    pub(crate) fn compile() -> Result<Self, regex::Error> {
        let any = Regex::new(&format!(
            "(?-u){}",
            FORMATS
                .iter()
                .map(|(_, _, p)| format!("(?:{p})"))
                .collect::<Vec<_>>()
                .join("|")
        ))?;
        let each = FORMATS
            .iter()
            .map(|(k, first, p)| Ok((*k, *first, Regex::new(&format!("(?-u)^(?:{p})"))?)))
            .collect::<Result<Vec<_>, regex::Error>>()?;
        Ok(Self { any, each })
    }

    /// Append every token found in `text`.
    pub(crate) fn scan(&self, text: &str, out: &mut Vec<Finding>) {
        for m in self.any.find_iter(text) {
            // Name the span by the first format that matches it exactly (anchored at its
            // start, run over the match only: bounded by the match length).
            let hay = m.as_str();
            let b0 = hay.as_bytes().first().copied().unwrap_or_default();
            let mut candidates = self.each.iter().filter(|(_, first, _)| first.contains(&b0));
            let kind = candidates
                .clone()
                .find(|(_, _, re)| re.find(hay).is_some_and(|x| x.end() == hay.len()))
                .or_else(|| candidates.find(|(_, _, re)| re.is_match(hay)))
                .map_or(FindingKind::Jwt, |(k, _, _)| *k);
            // A Slack webhook keeps its host: only the path after `services/` is secret.
            let start = match hay.strip_prefix("hooks.slack.com/") {
                Some(rest) => {
                    m.start() + hay.len() - rest.len() + rest.find('/').map_or(0, |i| i + 1)
                }
                None => m.start(),
            };
            out.push(Finding::new(kind, start, m.end()));
        }
    }
}
