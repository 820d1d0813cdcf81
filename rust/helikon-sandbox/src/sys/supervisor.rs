//! The supervisor S: a process that shares the host's memory (see the module documentation of
//! `sys`), never execs, is the child's parent and a subreaper. It creates the output pipes and
//! C, waits (bounded) until C has reached `execve`, enforces the deadline while reading both
//! pipes into the captures, kills the child's process group, sweeps every remaining
//! descendant, drains the pipes and leaves its report. Raw system calls only; no allocation,
//! no panics.
use std::os::fd::RawFd;
use std::sync::atomic::Ordering;

use libc::{c_int, c_uint, c_void, pid_t};

use super::launch::{Launch, Mark};
use super::memwatch::MemWatch;
use super::procfs;
use super::raw::{self, exit_now, monotonic_ms, sleep_ms};
use super::{child, step, KILLED_MEMORY, REPORT_MAGIC, REPORT_WORDS};
use crate::output::HeadTail;

/// Close every descriptor >= 3 except those in `keep` (ascending; negative entries ignored).
pub(super) fn close_all_except(keep: &[RawFd]) {
    let mut next: c_uint = 3;
    for &fd in keep {
        if fd < 0 {
            continue;
        }
        let fd = fd as c_uint;
        if fd > next {
            close_range(next, fd - 1);
        }
        if fd >= next {
            next = fd.wrapping_add(1);
        }
    }
    close_range(next, c_uint::MAX);
}

fn close_range(first: c_uint, last: c_uint) {
    if raw::close_range(first, last, 0).is_ok() {
        return;
    }
    // Kernels before 5.9: walk a bounded range by hand.
    let upper = last.min(65_535);
    let mut fd = first;
    while fd <= upper {
        let _ = raw::close(fd as c_int);
        fd = fd.wrapping_add(1);
    }
}

/// A CLOEXEC pipe with both ends above 2 (C's `dup3` onto 0..=2 must not clobber them).
fn pipe_above_stdio() -> Option<(c_int, c_int)> {
    above_stdio(raw::pipe().ok()?)
}

/// A CLOEXEC `SOCK_SEQPACKET` socket pair with both ends above 2.
fn seqpacket_above_stdio() -> Option<(c_int, c_int)> {
    above_stdio(raw::socketpair_unix(libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC).ok()?)
}

/// Move both descriptors of a pair above 2 (CLOEXEC).
fn above_stdio((r, w): (c_int, c_int)) -> Option<(c_int, c_int)> {
    let mut ends = [r, w];
    for end in &mut ends {
        if *end <= 2 {
            let high = raw::fcntl(*end, libc::F_DUPFD_CLOEXEC, 3).ok()? as c_int;
            let _ = raw::close(*end);
            *end = high;
        }
    }
    Some((ends[0], ends[1]))
}

extern "C" fn child_entry(arg: *mut c_void) -> c_int {
    // SAFETY: `arg` points to the `Launch` block, which the host keeps alive until S exits,
    // and S exits before C's execve only by leaving `released` unset (the host then leaks
    // the block instead of freeing it).
    let launch = unsafe { &*(arg as *const Launch) };
    child::confine_and_run(launch)
}

/// Leave the report in the launch block (magic word last) and exit.
fn finish(l: &Launch, mut report: [i32; REPORT_WORDS]) -> ! {
    l.mark(Mark::Swept);
    let magic = report[0];
    report[0] = 0;
    // SAFETY: only S writes the report, and the host reads it after S exited.
    unsafe {
        let dst = &mut *l.report.get();
        *dst = report;
        std::sync::atomic::fence(Ordering::SeqCst);
        dst[0] = magic;
    }
    exit_now(0)
}

/// The two output pipes and their captures, and the egress listener S forwards from.
struct Streams<'a> {
    fds: [RawFd; 2],
    open: [bool; 2],
    caps: [&'a mut HeadTail; 2],
    /// The listener inside the command's network namespace (-1: none).
    listener: RawFd,
    /// The bridge to the host's proxy (-1: none).
    bridge: RawFd,
    /// The command's tag, sent with each connection.
    tag: u64,
}

/// Connections accepted per wake-up before the pipes are served again.
const ACCEPT_BATCH: usize = 64;

