//! The crate's one error type.
//!
//! Every failure names what was refused or missing and why, in text that is safe to hand to a
//! model: paths are the caller's relative paths, never file contents or environment values.
use std::io;

/// Why a sandbox operation failed.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// A containment boundary refused the operation (a path escaping the root, a hard link to
    /// a file that may live outside, a symlink where a regular file is required).
    #[error("denied: {path}: {reason}")]
    Denied {
        /// The path as the caller gave it.
        path: String,
        /// Why it was refused.
        reason: String,
    },
    /// The kernel (or the process) cannot enforce what was asked; the backend refuses to run
    /// rather than silently running with weaker containment.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The configuration is invalid (unknown field, bad value, contradictory options).
    #[error("invalid sandbox configuration: {0}")]
    Config(String),
    /// The file does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// The path exists but is not what the operation needs (a directory where a regular file
    /// is required, a FIFO, a device).
    #[error("{path}: {what}")]
    NotRegular {
        /// The path as the caller gave it.
        path: String,
        /// What it is instead.
        what: String,
    },
    /// A read would exceed the caller's size cap.
    #[error("{path}: file is {size} bytes, over the {cap}-byte limit")]
    TooLarge {
        /// The path as the caller gave it.
        path: String,
        /// The file's size in bytes.
        size: u64,
        /// The cap in bytes.
        cap: u64,
    },
    /// The built-in self-test ran a probe that should have been refused and it was not (or a
    /// command that must work failed). The backend is not usable on this host.
    #[error("sandbox self-test failed: {0}")]
    SelfTest(String),
    /// Spawning or supervising the child failed.
    #[error("spawn failed: {0}")]
    Spawn(String),
    /// Any other I/O failure, with what was being done.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

impl SandboxError {
    /// Build a [`SandboxError::Denied`].
    pub fn denied(path: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::Denied {
            path: path.into(),
            reason: reason.into(),
        }
    }

    /// Wrap an I/O error with what was being done.
    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        Self::Io {
            context: context.into(),
            source,
        }
    }

    /// A short machine-readable name of the variant (used by the binding to pick the exception
    /// class and by tests).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Denied { .. } => "denied",
            Self::Unsupported(_) => "unsupported",
            Self::Config(_) => "config",
            Self::NotFound(_) => "not_found",
            Self::NotRegular { .. } => "not_regular",
            Self::TooLarge { .. } => "too_large",
            Self::SelfTest(_) => "self_test",
            Self::Spawn(_) => "spawn",
            Self::Io { .. } => "io",
        }
    }
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, SandboxError>;
