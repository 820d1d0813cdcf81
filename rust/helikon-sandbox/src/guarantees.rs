//! What a backend enforces, per axis, as the spec's `SandboxGuarantees`.
use serde::{Deserialize, Serialize};

/// How one axis (filesystem, network, syscalls) is enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Isolation {
    /// No OS enforcement: the command has the parent's access on this axis.
    None,
    /// Enforced by an OS kernel mechanism (Landlock, seccomp).
    OsKernel,
    /// Enforced by a VM boundary (not produced by this crate).
    Virtualized,
    /// Egress filtered at a proxy (not produced by this crate).
    Proxied,
}

/// Label of the Linux OS sandbox.
pub const OS_SANDBOX_LABEL: &str = "os-sandbox (landlock+seccomp)";
/// Label of the unconfined host backend.
pub const HOST_LABEL: &str = "host (no containment)";

/// Per-axis guarantees plus what was probed and what is known not to be covered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SandboxGuarantees {
    /// Filesystem axis.
    pub filesystem: Isolation,
    /// Network axis.
    pub network: Isolation,
    /// Syscall axis.
    pub syscalls: Isolation,
    /// Short human-readable tier name, surfaced in the Bash tool's description.
    pub label: String,
    /// Landlock ABI in force (`None` in host mode).
    pub landlock_abi: Option<u32>,
    /// Defaults the caller explicitly waived with `allow_weaker`.
    pub waived: Vec<String>,
    /// Known limits of this configuration, in plain words.
    pub notes: Vec<String>,
}

impl SandboxGuarantees {
    /// The host backend's guarantees.
    pub fn host() -> Self {
        Self {
            filesystem: Isolation::None,
            network: Isolation::None,
            syscalls: Isolation::None,
            label: HOST_LABEL.to_string(),
            landlock_abi: None,
            waived: Vec::new(),
            notes: vec![
                "not a security boundary: commands can read and write anything this process \
                 can, and reach the network"
                    .to_string(),
            ],
        }
    }
}
