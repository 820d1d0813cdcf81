//! The analysis budget: how large, how deep and how wordy a command may be before it is "not
//! analysable".
//!
//! Every limit is a documented default, configurable per call ([`crate::analyze_with`]) and
//! per policy (the `limits` object of the rules JSON). A command over a limit is not an
//! error: the analysis records an [`crate::Unanalysable`] entry whose reason names the limit
//! (`over the analysis limit max_bytes=4194304`), so a deny list treats it as a possible match
//! and an allow list never covers it. The limits also bound the analyser's own resources: no
//! recursion the input controls goes deeper than `max_depth` frames, and total work is linear
//! in the input (every byte lexed or copied into the result is charged to a work budget of
//! [`Limits::work_factor`] times the input plus [`Limits::work_slack`] bytes, by default
//! [`DEFAULT_WORK_FACTOR`] and [`DEFAULT_WORK_SLACK`]).

use serde::{Deserialize, Serialize};

/// Default for [`Limits::max_bytes`]: 4 MiB.
pub const DEFAULT_MAX_BYTES: usize = 4 << 20;
/// Default for [`Limits::max_depth`].
pub const DEFAULT_MAX_DEPTH: usize = 24;
/// Default for [`Limits::max_words`]: 1 Mi words.
pub const DEFAULT_MAX_WORDS: usize = 1 << 20;
/// The largest `max_depth` accepted: every level costs a few stack frames of the analyser.
pub const MAX_MAX_DEPTH: usize = 100;
/// Default for [`Limits::work_factor`]: the work budget is this many times the input length...
pub const DEFAULT_WORK_FACTOR: usize = 4;
/// ...plus, by default, this many bytes ([`Limits::work_slack`]).
pub const DEFAULT_WORK_SLACK: usize = 1 << 20;

/// Limits on one analysis (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Longest command analysed, in bytes; a longer one is not analysed at all.
    pub max_bytes: usize,
    /// Deepest nesting: substitutions, re-entered strings (`bash -c`, `eval`, here-documents
    /// fed to a shell), compound commands (`{ }`, `( )`, `if`, loops, `case`), wrapper chains
    /// (`sudo env nice …`) and program-run chains (`find -exec find -exec …`) each count one
    /// level.
    pub max_depth: usize,
    /// Most words: lexed tokens of one script, and the argument, environment, wrapper and
    /// redirection entries of all resolved commands together.
    pub max_words: usize,
    /// Work budget, per byte of input: every byte lexed (re-entered strings and here-document
    /// bodies count again) or copied into the result is charged; the budget is
    /// `work_factor` x the input length + `work_slack` bytes.
    pub work_factor: usize,
    /// Work budget, fixed part in bytes (see [`Limits::work_factor`]).
    pub work_slack: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_bytes: DEFAULT_MAX_BYTES,
            max_depth: DEFAULT_MAX_DEPTH,
            max_words: DEFAULT_MAX_WORDS,
            work_factor: DEFAULT_WORK_FACTOR,
            work_slack: DEFAULT_WORK_SLACK,
        }
    }
}

impl Limits {
    /// Check the values.
    ///
    /// # Errors
    /// A message naming the field when a limit is 0 or `max_depth` is over [`MAX_MAX_DEPTH`].
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in [
            ("max_bytes", self.max_bytes),
            ("max_depth", self.max_depth),
            ("max_words", self.max_words),
            ("work_factor", self.work_factor),
            ("work_slack", self.work_slack),
        ] {
            if v == 0 {
                return Err(format!("limits.{name} must be at least 1, got 0"));
            }
        }
        if self.max_depth > MAX_MAX_DEPTH {
            return Err(format!(
                "limits.max_depth must be at most {MAX_MAX_DEPTH} (each level uses stack), got {}",
                self.max_depth
            ));
        }
        Ok(())
    }

    /// The limits with `max_depth` clamped to `1..=MAX_MAX_DEPTH` and the others to at least 1
    /// (what the analyser applies whatever it is given).
    pub fn clamped(&self) -> Limits {
        Limits {
            max_bytes: self.max_bytes.max(1),
            max_depth: self.max_depth.clamp(1, MAX_MAX_DEPTH),
            max_words: self.max_words.max(1),
            work_factor: self.work_factor.max(1),
            work_slack: self.work_slack.max(1),
        }
    }

    /// The reason recorded for a command over `max_bytes`.
    pub fn too_long(&self, len: usize) -> String {
        format!(
            "command is {len} bytes, over the analysis limit max_bytes={}",
            self.max_bytes
        )
    }

    /// The reason recorded for nesting past `max_depth`.
    pub fn too_deep(&self) -> String {
        format!(
            "nesting too deep (over the analysis limit max_depth={})",
            self.max_depth
        )
    }

    /// The reason recorded past `max_words`.
    pub fn too_many_words(&self) -> String {
        format!(
            "too many words (over the analysis limit max_words={})",
            self.max_words
        )
    }

    /// The reason recorded when the work budget runs out.
    pub fn out_of_work(&self) -> String {
        format!(
            "analysis work budget exceeded (over the analysis limit work_factor={} with \
             work_slack={}: {} x the input + {} bytes)",
            self.work_factor, self.work_slack, self.work_factor, self.work_slack
        )
    }

    /// The work budget for an input of `len` bytes.
    pub fn work_budget(&self, len: usize) -> usize {
        len.saturating_mul(self.work_factor)
            .saturating_add(self.work_slack)
    }
}
