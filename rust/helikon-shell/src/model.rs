//! The analysis result: resolved commands, redirections, and what could not be resolved.
//!
//! These are the owned types the policy works on; they serialise to JSON
//! ([`Analysis::to_json`]). The analyzer itself builds the packed form
//! ([`crate::PackedAnalysis`]), which the Python binding keeps without converting.

use std::borrow::Cow;

use serde::Serialize;

use crate::lexer::RedirOp;

/// How a command was reached: a wrapper stripped in front of it, or a nesting construct.
/// Labels are usually static text, so they are `Cow` to avoid an allocation per use.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Via {
    /// A wrapper program (`sudo`, `timeout`, `xargs`, …) that runs the command.
    Wrapper(Cow<'static, str>),
    /// A nesting construct (`$(...)`, `bash -c`, `find -exec`, `function f`, …).
    Nested(Cow<'static, str>),
}

impl Via {
    pub fn label(&self) -> &str {
        match self {
            Via::Wrapper(s) | Via::Nested(s) => s,
        }
    }

    /// The label, by value.
    pub fn into_label(self) -> Cow<'static, str> {
        match self {
            Via::Wrapper(s) | Via::Nested(s) => s,
        }
    }
}

impl Serialize for Via {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.label())
    }
}

/// One redirection of a command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Redirection {
    /// `out` (`>`, `>|`, `&>`, `>&file`), `append` (`>>`, `&>>`), `in` (`<`), `read_write`
    /// (`<>`), `fd_dup` (`N>&M`, `<&N`), `heredoc` (`<<`, `<<-`), `herestring` (`<<<`).
    pub op: &'static str,
    /// The target after quote removal (for `fd_dup` the fd text, for `heredoc` the delimiter).
    pub target: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fd: Option<String>,
}

impl Redirection {
    pub fn op_name(op: RedirOp) -> &'static str {
        match op {
            RedirOp::Out => "out",
            RedirOp::Append => "append",
            RedirOp::In => "in",
            RedirOp::ReadWrite => "read_write",
            RedirOp::Dup | RedirOp::DupIn => "fd_dup",
            RedirOp::HereDoc => "heredoc",
            RedirOp::HereString => "herestring",
        }
    }

    /// Does this redirection write to its target (a file)?
    pub fn is_write(&self) -> bool {
        matches!(self.op, "out" | "append" | "read_write")
    }
}

/// One resolved command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Command {
    /// The program name: quotes and escapes removed, basename of a path (`/bin/rm` -> `rm`).
    pub program: String,
    /// The argument vector after quote removal; `argv[0]` is the program word as written
    /// (unquoted). Expansions appear as their source text (`$HOME`).
    pub argv: Vec<String>,
    pub redirections: Vec<Redirection>,
    /// 1-based line in the analysed text.
    pub line: u32,
    /// How the command was reached, outermost first.
    pub via: Vec<Via>,
    /// The source text of the sub-command (for messages).
    pub text: String,
    /// `NAME=value` assignments applying to this command (prefix or `env` arguments).
    pub env: Vec<(String, String)>,
    /// The directory the command acts in, when an earlier `cd` (or its own `-C DIR`) moved
    /// it: an absolute path, a `~` path, or `?` when unknown; `None` for the start directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

impl Command {
    /// The arguments after the program word.
    pub fn args(&self) -> &[String] {
        self.argv.get(1..).unwrap_or(&[])
    }

    /// Wrapper names the command runs through (its own and its enclosing commands').
    pub fn wrappers(&self) -> impl Iterator<Item = &str> {
        self.via.iter().filter_map(|v| match v {
            Via::Wrapper(w) => Some(w.as_ref()),
            Via::Nested(_) => None,
        })
    }
}

/// Something that could not be resolved statically.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unanalysable {
    pub reason: String,
    pub snippet: String,
    pub line: u32,
}

/// A shell variable assignment that is not the prefix of a command (`X=1; …`, `export X=1`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Assignment {
    pub name: String,
    pub value: String,
    pub line: u32,
}

/// A redirection that belongs to no command (`> file` alone, `exec > file`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BareRedirection {
    pub op: &'static str,
    pub target: String,
    pub line: u32,
}

/// The full analysis of a command string.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Analysis {
    pub commands: Vec<Command>,
    pub unanalysable: Vec<Unanalysable>,
    pub assignments: Vec<Assignment>,
    pub redirections: Vec<BareRedirection>,
}

impl Analysis {
    /// The resolved program names, in resolution order.
    pub fn programs(&self) -> Vec<&str> {
        self.commands.iter().map(|c| c.program.as_str()).collect()
    }

    /// True when everything was resolved statically.
    pub fn is_analysable(&self) -> bool {
        self.unanalysable.is_empty()
    }

    /// JSON text of the analysis.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string())
    }
}
