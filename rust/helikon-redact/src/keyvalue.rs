//! The key-name pass: values of secret-named keys and `Authorization` headers.
//!
//! [`crate::keymatch`] finds a secret key name directly followed by its separator (`KEY=`, `KEY:`,
//! `"KEY": `, `'KEY' :`, `KEY = ` in TOML/INI); [`crate::value`] reads the value's extent
//! (a quoted string, a shell word, a phrase up to the next key: never blindly to the end
//! of the line).
//!
//! Before a value is masked, [`crate::context`] rules out contexts where the key is not a
//! key (the last component of a path: `/etc/passwd: ...`) or the value is not a secret (an
//! object, a type annotation, a reference to another variable, a template, `null`, a
//! help-text metavariable).
//!
//! Every occurrence on a line is examined: scanning resumes after each value. Each byte is
//! looked at a bounded number of times, so the pass is linear in the text.
use crate::annotation;
use crate::code;
use crate::context::{self, Skip};
use crate::finding::{Finding, FindingKind};
use crate::keymatch;
use crate::names;
use crate::value::Shape;

/// Byte classes.
fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

fn is_hspace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r')
}

/// Does a quoted string start at `at`, after blanks on the same line?
fn quoted_after(bytes: &[u8], at: usize) -> bool {
    let rest = bytes.get(at..).unwrap_or_default();
    let blanks = rest.iter().take_while(|&&b| is_hspace(b)).count();
    matches!(rest.get(blanks), Some(b'"' | b'\''))
}

