//! [`SandboxPolicy`]: built once (probe, rules, self-test), then runs commands.
use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use libc::c_int;
use rustix::fs::{open, Mode as FsMode, OFlags};

use crate::config::{Mode, SandboxConfig};
use crate::confined::ConfinedDir;
use crate::egress::{self, Egress, EgressMechanism};
use crate::env::build_env;
use crate::error::{Result, SandboxError};
use crate::guarantees::{Isolation, SandboxGuarantees, OS_SANDBOX_LABEL};
use crate::landlock_rules::{self, Grant};
use crate::limits;
use crate::mount_plan::{self, IdMaps, MountPlan, Stage, Visible};
use crate::nproc::NprocCache;
use crate::outcome::RunOutcome;
use crate::probe::{self, Enforcement, KernelFeatures};
use crate::seccomp_rules::{self, FilterOptions, SocketPolicy};
use crate::spawn::{self, Prepared};
use crate::sys::{self, BpfProgram, ChildAction, Report};
use crate::timing::Steps;
use crate::tmpdir::{Slot, SlotPool};
use crate::workspace_rules::WorkspaceRules;

/// The guarantees' note when `private_mounts` runs in an unprivileged user namespace.
const USERNS_NOTE: &str = "private_mounts through an unprivileged user namespace (this process \
    is not root): the command's uid and gid map to themselves; files of other users (root's \
    system files) show as owned by the overflow id (nobody, 65534)";

/// The guarantees' note when `private_mounts` is on.
const PRIVATE_MOUNTS_NOTE: &str = "private_mounts: commands see only the granted paths (a \
     private mount namespace, system paths read-only); stat, access, chmod, chown, utime and \
     setxattr on any other path fail with ENOENT";

/// Longest timeout accepted for one call.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// A compiled sandbox: the opened root, the prepared rules, the guarantees.
pub struct SandboxPolicy {
    cfg: SandboxConfig,
    root: ConfinedDir,
    shell: CString,
    devnull: OwnedFd,
    grants: Vec<Grant>,
    workspace: WorkspaceRules,
    stage: Option<Stage>,
    enforcement: Option<Enforcement>,
    features: Option<KernelFeatures>,
    seccomp: Vec<BpfProgram>,
    creds: Option<(u32, u32)>,
    nproc: NprocCache,
    slots: SlotPool,
    cap_last: c_int,
    guarantees: SandboxGuarantees,
    egress: Option<Egress>,
    /// `private_mounts` without root: the child's user namespace maps.
    userns: Option<IdMaps>,
}

impl std::fmt::Debug for SandboxPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxPolicy")
            .field("root", &self.root.root())
            .field("mode", &self.cfg.mode)
            .field("run_as", &self.creds)
            .field("guarantees", &self.guarantees)
            .finish_non_exhaustive()
    }
}

fn cap_last() -> c_int {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(63)
}

impl SandboxPolicy {
    /// Parse JSON and build.
    ///
    /// # Errors
    /// As [`SandboxPolicy::build`].
    pub fn from_json(text: &str) -> Result<Self> {
        Self::build(SandboxConfig::from_json(text)?)
    }

