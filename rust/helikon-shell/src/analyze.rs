//! The analysis driver: scripts to resolved commands.
//!
//! For every simple command the driver strips assignments and wrappers, normalises the
//! program word, emits a [`Command`], then follows everything that runs more code: nested
//! substitutions in any word, here-document bodies, and program-specific re-entry
//! (`bash -c`, `eval`, `find -exec`, …, see `programs.rs`). Re-entered strings are parsed with
//! the same lexer one level deeper; past [`Limits::max_depth`] the analysis records "nesting
//! too deep" instead of recursing. Every limit of [`Limits`] is enforced here or in the lexer
//! and walk; once one is hit the analysis stops adding to its result (the hit is recorded as
//! unanalysable, so rules apply their worst case).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use crate::cwd::Cwd;

use crate::lexer::{self, RedirOp};
use crate::limits::Limits;
use crate::model::{Analysis, Assignment, BareRedirection, Redirection, Unanalysable, Via};
use crate::packed::{NewCommand, PackedAnalysis};
use crate::programs;
use crate::script::{is_assignment, Script, SimpleCmd};
use crate::word::{Part, Word, WordValue};
use crate::wrappers::{self, Strip};

/// Analyse a command string (with the default [`Limits`]).
pub fn analyze(src: &str) -> Analysis {
    analyze_packed(src).into_analysis()
}

/// Analyse a command string under the given limits.
pub fn analyze_with(src: &str, limits: &Limits) -> Analysis {
    analyze_packed_with(src, limits).into_analysis()
}

/// Analyse a command string into the packed form (see [`PackedAnalysis`]).
pub fn analyze_packed(src: &str) -> PackedAnalysis {
    analyze_packed_with(src, &Limits::default())
}

/// Analyse a command string into the packed form under the given limits. A command longer
/// than `limits.max_bytes` is not lexed: its analysis is one unanalysable entry naming the
/// limit.
pub fn analyze_packed_with(src: &str, limits: &Limits) -> PackedAnalysis {
    let limits = &limits.clamped();
    if src.len() > limits.max_bytes {
        let mut out = PackedAnalysis::default();
        out.unanalysable.push(Unanalysable {
            reason: limits.too_long(src.len()),
            snippet: src.chars().take(80).collect(),
            line: 1,
        });
        return out;
    }
    let mut out = Analyzer::new(src, limits).run(src, &[]);
    // `/bin/sh` may be dash, which reads `$'…'`, `[[`, `function`, `select` and `coproc`
    // differently (see `dash.rs`): analyse its reading too and keep the union.
    if let Some(alt) = crate::dash::reading(src) {
        let via = [Via::Nested(Cow::Borrowed("/bin/sh (dash) reading"))];
        let other = Analyzer::new(&alt, limits).run(&alt, &via);
        merge_dash_reading(&mut out, &other);
    }
    out
}

impl Analyzer {
    fn new(src: &str, limits: &Limits) -> Analyzer {
        Analyzer {
            out: PackedAnalysis::for_source(src),
            written: HashSet::new(),
            budget: limits.work_budget(src.len()),
            limits: *limits,
            words: 0,
            stopped: false,
            cwd: Cwd::Start,
            path_changed: false,
            cdpath: false,
            aliases: HashMap::new(),
            exec_stdin: None,
        }
    }

    fn run(mut self, src: &str, via: &[Via]) -> PackedAnalysis {
        self.source(src, 1, 0, via);
        self.out
    }
}

/// Add to `out` what the dash reading `other` found and the bash reading did not: commands
/// beyond the bash reading's count of each program name (bash keywords, which dash cannot
/// find, excepted), and unanalysable parts other than an unterminated quote (a syntax error
/// to dash, which then runs nothing).
fn merge_dash_reading(out: &mut PackedAnalysis, other: &PackedAnalysis) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for c in out.commands() {
        *seen.entry(c.program().to_string()).or_default() += 1;
    }
    for c in other.commands() {
        let program = c.program();
        if crate::dash::is_bash_keyword(program) {
            continue;
        }
        match seen.get_mut(program) {
            Some(n) if *n > 0 => *n -= 1,
            _ => {
                out.push_command(NewCommand {
                    program,
                    argv: c.argv(),
                    text: c.text(),
                    redirections: c.redirections().to_vec(),
                    line: c.line(),
                    via: c.via().to_vec(),
                    env: c.env().to_vec(),
                    cwd: c.cwd().map(String::from),
                });
            }
        }
    }
    for u in &other.unanalysable {
        let known = out
            .unanalysable
            .iter()
            .any(|x| x.reason == u.reason && x.snippet == u.snippet);
        if !known && !u.reason.starts_with("unterminated") {
            out.unanalysable.push(u.clone());
        }
    }
}