/// Append the values of secret-named keys in `text`.
///
/// `tokens` are the token-format spans of the same text, sorted: the walk back to a key's
/// start never enters one, so what stands "before the key" is the same whether or not the
/// token has been masked yet (idempotence). Keys whose separator lies in one of the sorted
/// URL `userinfo` ranges are skipped.
pub(crate) fn scan(
    text: &str,
    mask: &str,
    tokens: &[Finding],
    userinfo: &[(usize, usize)],
    out: &mut Vec<Finding>,
) {
    let mut token_idx = 0usize;
    let mut url_idx = 0usize;
    let bytes = text.as_bytes();
    let mut pos = 0usize;
    let mut eol_cache = 0usize;
    let mut has_eol_cache = false;
    // Bytes scanned a second time because a skipped value may hold keys (see below).
    let mut rescanned = 0usize;
    while pos < text.len() {
        let Some(m) = keymatch::next_match(text, pos) else {
            break;
        };
        // The walk back stops at the previous value's end or the last token before the key.
        while tokens.get(token_idx + 1).is_some_and(|t| t.end <= m.start) {
            token_idx += 1;
        }
        let token_end = tokens
            .get(token_idx)
            .filter(|t| t.end <= m.start)
            .map_or(0, |t| t.end);
        let floor = pos.max(token_end);
        // The separator is the match's only ':' or '='.
        let sep_at = m.sep;
        let sep = bytes.get(sep_at).copied().unwrap_or(b'=');
        let mut after_sep = sep_at + 1;
        let before_sep = text.get(m.start..sep_at).unwrap_or_default();
        let key_quoted = before_sep
            .trim_end_matches([' ', '\t'])
            .ends_with(['"', '\'']);
        // A shell-style `KEY=value` (no space before `=`, key not quoted).
        let shell_word = sep == b'=' && !key_quoted && !before_sep.ends_with([' ', '\t']);
        // Inside a URL's userinfo (`scheme://x-access-token:PASSWORD@host`) the name is a
        // user, not a key; the URL matcher masks the password.
        while userinfo.get(url_idx).is_some_and(|&(_, e)| e <= sep_at) {
            url_idx += 1;
        }
        if userinfo.get(url_idx).is_some_and(|&(s, _)| s <= sep_at) {
            pos = after_sep;
            continue;
        }
        // `::` (paths), `==` (comparisons) and `=>` (arrows) are not assignments, except
        // `"password" => "V"` (Ruby, PHP): a hash arrow followed by a quoted string
        // separates a key from its value.
        let next = bytes.get(after_sep).copied();
        let arrow = sep == b'=' && next == Some(b'>');
        if arrow && quoted_after(bytes, after_sep + 1) {
            after_sep += 1;
        } else if (sep == b':' && next == Some(b':'))
            || (sep == b'=' && matches!(next, Some(b'=' | b'>')))
        {
            pos = after_sep + 1;
            continue;
        }
        // Line end (cached: positions only grow, so a cached EOL past `after_sep` is ours).
        if !has_eol_cache || eol_cache < after_sep {
            eol_cache = bytes
                .get(after_sep..)
                .and_then(|rest| memchr::memchr(b'\n', rest))
                .map_or(text.len(), |i| after_sep + i);
            has_eol_cache = true;
        }
        let eol = eol_cache;
        let mut content_end = eol;
        while content_end > after_sep && bytes.get(content_end - 1).is_some_and(|&b| is_hspace(b)) {
            content_end -= 1;
        }
        let mut v_start = after_sep;
        while v_start < content_end && bytes.get(v_start).is_some_and(|&b| is_hspace(b)) {
            v_start += 1;
        }
        if v_start >= content_end {
            pos = eol.max(after_sep);
            continue;
        }
        // Where the key name starts, and what stands right before it.
        let mut key_start = m.start;
        while key_start > floor && bytes.get(key_start - 1).is_some_and(|&b| is_key_byte(b)) {
            key_start -= 1;
        }
        let key_text = text.get(key_start..sep_at).unwrap_or_default();
        let pre = key_start.checked_sub(1).and_then(|i| bytes.get(i).copied());
        let enclosing: Option<&'static [u8]> = match pre {
            Some(b'"') | Some(b'\'') if !key_quoted => {
                let escaped = key_start >= 2 && bytes.get(key_start - 2) == Some(&b'\\');
                match (pre, escaped) {
                    (Some(b'"'), true) => Some(b"\\\""),
                    (Some(b'"'), false) => Some(b"\""),
                    (_, true) => Some(b"\\'"),
                    _ => Some(b"'"),
                }
            }
            _ => None,
        };

        // A file path's last component in a message or a mount (`/etc/passwd: ...`).
        if sep == b':'
            && !key_quoted
            && context::is_path_component(bytes, key_start)
            && context::is_path_suffix(bytes.get(after_sep..eol).unwrap_or_default())
        {
            pos = after_sep;
            continue;
        }
        // `PASS: test_x` / `--- PASS: TestX`: a test runner's verdict, not a key (lowercase
        // `pass: x`, quoted keys and `PASS=x` are keys).
        if sep == b':' && !key_quoted && key_text.trim_end_matches([' ', '\t']) == "PASS" {
            pos = after_sep;
            continue;
        }
        // `PWD=/home/x`: the shell's working directory, not a password (a bare `pwd` whose
        // value is not a path is one); `passwd: files systemd`: nsswitch.conf's sources.
        if context::is_benign_bare(
            key_text,
            bytes.get(v_start..content_end).unwrap_or_default(),
        ) {
            pos = content_end.max(after_sep);
            continue;
        }
        // An object value (`"password": {"type": "string"}`): its keys are scanned later.
        if !shell_word && bytes.get(v_start) == Some(&b'{') && !is_template_start(bytes, v_start) {
            pos = after_sep;
            continue;
        }
        // A variable in minified JS (`{token:t,`, `this.token=s}`): code, not a value.
        if v_start == after_sep {
            if let Some(end) = code::code_value_end(bytes, key_start, sep, v_start, content_end) {
                pos = end.max(after_sep);
                continue;
            }
        }
        // `nextPageToken: …`, `"NextToken": "…"`: a list API's cursor, not a credential.
        if key_text.len() >= 9 && ends_in_cursor(key_text) {
            pos = after_sep;
            continue;
        }
        let auth = names::is_auth_header_fast(key_text.trim_matches(['"', '\'', '\\']));
        let shape = Shape {
            bytes,
            eol,
            content_end,
            shell_word,
            key_quoted,
            auth,
            sep,
            pre,
            enclosing,
        };
        // A YAML block scalar (`password: |`, `>-`) or a TOML multi-line string
        // (`token = """`): the secret is on the lines after the indicator.
        if let Some(end) = multiline_value(text, key_start, sep, v_start, content_end, mask, out) {
            pos = end.max(after_sep);
            continue;
        }
        let (mut vs, mut ve, mut quoted) = shape.extent(v_start);
        // `Authorization: required`, `authorization: none`, `Authorization: Bearer` with no
        // credential after the scheme: nothing to mask.
        if auth && no_credential(text.get(vs..ve).unwrap_or_default()) {
            pos = ve.max(after_sep);
            continue;
        }
        let mut typed_default = false;
        // `password: str`, `api_key: Optional[str] = "default"`.
        if sep == b':' && !key_quoted && !quoted {
            let value = text.get(vs..ve).unwrap_or_default();
            match annotation::type_annotation(value) {
                Some((end, None)) => {
                    pos = (vs + end).max(after_sep);
                    continue;
                }
                Some((_, Some(default))) => {
                    let typed = Shape {
                        sep: b'=',
                        pre: None,
                        shell_word: false,
                        ..shape
                    };
                    (vs, ve, quoted) = typed.extent(vs + default);
                    typed_default = true;
                }
                None => {}
            }
        }
        // `api_key: The API key.` in a docstring or help text: prose, not a value.
        if sep == b':' && !key_quoted && !quoted && is_prose(text.get(vs..ve).unwrap_or_default()) {
            pos = ve.max(after_sep);
            continue;
        }
        let cost = ve.saturating_sub(after_sep);
        let cx = context::ValueCx {
            key: key_text,
            quoted,
            shell_word,
            allow_code: rescanned.saturating_add(cost) <= text.len(),
            typed_default,
        };
        match context::non_secret_value(&cx, text.get(vs..ve).unwrap_or_default()) {
            Some(Skip::Past) => {
                pos = ve.max(after_sep);
                continue;
            }
            // A code reference may hold keys of its own (`f(api_key="x")`): rescan it.
            // Rescanning costs its length again; a budget of one text length keeps the pass
            // linear, and past it the value is masked (the safe side).
            Some(Skip::Into) => {
                rescanned += cost;
                pos = after_sep;
                continue;
            }
            None => {}
        }

        let kind = if auth {
            let credentials = skip_auth_scheme(bytes, vs, ve);
            // `"Bearer "+token` in code: the string holds the scheme word only.
            if quoted && credentials == vs && is_scheme(text.get(vs..ve).unwrap_or_default()) {
                pos = ve.max(after_sep);
                continue;
            }
            vs = credentials;
            FindingKind::Authorization
        } else {
            FindingKind::SecretKeyValue
        };
        let value = text.get(vs..ve).unwrap_or_default();
        if vs < ve && value != mask && !value.trim().is_empty() {
            out.push(Finding::new(kind, vs, ve));
        }
        pos = ve.max(after_sep);
    }
}

