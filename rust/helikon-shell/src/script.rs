//! A lexed script and the walk that turns its tokens into simple commands.
//!
//! The walk understands bash's compound syntax well enough to find every simple command:
//! reserved words (`if … fi`, loops, `case … esac`, `{ …; }`, `[[ … ]]`), subshells, function
//! definitions, and redirections applied to a whole compound (`{ a; b; } > f` gives both
//! commands that redirection). It is tolerant: malformed input still yields the commands it
//! contains. Words outside command position (loop lists, case subjects and patterns, `[[ ]]`
//! operands) are reported as `loose` so their substitutions are still analysed.

use std::rc::Rc;

use crate::lexer::{Issue, Op, Redir, TokKind, Token};
use crate::word::Word;

/// A lexed script: source, tokens and the issues found while lexing.
#[derive(Debug, Clone)]
pub struct Script {
    pub src: Rc<str>,
    pub tokens: Vec<Token>,
    pub issues: Vec<Issue>,
}

impl Script {
    pub fn empty(src: Rc<str>) -> Script {
        Script {
            src,
            tokens: Vec::new(),
            issues: Vec::new(),
        }
    }
}

/// One simple command as written (before wrapper stripping).
#[derive(Debug, Clone)]
pub struct SimpleCmd<'s> {
    pub assigns: Vec<&'s Word>,
    pub words: Vec<&'s Word>,
    pub redirs: Vec<&'s Redir>,
    pub line: u32,
    pub text: String,
    /// Its standard input is a pipe from the previous command.
    pub piped_in: bool,
    /// Enclosing constructs, outermost first (`(...)`, `{...}`, `function f`).
    pub labels: Vec<String>,
}

/// The result of walking a script.
#[derive(Debug, Default)]
pub struct Walk<'s> {
    pub cmds: Vec<SimpleCmd<'s>>,
    /// Words not in command position whose substitutions still run.
    pub loose: Vec<&'s Word>,
    /// Arithmetic commands' nested scripts.
    pub arith: Vec<&'s Script>,
    /// Redirections with no command (`> f` alone, or on a compound with no commands).
    pub bare_redirs: Vec<(&'s Redir, u32)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Group,
    Subshell,
    If,
    Loop,
    Case,
}

#[derive(Debug)]
struct Frame {
    kind: Kind,
    start: usize,
    label: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Cmd,
    ForHeader,
    CaseWord,
    CasePattern,
    Cond,
    FuncName,
}

#[derive(Default)]
struct Builder<'s> {
    assigns: Vec<&'s Word>,
    words: Vec<&'s Word>,
    redirs: Vec<&'s Redir>,
    first: Option<(usize, u32)>,
    last: usize,
}

impl<'s> Builder<'s> {
    fn is_empty(&self) -> bool {
        self.assigns.is_empty() && self.words.is_empty() && self.redirs.is_empty()
    }
    fn touch(&mut self, tok: &Token) {
        if self.first.is_none() {
            self.first = Some((tok.start, tok.line));
        }
        self.last = tok.end;
    }
}

/// Is the word an assignment (`NAME=…`, `NAME+=…`, `NAME[…]=…`)?
pub fn is_assignment(w: &Word) -> bool {
    use crate::word::Part;
    let Some(Part::Lit {
        text,
        quoted: false,
    }) = w.parts.first()
    else {
        return false;
    };
    let b = text.as_bytes();
    if b.is_empty() || !(b[0].is_ascii_alphabetic() || b[0] == b'_') {
        return false;
    }
    let name_len = b
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    match b.get(name_len) {
        Some(b'=') => true,
        Some(b'+') => b.get(name_len + 1) == Some(&b'='),
        Some(b'[') => {
            // The subscript may contain substitutions; look at the rendered text.
            let v = w.value().text;
            v.find("]=").is_some() || v.find("]+=").is_some()
        }
        _ => false,
    }
}

const OPENERS: [&str; 5] = ["if", "while", "until", "for", "select"];

