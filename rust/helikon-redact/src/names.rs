//! Which key names are secret-named.
//!
//! One vocabulary serves three places: the key-name pass over text, JSON object keys in
//! [`crate::Redactor::redact_value`], and the choice of which environment variables are
//! known secrets. A name is secret-named when, after folding `-` and `.` to `_`, splitting
//! camelCase humps with `_` and ASCII-uppercasing, it
//!
//! - ends in `_` + one of [`SUFFIXES`] (the spec's `_API_KEY`, `_TOKEN`, `_SECRET`,
//!   `_PASSWORD`, `_CREDENTIAL`, issue 14's `_CREDENTIALS` and `_ACCESS_KEY`, the
//!   file-format keys `client-key-data`, `client-certificate-data` (kubeconfig) and
//!   `AccountKey` (Azure), plus a few unambiguous additions), or
//! - is exactly one of [`BARE`] (`PASSWORD`, `API_KEY`, `TOKEN`, `SECRET`, ...), or
//! - is `AUTHORIZATION` (or ends in `_AUTHORIZATION`: `Proxy-Authorization`,
//!   `HTTP_AUTHORIZATION`).
//!
//! Bare `TOKEN` and `SECRET` are secret-named (issue 14: "the name is exactly or ends
//! with"), unlike the spec, whose vectors pin `TOKEN=abc123` and `SECRET=abc` as unchanged;
//! `tests/conformance.rs` records that difference.

/// Secret suffixes; each must follow an underscore (or dash, dot, camelCase hump).
pub const SUFFIXES: &[&str] = &[
    "API_KEY",
    "APIKEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    // `DB_PASS`, `smtp.pass`, `dbPass` (the bare word `PASS` is in [`BARE`], with a rule).
    "PASS",
    "PWD",
    "CREDENTIAL",
    "SECRET_KEY",
    "PRIVATE_KEY",
    "SIGNING_KEY",
    "ENCRYPTION_KEY",
    "SECRET_ACCESS_KEY",
    "ACCESS_KEY",
    "ACCOUNT_KEY",
    "APP_KEY",
    "APPLICATION_KEY",
    "CREDENTIALS",
    "PRIVATE_KEY_ID",
    "KEY_DATA",
    "CERTIFICATE_DATA",
    "AUTHORIZATION",
    // Attack R7: keys named for what they unlock or seed.
    "MASTER_KEY",
    "SECRET_KEY_BASE",
    "KEY_BASE",
    "HMAC_KEY",
    "AUTH_KEY",
    "SESSION_KEY",
    "SHARED_KEY",
    "LICENSE_KEY",
    "DEPLOY_KEY",
    "CRYPT_KEY",
    "SECRET_STRING",
    "SECRET_VALUE",
    "AUTH_TOKEN_VALUE",
    "JWT_KEY",
];

/// Suffixes that also count glued to an uppercase name without a separator (`PGPASSWORD`,
/// `APITOKEN`, `MYSECRET`): the whole name must be uppercase (`passwordless`, `Tokens` and
/// camel words are not glued forms).
pub const GLUED: &[&str] = &["PASSWORD", "PASSWD", "SECRET", "TOKEN"];

/// Names ending in these (normalized) are not secrets even though they end in `TOKEN`: the
/// pagination and sync cursors of list APIs (`nextPageToken`, `"NextToken"`, `page_token`,
/// `continuation_token`), which an agent must be able to pass back.
pub const NOT_SECRET: &[&str] = &[
    "PAGE_TOKEN",
    "NEXT_TOKEN",
    "CONTINUATION_TOKEN",
    "CONTINUE_TOKEN",
    "PAGINATION_TOKEN",
    "SYNC_TOKEN",
    "RESUME_TOKEN",
    "CURSOR_TOKEN",
];

/// Is the (normalized) name a pagination or sync cursor (see [`NOT_SECRET`])?
pub(crate) fn is_cursor_name(normalized: &str) -> bool {
    NOT_SECRET
        .iter()
        .any(|s| normalized == *s || normalized.ends_with(&format!("_{s}")))
}

/// Names that are secret on their own, without a prefix.
pub const BARE: &[&str] = &[
    "API_KEY",
    "APIKEY",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "SECRET_KEY",
    "PRIVATE_KEY",
    "TOKEN",
    "SECRET",
    "CREDENTIAL",
    "CREDENTIALS",
    "ACCESS_KEY",
    "ACCOUNT_KEY",
    "IDENTITYTOKEN",
    "REGISTRYTOKEN",
    "PRIVATE_KEY_ID",
    // `APP_KEY` (Laravel's encryption key, Datadog's application key `app_key=` in its SDK
    // and agent configs) and `appKey`.
    "APP_KEY",
    "APPKEY",
    "APPLICATION_KEY",
    // Datadog's API client names its credentials `apiKeyAuth` and `appKeyAuth`.
    "APIKEYAUTH",
    "APPKEYAUTH",
    // `PASS=...` (not `PASS: test_x`, a test runner's verdict: see `keyvalue`), and the
    // well-known concatenations and client variables: PostgreSQL's `PGPASSWORD`, MySQL's
    // `MYSQL_PWD` (a `_PWD` suffix), redis-cli's `REDISCLI_AUTH`.
    "PASS",
    "DBPASS",
    "DB_PASS",
    "ROOTPASS",
    "ADMINPASS",
    "USERPASS",
    "SMTPPASS",
    "MAILPASS",
    "FTPPASS",
    "PGPASSWORD",
    "REDISCLI_AUTH",
    // Concatenated camel forms at a word boundary (`AccountKey=` in an Azure connection
    // string, `accessKey:` in JS): the key-name search compares bare words
    // case-insensitively, so `ACCOUNTKEY` finds `AccountKey` and `accountKey`.
    "ACCOUNTKEY",
    "ACCESSKEY",
    "SECRETKEY",
    "PRIVATEKEY",
    "AUTHORIZATION",
    "MASTER_KEY",
    "MASTERKEY",
    "LICENSE_KEY",
    "SECRET_KEY_BASE",
    "HMAC_KEY",
    "SECRET_STRING",
    "SECRET_VALUE",
    // Keys named for what they sign or encrypt, on their own (`ENCRYPTION_KEY=`).
    "ENCRYPTION_KEY",
    "SIGNING_KEY",
    "SESSION_KEY",
    "JWT_KEY",
    // The short form of a password on its own names (not as a suffix: a value such as
    // `Sup3rS3cretPw` would then read as a variable's name).
    "DB_PW",
    "ADMIN_PW",
    "ROOT_PW",
    "USER_PW",
    // `pwd: ...` in a config; the shell's working directory (`PWD=/home/x`) is told apart
    // by its value, a path (see `keyvalue`).
    "PWD",
];

