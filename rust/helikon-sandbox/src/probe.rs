//! What the running kernel offers, and what the OS sandbox will enforce with it.
//!
//! [`probe`] asks the kernel once. [`plan`] is pure: given a configuration and the probed
//! features it either returns the [`Enforcement`] or refuses with
//! [`SandboxError::Unsupported`] naming the missing feature and the kernel that adds it. A
//! default guarantee is never silently dropped; weaker operation needs an explicit
//! `allow_weaker` entry, which is recorded.
use serde::Serialize;

use crate::config::{SandboxConfig, UnixSockets, Weakening};
use crate::error::{Result, SandboxError};
#[cfg(target_os = "linux")]
use crate::sys;

/// Kernel features relevant to the sandbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelFeatures {
    /// Landlock ABI version (0 when unavailable).
    pub landlock_abi: i32,
    /// Why Landlock is unavailable: `"not built into this kernel"`, `"disabled at boot"`.
    pub landlock_missing: Option<String>,
    /// Fixed Landlock errata bitmask.
    pub landlock_errata: u32,
    /// seccomp filter mode works.
    pub seccomp: bool,
    /// The build target is one the seccomp filter knows (x86_64, aarch64).
    pub arch_supported: bool,
    /// `uname -r`.
    pub kernel_release: String,
}

/// Probe the running kernel.
#[cfg(target_os = "linux")]
pub fn probe() -> KernelFeatures {
    let (landlock_abi, landlock_missing) = match sys::landlock_abi() {
        Ok(v) => (v, None),
        Err(e) if e == libc::EOPNOTSUPP => (
            0,
            Some("disabled at boot (add 'landlock' to the lsm= kernel parameter)".to_string()),
        ),
        Err(_) => (
            0,
            Some("not built into this kernel (CONFIG_SECURITY_LANDLOCK)".to_string()),
        ),
    };
    KernelFeatures {
        landlock_abi,
        landlock_missing,
        landlock_errata: if landlock_abi > 0 {
            sys::landlock_errata()
        } else {
            0
        },
        seccomp: sys::seccomp_available(),
        arch_supported: cfg!(any(target_arch = "x86_64", target_arch = "aarch64")),
        kernel_release: rustix::system::uname()
            .release()
            .to_string_lossy()
            .into_owned(),
    }
}

/// Probe the running kernel: on this platform there is no Landlock and no seccomp.
#[cfg(not(target_os = "linux"))]
pub fn probe() -> KernelFeatures {
    KernelFeatures {
        landlock_abi: 0,
        landlock_missing: Some("Landlock is a Linux feature (Linux 5.13+)".to_string()),
        landlock_errata: 0,
        seccomp: false,
        arch_supported: false,
        kernel_release: rustix::system::uname()
            .release()
            .to_string_lossy()
            .into_owned(),
    }
}

/// The Linux release that introduced a Landlock ABI.
pub fn kernel_for_abi(abi: i32) -> &'static str {
    match abi {
        1 => "Linux 5.13",
        2 => "Linux 5.19",
        3 => "Linux 6.2",
        4 => "Linux 6.7",
        5 => "Linux 6.10",
        6 => "Linux 6.12",
        7 => "Linux 6.15",
        8 => "Linux 7.0",
        9 => "Linux 7.1",
        _ => "a newer Linux",
    }
}

/// What the OS sandbox enforces on this kernel with this configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Enforcement {
    /// Landlock ABI used for the ruleset (the kernel's, capped at what the landlock crate
    /// knows).
    pub abi: i32,
    /// Handle TCP bind/connect in Landlock (ABI 4) with no port allowed.
    pub tcp_rules: bool,
    /// The one TCP port `connect` may reach (the egress proxy's), when `tcp_rules`.
    pub tcp_connect_port: Option<u16>,
    /// Landlock signal scoping (ABI 6).
    pub scope_signal: bool,
    /// Landlock abstract-unix-socket scoping (ABI 6).
    pub scope_abstract_unix: bool,
    /// seccomp denies `truncate(2)` because Landlock cannot (ABI < 3).
    pub deny_path_truncate: bool,
    /// Defaults waived through `allow_weaker`.
    pub waived: Vec<String>,
    /// Known limits, in plain words.
    pub notes: Vec<String>,
}

