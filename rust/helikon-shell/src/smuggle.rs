//! Allow-list smuggling: ways an allowed program is made to run other code.
//!
//! An allow list says "these programs may run". It must not be satisfied by a listed program
//! configured to run something else: git's code-valued config (`-c core.pager=…`,
//! `core.fsmonitor`, `alias.x=!…`, `--config-env`), transport and hook options, environment
//! variables read as commands or libraries (`GIT_SSH_COMMAND`, `PAGER`, `LD_PRELOAD`,
//! `BASH_ENV`, `PATH`), GTFOBins-style options of tar/ssh/rsync/zip, and privileged wrappers
//! (`sudo`, `doas`, …), which are never transparent for an allow list.

use crate::model::{Assignment, Command};
use crate::wrappers;

/// Environment variables that make a program run other code or load other libraries.
const ENV_EXACT: &[&str] = &[
    "PAGER",
    "GIT_PAGER",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "EDITOR",
    "VISUAL",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_EXTERNAL_DIFF",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "GIT_PROXY_COMMAND",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_DIR",
    "GIT_EXEC_PATH",
    "GIT_TEMPLATE_DIR",
    "BASH_ENV",
    "ENV",
    "PATH",
    "PROMPT_COMMAND",
    "PS4",
    "SHELLOPTS",
    "BASHOPTS",
    "IFS",
    "PYTHONPATH",
    "PYTHONSTARTUP",
    "PYTHONHOME",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "NODE_OPTIONS",
    "NODE_PATH",
    "LESSOPEN",
    "LESSCLOSE",
    "BROWSER",
    "TAR_OPTIONS",
    "RSYNC_RSH",
    "RSYNC_CONNECT_PROG",
    "CVS_RSH",
    "MANOPT",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "GCONV_PATH",
    "HOSTALIASES",
];

const ENV_PREFIXES: &[&str] = &[
    "LD_",
    "DYLD_",
    "GIT_CONFIG_KEY_",
    "GIT_CONFIG_VALUE_",
    "BASH_FUNC_",
];

/// Is this environment variable able to make a program run other code?
pub fn dangerous_env(name: &str) -> bool {
    ENV_EXACT.contains(&name) || ENV_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Is this (lower-cased) git config key read as a command or a hook location?
pub fn git_code_key(key: &str) -> bool {
    const EXACT: &[&str] = &[
        "core.pager",
        "core.editor",
        "core.sshcommand",
        "core.fsmonitor",
        "core.askpass",
        "core.hookspath",
        "core.gitproxy",
        "sequence.editor",
        "diff.external",
        "credential.helper",
        "gpg.program",
        "uploadpack.packobjectshook",
        "sendemail.sendmailcmd",
        "sendemail.tocmd",
        "sendemail.cccmd",
        "interactive.difffilter",
        "web.browser",
        "init.templatedir",
        "core.worktree",
    ];
    if EXACT.contains(&key) {
        return true;
    }
    let (section, rest) = match key.split_once('.') {
        Some(x) => x,
        None => return false,
    };
    let last = rest.rsplit('.').next().unwrap_or(rest);
    match section {
        "alias" | "pager" => true,
        "filter" => matches!(last, "clean" | "smudge" | "process"),
        "diff" => matches!(last, "command" | "textconv"),
        "merge" => last == "driver",
        "credential" => last == "helper",
        "gpg" => last == "program",
        "browser" | "man" | "difftool" | "mergetool" => matches!(last, "cmd" | "path"),
        "remote" => matches!(last, "uploadpack" | "receivepack" | "vcs" | "proxy"),
        // An included file can set any of the keys above.
        "include" | "includeif" => last == "path",
        _ => false,
    }
}

/// The key and value operands of `git config` (classic `git config KEY VALUE`, and the
/// `git config set KEY VALUE` form of git 2.46).
pub(crate) fn git_config_operands<'a>(ops: &[&'a str]) -> Option<(&'a str, &'a str)> {
    let ops = match ops.first() {
        Some(&"set") => ops.get(1..).unwrap_or(&[]),
        _ => ops,
    };
    match ops {
        [k, v, ..] => Some((k, v)),
        _ => None,
    }
}

