//! Running the supervisor: the [`Launch`] block, the stacks, `clone`, the reap (or, if S was
//! killed before C reached `execve`, leaking what C may still read).
use std::cell::{RefCell, UnsafeCell};
use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::Mutex;

use libc::{c_char, c_int, c_void, pid_t};

use super::{raw, supervisor, BpfProgram, ChildAction, REPORT_WORDS};
use crate::output::HeadTail;

/// Everything S and C read, prepared by the host before `clone` (one heap block whose address
/// never changes while they run), and what S leaves for the host (report, captured output).
pub(crate) struct Launch {
    // --- the child
    /// Program path for `execve`.
    pub program: CString,
    argv_owned: Vec<CString>,
    /// NULL-terminated argv (pointers into `argv_owned`).
    pub argv: Vec<*const c_char>,
    env_owned: Vec<CString>,
    /// NULL-terminated envp (pointers into `env_owned`).
    pub envp: Vec<*const c_char>,
    /// Directory descriptor to `fchdir` to (the opened root).
    pub cwd_fd: RawFd,
    /// Descriptor for fd 0 (>= 3).
    pub stdin: RawFd,
    /// `(resource, limit)` pairs, soft = hard.
    pub rlimits: Vec<(c_int, u64)>,
    /// Switch to this `(uid, gid)` and drop every capability and supplementary group.
    pub creds: Option<(u32, u32)>,
    /// Highest capability number of the running kernel.
    pub cap_last: c_int,
    /// Set `PR_SET_NO_NEW_PRIVS`.
    pub no_new_privs: bool,
    /// Enter a private mount namespace showing only these paths (before the uid drop).
    pub mounts: Option<crate::mount_plan::MountPlan>,
    /// Landlock ruleset descriptor to enforce.
    pub landlock_fd: Option<RawFd>,
    /// Enter a user namespace first, with these identity maps (a host that is not root:
    /// for `private_mounts` and for the egress network namespace).
    pub userns: Option<crate::mount_plan::IdMaps>,
    /// Egress: the port of the listener in the command's own network namespace (0: none).
    pub egress_port: u16,
    /// Egress: the bridge's sending end (S passes each accepted connection over it), or -1.
    pub egress_bridge: RawFd,
    /// Egress: the tag S sends with each connection (the proxy's command id).
    pub egress_tag: u64,
    /// The socket pair S makes for C to pass its listener: `[S's end, C's end]`, -1 unset.
    pub listener_pair: [AtomicI32; 2],
    /// Seccomp programs, installed in order, after Landlock.
    pub seccomp: Vec<BpfProgram>,
    /// What to do once confined.
    pub action: ChildAction,
    // --- the supervisor
    /// Wall-clock limit for the child, in milliseconds.
    pub timeout_ms: u64,
    /// Time between SIGTERM and SIGKILL on timeout.
    pub kill_grace_ms: u64,
    /// Upper bound for the final sweep of descendants.
    pub sweep_limit_ms: u64,
    /// Upper bound for reading the pipes to EOF after the sweep.
    pub drain_ms: u64,
    /// Resident-memory ceiling of the command's processes, in pages (0: no watchdog).
    pub memory_limit_pages: u64,
    /// How often S sums the command's resident memory, in milliseconds.
    pub memory_poll_ms: u64,
    /// Write end of the stdout pipe S creates (>= 3), for C's fd 1.
    pub out_w: AtomicI32,
    /// Write end of the stderr pipe S creates (>= 3), for C's fd 2.
    pub err_w: AtomicI32,
    /// Descriptors S keeps (sorted, `-1` padded); every other one is closed in S.
    pub keep: [RawFd; 8],
    /// The host's pid (S checks it is still its parent after arming the death signal).
    pub host: pid_t,
    /// Top of C's stack (16-byte aligned), set by [`spawn_supervised`].
    pub child_stack_top: usize,
    /// The host thread's CPU mask while S and C are pinned to its CPU at creation (so each
    /// starts at once on the CPU its sleeping parent frees).
    pub affinity: raw::CpuMask,
    /// Bytes of `affinity` to restore (0: nothing was pinned).
    pub affinity_len: usize,
    /// S's pid, stored by S before it creates C (C checks its parent against it).
    pub supervisor: AtomicI32,
    // --- written by C (before it execs or exits) and S, read by S and the host
    /// Setup step that failed in C (0: none), or `step::PROBE`.
    pub step: AtomicI32,
    /// errno of the failed step, or the probe's result.
    pub errno: AtomicI32,
    /// Set by S once C has called `execve` successfully or ended: C no longer uses this
    /// block or its stack.
    pub released: AtomicBool,
    // --- written by S only, read by the host after S exited
    /// Captured stdout.
    pub out: UnsafeCell<HeadTail>,
    /// Captured stderr.
    pub err: UnsafeCell<HeadTail>,
    /// The report words ([`super::Report::from_words`]); the magic word is written last.
    pub report: UnsafeCell<[i32; REPORT_WORDS]>,
    /// Record [`Mark`] timestamps (for `HELIKON_SANDBOX_TIMING`).
    pub timing: bool,
    /// Monotonic nanoseconds per [`Mark`] (0: not reached).
    pub marks: [AtomicU64; MARKS],
}

