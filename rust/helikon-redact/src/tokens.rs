//! Known token formats, found by shape alone (no key name needed).
//!
//! Every format starts with a distinctive literal (`AKIA`, `ghp_`, `xox`, `sk-`, `eyJ`,
//! `hooks.slack.com/`, ...). The prefilter pass of [`crate::triggers`] lists the positions
//! where one starts; only there are the formats checked, by hand, in the order of
//! the table (most specific first). Text without a literal costs only that pass.
//!
//! The shapes are exactly these patterns (ASCII word boundaries, leftmost-first: the
//! earliest start wins, then the first format in this order), which the tests check
//! against a regex built from them:
//!
//! | kind | pattern |
//! | --- | --- |
//! | AWS | `\b(?:AKIA\|ASIA\|ABIA\|ACCA\|AGPA\|AIDA\|AROA\|AIPA\|ANPA\|ANVA\|APKA)[A-Z0-9]{16}\b` |
//! | GitHub | `\bgh[pousr]_[A-Za-z0-9]{30,255}\b`, `\bgithub_pat_[A-Za-z0-9_]{40,255}\b` |
//! | GitLab | `\bgl(?:pat\|dt\|rt\|ptt\|ft\|soat\|cbt\|imt\|oas\|agent)-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]+)*` |
//! | Slack | `\bxox[abposre]-[A-Za-z0-9-]{10,}`, `\bxapp-[0-9]+-[A-Za-z0-9-]{10,}`, `hooks\.slack\.com/(?:services\|workflows\|triggers)/[A-Za-z0-9_/-]{16,}` |
//! | Anthropic | `\bsk-ant-[A-Za-z0-9_-]{20,}` |
//! | OpenAI | `\bsk-(?:proj\|svcacct\|admin\|None)-[A-Za-z0-9_-]{20,}`, `\bsk-[A-Za-z0-9]{32,}\b` |
//! | Stripe | `\b(?:sk\|rk)_(?:live\|test)_[A-Za-z0-9]{16,}\b`, `\bwhsec_[A-Za-z0-9]{24,}\b` |
//! | Google | `\bAIza[0-9A-Za-z_-]{35,}` |
//! | Hugging Face | `\bhf_[A-Za-z0-9]{30,}\b` |
//! | npm | `\bnpm_[A-Za-z0-9]{36,}\b` |
//! | PyPI | `\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}` |
//! | SendGrid | `\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43,}` |
//! | Twilio | `\bSK[0-9a-fA-F]{32}\b` |
//! | Mailgun | `\bkey-[0-9a-f]{32}\b` |
//! | JWT | `\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*` |
//!
//! Each check reads the token's own bytes once (a character-class run, then one byte of
//! context), and a failed candidate moves the search on by one byte, so a scan is linear:
//! a run is only re-read from a later candidate inside it, and candidates inside a run
//! need a word boundary, which a run of word bytes does not have.
//!
//! Shapes are chosen so that git SHAs, UUIDs, base64 blobs without a prefix and kebab-case
//! identifiers such as `sk-learn-something-long` do not match. A Slack webhook keeps its
//! host and kind: only the path after `services/` is the secret.
use crate::finding::{Finding, FindingKind};

/// Token starts too short for the multi-literal pass (a 2-byte literal would make every
/// byte pair a candidate there): found with their own `memmem` search.
pub(crate) const SHORT_LITERALS: &[&str] = &["SK"];

/// The literals a token starts with (patterns of [`crate::triggers`]). Every format's match
/// begins with one of them; every position where one starts is a candidate, overlapping
/// ones included, so literals cannot hide one another.
pub(crate) const LITERALS: &[&str] = &[
    "AKIA",
    "ASIA",
    "ABIA",
    "ACCA",
    "AGPA",
    "AIDA",
    "AROA",
    "AIPA",
    "ANPA",
    "ANVA",
    "APKA",
    "AIza",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "gldt-",
    "glrt-",
    "glptt-",
    "glft-",
    "glsoat-",
    "glcbt-",
    "glimt-",
    "gloas-",
    "glagent-",
    "xox",
    "xapp-",
    "hooks.slack.com/",
    "sk-",
    "sk_live_",
    "sk_test_",
    "rk_live_",
    "rk_test_",
    "whsec_",
    "hf_",
    "npm_",
    "pypi-AgEIcHlwaS5vcmc",
    "SG.",
    "key-",
    "eyJ",
];

