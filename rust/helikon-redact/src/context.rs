//! Contexts where a secret-named key is not a key, or its value is not a secret.
//!
//! The key-name pass ([`crate::keyvalue`]) finds `password:` in `/etc/passwd: ...` as readily
//! as in `Password: hunter2`. The checks here tell the two apart. Each one is narrow: when in
//! doubt the value is masked, because a leaked secret costs more than a masked word.
//!
//! - **Path component**: a key directly after `/` or `\` (`/etc/passwd`, `C:\x\api_key`,
//!   `POST /oauth/access_token`) is the last component of a path. Followed by `: ` (or the
//!   line end) it names a file in a message (`cat: /x/api_key: Permission denied`); followed
//!   by `:/` or a mount mode it is a path pair (`-v ./db_password:/run/secrets/db_password:ro`).
//!   Followed by `:` and anything else it stays a key: `secrets/db_password:hunter2` is how
//!   `grep -r . secrets/` and `consul kv get -recurse` print a secret. A backslash that forms
//!   a string escape (`\nDB_PASSWORD=` inside a JSON string) is not a path separator.
//! - **Not a scalar**: a value opening an object (`"password": {"type": "string"}`, a JSON
//!   schema property; `password: {type: string}`) holds keys, which are scanned on their own.
//! - **Null and booleans**: `null`, `~`, `None`, `nil`, `true`, `false` (any key form but a
//!   shell word).
//! - **Already masked**: a value of only `*` (`Password: ********`).
//! - **Template references and placeholders**: `${NAME}`, `${{ secrets.NAME }}`,
//!   `{{ vault_db_password }}`, `$NAME`, `$(command)`, `` `command` ``, `<your-api-key>`,
//!   `your-api-key-here`, `xxxxxxxx`, `changeme`, `[REDACTED]`. A `$` value that is a name
//!   is a reference in every form (issue 14), even where a `.env` file would keep
//!   `$ecretPa55` literally; `$3cr3t!` (not a name) and `${A:-default}` (the default may
//!   be the secret) are values.
//! - **Empty values**: `""`, `''` (a lone quote is the start of a string this text does
//!   not hold, such as a private-key block's).
//! - **References to another variable**: `self.api_key = api_key` (the same name),
//!   `apiKey = process.env.OPENAI_API_KEY`, `password: settings.DB_PASSWORD` (a secret-named
//!   name), followed by nothing but the end of the expression.
//! - **Code calls and subscripts**: an unquoted call or subscript of a dotted name whose
//!   string literals are all *names* (`os.environ["OPENAI_API_KEY"]`,
//!   `request.form["password"]`, `getpass.getpass()`, `Field(..., min_length=8)`). A literal
//!   that is not a name (`os.getenv("DB_PASSWORD", "hunter2")`, `Field(default="x")`) may
//!   be the secret, so that value is masked. Keys inside a skipped call are still scanned
//!   (`f(api_key="x")` masks `x`).
//! - **Help-text metavariables**: `--api-key=KEY`, `--token=TOKEN`, `--password=<pw>`
//!   (a flag key, and a value that is a placeholder word or the flag's own name).
//! - **Type annotations** (see [`crate::annotation`]): `password: str`,
//!   `pub client_secret: Option<String>,`; a default after the type is read as the value,
//!   and an unquoted name there is a reference (`= DEFAULT_PASSWORD`).
//! - **Error messages**: `cat: api_key: No such file or directory`: the value is an OS error
//!   text, so the key is a file name.
//!
//! References, placeholders, empty values and masks are recognised the same way in every
//! form (issue 14: "consistently"): `KEY=${VAR}`, `KEY=$VAR`, `KEY="$(cmd)"`, `KEY=""`,
//! `password: "{{ secrets.X }}"`, `--token $T`, `{"api_key": "<your-key>"}`. For a shell
//! assignment `KEY=value` the null/boolean literals and OS error texts are not skipped (a
//! shell value `true` is a string). Rules that skip a value whole ([`Skip::Past`]) look at short values only or at a
//! bounded prefix; a code value that is rescanned for inner keys ([`Skip::Into`]) is charged
//! to a budget of one text length, so the pass stays linear.

