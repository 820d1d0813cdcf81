//! State the analysis carries from one command to the next: variables that run code
//! (`env_code.rs`), `PATH` changes, copies and links of programs, and the working directory
//! (`cwd.rs`).

use crate::analyze::{basename, norm_file, Analyzer, Ctx};
use crate::cwd::Cwd;
use crate::env_code::{self, Effect};
use crate::word::Word;

/// Where a command runs relative to the shell that runs the commands after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// In that shell (`{ …; }`, `eval`): a `cd` moves the later commands.
    Same,
    /// Alone in a pipeline element's subshell: a `cd` moves nothing.
    Alone,
    /// In a subshell that may hold later commands of its own (`( … )`, a piped group, a
    /// substitution, a function body, a child shell).
    Sub,
}

impl Analyzer {
    /// A variable set to `value` (a prefix assignment, `env NAME=…`, `export`, or alone):
    /// analyse what it makes programs run (see `env_code.rs`).
    pub fn assigned(&mut self, name: &str, value: &str, dynamic: bool, ctx: &Ctx<'_>) {
        // `x='a[$(cmd)]'` or `x='$(cmd)'` (quoted, so nothing ran yet): bash runs the text
        // when the variable is used in arithmetic (`$((x))`, `((x))`, `let x`, `[[ x -eq 0 ]]`,
        // `declare -i`) or expanded with `${x@P}`. The uses are not tracked, so the text
        // fails closed here.
        if !dynamic && (value.contains("$(") || value.contains('`')) {
            self.issue(
                &format!(
                    "variable `{name}` holds command-substitution text, which arithmetic or \
                     ${{{name}@P}} would run"
                ),
                ctx.text,
                ctx.line,
            );
        }
        if name == "CDPATH" && !value.is_empty() {
            self.cdpath = true;
        }
        match env_code::effect(name, value) {
            Effect::None => {}
            Effect::Path => self.path_changed = true,
            Effect::File => self.issue(
                &format!("{name} makes programs load or run `{value}` first"),
                ctx.text,
                ctx.line,
            ),
            Effect::Command => {
                let code = env_code::command_text(name, value);
                self.reenter_word(&code, dynamic, format!("env {name}"), ctx);
            }
        }
    }

    /// Fail closed on a program whose content is not known: a path outside the system
    /// directories, a file written earlier in the command, or any name looked up after
    /// `PATH` was changed.
    pub(crate) fn check_program_path(&mut self, word: &str, name: &str, ctx: &Ctx<'_>) {
        if word.contains('/') {
            if self.written.contains(norm_file(word)) {
                self.issue(
                    "runs a file written earlier in the same command",
                    word,
                    ctx.line,
                );
            } else if word.starts_with("/proc/") || word.starts_with("/dev/fd/") {
                self.issue(
                    "runs a process image under another name (`/proc/self/exe` is the shell)",
                    word,
                    ctx.line,
                );
            } else if !env_code::system_program(word) {
                self.issue(
                    "runs a program from a path whose content is not known (a file in the \
                     workspace or a temporary directory)",
                    word,
                    ctx.line,
                );
            }
        } else if self.path_changed && !is_builtin(name) {
            self.issue(
                "PATH was changed earlier in the command, so this name may be another program",
                word,
                ctx.line,
            );
        }
    }

    /// Track what a command changes for the commands after it: the directory (`cd`,
    /// `pushd`, `popd`) and copies or links of programs (`cp`, `ln`, `install`, `mv`,
    /// `hash -p`). `scope`: where the command runs ([`Scope`]); a `cd` in a subshell leaves
    /// the later commands where they were, which the flat walk cannot place exactly (the
    /// subshell may hold more commands), so a move there makes the directory unknown (the
    /// guards' worst case) rather than followed; alone in a pipeline element it moves
    /// nothing.
    pub(crate) fn after_command(&mut self, lower: &str, args: &[&Word], scope: Scope) {
        let operands: Vec<&Word> = args
            .iter()
            .copied()
            .filter(|w| !w.text().starts_with('-') || w.text() == "-")
            .collect();
        match lower {
            "cd" | "pushd" => {
                let arg = operands.first().map(|w| (w.text(), w.is_dynamic()));
                // With `CDPATH` set, `cd etc` may resolve under any directory it lists.
                let relative = arg.is_some_and(|(a, _)| {
                    !a.starts_with(['/', '~', '.']) && !a.starts_with("$HOME") && a != "-"
                });
                let moved = if self.cdpath && relative {
                    Cwd::Unknown
                } else {
                    self.cwd.cd(arg)
                };
                self.cwd = match scope {
                    Scope::Same => moved,
                    Scope::Alone => return,
                    Scope::Sub if moved == self.cwd => moved,
                    Scope::Sub => Cwd::Unknown,
                };
            }
            "popd" if scope == Scope::Alone => {}
            "popd" => self.cwd = Cwd::Unknown,
            "cp" | "ln" | "install" | "mv" => {
                if let [src, dst] = operands.as_slice() {
                    let mut key = norm_file(dst.text()).to_string();
                    if key.ends_with('/') {
                        key.push_str(basename(src.text()));
                    }
                    let program = if src.is_dynamic() {
                        String::new()
                    } else {
                        basename(src.text()).to_string()
                    };
                    self.aliases.insert(key, program);
                }
            }
            "hash" => {
                if let Some(p) = args.iter().position(|w| w.text() == "-p") {
                    if let (Some(path), Some(n)) = (args.get(p + 1), args.get(p + 2)) {
                        let program = if path.is_dynamic() {
                            String::new()
                        } else {
                            basename(path.text()).to_string()
                        };
                        self.aliases.insert(n.text().to_string(), program);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Shell builtins and keywords: not looked up through `PATH`.
fn is_builtin(name: &str) -> bool {
    matches!(
        name,
        "cd" | "echo"
            | "printf"
            | "pwd"
            | "export"
            | "unset"
            | "set"
            | "read"
            | "test"
            | "["
            | "true"
            | "false"
            | ":"
            | "eval"
            | "source"
            | "."
            | "type"
            | "alias"
            | "unalias"
            | "hash"
            | "let"
            | "local"
            | "declare"
            | "typeset"
            | "readonly"
            | "return"
            | "shift"
            | "trap"
            | "ulimit"
            | "umask"
            | "wait"
            | "jobs"
            | "fg"
            | "bg"
            | "kill"
            | "exit"
            | "break"
            | "continue"
            | "getopts"
            | "times"
            | "history"
            | "dirs"
            | "pushd"
            | "popd"
            | "shopt"
            | "help"
            | "mapfile"
            | "readarray"
            | "builtin"
            | "command"
            | "exec"
            | "coproc"
            | "time"
    )
}