    /// Probe the kernel, prepare the rules and run the self-test.
    ///
    /// # Errors
    /// [`SandboxError::Config`] for invalid settings, [`SandboxError::Unsupported`] when the
    /// kernel or the process cannot enforce the configuration (including running as root
    /// without `run_as`), [`SandboxError::SelfTest`] when a probe that must be refused was
    /// not.
    pub fn build(mut cfg: SandboxConfig) -> Result<Self> {
        cfg.validate()?;
        let root = ConfinedDir::open(&cfg.root)?;
        let shell = CString::new(cfg.shell.as_os_str().as_bytes())
            .map_err(|_| SandboxError::Config("shell contains a NUL byte".into()))?;
        let devnull = open(
            "/dev/null",
            OFlags::RDONLY | OFlags::CLOEXEC,
            FsMode::empty(),
        )
        .map_err(|e| SandboxError::io("open /dev/null", e.into()))?;
        let devnull = spawn::above_stdio(devnull)?;

        let euid = sys::geteuid();
        let egid = sys::getegid();
        let creds = match cfg.run_as {
            None if euid == 0 && cfg.mode == Mode::OsSandbox => {
                return Err(SandboxError::Unsupported(
                    "running as root requires run_as=(uid, gid): a root process keeps \
                     capabilities under Landlock and seccomp (raw sockets, device nodes, \
                     chown); give an unprivileged uid/gid that can write the root"
                        .into(),
                ))
            }
            None => None,
            Some((u, g)) if u == euid && g == egid && euid != 0 => None,
            Some(ids) if euid == 0 => Some(ids),
            Some(_) => {
                return Err(SandboxError::Config(
                    "run_as needs this process to run as root (or to equal its own uid/gid)".into(),
                ))
            }
        };
        let task_uid = creds.map_or(euid, |(u, _)| u);

        let (enforcement, features, grants, workspace, seccomp, guarantees, egress) = match cfg.mode
        {
            Mode::Host => (
                None,
                None,
                Vec::new(),
                WorkspaceRules::default(),
                Vec::new(),
                SandboxGuarantees::host(),
                None,
            ),
            Mode::OsSandbox => {
                let features = probe::probe();
                let mut enf = probe::plan(&cfg, &features)?;
                let grants = landlock_rules::open_grants(&cfg.read_paths, cfg.allow_proc)?;
                let egress = match &cfg.egress {
                    Some(e) => Some(Egress::establish(
                        e,
                        enf.abi,
                        euid,
                        crate::capabilities::user_namespaces_allowed(),
                    )?),
                    None => None,
                };
                if let Some(eg) = &egress {
                    enf.tcp_connect_port = Some(eg.port());
                    enf.notes.push(eg.note());
                    cfg.env.extend(egress::proxy_env(eg.port()));
                }
                let workspace = WorkspaceRules::prepare(&cfg, root.as_fd(), enf.abi)?;
                let mut notes = enf.notes.clone();
                notes.extend(workspace.notes());
                if cfg.private_mounts {
                    notes.retain(|n| !n.starts_with("metadata calls"));
                    notes.push(PRIVATE_MOUNTS_NOTE.to_string());
                }
                if !cfg.read_only_paths.is_empty() {
                    let names: Vec<String> = cfg
                        .read_only_paths
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect();
                    notes.push(format!(
                        "read-only in the workspace (a read-only bind): {}",
                        names.join(", ")
                    ));
                }
                let sockets = if egress.is_some() {
                    SocketPolicy::Proxied
                } else if cfg.allow_network {
                    SocketPolicy::InetAllowed
                } else {
                    SocketPolicy::Denied(cfg.unix_sockets)
                };
                let seccomp = seccomp_rules::build(&FilterOptions {
                    sockets,
                    deny_path_truncate: enf.deny_path_truncate,
                    // Also with private_mounts: the granted system files are the host's
                    // inodes, so a watch on them reports every process's access.
                    deny_inotify: true,
                    deny_fallocate_destroy: cfg.deny_delete,
                })?;
                let guarantees = SandboxGuarantees {
                    filesystem: Isolation::OsKernel,
                    network: if egress.is_some() {
                        Isolation::Proxied
                    } else if cfg.allow_network {
                        Isolation::None
                    } else {
                        Isolation::OsKernel
                    },
                    syscalls: Isolation::OsKernel,
                    label: OS_SANDBOX_LABEL.to_string(),
                    landlock_abi: u32::try_from(enf.abi).ok(),
                    waived: enf.waived.clone(),
                    notes,
                };
                (
                    Some(enf),
                    Some(features),
                    grants,
                    workspace,
                    seccomp,
                    guarantees,
                    egress,
                )
            }
        };
        let stage = if cfg.private_mounts {
            Some(Stage::create()?)
        } else {
            None
        };
        // Not root: the child gets CAP_SYS_ADMIN for its mounts and its network namespace
        // from a user namespace of its own (root drops to `run_as` after them instead).
        let egress_netns = egress.as_ref().is_some_and(|e| e.bridge().is_some());
        let userns = ((cfg.private_mounts || egress_netns) && creds.is_none() && euid != 0)
            .then(|| IdMaps::identity(euid, egid));
        let mut guarantees = guarantees;
        if userns.is_some() && cfg.private_mounts {
            guarantees.notes.push(USERNS_NOTE.to_string());
        }
        let policy = Self {
            cfg,
            root,
            shell,
            devnull,
            grants,
            workspace,
            stage,
            enforcement,
            features,
            seccomp,
            creds,
            nproc: NprocCache::new(task_uid),
            slots: SlotPool::new(creds),
            cap_last: cap_last(),
            guarantees,
            egress,
            userns,
        };
        if let Err(e) = policy.self_test() {
            if policy.userns.is_some() && !policy.cfg.private_mounts {
                return Err(SandboxError::Unsupported(format!(
                    "egress: this process is not root, so the child needs an unprivileged \
                     user namespace for its network namespace, and that failed ({e}); allow \
                     them (user.max_user_namespaces > 0, kernel.unprivileged_userns_clone = 1, \
                     kernel.apparmor_restrict_unprivileged_userns = 0), run as root with \
                     run_as=(uid, gid), or use egress.mechanism \"landlock_port\" (weaker: \
                     the proxy's port at every address)"
                )));
            }
            if policy.userns.is_some() {
                return Err(SandboxError::Unsupported(format!(
                    "private_mounts: this process is not root, so the child needs an \
                     unprivileged user namespace for its mounts, and that failed ({e}); allow \
                     them (user.max_user_namespaces > 0, kernel.unprivileged_userns_clone = 1, \
                     kernel.apparmor_restrict_unprivileged_userns = 0) or run as root with \
                     run_as=(uid, gid)"
                )));
            }
            return Err(e);
        }
        Ok(policy)
    }

