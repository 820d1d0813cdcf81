//! Word-level lexing: quotes, escapes, `$'…'`, parameter expansions and the substitutions
//! nested in words (`$(…)`, backticks, `<(…)`, `>(…)`, `${…}`, `$((…))`), each bounded by
//! `Limits::max_depth` with a non-recursive skip past the bound.

use crate::lexer::{harvest, is_assignment_prefix, is_name_char, is_name_start, parse, Lexer};
use crate::script::Script;
use crate::word::{decode_ansi_c, LitText, Part, Word};

impl Lexer<'_> {
    /// Lex one word starting at the current position.
    pub(crate) fn word(&mut self, in_array: bool) -> Word {
        let start = self.pos;
        if let Some(w) = self.plain_word() {
            return w;
        }
        // Scratch buffers, reused across words (a nested word takes fresh ones).
        let mut parts: Vec<Part> = std::mem::take(&mut self.parts_buf);
        parts.clear();
        let mut lit = LitBuf::default();
        let mut lit_quoted = false;
        let src = self.src;
        fn flush(parts: &mut Vec<Part>, lit: &mut LitBuf, quoted: bool, src: &[u8]) {
            if !lit.is_empty() {
                let text = lit.take(src);
                if let Some(Part::Lit { text: t, quoted: q }) = parts.last_mut() {
                    if *q == quoted {
                        append_lit(t, text, src);
                        return;
                    }
                }
                parts.push(Part::Lit { text, quoted });
            }
        }
        // Source bytes `$a..$b` (or decoded bytes, `bytes $b`) appended to the literal.
        macro_rules! push_lit {
            ($a:expr, $b:expr, $quoted:expr) => {{
                if lit_quoted != $quoted {
                    flush(&mut parts, &mut lit, lit_quoted, src);
                    lit_quoted = $quoted;
                }
                lit.push_src(src, $a, $b);
            }};
            (bytes $bytes:expr, $quoted:expr) => {{
                if lit_quoted != $quoted {
                    flush(&mut parts, &mut lit, lit_quoted, src);
                    lit_quoted = $quoted;
                }
                lit.push_other(src, $bytes);
            }};
        }
        while let Some(c) = self.peek(0) {
            match c {
                b' ' | b'\t' | b'\n' | b'\r' | b';' | b'&' | b'|' | b')' => break,
                b'<' | b'>' => {
                    if self.peek(1) == Some(b'(') {
                        flush(&mut parts, &mut lit, lit_quoted, src);
                        let p = self.process_subst(c == b'>');
                        parts.push(p);
                    } else {
                        break;
                    }
                }
                b'(' => {
                    let prev = lit.last(src);
                    if !lit_quoted && matches!(prev, Some(b'?' | b'*' | b'+' | b'@' | b'!')) {
                        // extglob: consume the balanced group as literal pattern text.
                        let s = self.pos;
                        self.skip_balanced(b'(', b')');
                        push_lit!(s, self.pos, false);
                    } else if !in_array
                        && parts.is_empty()
                        && !lit_quoted
                        && is_assignment_prefix(&String::from_utf8_lossy(lit.bytes(src)))
                    {
                        flush(&mut parts, &mut lit, lit_quoted, src);
                        self.advance(1);
                        self.array_body(&mut parts);
                    } else {
                        break;
                    }
                }
                b'\\' => match self.peek(1) {
                    Some(b'\n') => self.advance(2),
                    Some(_) => {
                        let p = self.pos;
                        self.advance(2);
                        push_lit!(p + 1, p + 2, true);
                    }
                    None => {
                        let p = self.pos;
                        self.advance(1);
                        push_lit!(p, p + 1, false);
                    }
                },
                b'\'' => {
                    let s = self.pos;
                    let l = self.line;
                    self.advance(1);
                    let body_start = self.pos;
                    self.skip_to(b'\'');
                    let body_end = self.pos;
                    if self.peek(0).is_none() {
                        self.issue("unterminated single quote", s, l);
                    } else {
                        self.advance(1);
                    }
                    push_lit!(body_start, body_end, true);
                }
                b'"' => {
                    flush(&mut parts, &mut lit, lit_quoted, src);
                    self.advance(1);
                    self.dquote(&mut parts, Some(b'"'));
                }
                b'`' => {
                    flush(&mut parts, &mut lit, lit_quoted, src);
                    let p = self.backtick(false);
                    parts.push(p);
                }
                b'$' => {
                    if self.peek(1) == Some(b'\'') {
                        self.advance(2);
                        let s = self.pos;
                        let l = self.line;
                        while let Some(ch) = self.peek(0) {
                            if ch == b'\'' {
                                break;
                            }
                            if ch == b'\\' {
                                self.bump();
                            }
                            self.bump();
                        }
                        let end = self.pos.min(self.src.len());
                        let body = decode_ansi_c(self.src.get(s..end).unwrap_or(b""));
                        if self.peek(0).is_none() {
                            self.issue("unterminated $'...' quote", s, l);
                        } else {
                            self.advance(1);
                        }
                        push_lit!(bytes & body, true);
                    } else if self.peek(1) == Some(b'"') {
                        flush(&mut parts, &mut lit, lit_quoted, src);
                        self.advance(2);
                        self.dquote(&mut parts, Some(b'"'));
                    } else {
                        flush(&mut parts, &mut lit, lit_quoted, src);
                        let d = self.pos;
                        match self.dollar(false) {
                            Some(p) => parts.push(p),
                            None => push_lit!(d, d + 1, false),
                        }
                    }
                }
                _ => {
                    // A run of ordinary bytes (never a newline) is one literal push.
                    let p = self.pos;
                    let run = src
                        .get(p..)
                        .unwrap_or(b"")
                        .iter()
                        .position(|&b| is_word_special(b))
                        .unwrap_or(src.len().saturating_sub(p))
                        .max(1);
                    self.advance(run);
                    push_lit!(p, p + run, false);
                }
            }
        }
        flush(&mut parts, &mut lit, lit_quoted, src);
        let word = Word::new(&mut parts, &self.rc, start, self.pos);
        self.parts_buf = parts;
        word
    }

    /// Fast path for the commonest word: a run of ordinary bytes ended by a plain word
    /// terminator. The result is what the general loop builds: one unquoted literal.
    #[inline]
    fn plain_word(&mut self) -> Option<Word> {
        let src = self.src;
        let start = self.pos;
        let rest = src.get(start..)?;
        let mut glob = false;
        let run = rest
            .iter()
            .position(|&b| {
                let class = BYTE_CLASS[usize::from(b)];
                glob |= class & GLOB != 0;
                class & SPECIAL != 0
            })
            .unwrap_or(rest.len());
        if run == 0 {
            return None;
        }
        let end = start + run;
        let terminated = match src.get(end) {
            None => true,
            Some(b' ' | b'\t' | b'\n' | b'\r' | b';' | b'&' | b'|' | b')') => true,
            Some(b'<' | b'>') => src.get(end + 1) != Some(&b'('),
            Some(_) => false,
        };
        if !terminated || !is_boundary(src, start) {
            return None;
        }
        // No newline in the run: the line does not change.
        self.pos = end;
        let lit = Part::Lit {
            text: LitText::Span(start, end),
            quoted: false,
        };
        Some(Word::single(lit, &self.rc, start, end, glob))
    }

    /// Array assignment body `(a b c)`: its words become quoted literal parts of the word.
    fn array_body(&mut self, parts: &mut Vec<Part>) {
        loop {
            match self.peek(0) {
                None => break,
                Some(b')') => {
                    self.advance(1);
                    break;
                }
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.advance(1),
                Some(b'#') => {
                    while !matches!(self.peek(0), None | Some(b'\n')) {
                        self.advance(1);
                    }
                }
                Some(_) => {
                    let before = self.pos;
                    let w = self.word(true);
                    if self.pos == before {
                        self.advance(1);
                    }
                    parts.push(Part::Lit {
                        text: LitText::Owned(" ".to_string()),
                        quoted: true,
                    });
                    parts.extend(w.into_parts());
                }
            }
        }
    }

    /// Double-quoted text up to `term` (or to the end for here-document bodies).
    pub(crate) fn dquote(&mut self, parts: &mut Vec<Part>, term: Option<u8>) {
        let s = self.pos;
        let l = self.line;
        let src = self.src;
        let mut lit = LitBuf::default();
        let flush = |parts: &mut Vec<Part>, lit: &mut LitBuf| {
            // Always emit, so an empty "" still counts as a (quoted, empty) part.
            parts.push(Part::Lit {
                text: lit.take(src),
                quoted: true,
            });
        };
        loop {
            let Some(c) = self.peek(0) else {
                if term.is_some() {
                    self.issue("unterminated double quote", s, l);
                }
                break;
            };
            if Some(c) == term {
                self.advance(1);
                break;
            }
            let p = self.pos;
            match c {
                b'\\' => match self.peek(1) {
                    Some(b'\n') => self.advance(2),
                    Some(b'$' | b'`' | b'"' | b'\\') => {
                        self.advance(2);
                        lit.push_src(src, p + 1, p + 2);
                    }
                    _ => {
                        self.advance(1);
                        lit.push_src(src, p, p + 1);
                    }
                },
                b'$' => {
                    flush(parts, &mut lit);
                    match self.dollar(true) {
                        Some(part) => parts.push(part),
                        None => lit.push_src(src, p, p + 1),
                    }
                }
                b'`' => {
                    flush(parts, &mut lit);
                    let part = self.backtick(true);
                    parts.push(part);
                }
                _ => {
                    // A run of ordinary bytes is one literal push.
                    let run = src
                        .get(p..)
                        .unwrap_or(b"")
                        .iter()
                        .position(|&b| matches!(b, b'\\' | b'$' | b'`') || Some(b) == term)
                        .unwrap_or(src.len().saturating_sub(p))
                        .max(1);
                    self.advance(run);
                    lit.push_src(src, p, p + run);
                }
            }
        }
        flush(parts, &mut lit);
    }

    /// A `$` expansion at the current position; `None` when the `$` is literal (consumed).
    pub(crate) fn dollar(&mut self, quoted: bool) -> Option<Part> {
        let start = self.pos;
        match self.peek(1) {
            Some(b'(') => {
                if self.peek(2) == Some(b'(') {
                    if let Some(end) = self.scan_arith(self.pos + 3) {
                        self.advance(3);
                        let nested = self.nested_arith(end);
                        self.pos = self.pos.max(end + 2).min(self.src.len());
                        return Some(Part::Arith {
                            raw: self.raw(start),
                            nested,
                            quoted,
                        });
                    }
                }
                self.advance(2);
                let script = self.nested_script(start);
                Some(Part::Command {
                    raw: self.raw(start),
                    script: Box::new(script),
                    quoted,
                    backtick: false,
                })
            }
            Some(b'{') => {
                self.advance(2);
                let nested = self.brace_param(start, quoted);
                Some(Part::Param {
                    raw: self.raw(start),
                    quoted,
                    nested,
                })
            }
            Some(c) if is_name_start(c) => {
                self.advance(1);
                while self.peek(0).is_some_and(is_name_char) {
                    self.advance(1);
                }
                Some(Part::Param {
                    raw: self.raw(start),
                    quoted,
                    nested: Vec::new(),
                })
            }
            Some(c) if c.is_ascii_digit() || b"@*#?$!-".contains(&c) => {
                self.advance(2);
                Some(Part::Param {
                    raw: self.raw(start),
                    quoted,
                    nested: Vec::new(),
                })
            }
            _ => {
                self.advance(1);
                None
            }
        }
    }

    fn raw(&self, start: usize) -> String {
        String::from_utf8_lossy(self.src.get(start..self.pos).unwrap_or(b"")).into_owned()
    }

    fn nested_arith(&mut self, end: usize) -> Vec<Script> {
        if self.depth + 1 > self.limits.max_depth {
            let reason = self.limits.too_deep();
            self.issue(&reason, self.pos, self.line);
            self.pos = end;
            return Vec::new();
        }
        self.depth += 1;
        let out = self.arith_body(end);
        self.depth -= 1;
        out
    }

    /// The body of `$(…)`, `<(…)` or `>(…)`; the opening has been consumed.
    fn nested_script(&mut self, start: usize) -> Script {
        if self.depth + 1 > self.limits.max_depth {
            let reason = self.limits.too_deep();
            self.issue(&reason, start, self.line);
            self.skip_balanced_from_inside(b'(', b')');
            return Script::empty(self.rc.clone());
        }
        self.depth += 1;
        let tokens = self.script(true);
        self.depth -= 1;
        Script {
            src: self.rc.clone(),
            tokens,
            issues: Vec::new(),
        }
    }

    fn process_subst(&mut self, output: bool) -> Part {
        let start = self.pos;
        self.advance(2);
        let script = self.nested_script(start);
        Part::Process {
            raw: self.raw(start),
            script: Box::new(script),
            output,
        }
    }

    /// `${…}`: find the closing brace, lexing substitutions and quotes inside it. Inside
    /// double quotes (`quoted`) a single quote is a literal character, so `"${x:-'$(cmd)'}"`
    /// runs `cmd`; an array subscript is arithmetic, which expands `$(…)` even in single
    /// quotes (`${a['$(cmd)']}`): in both the quoted text is lexed for substitutions.
    fn brace_param(&mut self, start: usize, quoted: bool) -> Vec<Script> {
        if self.depth + 1 > self.limits.max_depth {
            let reason = self.limits.too_deep();
            self.issue(&reason, start, self.line);
            self.skip_balanced_from_inside(b'{', b'}');
            return Vec::new();
        }
        self.depth += 1;
        let mut parts = Vec::new();
        let mut subscript = 0usize;
        loop {
            match self.peek(0) {
                None => {
                    self.issue("unterminated ${...}", start, self.line);
                    break;
                }
                Some(b'}') => {
                    self.advance(1);
                    break;
                }
                Some(b'\\') => self.advance(2),
                Some(b'[') => {
                    subscript += 1;
                    self.bump();
                }
                Some(b']') => {
                    subscript = subscript.saturating_sub(1);
                    self.bump();
                }
                Some(b'\'') if quoted || subscript > 0 => {
                    self.bump();
                }
                Some(b'\'') => {
                    self.advance(1);
                    while !matches!(self.peek(0), None | Some(b'\'')) {
                        self.bump();
                    }
                    self.advance(1);
                }
                Some(b'"') => {
                    self.advance(1);
                    self.dquote(&mut parts, Some(b'"'));
                }
                Some(b'$') => {
                    if let Some(p) = self.dollar(true) {
                        parts.push(p);
                    }
                }
                Some(b'`') => parts.push(self.backtick(true)),
                Some(_) => {
                    self.bump();
                }
            }
        }
        self.depth -= 1;
        harvest(parts)
    }

    /// `` `…` ``: extract the body (undoing `\$`, `` \` ``, `\\`) and lex it as a script.
    pub(crate) fn backtick(&mut self, quoted: bool) -> Part {
        let start = self.pos;
        let line = self.line;
        self.advance(1);
        let mut body: Vec<u8> = Vec::new();
        let mut closed = false;
        while let Some(c) = self.peek(0) {
            match c {
                b'`' => {
                    self.advance(1);
                    closed = true;
                    break;
                }
                b'\\' => match self.peek(1) {
                    Some(n @ (b'$' | b'`' | b'\\')) => {
                        self.advance(2);
                        body.push(n);
                    }
                    Some(b'"') if quoted => {
                        self.advance(2);
                        body.push(b'"');
                    }
                    _ => {
                        self.advance(1);
                        body.push(b'\\');
                    }
                },
                _ => {
                    self.bump();
                    body.push(c);
                }
            }
        }
        if !closed {
            self.issue("unterminated backquote", start, line);
        }
        let text = String::from_utf8_lossy(&body).into_owned();
        let script = if self.depth + 1 > self.limits.max_depth {
            let reason = self.limits.too_deep();
            self.issue(&reason, start, line);
            Script::empty(self.rc.clone())
        } else {
            let mut s = parse(&text, line, self.depth + 1, &self.limits);
            self.issues.append(&mut s.issues);
            s
        };
        Part::Command {
            raw: self.raw(start),
            script: Box::new(script),
            quoted,
            backtick: true,
        }
    }

    /// Skip a balanced `open … close` group starting at the current `open`.
    fn skip_balanced(&mut self, open: u8, close: u8) {
        self.advance(1);
        self.skip_balanced_from_inside(open, close);
    }

    /// Skip to the `close` matching an already consumed `open` (non-recursive, quote-aware).
    pub(crate) fn skip_balanced_from_inside(&mut self, open: u8, close: u8) {
        let mut depth = 1usize;
        while let Some(c) = self.peek(0) {
            match c {
                b'\\' => self.advance(1),
                b'\'' => {
                    self.advance(1);
                    while !matches!(self.peek(0), None | Some(b'\'')) {
                        self.bump();
                    }
                }
                _ if c == open => depth += 1,
                _ if c == close => {
                    depth -= 1;
                    if depth == 0 {
                        self.advance(1);
                        return;
                    }
                }
                _ => {}
            }
            self.bump();
        }
    }
}