/// Where a command's standard input comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stdin<'a> {
    Terminal,
    Pipe,
    File,
    Process,
    HereDoc(&'a str),
    HereString { text: &'a str, dynamic: bool },
}

/// Per-command context threaded through wrapper stripping and re-entry; it borrows from
/// the script the command was lexed from.
#[derive(Debug, Clone)]
pub(crate) struct Ctx<'a> {
    pub line: u32,
    pub text: &'a str,
    pub via: Vec<Via>,
    pub depth: usize,
    pub env: Vec<(String, String)>,
    pub redirections: Vec<Redirection>,
    pub stdin: Stdin<'a>,
    /// `xargs -I` / `find -exec` replacement string: words containing it are dynamic.
    pub replace: Option<String>,
    /// The command is a pipeline element (so it runs in a subshell of its own).
    pub piped: bool,
}

impl<'a> Ctx<'a> {
    pub fn with_via(&self, via: Via) -> Ctx<'a> {
        let mut c = self.clone();
        c.via.push(via);
        c
    }
}

#[derive(Debug, Default)]
pub(crate) struct Analyzer {
    pub out: PackedAnalysis,
    /// Files written by redirections or `tee` so far (normalised), for "written then run".
    pub written: HashSet<String>,
    /// Bytes of source text the analysis may still lex or copy into the result (re-entered
    /// strings and command texts count again), so total work stays linear in the input.
    pub budget: usize,
    pub limits: Limits,
    /// Words in the result so far (arguments, environment, wrappers, redirections).
    pub words: usize,
    /// A limit was hit: nothing more is added.
    pub stopped: bool,
    /// The directory commands act in (see `cwd.rs`).
    pub cwd: Cwd,
    /// `PATH` was changed to more than system directories earlier in the command.
    pub path_changed: bool,
    /// `CDPATH` was set earlier in the command: a relative `cd` may go anywhere.
    pub cdpath: bool,
    /// Files made copies or links of a program earlier in the command (normalised path ->
    /// the program's name, empty when not known statically).
    pub aliases: HashMap<String, String>,
    /// Standard input of the shell itself, redirected by an `exec` with no command
    /// (`exec <<E … E`, `exec < file`): later commands that read standard input read it.
    pub exec_stdin: Option<ExecStdin>,
}

/// What an `exec` with no command left on the shell's standard input.
#[derive(Debug, Clone)]
pub(crate) enum ExecStdin {
    /// A static here-document or here-string.
    Text(std::rc::Rc<str>),
    /// A file, a descriptor, a process substitution or a dynamic here-string.
    Unknown,
}

fn push_via(via: &[Via], v: Via) -> Vec<Via> {
    let mut out = via.to_vec();
    out.push(v);
    out
}

/// `./x` and `x` name the same file for "written then run".
pub(crate) fn norm_file(p: &str) -> &str {
    let mut s = p;
    while let Some(r) = s.strip_prefix("./") {
        s = r;
    }
    s
}

impl Analyzer {
    pub fn issue(&mut self, reason: &str, snippet: &str, line: u32) {
        let snippet: String = snippet.chars().take(80).collect();
        self.out.unanalysable.push(Unanalysable {
            reason: reason.to_string(),
            snippet,
            line,
        });
    }

    /// Record a limit hit and stop adding to the result.
    pub fn stop(&mut self, reason: &str, snippet: &str, line: u32) {
        if !self.stopped {
            self.stopped = true;
            self.issue(reason, snippet, line);
        }
    }

    /// Charge `n` bytes of work; false (and the analysis stops) when the budget is spent.
    pub fn charge(&mut self, n: usize, snippet: &str, line: u32) -> bool {
        if self.stopped {
            return false;
        }
        if n > self.budget {
            let reason = self.limits.out_of_work();
            self.stop(&reason, snippet, line);
            return false;
        }
        self.budget -= n;
        true
    }

