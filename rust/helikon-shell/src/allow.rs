//! Allow-list patterns: a program name, or a prefix of a command's parsed words.
//!
//! * `git`: the program with any arguments;
//! * `git status`: exactly these words (`git status --short` is not covered);
//! * `git log *`: these words, then any further arguments (none included);
//! * `npm run test:*`: the last word is a prefix (`test`, `test:unit`, `testing`), then any
//!   further arguments (the `:*` suffix of other tools' permission syntax);
//! * `*` inside a word is a wildcard within that one word (`git log --format=*`).
//!
//! Patterns are matched against the analysis, word by word after quote removal, never
//! against the raw text: a pattern cannot reach across `;`, `&&`, `|` or into a substitution
//! (those are separate sub-commands, each of which must be covered), and a multi-word pattern
//! does not cover a command that writes a file through a redirection (`git log > notes`).

use crate::analyze::basename;
use crate::error::ShellError;
use crate::lexer::{self, TokKind};
use crate::limits::Limits;
use crate::model::Command;

/// Redirection targets that are not files (writing to them changes nothing).
const NOT_FILES: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"];

/// One compiled allow pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowPattern {
    /// The pattern as written.
    pub raw: String,
    /// The program, lowercased basename.
    pub program: String,
    /// Argument patterns after the program (`*` is a wildcard within a word).
    words: Vec<String>,
    /// Any further arguments are allowed.
    rest: bool,
}

impl AllowPattern {
    /// Compile a pattern.
    ///
    /// # Errors
    /// [`ShellError::InvalidRules`] when the pattern is empty or is not one simple command of
    /// plain words (an operator, a redirection or a substitution in it).
    pub fn new(raw: &str) -> Result<AllowPattern, ShellError> {
        let bad = |why: &str| {
            ShellError::InvalidRules(format!(
                "allow pattern `{raw}` {why}; write the program and its leading words, e.g. \
                 `git log *`"
            ))
        };
        let script = lexer::parse(raw, 1, 0, &Limits::default());
        let mut words: Vec<String> = Vec::new();
        for tok in &script.tokens {
            match &tok.kind {
                TokKind::Word(w) if !w.has_nested() && !w.is_dynamic() => {
                    words.push(w.text().to_string());
                }
                TokKind::Word(_) => return Err(bad("has an expansion or substitution")),
                _ => return Err(bad("must be one simple command (no ; && | or redirection)")),
            }
        }
        if !script.issues.is_empty() {
            return Err(bad("does not parse"));
        }
        if words.is_empty() {
            return Err(bad("is empty"));
        }
        let program = basename(&words.remove(0)).to_ascii_lowercase();
        if program.contains('*') {
            return Err(bad("needs a program name without `*`"));
        }
        let mut rest = words.is_empty();
        if words.last().is_some_and(|w| w == "*") {
            words.pop();
            rest = true;
        } else if let Some(last) = words.last_mut() {
            if let Some(prefix) = last.strip_suffix(":*") {
                *last = format!("{prefix}*");
                rest = true;
            }
        }
        Ok(AllowPattern {
            raw: raw.to_string(),
            program,
            words,
            rest,
        })
    }

    /// Only a program name (covers any arguments, as before prefix patterns existed).
    pub fn is_program_only(&self) -> bool {
        self.words.is_empty() && self.rest
    }

    /// Does the pattern cover this command?
    pub fn covers(&self, c: &Command) -> bool {
        if !c.program.eq_ignore_ascii_case(&self.program) {
            return false;
        }
        if self.is_program_only() {
            return true;
        }
        let writes_file = c
            .redirections
            .iter()
            .any(|r| r.is_write() && !NOT_FILES.contains(&r.target.as_str()));
        if writes_file {
            return false;
        }
        let args = c.args();
        if args.len() < self.words.len() || (!self.rest && args.len() != self.words.len()) {
            return false;
        }
        self.words
            .iter()
            .zip(args)
            .all(|(p, a)| glob_word(p.as_bytes(), a.as_bytes()))
    }
}

/// `*`-only wildcard match of one word (iterative, backtracking to the last `*`).
fn glob_word(p: &[u8], t: &[u8]) -> bool {
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some(b'*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(&c) if c == t[ti] => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p[pi.min(p.len())..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::glob_word;

    #[test]
    fn glob_words() {
        assert!(glob_word(b"test*", b"test:unit"));
        assert!(glob_word(b"test*", b"test"));
        assert!(!glob_word(b"test*", b"tes"));
        assert!(glob_word(b"--format=*", b"--format=%H"));
        assert!(glob_word(b"a*b*c", b"axxbyyc"));
        assert!(!glob_word(b"a*b*c", b"axxbyy"));
        assert!(glob_word(b"status", b"status"));
        assert!(!glob_word(b"status", b"statusx"));
    }
}