const AWS_PREFIXES: &[&[u8; 4]] = &[
    b"AKIA", b"ASIA", b"ABIA", b"ACCA", b"AGPA", b"AIDA", b"AROA", b"AIPA", b"ANPA", b"ANVA",
    b"APKA",
];
const GITLAB_KINDS: &[&[u8]] = &[
    b"pat", b"dt", b"rt", b"ptt", b"ft", b"soat", b"cbt", b"imt", b"oas", b"agent",
];
const SLACK_HOOK_KINDS: &[&[u8]] = &[b"services", b"workflows", b"triggers"];
const OPENAI_KINDS: &[&[u8]] = &[b"proj", b"svcacct", b"admin", b"None"];
const SLACK_HOST: &[u8] = b"hooks.slack.com/";
const PYPI_PREFIX: &[u8] = b"pypi-AgEIcHlwaS5vcmc";

/// The formats in order of preference (the order of the table above); the scanner uses the
/// same order through `starting_with`, which the tests check against this list.
#[cfg(test)]
pub(crate) const FORMATS: &[(FindingKind, Shape)] = &[
    (FindingKind::AwsAccessKey, Shape::Aws),
    (FindingKind::GithubToken, Shape::Github),
    (FindingKind::GithubToken, Shape::GithubPat),
    (FindingKind::GitlabToken, Shape::Gitlab),
    (FindingKind::SlackToken, Shape::SlackXox),
    (FindingKind::SlackToken, Shape::SlackApp),
    (FindingKind::SlackToken, Shape::SlackHook),
    (FindingKind::AnthropicKey, Shape::Anthropic),
    (FindingKind::OpenaiKey, Shape::OpenaiProject),
    (FindingKind::OpenaiKey, Shape::OpenaiLegacy),
    (FindingKind::StripeKey, Shape::Stripe),
    (FindingKind::StripeKey, Shape::StripeWebhook),
    (FindingKind::GoogleApiKey, Shape::Google),
    (FindingKind::HuggingfaceToken, Shape::Huggingface),
    (FindingKind::NpmToken, Shape::Npm),
    (FindingKind::PypiToken, Shape::Pypi),
    (FindingKind::SendgridKey, Shape::Sendgrid),
    (FindingKind::TwilioKey, Shape::Twilio),
    (FindingKind::MailgunKey, Shape::Mailgun),
    (FindingKind::Jwt, Shape::Jwt),
];

/// One token shape (see the module doc for its pattern).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    Aws,
    Github,
    GithubPat,
    Gitlab,
    SlackXox,
    SlackApp,
    SlackHook,
    Anthropic,
    OpenaiProject,
    OpenaiLegacy,
    Stripe,
    StripeWebhook,
    Google,
    Huggingface,
    Npm,
    Pypi,
    Sendgrid,
    Twilio,
    Mailgun,
    Jwt,
}

/// Append every token found in `text`, given every position where a [`LITERALS`] entry
/// starts (sorted): leftmost-first, so a candidate inside a token already found is
/// skipped.
///
/// A candidate that fails may have read a long run of its class (`-eyJ-eyJ-...` is one run
/// of `[A-Za-z0-9_-]` holding a candidate every four bytes), so the bytes read are counted;
/// past [`budget`] the scan starts over with the formats compiled as one `regex`
/// ([`Fallback`]), which finds the same tokens in linear time.
pub(crate) fn scan(text: &str, starts: &[usize], out: &mut Vec<Finding>) {
    let t = Text::new(text.as_bytes());
    let budget = budget(text.len());
    let first = out.len();
    let mut at = 0usize;
    for &s in starts {
        if s < at {
            continue;
        }
        if let Some((kind, start, end)) = token_at(&t, s) {
            out.push(Finding::new(kind, start, end));
            at = end;
        }
        if t.read.get() > budget {
            if let Some(fallback) = fallback() {
                out.truncate(first);
                fallback.scan(text, out);
                return;
            }
        }
    }
}

