//! Programs with a shell escape: editors, pagers and debuggers told to run a command.
//!
//! * `vim`/`vi`/`nvim`/`ex`/`view`: `-c CMD`, `--cmd CMD`, `+CMD`. `!cmd` is analysed as
//!   shell code; a few inert commands (a line number, a search, `q`, `wq`, `set …`,
//!   `syntax …`) pass; anything else (`call system()`, `py3 …`, `source`, `normal`) fails
//!   closed, as do `-S`/`-u`/`-s` script files and ex mode (`ex`, `-e`, `-es`) reading
//!   commands from a pipe or a here-document.
//! * `less`/`more`: an initial command (`+!cmd`) with `!` is analysed as shell code;
//!   `|` (pipe to a command) fails closed.
//! * `man -P`/`--pager`, `-H`/`--html`: the pager or browser command is analysed.
//! * `gdb -ex`/`--eval-command`/`-iex`: `!cmd` and `shell cmd` are analysed; `python`,
//!   `pipe`, `|` and script files (`-x`) fail closed; `--args PROG …` is the program run.
//! * `ed`: commands read from a here-document or here-string: `!cmd` (also `r !cmd`,
//!   `w !cmd`, `e !cmd`) is analysed; commands from a pipe fail closed.

use std::borrow::Cow;

use crate::analyze::{Analyzer, Ctx, Stdin};
use crate::model::Via;
use crate::programs::option_values;
use crate::word::Word;

fn t(w: &Word) -> &str {
    w.text()
}

/// Handle `p` if it has a shell escape; true when it was handled.
pub(crate) fn follow(an: &mut Analyzer, p: &str, args: &[&Word], ctx: &Ctx<'_>) -> bool {
    match p {
        "vim" | "vi" | "nvim" | "ex" | "view" | "gvim" | "rvim" | "vimdiff" | "nex" | "exim" => {
            vim(an, p, args, ctx)
        }
        "less" | "more" | "most" => pager(an, args, ctx),
        "man" => {
            for (v, dynamic) in option_values(args, &["-P", "--pager", "-H", "--html"]) {
                an.reenter_word(v, dynamic, "man -P", ctx);
            }
        }
        "gdb" => gdb(an, args, ctx),
        "ed" | "red" => ed(an, ctx),
        _ => return command_options(an, p, args, ctx),
    }
    true
}

