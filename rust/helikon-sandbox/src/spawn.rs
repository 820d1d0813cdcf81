//! One command run: pipes, the supervised run, the outcome.
//!
//! The calling thread prepares the launch block and starts the supervisor (see `sys`), which
//! runs the command: it owns the deadline, reads both pipes into the bounded captures, kills
//! the process group and sweeps every descendant, reads the pipes to EOF (bounded) and leaves
//! its report. [`complete`] reaps it (at once when its pidfd is readable) and renders the
//! outcome.
use std::ffi::{CStr, CString};
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};

use libc::c_int;

use crate::error::{Result, SandboxError};
use crate::outcome::{KilledReason, RunOutcome};
use crate::sys::{self, BpfProgram, ChildAction, Launch, Report};
use crate::timing::Steps;

/// Everything one run needs, prepared by the policy.
pub(crate) struct Prepared<'a> {
    pub shell: &'a CStr,
    pub command: &'a str,
    pub env: Vec<CString>,
    pub cwd: BorrowedFd<'a>,
    pub devnull: BorrowedFd<'a>,
    pub rlimits: Vec<(c_int, u64)>,
    pub creds: Option<(u32, u32)>,
    pub cap_last: c_int,
    pub no_new_privs: bool,
    pub landlock: Option<BorrowedFd<'a>>,
    /// Enter a user namespace first (a host that is not root).
    pub userns: Option<crate::mount_plan::IdMaps>,
    /// Egress: the in-namespace port and the bridge's sending end.
    pub egress: Option<(u16, BorrowedFd<'a>)>,
    /// Egress: the tag passed with each of the command's connections.
    pub egress_tag: u64,
    pub seccomp: &'a [BpfProgram],
    pub action: ChildAction,
    pub timeout: Duration,
    pub kill_grace_ms: u64,
    pub output_cap: usize,
    pub memory_bytes: Option<u64>,
    pub mounts: Option<crate::mount_plan::MountPlan>,
}

/// A command whose supervisor is running.
pub(crate) struct Started {
    running: sys::Running,
    started: Instant,
    memory_bytes: Option<u64>,
}

impl Started {
    /// The supervisor's pid (its children are the command's processes).
    pub(crate) fn supervisor_pid(&self) -> libc::pid_t {
        self.running.supervisor_pid()
    }

    /// Readable once the supervisor has exited (`None` on kernels before 5.3).
    pub(crate) fn pidfd(&self) -> Option<BorrowedFd<'_>> {
        self.running.pidfd()
    }
}

/// Upper bound for the supervisor's final sweep.
const SWEEP_LIMIT_MS: u64 = 2_000;
/// How long the supervisor keeps reading the pipes to EOF after the sweep.
const DRAIN_GRACE_MS: u64 = 250;
/// How often the memory watchdog sums the command's resident memory.
const MEMORY_POLL_MS: u64 = 20;

/// Make sure a descriptor is not 0, 1 or 2, so `dup2` onto stdio always clears CLOEXEC.
pub(crate) fn above_stdio(fd: OwnedFd) -> Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    rustix::io::fcntl_dupfd_cloexec(&fd, 3).map_err(|e| SandboxError::io("dup", e.into()))
}