    /// What this policy enforces.
    pub fn guarantees(&self) -> &SandboxGuarantees {
        &self.guarantees
    }

    /// The probed kernel features (`None` in host mode).
    pub fn kernel_features(&self) -> Option<&KernelFeatures> {
        self.features.as_ref()
    }

    /// The configuration this policy was built from.
    pub fn config(&self) -> &SandboxConfig {
        &self.cfg
    }

    /// The opened root.
    pub fn root(&self) -> &ConfinedDir {
        &self.root
    }

    /// The egress mechanism in force (`None` without `egress`).
    pub fn egress_mechanism(&self) -> Option<EgressMechanism> {
        self.egress.as_ref().map(Egress::mechanism)
    }

    /// The port the command reaches the proxy at (`None` without `egress`).
    pub fn egress_port(&self) -> Option<u16> {
        self.egress.as_ref().map(Egress::port)
    }

    /// A new descriptor for the proxy's end of the egress bridge (`None` unless the
    /// mechanism is the namespace): a `SOCK_SEQPACKET` unix socket on which every
    /// connection a command makes to the listener in its network namespace arrives as one
    /// message, the connection's descriptor (`SCM_RIGHTS`) with the command's tag as 8
    /// little-endian bytes (see [`SandboxPolicy::run_tagged`]). The proxy must serve them.
    ///
    /// # Errors
    /// [`SandboxError::Io`] when the descriptor cannot be duplicated.
    pub fn egress_bridge(&self) -> Result<Option<OwnedFd>> {
        match self.egress.as_ref().and_then(Egress::bridge_recv) {
            Some(fd) => fd
                .map(Some)
                .map_err(|e| SandboxError::io("dup egress bridge", e)),
            None => Ok(None),
        }
    }

    /// Paths granted to the child besides the root and its temp dir (diagnostics).
    pub fn granted_paths(&self) -> Vec<PathBuf> {
        self.grants.iter().map(|g| g.path().to_path_buf()).collect()
    }