/// Options and arguments of other programs whose value is a program or shell code (attack
/// M6, M14): the value is analysed as a command, or the command fails closed where it is
/// code of another language. True when `p` is one of these programs.
fn command_options(an: &mut Analyzer, p: &str, args: &[&Word], ctx: &Ctx<'_>) -> bool {
    let label = |l: &'static str| Cow::Borrowed(l);
    match p {
        "sort" => {
            for (v, d) in option_values(args, &["--compress-program"]) {
                an.reenter_word(v, d, label("sort --compress-program"), ctx);
            }
        }
        "rg" | "ripgrep" => {
            for (v, d) in option_values(args, &["--pre"]) {
                an.reenter_word(v, d, label("rg --pre"), ctx);
            }
        }
        "gcc" | "g++" | "cc" | "c++" | "clang" | "clang++" => {
            for (v, d) in option_values(args, &["-wrapper"]) {
                an.reenter_word(&v.replace(',', " "), d, label("gcc -wrapper"), ctx);
            }
        }
        "make" | "gmake" => {
            for w in args {
                if let Some(v) = t(w).strip_prefix("SHELL=") {
                    an.reenter_word(v, w.is_dynamic(), label("make SHELL="), ctx);
                }
            }
        }
        "npx" | "npm" | "pnpm" | "yarn" => {
            for (v, d) in option_values(args, &["-c", "--call"]) {
                an.reenter_word(v, d, label("npm exec -c"), ctx);
            }
            for (v, d) in option_values(args, &["--script-shell"]) {
                an.reenter_word(v, d, label("npm --script-shell"), ctx);
            }
        }
        "socat" => {
            for w in args {
                let s = t(w);
                let upper = s.get(..7).map(str::to_ascii_uppercase).unwrap_or_default();
                let code = if upper.starts_with("EXEC:") {
                    s.get(5..)
                } else if upper == "SYSTEM:" {
                    s.get(7..)
                } else {
                    None
                };
                if let Some(c) = code {
                    let c = c.split(',').next().unwrap_or(c);
                    an.reenter_word(c, w.is_dynamic(), label("socat EXEC:"), ctx);
                }
            }
        }
        "nc" | "ncat" | "netcat" => {
            for (v, d) in option_values(args, &["-e", "--exec", "-c", "--sh-exec"]) {
                an.reenter_word(v, d, label("ncat --sh-exec"), ctx);
            }
            if !option_values(args, &["--lua-exec"]).is_empty() {
                an.issue("ncat --lua-exec runs a Lua script", ctx.text, ctx.line);
            }
        }
        "apt-get" | "apt" => {
            for (v, d) in option_values(args, &["-o", "--option"]) {
                if let Some((k, cmd)) = v.split_once('=') {
                    if k.to_ascii_lowercase().contains("invoke")
                        || k.to_ascii_lowercase().contains("install-pkgs")
                    {
                        an.reenter_word(cmd, d, label("apt-get -o …Invoke"), ctx);
                    }
                }
            }
        }
        "sqlite3" => {
            for w in args {
                let s = t(w).trim_start();
                if let Some(c) = s
                    .strip_prefix(".shell")
                    .or_else(|| s.strip_prefix(".system"))
                {
                    an.reenter_word(c, w.is_dynamic(), label("sqlite3 .shell"), ctx);
                }
            }
        }
        "psql" => {
            for (v, d) in option_values(args, &["-c", "--command"]) {
                if let Some((_, c)) = v.split_once("\\!") {
                    an.reenter_word(c, d, label("psql \\!"), ctx);
                }
            }
        }
        "emacs" | "emacsclient" => {
            if !option_values(args, &["--eval", "-eval"]).is_empty() {
                an.issue("emacs --eval code is not analysed", ctx.text, ctx.line);
            }
        }
        "tmux" => {
            const RUNS: &[&str] = &[
                "new",
                "new-session",
                "new-window",
                "neww",
                "split-window",
                "splitw",
                "respawn-pane",
                "respawn-window",
                "run-shell",
                "run",
                "display-popup",
                "popup",
                "pipe-pane",
            ];
            if args.iter().any(|w| RUNS.contains(&t(w))) {
                an.issue(
                    "tmux runs a shell command given as an argument",
                    ctx.text,
                    ctx.line,
                );
            }
        }
        "screen" => {
            if args.iter().any(|w| t(w) == "-X") {
                an.issue("screen -X sends commands to a session", ctx.text, ctx.line);
            }
        }
        "at" | "batch" => match &ctx.stdin {
            Stdin::HereDoc(body) => an.reenter(body, label("at (later)"), ctx),
            Stdin::HereString { text, dynamic } => {
                an.reenter_word(text, *dynamic, label("at (later)"), ctx)
            }
            Stdin::Pipe | Stdin::Process => an.issue(
                "at reads the commands it runs later from a pipe",
                ctx.text,
                ctx.line,
            ),
            _ => {}
        },
        "m4" => {
            let code = match &ctx.stdin {
                Stdin::HereDoc(b) => Some(*b),
                Stdin::HereString { text, .. } => Some(*text),
                _ => None,
            };
            if code.is_some_and(|c| c.contains("syscmd")) {
                an.issue("m4 syscmd runs a command", ctx.text, ctx.line);
            }
        }
        _ => return false,
    }
    true
}

/// Is a vim command inert (runs nothing)?
fn vim_inert(cmd: &str) -> bool {
    let c = cmd.trim().trim_start_matches(':').trim();
    c.is_empty()
        || c.bytes().all(|b| b.is_ascii_digit())
        || c.starts_with('/')
        || c.starts_with('?')
        || matches!(
            c,
            "q" | "q!" | "qa" | "qa!" | "wq" | "wq!" | "x" | "w" | "wa"
        )
        || ((c.starts_with("set ") || c.starts_with("se ") || c.starts_with("syntax "))
            && !c.contains('|'))
}

fn vim_command(an: &mut Analyzer, cmd: &str, dynamic: bool, ctx: &Ctx<'_>) {
    let c = cmd.trim().trim_start_matches(':').trim();
    if let Some(shell) = c.strip_prefix('!') {
        an.reenter_word(shell, dynamic, "vim !", ctx);
    } else if dynamic || !vim_inert(c) {
        an.issue("vim command may run programs", cmd, ctx.line);
    }
}