    /// Record nesting past `max_depth` (true) or nothing (false).
    pub fn too_deep(&mut self, depth: usize, snippet: &str, line: u32) -> bool {
        if depth > self.limits.max_depth {
            let reason = self.limits.too_deep();
            self.issue(&reason, snippet, line);
            return true;
        }
        false
    }

    /// Analyse shell source text (top level or a re-entered string).
    pub fn source(&mut self, src: &str, line: u32, depth: usize, via: &[Via]) {
        if self.stopped || self.too_deep(depth, src, line) || !self.charge(src.len(), src, line) {
            return;
        }
        let script = lexer::parse(src, line, depth, &self.limits);
        self.script(&script, depth, via);
    }

    /// Re-enter a shell string run by a command (`bash -c`, `eval`, `watch`, …).
    pub fn reenter(&mut self, src: &str, label: impl Into<Cow<'static, str>>, ctx: &Ctx<'_>) {
        let label = label.into();
        let via = if label.is_empty() {
            ctx.via.clone()
        } else {
            push_via(&ctx.via, Via::Nested(label))
        };
        if let Some(r) = &ctx.replace {
            if src.contains(r.as_str()) {
                self.issue(
                    "command text is filled in from input at run time",
                    src,
                    ctx.line,
                );
                return;
            }
        }
        self.source(src, ctx.line, ctx.depth + 1, &via);
    }

    /// Re-enter a command string taken from one word: a word with expansions is dynamic.
    pub fn reenter_word(
        &mut self,
        text: &str,
        dynamic: bool,
        label: impl Into<Cow<'static, str>>,
        ctx: &Ctx<'_>,
    ) {
        if dynamic {
            self.issue("command string is not static", text, ctx.line);
        } else {
            self.reenter(text, label, ctx);
        }
    }

    fn script(&mut self, script: &Script, depth: usize, via: &[Via]) {
        if self.stopped {
            return;
        }
        for i in &script.issues {
            self.out.unanalysable.push(Unanalysable {
                reason: i.reason.clone(),
                snippet: i.snippet.clone(),
                line: i.line,
            });
        }
        let limits = self.limits;
        let walk = script.walk(&limits);
        for (reason, line) in &walk.limit_hits {
            self.issue(reason, &script.src, *line);
        }
        for w in &walk.loose {
            self.word_nested(w, depth, via);
        }
        for s in &walk.arith {
            let v = push_via(via, Via::Nested(Cow::Borrowed("$((...))")));
            self.script(s, depth + 1, &v);
        }
        for (r, line) in &walk.bare_redirs {
            if let Some(red) = redirection(r) {
                if red.is_write() {
                    self.written.insert(norm_file(&red.target).to_string());
                }
                self.out.redirections.push(BareRedirection {
                    op: red.op,
                    target: red.target,
                    line: *line,
                });
            }
            self.redir_nested(r, depth, via);
        }
        for cmd in &walk.cmds {
            self.simple(cmd, walk.assigns_of(cmd), walk.words_of(cmd), depth, via);
        }
    }

    fn word_nested(&mut self, w: &Word, depth: usize, via: &[Via]) {
        if !w.has_nested() {
            return;
        }
        for (label, s) in w.nested() {
            let v = push_via(via, Via::Nested(Cow::Borrowed(label)));
            self.script(s, depth + 1, &v);
        }
    }

    fn redir_nested(&mut self, r: &lexer::Redir, depth: usize, via: &[Via]) {
        if let Some(t) = &r.target {
            self.word_nested(t, depth, via);
        }
        if let Some(h) = r.heredoc.as_ref().filter(|h| !h.quoted) {
            if !self.charge(h.body.len(), &h.body, h.line) {
                return;
            }
            let (scripts, issues) =
                lexer::heredoc_scripts(&h.body, h.line, depth + 1, &self.limits);
            for i in issues {
                self.issue(&i.reason, &i.snippet, i.line);
            }
            let v = push_via(via, Via::Nested(Cow::Borrowed("heredoc")));
            for s in &scripts {
                self.script(s, depth + 1, &v);
            }
        }
    }

