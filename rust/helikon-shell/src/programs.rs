//! Program-specific re-entry: programs whose arguments or input are themselves code.
//!
//! Shells (`-c` strings, here-documents and here-strings fed to them, scripts read from a
//! pipe), `eval`, `source`, `trap`, `alias`, `find -exec/-execdir/-ok/-okdir/-delete`, git's
//! code-valued options, GTFOBins-style options of tar/ssh/rsync/zip and sed's `e` command
//! (interpreters given inline code and awk are in `inline.rs`). Static code is analysed like any other
//! command text; code that cannot be known statically is recorded as unanalysable.

use crate::analyze::{norm_file, Analyzer, Ctx, Stdin};
use crate::escapes;
use crate::inline;
use crate::model::{Redirection, Via};
use crate::packed::NewCommand;
use crate::smuggle::{self, git_code_key};
use std::borrow::Cow;

use crate::word::{Part, Word};

/// Shells whose `-c` string, stdin and here-documents are re-entered.
pub const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "ksh93", "mksh", "pdksh", "oksh", "lksh", "ash", "yash",
    "posh", "rbash", "fish", "tcsh", "csh",
];

fn t(w: &Word) -> &str {
    w.text()
}

fn is_process_subst(w: &Word) -> bool {
    w.parts().iter().any(|p| matches!(p, Part::Process { .. }))
}

/// A program name lowercased (ASCII) without allocating for the usual short names.
struct Lower {
    buf: [u8; 32],
    len: usize,
    long: Option<String>,
}

impl Lower {
    fn new(name: &str) -> Lower {
        let mut l = Lower {
            buf: [0; 32],
            len: 0,
            long: None,
        };
        match l.buf.get_mut(..name.len()) {
            Some(dst) => {
                dst.copy_from_slice(name.as_bytes());
                dst.make_ascii_lowercase();
                l.len = name.len();
            }
            None => l.long = Some(name.to_ascii_lowercase()),
        }
        l
    }

    fn as_str(&self) -> &str {
        match &self.long {
            Some(s) => s,
            // ASCII lowercasing keeps UTF-8 valid; the fallback is never taken.
            None => std::str::from_utf8(self.buf.get(..self.len).unwrap_or(&[])).unwrap_or(""),
        }
    }
}

/// Follow what the command at `idx` runs. `words[0]` is its program word. Returns true when
/// a shell re-entered the command's here-document body.
pub(crate) fn follow(an: &mut Analyzer, idx: usize, words: &[&Word], ctx: &Ctx<'_>) -> bool {
    let Some(program) = an.out.command(idx).map(|c| Lower::new(c.program())) else {
        return false;
    };
    let args = words.get(1..).unwrap_or(&[]);
    let p = program.as_str();
    if SHELLS.contains(&p) {
        return shell(an, p, args, ctx);
    }
    if p == "source" || p == "." {
        // `source -- FILE`: `--` ends the options.
        let args = skip_dashdash(args);
        return match args.first() {
            Some(f) => match fd_path(t(f)) {
                FdPath::Stdin => stdin_script(an, p, ctx),
                FdPath::Other => {
                    an.issue(
                        "reads a script from another file descriptor",
                        t(f),
                        ctx.line,
                    );
                    false
                }
                FdPath::No => {
                    script_file(an, f, ctx);
                    false
                }
            },
            None => false,
        };
    }
    let ran = crate::runners::follow(an, p, args, ctx);
    if escapes::follow(an, p, args, ctx) || ran {
        return false;
    }
    other(an, idx, p, args, ctx);
    false
}

/// The arguments after a leading `--` (end of options), or all of them.
fn skip_dashdash<'a, 'w>(args: &'a [&'w Word]) -> &'a [&'w Word] {
    match args.first() {
        Some(w) if t(w) == "--" && !w.is_dynamic() => args.get(1..).unwrap_or(&[]),
        _ => args,
    }
}

/// What a script path names: standard input, another file descriptor, or a file.
pub(crate) enum FdPath {
    Stdin,
    Other,
    No,
}

pub(crate) fn fd_path(p: &str) -> FdPath {
    if matches!(
        p,
        "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0" | "/proc/thread-self/fd/0"
    ) {
        return FdPath::Stdin;
    }
    if p.starts_with("/dev/fd/") || (p.starts_with("/proc/") && p.contains("/fd/")) {
        return FdPath::Other;
    }
    FdPath::No
}

