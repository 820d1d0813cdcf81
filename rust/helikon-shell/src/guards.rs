//! The destructive-command guards and the write-target extraction they share.
//!
//! Four built-in guards, in evaluation order (the fourth, `destructive_command`, is in
//! `destructive.rs`):
//! 1. `rm_recursive_root_or_home`: `rm` with a recursive flag (any spelling: `-r`, `-R`,
//!    bundled, `--recursive` or an unambiguous prefix of it) at `/`, `/*`, `~`, `~/`, `$HOME`,
//!    `${HOME}` (lexically cleaned, so `//` and `/tmp/..` count), or with
//!    `--no-preserve-root`. Unset variables are assumed empty (`"$DIR/"*` is `/*`), except
//!    `${X:?}` forms, which fail instead of expanding. `find … -delete` is treated as a
//!    recursive remove of its start paths.
//! 2. `protected_path_write`: a write to `/`, `/etc`, `/usr`, `/bin`, `/sbin`, `/sys`, `/boot`,
//!    `/dev`, `/proc` or `/lib*` (or below), except the device nodes `/dev/null`, `/dev/zero`,
//!    `/dev/full`, `/dev/stdout`, `/dev/stderr`, `/dev/tty`, `/dev/random`, `/dev/urandom`.
//! 3. `protected_dotpath_write`: a write whose target has a `.git` or `.ssh` component, or
//!    whose final component is `.env` or starts with `.env.` (ASCII case-insensitive).
//!
//! Write targets of a command are its `>`/`>>`/`&>`/`<>` redirections, `tee` files, `dd of=`,
//! the destination of `cp`/`mv`/`install`/`ln`/`rsync`, the operands of file-modifying tools
//! (`rm`, `touch`, `mkdir`, `chmod`, `truncate`, …), `sed -i` files, `sort -o`, `curl -o`,
//! `wget -O/-P`, `tar` extraction directories and archives it creates, `unzip -d`.
//! Relative targets are resolved against the directory an earlier `cd`/`pushd` in the same
//! command moved to (`cd / && rm -rf .`, `cd /etc && echo x > passwd`); when that directory
//! is not known statically, removing everything in it (`rm -rf .`, `rm -rf *`) counts as a
//! remove of `/` or `~`. There is no filesystem access.

use crate::model::Command;
use crate::paths::{clean_absolute, clean_path};

/// Built-in guard names, in evaluation order.
pub const RM_ROOT_OR_HOME: &str = "rm_recursive_root_or_home";
pub const PROTECTED_PATH: &str = "protected_path_write";
pub const PROTECTED_DOTPATH: &str = "protected_dotpath_write";

/// The prompts (reasons) of the built-in guards.
pub fn prompt(rule: &str) -> &'static str {
    match rule {
        RM_ROOT_OR_HOME => "destructive command: recursive force-remove of / or ~",
        PROTECTED_PATH => "write to a protected system path",
        PROTECTED_DOTPATH => "write to a protected VCS/secret path (.git, .ssh, .env)",
        crate::destructive::DESTRUCTIVE => {
            "destructive command: it discards uncommitted work or deletes or overwrites files"
        }
        _ => "guarded command",
    }
}

const EXEMPT: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
    "/dev/random",
    "/dev/urandom",
];

const PROTECTED_PREFIXES: &[&str] = &[
    "/etc", "/usr", "/bin", "/sbin", "/sys", "/boot", "/dev", "/proc", "/lib", "/lib32", "/lib64",
    "/libx32",
];

/// Is `target` a protected system path (guard 2)?
pub fn is_protected_system_path(target: &str) -> bool {
    let t = target.trim();
    if !t.starts_with('/') || EXEMPT.contains(&t) {
        return false;
    }
    let c = clean_absolute(t);
    if EXEMPT.contains(&c.as_str()) {
        return false;
    }
    c == "/"
        || PROTECTED_PREFIXES
            .iter()
            .any(|p| c == *p || c.strip_prefix(p).is_some_and(|r| r.starts_with('/')))
}

/// Is `target` a protected VCS/secret path (guard 3)?
pub fn is_protected_dotpath(target: &str) -> bool {
    let c = clean_path(target).to_ascii_lowercase();
    let comps: Vec<&str> = c.split('/').collect();
    if comps.iter().any(|p| *p == ".git" || *p == ".ssh") {
        return true;
    }
    comps
        .last()
        .is_some_and(|l| *l == ".env" || l.starts_with(".env."))
}

