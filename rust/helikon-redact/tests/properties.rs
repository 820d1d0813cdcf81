//! Invariants that hold for every input: findings and redact agree, output is idempotent,
//! offsets are sane, and scanning stays linear on adversarial text.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use helikon_redact::{
    is_secret_name, to_char_offsets, FindingKind, RedactError, Redactor, MAX_MASK_LEN,
};
use serde_json::json;

const GH: &str = "ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";

fn samples() -> Vec<String> {
    vec![
        format!("POST /repos failed; headers={{'Authorization': 'token {GH}'}}"),
        "FOO=1 BAR_TOKEN=x\n{\"password\": \"p\", \"a\": 1}\nhttps://u:pw@h/x".to_string(),
        "ключ DB_PASSWORD=пароль123 🔑 hunter2hunter2 é".to_string(),
        "-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----".to_string(),
        "\"A_TOKEN=abc\"def x_api_key='q' \\\"p_secret\\\": \\\"z\\\"".to_string(),
        "hunter2hunter2hunter2hunter2 HUNTER2HUNTER2".to_string(),
    ]
}

#[test]
fn findings_and_redact_agree_and_are_idempotent() {
    let r = Redactor::new(["hunter2hunter2"]).unwrap();
    for text in samples() {
        let found = r.findings(&text);
        let mut spliced = String::new();
        let mut at = 0;
        for f in &found {
            assert!(f.start < f.end && at <= f.start, "{found:?}");
            assert!(text.is_char_boundary(f.start) && text.is_char_boundary(f.end));
            spliced.push_str(&text[at..f.start]);
            spliced.push_str("***");
            at = f.end;
        }
        spliced.push_str(&text[at..]);
        let out = r.redact(&text);
        assert_eq!(out, spliced);
        assert_eq!(r.redact(&out), out, "not idempotent for {text:?}");
        assert!(!out.contains("hunter2") && !out.to_lowercase().contains("hunter2"));
        assert!(!out.contains(GH));
    }
}

#[test]
fn br21_token_is_gone_and_context_survives() {
    let r = Redactor::builder()
        .with_env([("GH_TOKEN", GH)])
        .build()
        .unwrap();
    assert_eq!(r.known_secret_count(), 1);
    let err = format!("POST /repos failed; headers={{'Authorization': 'token {GH}'}}");
    let out = r.redact(&err);
    assert_eq!(
        out,
        "POST /repos failed; headers={'Authorization': 'token ***'}"
    );
    assert_eq!(r.redact(&format!("{GH}\n")), "***\n");
    // Without the env var the token format alone catches it.
    let bare = Redactor::new(Vec::<String>::new()).unwrap();
    assert_eq!(bare.redact(&format!("echo\n{GH}\n")), "echo\n***\n");
}

#[test]
fn char_offsets_count_code_points() {
    let r = Redactor::new(["secretvalue99"]).unwrap();
    let text = "🔑é secretvalue99 ключ";
    let bytes = r.findings(text);
    assert_eq!(bytes.len(), 1);
    assert_eq!((bytes[0].start, bytes[0].end), (7, 20));
    let chars = to_char_offsets(text, &bytes);
    assert_eq!((chars[0].start, chars[0].end), (3, 16));
    assert_eq!(chars[0].kind, FindingKind::KnownValue);
    let as_chars: Vec<char> = text.chars().collect();
    assert_eq!(as_chars[3..16].iter().collect::<String>(), "secretvalue99");
}

#[test]
fn overlapping_spans_merge_with_the_most_specific_kind() {
    let r = Redactor::new(Vec::<String>::new()).unwrap();
    let f = r.findings(&format!("GITHUB_TOKEN={GH}"));
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].kind, FindingKind::GithubToken);
    assert_eq!((f[0].start, f[0].end), (13, 13 + GH.len()));
    // Registered as a known value too: known values are matched first and name the span.
    let r = Redactor::new([GH]).unwrap();
    let f = r.findings(&format!("GITHUB_TOKEN={GH}"));
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].kind, FindingKind::KnownValue);
}