/// Start one prepared command; returns once its supervisor runs.
pub(crate) fn start(p: Prepared<'_>, steps: &mut Steps) -> Result<Started> {
    let command = CString::new(p.command)
        .map_err(|_| SandboxError::Config("the command contains a NUL byte".into()))?;
    let mut launch = Box::new(Launch::new(
        p.shell.to_owned(),
        vec![p.shell.to_owned(), c"-c".to_owned(), command],
        p.env,
        p.output_cap,
    ));

    let landlock_raw = p.landlock.as_ref().map(|fd| fd.as_raw_fd());
    launch.cwd_fd = p.cwd.as_raw_fd();
    launch.stdin = p.devnull.as_raw_fd();
    launch.rlimits = p.rlimits;
    launch.creds = p.creds;
    launch.cap_last = p.cap_last;
    launch.no_new_privs = p.no_new_privs;
    launch.mounts = p.mounts;
    launch.landlock_fd = landlock_raw;
    launch.userns = p.userns;
    let bridge_raw = p.egress.as_ref().map(|(_, fd)| fd.as_raw_fd());
    if let Some((port, bridge)) = &p.egress {
        launch.egress_port = *port;
        launch.egress_bridge = bridge.as_raw_fd();
        launch.egress_tag = p.egress_tag;
    }
    launch.seccomp = p.seccomp.to_vec();
    launch.action = p.action;
    launch.timeout_ms = u64::try_from(p.timeout.as_millis()).unwrap_or(u64::MAX);
    launch.kill_grace_ms = p.kill_grace_ms;
    launch.sweep_limit_ms = SWEEP_LIMIT_MS;
    launch.drain_ms = DRAIN_GRACE_MS;
    if let Some(bytes) = p.memory_bytes {
        launch.memory_limit_pages = bytes.div_ceil(sys::page_size()).max(1);
        launch.memory_poll_ms = MEMORY_POLL_MS;
    }
    launch.timing = steps.on();
    let mut keep = vec![p.devnull.as_raw_fd(), p.cwd.as_raw_fd()];
    keep.extend(landlock_raw);
    keep.extend(bridge_raw);
    keep.sort_unstable();
    keep.dedup();
    for (slot, fd) in launch.keep.iter_mut().zip(keep) {
        *slot = fd;
    }
    steps.mark("prepare");
    let started = Instant::now();
    let running = sys::start_supervised(launch)
        .map_err(|e| SandboxError::Spawn(format!("supervisor: {e}")))?;
    Ok(Started {
        running,
        started,
        memory_bytes: p.memory_bytes,
    })
}

/// Wait for a started command's supervisor (at once when its pidfd is readable): the
/// command ran, its process tree was swept and its output read; render the outcome.
pub(crate) fn complete(s: Started, steps: &mut Steps) -> Result<(RunOutcome, Report)> {
    let finished = s
        .running
        .finish()
        .map_err(|e| SandboxError::Spawn(format!("supervisor: {e}")))?;
    let duration = s.started.elapsed();
    steps.mark("run");
    for (name, us) in &finished.intervals {
        steps.record(name, *us);
    }
    let (words, out, err) = finished.launch.into_results();
    let Some(report) = Report::from_words(&words) else {
        return Err(SandboxError::Spawn(
            "the supervisor ended without a report".into(),
        ));
    };
    let mut stderr = err.render();
    if report.sweep_incomplete {
        stderr.push_str(
            "\n[sandbox: some processes started by the command could not be killed before \
             the call returned]\n",
        );
    }
    let killed_reason = if report.killed_for_memory {
        stderr.push_str(&memory_note(s.memory_bytes.unwrap_or(0)));
        Some(KilledReason::Memory)
    } else if report.timed_out {
        Some(KilledReason::Timeout)
    } else {
        None
    };
    let outcome = RunOutcome {
        exit_code: report.exit_code,
        signal: report.signal,
        truncated: out.truncated() || err.truncated(),
        stdout: out.render(),
        stderr,
        timed_out: report.timed_out,
        duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
        killed_reason,
    };
    Ok((outcome, report))
}

/// The line appended to stderr when the memory watchdog killed the command.
pub(crate) fn memory_note(limit: u64) -> String {
    format!(
        "\n[sandbox: killed: the command's resident memory exceeded the ceiling of {} \
         (limits.memory_bytes = {limit}); raise it or make the command use less]\n",
        human_bytes(limit)
    )
}

fn human_bytes(n: u64) -> String {
    const GIB: u64 = 1 << 30;
    const MIB: u64 = 1 << 20;
    if n >= GIB {
        format!("{:.1} GiB", n as f64 / GIB as f64)
    } else {
        format!("{:.0} MiB", n as f64 / MIB as f64)
    }
}