use crate::names;

/// Does the key starting at `key_start` directly follow a path separator?
pub(crate) fn is_path_component(bytes: &[u8], key_start: usize) -> bool {
    let Some(pre) = key_start.checked_sub(1).and_then(|i| bytes.get(i)) else {
        return false;
    };
    match pre {
        b'/' => true,
        b'\\' => {
            // `\\db_password` (an escaped backslash) is a path; `\nDB_PASSWORD` is a line
            // break inside a string literal, and the key after it is a real key.
            let escaped_backslash = key_start >= 2 && bytes.get(key_start - 2) == Some(&b'\\');
            escaped_backslash
                || !bytes
                    .get(key_start)
                    .is_some_and(|b| matches!(b, b'n' | b'r' | b't' | b'b' | b'f' | b'u'))
        }
        _ => false,
    }
}

/// After a path-component key and its `:`, does the text read as a path in a message or a
/// path pair rather than a value? `rest` starts right after the `:`.
pub(crate) fn is_path_suffix(rest: &[u8]) -> bool {
    match rest.first() {
        None => true,
        Some(b) if b.is_ascii_whitespace() => true,
        Some(b'/' | b'~') => true,
        Some(_) => is_mount_mode(rest),
    }
}

/// Docker/Podman volume options after a mount target: `ro`, `rw,z`, `cached`.
fn is_mount_mode(rest: &[u8]) -> bool {
    const MODES: &[&[u8]] = &[
        b"ro",
        b"rw",
        b"z",
        b"Z",
        b"cached",
        b"delegated",
        b"consistent",
        b"shared",
        b"rshared",
        b"slave",
        b"rslave",
        b"private",
        b"rprivate",
        b"nocopy",
    ];
    let end = rest
        .iter()
        .position(|&b| !(b.is_ascii_alphabetic() || b == b','))
        .unwrap_or(rest.len());
    let (word, after) = rest.split_at(end);
    let ends_word = after
        .first()
        .is_none_or(|&b| b.is_ascii_whitespace() || matches!(b, b'"' | b'\'' | b',' | b']'));
    ends_word && !word.is_empty() && word.split(|&b| b == b',').all(|m| MODES.contains(&m))
}

/// Words that are never a secret value on their own.
const LITERALS: &[&str] = &[
    "null",
    "NULL",
    "Null",
    "~",
    "None",
    "nil",
    "true",
    "false",
    "True",
    "False",
    "undefined",
];

/// Operating-system error texts that follow `program: file: ` in a message.
const OS_ERRORS: &[&str] = &[
    "No such file or directory",
    "Permission denied",
    "Is a directory",
    "Not a directory",
    "Operation not permitted",
    "File exists",
    "Read-only file system",
    "Directory not empty",
    "Too many levels of symbolic links",
    "cannot open",
    "command not found",
];

/// Why a value is left alone, and so where the scan resumes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Skip {
    /// Inert (a literal, a template reference, a mask, an error text): resume after it.
    Past,
    /// A code reference, which may hold keys of its own (`f(api_key="x")`): resume right
    /// after the separator so they are scanned.
    Into,
}

/// Longest value compared against [`LITERALS`] and template shapes; longer ones are masked
/// as usual (this also keeps the pass linear when skipped values nest).
const MAX_SHAPED_VALUE: usize = 256;

/// What [`non_secret_value`] knows about the key and how its value was written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ValueCx<'a> {
    /// The key as written (`self.api_key`, `--api-key`, `DB_PASSWORD`).
    pub(crate) key: &'a str,
    /// The value was a quoted string (quotes not part of `value`).
    pub(crate) quoted: bool,
    /// A shell assignment `KEY=value`: the null/boolean literal and OS-error rules do not
    /// apply (in a shell every value is a string).
    pub(crate) shell_word: bool,
    /// The rescan budget allows [`Skip::Into`].
    pub(crate) allow_code: bool,
    /// The value is the default after a type annotation (`api_key: str = VALUE`): code, so
    /// any unquoted name is a reference.
    pub(crate) typed_default: bool,
}