    /// Run `<shell> -c <command>` in the root with the policy's containment, waiting at most
    /// `timeout` (then SIGTERM, a grace period, SIGKILL). Every process the command started
    /// is killed before this returns.
    ///
    /// # Errors
    /// [`SandboxError::Config`] for a bad timeout or a NUL in the command,
    /// [`SandboxError::Spawn`] when the child could not be confined (the command did not
    /// run).
    pub fn run(&self, command: &str, timeout: Duration) -> Result<RunOutcome> {
        self.run_with_env(command, timeout, &BTreeMap::new())
    }

    /// [`SandboxPolicy::run`] with `extra` variables set for this command only, over the
    /// configured environment (the egress runtime gives each command its own proxy
    /// credential this way).
    ///
    /// # Errors
    /// As [`SandboxPolicy::run`]; also [`SandboxError::Config`] for a variable name that is
    /// empty or holds `=` or NUL, or a value holding NUL.
    pub fn run_with_env(
        &self,
        command: &str,
        timeout: Duration,
        extra: &BTreeMap<String, String>,
    ) -> Result<RunOutcome> {
        self.run_tagged(command, timeout, extra, 0)
    }

    /// [`SandboxPolicy::run_with_env`], with `egress_tag` sent with each of the command's
    /// connections over the egress bridge (the proxy's id of the command).
    ///
    /// # Errors
    /// As [`SandboxPolicy::run_with_env`].
    pub fn run_tagged(
        &self,
        command: &str,
        timeout: Duration,
        extra: &BTreeMap<String, String>,
        egress_tag: u64,
    ) -> Result<RunOutcome> {
        check_extra(extra)?;
        let (outcome, report) =
            self.run_action(ChildAction::Exec, command, timeout, extra, egress_tag)?;
        if report.setup_step != 0 {
            return Err(setup_error(&report));
        }
        Ok(outcome)
    }

    /// [`SandboxPolicy::run_tagged`] without waiting: starts the command and returns a
    /// [`PendingRun`] whose [`PendingRun::pidfd`] turns readable when the command is done
    /// (its process tree swept, its output read); [`PendingRun::finish`] then returns the
    /// outcome at once. An event loop waits on the pidfd instead of blocking a thread.
    ///
    /// # Errors
    /// As [`SandboxPolicy::run_tagged`] (a setup failure of the child is reported by
    /// [`PendingRun::finish`]).
    pub fn start_tagged(
        self: &Arc<Self>,
        command: &str,
        timeout: Duration,
        extra: &BTreeMap<String, String>,
        egress_tag: u64,
    ) -> Result<PendingRun> {
        check_extra(extra)?;
        let (slot, started, steps) =
            self.start_action(ChildAction::Exec, command, timeout, extra, egress_tag)?;
        Ok(PendingRun {
            policy: Arc::clone(self),
            parts: Some((slot, started, steps)),
        })
    }

    fn run_action(
        &self,
        action: ChildAction,
        command: &str,
        timeout: Duration,
        extra: &BTreeMap<String, String>,
        egress_tag: u64,
    ) -> Result<(RunOutcome, Report)> {
        let (slot, started, steps) =
            self.start_action(action, command, timeout, extra, egress_tag)?;
        self.finish_action(slot, started, steps)
    }

    /// Wait for a started command and put its temp-dir slot back.
    fn finish_action(
        &self,
        slot: Slot,
        started: spawn::Started,
        mut steps: Steps,
    ) -> Result<(RunOutcome, Report)> {
        let result = spawn::complete(started, &mut steps);
        // A slot is reused only if every process of the call is known to be gone.
        let reusable = matches!(&result, Ok((_, report)) if !report.sweep_incomplete);
        self.slots.put_back(slot, reusable);
        steps.mark("cleanup");
        steps.finish();
        result
    }

