//! A lexed script and the walk that turns its tokens into simple commands.
//!
//! The walk understands bash's compound syntax well enough to find every simple command:
//! reserved words (`if … fi`, loops, `case … esac`, `{ …; }`, `[[ … ]]`), subshells, function
//! definitions, and redirections applied to a whole compound (`{ a; b; } > f` gives both
//! commands that redirection). It is tolerant: malformed input still yields the commands it
//! contains. Words outside command position (loop lists, case subjects and patterns, `[[ ]]`
//! operands) are reported as `loose` so their substitutions are still analysed.

use std::borrow::Cow;
use std::cell::Cell;
use std::ops::Range;
use std::rc::Rc;

use crate::lexer::{Issue, Op, Redir, TokKind, Token};
use crate::limits::Limits;
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

impl Drop for Script {
    fn drop(&mut self) {
        recycle_tokens(std::mem::take(&mut self.tokens));
    }
}

// Token vectors are large (a token is a few hundred bytes) and the allocator serves large
// blocks slowly, so the vectors of dropped scripts are kept per thread for the next lexing
// (at most `SPARE_COUNT` vectors of at most `SPARE_TOKENS` tokens each).
thread_local! {
    static SPARE: Cell<Vec<Vec<Token>>> = const { Cell::new(Vec::new()) };
}
const SPARE_COUNT: usize = 8;
const SPARE_TOKENS: usize = 256;

/// An empty token vector with room for about `guess` tokens (a recycled one if available).
pub(crate) fn token_vec(guess: usize) -> Vec<Token> {
    let spare = SPARE
        .try_with(|s| {
            let mut pool = s.take();
            let v = pool.pop();
            s.set(pool);
            v
        })
        .ok()
        .flatten();
    match spare {
        Some(mut v) => {
            v.reserve(guess);
            v
        }
        None => Vec::with_capacity(guess),
    }
}

fn recycle_tokens(mut tokens: Vec<Token>) {
    // Dropping the tokens may recycle nested scripts' vectors first; the pool is not held
    // while that happens.
    tokens.clear();
    if tokens.capacity() == 0 || tokens.capacity() > SPARE_TOKENS {
        return;
    }
    let _ = SPARE.try_with(|s| {
        let mut pool = s.take();
        if pool.len() < SPARE_COUNT {
            pool.push(tokens);
        }
        s.set(pool);
    });
}

/// One simple command as written (before wrapper stripping). Its assignment and command
/// words are runs of [`Walk::words`] (see [`Walk::assigns_of`], [`Walk::words_of`]).
#[derive(Debug, Clone)]
pub struct SimpleCmd<'s> {
    assigns: Range<usize>,
    words: Range<usize>,
    pub redirs: Vec<&'s Redir>,
    pub line: u32,
    pub text: &'s str,
    /// Its standard input is a pipe from the previous command.
    pub piped_in: bool,
    /// Its standard output is piped to the next command (it, or the compound holding it,
    /// is a pipeline element before a `|`): like `piped_in`, it runs in a subshell.
    pub piped_out: bool,
    /// Enclosing constructs, outermost first (`(...)`, `{...}`, `function f`).
    pub labels: Vec<Cow<'static, str>>,
}

/// The result of walking a script.
#[derive(Debug, Default)]
pub struct Walk<'s> {
    pub cmds: Vec<SimpleCmd<'s>>,
    /// The assignment and command words of every command (one allocation for all).
    pub words: Vec<&'s Word>,
    /// Words not in command position whose substitutions still run.
    pub loose: Vec<&'s Word>,
    /// Arithmetic commands' nested scripts.
    pub arith: Vec<&'s Script>,
    /// Redirections with no command (`> f` alone, or on a compound with no commands).
    pub bare_redirs: Vec<(&'s Redir, u32)>,
    /// Limits the walk ran into (compound nesting past `max_depth`, redirections of compound
    /// commands past `max_words`), with the line where it happened.
    pub limit_hits: Vec<(String, u32)>,
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
    label: Option<Cow<'static, str>>,
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

/// The command being built; its words are the last `assigns + words` entries of
/// [`Walk::words`], starting at `base`.
#[derive(Default)]
struct Builder<'s> {
    base: usize,
    assigns: usize,
    words: usize,
    redirs: Vec<&'s Redir>,
    first: Option<(usize, u32)>,
    last: usize,
}

impl<'s> Builder<'s> {
    fn is_empty(&self) -> bool {
        self.assigns == 0 && self.words == 0 && self.redirs.is_empty()
    }

