//! One command run: pipes, the supervised spawn, bounded reading, the outcome.
//!
//! The host side only reads. The supervisor (see `sys`) owns the deadline and the process
//! tree, so when its report arrives every descendant is already gone and the pipes reach EOF
//! at once; the host still bounds the final drain and, as a last resort, kills a supervisor
//! that outlives every deadline.
use std::ffi::{CStr, CString};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};

use libc::c_int;
use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::pipe::{pipe_with, PipeFlags};
use rustix::process::{kill_process, waitpid, Pid, Signal, WaitOptions};
use serde::Serialize;

use crate::error::{Result, SandboxError};
use crate::output::HeadTail;
use crate::sys::{self, BpfProgram, ChildAction, ChildSpec, Report, SupervisorSpec};

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
}

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
    pub landlock: Option<OwnedFd>,
    pub seccomp: &'a [BpfProgram],
    pub action: ChildAction,
    pub timeout: Duration,
    pub kill_grace_ms: u64,
    pub output_cap: usize,
}

/// Upper bound for the supervisor's final sweep.
const SWEEP_LIMIT_MS: u64 = 2_000;
/// How long the host keeps draining the pipes once the supervisor has reported.
const DRAIN_GRACE: Duration = Duration::from_millis(250);

fn pipe_high() -> Result<(OwnedFd, OwnedFd)> {
    let (r, w) = pipe_with(PipeFlags::CLOEXEC).map_err(|e| SandboxError::io("pipe", e.into()))?;
    Ok((above_stdio(r)?, above_stdio(w)?))
}

/// Make sure a descriptor is not 0, 1 or 2, so `dup2` onto stdio always clears CLOEXEC.
pub(crate) fn above_stdio(fd: OwnedFd) -> Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    rustix::io::fcntl_dupfd_cloexec(&fd, 3).map_err(|e| SandboxError::io("dup", e.into()))
}