    fn simple(
        &mut self,
        cmd: &SimpleCmd<'_>,
        assigns: &[&Word],
        words: &[&Word],
        depth: usize,
        via: &[Via],
    ) {
        let mut via = via.to_vec();
        via.extend(cmd.labels.iter().map(|l| Via::Nested(l.clone())));
        let redirections: Vec<Redirection> =
            cmd.redirs.iter().filter_map(|r| redirection(r)).collect();
        let env: Vec<(String, String)> = assigns.iter().map(|w| split_assignment(w)).collect();
        let own_stdin = stdin_of(cmd);
        let exec_only = matches!(words, [w] if w.text() == "exec" && !w.is_dynamic());
        if exec_only {
            self.exec_stdin = match &own_stdin {
                Stdin::HereDoc(b) => Some(ExecStdin::Text(std::rc::Rc::from(*b))),
                Stdin::HereString {
                    text,
                    dynamic: false,
                } => Some(ExecStdin::Text(std::rc::Rc::from(*text))),
                Stdin::HereString { dynamic: true, .. } | Stdin::File | Stdin::Process => {
                    Some(ExecStdin::Unknown)
                }
                Stdin::Terminal | Stdin::Pipe => self.exec_stdin.take(),
            };
        }
        // A command with no standard input of its own reads what `exec` left there.
        let held = match own_stdin {
            Stdin::Terminal if !exec_only => self.exec_stdin.clone(),
            _ => None,
        };
        let stdin = match &held {
            Some(ExecStdin::Text(t)) => Stdin::HereDoc(t),
            Some(ExecStdin::Unknown) => Stdin::File,
            None => own_stdin,
        };
        let ctx = Ctx {
            line: cmd.line,
            text: cmd.text,
            via: via.clone(),
            depth,
            env,
            redirections,
            stdin,
            replace: None,
            piped: cmd.piped_in || cmd.piped_out,
        };
        for w in assigns {
            let (n, v) = split_assignment(w);
            self.assigned(&n, &v, w.is_dynamic(), &ctx);
        }
        // True when a shell re-entered its here-document body: the body's substitutions are
        // then analysed by the re-entry, not a second time as here-document expansions.
        let mut skip_heredoc = false;
        if words.is_empty() {
            for (name, value) in &ctx.env {
                self.out.assignments.push(Assignment {
                    name: name.clone(),
                    value: value.clone(),
                    line: cmd.line,
                });
            }
            self.bare(&ctx);
        } else {
            skip_heredoc = self.resolve(words, ctx);
        }
        for w in assigns.iter().chain(words.iter()) {
            self.word_nested(w, depth, &via);
        }
        for r in &cmd.redirs {
            if skip_heredoc && r.op == RedirOp::HereDoc {
                if let Some(t) = &r.target {
                    self.word_nested(t, depth, &via);
                }
                continue;
            }
            self.redir_nested(r, depth, &via);
        }
        for r in cmd
            .redirs
            .iter()
            .filter(|r| matches!(r.op, RedirOp::Out | RedirOp::Append))
        {
            if let Some(t) = &r.target {
                self.written.insert(norm_file(t.text()).to_string());
            }
        }
    }

    fn bare(&mut self, ctx: &Ctx<'_>) {
        for r in &ctx.redirections {
            if r.is_write() {
                self.written.insert(norm_file(&r.target).to_string());
            }
            self.out.redirections.push(BareRedirection {
                op: r.op,
                target: r.target.clone(),
                line: ctx.line,
            });
        }
    }