impl Script {
    /// Walk the tokens into simple commands (see the module docs).
    pub fn walk(&self) -> Walk<'_> {
        let mut out = Walk::default();
        let mut stack: Vec<Frame> = Vec::new();
        let mut mode = Mode::Cmd;
        let mut cur = Builder::default();
        let mut piped = false;
        let mut closed: Option<usize> = None;
        let mut pending_func: Option<String> = None;
        let toks = &self.tokens;
        let mut i = 0;
        while i < toks.len() {
            let tok = &toks[i];
            i += 1;
            match &tok.kind {
                TokKind::Word(w) => {
                    match mode {
                        Mode::ForHeader => {
                            if w.is_bare("do") {
                                mode = Mode::Cmd;
                            } else {
                                out.loose.push(w);
                            }
                            continue;
                        }
                        Mode::CaseWord => {
                            if w.is_bare("in") {
                                mode = Mode::CasePattern;
                            } else {
                                out.loose.push(w);
                            }
                            continue;
                        }
                        Mode::CasePattern => {
                            if w.is_bare("esac") {
                                closed = pop(&mut stack, Kind::Case);
                                mode = Mode::Cmd;
                            } else {
                                out.loose.push(w);
                            }
                            continue;
                        }
                        Mode::Cond => {
                            if w.is_bare("]]") {
                                mode = Mode::Cmd;
                            } else {
                                out.loose.push(w);
                            }
                            continue;
                        }
                        Mode::FuncName => {
                            pending_func = Some(format!("function {}", w.value().text));
                            mode = Mode::Cmd;
                            // `function f ()`: skip the optional parentheses.
                            if matches!(toks.get(i).map(|t| &t.kind), Some(TokKind::Op(Op::LParen)))
                                && matches!(
                                    toks.get(i + 1).map(|t| &t.kind),
                                    Some(TokKind::Op(Op::RParen))
                                )
                            {
                                i += 2;
                            }
                            continue;
                        }
                        Mode::Cmd => {}
                    }
                    if cur.is_empty() {
                        let reserved = |k: &str| w.is_bare(k);
                        if reserved("{") {
                            stack.push(Frame {
                                kind: Kind::Group,
                                start: out.cmds.len(),
                                label: pending_func.take().or(Some("{...}".into())),
                            });
                            closed = None;
                            continue;
                        }
                        if reserved("}") {
                            closed = pop(&mut stack, Kind::Group);
                            continue;
                        }
                        if let Some(k) = OPENERS.iter().find(|k| reserved(k)) {
                            let kind = if *k == "if" { Kind::If } else { Kind::Loop };
                            stack.push(Frame {
                                kind,
                                start: out.cmds.len(),
                                label: pending_func.take(),
                            });
                            if *k == "for" || *k == "select" {
                                mode = Mode::ForHeader;
                                // `for ((…))` arithmetic header is an Arith token, handled below.
                            }
                            closed = None;
                            continue;
                        }
                        if ["then", "else", "elif", "do", "!", "time"]
                            .iter()
                            .any(|k| reserved(k))
                        {
                            if reserved("time")
                                && matches!(toks.get(i).map(|t| &t.kind), Some(TokKind::Word(n)) if n.is_bare("-p"))
                            {
                                i += 1;
                            }
                            continue;
                        }
                        if reserved("fi") {
                            closed = pop(&mut stack, Kind::If);
                            continue;
                        }
                        if reserved("done") {
                            closed = pop(&mut stack, Kind::Loop);
                            continue;
                        }
                        if reserved("esac") {
                            closed = pop(&mut stack, Kind::Case);
                            continue;
                        }
                        if reserved("case") {
                            stack.push(Frame {
                                kind: Kind::Case,
                                start: out.cmds.len(),
                                label: pending_func.take(),
                            });
                            mode = Mode::CaseWord;
                            continue;
                        }
                        if reserved("function") {
                            mode = Mode::FuncName;
                            continue;
                        }
                        if reserved("[[") {
                            mode = Mode::Cond;
                            continue;
                        }
                        closed = None;
                    }
                    cur.touch(tok);
                    if cur.words.is_empty() && is_assignment(w) {
                        cur.assigns.push(w);
                    } else {
                        cur.words.push(w);
                    }
                }
                TokKind::Redir(r) => {
                    if mode == Mode::Cond {
                        if let Some(t) = &r.target {
                            out.loose.push(t);
                        }
                        continue;
                    }
                    if cur.is_empty() {
                        if let Some(start) = closed {
                            if start < out.cmds.len() {
                                for c in &mut out.cmds[start..] {
                                    c.redirs.push(r);
                                }
                            } else {
                                out.bare_redirs.push((r, tok.line));
                            }
                            continue;
                        }
                    }
                    cur.touch(tok);
                    cur.redirs.push(r);
                }
                TokKind::Arith(scripts) => {
                    out.arith.extend(scripts.iter());
                    if mode == Mode::ForHeader {
                        continue;
                    }
                }
                TokKind::Op(op) => {
                    // `name ()` starts a function definition.
                    if *op == Op::LParen
                        && mode == Mode::Cmd
                        && cur.words.len() == 1
                        && cur.assigns.is_empty()
                        && cur.redirs.is_empty()
                        && matches!(toks.get(i).map(|t| &t.kind), Some(TokKind::Op(Op::RParen)))
                    {
                        pending_func = Some(format!("function {}", cur.words[0].value().text));
                        cur = Builder::default();
                        i += 1;
                        continue;
                    }
                    self.finish(&mut cur, &mut out, &stack, piped);
                    piped = matches!(op, Op::Pipe | Op::PipeAmp);
                    match op {
                        Op::LParen => {
                            if mode == Mode::CasePattern {
                                continue;
                            }
                            stack.push(Frame {
                                kind: Kind::Subshell,
                                start: out.cmds.len(),
                                label: pending_func.take().or(Some("(...)".into())),
                            });
                            closed = None;
                        }
                        Op::RParen => {
                            if mode == Mode::CasePattern {
                                mode = Mode::Cmd;
                                continue;
                            }
                            closed = pop(&mut stack, Kind::Subshell);
                        }
                        Op::DSemi | Op::SemiAmp | Op::DSemiAmp => {
                            if stack.iter().any(|f| f.kind == Kind::Case) {
                                mode = Mode::CasePattern;
                            }
                            closed = None;
                        }
                        Op::Semi | Op::Newline => {
                            if mode == Mode::ForHeader && *op == Op::Semi {
                                mode = Mode::Cmd;
                            } else if mode == Mode::ForHeader {
                                // `for x in a b` newline `do`: the header ends at the newline.
                                mode = Mode::Cmd;
                            }
                            closed = None;
                        }
                        _ => closed = None,
                    }
                }
            }
        }
        self.finish(&mut cur, &mut out, &stack, piped);
        out
    }

    fn finish<'s>(
        &'s self,
        cur: &mut Builder<'s>,
        out: &mut Walk<'s>,
        stack: &[Frame],
        piped: bool,
    ) {
        if cur.is_empty() {
            return;
        }
        let b = std::mem::take(cur);
        let (start, line) = b.first.unwrap_or((0, 1));
        if b.words.is_empty() && b.assigns.is_empty() {
            for r in b.redirs {
                out.bare_redirs.push((r, line));
            }
            return;
        }
        let text = self
            .src
            .get(start..b.last.max(start))
            .unwrap_or("")
            .trim()
            .to_string();
        out.cmds.push(SimpleCmd {
            assigns: b.assigns,
            words: b.words,
            redirs: b.redirs,
            line,
            text,
            piped_in: piped,
            labels: stack.iter().filter_map(|f| f.label.clone()).collect(),
        });
    }

    /// The top-level simple commands' source texts (the reference "segments").
    pub fn segments(&self) -> Vec<String> {
        self.walk().cmds.into_iter().map(|c| c.text).collect()
    }
}

/// Pop the innermost frame of `kind` (and anything opened inside it); returns its start.
fn pop(stack: &mut Vec<Frame>, kind: Kind) -> Option<usize> {
    let idx = stack.iter().rposition(|f| f.kind == kind)?;
    let start = stack[idx].start;
    stack.truncate(idx);
    Some(start)
}
