//! Interpreters given code inline (`python -c`, `perl -e`, `node -e`, `awk '…'`, …).
//!
//! The analyser does not parse Python, Perl, JavaScript and the rest, so inline code is
//! unanalysable unless it is shown to be inert: every identifier in it (outside plain string
//! literals) belongs to a small vocabulary of printing, arithmetic and formatting names
//! ([`INERT`]), and it has no backquote. `python -c 'print(1+2)'` and
//! `node -e 'console.log(JSON.stringify({a: 1}))'` pass; `python -c 'import os;
//! os.remove("x")'`, `perl -e 'unlink "x"'` and anything that names a module, a file or a
//! process API do not. The same holds for code fed on standard input (here-document,
//! here-string); code read from a pipe is always unanalysable. An awk program is code too: it
//! is unanalysable when it can run commands (`system()`, pipes) or write files
//! (`print > "f"`).

use crate::analyze::{Analyzer, Ctx, Stdin};
use crate::programs::script_file;
use crate::word::Word;

/// Interpreters and the options that take inline code (lowercase names; `python*` and
/// `pypy*` take `-c`).
const INTERPRETERS: &[(&str, &[&str])] = &[
    ("perl", &["-e", "-E"]),
    ("ruby", &["-e"]),
    ("node", &["-e", "--eval", "-p", "--print"]),
    ("nodejs", &["-e", "--eval", "-p", "--print"]),
    ("bun", &["-e", "--eval", "-p", "--print"]),
    ("php", &["-r", "-B", "-R", "-E"]),
    ("lua", &["-e"]),
    ("luajit", &["-e"]),
    ("rscript", &["-e"]),
    ("r", &["-e"]),
    ("osascript", &["-e"]),
    ("julia", &["-e", "--eval", "-E", "--print"]),
    ("racket", &["-e", "--eval"]),
    ("guile", &["-c"]),
    ("expect", &["-c"]),
    ("elixir", &["-e", "--eval"]),
    ("erl", &["-eval"]),
    ("sbcl", &["--eval"]),
    ("clojure", &["-e"]),
    ("groovy", &["-e"]),
    ("scala", &["-e"]),
    ("tclsh", &[]),
    ("wish", &[]),
    ("pwsh", &["-c", "-command", "-encodedcommand", "-e", "-ec"]),
    (
        "powershell",
        &["-c", "-command", "-encodedcommand", "-e", "-ec"],
    ),
];

/// Identifiers that print, compute or format and reach nothing outside the process.
const INERT: &[&str] = &[
    "print",
    "println",
    "printf",
    "puts",
    "say",
    "echo",
    "p",
    "pp",
    "console",
    "log",
    "info",
    "len",
    "length",
    "size",
    "str",
    "int",
    "float",
    "bool",
    "sum",
    "min",
    "max",
    "range",
    "abs",
    "round",
    "sorted",
    "reversed",
    "list",
    "dict",
    "tuple",
    "set",
    "True",
    "False",
    "None",
    "true",
    "false",
    "nil",
    "null",
    "undefined",
    "NaN",
    "Infinity",
    "import",
    "sys",
    "version",
    "version_info",
    "json",
    "dumps",
    "loads",
    "math",
    "Math",
    "sqrt",
    "pow",
    "pi",
    "floor",
    "ceil",
    "hex",
    "oct",
    "bin",
    "chr",
    "ord",
    "repr",
    "format",
    "join",
    "split",
    "upper",
    "lower",
    "strip",
    "replace",
    "startswith",
    "endswith",
    "for",
    "in",
    "if",
    "else",
    "elif",
    "not",
    "and",
    "or",
    "is",
    "return",
    "x",
    "y",
    "z",
    "i",
    "j",
    "k",
    "n",
    "s",
    "a",
    "b",
    "c",
    "v",
    "Number",
    "String",
    "parseInt",
    "parseFloat",
    "JSON",
    "stringify",
    "parse",
    "let",
    "const",
    "var",
    "map",
    "filter",
    "each",
    "times",
    "do",
    "end",
    "then",
    "local",
    "to_s",
    "to_i",
    "uc",
    "lc",
    "my",
];

fn t(w: &Word) -> &str {
    w.text()
}

