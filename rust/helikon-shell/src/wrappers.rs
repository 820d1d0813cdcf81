//! Wrapper programs: programs that run another command given as their arguments.
//!
//! Each wrapper has an option table (short options and long options that take a separate
//! value), a number of positional arguments that come before the command (`timeout DURATION`,
//! `chroot DIR`), and a kind for the few with special forms (`command -v`, `env -S`, `watch`
//! running a shell string, `su -c`, `xargs -I`). [`strip`] tells the analysis where the wrapped
//! command starts, or what else the wrapper does with its arguments.

use crate::word::Word;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Plain,
    Command,
    Env,
    Xargs,
    Watch,
    Su,
    Sg,
    Script,
    Flock,
    Parallel,
    PidMode,
    Sudo,
    Runuser,
}

/// One wrapper's option table.
#[derive(Debug)]
pub struct Spec {
    pub name: &'static str,
    short_val: &'static str,
    long_val: &'static [&'static str],
    positional: usize,
    /// The wrapper changes the user or root it runs as (never transparent for allow lists).
    pub privileged: bool,
    kind: Kind,
}

const fn spec(
    name: &'static str,
    short_val: &'static str,
    long_val: &'static [&'static str],
    positional: usize,
    privileged: bool,
    kind: Kind,
) -> Spec {
    Spec {
        name,
        short_val,
        long_val,
        positional,
        privileged,
        kind,
    }
}

const SYSTEMD_RUN_LONG: &[&str] = &[
    "--property",
    "--setenv",
    "--unit",
    "--machine",
    "--host",
    "--uid",
    "--gid",
    "--nice",
    "--working-directory",
    "--slice",
    "--description",
    "--service-type",
    "--on-active",
    "--on-boot",
    "--on-calendar",
];

