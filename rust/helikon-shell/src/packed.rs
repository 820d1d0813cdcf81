//! The analysis as the analyzer builds it: every program name, argument and command text in
//! one buffer, so a command costs no allocation of its own (its redirections, wrappers and
//! environment, usually empty, are small vectors).
//!
//! [`Analysis`] is the owned form (one `String` per field) that the policy and the JSON output
//! use; [`PackedAnalysis::into_analysis`] converts. The Python binding keeps the packed form and
//! creates Python strings from it only when a field is read.

use std::ops::Range;

use crate::model::{
    Analysis, Assignment, BareRedirection, Command, Redirection, Unanalysable, Via,
};

/// A command whose strings live in its [`PackedAnalysis`]'s buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackedCommand {
    program: Range<usize>,
    text: Range<usize>,
    /// Indices into the analysis's argument spans.
    argv: Range<usize>,
    pub redirections: Vec<Redirection>,
    pub line: u32,
    pub via: Vec<Via>,
    pub env: Vec<(String, String)>,
    pub cwd: Option<String>,
}

/// The full analysis of a command string, packed (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackedAnalysis {
    buf: String,
    /// Byte ranges of `buf`: every command's arguments, in order.
    words: Vec<Range<usize>>,
    commands: Vec<PackedCommand>,
    pub unanalysable: Vec<Unanalysable>,
    pub assignments: Vec<Assignment>,
    pub redirections: Vec<BareRedirection>,
}

/// A view of one packed command.
#[derive(Debug, Clone, Copy)]
pub struct CommandRef<'a> {
    an: &'a PackedAnalysis,
    cmd: &'a PackedCommand,
}

impl<'a> CommandRef<'a> {
    fn str(&self, r: &Range<usize>) -> &'a str {
        self.an.buf.get(r.clone()).unwrap_or("")
    }

    /// The program name (see [`Command::program`]).
    pub fn program(&self) -> &'a str {
        self.str(&self.cmd.program)
    }

    /// The argument vector (see [`Command::argv`]).
    pub fn argv(&self) -> impl ExactSizeIterator<Item = &'a str> + Clone + 'a {
        let an = self.an;
        an.words
            .get(self.cmd.argv.clone())
            .unwrap_or(&[])
            .iter()
            .map(move |r| an.buf.get(r.clone()).unwrap_or(""))
    }

    /// The source text of the sub-command.
    pub fn text(&self) -> &'a str {
        self.str(&self.cmd.text)
    }

    pub fn redirections(&self) -> &'a [Redirection] {
        &self.cmd.redirections
    }

    pub fn line(&self) -> u32 {
        self.cmd.line
    }

    pub fn via(&self) -> &'a [Via] {
        &self.cmd.via
    }

    pub fn env(&self) -> &'a [(String, String)] {
        &self.cmd.env
    }

    /// The owned form.
    pub fn to_command(&self) -> Command {
        Command {
            program: self.program().to_string(),
            argv: self.argv().map(String::from).collect(),
            redirections: self.cmd.redirections.clone(),
            line: self.cmd.line,
            via: self.cmd.via.clone(),
            text: self.text().to_string(),
            env: self.cmd.env.clone(),
            cwd: self.cmd.cwd.clone(),
        }
    }

    /// The directory the command acts in (see [`Command::cwd`]).
    pub fn cwd(&self) -> Option<&'a str> {
        self.cmd.cwd.as_deref()
    }
}

/// The parts of a command being added (see [`PackedAnalysis::push_command`]).
pub(crate) struct NewCommand<'s, I> {
    pub program: &'s str,
    pub argv: I,
    pub text: &'s str,
    pub redirections: Vec<Redirection>,
    pub line: u32,
    pub via: Vec<Via>,
    pub env: Vec<(String, String)>,
    pub cwd: Option<String>,
}

impl PackedAnalysis {
    /// An empty analysis with room for the commands of `src`.
    pub(crate) fn for_source(src: &str) -> PackedAnalysis {
        PackedAnalysis {
            buf: String::with_capacity(src.len().saturating_mul(2).saturating_add(16)),
            words: Vec::with_capacity(src.len() / 4 + 4),
            commands: Vec::with_capacity(4),
            ..PackedAnalysis::default()
        }
    }

    fn push_str(&mut self, s: &str) -> Range<usize> {
        let start = self.buf.len();
        self.buf.push_str(s);
        start..self.buf.len()
    }

    /// Add a command; returns its index. When `program` is the tail of `argv[0]` (the usual
    /// case: a basename) it is not stored twice.
    pub(crate) fn push_command<'s, I>(&mut self, c: NewCommand<'s, I>) -> usize
    where
        I: Iterator<Item = &'s str>,
    {
        let first = self.words.len();
        for w in c.argv {
            let r = self.push_str(w);
            self.words.push(r);
        }
        let argv = first..self.words.len();
        let program = match self.words.get(first) {
            Some(w0)
                if self
                    .buf
                    .get(w0.clone())
                    .is_some_and(|s| s.ends_with(c.program)) =>
            {
                w0.end - c.program.len()..w0.end
            }
            _ => self.push_str(c.program),
        };
        let text = self.push_str(c.text);
        self.commands.push(PackedCommand {
            program,
            text,
            argv,
            redirections: c.redirections,
            line: c.line,
            via: c.via,
            env: c.env,
            cwd: c.cwd,
        });
        self.commands.len() - 1
    }

    /// The commands, in resolution order.
    pub fn commands(&self) -> impl ExactSizeIterator<Item = CommandRef<'_>> + Clone {
        self.commands
            .iter()
            .map(move |cmd| CommandRef { an: self, cmd })
    }

    /// One command by index.
    pub fn command(&self, i: usize) -> Option<CommandRef<'_>> {
        self.commands.get(i).map(|cmd| CommandRef { an: self, cmd })
    }

    pub(crate) fn command_mut(&mut self, i: usize) -> Option<&mut PackedCommand> {
        self.commands.get_mut(i)
    }

    pub fn command_count(&self) -> usize {
        self.commands.len()
    }

    /// True when everything was resolved statically.
    pub fn is_analysable(&self) -> bool {
        self.unanalysable.is_empty()
    }

    /// The owned form.
    pub fn into_analysis(self) -> Analysis {
        let commands = self.commands().map(|c| c.to_command()).collect();
        Analysis {
            commands,
            unanalysable: self.unanalysable,
            assignments: self.assignments,
            redirections: self.redirections,
        }
    }
}