fn vim(an: &mut Analyzer, p: &str, args: &[&Word], ctx: &Ctx<'_>) {
    let mut ex_mode = p == "ex" || p == "nex" || p == "exim";
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let s = t(w);
        if s == "--" {
            break;
        }
        match s {
            "-c" | "--cmd" => {
                if let Some(v) = args.get(i + 1) {
                    vim_command(an, t(v), v.is_dynamic(), ctx);
                }
                i += 2;
                continue;
            }
            "-S" | "-u" | "-U" | "-s" | "-W" | "-w" => {
                let file = args.get(i + 1).map_or("", |v| t(v));
                if !matches!(file, "NONE" | "NORC" | "DEFAULTS") || s == "-s" {
                    an.issue("vim reads commands from a file", ctx.text, ctx.line);
                }
                i += 2;
                continue;
            }
            _ => {}
        }
        if let Some(cmd) = s.strip_prefix('+') {
            vim_command(an, cmd, w.is_dynamic(), ctx);
        } else if s.len() > 1 && s.starts_with('-') && !s.starts_with("--") {
            ex_mode |= s.contains('e') || s.contains('E');
            // A cluster ending in an option that takes the next word: `-sc CMD`, `-Nc CMD`,
            // `-eS FILE`.
            match s.chars().last() {
                Some('c') => {
                    if let Some(v) = args.get(i + 1) {
                        vim_command(an, t(v), v.is_dynamic(), ctx);
                    }
                    i += 2;
                    continue;
                }
                Some('S' | 'u' | 'U' | 'W' | 'w') => {
                    an.issue("vim reads commands from a file", ctx.text, ctx.line);
                    i += 2;
                    continue;
                }
                _ => {}
            }
        }
        i += 1;
    }
    if ex_mode && ctx.stdin != Stdin::Terminal {
        an.issue(
            "ex mode reads commands from standard input",
            ctx.text,
            ctx.line,
        );
    }
}

fn pager(an: &mut Analyzer, args: &[&Word], ctx: &Ctx<'_>) {
    for w in args {
        let s = t(w);
        let Some(cmd) = s.strip_prefix('+') else {
            continue;
        };
        let cmd = cmd.trim_start_matches('+');
        if let Some(shell) = cmd.strip_prefix('!') {
            an.reenter_word(shell, w.is_dynamic(), "less !", ctx);
        } else if cmd.contains('!') || cmd.contains('|') {
            an.issue("pager command may run programs", s, ctx.line);
        }
    }
}

fn gdb_command(an: &mut Analyzer, cmd: &str, dynamic: bool, ctx: &Ctx<'_>) {
    let c = cmd.trim();
    let shell = c
        .strip_prefix('!')
        .or_else(|| c.strip_prefix("shell "))
        .or_else(|| c.strip_prefix("she "));
    if let Some(s) = shell {
        an.reenter_word(s, dynamic, "gdb shell", ctx);
        return;
    }
    let word = c.split_whitespace().next().unwrap_or("");
    let risky = dynamic
        || c.contains('|')
        || matches!(
            word,
            "python"
                | "py"
                | "python-interactive"
                | "pi"
                | "pipe"
                | "source"
                | "guile"
                | "gu"
                | "compile"
                | "call"
                | "make"
                | "define"
                | "document"
        );
    if risky {
        an.issue("gdb command may run programs", cmd, ctx.line);
    }
}

fn gdb(an: &mut Analyzer, args: &[&Word], ctx: &Ctx<'_>) {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let s = t(w);
        if s == "--args" {
            let rest = args.get(i + 1..).unwrap_or(&[]);
            if !rest.is_empty() {
                let mut c = ctx.with_via(Via::Nested(Cow::Borrowed("gdb --args")));
                c.depth += 1;
                an.resolve(rest, c);
            }
            return;
        }
        if matches!(
            s,
            "-ex" | "--ex" | "-iex" | "--iex" | "-eval-command" | "--eval-command"
        ) {
            if let Some(v) = args.get(i + 1) {
                gdb_command(an, t(v), v.is_dynamic(), ctx);
            }
            i += 2;
            continue;
        }
        if let Some(v) = s.strip_prefix("--eval-command=") {
            gdb_command(an, v, w.is_dynamic(), ctx);
        } else if matches!(s, "-x" | "--x" | "-ix" | "--ix" | "-command" | "--command")
            || s.starts_with("--command=")
        {
            an.issue("gdb runs a command file", ctx.text, ctx.line);
        }
        i += 1;
    }
}

fn ed(an: &mut Analyzer, ctx: &Ctx<'_>) {
    let (text, dynamic) = match &ctx.stdin {
        Stdin::HereDoc(body) => (*body, false),
        Stdin::HereString { text, dynamic } => (*text, *dynamic),
        Stdin::Pipe | Stdin::Process => {
            an.issue("ed reads commands from a pipe", ctx.text, ctx.line);
            return;
        }
        Stdin::Terminal | Stdin::File => return,
    };
    if dynamic {
        an.issue("ed reads dynamic commands", text, ctx.line);
        return;
    }
    for line in text.lines() {
        if let Some((_, shell)) = line.split_once('!') {
            an.reenter(shell, "ed !", ctx);
        }
    }
}
