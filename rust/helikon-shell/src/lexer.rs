//! The lexer: shell source text to a flat token stream with nested scripts inside words.
//!
//! Operators, redirections and words are recognised the way bash does (quotes, escapes, line
//! continuations, comments, `$'…'`, here-documents, `((…))`). Substitutions (`$(…)`, backticks,
//! `<(…)`, `>(…)`, `${…}`, `$((…))`) are lexed recursively into [`Script`]s held by the word
//! that contains them. Every recursive construct counts against [`MAX_DEPTH`]; past it the
//! construct is skipped with a non-recursive scan and an [`Issue`] is recorded, so the lexer
//! never overflows the stack and stays linear in the input (times the depth bound).

use std::rc::Rc;

use crate::limits::Limits;
use crate::script::Script;
use crate::word::{Part, Word};

/// How deep substitutions, groups of substitutions and re-entered shell strings may nest by
/// default (see [`Limits::max_depth`]).
pub const MAX_DEPTH: usize = crate::limits::DEFAULT_MAX_DEPTH;

/// Something the lexer or the analysis could not resolve statically.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    pub reason: String,
    pub snippet: String,
    pub line: u32,
}

/// Control operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Semi,
    Amp,
    AndIf,
    OrIf,
    Pipe,
    PipeAmp,
    DSemi,
    SemiAmp,
    DSemiAmp,
    LParen,
    RParen,
    Newline,
}

/// Redirection kinds (see `Redirection::op_name` for the JSON names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirOp {
    Out,
    Append,
    In,
    ReadWrite,
    Dup,
    /// `<&N` (standard input, or fd N when given, duplicated from N).
    DupIn,
    HereDoc,
    HereString,
}

/// A here-document body, filled in when the line that opened it ends.
#[derive(Debug, Clone, Default)]
pub struct HereDoc {
    pub body: String,
    pub quoted: bool,
    /// Line of the body's first line.
    pub line: u32,
}

/// One redirection.
#[derive(Debug, Clone)]
pub struct Redir {
    pub fd: Option<String>,
    pub op: RedirOp,
    pub target: Option<Word>,
    pub heredoc: Option<HereDoc>,
}

/// Token payloads.
#[derive(Debug, Clone)]
pub enum TokKind {
    Word(Word),
    Op(Op),
    /// Boxed: a redirection is larger than a word and rarer.
    Redir(Box<Redir>),
    /// An arithmetic command `((…))`; holds the substitutions inside it.
    Arith(Vec<Script>),
}

/// A token with its byte span in the script source and its 1-based line.
#[derive(Debug, Clone)]
pub struct Token {
    pub kind: TokKind,
    pub start: usize,
    pub end: usize,
    pub line: u32,
}

struct PendingDoc {
    token: usize,
    delim: Vec<u8>,
    strip_tabs: bool,
}

/// Lex a whole script. `line` is the line number of its first byte; `depth` its nesting level.
pub fn parse(src: &str, line: u32, depth: usize, limits: &Limits) -> Script {
    let rc: Rc<str> = Rc::from(src);
    let mut lx = Lexer {
        src: src.as_bytes(),
        rc: rc.clone(),
        pos: 0,
        line,
        depth,
        limits: *limits,
        issues: Vec::new(),
        parens: None,
        parts_buf: Vec::new(),
    };
    let tokens = lx.script(false);
    Script {
        src: rc,
        tokens,
        issues: lx.issues,
    }
}

/// The substitutions in an unquoted here-document body (lexed on demand, so a body that a
/// shell re-enters is lexed once). Returns the scripts and the issues found.
pub fn heredoc_scripts(
    body: &str,
    line: u32,
    depth: usize,
    limits: &Limits,
) -> (Vec<Script>, Vec<Issue>) {
    if depth > limits.max_depth {
        let issue = Issue {
            reason: limits.too_deep(),
            snippet: body.chars().take(60).collect(),
            line,
        };
        return (Vec::new(), vec![issue]);
    }
    let mut sub = Lexer {
        src: body.as_bytes(),
        rc: Rc::from(body),
        pos: 0,
        line,
        depth,
        limits: *limits,
        issues: Vec::new(),
        parens: None,
        parts_buf: Vec::new(),
    };
    let mut parts = Vec::new();
    sub.dquote(&mut parts, None);
    (harvest(parts), sub.issues)
}