/// Is `value` (the value's extent, quotes removed) evidently not a secret?
pub(crate) fn non_secret_value(cx: &ValueCx<'_>, value: &str) -> Option<Skip> {
    if !value.is_empty() && value.bytes().all(|b| b == b'*') {
        return Some(Skip::Past);
    }
    // A shell word keeps its quotes: `KEY=""` and `KEY="${VAR}"` are what they hold.
    let unquoted = strip_quotes(value);
    // A lone quote: the string's body lies beyond this text (a private-key block is a
    // region of its own, so `"private_key": "` ends the text before it).
    if (unquoted.is_empty() && !value.is_empty()) || value == "\"" || value == "'" {
        return Some(Skip::Past);
    }
    if unquoted.len() <= MAX_SHAPED_VALUE {
        let bare = unquoted.trim_end_matches([',', ';']).trim_end();
        if is_placeholder(bare)
            || is_template_reference(bare)
            || is_shell_reference(bare)
            || is_file_path(bare)
        {
            return Some(Skip::Past);
        }
    }
    if is_fetch_credentials_mode(cx.key, unquoted) {
        return Some(Skip::Past);
    }
    if !cx.quoted {
        if is_reference(cx, value) || is_flag_metavar(cx.key, value) {
            return Some(Skip::Past);
        }
        if cx.allow_code && is_code_reference(value) {
            return Some(Skip::Into);
        }
    }
    if cx.shell_word {
        return None;
    }
    if value.len() <= MAX_SHAPED_VALUE {
        let bare = value.trim_end_matches([',', ';']).trim_end();
        if LITERALS.contains(&bare) {
            return Some(Skip::Past);
        }
    }
    let os_error = OS_ERRORS.iter().any(|e| {
        value
            .strip_prefix(e)
            .is_some_and(|r| r.bytes().next().is_none_or(|b| !b.is_ascii_alphanumeric()))
    });
    (!cx.quoted && os_error).then_some(Skip::Past)
}

/// `credentials: "include"` (`same-origin`, `omit`): the fetch API's credentials mode.
fn is_fetch_credentials_mode(key: &str, value: &str) -> bool {
    let key = key.trim_matches(['"', '\'', '\\']);
    let key = key.rsplit('.').next().unwrap_or(key);
    key.eq_ignore_ascii_case("credentials")
        && ["include", "same-origin", "omit"].contains(&value.trim_end_matches([',', ';']))
}

/// `"v"` or `'v'` -> `v`; anything else unchanged.
fn strip_quotes(v: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = v.strip_prefix(q).and_then(|x| x.strip_suffix(q)) {
            return inner;
        }
    }
    v
}

/// Values people write where a secret will go (compared ASCII case-insensitively).
const PLACEHOLDERS: &[&str] = &[
    "changeme",
    "change_me",
    "change-me",
    "replaceme",
    "replace_me",
    "replace-me",
    "redacted",
    "[redacted]",
    "(redacted)",
    "[hidden]",
    "[filtered]",
    "[masked]",
    "placeholder",
    "todo",
    "tbd",
    "...",
    "\u{2026}",
];