/// Bytes the hand-written checks may read in a text of `len` bytes before the scan turns
/// to [`Fallback`]: ordinary text reads each token once and little else.
fn budget(len: usize) -> usize {
    len.saturating_mul(8).saturating_add(4096)
}

/// The text being scanned and how many bytes the class runs have read.
struct Text<'a> {
    b: &'a [u8],
    read: std::cell::Cell<usize>,
}

impl<'a> Text<'a> {
    fn new(b: &'a [u8]) -> Self {
        Self {
            b,
            read: std::cell::Cell::new(0),
        }
    }

    /// End of the run of `class` bytes starting at `from` (counted as read).
    fn run(&self, from: usize, class: impl Fn(u8) -> bool) -> usize {
        let end = run(self.b, from, class);
        self.read
            .set(self.read.get() + (end.saturating_sub(from)) + 1);
        end
    }

    /// A run of `class` bytes from `from` at least `min` long (and at most `max`): its end.
    fn run_between(
        &self,
        from: usize,
        class: impl Fn(u8) -> bool,
        min: usize,
        max: usize,
    ) -> Option<usize> {
        let end = self.run(from, class);
        (min..=max).contains(&(end - from)).then_some(end)
    }
}

/// The formats as one leftmost-first `regex` alternation (the patterns of the module doc,
/// in order) plus each alone, anchored, to name a match: linear-time by construction.
pub(crate) struct Fallback {
    any: regex::Regex,
    each: Vec<regex::Regex>,
}

/// The patterns of the module doc, in the order of the table.
pub(crate) const PATTERNS: &[&str] = &[
    r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[A-Z0-9]{16}\b",
    r"\bgh[pousr]_[A-Za-z0-9]{30,255}\b",
    r"\bgithub_pat_[A-Za-z0-9_]{40,255}\b",
    r"\bgl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|oas|agent)-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]+)*",
    r"\bxox[abposre]-[A-Za-z0-9-]{10,}",
    r"\bxapp-[0-9]+-[A-Za-z0-9-]{10,}",
    r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{16,}",
    r"\bsk-ant-[A-Za-z0-9_-]{20,}",
    r"\bsk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,}",
    r"\bsk-[A-Za-z0-9]{32,}\b",
    r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b",
    r"\bwhsec_[A-Za-z0-9]{24,}\b",
    r"\bAIza[0-9A-Za-z_-]{35,}",
    r"\bhf_[A-Za-z0-9]{30,}\b",
    r"\bnpm_[A-Za-z0-9]{36,}\b",
    r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}",
    r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43,}",
    r"\bSK[0-9a-fA-F]{32}\b",
    r"\bkey-[0-9a-f]{32}\b",
    r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
];

/// The kinds of [`PATTERNS`], in order.
const PATTERN_KINDS: &[FindingKind] = &[
    FindingKind::AwsAccessKey,
    FindingKind::GithubToken,
    FindingKind::GithubToken,
    FindingKind::GitlabToken,
    FindingKind::SlackToken,
    FindingKind::SlackToken,
    FindingKind::SlackToken,
    FindingKind::AnthropicKey,
    FindingKind::OpenaiKey,
    FindingKind::OpenaiKey,
    FindingKind::StripeKey,
    FindingKind::StripeKey,
    FindingKind::GoogleApiKey,
    FindingKind::HuggingfaceToken,
    FindingKind::NpmToken,
    FindingKind::PypiToken,
    FindingKind::SendgridKey,
    FindingKind::TwilioKey,
    FindingKind::MailgunKey,
    FindingKind::Jwt,
];