/// The target that makes this command a recursive remove of `/` or home, if any.
/// The guard hit recorded when a command is past an analysis limit.
pub const UNANALYSABLE: &str = "guard_analysis_limit";
/// The guard hit for a command that cannot be fully analysed for another reason (a program
/// or string known only when it runs, code the matcher does not read).
pub const GUARD_UNANALYSABLE: &str = "guard_unanalysable";

/// Is this unanalysable reason a limit of [`crate::Limits`] (as opposed to one construct
/// that could not be resolved)?
pub fn is_limit_hit(reason: &str) -> bool {
    reason.contains("over the analysis limit")
}

pub fn rm_root_or_home(cmd: &Command) -> Option<String> {
    if cmd.program.eq_ignore_ascii_case("rsync") {
        return rsync_delete(cmd);
    }
    if !cmd.program.eq_ignore_ascii_case("rm") {
        return None;
    }
    let mut recursive = false;
    let mut no_preserve = false;
    let mut opts_done = false;
    let mut targets: Vec<&str> = Vec::new();
    for a in cmd.args() {
        if !opts_done && a == "--" {
            opts_done = true;
            continue;
        }
        if !opts_done && a.starts_with("--") {
            let name = a[2..].split('=').next().unwrap_or("");
            if !name.is_empty() && "recursive".starts_with(name) {
                recursive = true;
            }
            if name.len() >= 3 && "no-preserve-root".starts_with(name) {
                no_preserve = true;
            }
            continue;
        }
        if !opts_done && a.len() > 1 && a.starts_with('-') {
            if a.contains('r') || a.contains('R') {
                recursive = true;
            }
            continue;
        }
        targets.push(a);
    }
    // helikon trips on a recursive remove with or without -f: headless, rm does not prompt.
    if !recursive {
        return None;
    }
    // `xargs rm -rf`: the targets come from input not known statically (attack G2).
    if cmd.via.iter().any(|v| v.label().starts_with("xargs")) {
        return Some("xargs input (targets not known statically)".into());
    }
    let expanded: Vec<String> = targets
        .iter()
        .flat_map(|t| crate::braces::expand(t))
        .collect();
    let targets: Vec<&str> = expanded.iter().map(String::as_str).collect();
    if let Some(t) = targets.iter().find(|t| operated_expansion(t)) {
        return Some(format!("{t} (an expansion not known statically)"));
    }
    if let Some(t) = targets.iter().find(|t| is_catastrophic(t)) {
        return Some((*t).to_string());
    }
    // A target that is one expansion (`"$d"`, `$(echo /)`, `` `pwd` ``) may be `/` or `~`.
    if let Some(t) = targets.iter().find(|t| whole_expansion(t)) {
        return Some(format!("{t} (a target not known statically)"));
    }
    // A target climbing (`..`) from a base not known statically (`$(pwd)/../..`,
    // `~user/..`) or above the start directory (`../../..`) may be `/` or `~` (attack G2).
    if let Some(t) = targets.iter().find(|t| climbs_out(t, cmd.cwd.as_deref())) {
        return Some(format!(
            "{t} (climbs above a directory not known statically)"
        ));
    }
    // Relative targets in the directory an earlier `cd` moved to (`cd / && rm -rf .`).
    if let Some(dir) = cmd.cwd.as_deref() {
        for t in &targets {
            if dir == crate::cwd::UNKNOWN && wipes_all(t) {
                return Some(format!("{t} (in a directory not known statically)"));
            }
            if let Some(full) = crate::cwd::resolve(Some(dir), t) {
                if is_catastrophic(&full) {
                    return Some(full);
                }
            }
        }
    }
    if no_preserve {
        return Some(
            targets
                .first()
                .map(|s| (*s).to_string())
                .unwrap_or_else(|| "/".into()),
        );
    }
    None
}

/// The start paths of a `find` command (`.` when it names none).
pub fn find_start_paths(find: &Command) -> Vec<String> {
    let mut out: Vec<String> = find
        .args()
        .iter()
        .take_while(|s| !(s.starts_with('-') || matches!(s.as_str(), "(" | "!" | ")" | ",")))
        .cloned()
        .collect();
    if out.is_empty() {
        out.push(".".into());
    }
    out
}

