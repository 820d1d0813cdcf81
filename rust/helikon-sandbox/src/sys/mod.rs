//! Every `unsafe` block of the crate: kernel probes, fork, the supervisor and the child's
//! confinement sequence.
//!
//! # The process shape
//!
//! ```text
//! host (Python)  ──fork──>  supervisor S  ──fork──>  child C ──execve──> /bin/sh -c CMD
//!   reads pipes              subreaper; waits C      setsid, dup2, rlimits, uid drop,
//!   reads S's report         with the deadline;      no_new_privs, Landlock, seccomp
//!                            kills C's group, then
//!                            sweeps every descendant
//! ```
//!
//! The host process itself is never restricted and never becomes a subreaper.
//!
//! # Rules for the code after `fork`
//!
//! The host is multi-threaded (Python, tokio, ...), so between `fork` and `execve` (and in the
//! supervisor, which never execs) only async-signal-safe system calls are made: nothing
//! allocates, locks, panics or unwinds. Everything the children need (argv, envp, the Landlock
//! ruleset descriptor, the seccomp programs, rlimit values) is prepared by the caller before
//! `fork` and only read afterwards; arithmetic is wrapping or saturating; buffers are on the
//! stack; failures are reported as two `i32`s over a pipe and end the process with `_exit`.
#![allow(unsafe_code)]

mod child;
mod supervisor;

use std::ffi::CStr;
use std::io;
use std::os::fd::RawFd;

use libc::{c_char, c_int, c_long, c_uint, pid_t};

/// Setup step numbers reported by the child when a step fails (see [`step_name`]).
pub(crate) mod step {
    pub const SIGNALS: i32 = 1;
    pub const SETSID: i32 = 2;
    pub const STDIO: i32 = 3;
    pub const CLOSE_FDS: i32 = 4;
    pub const CHDIR: i32 = 5;
    pub const RLIMIT: i32 = 6;
    pub const CAPS: i32 = 7;
    pub const SETGROUPS: i32 = 8;
    pub const SETGID: i32 = 9;
    pub const SETUID: i32 = 10;
    pub const PDEATHSIG: i32 = 11;
    pub const NO_NEW_PRIVS: i32 = 12;
    pub const LANDLOCK: i32 = 13;
    pub const SECCOMP: i32 = 14;
    pub const EXEC: i32 = 15;
    pub const FORK: i32 = 16;
    pub const PIPE: i32 = 17;
    /// Not a failure: the result of a built-in probe (errno 0 = the probe succeeded).
    pub const PROBE: i32 = 100;
}

/// Human-readable name of a setup step.
pub(crate) fn step_name(s: i32) -> &'static str {
    match s {
        step::SIGNALS => "reset signals",
        step::SETSID => "setsid",
        step::STDIO => "redirect stdio",
        step::CLOSE_FDS => "close inherited descriptors",
        step::CHDIR => "chdir to the root",
        step::RLIMIT => "setrlimit",
        step::CAPS => "drop capabilities",
        step::SETGROUPS => "drop supplementary groups",
        step::SETGID => "setresgid",
        step::SETUID => "setresuid",
        step::PDEATHSIG => "parent-death signal",
        step::NO_NEW_PRIVS => "no_new_privs",
        step::LANDLOCK => "landlock_restrict_self",
        step::SECCOMP => "seccomp filter",
        step::EXEC => "execve",
        step::FORK => "fork",
        step::PIPE => "pipe",
        _ => "unknown step",
    }
}

/// What the child does once confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChildAction {
    /// `execve` the program.
    Exec,
    /// Self-test: `open("/", O_DIRECTORY)` (must be refused by Landlock).
    ProbeOpenRoot,
    /// Self-test: `socket(AF_INET, SOCK_STREAM)` (must be refused by seccomp).
    ProbeInetSocket,
    /// Self-test: `unshare(CLONE_NEWUSER)` (must be refused by seccomp).
    ProbeUnshare,
}

/// One seccomp program, as the kernel wants it.
pub(crate) type BpfProgram = Vec<libc::sock_filter>;