/// Options of an interpreter that take their value as the next word (so that word is not
/// the script): `python -W error -c …`, `perl -I lib -e …`, `node -r ./x -e …`.
fn takes_value(name: &str, opt: &str) -> bool {
    let family = if is_python(name) {
        "python"
    } else if name.starts_with("lua") {
        "lua"
    } else {
        name
    };
    let opts: &[&str] = match family {
        "python" => &["-W", "-X", "-Q", "--check-hash-based-pycs"],
        // `-x` takes its directory attached (`-xdir`), never the next word.
        "perl" => &["-I", "-M", "-m"],
        "ruby" => &["-I", "-r", "-C", "-E", "--encoding", "-K"],
        "node" | "nodejs" => &[
            "-r",
            "--require",
            "--import",
            "--loader",
            "--experimental-loader",
            "-C",
            "--conditions",
            "--input-type",
            "--title",
            "--env-file",
            "--inspect-port",
            "--stack-size",
        ],
        "bun" => &[
            "-r",
            "--preload",
            "--cwd",
            "--config",
            "--env-file",
            "--tsconfig-override",
        ],
        "php" => &["-d", "-c", "-z", "-t"],
        "lua" => &["-l"],
        "julia" => &[
            "-L",
            "--load",
            "-J",
            "--sysimage",
            "-t",
            "--threads",
            "-p",
            "--procs",
        ],
        _ => &[],
    };
    opts.contains(&opt)
}

/// Is `opt` an option of interpreter `name` that takes no separate value? Python's
/// single-letter flags (clusters such as `-bb`, `-OO`, `-uE` included); for the other
/// interpreters every single-dash option (Perl, Ruby, PHP and Lua attach their values) and
/// `--long=value`. An unknown long option may take the next word as its value.
fn known_flag(name: &str, opt: &str) -> bool {
    if let Some(long) = opt.strip_prefix("--") {
        return long.contains('=')
            || matches!(
                long,
                "version" | "help" | "verbose" | "debug" | "warnings" | "quiet" | "no-warnings"
            );
    }
    if is_python(name) {
        let flags = opt.get(1..).unwrap_or("");
        return !flags.is_empty() && flags.bytes().all(|b| b"bBdEhiIOPqsSuvVxR?".contains(&b));
    }
    true
}

/// The code of the first code option in `args` (`-c CODE`, `-cCODE`, a cluster ending in
/// the option), if any.
fn code_after<'a>(code_opts: &[&str], args: &[&'a Word]) -> Option<(&'a str, bool)> {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let s = t(w);
        if s == "--" {
            return None;
        }
        let lower = s.to_ascii_lowercase();
        for o in code_opts {
            let short = o.len() == 2 && lower.starts_with('-') && !lower.starts_with("--");
            if lower == *o || (short && lower.len() > 2 && lower.ends_with(&o[1..])) {
                return Some(
                    args.get(i + 1)
                        .map_or(("", false), |v| (t(v), v.is_dynamic())),
                );
            }
            if short && s.starts_with(*o) && s.len() > 2 {
                return Some((s.get(2..).unwrap_or(""), w.is_dynamic()));
            }
        }
        i += 1;
    }
    None
}

/// `python3`, `python3.12`, `pypy3`, `ipython`, `ipython3`.
fn is_python(p: &str) -> bool {
    p.starts_with("python") || p.starts_with("pypy") || p.starts_with("ipython")
}

/// Handle `p` if it is an interpreter or awk; true when it was.
pub(crate) fn follow(an: &mut Analyzer, p: &str, args: &[&Word], ctx: &Ctx<'_>) -> bool {
    if is_python(p) {
        interpreter(an, p, &["-c"], args, ctx);
        return true;
    }
    // Versioned names (`lua5.4`, `luajit`, `lua54`) are `lua`.
    if p.starts_with("lua") && p != "luarocks" {
        interpreter(an, p, &["-e"], args, ctx);
        return true;
    }
    if p == "deno" && args.first().is_some_and(|w| t(w) == "eval") {
        let code = args.get(1).map(|w| (t(w), w.is_dynamic()));
        inline_code(an, p, code, ctx);
        return true;
    }
    if let Some((_, opts)) = INTERPRETERS.iter().find(|(n, _)| *n == p) {
        interpreter(an, p, opts, args, ctx);
        return true;
    }
    if matches!(p, "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk") {
        let mut progs: Vec<(&str, bool)> = awk_sources(an, args, ctx);
        if progs.is_empty() {
            if let Some(w) = awk_program(args) {
                progs.push((t(w), w.is_dynamic()));
            }
        }
        for (prog, dynamic) in progs {
            if dynamic && (prog.contains('$') || prog.contains('`')) {
                an.issue("awk program is dynamic", ctx.text, ctx.line);
            } else if awk_executes(prog) {
                an.issue("awk program runs commands", ctx.text, ctx.line);
            } else if awk_writes(prog) {
                an.issue("awk program writes files", ctx.text, ctx.line);
            }
        }
        return true;
    }
    false
}

