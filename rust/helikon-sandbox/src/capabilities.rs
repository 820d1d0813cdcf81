//! [`capabilities`]: what the OS sandbox can enforce on this machine, as one typed value.
//!
//! For `helikon doctor` and the docs' per-platform table: the Landlock ABI (and so which
//! filesystem, network and scoping rules exist), seccomp, whether unprivileged user
//! namespaces and a delegated cgroup v2 are available, and which mechanism the sandbox
//! actually uses for the memory ceiling and for metadata calls outside the workspace.
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::config::SandboxConfig;
use crate::probe::{self, KernelFeatures};

/// How the default memory ceiling (`limits.memory_bytes`) is enforced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryMechanism {
    /// The supervisor sums the command's resident memory every 20 ms and kills its
    /// processes past the ceiling (Linux, every kernel).
    Watchdog,
    /// Not enforced (platforms without the native launcher).
    None,
}

/// How `chmod`/`chown`/`utime`/`setxattr` and `stat`/`access` on paths outside the
/// workspace can be contained here (with `private_mounts`; without it, `uid_only`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MetadataMechanism {
    /// `private_mounts`: a private mount namespace shows only the granted paths (the host
    /// runs as root and commands run as `run_as`).
    MountNamespace,
    /// `private_mounts` as above, from an unprivileged user namespace the child enters
    /// first (the host is not root and the kernel allows user namespaces).
    UserMountNamespace,
    /// Landlock does not mediate metadata calls; `chown` is refused by seccomp and the uid
    /// drop (`run_as`) limits the rest to files that uid owns. Existence probes work.
    UidOnly,
    /// Not contained (no OS sandbox on this platform).
    None,
}

/// What the OS sandbox can enforce here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SandboxCapabilities {
    /// The probed kernel features (Landlock ABI and errata, seccomp, architecture).
    pub kernel: KernelFeatures,
    /// Whether a default `os_sandbox` policy can be built here (as far as the kernel goes;
    /// running as root additionally needs `run_as`).
    pub os_sandbox: bool,
    /// Why not, naming what is missing and the release that adds it.
    pub os_sandbox_missing: Option<String>,
    /// Landlock TCP bind/connect rules (ABI 4, Linux 6.7).
    pub landlock_tcp: bool,
    /// Landlock `TRUNCATE` (ABI 3, Linux 6.2): needed by `deny_delete`.
    pub landlock_truncate: bool,
    /// Landlock signal and abstract-socket scoping (ABI 6, Linux 6.12).
    pub landlock_scoping: bool,
    /// User namespaces can be created by this process (root, or the unprivileged sysctls
    /// allow it).
    pub user_namespaces: bool,
    /// The unified cgroup v2 hierarchy is mounted at `/sys/fs/cgroup`.
    pub cgroup_v2: bool,
    /// This process's own cgroup v2 directory when it is writable and offers the memory
    /// controller (a delegated subtree).
    pub cgroup_delegated: Option<PathBuf>,
    /// How the memory ceiling is enforced.
    pub memory: MemoryMechanism,
    /// How metadata calls outside the workspace are contained.
    pub metadata: MetadataMechanism,
}

fn read_trim(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// Whether this process may create user namespaces (root, or the sysctls allow it).
pub(crate) fn user_namespaces_allowed() -> bool {
    if rustix::process::geteuid().is_root() {
        return true;
    }
    let max = read_trim("/proc/sys/user/max_user_namespaces")
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(0);
    let debian = read_trim("/proc/sys/kernel/unprivileged_userns_clone").is_none_or(|s| s == "1");
    let apparmor = read_trim("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")
        .is_none_or(|s| s == "0");
    max > 0 && debian && apparmor
}

fn delegated_cgroup() -> Option<PathBuf> {
    let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    let dir = Path::new("/sys/fs/cgroup").join(rel.trim_start_matches('/'));
    let controllers = std::fs::read_to_string(dir.join("cgroup.controllers")).ok()?;
    if !controllers.split_whitespace().any(|c| c == "memory") {
        return None;
    }
    rustix::fs::access(&dir, rustix::fs::Access::WRITE_OK).ok()?;
    Some(dir)
}

/// Probe this machine (cheap: a few system calls and `/proc` reads; nothing is spawned).
pub fn capabilities() -> SandboxCapabilities {
    let kernel = probe::probe();
    let linux = cfg!(target_os = "linux");
    let plan = probe::plan(&SandboxConfig::new("/nonexistent-root"), &kernel);
    let abi = kernel.landlock_abi;
    let cgroup_v2 = Path::new("/sys/fs/cgroup/cgroup.controllers").exists();
    SandboxCapabilities {
        os_sandbox: linux && plan.is_ok(),
        os_sandbox_missing: plan.err().map(|e| e.to_string()),
        landlock_tcp: abi >= 4,
        landlock_truncate: abi >= 3,
        landlock_scoping: abi >= 6,
        user_namespaces: linux && user_namespaces_allowed(),
        cgroup_v2,
        cgroup_delegated: if cgroup_v2 { delegated_cgroup() } else { None },
        memory: if linux {
            MemoryMechanism::Watchdog
        } else {
            MemoryMechanism::None
        },
        metadata: if linux && abi > 0 && rustix::process::geteuid().is_root() {
            MetadataMechanism::MountNamespace
        } else if linux && abi > 0 && user_namespaces_allowed() {
            MetadataMechanism::UserMountNamespace
        } else if linux && abi > 0 {
            MetadataMechanism::UidOnly
        } else {
            MetadataMechanism::None
        },
        kernel,
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn reports_this_kernel() {
        let c = capabilities();
        assert_eq!(c.kernel, probe::probe());
        assert_eq!(c.landlock_truncate, c.kernel.landlock_abi >= 3);
        assert_eq!(c.os_sandbox, c.os_sandbox_missing.is_none());
        assert_eq!(c.memory, MemoryMechanism::Watchdog);
        assert_eq!(
            c.cgroup_v2,
            Path::new("/sys/fs/cgroup/cgroup.controllers").exists()
        );
        if c.cgroup_delegated.is_some() {
            assert!(c.cgroup_v2);
        }
        let json = serde_json::to_value(&c).expect("json");
        assert_eq!(json["memory"], "watchdog");
        assert!(json["kernel"]["landlock_abi"].is_number());
    }
}