/// Everything the confined child needs, prepared before `fork`.
pub(crate) struct ChildSpec<'a> {
    /// Program path for `execve`.
    pub program: &'a CStr,
    /// NULL-terminated argv.
    pub argv: &'a [*const c_char],
    /// NULL-terminated envp.
    pub envp: &'a [*const c_char],
    /// Directory descriptor to `fchdir` to (the opened root).
    pub cwd_fd: RawFd,
    /// Descriptors for fds 0, 1 and 2 (all >= 3).
    pub stdio: [RawFd; 3],
    /// `(resource, limit)` pairs, soft = hard.
    pub rlimits: &'a [(c_int, u64)],
    /// Switch to this `(uid, gid)` and drop every capability and supplementary group.
    pub creds: Option<(u32, u32)>,
    /// Highest capability number of the running kernel.
    pub cap_last: c_int,
    /// Set `PR_SET_NO_NEW_PRIVS`.
    pub no_new_privs: bool,
    /// Landlock ruleset descriptor to enforce.
    pub landlock_fd: Option<RawFd>,
    /// Seccomp programs, installed in order, after Landlock.
    pub seccomp: &'a [BpfProgram],
    /// What to do once confined.
    pub action: ChildAction,
}

/// Supervisor parameters.
pub(crate) struct SupervisorSpec {
    /// Wall-clock limit for the child, in milliseconds.
    pub timeout_ms: u64,
    /// Time between SIGTERM and SIGKILL on timeout.
    pub kill_grace_ms: u64,
    /// Upper bound for the final sweep of descendants.
    pub sweep_limit_ms: u64,
    /// Write end of the report pipe (>= 3).
    pub report_fd: RawFd,
}

/// The supervisor's report, read by the host from the report pipe.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Report {
    /// Exit code when the child exited normally.
    pub exit_code: Option<i32>,
    /// Signal number when the child was killed by a signal.
    pub signal: Option<i32>,
    /// The deadline passed and the child's group was killed.
    pub timed_out: bool,
    /// Setup step that failed (0 when the child reached its action).
    pub setup_step: i32,
    /// errno of the failed step, or the probe result.
    pub setup_errno: i32,
    /// Descendants killed by the final sweep (not counting the child's own group).
    pub swept: i32,
    /// The sweep gave up before every descendant was gone.
    pub sweep_incomplete: bool,
}

const REPORT_MAGIC: i32 = 0x4845_4c4b; // "HELK"
/// Size of the serialized [`Report`].
pub(crate) const REPORT_LEN: usize = 9 * 4;

impl Report {
    /// Parse the bytes the supervisor wrote.
    pub(crate) fn parse(buf: &[u8]) -> Option<Self> {
        if buf.len() != REPORT_LEN {
            return None;
        }
        let mut w = [0i32; 9];
        for (i, chunk) in buf.chunks_exact(4).enumerate() {
            let mut b = [0u8; 4];
            b.copy_from_slice(chunk);
            *w.get_mut(i)? = i32::from_ne_bytes(b);
        }
        if w[0] != REPORT_MAGIC {
            return None;
        }
        Some(Self {
            exit_code: (w[1] == 1).then_some(w[2]),
            signal: (w[1] == 2).then_some(w[2]),
            timed_out: w[3] != 0,
            setup_step: w[4],
            setup_errno: w[5],
            swept: w[6],
            sweep_incomplete: w[7] != 0,
        })
    }
}

fn errno() -> c_int {
    // SAFETY: __errno_location always returns a valid pointer to this thread's errno.
    unsafe { *libc::__errno_location() }
}

// ------------------------------------------------------------------ probes (host side, safe)

/// `landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)`: the ABI version, or
/// `Err(errno)` (`ENOSYS`: not built in; `EOPNOTSUPP`: built in but disabled at boot).
pub(crate) fn landlock_abi() -> Result<i32, c_int> {
    // SAFETY: with a NULL attribute pointer and size 0 this call only queries the version.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    if v < 0 {
        Err(errno())
    } else {
        Ok(i32::try_from(v).unwrap_or(i32::MAX))
    }
}

/// The errata bitmask of the running kernel's Landlock (0 when the query is unsupported).
pub(crate) fn landlock_errata() -> u32 {
    // SAFETY: as for `landlock_abi`, with LANDLOCK_CREATE_RULESET_ERRATA.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            2u32, // LANDLOCK_CREATE_RULESET_ERRATA
        )
    };
    u32::try_from(v).unwrap_or(0)
}

/// Whether seccomp filter mode is available (`prctl(PR_GET_SECCOMP)` works and the kernel
/// knows `SECCOMP_GET_ACTION_AVAIL` for `SECCOMP_RET_ERRNO`).
pub(crate) fn seccomp_available() -> bool {
    // SAFETY: PR_GET_SECCOMP takes no pointer arguments.
    let mode = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    if mode < 0 {
        return false;
    }
    let action: u32 = libc::SECCOMP_RET_ERRNO;
    // SAFETY: the pointer refers to a live u32 for the duration of the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            2u32, // SECCOMP_GET_ACTION_AVAIL
            0u32,
            &action as *const u32,
        )
    };
    r == 0
}