/// Is `name` an `Authorization`-style header name, without allocating (the hot path of
/// the text scanner)? Same answer as [`is_auth_header`].
pub(crate) fn is_auth_header_fast(name: &str) -> bool {
    const AUTH: &[u8] = b"AUTHORIZATION";
    let b = name.trim().as_bytes();
    let Some(start) = b.len().checked_sub(AUTH.len()) else {
        return false;
    };
    let tail_ok = b.get(start..).is_some_and(|t| t.eq_ignore_ascii_case(AUTH));
    if !tail_ok {
        return false;
    }
    // `Authorization` alone, or after a separator (`Proxy-Authorization`,
    // `HTTP_AUTHORIZATION`) or a camelCase hump (`proxyAuthorization`).
    let before = start.checked_sub(1).and_then(|i| b.get(i).copied());
    let first = b.get(start).copied().unwrap_or_default();
    // A hump inside the word splits it (`AuthoRization` is `AUTHO_RIZATION`).
    let split =
        b.get(start..).unwrap_or_default().windows(2).any(|w| {
            w[1].is_ascii_uppercase() && (w[0].is_ascii_lowercase() || w[0].is_ascii_digit())
        });
    !split
        && match before {
            None => true,
            Some(b'_' | b'-' | b'.') => true,
            Some(p) => (p.is_ascii_lowercase() || p.is_ascii_digit()) && first == b'A',
        }
}

/// Fold a key name to the canonical form the lists above use.
pub fn normalize(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut prev_lower = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() && prev_lower {
            out.push('_');
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        out.push(match c {
            '-' | '.' => '_',
            other => other.to_ascii_uppercase(),
        });
    }
    out
}

/// Is `name` an `Authorization`-style header name (`Authorization`,
/// `Proxy-Authorization`, `HTTP_AUTHORIZATION`, `X-Upstream-Authorization`)?
pub fn is_auth_header(name: &str) -> bool {
    let n = normalize(name.trim());
    n == "AUTHORIZATION" || n.ends_with("_AUTHORIZATION")
}

/// Is `name` secret-named (see the module doc)?
///
/// ```
/// use helikon_redact::is_secret_name;
/// assert!(is_secret_name("OPENAI_API_KEY"));
/// assert!(is_secret_name("X-API-KEY"));
/// assert!(is_secret_name("api.key"));
/// assert!(is_secret_name("clientSecret"));
/// assert!(is_secret_name("TOKEN"));
/// assert!(is_secret_name("AccountKey"));
/// assert!(!is_secret_name("MAX_TOKENS"));
/// assert!(!is_secret_name("AWS_ACCESS_KEY_ID"));
/// assert!(is_secret_name("PGPASSWORD"));
/// assert!(!is_secret_name("passwordless"));
/// ```
pub fn is_secret_name(name: &str) -> bool {
    let n = normalize(name.trim());
    if is_cursor_name(&n) {
        return false;
    }
    if BARE.contains(&n.as_str()) {
        return true;
    }
    let upper = !name.bytes().any(|b| b.is_ascii_lowercase());
    if upper
        && GLUED.iter().any(|s| {
            n.len() > s.len()
                && n.ends_with(s)
                && n.as_bytes()
                    .get(n.len() - s.len() - 1)
                    .is_some_and(|b| b.is_ascii_alphanumeric())
        })
    {
        return true;
    }
    SUFFIXES.iter().any(|s| {
        n.len() > s.len()
            && n.ends_with(s)
            && n.as_bytes().get(n.len() - s.len() - 1) == Some(&b'_')
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_auth_check_agrees() {
        let names = [
            "Authorization",
            "authorization",
            "Proxy-Authorization",
            "HTTP_AUTHORIZATION",
            "proxyAuthorization",
            "proxyauthorization",
            "X.Authorization",
            " Authorization ",
            "NotAuthorization",
            "authorizations",
            "Auth",
            "",
            "9Authorization",
            "AUTHORIZATIOn",
            "AuthoRization",
            "x-authoriZation",
            "éAuthorization",
        ];
        for n in names {
            assert_eq!(is_auth_header_fast(n), is_auth_header(n), "{n:?}");
        }
    }
}