impl Streams<'_> {
    fn any_open(&self) -> bool {
        self.open[0] || self.open[1]
    }

    /// Wait up to `ms` for output on the open pipes or for `pidfd` (if >= 0) to turn
    /// readable, and read what is there.
    fn pump(&mut self, pidfd: c_int, ms: u64) {
        let mut pfds = [libc::pollfd {
            fd: -1,
            events: libc::POLLIN,
            revents: 0,
        }; 4];
        for (i, p) in pfds.iter_mut().take(2).enumerate() {
            if let (Some(&fd), Some(&open)) = (self.fds.get(i), self.open.get(i)) {
                p.fd = if open { fd } else { -1 };
            }
        }
        pfds[2].fd = pidfd;
        pfds[3].fd = self.listener;
        // Without a pidfd (kernels before 5.3) the child is polled every few milliseconds.
        let ms = if pidfd < 0 { ms.min(5) } else { ms };
        if raw::ppoll(&mut pfds, ms).is_err() {
            return;
        }
        if pfds[3].fd >= 0 && pfds[3].revents != 0 {
            self.forward();
        }
        let mut buf = [0u8; 16 * 1024];
        for i in 0..2 {
            let ready = pfds.get(i).is_some_and(|p| p.fd >= 0 && p.revents != 0);
            if !ready {
                continue;
            }
            let fd = self.fds.get(i).copied().unwrap_or(-1);
            match raw::read(fd, &mut buf) {
                Ok(0) => self.close(i),
                Ok(n) => {
                    if let (Some(cap), Some(data)) = (self.caps.get_mut(i), buf.get(..n)) {
                        cap.push(data);
                    }
                }
                Err(libc::EINTR | libc::EAGAIN) => {}
                Err(_) => self.close(i),
            }
        }
    }

    /// Accept what is waiting on the listener and pass each connection, with the command's
    /// tag, to the proxy. A connection the bridge cannot take now (the proxy is gone or
    /// behind) is closed: the command sees a reset, never another way out.
    fn forward(&mut self) {
        let tag = self.tag.to_le_bytes();
        for _ in 0..ACCEPT_BATCH {
            let conn = match raw::accept4(self.listener, libc::SOCK_CLOEXEC) {
                Ok(fd) => fd as c_int,
                Err(libc::EINTR | libc::ECONNABORTED) => continue,
                Err(_) => return,
            };
            if self.bridge >= 0 {
                let _ = raw::send_fd(
                    self.bridge,
                    &tag,
                    conn,
                    libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
                );
            }
            let _ = raw::close(conn);
        }
    }

    fn close(&mut self, i: usize) {
        if let (Some(open), Some(&fd)) = (self.open.get_mut(i), self.fds.get(i)) {
            if *open {
                let _ = raw::close(fd);
            }
            *open = false;
        }
    }
}