/// Points in S and C whose time is recorded when [`Launch::timing`] is set.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Mark {
    /// The host is about to create S.
    Clone = 0,
    /// S runs.
    Supervisor,
    /// C runs.
    Child,
    /// C reset its signals.
    Signals,
    /// C set up stdio, cwd and limits.
    Limits,
    /// C dropped its credentials.
    Creds,
    /// C is under Landlock.
    Landlock,
    /// C installed seccomp and calls execve.
    Seccomp,
    /// S reaped C (the command ended).
    Ended,
    /// S finished the sweep and reports.
    Swept,
}

/// Number of [`Mark`]s.
pub(crate) const MARKS: usize = 10;

/// Names of the intervals between consecutive marks, as reported in the timing line.
pub(crate) const MARK_NAMES: [&str; MARKS] = [
    "",
    "s_start",
    "c_start",
    "c_signals",
    "c_limits",
    "c_creds",
    "c_landlock",
    "c_seccomp",
    "exec_to_exit",
    "sweep",
];

impl Launch {
    /// Record `m` now if timing is on (raw clock, safe in S and C).
    pub(crate) fn mark(&self, m: Mark) {
        if self.timing {
            if let Some(slot) = self.marks.get(m as usize) {
                slot.store(raw::monotonic_ns(), Ordering::Relaxed);
            }
        }
    }

    /// Microseconds between consecutive recorded marks, by interval name.
    pub(crate) fn intervals(&self) -> Vec<(&'static str, u64)> {
        let mut out = Vec::new();
        let mut prev: Option<u64> = None;
        for (slot, name) in self.marks.iter().zip(MARK_NAMES) {
            let t = slot.load(Ordering::Relaxed);
            if t == 0 {
                continue;
            }
            if let Some(p) = prev {
                out.push((name, t.saturating_sub(p) / 1000));
            }
            prev = Some(t);
        }
        out
    }
}