fn other(an: &mut Analyzer, idx: usize, p: &str, args: &[&Word], ctx: &Ctx<'_>) {
    if inline::follow(an, p, args, ctx) {
        return;
    }
    crate::subscripts::follow(an, p, args, ctx);
    match p {
        "eval" => {
            let args = skip_dashdash(args);
            if args.is_empty() {
                return;
            }
            if args.iter().any(|w| w.is_dynamic()) {
                an.issue("eval of a dynamic string", ctx.text, ctx.line);
                return;
            }
            let s: Vec<&str> = args.iter().map(|w| t(w)).collect();
            an.reenter(&s.join(" "), "eval", ctx);
        }
        "trap" => {
            if let [handler, _, ..] = skip_dashdash(args) {
                let h = t(handler);
                if !h.starts_with('-') {
                    if handler.is_dynamic() {
                        an.issue("trap with a dynamic handler", ctx.text, ctx.line);
                    } else {
                        an.reenter(h, "trap", ctx);
                    }
                }
            }
        }
        "alias" => {
            for w in args {
                if let Some((_, value)) = t(w).split_once('=') {
                    an.reenter_word(value, w.is_dynamic(), "alias", ctx);
                }
            }
        }
        "export" | "declare" | "typeset" | "local" | "readonly" => {
            for w in args {
                let s = t(w);
                if let Some((n, v)) = s.split_once('=') {
                    if !n.starts_with('-') {
                        an.assigned(n.trim_end_matches('+'), v, w.is_dynamic(), ctx);
                        an.out.assignments.push(crate::model::Assignment {
                            name: n.trim_end_matches('+').to_string(),
                            value: v.to_string(),
                            line: ctx.line,
                        });
                    }
                }
            }
        }
        "find" => find(an, idx, args, ctx),
        "git" => git(an, args, ctx),
        "tar" | "bsdtar" | "gtar" => {
            for (v, dynamic) in option_values(
                args,
                &[
                    "--checkpoint-action",
                    "--to-command",
                    "--use-compress-program",
                    "--rsh-command",
                    "--info-script",
                    "--new-volume-script",
                    "-I",
                    "-F",
                ],
            ) {
                let v = v.strip_prefix("exec=").unwrap_or(v);
                an.reenter_word(v, dynamic, "tar option", ctx);
            }
        }
        "ssh" | "scp" | "sftp" => {
            for (v, dynamic) in option_values(args, &["-o"]) {
                let (key, value) = match v.split_once(['=', ' ']) {
                    Some((k, val)) => (k.trim().to_ascii_lowercase(), val.trim().to_string()),
                    None => (v.to_ascii_lowercase(), String::new()),
                };
                if matches!(
                    key.as_str(),
                    "proxycommand" | "localcommand" | "knownhostscommand"
                ) && !value.is_empty()
                    && value != "none"
                {
                    an.reenter_word(&value, dynamic, "ssh option", ctx);
                }
            }
        }
        "rsync" => {
            for (v, dynamic) in option_values(args, &["-e", "--rsh"]) {
                an.reenter_word(v, dynamic, "rsync -e", ctx);
            }
        }
        "zip" => {
            for (v, dynamic) in option_values(args, &["-TT", "--unzip-command"]) {
                an.reenter_word(v, dynamic, "zip -TT", ctx);
            }
        }
        "sed" | "gsed" if sed_scripts(args).iter().any(|s| sed_executes(s)) => {
            an.issue("sed script runs commands (e)", ctx.text, ctx.line);
        }
        _ => {}
    }
}

/// Values of the listed options: `-o V`, `-oV` (short), `--opt=V`, `--opt V`.
pub(crate) fn option_values<'a>(args: &[&'a Word], names: &[&str]) -> Vec<(&'a str, bool)> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let s = t(w);
        if s == "--" {
            break;
        }
        for n in names {
            if s == *n {
                if let Some(v) = args.get(i + 1) {
                    out.push((t(v), v.is_dynamic()));
                    i += 1;
                }
                break;
            }
            if n.starts_with("--") {
                if let Some(v) = s.strip_prefix(n).and_then(|r| r.strip_prefix('=')) {
                    out.push((v, w.is_dynamic()));
                    break;
                }
            } else if let Some(v) = s.strip_prefix(n) {
                if !v.is_empty() {
                    out.push((v, w.is_dynamic()));
                    break;
                }
            }
        }
        i += 1;
    }
    out
}

