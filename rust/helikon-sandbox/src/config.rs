//! The sandbox configuration, as JSON from the binding or built in Rust.
//!
//! Unknown fields are rejected. `null` for a limit disables it; an absent limit takes the
//! documented default.
use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use crate::error::{Result, SandboxError};

/// Most entries in `read_only_paths`.
pub const MAX_READ_ONLY_PATHS: usize = 32;

/// Which backend runs commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Landlock + seccomp + rlimits + uid drop, fail-closed (the default).
    #[default]
    OsSandbox,
    /// No containment: cwd pin, env scrub, rlimits, timeout, process-tree kill, output cap.
    Host,
}

/// What AF_UNIX sockets may do while the network is denied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnixSockets {
    /// `socketpair` and unconnected stream/seqpacket sockets only; `connect`, `bind`,
    /// `listen` and `accept` are refused (the default).
    #[default]
    Pairs,
    /// No AF_UNIX sockets at all.
    None,
    /// Also `connect`/`bind`/`listen`/`accept` on AF_UNIX (for test servers in the root).
    /// Below Landlock ABI 9, pathname sockets outside the root become reachable.
    Connect,
}

/// Defaults the caller may explicitly waive when the kernel lacks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Weakening {
    /// Landlock signal scoping (ABI 6, Linux 6.12).
    SignalScope,
    /// Landlock abstract-unix-socket scoping (ABI 6, Linux 6.12).
    AbstractUnixScope,
}

impl Weakening {
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SignalScope => "signal_scope",
            Self::AbstractUnixScope => "abstract_unix_scope",
        }
    }
}

/// Resource limits applied to every command (setrlimit in the child).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// `RLIMIT_CPU` seconds; absent: the call's timeout rounded up plus 5 s.
    #[serde(default)]
    pub cpu_seconds: Option<u64>,
    /// `RLIMIT_FSIZE` bytes (default 1 GiB).
    #[serde(default = "default_fsize")]
    pub file_size_bytes: Option<u64>,
    /// `RLIMIT_AS` bytes (default off: it breaks runtimes that reserve address space).
    #[serde(default)]
    pub address_space_bytes: Option<u64>,
    /// Ceiling on the resident memory of all the command's processes together (default
    /// 2 GiB; `null`: none). Enforced by a watchdog in the supervisor (see the crate docs),
    /// so address-space reservations (JVM, Go, Node) do not count, only touched memory.
    #[serde(default = "default_memory")]
    pub memory_bytes: Option<u64>,
    /// `RLIMIT_NPROC` as tasks *added* to what the sandbox uid already runs (default 256).
    /// Not enforced by the kernel for root (host mode as root).
    #[serde(default = "default_nproc")]
    pub max_processes: Option<u64>,
    /// `RLIMIT_NOFILE` (default 1024).
    #[serde(default = "default_nofile")]
    pub open_files: Option<u64>,
}

fn default_fsize() -> Option<u64> {
    Some(1 << 30)
}
/// The default resident-memory ceiling (2 GiB).
pub const DEFAULT_MEMORY_BYTES: u64 = 2 << 30;

fn default_memory() -> Option<u64> {
    Some(DEFAULT_MEMORY_BYTES)
}
fn default_nproc() -> Option<u64> {
    Some(256)
}
fn default_nofile() -> Option<u64> {
    Some(1024)
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            cpu_seconds: None,
            file_size_bytes: default_fsize(),
            address_space_bytes: None,
            memory_bytes: default_memory(),
            max_processes: default_nproc(),
            open_files: default_nofile(),
        }
    }
}