/// Sorted by name; [`lookup`] maps a name to its index.
static SPECS: &[Spec] = &[
    spec("builtin", "", &[], 0, false, Kind::Plain),
    spec("busybox", "", &[], 0, false, Kind::Plain),
    spec("caffeinate", "tw", &[], 0, false, Kind::Plain),
    spec("catchsegv", "", &[], 0, false, Kind::Plain),
    spec("cgexec", "g", &[], 0, false, Kind::Plain),
    spec("chpst", "uUbe/CnlLmdopfcrt", &[], 0, true, Kind::Plain),
    spec(
        "chroot",
        "",
        &["--userspec", "--groups"],
        1,
        true,
        Kind::Plain,
    ),
    spec(
        "chrt",
        "TPD",
        &["--sched-runtime", "--sched-period", "--sched-deadline"],
        1,
        false,
        Kind::PidMode,
    ),
    spec("command", "", &[], 0, false, Kind::Command),
    spec("coproc", "", &[], 0, false, Kind::Plain),
    spec(
        "dbus-run-session",
        "",
        &["--config-file", "--dbus-daemon"],
        0,
        false,
        Kind::Plain,
    ),
    spec("doas", "uC", &[], 0, true, Kind::Sudo),
    spec(
        "env",
        "uCS",
        &["--unset", "--chdir", "--split-string"],
        0,
        false,
        Kind::Env,
    ),
    spec("exec", "a", &[], 0, false, Kind::Plain),
    spec(
        "fakeroot",
        "lsib",
        &["--lib", "--faked"],
        0,
        false,
        Kind::Plain,
    ),
    spec("faketime", "", &[], 1, false, Kind::Plain),
    spec("firejail", "", &[], 0, false, Kind::Plain),
    spec(
        "flock",
        "wE",
        &["--timeout", "--conflict-exit-code"],
        1,
        false,
        Kind::Flock,
    ),
    spec(
        "ionice",
        "cnp",
        &["--class", "--classdata", "--pid", "--pgid", "--uid"],
        0,
        false,
        Kind::PidMode,
    ),
    spec("ltrace", "aeEnopsSu", &[], 0, false, Kind::Plain),
    spec("nice", "n", &["--adjustment"], 0, false, Kind::Plain),
    spec("nocache", "", &[], 0, false, Kind::Plain),
    spec("nohup", "", &[], 0, false, Kind::Plain),
    spec(
        "nsenter",
        "tSG",
        &["--target", "--setuid", "--setgid"],
        0,
        true,
        Kind::Plain,
    ),
    spec(
        "parallel",
        "jS",
        &["--jobs", "--sshlogin", "--joblog"],
        0,
        false,
        Kind::Parallel,
    ),
    spec("pkexec", "", &["--user"], 0, true, Kind::Plain),
    spec("proxychains", "f", &[], 0, false, Kind::Plain),
    spec("proxychains4", "f", &[], 0, false, Kind::Plain),
    spec(
        "runuser",
        "ucsgGw",
        &["--user", "--command", "--shell", "--group", "--supp-group"],
        0,
        true,
        Kind::Runuser,
    ),
    spec(
        "script",
        "cIOBTEm",
        &[
            "--command",
            "--log-in",
            "--log-out",
            "--log-io",
            "--log-timing",
            "--echo",
            "--logging-format",
        ],
        0,
        false,
        Kind::Script,
    ),
    spec(
        "setpriv",
        "",
        &[
            "--reuid",
            "--regid",
            "--ruid",
            "--euid",
            "--rgid",
            "--egid",
            "--groups",
            "--inh-caps",
            "--ambient-caps",
            "--bounding-set",
            "--securebits",
            "--selinux-label",
            "--apparmor-profile",
            "--pdeathsig",
            "--landlock-access",
            "--landlock-rule",
        ],
        0,
        true,
        Kind::Plain,
    ),
    spec("setsid", "", &[], 0, false, Kind::Plain),
    spec("sg", "", &[], 0, true, Kind::Sg),
    spec(
        "stdbuf",
        "ioe",
        &["--input", "--output", "--error"],
        0,
        false,
        Kind::Plain,
    ),
    spec("strace", "abeEIoOpPsSuX", &[], 0, false, Kind::Plain),
    spec(
        "su",
        "csgGw",
        &[
            "--command",
            "--shell",
            "--group",
            "--supp-group",
            "--whitelist-environment",
        ],
        0,
        true,
        Kind::Su,
    ),
    spec(
        "sudo",
        "ugChprtURcDT",
        &[
            "--user",
            "--group",
            "--close-from",
            "--host",
            "--prompt",
            "--role",
            "--type",
            "--other-user",
            "--chdir",
            "--chroot",
            "--login-class",
            "--command-timeout",
        ],
        0,
        true,
        Kind::Sudo,
    ),
    spec(
        "systemd-run",
        "pEuMH",
        SYSTEMD_RUN_LONG,
        0,
        true,
        Kind::Plain,
    ),
    spec("taskset", "", &[], 1, false, Kind::PidMode),
    spec(
        "time",
        "of",
        &["--output", "--format"],
        0,
        false,
        Kind::Plain,
    ),
    spec(
        "timeout",
        "sk",
        &["--signal", "--kill-after"],
        1,
        false,
        Kind::Plain,
    ),
    spec("torsocks", "uPai", &[], 0, false, Kind::Plain),
    spec("toybox", "", &[], 0, false, Kind::Plain),
    spec("unbuffer", "", &[], 0, false, Kind::Plain),
    spec(
        "unshare",
        "SGR",
        &["--setuid", "--setgid", "--root", "--wd"],
        0,
        false,
        Kind::Plain,
    ),
    spec("valgrind", "", &[], 0, false, Kind::Plain),
    spec("watch", "n", &["--interval"], 0, false, Kind::Watch),
    spec(
        "xargs",
        "adEILnPs",
        &[
            "--arg-file",
            "--delimiter",
            "--eof",
            "--max-lines",
            "--max-args",
            "--max-procs",
            "--max-chars",
            "--process-slot-var",
        ],
        0,
        false,
        Kind::Xargs,
    ),
];

/// The wrapper spec for a program name (ASCII case-insensitive), if it is a wrapper.
pub fn lookup(name: &str) -> Option<&'static Spec> {
    // Every wrapper name fits this buffer; a longer name is no wrapper.
    let mut buf = [0u8; 24];
    let lower = buf.get_mut(..name.len())?;
    lower.copy_from_slice(name.as_bytes());
    lower.make_ascii_lowercase();
    let lower = std::str::from_utf8(lower).ok()?;
    let i = SPECS.binary_search_by(|s| s.name.cmp(lower)).ok()?;
    SPECS.get(i)
}