/// Literal text being collected for one part: while it is one contiguous run of the source
/// it is only a span (no copy); otherwise its bytes.
#[derive(Debug, Default)]
pub(crate) struct LitBuf {
    /// The literal is `src[a..b]` (and `bytes` is empty).
    span: Option<(usize, usize)>,
    bytes: Vec<u8>,
}

impl LitBuf {
    fn is_empty(&self) -> bool {
        self.span.is_none() && self.bytes.is_empty()
    }

    /// Copy a pending span into `bytes` (the literal stops being one source run).
    fn materialize(&mut self, src: &[u8]) {
        if let Some((a, b)) = self.span.take() {
            self.bytes.extend_from_slice(src.get(a..b).unwrap_or(b""));
        }
    }

    /// Append the source bytes `a..b`.
    fn push_src(&mut self, src: &[u8], a: usize, b: usize) {
        if a >= b || b > src.len() {
            return;
        }
        match self.span {
            None if self.bytes.is_empty() => self.span = Some((a, b)),
            Some((s, e)) if e == a => self.span = Some((s, b)),
            _ => {
                self.materialize(src);
                self.bytes.extend_from_slice(src.get(a..b).unwrap_or(b""));
            }
        }
    }

    /// Append bytes that are not source text (decoded escapes).
    fn push_other(&mut self, src: &[u8], bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.materialize(src);
        self.bytes.extend_from_slice(bytes);
    }