/// Run one prepared command to completion.
pub(crate) fn execute(p: Prepared<'_>) -> Result<(RunOutcome, Report)> {
    let command = CString::new(p.command)
        .map_err(|_| SandboxError::Config("the command contains a NUL byte".into()))?;
    let argv_owned = [p.shell.to_owned(), c"-c".to_owned(), command];
    let mut argv: Vec<*const libc::c_char> = argv_owned.iter().map(|c| c.as_ptr()).collect();
    argv.push(std::ptr::null());
    let mut envp: Vec<*const libc::c_char> = p.env.iter().map(|c| c.as_ptr()).collect();
    envp.push(std::ptr::null());

    let (out_r, out_w) = pipe_high()?;
    let (err_r, err_w) = pipe_high()?;
    let (rep_r, rep_w) = pipe_high()?;

    let landlock_raw = p.landlock.as_ref().map(|fd| fd.as_raw_fd());
    let spec = ChildSpec {
        program: p.shell,
        argv: &argv,
        envp: &envp,
        cwd_fd: p.cwd.as_raw_fd(),
        stdio: [p.devnull.as_raw_fd(), out_w.as_raw_fd(), err_w.as_raw_fd()],
        rlimits: &p.rlimits,
        creds: p.creds,
        cap_last: p.cap_last,
        no_new_privs: p.no_new_privs,
        landlock_fd: landlock_raw,
        seccomp: p.seccomp,
        action: p.action,
    };
    let timeout_ms = u64::try_from(p.timeout.as_millis()).unwrap_or(u64::MAX);
    let sup = SupervisorSpec {
        timeout_ms,
        kill_grace_ms: p.kill_grace_ms,
        sweep_limit_ms: SWEEP_LIMIT_MS,
        report_fd: rep_w.as_raw_fd(),
    };
    let mut keep = vec![
        p.devnull.as_raw_fd(),
        out_w.as_raw_fd(),
        err_w.as_raw_fd(),
        p.cwd.as_raw_fd(),
        rep_w.as_raw_fd(),
    ];
    if let Some(fd) = landlock_raw {
        keep.push(fd);
    }
    let started = Instant::now();
    let pid = sys::spawn_supervised(&spec, &sup, &keep)
        .map_err(|e| SandboxError::Spawn(format!("fork: {e}")))?;
    // The host keeps only the read ends.
    drop((out_w, err_w, rep_w, p.landlock));

    let hard_deadline = started
        + p.timeout
        + Duration::from_millis(p.kill_grace_ms + SWEEP_LIMIT_MS)
        + Duration::from_secs(5);
    let mut out = HeadTail::new(p.output_cap);
    let mut err = HeadTail::new(p.output_cap);
    let mut report_bytes = Vec::with_capacity(sys::REPORT_LEN);
    let mut open = [true, true, true];
    let mut reported_at: Option<Instant> = None;
    let mut killed_supervisor = false;
    let mut buf = vec![0u8; 64 * 1024];
    while open.iter().any(|o| *o) {
        let now = Instant::now();
        let limit = match reported_at {
            Some(t) => (t + DRAIN_GRACE).min(hard_deadline),
            None => hard_deadline,
        };
        if now >= limit {
            if reported_at.is_none() {
                // The supervisor outlived every deadline: end it (its own children get the
                // parent-death signal).
                if let Some(pid) = Pid::from_raw(pid) {
                    let _ = kill_process(pid, Signal::KILL);
                }
                killed_supervisor = true;
            }
            break;
        }
        let left = limit - now;
        let ts = Timespec {
            tv_sec: left.as_secs() as _,
            tv_nsec: left.subsec_nanos() as _,
        };
        let fds = [&out_r, &err_r, &rep_r];
        let mut pfds: Vec<PollFd<'_>> = Vec::with_capacity(3);
        let mut which: Vec<usize> = Vec::with_capacity(3);
        for (i, fd) in fds.iter().enumerate() {
            if open[i] {
                pfds.push(PollFd::new(*fd, PollFlags::IN));
                which.push(i);
            }
        }
        match poll(&mut pfds, Some(&ts)) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(SandboxError::io("poll", e.into())),
        }
        let ready: Vec<(usize, bool)> = pfds
            .iter()
            .zip(which.iter())
            .map(|(pfd, &i)| (i, !pfd.revents().is_empty()))
            .collect();
        for (i, is_ready) in ready {
            if !is_ready {
                continue;
            }
            let fd: BorrowedFd<'_> = fds[i].as_fd();
            match rustix::io::read(fd, &mut buf) {
                Ok(0) => {
                    open[i] = false;
                    if i == 2 && reported_at.is_none() {
                        reported_at = Some(Instant::now());
                    }
                }
                Ok(n) => {
                    let data = &buf[..n];
                    match i {
                        0 => out.push(data),
                        1 => err.push(data),
                        _ => {
                            report_bytes.extend_from_slice(data);
                            report_bytes.truncate(sys::REPORT_LEN);
                        }
                    }
                }
                Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
                Err(_) => open[i] = false,
            }
        }
    }
    let duration = started.elapsed();
    if let Some(pid) = Pid::from_raw(pid) {
        // Someone else (a Python child watcher) may have reaped it already; the report pipe
        // carries everything we need, so ECHILD is fine.
        let _ = waitpid(Some(pid), WaitOptions::empty());
    }
    let report = match Report::parse(&report_bytes) {
        Some(r) => r,
        None if killed_supervisor => {
            return Err(SandboxError::Spawn(
                "the supervisor did not finish in time and was killed".into(),
            ))
        }
        None => {
            return Err(SandboxError::Spawn(
                "the supervisor ended without a report".into(),
            ))
        }
    };
    let mut stderr = err.render();
    if report.sweep_incomplete {
        stderr.push_str(
            "\n[sandbox: some processes started by the command could not be killed before \
             the call returned]\n",
        );
    }
    let outcome = RunOutcome {
        exit_code: report.exit_code,
        signal: report.signal,
        truncated: out.truncated() || err.truncated(),
        stdout: out.render(),
        stderr,
        timed_out: report.timed_out,
        duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
    };
    Ok((outcome, report))
}