/// A documentation placeholder: `<your-api-key>`, `<token>`, `your-api-key-here`,
/// `YOUR_TOKEN`, `xxxxxxxx`, `changeme`, `[REDACTED]`, `...`.
fn is_placeholder(v: &str) -> bool {
    let angle = v
        .strip_prefix('<')
        .and_then(|x| x.strip_suffix('>'))
        .is_some_and(|x| !x.is_empty() && !x.contains(['<', '>', '\n']));
    if angle {
        return true;
    }
    if PLACEHOLDERS.iter().any(|p| p.eq_ignore_ascii_case(v)) {
        return true;
    }
    // `xxxx`, `XXXX-XXXX`: a mask someone typed.
    if v.len() >= 3
        && v.bytes().any(|b| b == b'x' || b == b'X')
        && v.bytes()
            .all(|b| matches!(b, b'x' | b'X' | b'-' | b'_' | b'.'))
    {
        return true;
    }
    // `your-api-key`, `YOUR_TOKEN_HERE`, `your.password`: a word-only instruction.
    let lower_prefix = v.get(..5).is_some_and(|p| {
        p.eq_ignore_ascii_case("your-")
            || p.eq_ignore_ascii_case("your_")
            || p.eq_ignore_ascii_case("your.")
    });
    lower_prefix
        && v.bytes()
            .all(|b| b.is_ascii_alphabetic() || matches!(b, b'-' | b'_' | b'.'))
}

/// Directories a file path in a secret-named variable typically starts with.
const PATH_PREFIXES: &[&str] = &[
    "~/",
    "./",
    "../",
    "/run/",
    "/var/",
    "/etc/",
    "/home/",
    "/tmp/",
    "/Users/",
    "/root/",
    "/opt/",
    "/srv/",
    "/secrets/",
    "/workspace/",
    "/app/",
];

/// A file path that names where a secret is kept rather than spelling it:
/// `GOOGLE_APPLICATION_CREDENTIALS=/home/u/sa.json`, `SSH_PRIVATE_KEY: ~/.ssh/id_ed25519`,
/// `token_file=./secrets/token`. It starts with a usual directory (or is absolute with a
/// file extension), holds only path characters and no blank. A base64 secret that happens
/// to start with `/` has neither the directory nor, almost ever, a `.ext` last component.
pub(crate) fn is_file_path(v: &str) -> bool {
    if v.len() > MAX_SHAPED_VALUE
        || !v.bytes().all(|b| {
            b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-' | b'~' | b'@')
        })
    {
        return false;
    }
    if PATH_PREFIXES.iter().any(|p| v.starts_with(p)) {
        return true;
    }
    let last = v.rsplit('/').next().unwrap_or_default();
    v.starts_with('/')
        && v.matches('/').count() >= 2
        && last.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.bytes().all(|b| b.is_ascii_lowercase())
        })
}

/// `$NAME`, `$(command)`, `` `command` ``: the shell fills the value in at run time.
fn is_shell_reference(v: &str) -> bool {
    if let Some(name) = v.strip_prefix('$') {
        let b = name.as_bytes();
        if b.first()
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
            && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            return true;
        }
        if let Some(cmd) = name.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
            return !cmd.trim().is_empty();
        }
        return false;
    }
    v.len() > 2 && v.starts_with('`') && v.ends_with('`') && !v[1..v.len() - 1].contains('`')
}

/// Secret-named words that, standing alone as a value, are more likely the value itself.
const GENERIC_WORDS: &[&str] = &["secret", "token", "credential", "credentials"];

/// The leading identifier chain of `v` (`a.b.c`, `$NAME`): its last segment and the byte
/// where the chain ends. `None` unless `v` starts with an identifier.
fn ident_chain(v: &[u8], mut i: usize) -> Option<(usize, usize)> {
    let mut last = i;
    loop {
        let start = i;
        if !v
            .get(i)
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        {
            return None;
        }
        while v
            .get(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            i += 1;
        }
        last = if i > start { start } else { last };
        if v.get(i) == Some(&b'.')
            && v.get(i + 1)
                .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        {
            i += 1;
        } else {
            return Some((last, i));
        }
    }
}