/// `{{` or `${{` (template reference) rather than an object.
fn is_template_start(bytes: &[u8], at: usize) -> bool {
    bytes.get(at + 1) == Some(&b'{')
}

/// Authorization schemes whose word is kept (`Bearer ***`); compared case-insensitively.
const AUTH_SCHEMES: &[&str] = &[
    "basic",
    "bearer",
    "digest",
    "token",
    "negotiate",
    "ntlm",
    "hoba",
    "mutual",
    "vapid",
    "bot",
    "oauth",
    "dpop",
    "mac",
    "hawk",
    "apikey",
    "key",
    "ssws",
    "splunk",
    "aws4-hmac-sha256",
    "scram-sha-1",
    "scram-sha-256",
    "googlelogin",
];

/// Is `value` (trimmed) one scheme word and nothing else?
fn is_scheme(value: &str) -> bool {
    let v = value.trim();
    AUTH_SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(v))
}

/// In `scheme credentials`, the start of the credentials. Only a known scheme word is kept:
/// anything else may itself be a credential, so the whole value is masked (`vs`).
pub(crate) fn skip_auth_scheme(bytes: &[u8], vs: usize, ve: usize) -> usize {
    let mut i = vs;
    while i < ve
        && bytes
            .get(i)
            .is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'-')
    {
        i += 1;
    }
    let scheme = bytes.get(vs..i).unwrap_or_default();
    if !AUTH_SCHEMES
        .iter()
        .any(|s| s.as_bytes().eq_ignore_ascii_case(scheme))
    {
        return vs;
    }
    let scheme_end = i;
    while i < ve && bytes.get(i).is_some_and(|&b| b == b' ' || b == b'\t') {
        i += 1;
    }
    if scheme_end < i && i < ve {
        i
    } else {
        vs
    }
}

/// Does the key (as written, quotes and blanks around it allowed) name a pagination or sync
/// cursor ([`names::NOT_SECRET`])? Only keys ending in `token` (any case) are normalized.
fn ends_in_cursor(key_text: &str) -> bool {
    let k = key_text.trim_matches(['"', '\'', '\\', ' ', '\t']);
    let b = k.as_bytes();
    let tail_is_token = b
        .len()
        .checked_sub(5)
        .and_then(|i| b.get(i..))
        .is_some_and(|t| t.eq_ignore_ascii_case(b"token"));
    tail_is_token && names::is_cursor_name(&names::normalize(k))
}

/// An `Authorization` value that holds no credential: a bare scheme or a status word.
fn no_credential(value: &str) -> bool {
    const WORDS: &[&str] = &[
        "bearer",
        "basic",
        "token",
        "digest",
        "negotiate",
        "ntlm",
        "none",
        "required",
        "optional",
        "missing",
        "invalid",
        "denied",
        "failed",
        "n/a",
    ];
    let v = value.trim().trim_matches(['"', '\'', ',', ';']).trim();
    WORDS.iter().any(|w| v.eq_ignore_ascii_case(w))
}