/// Program texts given to awk by option: gawk's `-e`/`--source` (`--source=…`), and `-f`
/// naming standard input (the here-document or here-string is the program). `-f` naming a
/// pipe or another descriptor is recorded as unanalysable.
fn awk_sources<'a>(an: &mut Analyzer, args: &[&'a Word], ctx: &'a Ctx<'a>) -> Vec<(&'a str, bool)> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let s = t(w);
        if s == "--" {
            break;
        }
        let value = |k: usize| args.get(k).map(|v| (t(v), v.is_dynamic()));
        let (code, file) = if s == "-e" || s == "--source" {
            i += 1;
            (value(i), None)
        } else if let Some(v) = s.strip_prefix("--source=") {
            (Some((v, w.is_dynamic())), None)
        } else if s == "-f" || s == "--file" {
            i += 1;
            (None, value(i).map(|(v, _)| v))
        } else if let Some(v) = s.strip_prefix("--file=") {
            (None, Some(v))
        } else {
            (None, None)
        };
        if let Some(c) = code {
            out.push(c);
        }
        if let Some(f) = file {
            match crate::programs::fd_path(f) {
                crate::programs::FdPath::Stdin => match &ctx.stdin {
                    Stdin::HereDoc(body) => out.push((body, false)),
                    Stdin::HereString { text, dynamic } => out.push((text, *dynamic)),
                    Stdin::Pipe | Stdin::Process => {
                        an.issue("awk reads its program from a pipe", ctx.text, ctx.line)
                    }
                    _ => {}
                },
                crate::programs::FdPath::Other => an.issue(
                    "awk reads its program from another file descriptor",
                    f,
                    ctx.line,
                ),
                crate::programs::FdPath::No => {}
            }
        }
        i += 1;
    }
    out
}

fn inline_code(an: &mut Analyzer, name: &str, code: Option<(&str, bool)>, ctx: &Ctx<'_>) {
    if let Some((c, dynamic)) = code {
        if dynamic || !is_inert(c) {
            an.issue(
                &format!(
                    "inline {name} code is not analysed (it may run programs or change files)"
                ),
                c,
                ctx.line,
            );
        }
    }
}

fn interpreter(an: &mut Analyzer, name: &str, code_opts: &[&str], args: &[&Word], ctx: &Ctx<'_>) {
    let mut i = 0;
    let mut code: Option<(&str, bool)> = None;
    let mut script = false;
    let mut unknown = false;
    while let Some(w) = args.get(i) {
        let s = t(w);
        let lower = s.to_ascii_lowercase();
        if s == "--" || s == "-" {
            break;
        }
        let matched = code_opts.iter().find(|o| {
            lower == **o
                || (o.len() == 2
                    && !lower.starts_with("--")
                    && lower.starts_with('-')
                    && lower.ends_with(&o[1..]))
        });
        if let Some(o) = matched {
            if o.contains("encoded") || *o == "-ec" {
                an.issue("encoded interpreter command", ctx.text, ctx.line);
                return;
            }
            code = Some(
                args.get(i + 1)
                    .map_or(("", false), |v| (t(v), v.is_dynamic())),
            );
            break;
        }
        if let Some(o) = code_opts
            .iter()
            .find(|o| o.len() == 2 && s.starts_with(**o) && s.len() > 2)
        {
            code = Some((s.get(o.len()..).unwrap_or(""), w.is_dynamic()));
            break;
        }
        if is_python(name) && (s == "-m" || s.starts_with("-m")) {
            script = true;
            break;
        }
        if !s.starts_with('-') {
            // After an option this grammar does not know (`python3 -Z foo -c …`,
            // `node --max-old-space-size 10 -e …`) the word taken for the script may be that
            // option's value: a code option later on is then the inline code (attack M3).
            if unknown {
                code = code_after(code_opts, args.get(i + 1..).unwrap_or(&[]));
            }
            script = code.is_none();
            break;
        }
        let valued = takes_value(name, s);
        unknown |= !valued && !known_flag(name, s);
        i += if valued { 2 } else { 1 };
    }
    if code.is_some() {
        inline_code(an, name, code, ctx);
        return;
    }
    if script {
        if let Some(f) = args.get(i) {
            // The script is standard input by a path (`python3 /dev/stdin <<< …`): the
            // here-document or here-string is the code. Another descriptor is unknown.
            match crate::programs::fd_path(t(f)) {
                crate::programs::FdPath::Stdin => {}
                crate::programs::FdPath::Other => {
                    an.issue(
                        &format!("{name} reads code from another file descriptor"),
                        t(f),
                        ctx.line,
                    );
                    return;
                }
                crate::programs::FdPath::No => {
                    script_file(an, f, ctx);
                    return;
                }
            }
        } else {
            return;
        }
    }
    match &ctx.stdin {
        Stdin::Pipe | Stdin::Process => an.issue(
            &format!("{name} reads code from a pipe"),
            ctx.text,
            ctx.line,
        ),
        Stdin::File => an.issue(
            &format!("{name} reads code from a file or descriptor on standard input"),
            ctx.text,
            ctx.line,
        ),
        Stdin::HereDoc(body) if !is_inert(body) => an.issue(
            &format!("{name} here-document code is not analysed (it may run programs)"),
            body,
            ctx.line,
        ),
        Stdin::HereString { text, dynamic } if *dynamic || !is_inert(text) => an.issue(
            &format!("{name} here-string code is not analysed (it may run programs)"),
            text,
            ctx.line,
        ),
        _ => {}
    }
}