pub(crate) struct Lexer<'a> {
    pub(crate) src: &'a [u8],
    pub(crate) rc: Rc<str>,
    pub(crate) pos: usize,
    pub(crate) line: u32,
    pub(crate) depth: usize,
    pub(crate) limits: Limits,
    pub(crate) issues: Vec<Issue>,
    pub(crate) parens: Option<Vec<usize>>,
    /// Scratch buffer for [`Lexer::word`].
    pub(crate) parts_buf: Vec<Part>,
}

pub(crate) fn is_meta(c: u8) -> bool {
    matches!(
        c,
        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
    )
}

pub(crate) fn is_name_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

pub(crate) fn is_name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

impl<'a> Lexer<'a> {
    pub(crate) fn peek(&self, off: usize) -> Option<u8> {
        self.src.get(self.pos + off).copied()
    }

    pub(crate) fn at(&self, s: &[u8]) -> bool {
        self.src.get(self.pos..self.pos + s.len()) == Some(s)
    }

    /// Advance one byte, counting lines.
    pub(crate) fn bump(&mut self) -> Option<u8> {
        let c = self.peek(0)?;
        self.pos += 1;
        if c == b'\n' {
            self.line += 1;
        }
        Some(c)
    }

    pub(crate) fn advance(&mut self, n: usize) {
        let end = self.pos.saturating_add(n).min(self.src.len());
        let skipped = self.src.get(self.pos..end).unwrap_or(b"");
        let newlines = skipped.iter().filter(|&&c| c == b'\n').count();
        self.line = self
            .line
            .saturating_add(u32::try_from(newlines).unwrap_or(u32::MAX));
        self.pos = end.max(self.pos);
    }

    /// Move to the next `stop` byte (or the end), counting lines.
    pub(crate) fn skip_to(&mut self, stop: u8) {
        let rest = self.src.get(self.pos..).unwrap_or(b"");
        let n = rest.iter().position(|&c| c == stop).unwrap_or(rest.len());
        self.advance(n);
    }

    pub(crate) fn snippet(&self, start: usize) -> String {
        let end = (start + 60).min(self.src.len());
        String::from_utf8_lossy(self.src.get(start..end).unwrap_or(b"")).into_owned()
    }

    pub(crate) fn issue(&mut self, reason: &str, start: usize, line: u32) {
        let snippet = self.snippet(start);
        self.issues.push(Issue {
            reason: reason.to_string(),
            snippet,
            line,
        });
    }

