//! Files and directories written by programs whose grammar puts the target somewhere other
//! than a redirection or a plain last operand (attack G4): `perl -i`/`ruby -i`, `patch`,
//! git (`clone DIR`, `init DIR`, `worktree add DIR`, `-C DIR`, `--git-dir`, `--work-tree`,
//! `--output`, `format-patch -o`, `archive -o`, `bundle create`), `cpio -D`/`-p DIR`,
//! `scp`, `sqlite3 DB`. Used by [`crate::guards::write_targets`].

use crate::model::Command;

/// git subcommands that write nothing in the repository they run in (`git -C DIR log`).
const GIT_READ_ONLY: &[&str] = &[
    "log",
    "show",
    "status",
    "blame",
    "grep",
    "ls-files",
    "ls-tree",
    "ls-remote",
    "rev-parse",
    "rev-list",
    "describe",
    "shortlog",
    "cat-file",
    "version",
    "help",
    "--version",
    "--help",
];

/// sqlite3 options that take the next word.
const SQLITE_VALUED: &[&str] = &[
    "-cmd",
    "-init",
    "-separator",
    "-newline",
    "-nullvalue",
    "-vfs",
    "-mmap",
    "-pagecache",
    "-lookaside",
    "-heap",
    "-maxsize",
    "-escape",
];

/// Write targets of `cmd` beyond the ones `write_targets` knows (see the module docs).
pub(crate) fn extra_targets(cmd: &Command) -> Vec<String> {
    let args = cmd.args();
    let mut out = Vec::new();
    match cmd.program.to_ascii_lowercase().as_str() {
        "perl" | "ruby" => in_place(args, &mut out),
        "patch" => patch(args, &mut out),
        "git" => git(args, &mut out),
        "cpio" => cpio(args, &mut out),
        "scp" => scp(args, &mut out),
        "sqlite3" => {
            let mut i = 0;
            while let Some(a) = args.get(i) {
                if SQLITE_VALUED.contains(&a.as_str()) {
                    i += 2;
                    continue;
                }
                if !a.starts_with('-') {
                    out.push(a.clone());
                    break;
                }
                i += 1;
            }
        }
        _ => {}
    }
    crate::writer_table::targets(cmd, &mut out);
    out.retain(|t| !t.is_empty());
    out
}

/// `perl -pi -e CODE FILES`, `perl -i.bak -pe …`, `ruby -i -pe …`: with `-i` every file
/// operand is rewritten.
fn in_place(args: &[String], out: &mut Vec<String>) {
    let mut in_place = false;
    let mut code = false;
    let mut i = 0;
    let mut files = Vec::new();
    while let Some(a) = args.get(i) {
        if a == "--" {
            files.extend(args.get(i + 1..).unwrap_or(&[]).iter().cloned());
            break;
        }
        if a.len() > 1 && a.starts_with('-') && !a.starts_with("--") {
            let flags = &a[1..];
            // `-i` takes its backup suffix attached, so an `i` ends the option's flags.
            let before_i = flags.split('i').next().unwrap_or("");
            if flags.contains('i') && !before_i.contains(['e', 'E', 'I', 'M', 'm', 'r']) {
                in_place = true;
            }
            let cluster = flags.split('i').next().unwrap_or(flags);
            if cluster.ends_with(['e', 'E'])
                || (!flags.contains('i') && flags.ends_with(['e', 'E']))
            {
                code = true;
                i += 2;
                continue;
            }
            if matches!(a.as_str(), "-I" | "-M" | "-m" | "-r" | "-C") {
                i += 2;
                continue;
            }
            i += 1;
            continue;
        }
        files.push(a.clone());
        i += 1;
    }
    if in_place {
        // Without `-e` the first operand is the script.
        let skip = usize::from(!code);
        out.extend(files.into_iter().skip(skip));
    }
}

/// `patch [-d DIR] [-o OUT] [FILE] [PATCH]`: the file patched, the output file, the
/// directory it works in.
fn patch(args: &[String], out: &mut Vec<String>) {
    let mut i = 0;
    let mut ops = Vec::new();
    let mut input_given = false;
    while let Some(a) = args.get(i) {
        let (name, attached) = match a.split_once('=') {
            Some((n, v)) if a.starts_with("--") => (n, Some(v)),
            _ => (a.as_str(), None),
        };
        let value = || {
            attached
                .map(str::to_string)
                .or_else(|| args.get(i + 1).cloned())
        };
        let step = if attached.is_some() { 1 } else { 2 };
        match name {
            "-d" | "--directory" | "-o" | "--output" => {
                out.extend(value());
                i += step;
                continue;
            }
            "-i" | "--input" => input_given = true,
            _ => {}
        }
        if matches!(
            name,
            "-i" | "--input"
                | "-p"
                | "--strip"
                | "-B"
                | "--prefix"
                | "-D"
                | "--ifdef"
                | "-F"
                | "--fuzz"
                | "-r"
                | "--reject-file"
                | "-V"
                | "--version-control"
                | "-Y"
                | "--basename-prefix"
                | "-z"
                | "--suffix"
                | "-g"
                | "--get"
        ) {
            i += step;
            continue;
        }
        if let Some(v) = a.strip_prefix("-d").or_else(|| a.strip_prefix("-o")) {
            if !a.starts_with("--") && !v.is_empty() {
                out.push(v.to_string());
            }
        } else if !a.starts_with('-') {
            ops.push(a.clone());
        }
        i += 1;
    }
    let _ = input_given;
    out.extend(ops.into_iter().take(1));
}