/// A sentence describing the key (`The password part of the URL.`, `a secret string`):
/// at least three words of letters only (with `'`, `-`, `,`, `.`, `(`, `)`), the first an
/// article or a usual first word of a parameter description.
fn is_prose(value: &str) -> bool {
    const FIRST: &[&str] = &[
        "the", "a", "an", "your", "this", "if", "optional", "whether", "used", "must", "required",
        "see", "set",
    ];
    let mut words = value.split_whitespace();
    let Some(first) = words.next() else {
        return false;
    };
    let letters = |w: &str| {
        w.bytes().all(|b| {
            b.is_ascii_alphabetic() || matches!(b, b'\'' | b'-' | b',' | b'.' | b'(' | b')')
        })
    };
    FIRST.iter().any(|f| first.eq_ignore_ascii_case(f))
        && value.split_whitespace().count() >= 3
        && value.split_whitespace().all(letters)
}

/// A value on the lines after its key: a YAML block scalar (`KEY: |`, `|-`, `>`, `>+2`, …:
/// the following lines indented deeper than the key's line) or a TOML multi-line string
/// (`KEY = """` … `"""`, also `'''`). Each content line is masked on its own (the layout
/// stays). Returns where scanning resumes, or `None` when the value is not one of these.
fn multiline_value(
    text: &str,
    key_start: usize,
    sep: u8,
    v_start: usize,
    content_end: usize,
    mask: &str,
    out: &mut Vec<Finding>,
) -> Option<usize> {
    let bytes = text.as_bytes();
    let indicator = text.get(v_start..content_end)?.trim_end();
    let is_block = sep == b':'
        && matches!(indicator.as_bytes().first(), Some(b'|' | b'>'))
        && indicator.len() <= 3
        && indicator
            .bytes()
            .skip(1)
            .all(|b| matches!(b, b'-' | b'+') || b.is_ascii_digit());
    let is_toml = sep == b'=' && (indicator == "\"\"\"" || indicator == "'''");
    // Only a value that is one of these looks at the lines around it: searching for the
    // line's ends for every key would make a long line of keys quadratic.
    if !is_block && !is_toml {
        return None;
    }
    // The indicator ends its line. Checked by looking at the blanks after it, never by
    // searching for the line's end: every key of a long line would search it again.
    let rest = bytes.get(content_end..).unwrap_or_default();
    let blanks = rest
        .iter()
        .take_while(|&&b| matches!(b, b' ' | b'\t' | b'\r'))
        .count();
    if !matches!(rest.get(blanks), None | Some(b'\n')) {
        return None;
    }
    let eol = content_end + blanks;
    if is_block {
        let line_start = bytes
            .get(..key_start)
            .and_then(|b| memchr::memrchr(b'\n', b))
            .map_or(0, |i| i + 1);
        let key_indent = bytes.get(line_start..key_start).map_or(0, |l| {
            l.iter().take_while(|&&b| b == b' ' || b == b'-').count()
        });
        let mut at = eol + 1;
        let mut end = eol;
        while at < bytes.len() {
            let le = bytes
                .get(at..)
                .and_then(|b| memchr::memchr(b'\n', b))
                .map_or(bytes.len(), |i| at + i);
            let line = bytes.get(at..le).unwrap_or_default();
            let indent = line.iter().take_while(|&&b| b == b' ').count();
            let blank = line.iter().all(|b| b.is_ascii_whitespace());
            if !blank && indent <= key_indent {
                break;
            }
            if !blank {
                let mut e = le;
                while e > at + indent && bytes.get(e - 1).is_some_and(|&b| b == b'\r' || b == b' ')
                {
                    e -= 1;
                }
                if text.get(at + indent..e) != Some(mask) {
                    out.push(Finding::new(FindingKind::SecretKeyValue, at + indent, e));
                }
            }
            end = le;
            at = le + 1;
        }
        return Some(end);
    }
    for q in ["\"\"\"", "'''"] {
        if sep == b'=' && indicator == q {
            let body = eol + 1;
            let close = bytes
                .get(body..)
                .and_then(|b| memchr::memmem::find(b, q.as_bytes()))
                .map(|i| body + i)?;
            let mut at = body;
            while at < close {
                let le = bytes
                    .get(at..close)
                    .and_then(|b| memchr::memchr(b'\n', b))
                    .map_or(close, |i| at + i);
                let line = text.get(at..le).unwrap_or_default();
                let t = line.trim();
                if !t.is_empty() && t != mask {
                    let s = at + (line.len() - line.trim_start().len());
                    out.push(Finding::new(FindingKind::SecretKeyValue, s, s + t.len()));
                }
                at = le + 1;
            }
            return Some(close + 3);
        }
    }
    None
}
