//! [`SandboxPolicy`] on platforms other than Linux: the native launcher (clone, Landlock,
//! seccomp, subreaper sweep) is Linux-only, so building a policy always fails closed with
//! [`SandboxError::Unsupported`]. The Python layer runs host-mode commands with its portable
//! POSIX runner there, and macOS has the Seatbelt backend.
use std::convert::Infallible;
use std::path::PathBuf;
use std::time::Duration;

use crate::config::SandboxConfig;
use crate::confined::ConfinedDir;
use crate::error::{Result, SandboxError};
use crate::guarantees::SandboxGuarantees;
use crate::outcome::RunOutcome;
use crate::probe::KernelFeatures;

/// Longest timeout accepted for one call.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// A compiled sandbox. Never constructed on this platform: [`SandboxPolicy::build`] refuses.
#[derive(Debug)]
pub struct SandboxPolicy {
    never: Infallible,
}

impl SandboxPolicy {
    /// Parse JSON and build.
    ///
    /// # Errors
    /// As [`SandboxPolicy::build`].
    pub fn from_json(text: &str) -> Result<Self> {
        Self::build(SandboxConfig::from_json(text)?)
    }

    /// Always refuses on this platform.
    ///
    /// # Errors
    /// [`SandboxError::Unsupported`], naming the platform.
    pub fn build(_cfg: SandboxConfig) -> Result<Self> {
        Err(SandboxError::Unsupported(format!(
            "the native sandbox launcher runs on Linux only (this is {}); use the Python \
             host runner or, on macOS, the Seatbelt backend",
            std::env::consts::OS
        )))
    }

    /// What this policy enforces.
    pub fn guarantees(&self) -> &SandboxGuarantees {
        match self.never {}
    }

    /// The probed kernel features.
    pub fn kernel_features(&self) -> Option<&KernelFeatures> {
        match self.never {}
    }

    /// The configuration this policy was built from.
    pub fn config(&self) -> &SandboxConfig {
        match self.never {}
    }

    /// The opened root.
    pub fn root(&self) -> &ConfinedDir {
        match self.never {}
    }

    /// Paths granted to the child besides the root and its temp dir.
    pub fn granted_paths(&self) -> Vec<PathBuf> {
        match self.never {}
    }

    /// Run a command (unreachable: no policy exists on this platform).
    ///
    /// # Errors
    /// None; the value cannot exist.
    pub fn run(&self, _command: &str, _timeout: Duration) -> Result<RunOutcome> {
        match self.never {}
    }

    /// Run a command with extra variables (unreachable, as [`SandboxPolicy::run`]).
    ///
    /// # Errors
    /// None; the value cannot exist.
    pub fn run_with_env(
        &self,
        _command: &str,
        _timeout: Duration,
        _extra: &std::collections::BTreeMap<String, String>,
    ) -> Result<RunOutcome> {
        match self.never {}
    }
}