/// Current effective uid.
pub(crate) fn geteuid() -> u32 {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() }
}

/// Current effective gid.
pub(crate) fn getegid() -> u32 {
    // SAFETY: getegid cannot fail.
    unsafe { libc::getegid() }
}

// ------------------------------------------------------------------ spawning

/// Fork the supervisor, which forks and confines the child. Returns the supervisor's pid.
///
/// `keep` lists the descriptors the supervisor and child need (stdio sources, cwd, Landlock
/// ruleset, report pipe); every other descriptor is closed in the supervisor.
pub(crate) fn spawn_supervised(
    child: &ChildSpec<'_>,
    sup: &SupervisorSpec,
    keep: &[RawFd],
) -> io::Result<pid_t> {
    let mut keep_sorted = [-1 as RawFd; 8];
    let mut n = 0usize;
    for &fd in keep {
        if n >= keep_sorted.len() {
            return Err(io::Error::other("too many descriptors to keep"));
        }
        keep_sorted[n] = fd;
        n += 1;
    }
    keep_sorted[..n].sort_unstable();
    if child.argv.last().is_some_and(|p| !p.is_null())
        || child.envp.last().is_some_and(|p| !p.is_null())
        || child.argv.is_empty()
        || child.envp.is_empty()
    {
        return Err(io::Error::other("argv and envp must be NULL-terminated"));
    }
    // SAFETY: getpid cannot fail.
    let host = unsafe { libc::getpid() };
    // SAFETY: fork in a multi-threaded process: the child only runs `supervisor`, which makes
    // async-signal-safe system calls on memory prepared before this point, and ends in _exit.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        supervisor::run(child, sup, &keep_sorted[..n], host);
    }
    Ok(pid)
}

fn exit_now(code: c_int) -> ! {
    // SAFETY: _exit ends the process without running atexit handlers or destructors, which is
    // what a forked child of a multi-threaded process must do.
    unsafe { libc::_exit(code) }
}

fn monotonic_ms() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec; CLOCK_MONOTONIC is always available.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1000)
        .wrapping_add((ts.tv_nsec as u64) / 1_000_000)
}

fn sleep_ms(ms: u64) {
    let ts = libc::timespec {
        tv_sec: (ms / 1000) as libc::time_t,
        tv_nsec: ((ms % 1000) * 1_000_000) as c_long,
    };
    // SAFETY: ts is valid; an early wake-up (EINTR) is harmless for our polling loops.
    unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
}

/// Close every descriptor >= 3 except those in `keep` (sorted ascending).
fn close_all_except(keep: &[RawFd]) {
    let mut next: c_uint = 3;
    for &fd in keep {
        if fd < 0 {
            continue;
        }
        let fd = fd as c_uint;
        if fd > next {
            close_range(next, fd - 1, 0);
        }
        if fd >= next {
            next = fd.wrapping_add(1);
        }
    }
    close_range(next, c_uint::MAX, 0);
}

fn close_range(first: c_uint, last: c_uint, flags: c_uint) {
    // SAFETY: close_range only affects this process's descriptor table.
    let r = unsafe { libc::syscall(libc::SYS_close_range, first, last, flags) };
    if r == 0 {
        return;
    }
    // Kernels before 5.9 (5.11 for CLOSE_RANGE_CLOEXEC): walk a bounded range by hand.
    let upper = last.min(65_535);
    let mut fd = first;
    while fd <= upper {
        // SAFETY: plain descriptor-table operations on possibly-unused numbers.
        unsafe {
            if flags & libc::CLOSE_RANGE_CLOEXEC != 0 {
                libc::fcntl(fd as c_int, libc::F_SETFD, libc::FD_CLOEXEC);
            } else {
                libc::close(fd as c_int);
            }
        }
        fd = fd.wrapping_add(1);
    }
}

fn write_all(fd: RawFd, bytes: &[u8]) {
    let mut off = 0usize;
    while off < bytes.len() {
        let rest = &bytes[off..];
        // SAFETY: `rest` is a valid readable buffer of rest.len() bytes.
        let n = unsafe { libc::write(fd, rest.as_ptr().cast(), rest.len()) };
        if n < 0 {
            if errno() == libc::EINTR {
                continue;
            }
            return;
        }
        if n == 0 {
            return;
        }
        off = off.saturating_add(n as usize);
    }
}