/// Is this inline code inert (see the module docs)?
pub(crate) fn is_inert(code: &str) -> bool {
    let b = code.as_bytes();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if c == b'`' {
            return false;
        }
        if c == b'\'' || c == b'"' {
            let close = string_end(b, i);
            let body = code
                .get(i + 1..close.saturating_sub(1).max(i + 1))
                .unwrap_or("");
            // A prefix such as Python's `f"…"` makes the string code.
            let formatted = i > 0 && matches!(b.get(i - 1), Some(b'f' | b'F'));
            let interpolates =
                c == b'"' && (body.contains('$') || body.contains('@') || body.contains('{'));
            if (formatted || interpolates) && !is_inert(body) {
                return false;
            }
            i = close;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let len = b[i..]
                .iter()
                .take_while(|x| x.is_ascii_alphanumeric() || **x == b'_')
                .count();
            let ident = code.get(i..i + len).unwrap_or("");
            let prefix = matches!(b.get(i + len), Some(b'\'' | b'"'))
                && matches!(
                    ident,
                    "f" | "F" | "r" | "b" | "u" | "rb" | "br" | "fr" | "rf"
                );
            if !prefix && !INERT.contains(&ident) {
                return false;
            }
            i += len;
            continue;
        }
        if c.is_ascii_digit() {
            i += b[i..]
                .iter()
                .take_while(|x| x.is_ascii_alphanumeric())
                .count();
            continue;
        }
        i += 1;
    }
    true
}

/// The index just past the string literal opened at `start` (backslash escapes honoured).
fn string_end(b: &[u8], start: usize) -> usize {
    let q = b[start];
    let mut i = start + 1;
    while let Some(&c) = b.get(i) {
        if c == b'\\' {
            i += 2;
            continue;
        }
        i += 1;
        if c == q {
            return i;
        }
    }
    b.len()
}

fn awk_program<'a>(args: &[&'a Word]) -> Option<&'a Word> {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let s = t(w);
        if s == "-f" || s.starts_with("--file") {
            return None;
        }
        if s == "-v" || s == "-F" || s == "--assign" || s == "--field-separator" {
            i += 2;
            continue;
        }
        if s == "--" {
            return args.get(i + 1).copied();
        }
        if s.starts_with('-') && s.len() > 1 {
            i += 1;
            continue;
        }
        return Some(w);
    }
    None
}

fn awk_executes(prog: &str) -> bool {
    let p = prog.replace(' ', "");
    p.contains("system(")
        || p.contains("|getline")
        || p.contains("|&")
        || (p.contains('|') && p.contains("print"))
}

/// A `print`/`printf` statement redirected with `>` or `>>` (a comparison in a pattern is not).
fn awk_writes(prog: &str) -> bool {
    prog.split([';', '{', '}', '\n'])
        .any(|stmt| stmt.contains("print") && stmt.contains('>'))
}

#[cfg(test)]
mod tests {
    use super::is_inert;

    #[test]
    fn inert_code() {
        for code in [
            "print(1+2)",
            "print('hello world; rm -rf /')",
            "import sys; print(sys.version)",
            "console.log(JSON.stringify({a: 1}))",
            "print \"hi\\n\"",
            "puts 'x'",
            "print(len([1, 2, 3]))",
        ] {
            assert!(is_inert(code), "{code}");
        }
        for code in [
            "import os; os.remove('x')",
            "__import__('os').system('rm x')",
            "print(f'{__import__(\"os\").getcwd()}')",
            "unlink 'x'",
            "print \"@{[ system 'rm x' ]}\"",
            "puts `rm x`",
            "require('child_process').execSync('rm x')",
            "print(open('x').read())",
            "exec('rm')",
            "system 'rm -rf x'",
            "File.delete('x')",
        ] {
            assert!(!is_inert(code), "{code}");
        }
    }
}