pub(crate) fn script_file(an: &mut Analyzer, f: &Word, ctx: &Ctx<'_>) {
    if is_process_subst(f) {
        an.issue("runs code from a process substitution", f.raw(), ctx.line);
    } else if an.written.contains(norm_file(t(f))) {
        an.issue(
            "runs a file written earlier in the same command",
            f.raw(),
            ctx.line,
        );
    }
}

fn shell(an: &mut Analyzer, name: &str, args: &[&Word], ctx: &Ctx<'_>) -> bool {
    let mut i = 0;
    let mut c_seen = false;
    let mut stdin_mode = false;
    let mut extra: Option<(&str, bool)> = None;
    while let Some(w) = args.get(i) {
        let s = t(w);
        if s == "--" || s == "-" {
            stdin_mode |= s == "-";
            i += 1;
            break;
        }
        if s.starts_with("--") {
            i += if s == "--rcfile" || s == "--init-file" {
                2
            } else {
                1
            };
            continue;
        }
        if s.len() > 1 && (s.starts_with('-') || s.starts_with('+')) {
            let opts = &s[1..];
            if s.starts_with('-') && opts.contains('c') {
                c_seen = true;
                if let Some(rest) = s.strip_prefix("-c") {
                    let bundle = rest.bytes().all(|b| b.is_ascii_alphabetic());
                    if !rest.is_empty() && (!bundle || args.get(i + 1).is_none()) {
                        extra = Some((rest, w.is_dynamic()));
                    }
                }
            }
            if s.starts_with('-') && opts.contains('s') {
                stdin_mode = true;
            }
            if opts.contains('o') || opts.contains('O') {
                i += 1;
            }
            i += 1;
            continue;
        }
        break;
    }
    let label = || format!("{name} -c");
    if let Some((x, dynamic)) = extra {
        an.reenter_word(x, dynamic, label(), ctx);
    }
    let rest = args.get(i..).unwrap_or(&[]);
    if c_seen {
        if let Some(payload) = rest.first() {
            if payload.is_dynamic() {
                an.issue(
                    "shell command string is not static",
                    payload.raw(),
                    ctx.line,
                );
            } else {
                an.reenter(t(payload), label(), ctx);
            }
        }
        return false;
    }
    if !stdin_mode {
        if let Some(f) = rest.first() {
            match fd_path(t(f)) {
                FdPath::Stdin => {}
                FdPath::Other => {
                    an.issue(
                        "shell reads a script from another file descriptor",
                        t(f),
                        ctx.line,
                    );
                    return false;
                }
                FdPath::No => {
                    script_file(an, f, ctx);
                    return false;
                }
            }
        }
    }
    stdin_script(an, name, ctx)
}

/// A shell (or `source`) reads its script from standard input: analyse a here-document or
/// here-string; a pipe or process substitution fails closed. True when the here-document
/// body was re-entered.
fn stdin_script(an: &mut Analyzer, name: &str, ctx: &Ctx<'_>) -> bool {
    match &ctx.stdin {
        Stdin::HereDoc(body) => {
            an.reenter(body, format!("{name} <<heredoc"), ctx);
            return true;
        }
        Stdin::HereString { text, dynamic } => {
            if *dynamic {
                an.issue("shell reads a dynamic here-string", text, ctx.line);
            } else {
                an.reenter(text, format!("{name} <<<"), ctx);
            }
        }
        Stdin::Pipe => an.issue("shell reads commands from a pipe", ctx.text, ctx.line),
        Stdin::Process => an.issue(
            "shell reads commands from a process substitution",
            ctx.text,
            ctx.line,
        ),
        Stdin::File => an.issue(
            "shell reads its script from a file or descriptor on standard input",
            ctx.text,
            ctx.line,
        ),
        Stdin::Terminal => {}
    }
    false
}

