//! The supervisor: a forked copy of the host that never execs. It is the child's parent and
//! a subreaper, enforces the deadline, kills the child's process group and then sweeps every
//! remaining descendant before it reports and exits.
use std::os::fd::RawFd;

use libc::{c_int, pid_t};

use super::{
    child, close_all_except, errno, exit_now, monotonic_ms, sleep_ms, step, write_all, ChildSpec,
    SupervisorSpec, REPORT_LEN, REPORT_MAGIC,
};

/// The supervisor: never returns.
pub(super) fn run(child: &ChildSpec<'_>, sup: &SupervisorSpec, keep: &[RawFd], host: pid_t) -> ! {
    // SAFETY (whole function): only async-signal-safe calls on stack memory or memory that was
    // prepared before fork; see the module documentation.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::sigprocmask(libc::SIG_BLOCK, &all, std::ptr::null_mut());
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        );
        if libc::getppid() != host {
            exit_now(70);
        }
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0);
    }
    close_all_except(keep);
    let mut report = [0i32; 9];
    report[0] = REPORT_MAGIC;
    let mut setup = [-1 as c_int; 2];
    // SAFETY: setup is a valid 2-element array.
    if unsafe { libc::pipe2(setup.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        report[4] = step::PIPE;
        report[5] = errno();
        finish(sup.report_fd, &report);
    }
    // If the host runs with a standard descriptor closed, the pipe may land on 0..=2, where
    // the child's dup2 onto stdio would clobber it: move both ends above 2.
    for end in setup.iter_mut() {
        if *end <= 2 {
            // SAFETY: duplicating and closing descriptors this process owns.
            unsafe {
                let high = libc::fcntl(*end, libc::F_DUPFD_CLOEXEC, 3);
                if high < 0 {
                    report[4] = step::PIPE;
                    report[5] = errno();
                    finish(sup.report_fd, &report);
                }
                libc::close(*end);
                *end = high;
            }
        }
    }
    // SAFETY: getpid cannot fail.
    let me = unsafe { libc::getpid() };
    // SAFETY: this process is single-threaded now; the child only runs `confine_and_run`.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        report[4] = step::FORK;
        report[5] = errno();
        finish(sup.report_fd, &report);
    }
    if pid == 0 {
        child::confine_and_run(child, setup[1], me);
    }
    // Keep only the report pipe and the setup pipe's read end.
    // SAFETY: closing descriptors this process owns.
    unsafe { libc::close(setup[1]) };
    let mut keep2 = [sup.report_fd, setup[0]];
    keep2.sort_unstable();
    close_all_except(&keep2);

    // Did the child reach exec (EOF through O_CLOEXEC) or report a failed step / probe?
    let mut buf = [0u8; 8];
    let mut got = 0usize;
    while got < buf.len() {
        let rest = &mut buf[got..];
        // SAFETY: `rest` is a valid writable buffer.
        let n = unsafe { libc::read(setup[0], rest.as_mut_ptr().cast(), rest.len()) };
        if n < 0 && errno() == libc::EINTR {
            continue;
        }
        if n <= 0 {
            break;
        }
        got = got.saturating_add(n as usize);
    }
    if got == buf.len() {
        report[4] = i32::from_ne_bytes([buf[0], buf[1], buf[2], buf[3]]);
        report[5] = i32::from_ne_bytes([buf[4], buf[5], buf[6], buf[7]]);
    }

    let start = monotonic_ms();
    let deadline = start.saturating_add(sup.timeout_ms);
    let mut status: c_int = 0;
    let mut done = wait_until(pid, &mut status, deadline);
    if !done {
        report[3] = 1;
        // SAFETY: signalling our own child's process group.
        unsafe { libc::kill(-pid, libc::SIGTERM) };
        let grace_end = monotonic_ms().saturating_add(sup.kill_grace_ms);
        done = wait_until(pid, &mut status, grace_end);
        if !done {
            // SAFETY: as above; then a blocking wait for a SIGKILLed child.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
                libc::kill(pid, libc::SIGKILL);
                while libc::waitpid(pid, &mut status, 0) < 0 && errno() == libc::EINTR {}
            }
        }
    }
    if libc::WIFEXITED(status) {
        report[1] = 1;
        report[2] = libc::WEXITSTATUS(status);
    } else if libc::WIFSIGNALED(status) {
        report[1] = 2;
        report[2] = libc::WTERMSIG(status);
    }
    // Whatever is left of the child's process group goes, then every other descendant.
    // SAFETY: signalling the child's (now leaderless) process group.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    let (swept, complete) = sweep(me, sup.sweep_limit_ms);
    report[6] = swept;
    report[7] = i32::from(!complete);
    finish(sup.report_fd, &report);
}

fn finish(fd: RawFd, report: &[i32; 9]) -> ! {
    let mut bytes = [0u8; REPORT_LEN];
    for (i, w) in report.iter().enumerate() {
        let b = w.to_ne_bytes();
        let o = i.wrapping_mul(4);
        if let Some(dst) = bytes.get_mut(o..o.wrapping_add(4)) {
            dst.copy_from_slice(&b);
        }
    }
    write_all(fd, &bytes);
    exit_now(0)
}

