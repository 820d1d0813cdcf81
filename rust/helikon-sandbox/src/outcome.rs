//! [`RunOutcome`]: what one command run returns, on every platform.
use serde::Serialize;

/// The result of one command, as the binding returns it (JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunOutcome {
    /// Exit code when the shell exited normally.
    pub exit_code: Option<i32>,
    /// Signal number when the shell was killed by a signal (e.g. 9 after a timeout).
    pub signal: Option<i32>,
    /// Captured standard output (head and tail kept when over the cap, the cut stated).
    pub stdout: String,
    /// Captured standard error (same rule).
    pub stderr: String,
    /// Whether either stream was cut.
    pub truncated: bool,
    /// Whether the timeout fired (the process group got SIGTERM, then SIGKILL).
    pub timed_out: bool,
    /// Wall-clock duration of the call in milliseconds.
    pub duration_ms: u64,
    /// Why the sandbox killed the command, if it did (`None`: it ended by itself).
    pub killed_reason: Option<KilledReason>,
}

/// Why the sandbox killed a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KilledReason {
    /// The timeout fired.
    Timeout,
    /// Its resident memory passed `limits.memory_bytes` (the watchdog killed its group).
    Memory,
}
