//! Word-level lexing: quotes, escapes, `$'…'`, parameter expansions and the substitutions
//! nested in words (`$(…)`, backticks, `<(…)`, `>(…)`, `${…}`, `$((…))`), each bounded by
//! [`MAX_DEPTH`] with a non-recursive skip past the bound.

use crate::lexer::{
    harvest, is_assignment_prefix, is_name_char, is_name_start, parse, Lexer, MAX_DEPTH,
};
use crate::script::Script;
use crate::word::{decode_ansi_c, Part, Word};

impl Lexer<'_> {
    /// Lex one word starting at the current position.
    pub(crate) fn word(&mut self, in_array: bool) -> Word {
        let start = self.pos;
        let mut parts: Vec<Part> = Vec::new();
        let mut lit: Vec<u8> = Vec::new();
        let mut lit_quoted = false;
        fn flush(parts: &mut Vec<Part>, lit: &mut Vec<u8>, quoted: bool) {
            if !lit.is_empty() {
                let text = String::from_utf8_lossy(lit).into_owned();
                lit.clear();
                if let Some(Part::Lit { text: t, quoted: q }) = parts.last_mut() {
                    if *q == quoted {
                        t.push_str(&text);
                        return;
                    }
                }
                parts.push(Part::Lit { text, quoted });
            }
        }
        macro_rules! push_lit {
            ($bytes:expr, $quoted:expr) => {{
                if lit_quoted != $quoted {
                    flush(&mut parts, &mut lit, lit_quoted);
                    lit_quoted = $quoted;
                }
                lit.extend_from_slice($bytes);
            }};
        }
        while let Some(c) = self.peek(0) {
            match c {
                b' ' | b'\t' | b'\n' | b'\r' | b';' | b'&' | b'|' | b')' => break,
                b'<' | b'>' => {
                    if self.peek(1) == Some(b'(') {
                        flush(&mut parts, &mut lit, lit_quoted);
                        let p = self.process_subst(c == b'>');
                        parts.push(p);
                    } else {
                        break;
                    }
                }
                b'(' => {
                    let prev = lit.last().copied();
                    let so_far = String::from_utf8_lossy(&lit).into_owned();
                    if !lit_quoted && matches!(prev, Some(b'?' | b'*' | b'+' | b'@' | b'!')) {
                        // extglob: consume the balanced group as literal pattern text.
                        let s = self.pos;
                        self.skip_balanced(b'(', b')');
                        let text = self.src.get(s..self.pos).unwrap_or(b"").to_vec();
                        push_lit!(&text, false);
                    } else if !in_array
                        && parts.is_empty()
                        && !lit_quoted
                        && is_assignment_prefix(&so_far)
                    {
                        flush(&mut parts, &mut lit, lit_quoted);
                        self.advance(1);
                        self.array_body(&mut parts);
                    } else {
                        break;
                    }
                }
                b'\\' => match self.peek(1) {
                    Some(b'\n') => self.advance(2),
                    Some(n) => {
                        self.advance(2);
                        push_lit!(&[n], true);
                    }
                    None => {
                        self.advance(1);
                        push_lit!(b"\\", false);
                    }
                },
                b'\'' => {
                    let s = self.pos;
                    let l = self.line;
                    self.advance(1);
                    let body_start = self.pos;
                    while let Some(ch) = self.peek(0) {
                        if ch == b'\'' {
                            break;
                        }
                        self.bump();
                    }
                    let body = self.src.get(body_start..self.pos).unwrap_or(b"").to_vec();
                    if self.peek(0).is_none() {
                        self.issue("unterminated single quote", s, l);
                    } else {
                        self.advance(1);
                    }
                    push_lit!(&body, true);
                }
                b'"' => {
                    flush(&mut parts, &mut lit, lit_quoted);
                    self.advance(1);
                    self.dquote(&mut parts, Some(b'"'));
                }
                b'`' => {
                    flush(&mut parts, &mut lit, lit_quoted);
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
                        push_lit!(&body, true);
                    } else if self.peek(1) == Some(b'"') {
                        flush(&mut parts, &mut lit, lit_quoted);
                        self.advance(2);
                        self.dquote(&mut parts, Some(b'"'));
                    } else {
                        flush(&mut parts, &mut lit, lit_quoted);
                        match self.dollar(false) {
                            Some(p) => parts.push(p),
                            None => push_lit!(b"$", false),
                        }
                    }
                }
                _ => {
                    self.advance(1);
                    push_lit!(&[c], false);
                }
            }
        }
        flush(&mut parts, &mut lit, lit_quoted);
        let raw =
            String::from_utf8_lossy(self.src.get(start..self.pos).unwrap_or(b"")).into_owned();
        Word { parts, raw }
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
                        text: " ".to_string(),
                        quoted: true,
                    });
                    parts.extend(w.parts);
                }
            }
        }
    }

    /// Double-quoted text up to `term` (or to the end for here-document bodies).
    pub(crate) fn dquote(&mut self, parts: &mut Vec<Part>, term: Option<u8>) {
        let s = self.pos;
        let l = self.line;
        let mut lit: Vec<u8> = Vec::new();
        let flush = |parts: &mut Vec<Part>, lit: &mut Vec<u8>| {
            // Always emit, so an empty "" still counts as a (quoted, empty) part.
            parts.push(Part::Lit {
                text: String::from_utf8_lossy(lit).into_owned(),
                quoted: true,
            });
            lit.clear();
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
            match c {
                b'\\' => match self.peek(1) {
                    Some(b'\n') => self.advance(2),
                    Some(n @ (b'$' | b'`' | b'"' | b'\\')) => {
                        self.advance(2);
                        lit.push(n);
                    }
                    _ => {
                        self.advance(1);
                        lit.push(b'\\');
                    }
                },
                b'$' => {
                    flush(parts, &mut lit);
                    match self.dollar(true) {
                        Some(p) => parts.push(p),
                        None => lit.push(b'$'),
                    }
                }
                b'`' => {
                    flush(parts, &mut lit);
                    let p = self.backtick(true);
                    parts.push(p);
                }
                _ => {
                    self.bump();
                    lit.push(c);
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
                    script,
                    quoted,
                    backtick: false,
                })
            }
            Some(b'{') => {
                self.advance(2);
                let nested = self.brace_param(start);
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
        if self.depth + 1 > MAX_DEPTH {
            self.issue("nesting too deep", self.pos, self.line);
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
        if self.depth + 1 > MAX_DEPTH {
            self.issue("nesting too deep", start, self.line);
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
            script,
            output,
        }
    }

    /// `${…}`: find the closing brace, lexing substitutions and quotes inside it.
    fn brace_param(&mut self, start: usize) -> Vec<Script> {
        if self.depth + 1 > MAX_DEPTH {
            self.issue("nesting too deep", start, self.line);
            self.skip_balanced_from_inside(b'{', b'}');
            return Vec::new();
        }
        self.depth += 1;
        let mut parts = Vec::new();
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
        let script = if self.depth + 1 > MAX_DEPTH {
            self.issue("nesting too deep", start, line);
            Script::empty(self.rc.clone())
        } else {
            let mut s = parse(&text, line, self.depth + 1);
            self.issues.append(&mut s.issues);
            s
        };
        Part::Command {
            raw: self.raw(start),
            script,
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
    fn skip_balanced_from_inside(&mut self, open: u8, close: u8) {
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