/// The whole configuration of a [`crate::SandboxPolicy`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxConfig {
    /// The workspace root: the cwd of every command and the only writable tree (with a private
    /// temp dir).
    pub root: PathBuf,
    /// Backend (default `os_sandbox`).
    #[serde(default)]
    pub mode: Mode,
    /// Opt out of the network axis only (TCP/UDP over IPv4/IPv6 allowed; other families and
    /// io_uring stay denied).
    #[serde(default)]
    pub allow_network: bool,
    /// AF_UNIX policy while the network is denied.
    #[serde(default)]
    pub unix_sockets: UnixSockets,
    /// `(uid, gid)` to run commands as. Required when this process runs as root in
    /// `os_sandbox` mode; capabilities and supplementary groups are dropped.
    #[serde(default)]
    pub run_as: Option<(u32, u32)>,
    /// Host environment variables passed through (exact names, or a prefix ending in `*`).
    #[serde(default = "default_env_allowlist")]
    pub env_allowlist: Vec<String>,
    /// Variables set explicitly (applied after the allowlist and the fixed variables).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Extra read-only (read + execute) paths, e.g. `/opt/tool` or `/nix/store`.
    #[serde(default)]
    pub read_paths: Vec<PathBuf>,
    /// Grant read access to `/proc` (lets commands read other processes' command lines).
    #[serde(default)]
    pub allow_proc: bool,
    /// Defaults waived when the kernel lacks them (recorded in the guarantees).
    #[serde(default)]
    pub allow_weaker: Vec<Weakening>,
    /// Refuse deletion and truncation in the root by the kernel (Landlock ABI 3), whatever
    /// program runs (see `workspace_rules`).
    #[serde(default)]
    pub deny_delete: bool,
    /// Relative paths inside the root that keep every right under `deny_delete` (e.g.
    /// `.git`); they must exist when the policy is built.
    #[serde(default)]
    pub deny_delete_except: Vec<PathBuf>,
    /// No `EXECUTE` right on the root and the private temp dir.
    #[serde(default)]
    pub no_exec_in_workspace: bool,
    /// Run each command in a private mount namespace showing only the granted paths (see
    /// `mount_plan`), so metadata calls and existence probes outside them fail.
    #[serde(default)]
    pub private_mounts: bool,
    /// Relative paths inside the root shown read-only (e.g. `.git`, `.env`, `.ssh`); needs
    /// `private_mounts`. A path missing when a run starts is not protected during it; one
    /// that is (or passes through) a symlink makes the run fail before the command starts.
    #[serde(default)]
    pub read_only_paths: Vec<PathBuf>,
    /// Resource limits.
    #[serde(default)]
    pub limits: Limits,
    /// Bytes kept per stream (half from the start, half from the end). Default 64 KiB.
    #[serde(default = "default_output_cap")]
    pub output_cap_bytes: usize,
    /// Milliseconds between SIGTERM and SIGKILL on timeout. Default 200.
    #[serde(default = "default_grace")]
    pub kill_grace_ms: u64,
    /// The shell run as `<shell> -c <command>`. Default bash (the first of [`BASH_PATHS`]
    /// that exists, else `/bin/bash`, which then fails to start with a clear error): the
    /// command matcher (`helikon-shell`) models bash's grammar, and another shell reads the
    /// same text differently (dash runs `echo $'\'; rm x; #'` as two commands).
    #[serde(default = "default_shell")]
    pub shell: PathBuf,
    /// Network only through helikon's egress proxy (see [`crate::egress`]).
    #[serde(default)]
    pub egress: Option<crate::egress::EgressConfig>,
}

/// The default environment allowlist.
pub fn default_env_allowlist() -> Vec<String> {
    ["PATH", "LANG", "LANGUAGE", "LC_*", "TERM", "TZ"]
        .iter()
        .map(|s| s.to_string())
        .collect()
}
fn default_output_cap() -> usize {
    64 * 1024
}
fn default_grace() -> u64 {
    200
}
/// Where the default shell (bash) is looked for, first found wins.
pub const BASH_PATHS: [&str; 4] = [
    "/bin/bash",
    "/usr/bin/bash",
    "/usr/local/bin/bash",
    "/opt/homebrew/bin/bash",
];

fn default_shell() -> PathBuf {
    BASH_PATHS
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from(BASH_PATHS[0]))
}