/// The supervisor: never returns.
pub(super) fn run(l: &Launch) -> ! {
    l.mark(Mark::Supervisor);
    // Every signal stays blocked (they were blocked when S was created); SIGKILL still works.
    let _ = raw::sigprocmask(libc::SIG_BLOCK, u64::MAX);
    let _ = raw::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as usize, 0, 0, 0);
    if raw::getppid() != l.host {
        exit_now(70);
    }
    let _ = raw::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    close_all_except(&l.keep);
    let mut report = [0i32; REPORT_WORDS];
    report[0] = REPORT_MAGIC;
    let me = raw::getpid();
    l.supervisor.store(me, Ordering::SeqCst);
    // The output pipes are S's own: no other process (not the host) holds a write end, so
    // EOF means every writer is gone.
    let (Some((out_r, out_w)), Some((err_r, err_w))) = (pipe_above_stdio(), pipe_above_stdio())
    else {
        report[4] = step::PIPE;
        report[5] = libc::EMFILE;
        l.released.store(true, Ordering::SeqCst);
        finish(l, report);
    };
    l.out_w.store(out_w, Ordering::SeqCst);
    l.err_w.store(err_w, Ordering::SeqCst);

    // The setup pipe's write end is C's alone (S closes its copy): it closes at C's execve
    // (O_CLOEXEC) or exit, which is how S learns that C no longer uses the launch block.
    let Some((setup_r, setup_w)) = pipe_above_stdio() else {
        report[4] = step::PIPE;
        report[5] = libc::EMFILE;
        l.released.store(true, Ordering::SeqCst);
        finish(l, report);
    };
    // Egress: C passes the listener of its network namespace over this pair.
    let mut listener_s: c_int = -1;
    if l.egress_port != 0 {
        let Some((s_end, c_end)) = seqpacket_above_stdio() else {
            report[4] = step::PIPE;
            report[5] = libc::EMFILE;
            l.released.store(true, Ordering::SeqCst);
            finish(l, report);
        };
        listener_s = s_end;
        l.listener_pair[0].store(s_end, Ordering::SeqCst);
        l.listener_pair[1].store(c_end, Ordering::SeqCst);
    }
    // C borrows this address space (on its own stack) until it execs.
    let arg = l as *const Launch as *mut c_void;
    // SAFETY: C runs `child_entry` on its own stack (inside the mapping the host keeps alive)
    // and only execs or exits. glibc's clone wrapper touches no thread-local state in the
    // child; on failure it sets errno in the creating host thread's storage (that thread is
    // suspended until S exits, so nobody reads it meanwhile).
    let pid = unsafe {
        libc::clone(
            child_entry,
            l.child_stack_top as *mut c_void,
            libc::CLONE_VM | libc::SIGCHLD,
            arg,
        )
    };
    if pid < 0 {
        // SAFETY: the creating host thread is suspended; its errno is ours to read.
        report[5] = unsafe { *libc::__errno_location() };
        report[4] = step::FORK;
        l.released.store(true, Ordering::SeqCst);
        finish(l, report);
    }
    for fd in [
        setup_w,
        out_w,
        err_w,
        l.listener_pair[1].load(Ordering::SeqCst),
    ] {
        if fd >= 0 {
            let _ = raw::close(fd);
        }
    }
    // Until C has called execve or ended, bounded: a child stuck before exec is killed, and
    // one that cannot even be killed is left behind (the host then leaks the block and the
    // stacks it may still use, and reports that the command did not start).
    let setup_deadline = monotonic_ms().saturating_add(l.timeout_ms);
    if !wait_eof(setup_r, setup_deadline) {
        let _ = raw::kill(pid, libc::SIGKILL);
        let bound = l.kill_grace_ms.saturating_add(l.sweep_limit_ms);
        if !wait_eof(setup_r, monotonic_ms().saturating_add(bound)) {
            report[4] = step::EXEC;
            report[5] = libc::ETIMEDOUT;
            finish(l, report);
        }
    }
    let _ = raw::close(setup_r);
    l.released.store(true, Ordering::SeqCst);
    if l.affinity_len > 0 {
        let _ = raw::sched_setaffinity(&l.affinity, l.affinity_len);
    }
    report[4] = l.step.load(Ordering::SeqCst);
    report[5] = l.errno.load(Ordering::SeqCst);
    // C passed its listener before it called execve (or failed before).
    let listener = if listener_s >= 0 {
        let fd = raw::recv_fd(listener_s, libc::MSG_DONTWAIT).map_or(-1, |fd| fd as c_int);
        let _ = raw::close(listener_s);
        fd
    } else {
        -1
    };
    let bridge = if listener >= 0 { l.egress_bridge } else { -1 };
    // Only the read ends (and the egress listener and bridge) stay: EOF then means every
    // writer is gone.
    let mut readers = [out_r, err_r, listener, bridge];
    readers.sort_unstable();
    close_all_except(&readers);
    // SAFETY: S is the only writer of the captures while it runs; the host reads them after
    // S exited.
    let (out, err) = unsafe { (&mut *l.out.get(), &mut *l.err.get()) };
    let mut streams = Streams {
        fds: [out_r, err_r],
        open: [true, true],
        caps: [out, err],
        listener,
        bridge,
        tag: l.egress_tag,
    };

    let pidfd = raw::pidfd_open(pid).map_or(-1, |fd| fd as c_int);
    let deadline = monotonic_ms().saturating_add(l.timeout_ms);
    let mut status: c_int = 0;
    let mut reaped = false;
    let mut grace_end: Option<u64> = None;
    let mut memwatch = MemWatch::new(l.memory_limit_pages, l.memory_poll_ms, monotonic_ms());
    loop {
        match raw::wait4(pid, &mut status, libc::WNOHANG) {
            Ok(r) if r as pid_t == pid => {
                reaped = true;
                break;
            }
            Ok(_) | Err(libc::EINTR) => {}
            Err(_) => break,
        }
        let now = monotonic_ms();
        if grace_end.is_none() && now >= deadline {
            report[3] = 1;
            let _ = raw::kill(-pid, libc::SIGTERM);
            grace_end = Some(now.saturating_add(l.kill_grace_ms));
        }
        if let Some(end) = grace_end {
            if now >= end {
                let _ = raw::kill(-pid, libc::SIGKILL);
                let _ = raw::kill(pid, libc::SIGKILL);
                reaped = reap_within(pid, pidfd, &mut status, l.sweep_limit_ms);
                break;
            }
        }
        if let Some(w) = memwatch.as_mut() {
            if w.over(now, pid, me) {
                report[8] = KILLED_MEMORY;
                let _ = raw::kill(-pid, libc::SIGKILL);
                let _ = raw::kill(pid, libc::SIGKILL);
                reaped = reap_within(pid, pidfd, &mut status, l.sweep_limit_ms);
                break;
            }
        }
        let until = grace_end.unwrap_or(deadline);
        let mut left = until.saturating_sub(now).clamp(1, 60_000);
        if let Some(w) = &memwatch {
            left = left.min(w.due_in(now).max(1));
        }
        if streams.any_open() || pidfd >= 0 || streams.listener >= 0 {
            streams.pump(pidfd, left);
        } else {
            sleep_ms(left.min(5));
        }
    }
    if pidfd >= 0 {
        let _ = raw::close(pidfd);
    }
    l.mark(Mark::Ended);
    if !reaped {
        // SIGKILLed but not gone within the bound (stuck in the kernel): report the kill.
        report[1] = 2;
        report[2] = libc::SIGKILL;
    } else if libc::WIFEXITED(status) {
        report[1] = 1;
        report[2] = libc::WEXITSTATUS(status);
    } else if libc::WIFSIGNALED(status) {
        report[1] = 2;
        report[2] = libc::WTERMSIG(status);
    }
    // Whatever is left of the child's process group goes, then every other descendant.
    let _ = raw::kill(-pid, libc::SIGKILL);
    let (swept, complete) = sweep(me, l.sweep_limit_ms);
    report[6] = swept;
    report[7] = i32::from(!complete || !reaped);
    // Every writer is gone unless the sweep gave up: read the pipes to EOF, bounded.
    let drain_end = monotonic_ms().saturating_add(l.drain_ms);
    while streams.any_open() {
        let now = monotonic_ms();
        if now >= drain_end {
            break;
        }
        streams.pump(-1, drain_end - now);
    }
    finish(l, report);
}