    fn push_word(&mut self, arena: &mut Vec<&'s Word>, w: &'s Word, assign: bool) {
        if self.assigns == 0 && self.words == 0 {
            self.base = arena.len();
        }
        arena.push(w);
        if assign {
            self.assigns += 1;
        } else {
            self.words += 1;
        }
    }
    fn touch(&mut self, tok: &Token) {
        if self.first.is_none() {
            self.first = Some((tok.start, tok.line));
        }
        self.last = tok.end;
    }
}

impl<'s> Walk<'s> {
    /// The assignment words before a command's program.
    pub fn assigns_of(&self, c: &SimpleCmd<'s>) -> &[&'s Word] {
        self.words.get(c.assigns.clone()).unwrap_or(&[])
    }

    /// A command's words (program and arguments).
    pub fn words_of(&self, c: &SimpleCmd<'s>) -> &[&'s Word] {
        self.words.get(c.words.clone()).unwrap_or(&[])
    }
}

/// Is the word an assignment (`NAME=…`, `NAME+=…`, `NAME[…]=…`)?
pub fn is_assignment(w: &Word) -> bool {
    use crate::word::Part;
    let Some(Part::Lit {
        text,
        quoted: false,
    }) = w.parts().first()
    else {
        return false;
    };
    let b = w.lit(text).as_bytes();
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
            let v = w.text();
            v.contains("]=") || v.contains("]+=")
        }
        _ => false,
    }
}

const OPENERS: [&str; 5] = ["if", "while", "until", "for", "select"];