impl Launch {
    /// A block for `program argv...` with `env` and `output_cap` bytes of capture per stream;
    /// the other fields are filled by the caller.
    pub(crate) fn new(
        program: CString,
        argv: Vec<CString>,
        env: Vec<CString>,
        output_cap: usize,
    ) -> Self {
        let mut argv_ptrs: Vec<*const c_char> = argv.iter().map(|c| c.as_ptr()).collect();
        argv_ptrs.push(std::ptr::null());
        let mut envp: Vec<*const c_char> = env.iter().map(|c| c.as_ptr()).collect();
        envp.push(std::ptr::null());
        Self {
            program,
            argv_owned: argv,
            argv: argv_ptrs,
            env_owned: env,
            envp,
            cwd_fd: -1,
            stdin: -1,
            rlimits: Vec::new(),
            creds: None,
            cap_last: 63,
            no_new_privs: false,
            mounts: None,
            landlock_fd: None,
            userns: None,
            egress_port: 0,
            egress_bridge: -1,
            egress_tag: 0,
            listener_pair: [AtomicI32::new(-1), AtomicI32::new(-1)],
            seccomp: Vec::new(),
            action: ChildAction::Exec,
            timeout_ms: 0,
            kill_grace_ms: 0,
            sweep_limit_ms: 0,
            drain_ms: 0,
            memory_limit_pages: 0,
            memory_poll_ms: 0,
            out_w: AtomicI32::new(-1),
            err_w: AtomicI32::new(-1),
            keep: [-1; 8],
            host: 0,
            child_stack_top: 0,
            affinity: [0; 16],
            affinity_len: 0,
            supervisor: AtomicI32::new(0),
            step: AtomicI32::new(0),
            errno: AtomicI32::new(0),
            released: AtomicBool::new(false),
            out: UnsafeCell::new(HeadTail::new(output_cap)),
            err: UnsafeCell::new(HeadTail::new(output_cap)),
            report: UnsafeCell::new([0; REPORT_WORDS]),
            timing: false,
            marks: Default::default(),
        }
    }

    /// The strings the pointer arrays refer to (kept alive with them).
    fn owned_len(&self) -> usize {
        self.argv_owned.len() + self.env_owned.len()
    }
}

// ------------------------------------------------------------------ stacks

/// Bytes of stack for S and for C each.
const STACK_LEN: usize = 256 * 1024;

/// One mapping: `[guard][S stack][guard][C stack]`; the guards are `PROT_NONE`.
pub(crate) struct Stacks {
    base: *mut c_void,
    len: usize,
    page: usize,
}

impl Stacks {
    fn new() -> io::Result<Self> {
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
            .ok()
            .filter(|p| *p >= 4096)
            .unwrap_or(4096);
        let len = 2 * (page + STACK_LEN);
        // SAFETY: a fresh private anonymous mapping; nothing else refers to it.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let stacks = Self { base, len, page };
        for guard in [0, page + STACK_LEN] {
            // SAFETY: the range lies inside the mapping created above.
            let r = unsafe {
                libc::mprotect(
                    (base as usize + guard) as *mut c_void,
                    page,
                    libc::PROT_NONE,
                )
            };
            if r != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(stacks)
    }

    /// 16-byte aligned tops of S's and C's stacks.
    fn tops(&self) -> (usize, usize) {
        let b = self.base as usize;
        let s_top = b + self.page + STACK_LEN;
        let c_top = b + self.len;
        (s_top & !15, c_top & !15)
    }
}

impl Drop for Stacks {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping this value owns; nobody runs on it any more (a
        // `Stacks` that C might still use is leaked instead of dropped).
        unsafe { libc::munmap(self.base, self.len) };
    }
}

thread_local! {
    /// One set of stacks per host thread, reused by its next call (calls on one thread are
    /// sequential), so a call costs no mapping and no page faults for them.
    static SPARE: RefCell<Option<Stacks>> = const { RefCell::new(None) };
}

fn take_stacks() -> io::Result<Stacks> {
    match SPARE.with(|s| s.borrow_mut().take()) {
        Some(st) => Ok(st),
        None => Stacks::new(),
    }
}

fn return_stacks(st: Stacks) {
    SPARE.with(|s| {
        let mut slot = s.borrow_mut();
        if slot.is_none() {
            *slot = Some(st);
        }
    });
}

// ------------------------------------------------------------------ dumpable flag

/// Calls with a uid drop in flight, and the dumpable flag from before the first of them.
static DUMPABLE: Mutex<(usize, c_int)> = Mutex::new((0, -1));

fn dumpable_enter() {
    let mut g = match DUMPABLE.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    if g.0 == 0 {
        // SAFETY: PR_GET_DUMPABLE takes no pointers.
        g.1 = unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) };
    }
    g.0 += 1;
}