fn find(an: &mut Analyzer, idx: usize, args: &[&Word], ctx: &Ctx<'_>) {
    let paths = || {
        args.iter()
            .map(|w| t(w))
            .take_while(|s| !(s.starts_with('-') || matches!(*s, "(" | "!" | ")" | ",")))
    };
    let mut j = 0;
    // One `rm` stands for every `-delete` of the command.
    let mut deleted = false;
    while let Some(w) = args.get(j) {
        let s = t(w);
        match s {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let start = j + 1;
                let mut k = start;
                while let Some(x) = args.get(k) {
                    let xs = t(x);
                    if xs == ";" || xs == "+" {
                        break;
                    }
                    k += 1;
                }
                let sub = args.get(start..k).unwrap_or(&[]);
                if !sub.is_empty() {
                    let label = match s {
                        "-exec" => "find -exec",
                        "-execdir" => "find -execdir",
                        "-ok" => "find -ok",
                        _ => "find -okdir",
                    };
                    let mut c = ctx.with_via(Via::Nested(Cow::Borrowed(label)));
                    c.depth += 1;
                    c.text = crate::word::span_text(sub).unwrap_or(ctx.text);
                    c.redirections.clear();
                    c.stdin = Stdin::Terminal;
                    c.replace = Some("{}".into());
                    an.resolve(sub, c);
                }
                j = k + 1;
                continue;
            }
            "-delete" if !deleted => {
                deleted = true;
                let mut argv = vec!["rm", "-r", "-f"];
                argv.extend(paths());
                if argv.len() == 3 {
                    argv.push(".");
                }
                let mut via = ctx.via.clone();
                via.push(Via::Nested(Cow::Borrowed("find -delete")));
                an.out.push_command(NewCommand {
                    program: "rm",
                    argv: argv.into_iter(),
                    text: ctx.text,
                    redirections: Vec::new(),
                    line: ctx.line,
                    via,
                    env: ctx.env.clone(),
                    cwd: an.cwd.label(),
                });
            }
            "-fprint" | "-fprint0" | "-fls" | "-fprintf" => {
                if let (Some(target), Some(cmd)) = (args.get(j + 1), an.out.command_mut(idx)) {
                    cmd.redirections.push(Redirection {
                        op: "out",
                        target: t(target).to_string(),
                        fd: None,
                    });
                }
            }
            _ => {}
        }
        j += 1;
    }
}

