//! Path rules: gitignore-style globs for read/edit rules, and the lexical path cleaner.
//!
//! A pattern without `/` matches at any depth (`.env`, `*.pem`); a pattern with `/` is
//! anchored at the root (`src/**`); `*` and `?` never cross `/`, `**` spans components;
//! `[…]` classes and `{a,b}` alternation work; matching is ASCII case-insensitive. Candidate
//! paths are cleaned lexically first (`..` collapsed), so `src/../.git/config` is
//! `.git/config`. Path rules are lexical and advisory: the filesystem boundary is the sandbox.

use globset::{GlobBuilder, GlobMatcher};

use crate::error::ShellError;

/// Lexically clean a path: backslashes to `/`, empty and `.` components dropped (so a leading
/// `/` disappears), `..` pops the previous component or is kept when nothing can be popped.
pub fn clean_path(path: &str) -> String {
    let p = path.replace('\\', "/");
    let mut out: Vec<&str> = Vec::new();
    for comp in p.split('/') {
        match comp {
            "" | "." => {}
            ".." => {
                if out.last().is_some_and(|l| *l != "..") {
                    out.pop();
                } else {
                    out.push("..");
                }
            }
            c => out.push(c),
        }
    }
    out.join("/")
}

/// Clean an absolute path, keeping it absolute (`//etc/./x/../y` -> `/etc/y`); `..` at the
/// root stays at the root.
pub fn clean_absolute(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for comp in path.split('/') {
        match comp {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    format!("/{}", out.join("/"))
}

/// One compiled path rule.
#[derive(Debug, Clone)]
pub struct PathRule {
    pattern: String,
    matcher: Option<GlobMatcher>,
}

impl PathRule {
    /// Compile a pattern. A pattern that normalises to nothing (`/`, `./`, ``) never matches.
    ///
    /// # Errors
    /// [`ShellError::InvalidGlob`] when the glob does not compile.
    pub fn new(pattern: &str) -> Result<PathRule, ShellError> {
        let mut p = pattern.replace('\\', "/");
        if let Some(r) = p.strip_prefix("./") {
            p = r.to_string();
        }
        if let Some(r) = p.strip_prefix('/') {
            p = r.to_string();
        }
        if p.is_empty() {
            return Ok(PathRule {
                pattern: pattern.to_string(),
                matcher: None,
            });
        }
        let glob = if p.contains('/') || p == "**" {
            p
        } else {
            format!("**/{p}")
        };
        let matcher = GlobBuilder::new(&glob)
            .literal_separator(true)
            .case_insensitive(true)
            .backslash_escape(false)
            .build()
            .map_err(|e| ShellError::InvalidGlob {
                pattern: pattern.to_string(),
                message: e.kind().to_string(),
            })?
            .compile_matcher();
        Ok(PathRule {
            pattern: pattern.to_string(),
            matcher: Some(matcher),
        })
    }

    /// The pattern as given.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Does the (lexically cleaned) path match?
    pub fn matches(&self, path: &str) -> bool {
        match &self.matcher {
            Some(m) => m.is_match(clean_path(path)),
            None => false,
        }
    }
}

/// One-shot form of [`PathRule::matches`].
///
/// # Errors
/// [`ShellError::InvalidGlob`] when the glob does not compile.
pub fn path_rule_matches(pattern: &str, path: &str) -> Result<bool, ShellError> {
    Ok(PathRule::new(pattern)?.matches(path))
}