impl Script {
    /// Walk the tokens into simple commands (see the module docs).
    ///
    /// Work is linear in the tokens: compound commands nest at most `limits.max_depth`
    /// frames deep (deeper openings are not tracked and recorded in [`Walk::limit_hits`]),
    /// so every label list and frame search is bounded; redirections copied onto the commands
    /// of a compound count against `limits.max_words`.
    pub fn walk(&self, limits: &Limits) -> Walk<'_> {
        let mut out = Walk {
            words: Vec::with_capacity(self.tokens.len()),
            ..Walk::default()
        };
        let mut stack = Stack {
            frames: Vec::new(),
            labels: Vec::new(),
            max: limits.max_depth,
            overflowed: None,
        };
        let mut copied = 0usize;
        let mut mode = Mode::Cmd;
        let mut cur = Builder::default();
        let mut piped = false;
        let mut closed: Option<usize> = None;
        let mut pending_func: Option<Cow<'static, str>> = None;
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
                                closed = stack.pop(Kind::Case);
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
                            pending_func = Some(format!("function {}", w.text()).into());
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
                        let bare = w.bare();
                        let reserved = |k: &str| bare == Some(k);
                        // `coproc [NAME] compound-command`: the compound runs (asynchronously);
                        // drop `coproc` and its name so the compound is walked as one.
                        if reserved("coproc") {
                            let opens = |t: Option<&Token>| match t.map(|t| &t.kind) {
                                Some(TokKind::Word(x)) => x.bare().is_some_and(|b| {
                                    matches!(b, "{" | "[[" | "case") || OPENERS.contains(&b)
                                }),
                                Some(TokKind::Op(Op::LParen)) | Some(TokKind::Arith(_)) => true,
                                _ => false,
                            };
                            let skip = if opens(toks.get(i)) {
                                Some(0)
                            } else if matches!(toks.get(i).map(|t| &t.kind), Some(TokKind::Word(_)))
                                && opens(toks.get(i + 1))
                            {
                                Some(1)
                            } else {
                                None
                            };
                            if let Some(n) = skip {
                                i += n;
                                continue;
                            }
                        }
                        if reserved("{") {
                            stack.push(
                                tok.line,
                                Frame {
                                    kind: Kind::Group,
                                    start: out.cmds.len(),
                                    label: pending_func.take().or(Some(Cow::Borrowed("{...}"))),
                                },
                            );
                            closed = None;
                            continue;
                        }
                        if reserved("}") {
                            closed = stack.pop(Kind::Group);
                            continue;
                        }
                        if let Some(k) = OPENERS.iter().find(|k| reserved(k)) {
                            let kind = if *k == "if" { Kind::If } else { Kind::Loop };
                            stack.push(
                                tok.line,
                                Frame {
                                    kind,
                                    start: out.cmds.len(),
                                    label: pending_func.take(),
                                },
                            );
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
                            closed = stack.pop(Kind::If);
                            continue;
                        }
                        if reserved("done") {
                            closed = stack.pop(Kind::Loop);
                            continue;
                        }
                        if reserved("esac") {
                            closed = stack.pop(Kind::Case);
                            continue;
                        }
                        if reserved("case") {
                            stack.push(
                                tok.line,
                                Frame {
                                    kind: Kind::Case,
                                    start: out.cmds.len(),
                                    label: pending_func.take(),
                                },
                            );
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
                    let assign = cur.words == 0 && is_assignment(w);
                    cur.push_word(&mut out.words, w, assign);
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
                                copied += out.cmds.len() - start;
                                if copied > limits.max_words {
                                    out.limit_hits.push((limits.too_many_words(), tok.line));
                                    return out;
                                }
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
                        && cur.words == 1
                        && cur.assigns == 0
                        && cur.redirs.is_empty()
                        && matches!(toks.get(i).map(|t| &t.kind), Some(TokKind::Op(Op::RParen)))
                    {
                        let name = out.words.get(cur.base).map_or("", |w| w.text());
                        pending_func = Some(format!("function {name}").into());
                        cur = Builder::default();
                        i += 1;
                        continue;
                    }
                    self.finish(&mut cur, &mut out, &stack.labels, piped);
                    piped = matches!(op, Op::Pipe | Op::PipeAmp);
                    if piped {
                        // The command before `|`, or every command of the compound that
                        // just closed, runs in a subshell.
                        let from = closed.unwrap_or(out.cmds.len().saturating_sub(1));
                        for c in out.cmds.get_mut(from..).into_iter().flatten() {
                            c.piped_out = true;
                        }
                    }
                    match op {
                        Op::LParen => {
                            if mode == Mode::CasePattern {
                                continue;
                            }
                            stack.push(
                                tok.line,
                                Frame {
                                    kind: Kind::Subshell,
                                    start: out.cmds.len(),
                                    label: pending_func.take().or(Some(Cow::Borrowed("(...)"))),
                                },
                            );
                            closed = None;
                        }
                        Op::RParen => {
                            if mode == Mode::CasePattern {
                                mode = Mode::Cmd;
                                continue;
                            }
                            closed = stack.pop(Kind::Subshell);
                        }
                        Op::DSemi | Op::SemiAmp | Op::DSemiAmp => {
                            if stack.frames.iter().any(|f| f.kind == Kind::Case) {
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
        self.finish(&mut cur, &mut out, &stack.labels, piped);
        if let Some(line) = stack.overflowed {
            out.limit_hits.push((limits.too_deep(), line));
        }
        out
    }

    fn finish<'s>(
        &'s self,
        cur: &mut Builder<'s>,
        out: &mut Walk<'s>,
        labels: &[Cow<'static, str>],
        piped: bool,
    ) {
        if cur.is_empty() {
            return;
        }
        let b = std::mem::take(cur);
        let (start, line) = b.first.unwrap_or((0, 1));
        if b.words == 0 && b.assigns == 0 {
            for r in b.redirs {
                out.bare_redirs.push((r, line));
            }
            return;
        }
        let text = self.src.get(start..b.last.max(start)).unwrap_or("").trim();
        out.cmds.push(SimpleCmd {
            assigns: b.base..b.base + b.assigns,
            words: b.base + b.assigns..b.base + b.assigns + b.words,
            redirs: b.redirs,
            line,
            text,
            piped_in: piped,
            piped_out: false,
            labels: labels.to_vec(),
        });
    }

    /// The top-level simple commands' source texts (the reference "segments").
    pub fn segments(&self, limits: &Limits) -> Vec<String> {
        self.walk(limits)
            .cmds
            .into_iter()
            .map(|c| c.text.to_string())
            .collect()
    }
}

/// The open compound commands, at most `max` deep, and the labels of those that have one.
struct Stack {
    frames: Vec<Frame>,
    /// `frames`' labels in order (kept alongside so a command copies them without a search).
    labels: Vec<Cow<'static, str>>,
    max: usize,
    /// The line where nesting first went past `max`.
    overflowed: Option<u32>,
}

impl Stack {
    /// Open a compound command; past `max` open frames it is not tracked (recorded once).
    fn push(&mut self, line: u32, f: Frame) {
        if self.frames.len() >= self.max {
            if self.overflowed.is_none() {
                self.overflowed = Some(line);
            }
            return;
        }
        if let Some(l) = &f.label {
            self.labels.push(l.clone());
        }
        self.frames.push(f);
    }

    /// Pop the innermost frame of `kind` (and anything opened inside it); returns its start.
    fn pop(&mut self, kind: Kind) -> Option<usize> {
        let idx = self.frames.iter().rposition(|f| f.kind == kind)?;
        let start = self.frames[idx].start;
        let keep = self.frames[..idx]
            .iter()
            .filter(|f| f.label.is_some())
            .count();
        self.frames.truncate(idx);
        self.labels.truncate(keep);
        Some(start)
    }
}
