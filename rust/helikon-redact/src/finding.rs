//! What a scan found: a kind and a half-open byte range of the scanned text.
//!
//! Every matcher reports raw spans; [`merge`] folds overlapping and touching spans into the
//! regions that are actually masked, so `findings(text)` and `redact(text)` always agree.
use serde::Serialize;

/// Why a region was redacted.
///
/// The order of the variants is the tie-break when two spans start at the same byte: the
/// more specific kind (a token format) names the merged region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// `-----BEGIN ... PRIVATE KEY-----` block body.
    PrivateKey,
    /// AWS access key id (`AKIA...`, `ASIA...`).
    AwsAccessKey,
    /// GitHub token (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`).
    GithubToken,
    /// GitLab token (`glpat-` and relatives).
    GitlabToken,
    /// Slack token (`xoxb-`, `xoxp-`, ..., `xapp-`) or incoming-webhook path.
    SlackToken,
    /// Anthropic API key (`sk-ant-...`).
    AnthropicKey,
    /// OpenAI API key (`sk-proj-...`, legacy `sk-...`).
    OpenaiKey,
    /// Stripe secret or restricted key, or webhook signing secret.
    StripeKey,
    /// Google API key (`AIza...`).
    GoogleApiKey,
    /// Hugging Face access token (`hf_...`).
    HuggingfaceToken,
    /// npm access token (`npm_...`).
    NpmToken,
    /// PyPI upload token (`pypi-AgEIcHlwaS5vcmc...`).
    PypiToken,
    /// SendGrid API key (`SG.` + 22 + `.` + 43 base64url characters).
    SendgridKey,
    /// Twilio API key SID (`SK` + 32 hex digits).
    TwilioKey,
    /// Mailgun API key (`key-` + 32 hex digits).
    MailgunKey,
    /// AWS secret access key (40 base64 characters next to an access key id).
    AwsSecretKey,
    /// JSON Web Token (three base64url segments, header starting `eyJ`).
    Jwt,
    /// A vendor token of the prefix table (Google OAuth, Shopify, Vault, DigitalOcean,
    /// Linear, Doppler, Grafana, Databricks, Postman, New Relic, Atlassian, Square,
    /// Telegram and Discord bots; module `vendor`).
    VendorToken,
    /// Credentials of an `Authorization` / `Proxy-Authorization` header.
    Authorization,
    /// Password in a URL's userinfo (`scheme://user:PASSWORD@host`).
    UrlPassword,
    /// Value of a secret-named key (`KEY=`, `KEY:`, JSON/YAML keys, flags).
    SecretKeyValue,
    /// A known secret value (secret-named env var or an extra secret).
    KnownValue,
}

impl FindingKind {
    /// The stable snake_case name used in JSON and in Python.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PrivateKey => "private_key",
            Self::AwsAccessKey => "aws_access_key",
            Self::GithubToken => "github_token",
            Self::GitlabToken => "gitlab_token",
            Self::SlackToken => "slack_token",
            Self::AnthropicKey => "anthropic_key",
            Self::OpenaiKey => "openai_key",
            Self::StripeKey => "stripe_key",
            Self::GoogleApiKey => "google_api_key",
            Self::HuggingfaceToken => "huggingface_token",
            Self::NpmToken => "npm_token",
            Self::PypiToken => "pypi_token",
            Self::SendgridKey => "sendgrid_key",
            Self::TwilioKey => "twilio_key",
            Self::MailgunKey => "mailgun_key",
            Self::AwsSecretKey => "aws_secret_key",
            Self::Jwt => "jwt",
            Self::VendorToken => "vendor_token",
            Self::Authorization => "authorization",
            Self::UrlPassword => "url_password",
            Self::SecretKeyValue => "secret_key_value",
            Self::KnownValue => "known_value",
        }
    }
}

/// One redacted region: `text[start..end]` (byte offsets, on char boundaries) is masked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// Why the region is redacted.
    pub kind: FindingKind,
    /// First byte of the region.
    pub start: usize,
    /// One past the last byte of the region.
    pub end: usize,
}

impl Finding {
    pub(crate) fn new(kind: FindingKind, start: usize, end: usize) -> Self {
        Self { kind, start, end }
    }
}