/// Wait until `fd` (which nobody writes to) reaches EOF or `deadline` (monotonic ms) passes.
/// True at EOF.
fn wait_eof(fd: c_int, deadline: u64) -> bool {
    let mut buf = [0u8; 64];
    loop {
        let now = monotonic_ms();
        if now >= deadline {
            return false;
        }
        let mut pfd = [libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        }];
        match raw::ppoll(&mut pfd, (deadline - now).min(60_000)) {
            Ok(n) if n > 0 => {}
            Ok(_) | Err(libc::EINTR) => continue,
            Err(_) => return true,
        }
        // Readable: EOF (or, never expected, data; then keep waiting).
        match raw::read(fd, &mut buf) {
            Ok(0) => return true,
            Ok(_) | Err(libc::EINTR | libc::EAGAIN) => {}
            Err(_) => return true,
        }
    }
}

/// Reap `pid` (already SIGKILLed), waiting at most `limit_ms`. True when reaped.
fn reap_within(pid: pid_t, pidfd: c_int, status: &mut c_int, limit_ms: u64) -> bool {
    let end = monotonic_ms().saturating_add(limit_ms);
    loop {
        match raw::wait4(pid, status, libc::WNOHANG) {
            Ok(r) if r as pid_t == pid => return true,
            Ok(_) | Err(libc::EINTR) => {}
            Err(_) => return false,
        }
        let now = monotonic_ms();
        if now >= end {
            return false;
        }
        if pidfd >= 0 {
            let mut pfd = [libc::pollfd {
                fd: pidfd,
                events: libc::POLLIN,
                revents: 0,
            }];
            let _ = raw::ppoll(&mut pfd, (end - now).min(60_000));
        } else {
            sleep_ms((end - now).min(5));
        }
    }
}

/// Kill and reap every remaining descendant. Orphans re-parent to us (we are a subreaper), so
/// "no children left" means "no descendants left". Returns (killed, complete).
fn sweep(me: pid_t, limit_ms: u64) -> (i32, bool) {
    let end = monotonic_ms().saturating_add(limit_ms);
    let mut killed = 0i32;
    loop {
        // Reap what has exited.
        loop {
            let mut st: c_int = 0;
            match raw::wait4(-1, &mut st, libc::WNOHANG | libc::__WALL) {
                Ok(r) if r > 0 => continue,
                Err(libc::ECHILD) => return (killed, true),
                Err(libc::EINTR) => continue,
                _ => break,
            }
        }
        if monotonic_ms() >= end {
            return (killed, false);
        }
        killed = killed.saturating_add(kill_children(me));
        sleep_ms(1);
    }
}

/// SIGKILL every live child of `me`, found by scanning `/proc/<pid>/stat` (this works without
/// `CONFIG_PROC_CHILDREN`). A child cannot be reaped (and its pid reused) by anyone but us, so
/// the pid read here is still the same process when it is signalled.
fn kill_children(me: pid_t) -> i32 {
    let mut count = 0i32;
    procfs::for_each_pid(|pid| {
        if pid > 1 && pid != me && procfs::parent_of(pid) == me {
            let _ = raw::kill(pid, libc::SIGKILL);
            count = count.saturating_add(1);
        }
    });
    count
}