/// Highest Landlock ABI the landlock crate in use knows.
const CRATE_MAX_ABI: i32 = 10;

fn lacks(what: &str, abi: i32, have: i32) -> String {
    format!(
        "{what} needs Landlock ABI {abi} ({}); this kernel has ABI {have}",
        kernel_for_abi(abi)
    )
}

/// Decide what to enforce, or refuse.
///
/// # Errors
/// [`SandboxError::Unsupported`] naming what the kernel lacks and which kernel adds it.
pub fn plan(cfg: &SandboxConfig, k: &KernelFeatures) -> Result<Enforcement> {
    if !k.arch_supported {
        return Err(SandboxError::Unsupported(
            "the OS sandbox's seccomp filter supports x86_64 and aarch64 only".into(),
        ));
    }
    if k.landlock_abi < 1 {
        return Err(SandboxError::Unsupported(format!(
            "Landlock filesystem confinement (Linux 5.13) is unavailable: {}",
            k.landlock_missing.as_deref().unwrap_or("unknown reason")
        )));
    }
    if !k.seccomp {
        return Err(SandboxError::Unsupported(
            "seccomp filter mode (CONFIG_SECCOMP_FILTER, Linux 3.5) is unavailable".into(),
        ));
    }
    let abi = k.landlock_abi.min(CRATE_MAX_ABI);
    let waives = |w: Weakening| cfg.allow_weaker.contains(&w);
    let mut waived = Vec::new();
    let mut notes = vec![
        "metadata calls (stat, chmod, utimes, setxattr) on paths outside the root are not \
         mediated by Landlock; run_as limits them to files that uid owns"
            .to_string(),
    ];
    let scope_signal = abi >= 6;
    if !scope_signal {
        if !waives(Weakening::SignalScope) {
            return Err(SandboxError::Unsupported(format!(
                "{}; pass allow_weaker=[\"signal_scope\"] to run without it",
                lacks("scoping signals to the sandbox", 6, k.landlock_abi)
            )));
        }
        waived.push(Weakening::SignalScope.as_str().to_string());
    }
    // Abstract unix sockets: seccomp refuses connect() unless AF_UNIX connect is allowed
    // (allow_network or unix_sockets=connect); then Landlock scoping is what stops them.
    let unix_connect = cfg.allow_network || cfg.unix_sockets == UnixSockets::Connect;
    let scope_abstract_unix = abi >= 6;
    if !scope_abstract_unix && unix_connect {
        if !waives(Weakening::AbstractUnixScope) {
            return Err(SandboxError::Unsupported(format!(
                "{}; pass allow_weaker=[\"abstract_unix_scope\"] to run without it",
                lacks(
                    "scoping abstract unix sockets to the sandbox",
                    6,
                    k.landlock_abi
                )
            )));
        }
        waived.push(Weakening::AbstractUnixScope.as_str().to_string());
    }
    let tcp_rules = !cfg.allow_network && abi >= 4;
    if !cfg.allow_network && !tcp_rules && cfg.egress.is_none() {
        notes.push(format!(
            "network is denied by seccomp alone ({} adds Landlock TCP rules)",
            kernel_for_abi(4)
        ));
    }
    if unix_connect && abi < 9 {
        notes.push(format!(
            "AF_UNIX connect is allowed, so pathname sockets outside the root that this uid \
             may open are reachable ({} adds Landlock RESOLVE_UNIX)",
            kernel_for_abi(9)
        ));
    }
    if cfg.allow_network {
        notes.push(
            "network allowed: TCP/UDP over IPv4/IPv6 to any host; other socket families and \
             io_uring stay denied"
                .to_string(),
        );
    }
    if cfg.allow_proc {
        notes.push("/proc is readable: other processes' command lines can be read".to_string());
    }
    if cfg.run_as.is_none() {
        notes.push(
            "commands run as this process's uid: files it owns outside the root can have \
             their metadata changed"
                .to_string(),
        );
    }
    Ok(Enforcement {
        abi,
        tcp_rules,
        tcp_connect_port: None,
        scope_signal,
        scope_abstract_unix,
        deny_path_truncate: abi < 3,
        waived,
        notes,
    })
}
