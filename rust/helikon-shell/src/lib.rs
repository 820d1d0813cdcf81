//! helikon-shell: static analysis of Bash commands for permission rules.
//!
//! # Use cases
//! - Split a Bash command string into every simple command it runs, through control operators,
//!   compound commands (`if`/loops/`case`, `{ …; }`, subshells, function bodies), command and
//!   process substitutions, here-documents, `bash -c`/`eval`/`trap`/`alias` strings,
//!   `find -exec`, `xargs`, `watch`, `su -c`, git/tar/ssh/rsync options that take commands,
//!   and wrappers (`sudo`, `env`, `timeout`, `nice`, …) — [`analyze`].
//! - Match deny lists, allow lists and guard rules against that analysis, with an explanation
//!   naming the rule, the sub-command and its line — [`CommandPolicy`].
//! - Match gitignore-style path rules for read/edit permissions — [`PathRule`], [`clean_path`].
//!
//! # Fail-closed design
//! Anything that cannot be resolved statically (a program given by a variable, `eval "$x"`,
//! a shell reading commands from a pipe, an unterminated quote, nesting past [`MAX_DEPTH`],
//! inline interpreter code that can start programs) is recorded in
//! [`Analysis::unanalysable`]. A deny list treats such a command as a possible match (verdict
//! `ask` by default); an allow list never covers it. Allow lists are also not satisfied by a
//! listed program configured to run other code (git `-c core.pager=…`, `GIT_SSH_COMMAND`,
//! `LD_PRELOAD`, …) or run through a privileged wrapper (`sudo`). Data stays data: comments,
//! quoted arguments, a here-document fed to `cat`, `command -v rm` and `which rm` run nothing.
//!
//! # Compatibility
//! Behaviour follows the reference matcher's vectors (`shared/conformance/command_match.json`,
//! `guard_rules.json`, `path_rules.json`) except where the reference records a limitation;
//! there helikon is stricter: nested execution is followed, `/bin/rm` is `rm`, the re-entry
//! bound is [`MAX_DEPTH`] rather than 3, a deny list also matches the wrappers a command runs
//! through (`deny: ["sudo"]` catches `sudo ls`), `sudo` is never transparent for an allow
//! list, and a recursive `rm` at `/` or `~` is guarded with or without `-f`.
//!
//! # Limitations
//! Static analysis cannot see into script files, so `bash ./x.sh` is the program `bash` (a
//! file written earlier in the same command and then run is flagged; a path in the workspace
//! or `/tmp` run as a program, or any name after `PATH` changed, is unanalysable). Inline
//! interpreter code (`python -c`) is not parsed: it is unanalysable unless every identifier is
//! in a small inert vocabulary (`inline.rs`). Path rules are lexical, not a sandbox. The
//! per-class account of what is analysed and what fails closed is `docs/design/matcher.md`.

//! # Test strategy
//! The conformance vectors run as cargo tests (`tests/conformance_*.rs`), as do field cases
//! BR-17, BR-18 and BR-20 and the adversarial suite in the repository's
//! `tests/data/bash_adversarial.json` (shared with the Python tests). Property tests check that
//! arbitrary input never panics and that analysis time stays linear; `tests/words.rs` pins word
//! rendering on quoting edge cases through both result forms; `fuzz/` has cargo-fuzz targets for
//! the lexer (which also checks that the packed form converts to the same analysis) and the
//! policy.
//!
//! The lexer and walker are hand-written rather than built on a parser crate: they must accept
//! malformed input, keep going past errors with a partial analysis, and bound recursion.
//!
//! # Performance
//! Analysis is allocation-bound, so the hot paths avoid allocating: a literal that is a run of
//! the source is kept as a span of it (most words allocate nothing), a word's rendered value is
//! computed once, plain words take a fast path, the walk keeps every command's words in one
//! vector, and the analyzer writes every program name, argument and command text into one
//! buffer ([`analyze_packed`], [`PackedAnalysis`]); [`analyze`] converts that to the owned
//! [`Analysis`]. Token vectors are recycled per thread (a few, bounded in size). The Python
//! binding returns the packed form and creates Python objects only for the fields read.
//! `benches/bench_shell.py` in the repository measures it against bashlex.

mod allow;
mod analyze;
mod braces;
mod cwd;
mod dash;
mod destructive;
mod env_code;
mod error;
mod escapes;
mod guards;
mod inline;
mod lex_word;
mod lexer;
mod limits;
mod links;
mod model;
mod packed;
mod paths;
mod policy;
mod programs;
mod runners;
mod script;
mod smuggle;
mod subscripts;
mod track;
mod word;
mod wrappers;
mod writer_table;
mod writers;

pub use allow::AllowPattern;
pub use analyze::{analyze, analyze_packed, analyze_packed_with, analyze_with};
pub use destructive::DESTRUCTIVE;
pub use error::ShellError;
pub use guards::{
    is_protected_dotpath, is_protected_system_path, PROTECTED_DOTPATH, PROTECTED_PATH,
    RM_ROOT_OR_HOME,
};
pub use lexer::MAX_DEPTH;
pub use limits::{
    Limits, DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH, DEFAULT_MAX_WORDS, DEFAULT_WORK_FACTOR,
    DEFAULT_WORK_SLACK, MAX_MAX_DEPTH,
};
pub use model::{Analysis, Assignment, BareRedirection, Command, Redirection, Unanalysable, Via};
pub use packed::{CommandRef, PackedAnalysis, PackedCommand};
pub use paths::{clean_path, path_rule_matches, PathRule};
pub use policy::{Action, CommandPolicy, Match, Verdict};
pub use smuggle::{dangerous_env, git_code_key};

/// The top-level simple commands of a script as source text (the reference's "segments").
pub fn split(command: &str) -> Vec<String> {
    let limits = Limits::default();
    if command.len() > limits.max_bytes {
        return Vec::new();
    }
    lexer::parse(command, 1, 0, &limits).segments(&limits)
}
