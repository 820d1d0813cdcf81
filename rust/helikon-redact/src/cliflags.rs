//! Credentials in the flags of a few well-known programs whose flag names are not secret
//! words, and SDK call shapes whose credentials have no key name and no prefix.
//!
//! Program flags (the program is found by name on the line, at a word start, also as a path
//! `/usr/bin/curl`; its flags are read up to the end of its command: a newline or an
//! unquoted `;`, `|` or `&`):
//!
//! - curl: `-u`/`--user`/`-U`/`--proxy-user USER:PASSWORD`, also glued (`-uUSER:PASSWORD`,
//!   in a short-flag cluster `-sSu USER:PASSWORD`) and `--user=USER:PASSWORD`: the part after
//!   the first `:` is masked, the user is kept (`-u user` alone prompts, nothing to mask).
//!   `--pass PHRASE` (the key passphrase) is masked whole.
//! - MySQL/MariaDB clients (`mysql`, `mysqldump`, `mysqladmin`, `mariadb`, `mariadb-dump`,
//!   ...): `-pPASSWORD` glued to its flag (`-p` alone prompts; `-p NAME` names a database).
//!   `--password=...` is the key-name pass's.
//! - `sshpass -p PASSWORD` / `-pPASSWORD`, `redis-cli -a PASSWORD` / `-aPASSWORD`.
//! - `openssl … -passin pass:PASSWORD` (also `-passout`, `-pass`; `env:`, `file:`, `fd:` and
//!   `stdin` name where the password is, and are left alone).
//! - `keytool -storepass PASSWORD` (also `-keypass`, `-srcstorepass`, `-deststorepass`,
//!   `-srckeypass`, `-destkeypass`, `-new`; `-storepass:env VAR` is a reference).
//! - `docker login -p PASSWORD` / `-pPASSWORD` (also `podman`, `nerdctl`, `buildah`,
//!   `skopeo`, `helm registry login`): only after the word `login` (`docker run -p 80:80`
//!   publishes a port).
//!
//! SDK shapes:
//!
//! - Datadog's API client `configuration.api_key["apiKeyAuth"] = "KEY"` (and
//!   `["appKeyAuth"]`): the subscript names the credential.
//! - Twilio's `Client("AC" + 32 hex, "TOKEN")` / `twilio(...)` / `new Twilio(...)`: a quoted
//!   string right after a quoted account SID is the auth token.
//!
//! Values follow the rules of [`crate::context`]: references (`-p"$MYSQL_PWD"`,
//! `-u "user:$PASS"`), placeholders and masks are left alone. Each program hit is read once:
//! a hit inside a command already read is skipped, so the scan is linear.

use crate::context::{self, Skip};
use crate::finding::{Finding, FindingKind};
use crate::value::shell_word_end;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prog {
    Curl,
    Mysql,
    Sshpass,
    Redis,
    Openssl,
    Keytool,
    /// A registry client before its `login` word.
    Registry,
    /// A registry client after `login`.
    RegistryLogin,
}

/// The trigger literals: program names, then the SDK shapes.
pub(crate) const LITERALS: &[&str] = &[
    "curl",
    "mysql",
    "mariadb",
    "sshpass",
    "redis-cli",
    "openssl",
    "keytool",
    "docker",
    "podman",
    "nerdctl",
    "buildah",
    "skopeo",
    "helm",
    "apiKeyAuth",
    "appKeyAuth",
    "\"AC",
    "'AC",
];