#[test]
fn secret_spanning_a_masked_value_is_still_removed() {
    // The spec's sequential passes would mask `abc` first and then miss the multi-line
    // secret. Here the known value is masked first; the key value is then the mask, and
    // the rest of the (now single) line is kept.
    let r = Redactor::new(["abc\nabcdefgh"]).unwrap();
    assert_eq!(
        r.redact("A_TOKEN=abc\nabcdefgh tail\nnext"),
        "A_TOKEN=*** tail\nnext"
    );
    // Glued to a known value, a token is seen as it will be after masking.
    let r = Redactor::new(["hunter2hunter2"]).unwrap();
    assert_eq!(r.redact("AKIAIOSFODNN7EXAMPLEhunter2hunter2 x"), "*** x");
}

#[test]
fn json_values_mask_secret_named_keys() {
    let r = Redactor::new(Vec::<String>::new()).unwrap();
    let v = json!({
        "headers": {"Authorization": "Bearer abc", "X-Api-Key": "k1", "Accept": "*/*"},
        "env": ["A_TOKEN=x", "HOME=/root"],
        "clientSecret": "", "n": 5, "password": 1234
    });
    assert_eq!(
        r.redact_value(&v),
        json!({
            "headers": {"Authorization": "Bearer ***", "X-Api-Key": "***", "Accept": "*/*"},
            "env": ["A_TOKEN=***", "HOME=/root"],
            "clientSecret": "", "n": 5, "password": 1234
        })
    );
}

#[test]
fn secret_names() {
    for yes in [
        "OPENAI_API_KEY",
        "x-api-key",
        "api.key",
        "API_KEY",
        "apiKey",
        "clientSecret",
        "DB_PASSWORD",
        "password",
        "AWS_SECRET_ACCESS_KEY",
        "GH_TOKEN",
        "Authorization",
        "Proxy-Authorization",
        "svc_credential",
        "DJANGO_SECRET_KEY",
        "_TOKEN",
        // Issue 14: the bare names, `CREDENTIALS`, `ACCESS_KEY` and the file-format keys.
        "TOKEN",
        "Secret",
        "credentials",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "access-key",
        "MINIO_ACCESS_KEY",
        "AccountKey",
        "SharedAccessKey",
        "client-key-data",
        "client-certificate-data",
        "identitytoken",
        "DD_APP_KEY",
        // Attack R7: keys named for what they unlock or seed, in env, camel and dash forms.
        "MASTER_KEY",
        "RAILS_MASTER_KEY",
        "masterKey",
        "SECRET_KEY_BASE",
        "secret-key-base",
        "JWT_HMAC_KEY",
        "NEXTAUTH_SESSION_KEY",
        "LICENSE_KEY",
        "SecretString",
        "vault.secret_value",
    ] {
        assert!(is_secret_name(yes), "{yes} should be secret-named");
    }
    for no in [
        "MAX_TOKENS",
        "maxTokens",
        "HOME",
        "PATH",
        "TOKEN_TYPE",
        "AWS_ACCESS_KEY_ID",
        "KEY",
        "PUBLIC_KEY",
        "PASSWORD_FILE",
        "TOKENS",
        "SECRETS",
        // Attack R7's benign look-alikes: names of keys, counts and references.
        "KEYBOARD_LAYOUT",
        "primary_key",
        "PRIMARY_KEY",
        "foreign_key",
        "token_count",
        "max_tokens",
        "SECRET_NAME",
        "SECRET_ID",
        "secret_arn",
        "KEY_NAME",
        "MASTER_KEY_ID",
        "sort_key",
        "cache_key",
    ] {
        assert!(!is_secret_name(no), "{no} should not be secret-named");
    }
}