/// Wait for `pid` until `deadline` (monotonic ms). True when it was reaped.
fn wait_until(pid: pid_t, status: &mut c_int, deadline: u64) -> bool {
    // SAFETY: pidfd_open on our own unreaped child; the descriptor is closed below.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0u32) } as c_int;
    let mut reaped = false;
    loop {
        // SAFETY: status points to a live c_int.
        let r = unsafe { libc::waitpid(pid, status, libc::WNOHANG) };
        if r == pid {
            reaped = true;
            break;
        }
        if r < 0 && errno() != libc::EINTR {
            break;
        }
        let now = monotonic_ms();
        if now >= deadline {
            break;
        }
        let left = deadline - now;
        if pidfd >= 0 {
            let mut pfd = libc::pollfd {
                fd: pidfd,
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = left.min(60_000) as c_int;
            // SAFETY: pfd is a valid pollfd array of length 1.
            unsafe { libc::poll(&mut pfd, 1, ms) };
        } else {
            sleep_ms(left.min(5));
        }
    }
    if pidfd >= 0 {
        // SAFETY: closing the descriptor opened above.
        unsafe { libc::close(pidfd) };
    }
    reaped
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
            // SAFETY: st is a live c_int.
            let r = unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG) };
            if r > 0 {
                continue;
            }
            if r < 0 && errno() == libc::ECHILD {
                return (killed, true);
            }
            if r < 0 && errno() == libc::EINTR {
                continue;
            }
            break;
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
    // SAFETY: opening a directory with a constant NUL-terminated path.
    let dir = unsafe {
        libc::open(
            c"/proc".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if dir < 0 {
        return 0;
    }
    let mut buf = [0u8; 8192];
    loop {
        // SAFETY: buf is a valid writable buffer for getdents64.
        let n = unsafe { libc::syscall(libc::SYS_getdents64, dir, buf.as_mut_ptr(), buf.len()) };
        if n <= 0 {
            break;
        }
        let n = n as usize;
        let mut off = 0usize;
        // struct linux_dirent64 { u64 ino; i64 off; u16 reclen; u8 type; char name[]; }
        while off.saturating_add(19) < n {
            let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
            if reclen == 0 {
                break;
            }
            let name_start = off + 19;
            let rec_end = off.saturating_add(reclen).min(n);
            let mut pid: i64 = 0;
            let mut digits = 0;
            let mut i = name_start;
            while i < rec_end {
                let c = buf[i];
                if c == 0 {
                    break;
                }
                if !c.is_ascii_digit() || digits > 9 {
                    digits = 0;
                    break;
                }
                pid = pid.wrapping_mul(10).wrapping_add(i64::from(c - b'0'));
                digits += 1;
                i += 1;
            }
            if digits > 0 && pid > 1 && pid != i64::from(me) && parent_of(pid as pid_t) == me {
                // SAFETY: signalling our own (unreaped) child.
                unsafe { libc::kill(pid as pid_t, libc::SIGKILL) };
                count = count.saturating_add(1);
            }
            off = off.saturating_add(reclen);
        }
    }
    // SAFETY: closing the descriptor opened above.
    unsafe { libc::close(dir) };
    count
}

/// The parent pid of `pid` from `/proc/<pid>/stat`, or -1.
fn parent_of(pid: pid_t) -> pid_t {
    let mut path = [0u8; 32];
    let prefix = b"/proc/";
    path[..prefix.len()].copy_from_slice(prefix);
    let mut digits = [0u8; 12];
    let mut nd = 0usize;
    let mut v = pid as u32;
    loop {
        digits[nd] = b'0' + (v % 10) as u8;
        nd += 1;
        v /= 10;
        if v == 0 || nd >= digits.len() {
            break;
        }
    }
    let mut p = prefix.len();
    while nd > 0 {
        nd -= 1;
        path[p] = digits[nd];
        p += 1;
    }
    let suffix = b"/stat\0";
    path[p..p + suffix.len()].copy_from_slice(suffix);
    // SAFETY: path is NUL-terminated.
    let fd = unsafe { libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return -1;
    }
    let mut buf = [0u8; 512];
    // SAFETY: buf is a valid writable buffer.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    // SAFETY: closing the descriptor opened above.
    unsafe { libc::close(fd) };
    if n <= 0 {
        return -1;
    }
    let data = &buf[..n as usize];
    // "pid (comm) S ppid ...": comm may contain ')' so take the last one.
    let Some(close) = data.iter().rposition(|&c| c == b')') else {
        return -1;
    };
    let mut i = close.saturating_add(2); // skip ") "
                                         // state char and a space
    i = i.saturating_add(2);
    let mut ppid: i64 = 0;
    let mut any = false;
    while let Some(&c) = data.get(i) {
        if !c.is_ascii_digit() {
            break;
        }
        ppid = ppid.wrapping_mul(10).wrapping_add(i64::from(c - b'0'));
        any = true;
        i += 1;
    }
    if any {
        ppid as pid_t
    } else {
        -1
    }
}