fn is_hspace(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Bytes that may stand right before a program name at a word start.
fn starts_word(bytes: &[u8], at: usize) -> bool {
    at == 0
        || bytes.get(at - 1).is_some_and(|&b| {
            b.is_ascii_whitespace()
                || matches!(b, b'/' | b';' | b'|' | b'&' | b'(' | b'`' | b'"' | b'\'')
        })
}

/// The program whose name is the word `word` (its basename), if one of ours.
fn program(word: &[u8]) -> Option<Prog> {
    let base = word.rsplit(|&b| b == b'/').next().unwrap_or(word);
    match base {
        b"curl" => Some(Prog::Curl),
        b"sshpass" => Some(Prog::Sshpass),
        b"redis-cli" => Some(Prog::Redis),
        b"openssl" => Some(Prog::Openssl),
        b"keytool" => Some(Prog::Keytool),
        b"docker" | b"podman" | b"nerdctl" | b"buildah" | b"skopeo" | b"helm" => {
            Some(Prog::Registry)
        }
        _ if (base.starts_with(b"mysql") || base.starts_with(b"mariadb"))
            && base
                .iter()
                .all(|&b| b.is_ascii_lowercase() || b == b'-' || b == b'_') =>
        {
            Some(Prog::Mysql)
        }
        _ => None,
    }
}

/// The end of the command starting at `from`: a newline or an unquoted `;`, `|`, `&`
/// (quotes are read through by [`shell_word_end`], which stops at those separators).
fn is_command_end(b: u8) -> bool {
    matches!(b, b'\n' | b';' | b'|' | b'&')
}

/// Append the credentials of program flags and SDK shapes in `text`.
///
/// `hits` are the `(literal id, start, end)` of every [`LITERALS`] entry in `text`, from
/// the trigger pass (module `triggers`), sorted by start.
pub(crate) fn scan(text: &str, hits: &[(usize, usize, usize)], mask: &str, out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    // Commands already read end here: a program hit before it was read with them.
    let mut read_to = 0usize;
    for &(id, at, end) in hits {
        match id {
            13 | 14 => datadog_subscript(text, end, mask, out),
            15 | 16 => twilio_client(text, at + 1, mask, out),
            _ => {
                if at < read_to || !starts_word(bytes, at) {
                    continue;
                }
                let word_end = shell_word_end(bytes, at, bytes.len());
                let word = bytes.get(at..word_end).unwrap_or_default();
                let Some(prog) = program(word) else {
                    continue;
                };
                read_to = command(text, word_end, prog, mask, out);
            }
        }
    }
}

/// Read the flags of `prog` from `from` to its command's end; returns that end.
fn command(text: &str, from: usize, mut prog: Prog, mask: &str, out: &mut Vec<Finding>) -> usize {
    let bytes = text.as_bytes();
    let limit = bytes
        .get(from..)
        .and_then(|r| memchr::memchr(b'\n', r))
        .map_or(bytes.len(), |i| from + i);
    let mut i = from;
    // The next word is the value of a flag read just before.
    let mut pending: Option<Want> = None;
    loop {
        while i < limit && bytes.get(i).is_some_and(|&b| is_hspace(b) || b == b'\r') {
            i += 1;
        }
        if i >= limit || bytes.get(i).is_some_and(|&b| is_command_end(b)) {
            return i;
        }
        let end = shell_word_end(bytes, i, limit).max(i + 1);
        let word = bytes.get(i..end).unwrap_or_default();
        if let Some(want) = pending.take() {
            value(text, i, end, want, mask, out);
        } else if let Some(p) = program(word) {
            prog = p;
        } else if prog == Prog::Registry && word == b"login" {
            prog = Prog::RegistryLogin;
        } else {
            pending = flag(text, i, end, prog, mask, out);
        }
        i = end;
    }
}

/// What a flag's value holds.
#[derive(Debug, Clone, Copy)]
enum Want {
    /// `USER:PASSWORD`: the part after the first `:`.
    UserPass,
    /// The whole word.
    Password,
    /// openssl's `pass:PASSWORD` (other sources name where it is).
    OpensslPass,
}

/// Handle the word `text[s..e]` as a flag of `prog`: mask a glued value, or say what the
/// next word holds.
fn flag(
    text: &str,
    s: usize,
    e: usize,
    prog: Prog,
    mask: &str,
    out: &mut Vec<Finding>,
) -> Option<Want> {
    let word = text.get(s..e).unwrap_or_default();
    if let Some(long) = word.strip_prefix("--") {
        let (name, glued) = match long.split_once('=') {
            Some((n, _)) => (n, Some(s + 2 + n.len() + 1)),
            None => (long, None),
        };
        let want = match (prog, name) {
            (Prog::Curl, "user" | "proxy-user") => Want::UserPass,
            (Prog::Curl | Prog::Redis, "pass") => Want::Password,
            _ => return None,
        };
        return match glued {
            Some(v) => {
                value(text, v, e, want, mask, out);
                None
            }
            None => Some(want),
        };
    }
    let letters = word.strip_prefix('-')?;
    match prog {
        Prog::Openssl => {
            return matches!(letters, "passin" | "passout" | "pass" | "password")
                .then_some(Want::OpensslPass);
        }
        Prog::Keytool => {
            const FLAGS: &[&str] = &[
                "storepass",
                "keypass",
                "srcstorepass",
                "deststorepass",
                "srckeypass",
                "destkeypass",
                "new",
            ];
            return FLAGS.contains(&letters).then_some(Want::Password);
        }
        Prog::Registry => return None,
        _ => {}
    }
    match prog {
        Prog::Curl => {
            // A cluster of short flags: the first that takes an argument ends it.
            for (k, c) in letters.char_indices() {
                let rest = s + 1 + k + c.len_utf8();
                match c {
                    'u' | 'U' => {
                        return if rest < e {
                            value(text, rest, e, Want::UserPass, mask, out);
                            None
                        } else {
                            Some(Want::UserPass)
                        };
                    }
                    c if CURL_ARG_LETTERS.contains(c) || !c.is_ascii_alphanumeric() => return None,
                    _ => {}
                }
            }
            None
        }
        Prog::Mysql => {
            // Only glued: `-p` alone prompts, and `-p NAME` names a database.
            if letters.len() > 1 && letters.starts_with('p') {
                value(text, s + 2, e, Want::Password, mask, out);
            }
            None
        }
        Prog::Openssl | Prog::Keytool | Prog::Registry => None,
        Prog::Sshpass | Prog::Redis | Prog::RegistryLogin => {
            let f = if prog == Prog::Redis { 'a' } else { 'p' };
            if !letters.starts_with(f) {
                return None;
            }
            if letters.len() > 1 {
                value(text, s + 2, e, Want::Password, mask, out);
                None
            } else {
                Some(Want::Password)
            }
        }
    }
}

/// curl's short options that take an argument (besides `-u`/`-U`).
const CURL_ARG_LETTERS: &str = "AbcCdDeEFhHKmoPQrtTwxXyYz";

/// Mask the credential in the value word `text[s..e]` (quotes around the whole word or the
/// password part stay outside the mask).
fn value(text: &str, s: usize, e: usize, want: Want, mask: &str, out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    let (mut vs, mut ve) = (s, e);
    if ve > vs + 1 {
        let (a, b) = (bytes.get(vs).copied(), bytes.get(ve - 1).copied());
        if a == b && matches!(a, Some(b'"' | b'\'')) {
            vs += 1;
            ve -= 1;
        }
    }
    match want {
        Want::UserPass => {
            let Some(colon) = bytes.get(vs..ve).and_then(|v| memchr::memchr(b':', v)) else {
                return;
            };
            vs += colon + 1;
        }
        Want::OpensslPass => {
            if !bytes.get(vs..ve).is_some_and(|v| v.starts_with(b"pass:")) {
                return;
            }
            vs += 5;
        }
        Want::Password => {}
    }
    // `user:'pa ss'`, `pass:"pw"`: quotes around the secret part stay.
    if ve > vs + 1 {
        let (a, b) = (bytes.get(vs).copied(), bytes.get(ve - 1).copied());
        if a == b && matches!(a, Some(b'"' | b'\'')) {
            vs += 1;
            ve -= 1;
        }
    }
    push_secret(text, vs, ve, mask, out);
}

/// Mask `text[vs..ve]` unless it is empty or evidently not a secret.
fn push_secret(text: &str, vs: usize, ve: usize, mask: &str, out: &mut Vec<Finding>) {
    let Some(v) = text.get(vs..ve) else {
        return;
    };
    if v.is_empty() || v == mask {
        return;
    }
    let cx = context::ValueCx {
        key: "password",
        quoted: false,
        shell_word: true,
        allow_code: false,
        typed_default: false,
    };
    if matches!(
        context::non_secret_value(&cx, v),
        Some(Skip::Past | Skip::Into)
    ) {
        return;
    }
    out.push(Finding::new(FindingKind::SecretKeyValue, vs, ve));
}

/// The quoted string starting at `at` (after blanks), as the range of its body.
fn quoted_at(bytes: &[u8], mut at: usize, limit: usize) -> Option<(usize, usize)> {
    while at < limit && bytes.get(at).is_some_and(|&b| is_hspace(b)) {
        at += 1;
    }
    let q = *bytes.get(at)?;
    if !matches!(q, b'"' | b'\'') {
        return None;
    }
    let body = at + 1;
    let close = bytes
        .get(body..limit.min(bytes.len()))
        .and_then(|r| memchr::memchr2(q, b'\n', r))?;
    (bytes.get(body + close) == Some(&q)).then_some((body, body + close))
}

/// `["apiKeyAuth"] = "KEY"`: the hit ends at `after` (just past the name).
fn datadog_subscript(text: &str, after: usize, mask: &str, out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    let mut i = after;
    if !matches!(bytes.get(i), Some(b'"' | b'\'')) {
        return;
    }
    i += 1;
    if bytes.get(i) != Some(&b']') {
        return;
    }
    i += 1;
    while bytes.get(i).is_some_and(|&b| is_hspace(b)) {
        i += 1;
    }
    if bytes.get(i) != Some(&b'=') || bytes.get(i + 1) == Some(&b'=') {
        return;
    }
    let limit = (i + 1 + 512).min(bytes.len());
    if let Some((vs, ve)) = quoted_at(bytes, i + 1, limit) {
        push_secret(text, vs, ve, mask, out);
    }
}

/// A quoted Twilio account SID (`"AC"` + 32 hex) followed by `,` and a quoted string: the
/// auth token of `Client(SID, TOKEN)`.
fn twilio_client(text: &str, at: usize, mask: &str, out: &mut Vec<Finding>) {
    let bytes = text.as_bytes();
    let Some(q) = at.checked_sub(1).and_then(|i| bytes.get(i).copied()) else {
        return;
    };
    if !matches!(q, b'"' | b'\'') {
        return;
    }
    let hex_end = at + 2 + 32;
    let is_sid = bytes
        .get(at + 2..hex_end)
        .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
        && bytes.get(hex_end) == Some(&q);
    if !is_sid {
        return;
    }
    let mut i = hex_end + 1;
    while bytes.get(i).is_some_and(|&b| b.is_ascii_whitespace()) {
        i += 1;
    }
    if bytes.get(i) != Some(&b',') {
        return;
    }
    i += 1;
    while bytes.get(i).is_some_and(|&b| b.is_ascii_whitespace()) {
        i += 1;
    }
    let limit = (i + 512).min(bytes.len());
    if let Some((vs, ve)) = quoted_at(bytes, i, limit) {
        push_secret(text, vs, ve, mask, out);
    }
}