#[test]
fn mask_is_configurable_and_bounded_without_echoing_it() {
    let r = Redactor::builder().mask("<hidden>").build().unwrap();
    assert_eq!(r.redact("A_TOKEN=x"), "A_TOKEN=<hidden>");
    assert_eq!(r.redact("A_TOKEN=<hidden>"), "A_TOKEN=<hidden>");
    let long = "s3cr3t".repeat(100);
    let err = Redactor::builder().mask(long.clone()).build().unwrap_err();
    assert!(matches!(err, RedactError::Config(_)));
    let msg = err.to_string();
    assert!(
        msg.contains(&MAX_MASK_LEN.to_string()) && !msg.contains("s3cr3t"),
        "{msg}"
    );
}

/// Best of three runs.
fn time(r: &Redactor, text: &str) -> Duration {
    (0..5)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(r.redact(text));
            t.elapsed()
        })
        .min()
        .unwrap()
}

#[test]
fn adversarial_inputs_scale_linearly() {
    let r = Redactor::new(["hunter2hunter2", "aaaaaaaab"]).unwrap();
    let units: &[&str] = &[
        "a_token:",
        "x_token=\"",
        "\"password\": \"",
        "-----BEGIN PRIVATE KEY-----",
        "://a:",
        "?api_key=",
        "Authorization: ",
        "aaaaaaaa",
        "eyJaaaaaaaaaa.",
        "'k_secret",
        "\\\"",
        "a_token: f(",
        "x_token=os.environ[\"A_TOKEN\"](",
        "\"password\": {",
        "x_token: {{ ",
        "a_token: Optional[",
        "a_token: str = ",
        "a_token: str = f(",
        "/a_token: ",
        "/a_token:ro",
        "--api-key=KEY ",
        "self.a_token = a_token.",
        "a_token: ${{ ",
        // Token candidates inside one long run of a token's character class.
        "-eyJ",
        "-eyJ.aaaaaaaa.",
        "-xoxb",
        "-xapp-1-",
        "/hooks.slack.com/services/",
        ".glpat-",
        "-sk-ant-",
        "-sk-proj-",
        "-AIza",
        "-pypi-AgEIcHlwaS5vcmc",
        "-ghp_",
        " sk-",
        // Issue 14's matchers: blank-separated flags and netrc, file formats, AWS pairs,
        // minified JS, shell words and phrases.
        "--password ",
        " --token -",
        "login u password ",
        "machine h password ",
        "\"auth\": \"Zm9vOmJhcg==",
        "_auth=",
        "AKIAIOSFODNN7EXAMPLE ",
        "SK0123456789abcdef0123456789abcdef",
        "{token:",
        "x.token=f(",
        "a_token=\"",
        "a_token=$(",
        "password: a ",
        "p_token: (",
        // Multi-line values (YAML block scalars, TOML multi-line strings) on one long line.
        "a_token: | ",
        "a_token: |",
        "a_token: >- b_token: |\r",
        "a_token = \"\"\" ",
        "a_token = \"\"\"",
        "a_token = ''' ",
        // Attack R5-R7: cookie headers on one long line, signed-URL parameters, the vendor
        // prefixes repeated inside one run of their alphabet, Telegram/Discord shapes.
        "Cookie: a=b; ",
        "Set-Cookie: s=v; Path=/; ",
        "cookie:",
        "&X-Amz-Signature=",
        "?X-Amz-Credential=a&",
        "https://x/?sig=",
        "https://aaaaaaaaaaaaaaaaaaaaaa1",
        "GOCSPX-",
        "ya29.",
        "ya29.a",
        "=glc_",
        "hvs.",
        "-dapi",
        "1234567890:AA",
        ":AA",
        "MTA",
        "MTAaaaaaaaaaaaaaaaaaaaaaaa.aaaaaa.",
        "RAILS_MASTER_KEY=",
        "secret_key_base: ",
    ];
    for unit in units {
        let small = unit.repeat(1_000);
        let large = unit.repeat(32_000);
        let (ts, tl) = (time(&r, &small), time(&r, &large));
        // 32x the input: linear is ~32x, quadratic ~1000x. The bound is loose because the
        // machine may be busy; it still fails any quadratic pass.
        let limit = ts * 200 + Duration::from_millis(50);
        assert!(
            tl <= limit,
            "{unit:?}: {ts:?} for 1k units, {tl:?} for 32k units"
        );
        // Same on one line per unit.
        let lines = format!("{unit}\n").repeat(8_000);
        assert_eq!(r.redact(&r.redact(&lines)), r.redact(&lines));
    }
}