    /// Prepare and start one command; returns once its supervisor runs.
    fn start_action(
        &self,
        action: ChildAction,
        command: &str,
        timeout: Duration,
        extra: &BTreeMap<String, String>,
        egress_tag: u64,
    ) -> Result<(Slot, spawn::Started, Steps)> {
        if timeout.is_zero() || timeout > MAX_TIMEOUT {
            return Err(SandboxError::Config(format!(
                "timeout must be between 0 and {} seconds",
                MAX_TIMEOUT.as_secs()
            )));
        }
        let mut steps = Steps::start(match self.cfg.mode {
            Mode::OsSandbox => "os_sandbox",
            Mode::Host => "host",
        });
        let build_ruleset = |tmp: BorrowedFd<'_>| -> Result<Option<OwnedFd>> {
            match &self.enforcement {
                Some(enf) => landlock_rules::ruleset(
                    enf,
                    self.root.as_fd(),
                    tmp,
                    &self.grants,
                    &self.workspace,
                )
                .map(Some),
                None => Ok(None),
            }
        };
        let slot = self.slots.take(&build_ruleset)?;
        steps.mark("tmpdir");
        let merged;
        let explicit = if extra.is_empty() {
            &self.cfg.env
        } else {
            let mut all = self.cfg.env.clone();
            all.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
            merged = all;
            &merged
        };
        let env = build_env(
            std::env::vars_os(),
            &self.cfg.env_allowlist,
            explicit,
            slot.path(),
            self.root.root(),
        );
        steps.mark("env");
        let rlimits = limits::rlimits(
            &self.cfg.limits,
            timeout,
            || self.nproc.count(),
            sys::geteuid() == 0,
        );
        steps.mark("rlimits");
        let os = self.cfg.mode == Mode::OsSandbox;
        let mounts = match &self.stage {
            Some(stage) => Some(self.mount_plan(stage, slot.path())?),
            None => None,
        };
        steps.mark("mounts");
        let prepared = Prepared {
            shell: &self.shell,
            command,
            env,
            cwd: self.root.as_fd(),
            devnull: self.devnull.as_fd(),
            rlimits,
            creds: self.creds,
            cap_last: self.cap_last,
            no_new_privs: os,
            landlock: slot.landlock(),
            userns: self.userns.clone(),
            egress: self
                .egress
                .as_ref()
                .and_then(|e| e.bridge_send().map(|fd| (e.port(), fd))),
            egress_tag,
            seccomp: &self.seccomp,
            action,
            timeout,
            kill_grace_ms: self.cfg.kill_grace_ms,
            output_cap: self.cfg.output_cap_bytes,
            memory_bytes: self.cfg.limits.memory_bytes,
            mounts,
        };
        match spawn::start(prepared, &mut steps) {
            Ok(started) => Ok((slot, started, steps)),
            Err(e) => {
                // Reused after a configuration error (found before the supervisor runs).
                self.slots
                    .put_back(slot, matches!(e, SandboxError::Config(_)));
                Err(e)
            }
        }
    }

    /// The private mount namespace's plan for one run (the temp dir differs per slot).
    fn mount_plan(&self, stage: &Stage, tmp: &std::path::Path) -> Result<MountPlan> {
        let mut paths: Vec<(PathBuf, Visible)> = self
            .grants
            .iter()
            .map(|g| (g.path().to_path_buf(), g.visible()))
            .collect();
        // no_exec_in_workspace: Landlock refuses execve there, but not mmap(PROT_EXEC), so
        // `ld.so ./x` and dlopen would still run code from these; a noexec mount refuses both.
        let rw = if self.cfg.no_exec_in_workspace {
            Visible::WritableNoExec
        } else {
            Visible::Writable
        };
        paths.push((self.root.root().to_path_buf(), rw));
        paths.push((tmp.to_path_buf(), rw));
        mount_plan::plan(
            stage.path(),
            &paths,
            self.root.root(),
            &self.cfg.read_only_paths,
        )
    }

    /// One command that must work, then escapes that must fail.
    fn self_test(&self) -> Result<()> {
        let t = Duration::from_secs(10);
        let (out, report) = self.run_action(ChildAction::Exec, "true", t, &BTreeMap::new(), 0)?;
        if report.setup_step != 0 {
            return Err(SandboxError::SelfTest(format!(
                "`true` could not start: {}",
                setup_error(&report)
            )));
        }
        if out.exit_code != Some(0) {
            return Err(SandboxError::SelfTest(format!(
                "`true` did not succeed (exit {:?}, signal {:?}): {}",
                out.exit_code,
                out.signal,
                out.stderr.chars().take(300).collect::<String>()
            )));
        }
        if self.cfg.mode == Mode::Host {
            return Ok(());
        }
        let mut probes = vec![(ChildAction::ProbeOpenRoot, "listing / (outside the root)")];
        if !self.cfg.allow_network && self.egress.is_none() {
            probes.push((ChildAction::ProbeInetSocket, "creating an AF_INET socket"));
        }
        if self.egress.is_some() {
            probes.push((
                ChildAction::ProbeUdpSocket,
                "creating a UDP socket (egress)",
            ));
        }
        probes.push((ChildAction::ProbeUnshare, "unshare(CLONE_NEWUSER)"));
        if self.stage.is_some() {
            probes.push((
                ChildAction::ProbeHiddenPath,
                "finding a host path outside the private mount namespace",
            ));
        }
        for (action, what) in probes {
            let (_, report) = self.run_action(action, "true", t, &BTreeMap::new(), 0)?;
            if report.setup_step != sys::step::PROBE {
                return Err(SandboxError::SelfTest(format!(
                    "probe '{what}' could not run: {}",
                    setup_error(&report)
                )));
            }
            if report.setup_errno == 0 {
                return Err(SandboxError::SelfTest(format!(
                    "{what} was not refused inside the sandbox"
                )));
            }
        }
        Ok(())
    }
}