fn git(an: &mut Analyzer, args: &[&Word], ctx: &Ctx<'_>) {
    let mut i = 0;
    let config = |an: &mut Analyzer, kv: &str, dynamic: bool| {
        if let Some((k, v)) = kv.split_once('=') {
            let key = k.to_ascii_lowercase();
            if key == "include.path" || (key.starts_with("includeif.") && key.ends_with(".path")) {
                an.issue(
                    "git includes a config file, which may set keys that run code",
                    kv,
                    ctx.line,
                );
            } else if git_code_key(&key) && !is_bool_word(v) {
                let code = v.strip_prefix('!').unwrap_or(v);
                an.reenter_word(code, dynamic, format!("git {key}"), ctx);
            }
        }
    };
    // Global options up to the subcommand.
    while let Some(w) = args.get(i) {
        let s = t(w);
        if s == "-c" {
            if let Some(kv) = args.get(i + 1) {
                config(an, t(kv), kv.is_dynamic());
            }
            i += 2;
            continue;
        }
        // `-ckey=value`: the value attached.
        if let Some(kv) = s.strip_prefix("-c").filter(|r| !r.is_empty()) {
            config(an, kv, w.is_dynamic());
            i += 1;
            continue;
        }
        if let Some(kv) = s.strip_prefix("--config-env=") {
            if kv
                .split_once('=')
                .is_some_and(|(k, _)| git_code_key(&k.to_ascii_lowercase()))
            {
                an.issue(
                    "git --config-env takes code from the environment",
                    s,
                    ctx.line,
                );
            }
            i += 1;
            continue;
        }
        if matches!(
            s,
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--exec-path" | "--super-prefix"
        ) {
            i += 2;
            continue;
        }
        if s.starts_with('-') {
            i += 1;
            continue;
        }
        break;
    }
    let Some(sub) = args.get(i).map(|w| t(w)) else {
        return;
    };
    let rest = args.get(i + 1..).unwrap_or(&[]);
    let texts: Vec<&str> = rest.iter().map(|w| t(w)).collect();
    // Options that name the remote helper command, per subcommand (`git push -u` is
    // `--set-upstream` and takes no value; only clone and ls-remote read `-u` as a command).
    for (v, dynamic) in option_values(rest, smuggle::git_transport_options(sub)) {
        an.reenter_word(v, dynamic, "git transport command", ctx);
    }
    for s in &texts {
        if let Some(cmd) = s.strip_prefix("ext::") {
            an.reenter_word(&cmd.replace("% ", " "), s.contains('$'), "git ext::", ctx);
        }
    }
    match sub {
        "clone" => {
            for (v, dynamic) in option_values(rest, &["-c", "--config"]) {
                config(an, v, dynamic);
            }
        }
        "config" => {
            let ops: Vec<&str> = texts
                .iter()
                .copied()
                .filter(|s| !s.starts_with('-'))
                .collect();
            if let Some((k, v)) = smuggle::git_config_operands(&ops) {
                let dynamic = rest.iter().any(|w| w.is_dynamic());
                config(an, &format!("{k}={v}"), dynamic);
            }
        }
        "grep" => {
            for (v, dynamic) in option_values(rest, &["-O", "--open-files-in-pager"]) {
                an.reenter_word(v, dynamic, "git grep -O", ctx);
            }
        }
        "rebase" => {
            for (v, dynamic) in option_values(rest, &["--exec", "-x"]) {
                an.reenter_word(v, dynamic, "git rebase --exec", ctx);
            }
        }
        "difftool" | "mergetool" => {
            for (v, dynamic) in option_values(rest, &["-x", "--extcmd"]) {
                an.reenter_word(v, dynamic, "git difftool -x", ctx);
            }
        }
        "filter-branch" => {
            for (v, dynamic) in option_values(
                rest,
                &[
                    "--env-filter",
                    "--tree-filter",
                    "--index-filter",
                    "--parent-filter",
                    "--msg-filter",
                    "--commit-filter",
                    "--tag-name-filter",
                ],
            ) {
                an.reenter_word(v, dynamic, "git filter-branch", ctx);
            }
        }
        "submodule" => {
            if let Some(pos) = texts.iter().position(|s| *s == "foreach") {
                let cmd: Vec<&str> = texts
                    .get(pos + 1..)
                    .unwrap_or(&[])
                    .iter()
                    .copied()
                    .skip_while(|s| s.starts_with('-'))
                    .collect();
                if !cmd.is_empty() {
                    let dynamic = rest.iter().any(|w| w.is_dynamic());
                    an.reenter_word(&cmd.join(" "), dynamic, "git submodule foreach", ctx);
                }
            }
        }
        "bisect" if texts.first().is_some_and(|s| *s == "run") => {
            let mut c = ctx.with_via(Via::Nested(Cow::Borrowed("git bisect run")));
            c.depth += 1;
            let sub = rest.get(1..).unwrap_or(&[]);
            c.text = crate::word::span_text(sub).unwrap_or(ctx.text);
            an.resolve(rest.get(1..).unwrap_or(&[]), c);
        }
        _ => {}
    }
}

fn is_bool_word(v: &str) -> bool {
    matches!(
        v.to_ascii_lowercase().as_str(),
        "" | "true" | "false" | "yes" | "no" | "on" | "off" | "0" | "1"
    )
}

fn sed_scripts<'a>(args: &[&'a Word]) -> Vec<&'a str> {
    let mut scripts: Vec<&str> = option_values(args, &["-e", "--expression"])
        .into_iter()
        .map(|(v, _)| v)
        .collect();
    let has_file = args.iter().any(|w| {
        let s = t(w);
        s == "-f" || s.starts_with("--file")
    });
    if scripts.is_empty() && !has_file {
        if let Some(first) = args.iter().map(|w| t(w)).find(|s| !s.starts_with('-')) {
            scripts.push(first);
        }
    }
    scripts
}

/// Does a sed script use the `e` command or the `e` flag of `s`?
pub(crate) fn sed_executes(script: &str) -> bool {
    for cmd in script.split(['\n', ';']) {
        let c = cmd.trim_start_matches(|ch: char| {
            ch.is_ascii_digit() || matches!(ch, ' ' | '\t' | '$' | ',' | '!' | '{' | '}')
        });
        let c = if let Some(rest) = c.strip_prefix('/') {
            match rest.find('/') {
                Some(p) => rest[p + 1..].trim_start_matches([' ', '!']),
                None => rest,
            }
        } else {
            c
        };
        if c == "e" || c.starts_with("e ") {
            return true;
        }
        if let Some(rest) = c.strip_prefix('s') {
            if let Some(d) = rest.chars().next() {
                let parts: Vec<&str> = rest[d.len_utf8()..].split(d).collect();
                if parts.len() >= 3 && parts[2].contains('e') {
                    return true;
                }
            }
        }
    }
    false
}