fn dumpable_leave() {
    let mut g = match DUMPABLE.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    g.0 = g.0.saturating_sub(1);
    if g.0 == 0 && g.1 == 1 {
        // SAFETY: PR_GET/SET_DUMPABLE take no pointers. No child of ours is between its uid
        // change and its execve now (none is in flight), so nothing unprivileged shares
        // this address space.
        unsafe {
            if libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) != 1 {
                libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0);
            }
        }
    }
}

// ------------------------------------------------------------------ running

extern "C" fn supervisor_entry(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the `Launch` owned by the `Running` that `start_supervised` returns,
    // which keeps it in place until S has been reaped (or leaks it).
    let launch = unsafe { &*(arg as *const Launch) };
    supervisor::run(launch)
}

/// What a finished supervisor left behind.
pub(crate) struct Finished {
    /// The launch block with S's report and the captured output.
    pub launch: Box<Launch>,
    /// S/C intervals in microseconds (empty unless timing was on).
    pub intervals: Vec<(&'static str, u64)>,
}

/// A supervisor that is running: S's pid and pidfd, and what S and C use until S exits (the
/// launch block and the stacks, owned here so they stay put).
pub(crate) struct Running {
    pid: pid_t,
    pidfd: Option<OwnedFd>,
    launch: Option<Box<Launch>>,
    stacks: Option<Stacks>,
    dumpable: bool,
}

// SAFETY: a `Running` owns its launch block (whose pointers point into strings the same box
// owns) and its stack mapping; nothing in it is tied to the thread that created S. S can be
// reaped from any thread of this process (`__WALL`, same thread group), and the stacks go
// back to the spare slot of whichever thread finishes.
unsafe impl Send for Running {}

impl Running {
    /// S's pid (for a cancel: its children are the command).
    pub(crate) fn supervisor_pid(&self) -> pid_t {
        self.pid
    }

    /// A descriptor that turns readable when S has exited (`None` on kernels before 5.3).
    pub(crate) fn pidfd(&self) -> Option<BorrowedFd<'_>> {
        self.pidfd.as_ref().map(|fd| fd.as_fd())
    }

    /// Wait for S to exit (at once when [`Running::pidfd`] is readable) and take its results.
    ///
    /// # Errors
    /// When S was killed before C was known to have reached `execve` (then the block and
    /// the stacks are leaked, since C may still be reading them).
    pub(crate) fn finish(mut self) -> io::Result<Finished> {
        let mut status: c_int = 0;
        // Reaped, or (ECHILD) someone else reaped it with __WALL: gone either way.
        while raw::wait4(self.pid, &mut status, libc::__WALL) == Err(libc::EINTR) {}
        let (Some(launch), Some(stacks)) = (self.launch.take(), self.stacks.take()) else {
            return Err(io::Error::other(
                "the supervisor's results were already taken",
            ));
        };
        if !launch.released.load(Ordering::SeqCst) {
            // S ended before it saw C reach execve (C stuck before exec, or S killed): C may
            // still be running on its stack and reading the block. Leak both; keep the host
            // non-dumpable.
            std::mem::forget(stacks);
            std::mem::forget(launch);
            self.dumpable = false;
            return Err(io::Error::other(
                "the command never started (the child did not reach execve in time, or the \
                 supervisor was killed)",
            ));
        }
        return_stacks(stacks);
        if self.dumpable {
            self.dumpable = false;
            dumpable_leave();
        }
        let intervals = if launch.timing {
            launch.intervals()
        } else {
            Vec::new()
        };
        Ok(Finished { launch, intervals })
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.launch.is_none() {
            return;
        }
        // Never finished (the caller went away): end S (its death signal takes C along, and
        // the command's group is S's to kill, which it no longer can), then reap it.
        let _ = raw::kill(self.pid, libc::SIGKILL);
        let mut status: c_int = 0;
        while raw::wait4(self.pid, &mut status, libc::__WALL) == Err(libc::EINTR) {}
        // C may be between clone and execve on its stack: leak rather than free.
        if let (Some(launch), Some(stacks)) = (self.launch.take(), self.stacks.take()) {
            if launch.released.load(Ordering::SeqCst) {
                return_stacks(stacks);
                if self.dumpable {
                    dumpable_leave();
                }
            } else {
                std::mem::forget(stacks);
                std::mem::forget(launch);
            }
        }
    }
}