fn check_extra(extra: &BTreeMap<String, String>) -> Result<()> {
    for (k, v) in extra {
        if k.is_empty() || k.contains('=') || k.contains('\0') || v.contains('\0') {
            return Err(SandboxError::Config(format!(
                "environment variable {k:?}: a name must be non-empty without '=' or NUL, and \
                 a value without NUL"
            )));
        }
    }
    Ok(())
}

/// A command started by [`SandboxPolicy::start_tagged`].
///
/// Dropped without [`PendingRun::finish`], it kills the supervisor (the shell dies with it;
/// processes the command detached may outlive it) and waits for it.
pub struct PendingRun {
    policy: Arc<SandboxPolicy>,
    parts: Option<(Slot, spawn::Started, Steps)>,
}

impl std::fmt::Debug for PendingRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingRun")
            .field("supervisor", &self.supervisor_pid())
            .finish_non_exhaustive()
    }
}

impl PendingRun {
    /// The supervisor's pid: its children are the command's processes (what a cancel
    /// kills), or `None` once finished.
    pub fn supervisor_pid(&self) -> Option<i32> {
        self.parts.as_ref().map(|(_, s, _)| s.supervisor_pid())
    }

    /// A descriptor that turns readable when the command is done (`None` on kernels
    /// before 5.3, or once finished).
    pub fn pidfd(&self) -> Option<BorrowedFd<'_>> {
        self.parts.as_ref().and_then(|(_, s, _)| s.pidfd())
    }

    /// The outcome (waits if the command is not done yet).
    ///
    /// # Errors
    /// As [`SandboxPolicy::run_tagged`]; [`SandboxError::Spawn`] when called twice.
    pub fn finish(&mut self) -> Result<RunOutcome> {
        let Some((slot, started, steps)) = self.parts.take() else {
            return Err(SandboxError::Spawn("this run was already finished".into()));
        };
        let (outcome, report) = self.policy.finish_action(slot, started, steps)?;
        if report.setup_step != 0 {
            return Err(setup_error(&report));
        }
        Ok(outcome)
    }
}

impl Drop for PendingRun {
    fn drop(&mut self) {
        if let Some((slot, started, _steps)) = self.parts.take() {
            drop(started); // kills and reaps the supervisor first: C may use the slot
            self.policy.slots.put_back(slot, false);
        }
    }
}

fn setup_error(report: &Report) -> SandboxError {
    SandboxError::Spawn(format!(
        "sandbox setup failed at '{}': {}",
        sys::step_name(report.setup_step),
        std::io::Error::from_raw_os_error(report.setup_errno)
    ))
}