    /// Lex tokens until the end of input, or (when `in_paren`) the `)` closing a substitution.
    pub(crate) fn script(&mut self, in_paren: bool) -> Vec<Token> {
        // About one token per four bytes of typical commands; a substitution is usually short.
        let guess = if in_paren {
            4
        } else {
            (self.src.len().saturating_sub(self.pos) / 4 + 1).min(256)
        };
        let mut tokens: Vec<Token> = crate::script::token_vec(guess);
        let mut pending: Vec<PendingDoc> = Vec::new();
        let mut parens = 0usize;
        let mut cases = 0usize;
        let mut cmd_start = true;
        let open_line = self.line;
        let open_pos = self.pos;
        loop {
            // Blanks and line continuations.
            loop {
                match self.peek(0) {
                    Some(b' ') | Some(b'\t') | Some(b'\r') => self.advance(1),
                    Some(b'\\') if self.peek(1) == Some(b'\n') => self.advance(2),
                    _ => break,
                }
            }
            let start = self.pos;
            let line = self.line;
            if tokens.len() >= self.limits.max_words {
                let reason = self.limits.too_many_words();
                self.issue(&reason, start, line);
                // Skip the rest of this script (a substitution: to its closing parenthesis).
                if in_paren {
                    self.skip_balanced_from_inside(b'(', b')');
                } else {
                    self.pos = self.src.len();
                }
                break;
            }
            let Some(c) = self.peek(0) else {
                if in_paren {
                    self.issue("unterminated substitution", open_pos, open_line);
                }
                break;
            };
            let push_op = |tokens: &mut Vec<Token>, op: Op, end: usize| {
                tokens.push(Token {
                    kind: TokKind::Op(op),
                    start,
                    end,
                    line,
                });
            };
            match c {
                b'#' => {
                    while let Some(ch) = self.peek(0) {
                        if ch == b'\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                b'\n' => {
                    self.bump();
                    push_op(&mut tokens, Op::Newline, start + 1);
                    cmd_start = true;
                    if !pending.is_empty() {
                        self.read_heredocs(&mut pending, &mut tokens);
                    }
                }
                b';' => {
                    let (op, n) = if self.at(b";;&") {
                        (Op::DSemiAmp, 3)
                    } else if self.at(b";;") {
                        (Op::DSemi, 2)
                    } else if self.at(b";&") {
                        (Op::SemiAmp, 2)
                    } else {
                        (Op::Semi, 1)
                    };
                    self.advance(n);
                    push_op(&mut tokens, op, self.pos);
                    cmd_start = true;
                }
                b'&' if self.at(b"&>") => {
                    let r = self.redirection(None, &mut pending, tokens.len());
                    tokens.push(Token {
                        kind: TokKind::Redir(Box::new(r)),
                        start,
                        end: self.pos,
                        line,
                    });
                }
                b'&' => {
                    let (op, n) = if self.at(b"&&") {
                        (Op::AndIf, 2)
                    } else {
                        (Op::Amp, 1)
                    };
                    self.advance(n);
                    push_op(&mut tokens, op, self.pos);
                    cmd_start = true;
                }
                b'|' => {
                    let (op, n) = if self.at(b"||") {
                        (Op::OrIf, 2)
                    } else if self.at(b"|&") {
                        (Op::PipeAmp, 2)
                    } else {
                        (Op::Pipe, 1)
                    };
                    self.advance(n);
                    push_op(&mut tokens, op, self.pos);
                    cmd_start = true;
                }
                b'(' => {
                    if self.peek(1) == Some(b'(') {
                        if let Some(end) = self.scan_arith(self.pos + 2) {
                            let body_start = self.pos + 2;
                            self.advance(2);
                            let mut nested = self.arith_body(end);
                            // `/bin/sh` (dash, which `BashTool` runs) has no `((`: there
                            // `((rm f))` is `( (rm f) )`, subshells running the body. Analyse
                            // that reading too (not for bash's `for ((…))` header, a syntax
                            // error in dash that runs nothing).
                            let for_header = matches!(
                                tokens.last().map(|t: &Token| &t.kind),
                                Some(TokKind::Word(w)) if w.text() == "for"
                            );
                            if !for_header {
                                self.sh_subshells(body_start, end, line, &mut nested);
                            }
                            self.pos = self.pos.max(end + 2).min(self.src.len());
                            tokens.push(Token {
                                kind: TokKind::Arith(nested),
                                start,
                                end: self.pos,
                                line,
                            });
                            cmd_start = false;
                            continue;
                        }
                    }
                    self.advance(1);
                    parens += 1;
                    push_op(&mut tokens, Op::LParen, self.pos);
                    cmd_start = true;
                }
                b')' => {
                    if in_paren && parens == 0 && cases == 0 {
                        self.advance(1);
                        break;
                    }
                    parens = parens.saturating_sub(1);
                    self.advance(1);
                    push_op(&mut tokens, Op::RParen, self.pos);
                    cmd_start = true;
                }
                b'<' | b'>' if self.peek(1) != Some(b'(') => {
                    let r = self.redirection(None, &mut pending, tokens.len());
                    tokens.push(Token {
                        kind: TokKind::Redir(Box::new(r)),
                        start,
                        end: self.pos,
                        line,
                    });
                }
                _ => {
                    if let Some(fd) = self.fd_prefix() {
                        let r = self.redirection(Some(fd), &mut pending, tokens.len());
                        tokens.push(Token {
                            kind: TokKind::Redir(Box::new(r)),
                            start,
                            end: self.pos,
                            line,
                        });
                        continue;
                    }
                    let w = self.word(false);
                    if self.pos == start {
                        // Defensive: never loop without progress.
                        self.advance(1);
                        continue;
                    }
                    if cmd_start && w.is_bare("case") {
                        cases += 1;
                    } else if cases > 0 && w.is_bare("esac") {
                        cases -= 1;
                    }
                    cmd_start = cmd_start
                        && matches!(
                            w.bare(),
                            Some(
                                "if" | "then"
                                    | "else"
                                    | "elif"
                                    | "do"
                                    | "while"
                                    | "until"
                                    | "!"
                                    | "{"
                            )
                        );
                    tokens.push(Token {
                        kind: TokKind::Word(w),
                        start,
                        end: self.pos,
                        line,
                    });
                }
            }
        }
        if !pending.is_empty() {
            // A here-document whose line never ended: bash runs it with an empty body.
            pending.clear();
        }
        tokens
    }

    /// `N>`, `N<` or `{var}>` prefix of a redirection: returns the fd text and moves past it.
    fn fd_prefix(&mut self) -> Option<String> {
        let rest = self.src.get(self.pos..)?;
        let n = if rest.first() == Some(&b'{') {
            let len = rest
                .iter()
                .skip(1)
                .take_while(|&&c| is_name_char(c))
                .count();
            if len == 0 || rest.get(len + 1) != Some(&b'}') {
                return None;
            }
            len + 2
        } else {
            rest.iter().take_while(|c| c.is_ascii_digit()).count()
        };
        if n == 0 {
            return None;
        }
        match rest.get(n) {
            Some(b'<') | Some(b'>') if rest.get(n + 1) != Some(&b'(') => {
                let fd = String::from_utf8_lossy(&rest[..n]).into_owned();
                self.advance(n);
                Some(fd)
            }
            _ => None,
        }
    }

    fn redirection(
        &mut self,
        fd: Option<String>,
        pending: &mut Vec<PendingDoc>,
        token_index: usize,
    ) -> Redir {
        let table: [(&[u8], RedirOp); 12] = [
            (b"&>>", RedirOp::Append),
            (b"&>", RedirOp::Out),
            (b"<<<", RedirOp::HereString),
            (b"<<-", RedirOp::HereDoc),
            (b"<<", RedirOp::HereDoc),
            (b"<>", RedirOp::ReadWrite),
            (b"<&", RedirOp::DupIn),
            (b"<", RedirOp::In),
            (b">>", RedirOp::Append),
            (b">|", RedirOp::Out),
            (b">&", RedirOp::Dup),
            (b">", RedirOp::Out),
        ];
        let mut op = RedirOp::Out;
        let mut text: &[u8] = b">";
        for (t, o) in table {
            if self.at(t) {
                op = o;
                text = t;
                break;
            }
        }
        self.advance(text.len());
        let strip_tabs = text == b"<<-";
        while matches!(self.peek(0), Some(b' ') | Some(b'\t')) {
            self.advance(1);
        }
        let target = match self.peek(0) {
            None => None,
            Some(c) if is_meta(c) && !((c == b'<' || c == b'>') && self.peek(1) == Some(b'(')) => {
                None
            }
            Some(_) => Some(self.word(false)),
        };
        let mut heredoc = None;
        match op {
            RedirOp::Dup => {
                // `>&word` with a non-numeric word writes to a file (bash: stdout+stderr).
                if let Some(t) = &target {
                    let v = t.text();
                    let is_fd = !v.is_empty()
                        && v.trim_end_matches('-').bytes().all(|c| c.is_ascii_digit());
                    if !is_fd && text == b">&" && fd.is_none() {
                        op = RedirOp::Out;
                    }
                }
            }
            RedirOp::HereDoc => {
                if let Some(t) = &target {
                    let quoted = t.raw().bytes().any(|c| matches!(c, b'\'' | b'"' | b'\\'));
                    heredoc = Some(HereDoc {
                        body: String::new(),
                        quoted,
                        line: self.line,
                    });
                    pending.push(PendingDoc {
                        token: token_index,
                        delim: t.text().as_bytes().to_vec(),
                        strip_tabs,
                    });
                }
            }
            _ => {}
        }
        Redir {
            fd,
            op,
            target,
            heredoc,
        }
    }

    fn read_heredocs(&mut self, pending: &mut Vec<PendingDoc>, tokens: &mut [Token]) {
        for doc in pending.drain(..) {
            let body_line = self.line;
            let mut body: Vec<u8> = Vec::new();
            loop {
                if self.pos >= self.src.len() {
                    break;
                }
                let rest = self.src.get(self.pos..).unwrap_or(b"");
                let len = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
                let mut text = &rest[..len];
                if doc.strip_tabs {
                    while text.first() == Some(&b'\t') {
                        text = &text[1..];
                    }
                }
                let is_end = text == doc.delim.as_slice();
                if !is_end {
                    body.extend_from_slice(text);
                    body.push(b'\n');
                }
                self.advance(len + 1);
                if is_end {
                    break;
                }
            }
            let body = String::from_utf8_lossy(&body).into_owned();
            if let Some(Token {
                kind: TokKind::Redir(r),
                ..
            }) = tokens.get_mut(doc.token)
            {
                if let Some(h) = &mut r.heredoc {
                    h.line = body_line;
                    h.body = body;
                }
            }
        }
    }

    /// Find the `))` closing an arithmetic construct whose body starts at `from` (the two `(`
    /// before `from` must close with adjacent parentheses). O(1) after a one-time O(n) pass.
    pub(crate) fn scan_arith(&mut self, from: usize) -> Option<usize> {
        if self.parens.is_none() {
            let mut m = vec![usize::MAX; self.src.len()];
            let mut stack: Vec<usize> = Vec::new();
            let mut i = 0;
            while let Some(&c) = self.src.get(i) {
                match c {
                    b'\\' => i += 1,
                    b'(' => stack.push(i),
                    b')' => {
                        if let Some(o) = stack.pop() {
                            if let Some(slot) = m.get_mut(o) {
                                *slot = i;
                            }
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            self.parens = Some(m);
        }
        let m = self.parens.as_ref()?;
        let inner = *m.get(from.checked_sub(1)?)?;
        let outer = *m.get(from.checked_sub(2)?)?;
        (inner != usize::MAX && outer == inner.wrapping_add(1)).then_some(inner)
    }

    /// Lex the substitutions inside an arithmetic body ending at `end` (exclusive).
    /// The body `src[start..end]` of a `((…))` command read as dash reads it: a script run
    /// in a subshell (pushed onto `out`).
    fn sh_subshells(&mut self, start: usize, end: usize, line: u32, out: &mut Vec<Script>) {
        let Some(body) = self
            .src
            .get(start..end)
            .and_then(|b| std::str::from_utf8(b).ok())
        else {
            return;
        };
        if self.depth + 1 > self.limits.max_depth {
            let reason = self.limits.too_deep();
            self.issues.push(Issue {
                reason,
                snippet: body.chars().take(60).collect(),
                line,
            });
            return;
        }
        let mut s = parse(body, line, self.depth + 1, &self.limits);
        self.issues.append(&mut s.issues);
        out.push(s);
    }

    pub(crate) fn arith_body(&mut self, end: usize) -> Vec<Script> {
        let mut parts = Vec::new();
        while self.pos < end {
            match self.peek(0) {
                Some(b'$') => {
                    if let Some(p) = self.dollar(true) {
                        parts.push(p);
                    }
                }
                Some(b'`') => parts.push(self.backtick(true)),
                Some(b'\\') => self.advance(2),
                _ => self.advance(1),
            }
        }
        harvest(parts)
    }
}

/// `NAME=`, `NAME+=` or `NAME[…]=` (the start of an assignment word).
pub fn is_assignment_prefix(s: &str) -> bool {
    let b = s.as_bytes();
    if b.is_empty() || !is_name_start(b[0]) {
        return false;
    }
    let mut i = 1;
    while i < b.len() && is_name_char(b[i]) {
        i += 1;
    }
    if i < b.len() && b[i] == b'[' {
        match b[i..].iter().position(|&c| c == b']') {
            Some(p) => i += p + 1,
            None => return false,
        }
    }
    if i < b.len() && b[i] == b'+' {
        i += 1;
    }
    i < b.len() && b[i] == b'=' && i + 1 == b.len()
}

/// Move the scripts out of substitution parts.
pub(crate) fn harvest(parts: Vec<Part>) -> Vec<Script> {
    let mut out = Vec::new();
    for p in parts {
        match p {
            Part::Command { script, .. } | Part::Process { script, .. } => out.push(*script),
            Part::Param { nested, .. } | Part::Arith { nested, .. } => out.extend(nested),
            Part::Lit { .. } => {}
        }
    }
    out
}