/// A command run by `find -exec`/`-execdir`/`-ok` with each `{}` replaced by the find's
/// start paths, or `None` when it is not run by find or has no `{}`.
pub fn with_find_paths(cmd: &Command, starts: &[String]) -> Option<Command> {
    let by_find = cmd.via.iter().any(|v| v.label().starts_with("find -"));
    if !by_find || !cmd.args().iter().any(|a| a == "{}") {
        return None;
    }
    let mut c = cmd.clone();
    c.argv = cmd
        .argv
        .iter()
        .enumerate()
        .flat_map(|(k, a)| {
            if k > 0 && a == "{}" {
                starts.to_vec()
            } else {
                vec![a.clone()]
            }
        })
        .collect();
    Some(c)
}

/// Does `t` start with a parameter expansion that has an operator (`${PWD%/*}`,
/// `${HOME/x/}`, `${PWD:0:1}`): its value is not known statically (attack G2).
fn operated_expansion(t: &str) -> bool {
    let t = t.trim_start_matches('"');
    let Some(inner) = t.strip_prefix("${") else {
        return false;
    };
    let name_len = inner
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
        .count();
    inner.get(name_len..).is_some_and(|op| {
        op.starts_with(['%', '#', '/', '^', ',', '@'])
            || op.starts_with(":0")
            || op.starts_with(": ")
    })
}

/// `rsync --delete… SRC… DEST`: a destination that is `/`, home, or climbs out of the start
/// directory is emptied of what SRC lacks (attack G2).
fn rsync_delete(cmd: &Command) -> Option<String> {
    let args = cmd.args();
    if !args.iter().any(|a| a.starts_with("--del")) {
        return None;
    }
    let dest = args.iter().rfind(|a| !a.starts_with('-'))?;
    let bad = crate::braces::expand(dest).iter().any(|d| {
        let d = d.as_str();
        is_catastrophic(d)
            || is_catastrophic(d.trim_end_matches('/'))
            || climbs_out(d, cmd.cwd.as_deref())
            || d.trim_end_matches('/') == ".."
    });
    bad.then(|| dest.clone())
}

/// Does `t` climb with `..` from a base not known statically: an expansion (`$(pwd)/..`,
/// `` `pwd`/.. ``, `"$D/.."`), another user's home (`~user/..`), or, relative, above the
/// start directory (`..`, `../../..`, `a/../..`) when no `cd` moved the command to a known
/// directory?
fn climbs_out(t: &str, cwd: Option<&str>) -> bool {
    let Some(first_up) = t.split('/').position(|c| c == "..") else {
        return false;
    };
    let base: Vec<&str> = t.split('/').take(first_up).collect();
    if base.iter().any(|c| c.contains(['$', '`'])) {
        return true;
    }
    if t.starts_with('~') {
        return true;
    }
    if t.starts_with('/') {
        return false;
    }
    let known_dir = cwd.is_some_and(|d| d != crate::cwd::UNKNOWN);
    !known_dir && clean_path(t).starts_with("..")
}

/// A target that removes everything in the current directory (`.`, `*`, `./*`, `.*`).
fn wipes_all(t: &str) -> bool {
    let c = t.trim().trim_end_matches('/');
    let c = c.strip_prefix("./").unwrap_or(c);
    matches!(c, "" | "." | "*" | ".*" | ".." | "../*") || c.starts_with("..")
}

fn is_catastrophic(target: &str) -> bool {
    let raw = target.trim();
    if root_or_home(raw) {
        return true;
    }
    match worst_case(raw) {
        Some(w) => root_or_home(&w),
        None => false,
    }
}

fn root_or_home(t: &str) -> bool {
    for home in ["~", "$HOME", "${HOME}"] {
        if let Some(rest) = t.strip_prefix(home) {
            if rest.is_empty() || rest.starts_with('/') {
                let c = clean_absolute(&format!("/{rest}"));
                return all_of_root(&c);
            }
        }
    }
    // `~root` (the superuser's home; another user's `~user` is left to the conformance
    // vector, which pins it as not matched) and `~+`/`~-` (the current or previous
    // directory, not known statically) climbing with `..`.
    if let Some(user) = t.strip_prefix('~') {
        let (name, rest) = user.split_once('/').unwrap_or((user, ""));
        match name {
            "root" => return all_of_root(&clean_absolute(&format!("/{rest}"))),
            "+" | "-" => return rest.split('/').any(|p| p == ".."),
            _ => {}
        }
    }
    if t.starts_with('/') {
        let c = clean_absolute(t);
        return all_of_root(&c);
    }
    false
}