/// Why this command cannot satisfy an allow list even if its program is listed.
pub fn allow_blocker(cmd: &Command) -> Option<String> {
    for w in cmd.wrappers() {
        if wrappers::lookup(&w.to_ascii_lowercase()).is_some_and(|s| s.privileged) {
            return Some(format!(
                "command `{}` runs through `{w}`, which an allow list never covers",
                cmd.program
            ));
        }
    }
    for (name, _) in &cmd.env {
        if dangerous_env(name) {
            return Some(format!(
                "command `{}` sets `{name}`, which can make it run other programs",
                cmd.program
            ));
        }
    }
    let args = cmd.args();
    let program = cmd.program.to_ascii_lowercase();
    let hit = match program.as_str() {
        "git" => git_option(args),
        "tar" | "bsdtar" | "gtar" => prefixed(
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
        ),
        "ssh" | "scp" | "sftp" => args
            .iter()
            .enumerate()
            .find(|(i, a)| {
                let v = if *a == "-o" {
                    args.get(i + 1).cloned().unwrap_or_default()
                } else if let Some(v) = a.strip_prefix("-o") {
                    v.to_string()
                } else {
                    return *a == "-F";
                };
                let k = v.to_ascii_lowercase();
                k.starts_with("proxycommand")
                    || k.starts_with("localcommand")
                    || k.starts_with("knownhostscommand")
                    || k.starts_with("permitlocalcommand")
            })
            .map(|(_, a)| a.clone()),
        "rsync" => prefixed(args, &["-e", "--rsh", "--rsync-path"]),
        "zip" => prefixed(args, &["-TT", "--unzip-command"]),
        "less" | "more" | "man" => prefixed(args, &["-P", "--pager", "-H", "--html"]),
        "vim" | "vi" | "nvim" | "view" => args
            .iter()
            .find(|a| a.starts_with('+') || *a == "-c" || *a == "--cmd" || *a == "-S")
            .cloned(),
        _ => None,
    };
    hit.map(|opt| {
        format!(
            "command `{}` uses `{opt}`, which can make it run other programs",
            cmd.program
        )
    })
}

/// The options of a git subcommand whose value is a command run on the remote side
/// (`--upload-pack`, `--receive-pack`, `--exec`, and `-u` where it means `--upload-pack`).
pub fn git_transport_options(sub: &str) -> &'static [&'static str] {
    match sub {
        "clone" | "ls-remote" => &["--upload-pack", "-u"],
        "fetch" | "pull" => &["--upload-pack"],
        "push" => &["--receive-pack", "--exec"],
        "archive" => &["--exec"],
        _ => &[],
    }
}

/// A standalone assignment that changes how later commands run.
pub fn assignment_blocker(a: &Assignment) -> Option<String> {
    dangerous_env(&a.name).then(|| {
        format!(
            "the command sets `{}`, which can make allowed programs run other programs",
            a.name
        )
    })
}

fn prefixed(args: &[String], opts: &[&str]) -> Option<String> {
    args.iter()
        .take_while(|a| *a != "--")
        .find(|a| opts.iter().any(|o| a.as_str() == *o || a.starts_with(o)))
        .cloned()
}

/// Git's global options (before the subcommand), the subcommand, and its arguments.
pub(crate) fn git_split(args: &[String]) -> (&[String], Option<&str>, &[String]) {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let takes_value = matches!(
            a.as_str(),
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace"
        );
        if !a.starts_with('-') {
            break;
        }
        i += if takes_value { 2 } else { 1 };
    }
    let i = i.min(args.len());
    (
        args.get(..i).unwrap_or(&[]),
        args.get(i).map(String::as_str),
        args.get(i + 1..).unwrap_or(&[]),
    )
}

fn git_option(args: &[String]) -> Option<String> {
    let (globals, sub, rest) = git_split(args);
    let mut i = 0;
    while let Some(a) = globals.get(i) {
        i += 1;
        let attached = a
            .strip_prefix("-c")
            .filter(|r| !r.is_empty() && !a.starts_with("--"));
        if a == "-c" || attached.is_some() {
            let kv = match attached {
                Some(kv) => kv,
                None => {
                    i += 1;
                    globals.get(i - 1).map_or("", String::as_str)
                }
            };
            let key = kv.split_once('=').map_or(kv, |x| x.0).to_ascii_lowercase();
            if git_code_key(&key) {
                return Some(format!("-c {kv}"));
            }
        } else if a.starts_with("--config-env")
            || a.starts_with("--exec-path")
            || a.starts_with("--git-dir")
        {
            return Some(a.clone());
        }
    }
    let sub = sub?;
    let any = |opts: &[&str]| prefixed(rest, opts);
    if let Some(u) = rest.iter().find(|a| a.starts_with("ext::")) {
        return Some(u.clone());
    }
    match sub {
        "grep" => any(&["-O", "--open-files-in-pager"]),
        "rebase" => any(&["--exec", "-x"]),
        "difftool" | "mergetool" => any(&["-x", "--extcmd", "-t", "--tool"]),
        "submodule" => rest.iter().find(|a| *a == "foreach").cloned(),
        "bisect" => rest.first().filter(|a| *a == "run").cloned(),
        "filter-branch" => any(&["--"])
            .filter(|a| a.ends_with("-filter"))
            .or_else(|| Some("filter-branch".into())),
        "clone" => any(&["--upload-pack", "-u", "--template", "-c", "--config"]),
        "fetch" | "pull" | "push" | "ls-remote" | "archive" => any(git_transport_options(sub)),
        "config" => {
            let ops: Vec<&str> = rest
                .iter()
                .filter(|a| !a.starts_with('-'))
                .map(String::as_str)
                .collect();
            let file_or_edit =
                rest.iter().any(|a| a == "-e" || a == "--edit") || ops.first() == Some(&"edit");
            match git_config_operands(&ops) {
                Some((k, _)) if git_code_key(&k.to_ascii_lowercase()) => {
                    Some(format!("config {k}"))
                }
                _ if file_or_edit => Some("config --edit".into()),
                _ => None,
            }
        }
        "init" => any(&["--template"]),
        _ => None,
    }
}
