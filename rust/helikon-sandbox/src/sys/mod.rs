//! Every `unsafe` block of the crate: kernel probes, the supervised spawn, the supervisor and
//! the child's confinement sequence.
//!
//! # The process shape
//!
//! ```text
//! host thread ──clone(CLONE_VM)──> supervisor S ──clone(CLONE_VM)──> child C
//!   waits on S's pidfd (or in     subreaper; owns the pipes;     setsid, dup3, rlimits,
//!   wait4), then reaps S (__WALL) waits C with the deadline,     uid drop, no_new_privs,
//!   reads its report and the      reading the output; kills      Landlock, seccomp, then
//!   captured output               C's group, sweeps, drains      execve /bin/sh -c CMD
//! ```
//!
//! Neither S nor C copies the host's address space: S runs on its own stack inside the host's
//! memory (like a thread that is a separate process: own pid, descriptor table, signal
//! dispositions, limits and credentials), and C borrows it on a second stack until `execve`
//! replaces it, as `posix_spawn` does. Forking a Python-sized process twice per call (page
//! tables, then copy-on-write faults in the host while S lived) was most of a call's cost.
//! The launch block and the stacks stay put in the [`Running`] value until S has been
//! reaped; an event loop can wait for S's pidfd instead of a thread sleeping in `wait4`, so
//! one wake-up of the loop ends the call. Both are pinned to the caller's CPU while they start (they
//! then run at once where the sleeping parent was, instead of queueing behind another
//! process on a busy machine) and restore the caller's CPU mask right after. The host
//! process itself is never restricted and never becomes a subreaper; S's exit signal is 0,
//! so only a `__WALL` wait (ours) can reap it, never a host-wide `waitpid(-1)`.
//!
//! # Rules for the code after `clone`
//!
//! S and C run in the host's memory next to the host's own threads, and they carry the
//! thread-local block of the host thread that created them. So they only make raw system
//! calls ([`raw`]: no libc, no `errno`), never allocate, lock, panic or unwind, and only read
//! the [`Launch`] block that the host prepared before `clone` and keeps alive until S is
//! reaped (if S ends before C is known to have reached `execve`, the block and the stacks
//! are leaked rather than freed under C). Every wait in S is bounded, so the calling thread
//! always wakes: a child that never reaches `execve` is killed after the command's timeout,
//! one that cannot be reaped after `SIGKILL` is reported as an incomplete sweep. Every signal is blocked in the host
//! thread around `clone`, so no host signal handler ever runs on S's or C's stack; C resets
//! every disposition before it unblocks. Indexing uses `get`, arithmetic wraps or saturates.
//!
//! A credential change in C (the uid drop) marks the shared address space non-dumpable, as
//! the kernel does for any process that changes uid. The host restores its previous
//! dumpable flag once no call with a uid drop is in flight (see [`launch`]).
#![allow(unsafe_code)]

mod child;
pub(crate) mod launch;
mod memwatch;
mod mounts;
mod netns;
mod procfs;
pub(crate) mod raw;
mod supervisor;

use libc::c_int;

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
    pub const MOUNTS: i32 = 18;
    pub const NETNS: i32 = 19;
    pub const USERNS: i32 = 20;
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
        step::MOUNTS => "private mount namespace",
        step::NETNS => "egress network namespace",
        step::USERNS => "user namespace",
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
    /// Self-test: `socket(AF_INET, SOCK_DGRAM)` (must be refused by seccomp with egress).
    ProbeUdpSocket,
    /// Self-test: `unshare(CLONE_NEWUSER)` (must be refused by seccomp).
    ProbeUnshare,
    /// Self-test: `open(<the mount stage>, O_PATH)`, a path that exists on the host (must
    /// not exist inside the private mount namespace).
    ProbeHiddenPath,
}

/// One seccomp program, as the kernel wants it.
pub(crate) type BpfProgram = Vec<libc::sock_filter>;

/// The supervisor's report, left in the launch block.
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
    /// The memory watchdog killed the command (its resident memory passed the ceiling).
    pub killed_for_memory: bool,
}

/// Report word 8: the command was killed by the memory watchdog.
pub(crate) const KILLED_MEMORY: i32 = 1;

/// First word of a complete report ("HELK"), written last by the supervisor.
pub(crate) const REPORT_MAGIC: i32 = 0x4845_4c4b;
/// Words in a report.
pub(crate) const REPORT_WORDS: usize = 9;

impl Report {
    /// Decode the words the supervisor wrote (`None` without the magic word).
    pub(crate) fn from_words(w: &[i32; REPORT_WORDS]) -> Option<Self> {
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
            killed_for_memory: w[8] == KILLED_MEMORY,
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

/// `FS_IOC_FSGETXATTR` on `fd`: the extended inode flags and the project id, or `None` where
/// the filesystem does not support the call.
pub(crate) fn fs_xattr(fd: std::os::fd::BorrowedFd<'_>) -> Option<(u32, u32)> {
    use std::os::fd::AsRawFd;
    #[repr(C)]
    struct FsXattr {
        xflags: u32,
        extsize: u32,
        nextents: u32,
        projid: u32,
        cowextsize: u32,
        pad: [u8; 8],
    }
    const FS_IOC_FSGETXATTR: u32 = 0x801c_581f; // _IOR('X', 31, struct fsxattr)
    let mut x = FsXattr {
        xflags: 0,
        extsize: 0,
        nextents: 0,
        projid: 0,
        cowextsize: 0,
        pad: [0; 8],
    };
    // SAFETY: the request writes one `struct fsxattr` (28 bytes) into `x`.
    let r = unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            FS_IOC_FSGETXATTR as _,
            &mut x as *mut FsXattr,
        )
    };
    (r == 0).then_some((x.xflags, x.projid))
}

/// Run `f` when the process exits normally (`exit`, including the Python interpreter's).
pub(crate) fn at_exit(f: extern "C" fn()) {
    // SAFETY: registering a plain function pointer; it runs on the exiting thread.
    unsafe { libc::atexit(f) };
}

/// The page size in bytes (at least 4096).
pub(crate) fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let v = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(v).ok().filter(|p| *p >= 4096).unwrap_or(4096)
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

pub(crate) use launch::{start_supervised, Launch, Running};