    /// Resolve a word list to its program (stripping assignments and wrappers), emit the
    /// command and follow what it runs. Returns true when a shell consumed (re-entered) the
    /// command's here-document.
    pub fn resolve<'a>(&mut self, words: &[&'a Word], mut ctx: Ctx<'a>) -> bool {
        if self.stopped || self.too_deep(ctx.depth, ctx.text, ctx.line) {
            return false;
        }
        let mut i = 0;
        let mut wrapped = 0usize;
        // The last wrapper stripped: its word index and the `via` length before it.
        let mut last_wrapper: Option<(usize, usize)> = None;
        loop {
            let Some(w) = words.get(i) else {
                if let Some((at, via_len)) = last_wrapper {
                    // A wrapper with no command runs its default: name it.
                    ctx.via.truncate(via_len);
                    self.wrapper_default(words, at, &ctx);
                    return false;
                }
                self.bare(&ctx);
                return false;
            };
            if is_assignment(w) {
                let (n, val) = split_assignment(w);
                self.assigned(&n, &val, w.is_dynamic(), &ctx);
                ctx.env.push((n, val));
                i += 1;
                continue;
            }
            let v = w.value();
            let name = match program_name(&v, ctx.replace.as_deref()) {
                Ok(n) => n,
                Err(reason) => {
                    self.issue(reason, v.text, ctx.line);
                    return false;
                }
            };
            let aliased = self.aliases.get(norm_file(v.text)).cloned();
            let name: &str = match &aliased {
                Some(a) if !a.is_empty() => a.as_str(),
                Some(_) => {
                    self.issue(
                        "runs a copy of a program that is not known statically",
                        v.text,
                        ctx.line,
                    );
                    name
                }
                None => {
                    self.check_program_path(v.text, name, &ctx);
                    name
                }
            };
            let rest = words.get(i + 1..).unwrap_or(&[]);
            if let Some(spec) = wrappers::lookup(name) {
                wrapped += 1;
                if self.too_deep(ctx.depth + wrapped, v.text, ctx.line) {
                    return false;
                }
                let label = if name == spec.name {
                    Cow::Borrowed(spec.name)
                } else {
                    Cow::Owned(name.to_string())
                };
                match wrappers::strip(spec, rest) {
                    Strip::Command { at, replace } => {
                        last_wrapper = Some((i, ctx.via.len()));
                        ctx.via.push(Via::Wrapper(label));
                        if replace.is_some() {
                            ctx.replace = replace;
                        }
                        i += 1 + at;
                        continue;
                    }
                    Strip::Program => {}
                    Strip::Shell(strings) => {
                        // A command string with expansions is expanded by this shell first,
                        // so what the wrapper runs is not known statically.
                        if rest.iter().any(|w| w.is_dynamic()) {
                            self.issue("wrapper runs a dynamic command string", ctx.text, ctx.line);
                            return false;
                        }
                        // The wrapper itself is the via entry; no separate nesting label.
                        ctx.via.push(Via::Wrapper(label));
                        for s in strings {
                            self.reenter(&s, "", &ctx);
                        }
                        return false;
                    }
                    Strip::Unanalysable(reason) => {
                        self.issue(&reason, ctx.text, ctx.line);
                        return false;
                    }
                }
            }
            let cost = (words.len() - i) + ctx.env.len() + ctx.via.len() + ctx.redirections.len();
            self.words = self.words.saturating_add(cost);
            if self.words > self.limits.max_words {
                let reason = self.limits.too_many_words();
                self.stop(&reason, ctx.text, ctx.line);
                return false;
            }
            let args = words.get(i + 1..).unwrap_or(&[]);
            let lower = name.to_ascii_lowercase();
            let cwd = match crate::cwd::dash_c_dir(&lower, args) {
                Some(dir) => self.cwd.cd(Some(dir)).label(),
                None => self.cwd.label(),
            };
            let idx = self.out.push_command(NewCommand {
                program: name,
                argv: words[i..].iter().map(|w| w.text()),
                text: ctx.text,
                redirections: ctx.redirections.clone(),
                line: ctx.line,
                via: ctx.via.clone(),
                env: ctx.env.clone(),
                cwd,
            });
            self.after_command(&lower, args, same_shell(&ctx));
            return programs::follow(self, idx, &words[i..], &ctx);
        }
    }
}

impl Analyzer {
    /// Emit a wrapper given no command (`env`, `nice -n 5`, `ls | xargs`) as the program it
    /// is; `xargs` then runs its default command, `echo`.
    fn wrapper_default(&mut self, words: &[&Word], at: usize, ctx: &Ctx<'_>) {
        let Some(v) = words.get(at).map(|w| w.value()) else {
            return;
        };
        let name = basename(v.text);
        self.out.push_command(NewCommand {
            program: name,
            argv: words[at..].iter().map(|w| w.text()),
            text: ctx.text,
            redirections: ctx.redirections.clone(),
            line: ctx.line,
            via: ctx.via.clone(),
            env: ctx.env.clone(),
            cwd: self.cwd.label(),
        });
        if name.eq_ignore_ascii_case("xargs") {
            let mut via = ctx.via.clone();
            via.push(Via::Wrapper(Cow::Borrowed("xargs")));
            self.out.push_command(NewCommand {
                program: "echo",
                argv: std::iter::once("echo"),
                text: ctx.text,
                redirections: ctx.redirections.clone(),
                line: ctx.line,
                via,
                env: ctx.env.clone(),
                cwd: self.cwd.label(),
            });
        }
    }
}