/// A name that refers to another variable rather than spelling a value: `api_key` after
/// `self.api_key = `, `process.env.OPENAI_API_KEY`, `settings.DB_PASSWORD`,
/// `$OPENAI_API_KEY`; after a type annotation any unquoted name (`= DEFAULT_PASSWORD`).
/// Only the end of the expression may follow (`)`, `,`, `;`, a comment). A name that is not itself secret-named
/// (`$ecretPa55`, `hunter2`) is a value.
fn is_reference(cx: &ValueCx<'_>, v: &str) -> bool {
    let b = v.as_bytes();
    let dollar = b.first() == Some(&b'$');
    let Some((last, end)) = ident_chain(b, usize::from(dollar)) else {
        return false;
    };
    // What follows the name ends the expression: a closing bracket, a separator, a comment.
    let rest = v
        .get(end..)
        .unwrap_or_default()
        .trim_start_matches([' ', '\t']);
    if !(rest.is_empty() || rest.starts_with([')', ',', ';', '#']) || rest.starts_with("//")) {
        return false;
    }
    if cx.typed_default && !dollar {
        return true;
    }
    let name = v.get(last..end).unwrap_or_default();
    let key = cx.key.trim_matches(['"', '\'', '\\', '-']);
    let key = key.rsplit('.').next().unwrap_or(key);
    // A lone `secret` or `token` is as likely the value itself (`BAR_TOKEN=secret`).
    let generic =
        end - last == v.len() && GENERIC_WORDS.iter().any(|w| w.eq_ignore_ascii_case(name));
    (names::is_secret_name(name) && !generic) || names::normalize(name) == names::normalize(key)
}

/// `--api-key=KEY`, `--token=<token>` in a command's help text: a metavariable.
fn is_flag_metavar(key: &str, v: &str) -> bool {
    const METAVARS: &[&str] = &[
        "KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASS",
        "PW",
        "PWD",
        "TEXT",
        "STRING",
        "STR",
        "VALUE",
        "VAL",
        "FILE",
        "PATH",
        "CREDENTIAL",
        "CREDENTIALS",
    ];
    if !key.starts_with('-') {
        return false;
    }
    let word = v.split([' ', '\t']).next().unwrap_or_default();
    if word.len() > MAX_SHAPED_VALUE {
        return false;
    }
    let upper = word
        .bytes()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || matches!(c, b'_' | b'-'));
    is_placeholder(word)
        || (upper
            && !word.is_empty()
            && (METAVARS.contains(&word)
                || names::normalize(word) == names::normalize(key.trim_start_matches('-'))))
}

/// `${NAME}`, `${{ expr }}`, `{{ expr }}`: a reference a template engine fills in.
fn is_template_reference(v: &str) -> bool {
    let inner = if let Some(x) = v.strip_prefix("${{").and_then(|x| x.strip_suffix("}}")) {
        x
    } else if let Some(x) = v.strip_prefix("{{").and_then(|x| x.strip_suffix("}}")) {
        x
    } else if let Some(x) = v.strip_prefix("${").and_then(|x| x.strip_suffix('}')) {
        return !x.is_empty() && x.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    } else {
        return false;
    };
    let inner = inner.trim();
    !inner.is_empty() && !inner.contains(['{', '}'])
}

/// A call or subscript of a dotted name, the whole value ending in a bracket, whose string
/// literals are all names (`os.environ["OPENAI_API_KEY"]`, `request.form["password"]`,
/// `getpass.getpass()`, `Field(..., min_length=8)`, an opening `Field(`). A literal that is
/// not a name (`os.getenv("DB_PASSWORD", "hunter2")`, `Field(default="x")`) may be the
/// secret, so such a value is masked.
fn is_code_reference(v: &str) -> bool {
    let b = v.as_bytes();
    let Some((_, end)) = ident_chain(b, 0) else {
        return false;
    };
    if !matches!(b.get(end), Some(b'(' | b'[')) {
        return false;
    }
    // The last byte that is not a trailing `,`/`;` (at most a few are looked at).
    let last = b
        .iter()
        .rev()
        .take(4)
        .find(|c| !matches!(c, b',' | b';' | b' ' | b'\t'));
    if !matches!(last, Some(b')' | b']' | b'(' | b'[')) {
        return false;
    }
    let mut i = end;
    while let Some(&c) = b.get(i) {
        if c == b'"' || c == b'\'' {
            let close = b
                .get(i + 1..)
                .and_then(|r| r.iter().position(|&x| x == c || x == b'\\'));
            let Some(len) = close.filter(|&l| b.get(i + 1 + l) == Some(&c)) else {
                return false;
            };
            let lit = v.get(i + 1..i + 1 + len).unwrap_or_default();
            if !is_name_literal(lit) {
                return false;
            }
            i += len + 2;
        } else {
            i += 1;
        }
    }
    true
}