/// Sort and fold overlapping or touching spans into disjoint regions, in place.
///
/// A merged region keeps the kind of its earliest span (ties: the most specific kind).
/// Empty spans are dropped.
pub(crate) fn merge(spans: &mut Vec<Finding>) {
    spans.retain(|f| f.start < f.end);
    // Equal keys are equal findings, so an unstable sort gives the same result.
    spans.sort_unstable_by_key(|f| (f.start, f.kind, std::cmp::Reverse(f.end)));
    let mut kept = 0usize;
    for i in 0..spans.len() {
        let Some(f) = spans.get(i).copied() else {
            break;
        };
        match kept.checked_sub(1).and_then(|k| spans.get_mut(k)) {
            Some(last) if f.start <= last.end => last.end = last.end.max(f.end),
            _ => {
                if let Some(slot) = spans.get_mut(kept) {
                    *slot = f;
                }
                kept += 1;
            }
        }
    }
    spans.truncate(kept);
}

/// Replace every region of `findings` (disjoint, sorted) in `text` with `mask`.
pub(crate) fn apply(text: &str, findings: &[Finding], mask: &str) -> String {
    let mut out = String::new();
    apply_into(text, findings, mask, &mut out);
    out
}

/// [`apply`] into `out` (cleared first), reusing its buffer.
pub(crate) fn apply_into(text: &str, findings: &[Finding], mask: &str, out: &mut String) {
    out.clear();
    out.reserve(text.len() + findings.len() * mask.len());
    let mut at = 0;
    for f in findings {
        out.push_str(text.get(at..f.start).unwrap_or_default());
        out.push_str(mask);
        at = f.end;
    }
    out.push_str(text.get(at..).unwrap_or_default());
}

/// Maps offsets of a text in which `pieces` were replaced by a mask back to the original.
#[derive(Debug, Default)]
pub(crate) struct OffsetMap {
    /// `(masked_start, masked_end, original_start, original_end)` per masked piece.
    pieces: Vec<(usize, usize, usize, usize)>,
}

impl OffsetMap {
    /// Rebuild for `pieces` (disjoint, sorted) replaced by a mask of `mask_len` bytes,
    /// reusing the buffer.
    pub(crate) fn rebuild(&mut self, pieces: &[Finding], mask_len: usize) {
        self.pieces.clear();
        let (mut orig_at, mut masked_at) = (0usize, 0usize);
        for p in pieces {
            let ms = masked_at + (p.start - orig_at);
            self.pieces.push((ms, ms + mask_len, p.start, p.end));
            masked_at = ms + mask_len;
            orig_at = p.end;
        }
    }

    /// Heap bytes held.
    pub(crate) fn capacity_bytes(&self) -> usize {
        self.pieces
            .capacity()
            .saturating_mul(std::mem::size_of::<(usize, usize, usize, usize)>())
    }

    /// Where each mask lies in the masked text: sorted, disjoint `(start, end)`.
    pub(crate) fn masked_spans(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.pieces.iter().map(|&(ms, me, _, _)| (ms, me))
    }

    /// A span of the masked text as a span of the original; a bound inside a mask widens
    /// to the whole masked piece.
    pub(crate) fn to_original(&self, f: Finding) -> Finding {
        Finding::new(f.kind, self.map(f.start, false), self.map(f.end, true))
    }

    fn map(&self, x: usize, is_end: bool) -> usize {
        // Last piece starting at or before x.
        let idx = self.pieces.partition_point(|&(ms, _, _, _)| ms <= x);
        let Some(&(ms, me, os, oe)) = idx.checked_sub(1).and_then(|i| self.pieces.get(i)) else {
            return x;
        };
        if x == ms {
            os
        } else if x < me {
            if is_end {
                oe
            } else {
                os
            }
        } else {
            oe + (x - me)
        }
    }
}

/// Convert sorted byte-offset findings to char (Unicode scalar) offsets in one pass.
///
/// Python indexes strings by code point, so the binding reports these.
pub fn to_char_offsets(text: &str, findings: &[Finding]) -> Vec<Finding> {
    let mut bounds: Vec<usize> = findings.iter().flat_map(|f| [f.start, f.end]).collect();
    bounds.sort_unstable();
    bounds.dedup();
    let mut map = Vec::with_capacity(bounds.len());
    let mut chars = 0usize;
    let mut iter = text.char_indices().peekable();
    for b in bounds {
        while iter.next_if(|&(i, _)| i < b).is_some() {
            chars += 1;
        }
        map.push((b, chars));
    }
    let lookup = |b: usize| {
        map.binary_search_by_key(&b, |&(k, _)| k)
            .ok()
            .and_then(|i| map.get(i))
            .map_or(0, |&(_, c)| c)
    };
    findings
        .iter()
        .map(|f| Finding::new(f.kind, lookup(f.start), lookup(f.end)))
        .collect()
}