/// Is the cleaned absolute path `c` the root, or a glob that matches (nearly) every entry
/// directly under it (`/*`, `/.*`, `/?*`, `/[a-z]*`, `/[!.]*`)?
fn all_of_root(c: &str) -> bool {
    if matches!(c, "/" | "/*" | "/.*") {
        return true;
    }
    c.strip_prefix('/')
        .is_some_and(|first| !first.contains('/') && first.contains(['*', '?', '[']))
}

/// Is the word one expansion whose value is not known statically: `$d`, `${d}`, `"$d"`,
/// `$(…)`, `` `…` ``?
fn whole_expansion(t: &str) -> bool {
    let t = t.trim_matches('"');
    if t == "$HOME" || t == "${HOME}" || t.len() < 2 {
        return false;
    }
    if let Some(name) = t.strip_prefix('$') {
        if name.starts_with('(') {
            return name.ends_with(')');
        }
        if let Some(inner) = name.strip_prefix('{') {
            return inner.ends_with('}') && !inner.contains(['/', '$']);
        }
        return name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    }
    t.starts_with('`') && t.ends_with('`')
}

/// The text with variables expanded for the worst case: `$HOME` as `~`, defaults as their
/// word, anything else empty. `None` when an expansion fails instead (`${X:?}`).
fn worst_case(t: &str) -> Option<String> {
    let b = t.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' && b.get(i + 1) == Some(&b'{') {
            let close = t[i..].find('}').map(|p| p + i)?;
            let inner = &t[i + 2..close];
            let name_len = inner
                .bytes()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
                .count();
            let (name, op) = inner.split_at(name_len);
            if op.starts_with(":?") || op.starts_with('?') {
                return None;
            }
            if name == "HOME" && op.is_empty() {
                out.push('~');
            } else if let Some(d) = op
                .strip_prefix(":-")
                .or_else(|| op.strip_prefix(":="))
                .or_else(|| op.strip_prefix('-'))
                .or_else(|| op.strip_prefix('='))
            {
                out.push_str(d.trim_matches(['"', '\'']));
            }
            i = close + 1;
        } else if b[i] == b'$'
            && b.get(i + 1)
                .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        {
            let len = t[i + 1..]
                .bytes()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
                .count();
            if &t[i + 1..i + 1 + len] == "HOME" {
                out.push('~');
            }
            i += 1 + len;
        } else {
            let ch = t[i..].chars().next()?;
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    Some(out)
}

/// Split arguments into operands and option values, getopt-style.
fn operands<'a>(
    args: &'a [String],
    short_val: &str,
    long_val: &[&str],
) -> (Vec<&'a str>, Vec<(String, &'a str)>) {
    let mut ops = Vec::new();
    let mut opts = Vec::new();
    let mut i = 0;
    let mut done = false;
    while let Some(a) = args.get(i) {
        i += 1;
        if done || a == "-" || !a.starts_with('-') {
            ops.push(a.as_str());
            continue;
        }
        if a == "--" {
            done = true;
            continue;
        }
        if let Some(long) = a.strip_prefix("--") {
            match long.split_once('=') {
                Some((n, v)) => opts.push((format!("--{n}"), v)),
                None if long_val.contains(&a.as_str()) => {
                    opts.push((a.clone(), args.get(i).map(|s| s.as_str()).unwrap_or("")));
                    i += 1;
                }
                None => opts.push((a.clone(), "")),
            }
            continue;
        }
        for (k, c) in a[1..].char_indices() {
            if short_val.contains(c) {
                let rest = &a[1 + k + c.len_utf8()..];
                if rest.is_empty() {
                    opts.push((
                        format!("-{c}"),
                        args.get(i).map(|s| s.as_str()).unwrap_or(""),
                    ));
                    i += 1;
                } else {
                    opts.push((format!("-{c}"), rest));
                }
                break;
            }
            opts.push((format!("-{c}"), ""));
        }
    }
    (ops, opts)
}

fn opt<'a>(opts: &[(String, &'a str)], names: &[&str]) -> Vec<&'a str> {
    opts.iter()
        .filter(|(n, _)| names.contains(&n.as_str()))
        .map(|(_, v)| *v)
        .collect()
}

