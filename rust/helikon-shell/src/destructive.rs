//! The `destructive_command` guard: subcommands that discard uncommitted work or delete or
//! overwrite files, which the `rm` guard does not see.
//!
//! * `git clean` with `-f`/`--force` (in any cluster: `-fd`, `-xdf`), unless `-n`/`--dry-run`;
//! * `git reset --hard`; `git switch -f`/`--discard-changes`; `git rm -f`;
//!   `git checkout-index -f`; `git read-tree -u --reset`;
//! * long options also as git's unambiguous prefixes (`--har`, `--forc`);
//! * `git checkout` with a pathspec after `--`, a `.` pathspec, or `-f`/`--force`;
//! * `git restore` of the working tree (any pathspec, unless only `--staged`/`-S`);
//! * `find … -delete`; `truncate`; `shred`; `dd of=FILE` (device sinks such as `/dev/null`
//!   are not files).
//!
//! Equivalents of `rm` under a deny rule on `rm` (`unlink`, `rmdir`, `shred -u`, `find
//! -delete`) are the deny list's business, see [`rm_equivalent`].

use crate::model::Command;

/// The guard's name.
pub const DESTRUCTIVE: &str = "destructive_command";

/// Device sinks a write to which destroys nothing.
const SINKS: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
];

/// Why this command is destructive, if it is.
pub fn destructive(c: &Command) -> Option<String> {
    let args = c.args();
    match c.program.to_ascii_lowercase().as_str() {
        "git" => git(args),
        "find" if args.iter().any(|a| a == "-delete") => Some("find -delete deletes files".into()),
        "truncate" => Some("truncate overwrites files".into()),
        "shred" => Some("shred destroys files".into()),
        "dd" => args
            .iter()
            .filter_map(|a| a.strip_prefix("of="))
            .find(|t| !SINKS.contains(t))
            .map(|t| format!("dd overwrites `{t}`")),
        _ => None,
    }
}

/// Is `c` a program that removes files like `rm` (for a deny rule on `rm`)?
pub fn rm_equivalent(c: &Command) -> bool {
    match c.program.to_ascii_lowercase().as_str() {
        "unlink" | "rmdir" => true,
        "shred" => c
            .args()
            .iter()
            .any(|a| a == "-u" || a.starts_with("--remove") || short_has(a, 'u')),
        _ => false,
    }
}

fn short_has(a: &str, flag: char) -> bool {
    a.len() > 1 && a.starts_with('-') && !a.starts_with("--") && a[1..].contains(flag)
}

fn git(args: &[String]) -> Option<String> {
    let (_, sub, rest) = crate::smuggle::git_split(args);
    let sub = sub?;
    // git accepts any unambiguous prefix of a long option (`--har`, `--forc`).
    let long_is = |a: &str, long: &str| a == long || (a.len() >= 4 && long.starts_with(a));
    let has = |long: &str, short: char| {
        rest.iter()
            .take_while(|a| *a != "--")
            .any(|a| long_is(a, long) || short_has(a, short))
    };
    let has_long = |long: &str| {
        rest.iter()
            .take_while(|a| *a != "--")
            .any(|a| long_is(a, long))
    };
    match sub {
        "clean" if has("--force", 'f') && !has("--dry-run", 'n') => {
            Some("git clean -f deletes untracked files".into())
        }
        "reset" if has_long("--hard") => {
            Some("git reset --hard discards uncommitted changes".into())
        }
        "switch" if has("--force", 'f') || has_long("--discard-changes") => {
            Some("git switch --discard-changes discards uncommitted changes".into())
        }
        "rm" if has("--force", 'f') => {
            Some("git rm -f deletes files with uncommitted changes".into())
        }
        "checkout-index" if has("--force", 'f') => {
            Some("git checkout-index -f overwrites working-tree files".into())
        }
        "read-tree" if has_long("--reset") && rest.iter().any(|a| a == "-u") => {
            Some("git read-tree -u --reset overwrites working-tree files".into())
        }
        "checkout" => {
            let after_dashes = rest
                .iter()
                .position(|a| a == "--")
                .is_some_and(|p| p + 1 < rest.len());
            let dot = rest.iter().any(|a| a == "." || a == "./" || a == ":/");
            (after_dashes || dot || has("--force", 'f'))
                .then(|| "git checkout of paths discards uncommitted changes".into())
        }
        "restore" => {
            let staged_only = has("--staged", 'S') && !has("--worktree", 'W');
            let pathspec = rest.iter().any(|a| !a.starts_with('-'));
            (pathspec && !staged_only).then(|| "git restore discards uncommitted changes".into())
        }
        _ => None,
    }
}