    /// The literal's bytes so far.
    fn bytes<'a>(&'a self, src: &'a [u8]) -> &'a [u8] {
        match self.span {
            Some((a, b)) => src.get(a..b).unwrap_or(b""),
            None => &self.bytes,
        }
    }

    fn last(&self, src: &[u8]) -> Option<u8> {
        self.bytes(src).last().copied()
    }

    /// The collected literal; the buffer is left empty.
    fn take(&mut self, src: &[u8]) -> LitText {
        if let Some((a, b)) = self.span {
            if is_boundary(src, a) && is_boundary(src, b) {
                self.span = None;
                return LitText::Span(a, b);
            }
            self.materialize(src);
        }
        let text = match std::str::from_utf8(&self.bytes) {
            Ok(s) => s.to_owned(),
            Err(_) => String::from_utf8_lossy(&self.bytes).into_owned(),
        };
        self.bytes.clear();
        LitText::Owned(text)
    }
}

/// Is `i` a character boundary of the UTF-8 text `src`?
fn is_boundary(src: &[u8], i: usize) -> bool {
    i == src.len() || src.get(i).is_some_and(|&c| (c as i8) >= -0x40)
}

/// Append literal text `new` to the literal `t` (adjacent spans stay a span).
fn append_lit(t: &mut LitText, new: LitText, src: &[u8]) {
    if let (LitText::Span(a, b), LitText::Span(c, d)) = (&*t, &new) {
        if b == c {
            *t = LitText::Span(*a, *d);
            return;
        }
    }
    let text = |l: &LitText| -> String {
        match l {
            LitText::Span(a, b) => {
                String::from_utf8_lossy(src.get(*a..*b).unwrap_or(b"")).into_owned()
            }
            LitText::Owned(s) => s.clone(),
        }
    };
    let mut joined = text(t);
    joined.push_str(&text(&new));
    *t = LitText::Owned(joined);
}

/// Byte classes: `SPECIAL` ends a run of ordinary word characters (see [`Lexer::word`]);
/// `GLOB` may start a glob or brace pattern.
const SPECIAL: u8 = 1;
const GLOB: u8 = 2;
static BYTE_CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let special = b" \t\n\r;&|()<>\\'\"`$";
    let mut i = 0;
    while i < special.len() {
        t[special[i] as usize] = SPECIAL;
        i += 1;
    }
    t[b'*' as usize] = GLOB;
    t[b'?' as usize] = GLOB;
    t[b'[' as usize] = GLOB;
    t[b'{' as usize] = GLOB;
    t
};

fn is_word_special(b: u8) -> bool {
    BYTE_CLASS[usize::from(b)] & SPECIAL != 0
}