/// The files a command writes (see the module docs). `removals` includes the operands of
/// `rm`-like tools.
pub fn write_targets(cmd: &Command, removals: bool) -> Vec<String> {
    let mut out: Vec<String> = cmd
        .redirections
        .iter()
        .filter(|r| r.is_write())
        .map(|r| r.target.clone())
        .collect();
    let args = cmd.args();
    let program = cmd.program.to_ascii_lowercase();
    let mut add =
        |v: Vec<&str>| out.extend(v.into_iter().filter(|s| !s.is_empty()).map(String::from));
    match program.as_str() {
        "tee" => add(operands(args, "", &[]).0),
        "dd" => add(args.iter().filter_map(|a| a.strip_prefix("of=")).collect()),
        "cp" | "mv" | "install" | "ln" | "rsync" => {
            let (ops, opts) = operands(
                args,
                "tSmogeB",
                &[
                    "--target-directory",
                    "--suffix",
                    "--mode",
                    "--owner",
                    "--group",
                    "--rsh",
                ],
            );
            let t = opt(&opts, &["-t", "--target-directory"]);
            if !t.is_empty() {
                add(t);
            } else if ops.len() >= 2 || (program == "install" && !ops.is_empty()) {
                add(ops.last().copied().into_iter().collect());
            }
        }
        "rm" | "rmdir" | "unlink" | "shred" if removals => add(operands(args, "n", &[]).0),
        // `-p` of mkdir is a flag (parents), not an option with a value.
        "mkdir" => add(operands(args, "mZ", &["--mode", "--context"]).0),
        "touch" | "mkfifo" | "truncate" | "chattr" | "setfacl" | "mknod" => add(operands(
            args,
            "dtrmsSxXMpZ",
            &["--date", "--reference", "--mode", "--size", "--context"],
        )
        .0),
        "chmod" | "chown" | "chgrp" => {
            let (ops, opts) = operands(args, "", &[]);
            let skip = usize::from(opt(&opts, &["--reference"]).is_empty());
            add(ops.into_iter().skip(skip).collect());
        }
        "sed" | "gsed" => {
            let (ops, opts) = operands(args, "efl", &["--expression", "--file", "--line-length"]);
            let in_place = opts.iter().any(|(n, _)| n == "-i" || n == "--in-place")
                || args
                    .iter()
                    .any(|a| a.starts_with("-i") || a.starts_with("--in-place"));
            if in_place {
                let skip =
                    usize::from(opt(&opts, &["-e", "--expression", "-f", "--file"]).is_empty());
                add(ops.into_iter().skip(skip).collect());
            }
        }
        "sort" => add(opt(
            &operands(args, "otSTk", &["--output"]).1,
            &["-o", "--output"],
        )),
        "curl" => add(opt(
            &operands(args, "oHdXuAeEFrTwxy", &["--output", "--output-dir"]).1,
            &["-o", "--output", "--output-dir"],
        )),
        "wget" => add(opt(
            &operands(args, "OPoa", &["--output-document", "--directory-prefix"]).1,
            &["-O", "--output-document", "-P", "--directory-prefix"],
        )),
        "unzip" => add(opt(&operands(args, "dx", &[]).1, &["-d"])),
        "tar" | "gtar" | "bsdtar" => {
            let first = args.first().map(String::as_str).unwrap_or("");
            let bundle = if first.starts_with('-') { "" } else { first };
            let (_, opts) = operands(args, "CfIFT", &["--directory", "--file"]);
            let has = |c: char, long: &str| {
                bundle.contains(c) || opts.iter().any(|(n, _)| *n == format!("-{c}") || n == long)
            };
            if has('x', "--extract") || has('x', "--get") {
                add(opt(&opts, &["-C", "--directory"]));
            }
            if has('c', "--create") || has('r', "--append") || has('u', "--update") {
                let mut f = opt(&opts, &["-f", "--file"]);
                if f.is_empty() && bundle.contains('f') {
                    f = args.get(1).map(|s| s.as_str()).into_iter().collect();
                }
                add(f);
            }
        }
        _ => {}
    }
    out.extend(crate::writers::extra_targets(cmd));
    out.iter().flat_map(|t| crate::braces::expand(t)).collect()
}
