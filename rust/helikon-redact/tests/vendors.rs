//! Vendor token formats, generated: for every kind, tokens drawn from the published shape
//! (prefix, length, alphabet) with a seeded generator, placed in several contexts (prose,
//! an env line, JSON, a URL query, a log line with punctuation, a `Bearer` header). Each
//! must be masked whole, with the context around it kept. No real credential appears.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use helikon_redact::Redactor;

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const B64URL: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const HEX: &[u8] = b"0123456789abcdef";

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn chars(&mut self, alphabet: &[u8], n: usize) -> String {
        (0..n)
            .map(|_| char::from(alphabet[(self.next() % alphabet.len() as u64) as usize]))
            .collect()
    }
    /// `min` to `min + spread - 1` characters.
    fn chars_between(&mut self, alphabet: &[u8], min: usize, spread: u64) -> String {
        let n = min + (self.next() % spread) as usize;
        self.chars(alphabet, n)
    }
    fn pick<'a>(&mut self, options: &[&'a str]) -> &'a str {
        options[(self.next() % options.len() as u64) as usize]
    }
}

/// One synthetic token of each kind: `(kind, token)`.
fn tokens(r: &mut Rng) -> Vec<(&'static str, String)> {
    let upper_digits = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    vec![
        (
            "sendgrid",
            format!("SG.{}.{}", r.chars(B64URL, 22), r.chars(B64URL, 43)),
        ),
        (
            "stripe",
            format!(
                "{}_{}_{}",
                r.pick(&["sk", "rk"]),
                r.pick(&["live", "test"]),
                r.chars_between(ALNUM, 24, 76)
            ),
        ),
        (
            "slack",
            format!(
                "{}-{}-{}-{}",
                r.pick(&["xoxb", "xoxp", "xoxa", "xoxs", "xoxe"]),
                r.chars(b"0123456789", 12),
                r.chars(b"0123456789", 13),
                r.chars(ALNUM, 24)
            ),
        ),
        (
            "slack_webhook",
            format!(
                "https://hooks.slack.com/services/T{}/B{}/{}",
                r.chars(upper_digits, 8),
                r.chars(upper_digits, 10),
                r.chars(ALNUM, 24)
            ),
        ),
        (
            "github",
            format!(
                "{}_{}",
                r.pick(&["ghp", "gho", "ghu", "ghs", "ghr"]),
                r.chars(ALNUM, 36)
            ),
        ),
        (
            "github_pat",
            format!("github_pat_{}_{}", r.chars(ALNUM, 22), r.chars(ALNUM, 59)),
        ),
        (
            "gitlab",
            format!(
                "{}-{}",
                r.pick(&["glpat", "gldt", "glrt", "glptt", "glft", "glsoat", "glcbt"]),
                r.chars(B64URL, 20)
            ),
        ),
        ("npm", format!("npm_{}", r.chars(ALNUM, 36))),
        (
            "pypi",
            format!("pypi-AgEIcHlwaS5vcmc{}", r.chars_between(B64URL, 70, 100)),
        ),
        ("huggingface", format!("hf_{}", r.chars(ALNUM, 34))),
        ("twilio", format!("SK{}", r.chars(HEX, 32))),
        ("mailgun", format!("key-{}", r.chars(HEX, 32))),
        ("google_api_key", format!("AIza{}", r.chars(B64URL, 35))),
        (
            "openai",
            format!(
                "sk-{}-{}",
                r.pick(&["proj", "svcacct", "admin"]),
                r.chars_between(B64URL, 48, 100)
            ),
        ),
        (
            "openai_legacy",
            format!("sk-{}T3BlbkFJ{}", r.chars(ALNUM, 20), r.chars(ALNUM, 20)),
        ),
        (
            "anthropic",
            format!(
                "sk-ant-{}-{}",
                r.pick(&["api03", "admin01"]),
                r.chars(B64URL, 93)
            ),
        ),
        (
            "jwt",
            format!(
                "eyJ{}.eyJ{}.{}",
                r.chars(B64URL, 30),
                r.chars(B64URL, 60),
                r.chars(B64URL, 43)
            ),
        ),
        (
            "aws_access_key",
            format!("{}{}", r.pick(&["AKIA", "ASIA"]), r.chars(upper_digits, 16)),
        ),
        // Attack R6: the prefix table of module `vendor`.
        (
            "google_oauth_secret",
            format!("GOCSPX-{}", r.chars(B64URL, 28)),
        ),
        (
            "google_access_token",
            format!("ya29.{}", r.chars_between(B64URL, 60, 120)),
        ),
        (
            "shopify",
            format!(
                "{}_{}",
                r.pick(&["shpat", "shpss", "shpca", "shppa"]),
                r.chars(HEX, 32)
            ),
        ),
        (
            "vault",
            format!(
                "{}.{}",
                r.pick(&["hvs", "hvb", "hvr"]),
                r.chars_between(ALNUM, 24, 120)
            ),
        ),
        (
            "digitalocean",
            format!("{}_v1_{}", r.pick(&["dop", "doo", "dor"]), r.chars(HEX, 64)),
        ),
        ("linear", format!("lin_api_{}", r.chars(ALNUM, 40))),
        (
            "doppler",
            format!(
                "dp.{}.{}",
                r.pick(&["pt", "st", "sa", "ct"]),
                r.chars(ALNUM, 43)
            ),
        ),
        (
            "grafana",
            format!("{}_{}", r.pick(&["glsa", "glc"]), r.chars(ALNUM, 40)),
        ),
        ("databricks", format!("dapi{}", r.chars(HEX, 32))),
        ("postman", format!("PMAK-{}", r.chars(HEX, 24))),
        ("new_relic", format!("NRAK-{}", r.chars(upper_digits, 27))),
        ("atlassian", format!("ATATT3x{}", r.chars(B64URL, 180))),
        ("square", format!("sq0csp-{}", r.chars(B64URL, 43))),
        (
            "telegram_bot",
            format!(
                "{}:AA{}",
                r.chars_between(b"123456789", 8, 3),
                r.chars(B64URL, 33)
            ),
        ),
        (
            "discord_bot",
            format!(
                "MT{}{}.{}.{}",
                r.pick(&["A", "E", "I", "M", "Q", "U", "Y", "c", "g", "k"]),
                r.chars_between(ALNUM, 21, 3),
                r.chars(B64URL, 6),
                r.chars_between(B64URL, 27, 12)
            ),
        ),
        ("npm", format!("npm_{}", r.chars(ALNUM, 36))),
        ("openai_project", format!("sk-proj-{}", r.chars(B64URL, 48))),
        ("anthropic", format!("sk-ant-api03-{}", r.chars(B64URL, 93))),
    ]
}