/// What a wrapper does with its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Strip {
    /// The wrapped command starts at this index of the wrapper's arguments. `replace` is the
    /// `xargs -I` replacement string (words containing it are dynamic).
    Command { at: usize, replace: Option<String> },
    /// The wrapper runs nothing given statically (`command -v x`, `sudo -l`): report it as the
    /// program itself.
    Program,
    /// The wrapper runs these shell strings (`watch 'a; b'`, `su -c '…'`, `env -S '…'`).
    Shell(Vec<String>),
    /// The wrapper runs code that cannot be known statically.
    Unanalysable(String),
}

fn text(w: &Word) -> &str {
    w.text()
}

/// Find `-c VALUE`, `-cVALUE`, `--command=VALUE` or `--command VALUE` anywhere in `args`.
fn find_command_option(args: &[&Word]) -> Option<String> {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = text(w);
        if t == "--" {
            return None;
        }
        let cluster = t.len() > 1
            && t.starts_with('-')
            && !t.starts_with("--")
            && t.ends_with('c')
            && t[1..].bytes().all(|b| b.is_ascii_alphabetic());
        if cluster || t == "--command" {
            return args.get(i + 1).map(|w| text(w).to_string());
        }
        if let Some(v) = t.strip_prefix("--command=") {
            return Some(v.to_string());
        }
        i += 1;
    }
    None
}

