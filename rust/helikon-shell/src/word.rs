//! One shell word: its parts (literal text, expansions, substitutions) and its static value.
//!
//! A word is kept as parts so that later stages can tell literal text from anything the shell
//! computes at run time. [`Word::value`] renders a word the way the analysis needs it: quotes
//! removed, escapes and `$'…'` decoded, and every expansion kept as its source text (so
//! `"$HOME"` reads `$HOME`), together with flags saying whether anything dynamic was present.

use std::rc::Rc;

use crate::script::Script;

/// Literal text: a span of the word's source when it is exactly that (most literals, so
/// they need no allocation), else the decoded text.
#[derive(Debug, Clone)]
pub enum LitText {
    Span(usize, usize),
    Owned(String),
}

/// One piece of a word.
#[derive(Debug, Clone)]
pub enum Part {
    /// Literal text. `quoted` is true when it came from quotes or a backslash escape, so glob
    /// and brace characters in it are inert.
    Lit { text: LitText, quoted: bool },
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
        script: Box<Script>,
        quoted: bool,
        backtick: bool,
    },
    /// A process substitution `<(…)` or `>(…)`.
    Process {
        raw: String,
        script: Box<Script>,
        output: bool,
    },
    /// An arithmetic expansion `$((…))`; `nested` holds substitutions inside it.
    Arith {
        raw: String,
        nested: Vec<Script>,
        quoted: bool,
    },
}

/// A word as lexed: its parts, the source text it came from, and its rendered value
/// (computed once, when the word is built).
#[derive(Debug, Clone, Default)]
pub struct Word {
    parts: Parts,
    /// The source the word was lexed from and its byte span there (the raw text).
    src: Rc<str>,
    start: usize,
    end: usize,
    /// The rendered text, when it is not simply the text of a single literal part.
    text: Option<String>,
    dynamic: bool,
    unquoted_dynamic: bool,
    dynamic_end: usize,
    pattern: bool,
    /// Some part holds a nested script.
    has_nested: bool,
}

/// A word's parts; most words have exactly one, kept inline.
#[derive(Debug, Clone, Default)]
enum Parts {
    #[default]
    None,
    One(Part),
    Many(Vec<Part>),
}

/// The rendered value of a word (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WordValue<'a> {
    /// Quote-removed text; expansions appear as their source text.
    pub text: &'a str,
    /// Some part is computed at run time (expansion or substitution).
    pub dynamic: bool,
    /// Some dynamic part is outside double quotes (subject to word splitting and globbing).
    pub unquoted_dynamic: bool,
    /// Byte offset in `text` just after the last dynamic part (0 when static).
    pub dynamic_end: usize,
    /// An unquoted glob (`*`, `?`, `[…]`) or brace expansion (`{a,b}`, `{1..3}`) is present.
    pub pattern: bool,
}

/// The source text spanned by a run of words (first word's start to last word's end), when
/// they were lexed from one source; used as the text of a command found inside another
/// (`find -exec rm {} ;` gives `rm {}`), so nested commands do not copy the outer text.
pub(crate) fn span_text<'a>(words: &[&'a Word]) -> Option<&'a str> {
    let (first, last) = (words.first()?, words.last()?);
    if !Rc::ptr_eq(&first.src, &last.src) || first.start > last.end {
        return None;
    }
    first.src.get(first.start..last.end)
}

impl Word {
    /// Build a word from its parts (drained from `parts`) and its span in `src`.
    pub(crate) fn new(parts: &mut Vec<Part>, src: &Rc<str>, start: usize, end: usize) -> Word {
        let parts = match parts.len() {
            0 => Parts::None,
            1 => match parts.pop() {
                Some(p) => Parts::One(p),
                None => Parts::None,
            },
            // Moved into an exact-size vector so the lexer's scratch vector keeps its capacity.
            n => {
                let mut many = Vec::with_capacity(n);
                many.append(parts);
                Parts::Many(many)
            }
        };
        Word::build(parts, src, start, end, true)
    }

    /// A word of one part; `glob` is false when its literal text has no glob or brace
    /// character (the pattern check is then skipped).
    #[inline]
    pub(crate) fn single(part: Part, src: &Rc<str>, start: usize, end: usize, glob: bool) -> Word {
        Word::build(Parts::One(part), src, start, end, glob)
    }

    #[inline]
    fn build(mut parts: Parts, src: &Rc<str>, start: usize, end: usize, glob: bool) -> Word {
        // The raw text is the source span; a span that does not fall on character boundaries
        // (not produced by the lexer, but cheap to guard) keeps its lossy rendering, and the
        // literal spans are then resolved against the original source first.
        let (src, start, end) = if src.get(start..end).is_some() {
            (src.clone(), start, end)
        } else {
            let lits: &mut [Part] = match &mut parts {
                Parts::None => &mut [],
                Parts::One(p) => std::slice::from_mut(p),
                Parts::Many(v) => v,
            };
            for p in lits {
                if let Part::Lit { text, .. } = p {
                    if let LitText::Span(a, b) = *text {
                        *text = LitText::Owned(src.get(a..b).unwrap_or("").to_string());
                    }
                }
            }
            let bytes = src.as_bytes().get(start..end).unwrap_or(b"");
            let owned: Rc<str> = Rc::from(String::from_utf8_lossy(bytes).as_ref());
            let len = owned.len();
            (owned, 0, len)
        };
        // Built field by field: `Word::default()` would allocate an empty `Rc<str>`.
        let mut w = Word {
            parts,
            src,
            start,
            end,
            text: None,
            dynamic: false,
            unquoted_dynamic: false,
            dynamic_end: 0,
            pattern: false,
            has_nested: false,
        };
        w.render(glob);
        w
    }