impl SandboxConfig {
    /// A default OS-sandbox configuration for `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self {
            root: root.into(),
            mode: Mode::default(),
            allow_network: false,
            unix_sockets: UnixSockets::default(),
            run_as: None,
            env_allowlist: default_env_allowlist(),
            env: BTreeMap::new(),
            read_paths: Vec::new(),
            allow_proc: false,
            allow_weaker: Vec::new(),
            deny_delete: false,
            deny_delete_except: Vec::new(),
            no_exec_in_workspace: false,
            private_mounts: false,
            read_only_paths: Vec::new(),
            limits: Limits::default(),
            output_cap_bytes: default_output_cap(),
            kill_grace_ms: default_grace(),
            shell: default_shell(),
            egress: None,
        }
    }

    /// Parse and validate JSON.
    ///
    /// # Errors
    /// [`SandboxError::Config`] naming the field.
    pub fn from_json(text: &str) -> Result<Self> {
        let cfg: Self =
            serde_json::from_str(text).map_err(|e| SandboxError::Config(e.to_string()))?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Check values that serde cannot.
    ///
    /// # Errors
    /// [`SandboxError::Config`] naming the field.
    pub fn validate(&self) -> Result<()> {
        if !self.root.is_absolute() {
            return Err(SandboxError::Config("root must be an absolute path".into()));
        }
        if self.root.parent().is_none() && self.mode == Mode::OsSandbox {
            return Err(SandboxError::Config(
                "root must not be '/' for the OS sandbox (nothing would be contained)".into(),
            ));
        }
        for p in &self.read_paths {
            if !p.is_absolute() {
                return Err(SandboxError::Config(format!(
                    "read_paths: {} is not absolute",
                    p.display()
                )));
            }
            if p.parent().is_none() {
                return Err(SandboxError::Config(
                    "read_paths must not contain '/' (it would expose the whole filesystem)".into(),
                ));
            }
        }
        if !self.shell.is_absolute() {
            return Err(SandboxError::Config(
                "shell must be an absolute path".into(),
            ));
        }
        if self.limits.memory_bytes == Some(0) {
            return Err(SandboxError::Config(
                "limits.memory_bytes must be > 0 (null disables the ceiling)".into(),
            ));
        }
        if self.output_cap_bytes == 0 {
            return Err(SandboxError::Config("output_cap_bytes must be > 0".into()));
        }
        for (k, v) in &self.env {
            if k.is_empty() || k.contains('=') || k.contains('\0') || v.contains('\0') {
                return Err(SandboxError::Config(format!("env: invalid variable {k:?}")));
            }
        }
        for pat in &self.env_allowlist {
            if pat.is_empty() || pat.contains('=') {
                return Err(SandboxError::Config(format!(
                    "env_allowlist: invalid entry {pat:?}"
                )));
            }
        }
        if self.mode == Mode::Host
            && (self.deny_delete
                || self.no_exec_in_workspace
                || self.private_mounts
                || !self.deny_delete_except.is_empty())
        {
            return Err(SandboxError::Config(
                "deny_delete, deny_delete_except, no_exec_in_workspace and private_mounts are \
                 enforced by the kernel and need mode os_sandbox"
                    .into(),
            ));
        }
        if !self.read_only_paths.is_empty() && !self.private_mounts {
            return Err(SandboxError::Config(
                "read_only_paths needs private_mounts=true (Landlock cannot take rights away \
                 beneath a writable root; a read-only bind in a mount namespace can)"
                    .into(),
            ));
        }
        if self.read_only_paths.len() > MAX_READ_ONLY_PATHS {
            return Err(SandboxError::Config(format!(
                "read_only_paths: at most {MAX_READ_ONLY_PATHS} entries"
            )));
        }
        for p in &self.read_only_paths {
            let plain = !p.as_os_str().is_empty()
                && p.components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)));
            if !plain {
                return Err(SandboxError::Config(format!(
                    "read_only_paths: {} must be a relative path inside the root without \
                     '..' or '.'",
                    p.display()
                )));
            }
        }
        if let Some(egress) = &self.egress {
            egress.check(self)?;
        }
        if let Some((0, _)) = self.run_as {
            if self.mode == Mode::OsSandbox {
                return Err(SandboxError::Config(
                    "run_as uid 0 keeps root inside the sandbox; choose an unprivileged uid".into(),
                ));
            }
        }
        Ok(())
    }
}