/// The compiled [`Fallback`], built on first use (`None` if it cannot be compiled, which
/// the tests rule out; the hand-written scan then simply goes on).
fn fallback() -> Option<&'static Fallback> {
    static FALLBACK: std::sync::LazyLock<Option<Fallback>> =
        std::sync::LazyLock::new(|| Fallback::compile().ok());
    FALLBACK.as_ref()
}

impl Fallback {
    pub(crate) fn compile() -> Result<Self, regex::Error> {
        let any = PATTERNS
            .iter()
            .map(|p| format!("(?:{p})"))
            .collect::<Vec<_>>()
            .join("|");
        Ok(Self {
            any: regex::Regex::new(&format!("(?-u){any}"))?,
            each: PATTERNS
                .iter()
                .map(|p| regex::Regex::new(&format!("(?-u)^(?:{p})$")))
                .collect::<Result<_, _>>()?,
        })
    }

    /// Append every token in `text`, named by the first pattern matching it whole; a
    /// webhook's start moved past its kind.
    pub(crate) fn scan(&self, text: &str, out: &mut Vec<Finding>) {
        for m in self.any.find_iter(text) {
            let hay = m.as_str();
            let kind = self
                .each
                .iter()
                .zip(PATTERN_KINDS)
                .find(|(re, _)| re.is_match(hay))
                .map_or(FindingKind::Jwt, |(_, k)| *k);
            let start = match hay.strip_prefix("hooks.slack.com/") {
                Some(_) => hook_secret_start(text.as_bytes(), m.start()),
                None => m.start(),
            };
            out.push(Finding::new(kind, start, m.end()));
        }
    }
}

/// The token starting at byte `s`, if any: `(kind, masked start, end)`.
fn token_at(t: &Text<'_>, s: usize) -> Option<(FindingKind, usize, usize)> {
    starting_with(*t.b.get(s)?)
        .iter()
        .find_map(|&(kind, shape)| {
            let end = shape.match_at(t, s)?;
            let start = if shape == Shape::SlackHook {
                hook_secret_start(t.b, s)
            } else {
                s
            };
            Some((kind, start, end))
        })
}

/// The formats a match starting with `first` can have, in the table order.
fn starting_with(first: u8) -> &'static [(FindingKind, Shape)] {
    use FindingKind as K;
    match first {
        b'A' => &[
            (K::AwsAccessKey, Shape::Aws),
            (K::GoogleApiKey, Shape::Google),
        ],
        b'g' => &[
            (K::GithubToken, Shape::Github),
            (K::GithubToken, Shape::GithubPat),
            (K::GitlabToken, Shape::Gitlab),
        ],
        b'x' => &[
            (K::SlackToken, Shape::SlackXox),
            (K::SlackToken, Shape::SlackApp),
        ],
        b'h' => &[
            (K::SlackToken, Shape::SlackHook),
            (K::HuggingfaceToken, Shape::Huggingface),
        ],
        b's' => &[
            (K::AnthropicKey, Shape::Anthropic),
            (K::OpenaiKey, Shape::OpenaiProject),
            (K::OpenaiKey, Shape::OpenaiLegacy),
            (K::StripeKey, Shape::Stripe),
        ],
        b'r' => &[(K::StripeKey, Shape::Stripe)],
        b'w' => &[(K::StripeKey, Shape::StripeWebhook)],
        b'n' => &[(K::NpmToken, Shape::Npm)],
        b'p' => &[(K::PypiToken, Shape::Pypi)],
        b'S' => &[
            (K::SendgridKey, Shape::Sendgrid),
            (K::TwilioKey, Shape::Twilio),
        ],
        b'k' => &[(K::MailgunKey, Shape::Mailgun)],
        b'e' => &[(K::Jwt, Shape::Jwt)],
        _ => &[],
    }
}