/// Deterministic xorshift64* so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

const FRAGMENTS: &[&str] = &[
    "A_TOKEN",
    "api_key",
    "X-Api-Key",
    "password",
    "Authorization",
    "clientSecret",
    "TOKEN",
    "=",
    ":",
    " = ",
    ": ",
    "::",
    "==",
    "\"",
    "'",
    "\\\"",
    "\\",
    " ",
    "\t",
    "\n",
    "\r\n",
    ",",
    "}",
    "{",
    "[",
    "]",
    "?",
    "&",
    "#",
    "://",
    "@",
    "u",
    "pw",
    "Bearer ",
    "abc",
    "xyz123",
    "***",
    "é",
    "🔑",
    "-----BEGIN PRIVATE KEY-----",
    "-----END PRIVATE KEY-----",
    "AKIAIOSFODNN7EXAMPLE",
    GH,
    " ghp_Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8Nn7 ",
    "sk-ant-api03-AbCdEfGhIjKlMnOpQrSt",
    "eyJhbGciOiJI.eyJzdWIiOiIx.sig",
    "hunter2hunter2",
    "HUNTER2hunter2",
    "hunter2",
    "export ",
    "--password=",
    "null",
    "true",
    // Non-key contexts (src/context.rs): paths, annotations, references, templates.
    "/",
    "C:\\x\\",
    "str",
    "Optional[str]",
    "(",
    ")",
    "os.environ[",
    "self.",
    "$",
    "${",
    "{{",
    "}}",
    "<",
    ">",
    "KEY",
    "ro",
    "None",
    "No such file or directory",
];

#[test]
fn random_fragment_texts_keep_every_invariant() {
    let r = Redactor::new(["hunter2hunter2"]).unwrap();
    // HELIKON_REDACT_SEED / HELIKON_REDACT_ITERS widen the search locally.
    let seed = std::env::var("HELIKON_REDACT_SEED")
        .ok()
        .and_then(|s| s.parse().ok());
    let iters = std::env::var("HELIKON_REDACT_ITERS")
        .ok()
        .and_then(|s| s.parse().ok());
    let mut rng = Rng(seed.unwrap_or(0x9E37_79B9_7F4A_7C15));
    for _ in 0..iters.unwrap_or(20_000) {
        let n = 1 + (rng.next() % 24) as usize;
        let text: String = (0..n).map(|_| rng.pick(FRAGMENTS)).collect();
        let found = r.findings(&text);
        let mut at = 0;
        for f in &found {
            assert!(
                at <= f.start && f.start < f.end && f.end <= text.len(),
                "{text:?} {found:?}"
            );
            assert!(text.is_char_boundary(f.start) && text.is_char_boundary(f.end));
            at = f.end;
        }
        let once = r.redact(&text);
        assert_eq!(r.redact(&once), once, "not idempotent for {text:?}");
        assert!(
            !once.to_ascii_lowercase().contains("hunter2hunter2"),
            "{text:?} -> {once:?}"
        );
        assert!(
            !once.contains("Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8Nn7"),
            "{text:?} -> {once:?}"
        );
    }
}

#[test]
fn debug_output_never_shows_a_known_secret() {
    let r = Redactor::new(["hunter2hunter2"]).unwrap();
    let shown = format!(
        "{r:?} {:?}",
        Redactor::builder().with_extra_secrets(["hunter2hunter2"])
    );
    assert!(!shown.contains("hunter2"), "{shown}");
    assert!(shown.contains("count: 1"), "{shown}");
}