/// Decide where the command wrapped by `spec` starts in `args`.
pub fn strip(spec: &Spec, args: &[&Word]) -> Strip {
    if matches!(spec.kind, Kind::Su | Kind::Script) {
        return match find_command_option(args) {
            Some(s) => Strip::Shell(vec![s]),
            None => Strip::Program,
        };
    }
    if spec.kind == Kind::Runuser {
        if let Some(s) = find_command_option(args) {
            return Strip::Shell(vec![s]);
        }
    }
    let mut j = 0;
    let mut replace: Option<String> = None;
    let mut shell: Option<String> = None;
    let mut split: Option<String> = None;
    let mut exec_mode = false;
    let mut program_only = false;
    while let Some(w) = args.get(j) {
        let t = text(w);
        if t == "--" {
            j += 1;
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let mut val = value;
            if val.is_none()
                && spec
                    .long_val
                    .iter()
                    .any(|l| l.strip_prefix("--") == Some(name))
            {
                val = args.get(j + 1).map(|w| text(w).to_string());
                j += 1;
            }
            match (spec.kind, name) {
                (Kind::Env, "split-string") => split = val,
                (Kind::Flock, "command") => shell = val,
                (Kind::Xargs, "replace") => replace = Some(val.unwrap_or_else(|| "{}".into())),
                (Kind::Watch, "exec") => exec_mode = true,
                (
                    Kind::Sudo,
                    "list" | "validate" | "reset-timestamp" | "remove-timestamp" | "edit",
                ) => program_only = true,
                (Kind::PidMode, "pid" | "pgid" | "uid") => program_only = true,
                (_, "help" | "version") => program_only = true,
                _ => {}
            }
            j += 1;
            continue;
        }
        let numeric_flag = t.len() > 1 && t.starts_with('-') && is_numeric(&t[1..]);
        if t.len() > 1 && t.starts_with('-') && !numeric_flag {
            let cluster: Vec<char> = t[1..].chars().collect();
            let mut k = 0;
            while k < cluster.len() {
                let c = cluster[k];
                match (spec.kind, c) {
                    (Kind::Command, 'v' | 'V') => program_only = true,
                    (Kind::Sudo, 'l' | 'v' | 'k' | 'K' | 'e' | 'V') => program_only = true,
                    (Kind::PidMode, 'p') => program_only = true,
                    (Kind::Watch, 'x') => exec_mode = true,
                    (Kind::Xargs, 'i') => {
                        let rest: String = cluster[k + 1..].iter().collect();
                        replace = Some(if rest.is_empty() { "{}".into() } else { rest });
                        break;
                    }
                    (Kind::Xargs, 'l' | 'e') => break,
                    (Kind::Flock, 'c') => {
                        let rest: String = cluster[k + 1..].iter().collect();
                        shell = if rest.is_empty() {
                            j += 1;
                            args.get(j).map(|w| text(w).to_string())
                        } else {
                            Some(rest)
                        };
                        break;
                    }
                    _ => {}
                }
                if spec.short_val.contains(c) {
                    let rest: String = cluster[k + 1..].iter().collect();
                    let val = if !rest.is_empty() {
                        Some(rest)
                    } else {
                        match args.get(j + 1).map(|w| text(w)) {
                            Some(v) if !v.starts_with('-') || wants_dash_value(spec, c) => {
                                j += 1;
                                Some(v.to_string())
                            }
                            _ => None,
                        }
                    };
                    match (spec.kind, c) {
                        (Kind::Env, 'S') => split = val,
                        (Kind::Xargs, 'I') => replace = val,
                        _ => {}
                    }
                    break;
                }
                k += 1;
            }
            j += 1;
            continue;
        }
        // The reference skips purely numeric tokens after a wrapper (`nice -10`, `timeout 5`);
        // wrappers with positional arguments take them as those positionals instead.
        if spec.positional == 0 && (numeric_flag || is_numeric(t)) {
            j += 1;
            continue;
        }
        break;
    }
    if program_only {
        return Strip::Program;
    }
    if let Some(s) = split {
        let mut joined = s;
        for w in args.get(j..).unwrap_or(&[]) {
            joined.push(' ');
            joined.push_str(w.raw());
        }
        return Strip::Shell(vec![joined]);
    }
    if let Some(s) = shell {
        return Strip::Shell(vec![s]);
    }
    let rest_values = |from: usize| -> Vec<&str> {
        args.get(from..)
            .unwrap_or(&[])
            .iter()
            .map(|w| text(w))
            .collect()
    };
    match spec.kind {
        Kind::Watch if !exec_mode => {
            let rest = rest_values(j);
            if rest.is_empty() {
                return Strip::Program;
            }
            return Strip::Shell(vec![rest.join(" ")]);
        }
        Kind::Sg => {
            // sg [-] group [-c] command
            let mut k = j;
            if args.get(k).is_some_and(|w| text(w) == "-") {
                k += 1;
            }
            k += 1;
            if args.get(k).is_some_and(|w| text(w) == "-c") {
                k += 1;
            }
            let rest = rest_values(k);
            if rest.is_empty() {
                return Strip::Program;
            }
            return Strip::Shell(vec![rest.join(" ")]);
        }
        Kind::Parallel => {
            let rest = rest_values(j);
            let end = rest
                .iter()
                .position(|t| matches!(*t, ":::" | "::::" | ":::+" | "::::+"))
                .unwrap_or(rest.len());
            if end == 0 {
                return Strip::Unanalysable("parallel reads commands from its input".into());
            }
            return Strip::Shell(vec![rest[..end].join(" ")]);
        }
        _ => {}
    }
    let at = j + spec.positional;
    if spec.kind == Kind::Flock {
        if let Some(w) = args.get(at) {
            let t = text(w);
            if t == "-c" || t == "--command" {
                return match args.get(at + 1) {
                    Some(p) => Strip::Shell(vec![text(p).to_string()]),
                    None => Strip::Program,
                };
            }
        }
    }
    if at >= args.len() && spec.privileged {
        return Strip::Program;
    }
    Strip::Command {
        at: at.min(args.len()),
        replace,
    }
}

/// Option values that may legitimately start with `-` (`nice -n -5`).
fn wants_dash_value(spec: &Spec, c: char) -> bool {
    spec.name == "nice" && c == 'n'
}

/// Digits and dots only (`5`, `2.5`): the reference skips such tokens after a wrapper.
fn is_numeric(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit() || c == b'.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_are_sorted_and_found() {
        assert!(SPECS.windows(2).all(|w| w[0].name < w[1].name));
        assert!(SPECS.iter().all(|s| s.name.len() <= 24));
        for s in SPECS {
            assert_eq!(lookup(s.name).map(|f| f.name), Some(s.name));
            assert_eq!(
                lookup(&s.name.to_ascii_uppercase()).map(|f| f.name),
                Some(s.name)
            );
        }
        assert!(lookup("git").is_none());
        assert!(lookup("").is_none());
        assert!(lookup("sudox").is_none());
    }
}
