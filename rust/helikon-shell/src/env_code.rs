//! Environment variables that make a program run code first, set on the command line
//! (`PAGER=… git log`, `env LD_PRELOAD=… ls`) or earlier in the same command (`export
//! GIT_SSH_COMMAND=…; git fetch`, `X=…` alone).
//!
//! * Command-valued variables (`GIT_SSH_COMMAND`, `PAGER`, `EDITOR`, `PROMPT_COMMAND`, …):
//!   the value is a command line some program runs, so it is analysed as shell code (a
//!   dynamic value fails closed). It is analysed wherever it is set, whether or not a
//!   program that reads it follows: a later command, or a shell that keeps the variable,
//!   may run it.
//! * File-valued variables (`BASH_ENV`, `ENV`, `LD_PRELOAD`, `LD_AUDIT`, …): a program loads
//!   or runs that file first, and its content is unknown, so the command fails closed.
//! * `PATH` changed to anything but system directories: every later program found through
//!   `PATH` may be another program (handled by the analyzer).

/// Variables whose value is a command line that some program runs.
const COMMAND_VARS: &[&str] = &[
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_ASKPASS",
    "GIT_PROXY_COMMAND",
    "SSH_ASKPASS",
    "SUDO_ASKPASS",
    "PAGER",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "EDITOR",
    "VISUAL",
    "SUDO_EDITOR",
    "PROMPT_COMMAND",
    "BROWSER",
    "LESSOPEN",
    "LESSCLOSE",
    "RSYNC_RSH",
    "RSYNC_CONNECT_PROG",
    "CVS_RSH",
    "FCEDIT",
];

/// Variables that make a program load or run a file first. (`ENV` is one when its value is a
/// path: `ENV=production` is a common setting, `ENV=./x` makes an interactive `sh` run `x`.
/// Search paths such as `PYTHONPATH` only change where a program finds its own code, like
/// running that code does, and are not listed; allow lists still refuse them.)
const FILE_VARS: &[&str] = &[
    "BASH_ENV",
    "LD_PRELOAD",
    "LD_AUDIT",
    "DYLD_INSERT_LIBRARIES",
    "PYTHONSTARTUP",
    "PERL5OPT",
    "RUBYOPT",
    "GIT_EXEC_PATH",
    "GIT_TEMPLATE_DIR",
    "GIT_CONFIG",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_PARAMETERS",
    "GCONV_PATH",
    "ZDOTDIR",
    "INPUTRC",
];

/// What setting a variable does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Nothing the analysis cares about.
    None,
    /// The value is a command line (analyse it).
    Command,
    /// A file is loaded or run first (fail closed).
    File,
    /// `PATH` changed to something other than system directories.
    Path,
}

/// The effect of setting `name` to `value`.
pub fn effect(name: &str, value: &str) -> Effect {
    if value.is_empty() && name != "PATH" {
        return Effect::None;
    }
    if name == "PATH" {
        return if system_path(value) {
            Effect::None
        } else {
            Effect::Path
        };
    }
    if COMMAND_VARS.contains(&name) {
        return Effect::Command;
    }
    let path_like = value.contains('/') || value.contains('.');
    if FILE_VARS.contains(&name) || name.starts_with("BASH_FUNC_") || (name == "ENV" && path_like) {
        return Effect::File;
    }
    Effect::None
}

/// A command-valued variable's value as shell text (`LESSOPEN='|cmd %s'` runs `cmd %s`).
pub fn command_text(name: &str, value: &str) -> String {
    if name.starts_with("LESS") {
        return value.trim_start_matches(['|', '-']).to_string();
    }
    value.to_string()
}

/// Directories programs are installed in (a `PATH` made of these, and the old `$PATH`, is
/// not a change that hides another program).
pub const SYSTEM_DIRS: &[&str] = &[
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
    "/usr/games",
    "/usr/local/games",
    "/snap/bin",
    "/opt/homebrew/bin",
    "/opt/homebrew/sbin",
    "/usr/lib/git-core",
];

fn system_path(value: &str) -> bool {
    !value.is_empty()
        && value.split(':').all(|d| {
            let d = d.trim_end_matches('/');
            SYSTEM_DIRS.contains(&d) || d == "$PATH" || d == "${PATH}"
        })
}

/// Is this program word a path into a system directory (so its content is a known program)?
pub fn system_program(path: &str) -> bool {
    match path.rsplit_once('/') {
        Some((dir, name)) if !name.is_empty() => {
            let dir = crate::paths::clean_absolute(dir);
            path.starts_with('/') && SYSTEM_DIRS.contains(&dir.as_str())
        }
        _ => false,
    }
}