/// The program name of a command word, or why it cannot be known statically.
fn program_name<'a>(v: &WordValue<'a>, replace: Option<&str>) -> Result<&'a str, &'static str> {
    if let Some(r) = replace {
        if !r.is_empty() && v.text.contains(r) {
            return Err("program is filled in from input at run time");
        }
    }
    if !v.dynamic && !v.pattern {
        return Ok(basename(v.text));
    }
    if v.pattern && !v.dynamic {
        return Err("program word is a glob or brace pattern");
    }
    if !v.unquoted_dynamic && !v.pattern {
        if let Some(tail) = v.text.get(v.dynamic_end..) {
            if let Some(p) = tail.rfind('/') {
                let b = &tail[p + 1..];
                if !b.is_empty() {
                    return Ok(b);
                }
            }
        }
    }
    Err("program given by an expansion")
}

/// `/bin/rm` -> `rm`; a path ending in `/` is kept whole.
pub(crate) fn basename(s: &str) -> &str {
    match s.rsplit_once('/') {
        Some((_, b)) if !b.is_empty() => b,
        _ => s,
    }
}

/// `NAME=value` -> (NAME, value) with the value rendered.
pub(crate) fn split_assignment(w: &Word) -> (String, String) {
    let text = w.text();
    match text.split_once('=') {
        Some((n, v)) => (n.trim_end_matches('+').to_string(), v.to_string()),
        None => (text.to_string(), String::new()),
    }
}

fn redirection(r: &lexer::Redir) -> Option<Redirection> {
    let op = Redirection::op_name(r.op);
    let target = r
        .target
        .as_ref()
        .map(|t| t.text().to_string())
        .unwrap_or_default();
    if matches!(r.op, RedirOp::Out | RedirOp::Append | RedirOp::ReadWrite) && target.is_empty() {
        return None;
    }
    Some(Redirection {
        op,
        target,
        fd: r.fd.clone(),
    })
}

/// Does the command run in the shell that runs the commands after it (so a `cd` there moves
/// them)? Not in a pipeline element, a subshell, a substitution, a function body (run
/// later, if at all) or a program started by another; `{ …; }`, `eval`, `command` and
/// `builtin` keep the shell.
fn same_shell(ctx: &Ctx<'_>) -> crate::track::Scope {
    use crate::track::Scope;
    let keeps = |groups: bool| {
        ctx.via.iter().all(|v| match v {
            Via::Nested(l) => l == "eval" || (groups && l == "{...}"),
            Via::Wrapper(w) => matches!(w.as_ref(), "command" | "builtin"),
        })
    };
    match (ctx.piped, keeps(true)) {
        (false, true) => Scope::Same,
        // A simple command alone in a pipeline element (`cd /tmp | cat`): its subshell ends
        // with it, so its `cd` moves nothing.
        (true, _) if keeps(false) => Scope::Alone,
        _ => Scope::Sub,
    }
}

fn stdin_of<'s>(cmd: &SimpleCmd<'s>) -> Stdin<'s> {
    let mut stdin = if cmd.piped_in {
        Stdin::Pipe
    } else {
        Stdin::Terminal
    };
    for r in &cmd.redirs {
        if r.fd.as_deref().is_some_and(|f| f != "0") {
            continue;
        }
        match r.op {
            RedirOp::In | RedirOp::ReadWrite
                if r.target.as_ref().is_some_and(|t| t.text() == "/dev/null") =>
            {
                stdin = Stdin::Terminal;
            }
            RedirOp::In | RedirOp::ReadWrite => {
                let is_proc = r
                    .target
                    .as_ref()
                    .is_some_and(|t| t.parts().iter().any(|p| matches!(p, Part::Process { .. })));
                stdin = if is_proc { Stdin::Process } else { Stdin::File };
            }
            RedirOp::HereDoc => {
                if let Some(h) = &r.heredoc {
                    stdin = Stdin::HereDoc(&h.body);
                }
            }
            RedirOp::DupIn => {
                // `<&0` keeps standard input; `<&-` closes it; `<&N` reads another
                // descriptor, whose content is not known.
                let v = r.target.as_ref().map_or("", |t| t.text());
                if v != "0" && v != "-" {
                    stdin = Stdin::File;
                }
            }
            RedirOp::HereString => {
                if let Some(t) = &r.target {
                    stdin = Stdin::HereString {
                        text: t.text(),
                        dynamic: t.is_dynamic(),
                    };
                }
            }
            _ => {}
        }
    }
    stdin
}
