//! helikon-redact: scrub secrets from tool output before it reaches a model, an event, a
//! session row, a span attribute or an error message.
//!
//! # Use cases
//!
//! The agent loop runs every tool result (successful output *and* error text) through a
//! [`Redactor`] as the final transform. The Python binding exposes the same object as
//! `helikon.redaction.Redactor`, built once and called per output.
//!
//! # What is found
//!
//! Known values are found first; the pattern matchers then scan the text with those values
//! masked, private-key blocks first and the other matchers between them. All spans are
//! mapped back to the original text, merged, and masked in one splice (`***` by default),
//! so [`Redactor::findings`] and [`Redactor::redact`] always agree. The scan repeats over
//! its own output until nothing new appears (at most [`MAX_PASSES`]), which makes
//! redaction idempotent even where masking changes what a heuristic sees.
//!
//! 1. **Secret-named keys** (the spec's key-name pass, widened): `KEY=v`, `KEY: v`,
//!    `export KEY=v`, `"key": "v"`, `'key': 'v'`, `key = "v"` (TOML/INI), `--api-key=v`,
//!    dash and dot forms (`X-API-KEY`, `api.key`), camelCase (`clientSecret`), *every*
//!    occurrence on a line. A name is secret-named when it is or ends with `SECRET`,
//!    `TOKEN`, `PASSWORD`, `PASSWD`, `API_KEY`, `APIKEY`, `PRIVATE_KEY`, `CREDENTIALS`,
//!    `ACCESS_KEY` and a few more (see [`names`]). The value ends where it ends
//!    (module `value`): a quoted string, a shell word (`A_TOKEN=*** B=1` keeps `B=1`), or a
//!    phrase up to the next key, flag or comment; never blindly at the end of the line.
//!    Not where the "key" is the
//!    last component of a path (`/etc/passwd: outside the sandbox`, `-v ./db_password:/run/
//!    secrets/db_password:ro`), nor where the value is evidently not a secret: an object
//!    (a JSON-schema property), a type annotation (`api_key: SecretStr`), a reference
//!    (`${VAR}`, `$VAR`, `$(cmd)`, `{{ secrets.X }}`, another variable or an env lookup in
//!    code, a variable in minified JS), an empty value, `null`, a placeholder or a
//!    help-text metavariable (the `context` and `code` modules list the rules; each errs
//!    towards masking).
//! 2. **`Authorization` / `Proxy-Authorization`** values: the scheme word stays
//!    (`Bearer ***`), the credentials go.
//! 3. **URL passwords**: `https://user:***@host`.
//! 4. **Blank-separated keys** (module `spaced`): `--password VALUE` and netrc
//!    `password VALUE`; **program flags** whose names say nothing (module `cliflags`):
//!    curl's `-u USER:PASSWORD`, the MySQL clients' glued `-pPASSWORD`, `sshpass -p`,
//!    `redis-cli -a`, and the Datadog/Twilio SDK shapes (`["apiKeyAuth"] = "..."`,
//!    `Client("AC...", "TOKEN")`). A bare 32-hex-digit string (a Datadog key or Twilio auth
//!    token away from its name) is not flagged: it cannot be told from an MD5 digest.
//!    **Name and value in separate fields** (module `namevalue`): Kubernetes/ECS env lists
//!    (`- name: DB_PASSWORD` / `value: …`, `{"name": "DB_PASSWORD", "value": "…"}`) and
//!    Terraform's `"db_password": {"sensitive": true, …, "value": "…"}`.
//! 5. **File formats** whose key is an ordinary word (module `formats`): docker
//!    `config.json` `"auth"` and `.npmrc` `_auth` (base64 of `user:password`); the other keys
//!    of kubeconfig, docker, Azure connection strings, `.npmrc`, `.pypirc` and AWS
//!    `credentials` files are secret-named.
//! 6. **Token formats** found by shape alone: AWS access key ids (and, next to one, the
//!    40-character secret access key: module `aws`), GitHub, GitLab, Slack, OpenAI,
//!    Anthropic, Stripe, SendGrid, Twilio, Mailgun, Google API keys, Hugging Face, npm, PyPI,
//!    JWTs and PEM/OpenSSH private-key blocks.
//! 7. **Known values**: secret-named environment variables and extra secrets, with the
//!    spec's length floor (8 bytes), all-digit exclusion and common-word exclusion, matched
//!    ASCII case-insensitively.
//!    Each value's encoded forms are searched too (module `encoded`, attack R12): JSON-escaped,
//!    URL-encoded, base64 (standard and URL-safe, at each alignment) and hex.
//! 8. **Cookies and signed URLs** (attack R5): every value of a `Cookie:`/`Set-Cookie:`
//!    header (module `cookie`); the signature and credential parameters of AWS, GCS, Azure
//!    and CloudFront signed URLs, and a token standing alone as a URL's user (a Sentry DSN's
//!    key; module `signed`).
//! 9. **A vendor prefix table** (module `vendor`, attack R6): Google OAuth, Shopify, Vault,
//!    DigitalOcean, Linear, Doppler, Grafana, Databricks, Postman, New Relic, Atlassian,
//!    Square, Telegram and Discord bot tokens.
//!
//! Text shown cut (a capped tool output, a page) is redacted before the cut with the text
//! around it: [`Redactor::redact_head`] and [`Redactor::redact_tail`] (module `capped`).
//!
//! Git SHAs, UUIDs, base64 without a known prefix and ordinary prose are left alone.
//!
//! # Compared with the spec
//!
//! The spec's scanner examines only the first `KEY=`/`KEY:` per line, matches values
//! case-sensitively, knows only underscore-form keys and skips JSON object keys. This crate
//! lifts all four limits. It keeps the spec's observable rules where the conformance
//! vectors pin them: quotes of a shell word are masked with it, an empty value is left
//! alone, and `KEY =value` (space only before `=`) is not an assignment. Issue 14 changes
//! two of them on purpose, and `tests/conformance.rs` records each changed vector: an
//! unquoted value ends with its word, not the line (`BAR_TOKEN=*** FOO=1`), and bare
//! `TOKEN`/`SECRET` are secret-named.
//!
//! # Performance
//!
//! Nothing scans a text byte by byte with a general pattern engine. One SIMD multi-literal
//! pass (module `triggers`) lists where a token prefix (`AKIA`, `ghp_`, `sk-`, `eyJ`, ...), a
//! URL's `://` or `PRIVATE KEY` stands; the token formats and URL userinfo are then checked
//! by hand at those positions only. The key-name pass jumps from `:`/`=` to `:`/`=`
//! (`memchr`) and reads the few key words that can end there backwards (module `keymatch`). The
//! known values are one Aho-Corasick automaton per [`Redactor`] (a full DFA unless they
//! total more than 64 KiB); `regex` is left only for the private-key markers, after
//! `PRIVATE KEY` was seen. Every intermediate buffer of a scan is kept per thread and reused
//! (module `passes`), so a call allocates only its result, and
//! [`Redactor::redact_cow`] returns the text itself when nothing is found.
//!
//! Every pass is linear in the text (each matcher reads a bounded number of bytes per
//! position; the value reader never rescans a byte range, and values rescanned for inner
//! keys are charged to a budget of one text length) and there are at most [`MAX_PASSES`]:
//! text without secrets is scanned once; with secrets, the repeated scans look only at the
//! lines a mask touched (module `rescan` says why that is exact), without the known-value
//! scan when no known value can take a byte of the mask. Measured with
//! `benches/bench_redaction.py` (its README section has the numbers): the bench's tool
//! output, dense with secrets (four per KB), at ~1 us per 311-byte document in Rust (about
//! 300 MB/s), ~1.5 us through Python.
//!
//! # Limitations
//!
//! Secrets split across lines, encoded (base64, URL-encoding) or spelled out in prose are
//! not found unless a token format or a known value (in any of its encoded forms) matches
//! them. A bare high-entropy
//! string with no key, prefix or registration is not guessed at. Object keys of JSON values
//! are never rewritten. The non-key contexts are heuristics: a secret whose key is written
//! as a path component followed by `: ` (`/x/api_key: hunter2`) or whose value reads as a
//! code reference with only name-like string literals (`f("MY_TOKEN")`) is left to the
//! token formats and the known values.
//!
//! # Test strategy
//!
//! `tests/conformance.rs` runs every vector of `shared/conformance/redaction.json` (one
//! vector records the "JSON object keys are not scanned" limitation; it asserts the
//! stronger result);
//! `tests/cases.rs` runs the project's data file `tests/data/redaction_cases.json` (also run
//! from Python); `tests/properties.rs` checks idempotence, findings/redact agreement, char
//! offsets, linear scaling and, over 20,000 seeded random texts, idempotence and that no
//! known secret survives; `fuzz/` holds a cargo-fuzz target for the same invariants.
mod annotation;
mod aws;
mod capped;
mod cliflags;
mod code;
mod context;
mod cookie;
mod encoded;
mod error;
mod finding;
mod formats;
mod keymatch;
mod keyvalue;
mod known;
pub mod names;
mod namevalue;
mod passes;
mod pem;
mod redactor;
mod rescan;
mod rules;
mod signed;
mod spaced;
mod tokens;
mod triggers;
mod url;
mod value;
mod vendor;

pub use capped::CUT_GUARD;
pub use error::RedactError;
pub use finding::{to_char_offsets, Finding, FindingKind};
pub use known::{is_usable_secret, unusable_reason, COMMON_WORDS, MIN_SECRET_LEN};
pub use names::is_secret_name;
pub use redactor::{Redactor, RedactorBuilder, DEFAULT_MASK, MAX_MASK_LEN, MAX_PASSES};