/// Look-alikes of the R6 prefixes that are not tokens: each must be left alone.
#[test]
fn vendor_prefix_look_alikes_are_left_alone() {
    let r = Redactor::new(Vec::<String>::new()).unwrap();
    for text in [
        "ya29.short",
        "hvs.too-short",
        "MTU 1500 qdisc noqueue state UP",
        "MTA-STS policy fetched",
        "shpat_not_hex_zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz",
        "dapi_version 2.0 dapi12",
        "1234567:AAbc short",
        "12345678901:AA99999999999999999999999999999999999",
        "lin_api_short",
        "GOCSPX-",
        "build of dp.pt.version 3",
    ] {
        assert_eq!(r.redact(text), text, "{text}");
    }
}

/// Contexts with `{}` where the token goes; everything else must survive.
const CONTEXTS: &[&str] = &[
    "using {} to authenticate",
    "X_CONFIG={}\n",
    "{\"value\": \"{}\", \"n\": 1}",
    "GET https://api.example.com/v1?k={}&page=2",
    "error: token '{}' rejected (401).",
    "> X-Value: {}\n",
    "({})",
];

#[test]
fn every_vendor_format_in_every_context() {
    let r0 = Redactor::new(Vec::<String>::new()).unwrap();
    let mut rng = Rng(0x5EED_1234_ABCD_0001);
    let mut failures = Vec::new();
    let mut seen = 0;
    for _round in 0..40 {
        for (kind, token) in tokens(&mut rng) {
            for ctx in CONTEXTS {
                let text = ctx.replace("{}", &token);
                let out = r0.redact(&text);
                // The webhook keeps its host and kind: only the path secret goes.
                let secret = match kind {
                    "slack_webhook" => token.rsplit("/services/").next().unwrap().to_string(),
                    _ => token.clone(),
                };
                let want = text.replace(&secret, "***");
                seen += 1;
                if out != want {
                    failures.push(format!("{kind} in {ctx:?}: got {out:?}"));
                }
            }
        }
    }
    assert!(seen > 4000);
    assert!(
        failures.is_empty(),
        "{} failures, e.g. {:#?}",
        failures.len(),
        &failures[..failures.len().min(8)]
    );
}