    /// Compute the rendered value (see [`WordValue`]).
    fn render(&mut self, glob: bool) {
        let parts = self.parts();
        if let [Part::Lit { text, quoted }] = parts {
            let pattern = glob && !quoted && has_pattern(self.lit(text));
            self.pattern = pattern;
            return;
        }
        if parts.is_empty() {
            return;
        }
        let mut text = String::with_capacity(self.end - self.start);
        let mut dynamic = false;
        let mut unquoted_dynamic = false;
        let mut dynamic_end = 0;
        let mut maybe_pattern = false;
        let mut has_nested = false;
        for part in parts {
            has_nested |= match part {
                Part::Lit { .. } => false,
                Part::Param { nested, .. } | Part::Arith { nested, .. } => !nested.is_empty(),
                Part::Command { .. } | Part::Process { .. } => true,
            };
            match part {
                Part::Lit { text: t, quoted } => {
                    let t = self.lit(t);
                    text.push_str(t);
                    if !quoted && t.bytes().any(|c| matches!(c, b'*' | b'?' | b'[' | b'{')) {
                        maybe_pattern = true;
                    }
                }
                Part::Param { raw, quoted, .. }
                | Part::Command { raw, quoted, .. }
                | Part::Arith { raw, quoted, .. } => {
                    text.push_str(raw);
                    dynamic = true;
                    unquoted_dynamic |= !quoted;
                    dynamic_end = text.len();
                }
                Part::Process { raw, .. } => {
                    text.push_str(raw);
                    dynamic = true;
                    dynamic_end = text.len();
                }
            }
        }
        let pattern = maybe_pattern && has_pattern(&self.unquoted_literal());
        self.text = Some(text);
        self.has_nested = has_nested;
        self.dynamic = dynamic;
        self.unquoted_dynamic = unquoted_dynamic;
        self.dynamic_end = dynamic_end;
        self.pattern = pattern;
    }

    /// The text of a literal part of this word.
    pub fn lit<'a>(&'a self, text: &'a LitText) -> &'a str {
        match text {
            LitText::Span(a, b) => self.src.get(*a..*b).unwrap_or(""),
            LitText::Owned(s) => s,
        }
    }

    /// The word's parts, in source order.
    pub fn parts(&self) -> &[Part] {
        match &self.parts {
            Parts::None => &[],
            Parts::One(p) => std::slice::from_ref(p),
            Parts::Many(v) => v,
        }
    }

    /// The word's parts, by value.
    pub fn into_parts(self) -> Vec<Part> {
        match self.parts {
            Parts::None => Vec::new(),
            Parts::One(p) => vec![p],
            Parts::Many(v) => v,
        }
    }

    /// The source text of the word.
    pub fn raw(&self) -> &str {
        self.src.get(self.start..self.end).unwrap_or("")
    }

    /// The rendered text: quotes removed, expansions as their source text.
    pub fn text(&self) -> &str {
        match &self.text {
            Some(t) => t,
            None => match self.parts() {
                [Part::Lit { text, .. }] => self.lit(text),
                _ => "",
            },
        }
    }

    /// The rendered value (see [`WordValue`]).
    pub fn value(&self) -> WordValue<'_> {
        WordValue {
            text: self.text(),
            dynamic: self.dynamic,
            unquoted_dynamic: self.unquoted_dynamic,
            dynamic_end: self.dynamic_end,
            pattern: self.pattern,
        }
    }

    /// Some part is computed at run time.
    pub fn is_dynamic(&self) -> bool {
        self.dynamic
    }

    /// The text of a word that is a single unquoted literal (a candidate reserved word).
    pub fn bare(&self) -> Option<&str> {
        match self.parts() {
            [Part::Lit {
                text,
                quoted: false,
            }] => Some(self.lit(text)),
            _ => None,
        }
    }

    /// True when the word is exactly this unquoted literal (a reserved word or operator-like
    /// word such as `{`, `then`, `]]`).
    pub fn is_bare(&self, s: &str) -> bool {
        self.bare() == Some(s)
    }

    /// Does any part hold a nested script (see [`Word::nested`])?
    pub fn has_nested(&self) -> bool {
        self.has_nested
    }

    /// Every script nested in this word (substitutions), in source order.
    pub fn nested(&self) -> impl Iterator<Item = (&'static str, &Script)> {
        self.parts().iter().flat_map(|part| {
            let (label, one, many): (&'static str, Option<&Script>, &[Script]) = match part {
                Part::Param { nested, .. } => ("${...}", None, nested),
                Part::Command {
                    script, backtick, ..
                } => (
                    if *backtick { "`...`" } else { "$(...)" },
                    Some(script),
                    &[],
                ),
                Part::Process { script, output, .. } => {
                    (if *output { ">(...)" } else { "<(...)" }, Some(script), &[])
                }
                Part::Arith { nested, .. } => ("$((...))", None, nested),
                Part::Lit { .. } => ("", None, &[]),
            };
            one.into_iter().chain(many.iter()).map(move |s| (label, s))
        })
    }
}

impl Word {
    /// The unquoted literal text, with every other part replaced by NUL.
    fn unquoted_literal(&self) -> String {
        let mut out = String::new();
        for part in self.parts() {
            match part {
                Part::Lit {
                    text,
                    quoted: false,
                } => out.push_str(self.lit(text)),
                _ => out.push('\0'),
            }
        }
        out
    }
}

/// Unquoted literal text (quoted runs replaced by NUL) contains a glob or brace expansion.
fn has_pattern(unquoted: &str) -> bool {
    let b = unquoted.as_bytes();
    // Every pattern needs one of these bytes; most words have none.
    if !b.iter().any(|&c| matches!(c, b'*' | b'?' | b'[' | b'{')) {
        return false;
    }
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