/// A string literal that names a secret rather than being one: empty, an environment
/// variable name with an underscore (`OPENAI_API_KEY`), or a secret-named identifier
/// (`password`, `X-Api-Key`).
fn is_name_literal(lit: &str) -> bool {
    if lit.is_empty() {
        return true;
    }
    let ident = lit.bytes().enumerate().all(|(i, c)| {
        c.is_ascii_alphabetic()
            || c == b'_'
            || (i > 0 && (c.is_ascii_digit() || matches!(c, b'-' | b'.')))
    });
    let env_name = lit.contains('_')
        && lit
            .bytes()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_');
    ident && (env_name || names::is_secret_name(lit))
}

/// nsswitch.conf's lookup sources (`passwd: files systemd`).
const NSS_SOURCES: &[&str] = &[
    "files",
    "systemd",
    "sss",
    "ldap",
    "nis",
    "nisplus",
    "compat",
    "db",
    "dns",
    "winbind",
    "mymachines",
    "resolve",
    "myhostname",
    "altfiles",
    "cache",
    "hesiod",
    "wins",
];

/// Is a bare `PWD` / `passwd` key with this value benign: `PWD` (any case, quotes and
/// spaces trimmed) holding a path (`/`, `~`, `C:\`), or `passwd` holding only
/// nsswitch.conf sources and their `[NOTFOUND=return]` actions?
pub(crate) fn is_benign_bare(key: &str, value: &[u8]) -> bool {
    let key = key.trim_matches(['"', '\'', ' ', '\t']);
    let value = value.strip_prefix(b"\"").unwrap_or(value);
    if key.eq_ignore_ascii_case("pwd") {
        let drive = value.len() >= 3
            && value.first().is_some_and(u8::is_ascii_alphabetic)
            && value.get(1) == Some(&b':')
            && matches!(value.get(2), Some(b'\\' | b'/'));
        return drive || matches!(value.first(), Some(b'/' | b'~'));
    }
    if key.eq_ignore_ascii_case("passwd") {
        let Ok(v) = std::str::from_utf8(value) else {
            return false;
        };
        return v
            .split_ascii_whitespace()
            .all(|w| NSS_SOURCES.contains(&w) || (w.starts_with('[') && w.ends_with(']')));
    }
    false
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn path_components() {
        assert!(is_path_component(b"/etc/passwd", 5));
        assert!(is_path_component(b"C:\\x\\api_key", 5));
        assert!(is_path_component(b"C:\\\\x\\\\napi_key", 7));
        assert!(!is_path_component(b"a\\nDB_PASSWORD", 2));
        assert!(!is_path_component(b"api_key", 0));
        assert!(is_path_suffix(b" Permission denied"));
        assert!(is_path_suffix(b"/run/secrets/x"));
        assert!(is_path_suffix(b"ro app"));
        assert!(is_path_suffix(b"rw,z"));
        assert!(!is_path_suffix(b"hunter2"));
        assert!(!is_path_suffix(b"row"));
    }

    fn cx(key: &str, quoted: bool, shell_word: bool) -> ValueCx<'_> {
        ValueCx {
            key,
            quoted,
            shell_word,
            allow_code: true,
            typed_default: false,
        }
    }

    #[test]
    fn values() {
        let plain = cx("password", false, false);
        let past = Some(Skip::Past);
        for v in [
            "null",
            "None,",
            "~",
            "${DB_PASSWORD}",
            "${{ secrets.API_TOKEN }}",
        ] {
            assert_eq!(non_secret_value(&plain, v), past, "{v}");
        }
        for v in [
            "{{ vault_db_password }}",
            "********",
            "No such file or directory",
        ] {
            assert_eq!(non_secret_value(&plain, v), past, "{v}");
        }
        for v in [
            "<your-password>",
            "password",
            "settings.DB_PASSWORD",
            "$OPENAI_API_KEY",
        ] {
            assert_eq!(non_secret_value(&plain, v), past, "{v}");
        }
        let into = Some(Skip::Into);
        let shell = cx("API_KEY", false, true);
        assert_eq!(non_secret_value(&plain, "os.environ[\"X_Y\"]"), into);
        assert_eq!(
            non_secret_value(&shell, "request.form[\"pw_token\"])"),
            into
        );
        assert_eq!(non_secret_value(&plain, "Field("), into);
        assert_eq!(non_secret_value(&plain, "Field(..., min_length=8)"), into);
        // `$NAME` is a reference in every form (issue 14), `$3cr3t!` is not a name.
        assert_eq!(non_secret_value(&shell, "$ecret99"), Some(Skip::Past));
        assert_eq!(non_secret_value(&shell, "${DB_PASSWORD}"), Some(Skip::Past));
        assert_eq!(non_secret_value(&shell, "\"\""), Some(Skip::Past));
        assert_eq!(
            non_secret_value(&shell, "$(vault read -field=pw x)"),
            Some(Skip::Past)
        );
        for v in [
            "xxxxxxxx",
            "XXXX-XXXX",
            "your-api-key",
            "YOUR_TOKEN_HERE",
            "changeme",
            "[REDACTED]",
        ] {
            assert_eq!(non_secret_value(&shell, v), Some(Skip::Past), "{v}");
        }
        let leaks = [
            "/K7MDENG/bPxRfiCYEXAMPLEKEYwJalrXUtnFEMI",
            "/abc",
            "$3cr3t!",
            "$(",
            "your-key-9f8e7d",
            "xoxb",
            "hunter2",
            "None",
            "${A:-hunter2}",
            "abc.def",
            "f(x) y",
            "(x)",
            "os.getenv(\"DB_PASSWORD\", \"hunter2\")",
            "Field(default=\"letmein\")",
            "f(\"unterminated)",
        ];
        for v in leaks {
            assert_eq!(non_secret_value(&shell, v), None, "{v}");
        }
        assert_eq!(non_secret_value(&plain, "Permission deniedX"), None);
        assert_eq!(
            non_secret_value(&cx("pw", true, false), "os.environ[\"X\"]"),
            None
        );
        assert_eq!(
            non_secret_value(&cx("pw", true, false), "Permission denied"),
            None
        );
        assert_eq!(non_secret_value(&plain, ""), None);
        let no_budget = ValueCx {
            allow_code: false,
            ..plain
        };
        assert_eq!(non_secret_value(&no_budget, "os.environ[\"X_Y\"]"), None);
    }

    #[test]
    fn references_and_metavars() {
        let own = cx("self.api_key", false, false);
        assert_eq!(non_secret_value(&own, "api_key"), Some(Skip::Past));
        assert_eq!(non_secret_value(&own, "abcdef"), None);
        let typed = ValueCx {
            typed_default: true,
            ..cx("password", false, false)
        };
        assert_eq!(
            non_secret_value(&typed, "DEFAULT_PW) -> bool:"),
            Some(Skip::Past)
        );
        assert_eq!(non_secret_value(&typed, "DEFAULT_PW"), Some(Skip::Past));
        assert_eq!(non_secret_value(&typed, "DEFAULT_PW + x"), None);
        assert_eq!(
            non_secret_value(&own, "api_key  # set later"),
            Some(Skip::Past)
        );
        let flag = cx("--api-key", false, true);
        for v in ["KEY", "API_KEY   API key to use", "<key>"] {
            assert_eq!(non_secret_value(&flag, v), Some(Skip::Past), "{v}");
        }
        for v in ["ABCDEF123", "KEYS", "key"] {
            assert_eq!(non_secret_value(&flag, v), None, "{v}");
        }
        assert_eq!(non_secret_value(&cx("API_KEY", false, true), "KEY"), None);
    }
}