fn git(args: &[String], out: &mut Vec<String>) {
    let (global, sub, rest) = crate::smuggle::git_split(args);
    let sub = sub.unwrap_or("");
    let writes = !GIT_READ_ONLY.contains(&sub);
    let mut i = 0;
    while let Some(a) = global.get(i) {
        let (name, attached) = match a.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (a.as_str(), None),
        };
        if matches!(name, "-C" | "--git-dir" | "--work-tree") {
            let v = attached.or_else(|| global.get(i + 1).cloned());
            if writes {
                out.extend(v);
            }
            i += if a.contains('=') { 1 } else { 2 };
            continue;
        }
        i += 1;
    }
    // `--output=F`/`--output F` (diff, log, format-patch), `-o DIR` of format-patch and
    // archive.
    let mut i = 0;
    while let Some(a) = rest.get(i) {
        if let Some(v) = a
            .strip_prefix("--output=")
            .or_else(|| a.strip_prefix("--output-directory="))
        {
            out.push(v.to_string());
        } else if a == "--output"
            || a == "--output-directory"
            || (a == "-o" && matches!(sub, "format-patch" | "archive"))
        {
            out.extend(rest.get(i + 1).cloned());
            i += 1;
        }
        i += 1;
    }
    let ops: Vec<&String> = git_operands(rest);
    match sub {
        "clone" => out.extend(ops.get(1).map(|s| (*s).clone())),
        "init" => out.extend(ops.first().map(|s| (*s).clone())),
        "worktree" if ops.first().is_some_and(|s| *s == "add") => {
            out.extend(ops.get(1).map(|s| (*s).clone()));
        }
        "bundle" if ops.first().is_some_and(|s| *s == "create") => {
            out.extend(ops.get(1).map(|s| (*s).clone()));
        }
        _ => {}
    }
}

/// Operands of a git subcommand, skipping the values of its common valued options.
fn git_operands(rest: &[String]) -> Vec<&String> {
    const VALUED: &[&str] = &[
        "--depth",
        "-b",
        "--branch",
        "-o",
        "--origin",
        "--reference",
        "-c",
        "--config",
        "--template",
        "--separate-git-dir",
        "-j",
        "--jobs",
        "--filter",
        "-u",
        "--upload-pack",
        "--shallow-since",
        "--shallow-exclude",
        "--object-format",
        "--ref-format",
        "-B",
        "--reason",
    ];
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(a) = rest.get(i) {
        if a == "--" {
            out.extend(rest.get(i + 1..).unwrap_or(&[]));
            break;
        }
        if VALUED.contains(&a.as_str()) {
            i += 2;
            continue;
        }
        if !a.starts_with('-') {
            out.push(a);
        }
        i += 1;
    }
    out
}

/// `cpio -D DIR`/`--directory=DIR` (extract into DIR), `cpio -p DIR` (copy into DIR).
fn cpio(args: &[String], out: &mut Vec<String>) {
    let mut pass = false;
    let mut ops = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if let Some(v) = a.strip_prefix("--directory=") {
            out.push(v.to_string());
        } else if a == "--directory" || a == "-D" {
            out.extend(args.get(i + 1).cloned());
            i += 1;
        } else if a == "--pass-through" {
            pass = true;
        } else if a.len() > 1 && a.starts_with('-') && !a.starts_with("--") {
            let flags = &a[1..];
            if let Some((_, v)) = flags.split_once('D') {
                if v.is_empty() {
                    out.extend(args.get(i + 1).cloned());
                    i += 1;
                } else {
                    out.push(v.to_string());
                }
            }
            pass |= flags.contains('p');
            if flags.ends_with(['F', 'H', 'I', 'M', 'O', 'R', 'E']) {
                i += 1;
            }
        } else if !a.starts_with('-') {
            ops.push(a.clone());
        }
        i += 1;
    }
    if pass {
        out.extend(ops.into_iter().last());
    }
}

/// `scp [OPTIONS] SRC… DEST`: a local destination (no `host:` before its first `/`).
fn scp(args: &[String], out: &mut Vec<String>) {
    let mut ops = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a.len() == 2 && a.starts_with('-') && "cFiJlPoSDX".contains(&a[1..]) {
            i += 2;
            continue;
        }
        if !a.starts_with('-') {
            ops.push(a);
        }
        i += 1;
    }
    if ops.len() >= 2 {
        if let Some(dest) = ops.last() {
            let remote = dest
                .find(':')
                .is_some_and(|c| dest.find('/').is_none_or(|s| c < s));
            if !remote {
                out.push((*dest).clone());
            }
        }
    }
}