/// Start the supervisor for `launch` and return at once: S runs on its own stack in this
/// address space (like a thread that is a separate process) until it exits; the block and
/// the stacks stay put in the returned [`Running`] meanwhile.
///
/// # Errors
/// When the block is malformed or S cannot be created.
pub(crate) fn start_supervised(mut launch: Box<Launch>) -> io::Result<Running> {
    if launch.argv.last().is_some_and(|p| !p.is_null())
        || launch.envp.last().is_some_and(|p| !p.is_null())
        || launch.argv.len() < 2
        || launch.owned_len() + 2 != launch.argv.len() + launch.envp.len()
    {
        return Err(io::Error::other("argv and envp must be NULL-terminated"));
    }
    if launch.keep.windows(2).any(|w| w[0] > w[1] && w[1] >= 0) {
        return Err(io::Error::other("keep must be sorted"));
    }
    let stacks = take_stacks()?;
    let (s_top, c_top) = stacks.tops();
    launch.child_stack_top = c_top;
    launch.host = raw::getpid();
    let dumpable = launch.creds.is_some();
    if dumpable {
        dumpable_enter();
    }
    // Pin this thread (and so S, which inherits the mask) to the CPU it runs on: the new
    // process is then queued where this thread runs, instead of wherever fork balancing
    // puts it (on a busy machine, behind another process's time slice).
    let mut mask: raw::CpuMask = [0; 16];
    if let (Ok(len), Some(cpu)) = (raw::sched_getaffinity(&mut mask), raw::getcpu()) {
        let mut one: raw::CpuMask = [0; 16];
        if let Some(word) = one.get_mut((cpu / 64) as usize) {
            *word = 1u64 << (cpu % 64);
            if raw::sched_setaffinity(&one, len).is_ok() {
                launch.affinity = mask;
                launch.affinity_len = len;
            }
        }
    }
    launch.mark(Mark::Clone);
    let arg = &*launch as *const Launch as *mut c_void;
    // SAFETY: every signal is blocked in this thread around clone, so S starts with all of
    // them blocked (no host handler may run on S's stack); the mask is restored right
    // after. CLONE_VM: S shares this address space, on its own stack inside `stacks`, which
    // `Running` keeps (with the block) until S has been reaped. S gets its own descriptor
    // table, fs context, signal dispositions and limits. Exit signal 0: only a __WALL wait
    // (ours) can reap it.
    let pid = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let pid = libc::clone(supervisor_entry, s_top as *mut c_void, libc::CLONE_VM, arg);
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        pid
    };
    if launch.affinity_len > 0 {
        let _ = raw::sched_setaffinity(&launch.affinity, launch.affinity_len);
    }
    if pid < 0 {
        let e = io::Error::last_os_error();
        return_stacks(stacks);
        if dumpable {
            dumpable_leave();
        }
        return Err(e);
    }
    // S cannot be reaped (and its pid reused) by anyone but us, so this is S.
    let pidfd = raw::pidfd_open(pid).ok().and_then(|fd| {
        let fd = c_int::try_from(fd).ok()?;
        // SAFETY: pidfd_open returned a new descriptor that nothing else owns.
        Some(unsafe { OwnedFd::from_raw_fd(fd) })
    });
    Ok(Running {
        pid,
        pidfd,
        launch: Some(launch),
        stacks: Some(stacks),
        dumpable,
    })
}

impl Launch {
    /// The report and both captures, once S has exited.
    pub(crate) fn into_results(self) -> ([i32; REPORT_WORDS], HeadTail, HeadTail) {
        (
            self.report.into_inner(),
            self.out.into_inner(),
            self.err.into_inner(),
        )
    }
}