/// In a Slack webhook URL starting at `s`, where the secret path starts (after the kind).
fn hook_secret_start(b: &[u8], s: usize) -> usize {
    let path = s + SLACK_HOST.len();
    b.get(path..)
        .and_then(|rest| rest.iter().position(|&c| c == b'/'))
        .map_or(path, |i| path + i + 1)
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// `[A-Za-z0-9_-]`.
fn is_b64url(c: u8) -> bool {
    is_word(c) || c == b'-'
}

/// `[A-Za-z0-9-]`.
fn is_alnum_dash(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-'
}

fn is_upper_digit(c: u8) -> bool {
    c.is_ascii_uppercase() || c.is_ascii_digit()
}

/// `\b` before a word byte at `s`: the text start or a non-word byte before it.
fn boundary_before(b: &[u8], s: usize) -> bool {
    s == 0 || b.get(s - 1).is_none_or(|&c| !is_word(c))
}

/// `\b` after a word byte ending at `e`: the text end or a non-word byte.
fn boundary_after(b: &[u8], e: usize) -> bool {
    b.get(e).is_none_or(|&c| !is_word(c))
}

/// End of the run of `class` bytes starting at `from`.
fn run(b: &[u8], from: usize, class: impl Fn(u8) -> bool) -> usize {
    b.get(from..)
        .and_then(|rest| rest.iter().position(|&c| !class(c)))
        .map_or(b.len(), |i| from + i)
}

/// `b[at..]` starts with `lit`; the position after it.
fn lit(b: &[u8], at: usize, lit: &[u8]) -> Option<usize> {
    b.get(at..)?.starts_with(lit).then_some(at + lit.len())
}

/// One of `words` at `at`, then `sep`: the position after `sep`.
fn word_then(b: &[u8], at: usize, words: &[&[u8]], sep: u8) -> Option<usize> {
    words.iter().find_map(|w| {
        let after = lit(b, at, w)?;
        (b.get(after) == Some(&sep)).then_some(after + 1)
    })
}

impl Shape {
    /// Bytes a match can start with.
    #[cfg(test)]
    fn first_bytes(self) -> &'static [u8] {
        match self {
            Self::Aws | Self::Google => b"A",
            Self::Github | Self::GithubPat | Self::Gitlab => b"g",
            Self::SlackXox | Self::SlackApp => b"x",
            Self::SlackHook | Self::Huggingface => b"h",
            Self::Anthropic | Self::OpenaiProject | Self::OpenaiLegacy => b"s",
            Self::Stripe => b"sr",
            Self::StripeWebhook => b"w",
            Self::Npm => b"n",
            Self::Pypi => b"p",
            Self::Sendgrid | Self::Twilio => b"S",
            Self::Mailgun => b"k",
            Self::Jwt => b"e",
        }
    }

    /// The end of this shape's match starting at `s`, if it matches there.
    fn match_at(self, t: &Text<'_>, s: usize) -> Option<usize> {
        let b = t.b;
        if self != Self::SlackHook && !boundary_before(b, s) {
            return None;
        }
        const ANY: usize = usize::MAX;
        match self {
            Self::Aws => {
                let head = b.get(s..s + 4)?;
                AWS_PREFIXES
                    .iter()
                    .any(|p| p.as_slice() == head)
                    .then_some(())?;
                let end = s + 20;
                let body = b.get(s + 4..end)?;
                (body.iter().all(|&c| is_upper_digit(c)) && boundary_after(b, end)).then_some(end)
            }
            Self::Github => {
                let p = lit(b, s, b"gh")?;
                matches!(b.get(p), Some(b'p' | b'o' | b'u' | b's' | b'r')).then_some(())?;
                let p = lit(b, p + 1, b"_")?;
                let end = t.run_between(p, |c| c.is_ascii_alphanumeric(), 30, 255)?;
                boundary_after(b, end).then_some(end)
            }
            Self::GithubPat => t.run_between(lit(b, s, b"github_pat_")?, is_word, 40, 255),
            Self::Gitlab => {
                let p = word_then(b, lit(b, s, b"gl")?, GITLAB_KINDS, b'-')?;
                let mut end = t.run_between(p, is_b64url, 20, ANY)?;
                while b.get(end) == Some(&b'.') && b.get(end + 1).is_some_and(|&c| is_b64url(c)) {
                    end = t.run(end + 1, is_b64url);
                }
                Some(end)
            }
            Self::SlackXox => {
                let p = lit(b, s, b"xox")?;
                matches!(
                    b.get(p),
                    Some(b'a' | b'b' | b'p' | b'o' | b's' | b'r' | b'e')
                )
                .then_some(())?;
                t.run_between(lit(b, p + 1, b"-")?, is_alnum_dash, 10, ANY)
            }
            Self::SlackApp => {
                let p = lit(b, s, b"xapp-")?;
                let digits = t.run_between(p, |c| c.is_ascii_digit(), 1, ANY)?;
                t.run_between(lit(b, digits, b"-")?, is_alnum_dash, 10, ANY)
            }
            Self::SlackHook => {
                let p = word_then(b, lit(b, s, SLACK_HOST)?, SLACK_HOOK_KINDS, b'/')?;
                t.run_between(p, |c| is_b64url(c) || c == b'/', 16, ANY)
            }
            Self::Anthropic => t.run_between(lit(b, s, b"sk-ant-")?, is_b64url, 20, ANY),
            Self::OpenaiProject => {
                let p = word_then(b, lit(b, s, b"sk-")?, OPENAI_KINDS, b'-')?;
                t.run_between(p, is_b64url, 20, ANY)
            }
            Self::OpenaiLegacy => {
                let end =
                    t.run_between(lit(b, s, b"sk-")?, |c| c.is_ascii_alphanumeric(), 32, ANY)?;
                boundary_after(b, end).then_some(end)
            }
            Self::Stripe => {
                matches!(b.get(s), Some(b's' | b'r')).then_some(())?;
                let p = word_then(b, lit(b, s + 1, b"k_")?, &[b"live", b"test"], b'_')?;
                let end = t.run_between(p, |c| c.is_ascii_alphanumeric(), 16, ANY)?;
                boundary_after(b, end).then_some(end)
            }
            Self::StripeWebhook => {
                let end = t.run_between(
                    lit(b, s, b"whsec_")?,
                    |c| c.is_ascii_alphanumeric(),
                    24,
                    ANY,
                )?;
                boundary_after(b, end).then_some(end)
            }
            Self::Google => t.run_between(lit(b, s, b"AIza")?, is_b64url, 35, ANY),
            Self::Huggingface => {
                let end =
                    t.run_between(lit(b, s, b"hf_")?, |c| c.is_ascii_alphanumeric(), 30, ANY)?;
                boundary_after(b, end).then_some(end)
            }
            Self::Npm => {
                let end =
                    t.run_between(lit(b, s, b"npm_")?, |c| c.is_ascii_alphanumeric(), 36, ANY)?;
                boundary_after(b, end).then_some(end)
            }
            Self::Pypi => t.run_between(lit(b, s, PYPI_PREFIX)?, is_b64url, 50, ANY),
            Self::Sendgrid => {
                let p = t.run_between(lit(b, s, b"SG.")?, is_b64url, 22, 22)?;
                t.run_between(lit(b, p, b".")?, is_b64url, 43, ANY)
            }
            Self::Twilio => {
                let end = t.run_between(lit(b, s, b"SK")?, |c| c.is_ascii_hexdigit(), 32, 32)?;
                boundary_after(b, end).then_some(end)
            }
            Self::Mailgun => {
                let hex = |c: u8| c.is_ascii_digit() || (b'a'..=b'f').contains(&c);
                let end = t.run_between(lit(b, s, b"key-")?, hex, 32, 32)?;
                boundary_after(b, end).then_some(end)
            }
            Self::Jwt => {
                let p = t.run_between(lit(b, s, b"eyJ")?, is_b64url, 8, ANY)?;
                let p = t.run_between(lit(b, p, b".")?, is_b64url, 8, ANY)?;
                Some(t.run(lit(b, p, b".")?, is_b64url))
            }
        }
    }
}

#[cfg(test)]
#[path = "tokens_tests.rs"]
mod tests;
