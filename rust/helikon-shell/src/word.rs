//! One shell word: its parts (literal text, expansions, substitutions) and its static value.
//!
//! A word is kept as parts so that later stages can tell literal text from anything the shell
//! computes at run time. [`Word::value`] renders a word the way the analysis needs it: quotes
//! removed, escapes and `$'…'` decoded, and every expansion kept as its source text (so
//! `"$HOME"` reads `$HOME`), together with flags saying whether anything dynamic was present.

use crate::script::Script;

/// One piece of a word.
#[derive(Debug, Clone)]
pub enum Part {
    /// Literal text. `quoted` is true when it came from quotes or a backslash escape, so glob
    /// and brace characters in it are inert.
    Lit { text: String, quoted: bool },
    /// A parameter expansion such as `$X`, `${X:-y}` or `$1`; `raw` is its source text.
    /// `nested` holds command substitutions found inside `${…}`.
    Param {
        raw: String,
        quoted: bool,
        nested: Vec<Script>,
    },
    /// A command substitution `$(…)` or `` `…` ``.
    Command {
        raw: String,
        script: Script,
        quoted: bool,
        backtick: bool,
    },
    /// A process substitution `<(…)` or `>(…)`.
    Process {
        raw: String,
        script: Script,
        output: bool,
    },
    /// An arithmetic expansion `$((…))`; `nested` holds substitutions inside it.
    Arith {
        raw: String,
        nested: Vec<Script>,
        quoted: bool,
    },
}

/// A word as lexed: its parts and the source text it came from.
#[derive(Debug, Clone, Default)]
pub struct Word {
    pub parts: Vec<Part>,
    pub raw: String,
}

/// The rendered value of a word (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WordValue {
    /// Quote-removed text; expansions appear as their source text.
    pub text: String,
    /// Some part is computed at run time (expansion or substitution).
    pub dynamic: bool,
    /// Some dynamic part is outside double quotes (subject to word splitting and globbing).
    pub unquoted_dynamic: bool,
    /// Byte offset in `text` just after the last dynamic part (0 when static).
    pub dynamic_end: usize,
    /// An unquoted glob (`*`, `?`, `[…]`) or brace expansion (`{a,b}`, `{1..3}`) is present.
    pub pattern: bool,
}

impl Word {
    /// Render the word (see [`WordValue`]).
    pub fn value(&self) -> WordValue {
        let mut text = String::new();
        let mut dynamic = false;
        let mut unquoted_dynamic = false;
        let mut dynamic_end = 0;
        let mut unquoted_lit = String::new();
        for part in &self.parts {
            match part {
                Part::Lit { text: t, quoted } => {
                    text.push_str(t);
                    if !quoted {
                        unquoted_lit.push_str(t);
                    } else {
                        unquoted_lit.push('\0');
                    }
                }
                Part::Param { raw, quoted, .. }
                | Part::Command { raw, quoted, .. }
                | Part::Arith { raw, quoted, .. } => {
                    text.push_str(raw);
                    dynamic = true;
                    unquoted_dynamic |= !quoted;
                    dynamic_end = text.len();
                    unquoted_lit.push('\0');
                }
                Part::Process { raw, .. } => {
                    text.push_str(raw);
                    dynamic = true;
                    dynamic_end = text.len();
                    unquoted_lit.push('\0');
                }
            }
        }
        let pattern = has_pattern(&unquoted_lit);
        WordValue {
            text,
            dynamic,
            unquoted_dynamic,
            dynamic_end,
            pattern,
        }
    }

    /// True when the word is exactly this unquoted literal (a reserved word or operator-like
    /// word such as `{`, `then`, `]]`).
    pub fn is_bare(&self, s: &str) -> bool {
        matches!(self.parts.as_slice(), [Part::Lit { text, quoted: false }] if text == s)
    }

    /// Every script nested in this word (substitutions), in source order.
    pub fn nested(&self) -> Vec<(&'static str, &Script)> {
        let mut out = Vec::new();
        for part in &self.parts {
            match part {
                Part::Param { nested, .. } => {
                    for s in nested {
                        out.push(("${...}", s));
                    }
                }
                Part::Command {
                    script, backtick, ..
                } => out.push((if *backtick { "`...`" } else { "$(...)" }, script)),
                Part::Process { script, output, .. } => {
                    out.push((if *output { ">(...)" } else { "<(...)" }, script))
                }
                Part::Arith { nested, .. } => {
                    for s in nested {
                        out.push(("$((...))", s));
                    }
                }
                Part::Lit { .. } => {}
            }
        }
        out
    }
}

/// Unquoted literal text (quoted runs replaced by NUL) contains a glob or brace expansion.
fn has_pattern(unquoted: &str) -> bool {
    let b = unquoted.as_bytes();
    if b.iter().any(|&c| c == b'*' || c == b'?') {
        return true;
    }
    // `[` is a pattern only with a later `]` (a lone `[` is the test command).
    if let Some(i) = b.iter().position(|&c| c == b'[') {
        if b[i + 1..].contains(&b']') && !(b == b"[[" || b == b"]]") {
            return true;
        }
    }
    // Brace expansion: `{` … (`,` or `..`) … `}`.
    let mut open: Option<usize> = None;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'{' => open = Some(i),
            b'}' => {
                if let Some(o) = open {
                    let inner = &b[o + 1..i];
                    if inner.contains(&b',') || inner.windows(2).any(|w| w == b"..") {
                        return true;
                    }
                }
                open = None;
            }
            _ => {}
        }
    }
    false
}

/// Decode the body of an ANSI-C quoted string `$'…'` (without the quotes).
pub fn decode_ansi_c(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let c = body[i];
        if c != b'\\' || i + 1 >= body.len() {
            out.push(c);
            i += 1;
            continue;
        }
        let e = body[i + 1];
        i += 2;
        match e {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'v' => out.push(11),
            b'e' | b'E' => out.push(27),
            b'\\' | b'\'' | b'"' | b'?' => out.push(e),
            b'c' => {
                if i < body.len() {
                    out.push(body[i] & 0x1f);
                    i += 1;
                }
            }
            b'x' => {
                let (v, n) = hex(&body[i..], 2);
                if n == 0 {
                    out.extend_from_slice(b"\\x");
                } else {
                    out.push(v as u8);
                    i += n;
                }
            }
            b'u' | b'U' => {
                let (v, n) = hex(&body[i..], if e == b'u' { 4 } else { 8 });
                if n == 0 {
                    out.push(b'\\');
                    out.push(e);
                } else {
                    let ch = char::from_u32(v).unwrap_or('\u{fffd}');
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                    i += n;
                }
            }
            b'0'..=b'7' => {
                let mut v: u32 = u32::from(e - b'0');
                let mut n = 0;
                while n < 2 && i < body.len() && (b'0'..=b'7').contains(&body[i]) {
                    v = v * 8 + u32::from(body[i] - b'0');
                    i += 1;
                    n += 1;
                }
                out.push((v & 0xff) as u8);
            }
            _ => {
                out.push(b'\\');
                out.push(e);
            }
        }
    }
    out
}

fn hex(b: &[u8], max: usize) -> (u32, usize) {
    let mut v: u32 = 0;
    let mut n = 0;
    while n < max && n < b.len() {
        let d = match b[n] {
            c @ b'0'..=b'9' => c - b'0',
            c @ b'a'..=b'f' => c - b'a' + 10,
            c @ b'A'..=b'F' => c - b'A' + 10,
            _ => break,
        };
        v = v.wrapping_mul(16).wrapping_add(u32::from(d));
        n += 1;
    }
    (v, n)
}
