//! Working-directory tracking: where a command acts, after `cd`/`pushd` earlier in the same
//! command string (and `git -C`, `make -C`, `tar -C` for one command).
//!
//! The analysis starts in the agent's working directory ("the start"), whose location it
//! does not know. `cd /`, `cd ~`, `cd "$HOME"` and absolute paths are followed exactly;
//! relative moves inside the start stay "the start"; a move above it (`cd ..`), to a
//! variable (`cd "$DIR"`), back (`cd -`, `popd`) or anything else makes the directory
//! unknown, and the guards then treat a wipe of everything in it (`rm -rf .`, `rm -rf *`) as
//! a possible wipe of `/` or `~`.

use crate::paths::{clean_absolute, clean_path};

/// The directory commands act in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Cwd {
    /// The directory the command string started in.
    #[default]
    Start,
    /// An absolute path, or one starting with `~`.
    Known(String),
    /// Not known statically.
    Unknown,
}

/// The label stored on a command: `None` for the start, `?` when unknown, else the path.
pub const UNKNOWN: &str = "?";

impl Cwd {
    /// The directory after `cd ARG` (`None`: no argument, home). `dynamic`: the argument has
    /// expansions (only `$HOME`/`${HOME}` at its start are followed).
    pub fn cd(&self, arg: Option<(&str, bool)>) -> Cwd {
        let Some((arg, dynamic)) = arg else {
            return Cwd::Known("~".into());
        };
        let arg = home_form(arg);
        if arg == "-" || (dynamic && !arg.starts_with('~')) || arg.contains('$') {
            return Cwd::Unknown;
        }
        if let Some(rest) = arg.strip_prefix('~') {
            if !rest.is_empty() && !rest.starts_with('/') {
                return Cwd::Unknown; // `~user`
            }
            return Cwd::Known(join("~", rest));
        }
        if arg.starts_with('/') {
            return Cwd::Known(clean_absolute(&arg));
        }
        match self {
            Cwd::Start => {
                if clean_path(&arg).starts_with("..") {
                    Cwd::Unknown
                } else {
                    Cwd::Start
                }
            }
            Cwd::Known(base) => Cwd::Known(join(base, &arg)),
            Cwd::Unknown => Cwd::Unknown,
        }
    }

    /// The label stored on a command (see [`UNKNOWN`]).
    pub fn label(&self) -> Option<String> {
        match self {
            Cwd::Start => None,
            Cwd::Known(p) => Some(p.clone()),
            Cwd::Unknown => Some(UNKNOWN.into()),
        }
    }
}

/// `$HOME…` and `${HOME}…` written as `~…`.
fn home_form(arg: &str) -> String {
    for h in ["${HOME}", "$HOME"] {
        if let Some(rest) = arg.strip_prefix(h) {
            if rest.is_empty() || rest.starts_with('/') {
                return format!("~{rest}");
            }
        }
    }
    arg.to_string()
}

/// `base` (absolute or `~…`) joined with a relative `rel`, cleaned.
pub fn join(base: &str, rel: &str) -> String {
    match base.strip_prefix('~') {
        Some(rest) => {
            let joined = clean_absolute(&format!("/{rest}/{rel}"));
            if joined == "/" {
                "~".into()
            } else {
                format!("~{joined}")
            }
        }
        None => clean_absolute(&format!("{base}/{rel}")),
    }
}

/// A target written relative to a command's directory label, resolved when the directory is
/// known (`None` when it is the start or unknown, or the target is not relative).
pub fn resolve(cwd: Option<&str>, target: &str) -> Option<String> {
    let dir = cwd?;
    if dir == UNKNOWN || target.starts_with(['/', '~', '$']) || target.is_empty() {
        return None;
    }
    Some(join(dir, target))
}

/// The directory a `git -C DIR`, `make -C DIR` or `tar -C DIR` command acts in.
pub(crate) fn dash_c_dir<'a>(
    program: &str,
    args: &[&'a crate::word::Word],
) -> Option<(&'a str, bool)> {
    if !matches!(
        program,
        "git" | "make" | "gmake" | "tar" | "gtar" | "bsdtar"
    ) {
        return None;
    }
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let s = w.text();
        if s == "-C" || s == "--directory" {
            return args.get(i + 1).map(|d| (d.text(), d.is_dynamic()));
        }
        if let Some(d) = s.strip_prefix("--directory=") {
            return Some((d, w.is_dynamic()));
        }
        if program == "git" && !s.starts_with('-') {
            return None; // past the global options
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cd_moves() {
        let s = Cwd::Start;
        assert_eq!(s.cd(None), Cwd::Known("~".into()));
        assert_eq!(s.cd(Some(("/", false))), Cwd::Known("/".into()));
        assert_eq!(s.cd(Some(("$HOME", true))), Cwd::Known("~".into()));
        assert_eq!(s.cd(Some(("~/", false))), Cwd::Known("~".into()));
        assert_eq!(s.cd(Some(("build", false))), Cwd::Start);
        assert_eq!(s.cd(Some(("..", false))), Cwd::Unknown);
        assert_eq!(s.cd(Some(("$DIR", true))), Cwd::Unknown);
        assert_eq!(s.cd(Some(("-", false))), Cwd::Unknown);
        let etc = s.cd(Some(("/etc", false)));
        assert_eq!(etc.cd(Some(("..", false))), Cwd::Known("/".into()));
        assert_eq!(
            resolve(Some("/etc"), "passwd").as_deref(),
            Some("/etc/passwd")
        );
        assert_eq!(resolve(Some("~/.ssh"), "k").as_deref(), Some("~/.ssh/k"));
        assert_eq!(resolve(Some("/"), ".").as_deref(), Some("/"));
        assert_eq!(resolve(Some("~"), "*").as_deref(), Some("~/*"));
        assert_eq!(resolve(None, "x"), None);
    }
}
