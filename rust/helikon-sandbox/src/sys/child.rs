//! The confined child: the steps between `fork` and `execve`.
use std::os::fd::RawFd;

use libc::{c_int, c_uint, pid_t};

use super::{close_range, errno, exit_now, step, write_all, ChildAction, ChildSpec};

/// Report a failed step to the supervisor and end the child.
fn fail(setup_w: RawFd, which: i32, err: c_int) -> ! {
    let mut bytes = [0u8; 8];
    bytes[..4].copy_from_slice(&which.to_ne_bytes());
    bytes[4..].copy_from_slice(&err.to_ne_bytes());
    write_all(setup_w, &bytes);
    exit_now(127)
}

/// The child: confine, then exec (or run a probe). Never returns.
pub(super) fn confine_and_run(c: &ChildSpec<'_>, setup_w: RawFd, supervisor: pid_t) -> ! {
    // SAFETY (whole function): async-signal-safe system calls only, on memory prepared before
    // fork or on the stack; see the module documentation.
    unsafe {
        // Signals: default dispositions, nothing blocked (the host may ignore SIGPIPE).
        for sig in 1..=64 {
            if sig == libc::SIGKILL || sig == libc::SIGSTOP {
                continue;
            }
            libc::signal(sig, libc::SIG_DFL);
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        if libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut()) != 0 {
            fail(setup_w, step::SIGNALS, errno());
        }
        if libc::setsid() < 0 {
            fail(setup_w, step::SETSID, errno());
        }
        for (target, &src) in c.stdio.iter().enumerate() {
            if libc::dup2(src, target as c_int) < 0 {
                fail(setup_w, step::STDIO, errno());
            }
        }
        // Every other descriptor closes at exec; setup_w, cwd and the ruleset stay usable
        // until then.
        close_range(3, c_uint::MAX, libc::CLOSE_RANGE_CLOEXEC);
        if libc::fchdir(c.cwd_fd) != 0 {
            fail(setup_w, step::CHDIR, errno());
        }
        for &(res, lim) in c.rlimits {
            let rl = libc::rlimit {
                rlim_cur: lim as libc::rlim_t,
                rlim_max: lim as libc::rlim_t,
            };
            if libc::setrlimit(res as _, &rl) != 0 {
                fail(setup_w, step::RLIMIT, errno());
            }
        }
        // Ambient capabilities never survive into the sandbox (no privilege needed).
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        );
        if let Some((uid, gid)) = c.creds {
            drop_privileges(uid, gid, c.cap_last, setup_w);
        }
        // The parent-death signal is cleared by credential changes, so it is set after them.
        if libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        ) != 0
        {
            fail(setup_w, step::PDEATHSIG, errno());
        }
        if libc::getppid() != supervisor {
            fail(setup_w, step::PDEATHSIG, libc::ESRCH);
        }
        if c.no_new_privs
            && libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) != 0
        {
            fail(setup_w, step::NO_NEW_PRIVS, errno());
        }
        if let Some(fd) = c.landlock_fd {
            if libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) != 0 {
                fail(setup_w, step::LANDLOCK, errno());
            }
        }
        for prog in c.seccomp {
            let fprog = libc::sock_fprog {
                len: prog.len() as libc::c_ushort,
                filter: prog.as_ptr() as *mut libc::sock_filter,
            };
            if libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                0u32,
                &fprog as *const libc::sock_fprog,
            ) != 0
            {
                fail(setup_w, step::SECCOMP, errno());
            }
        }
        match c.action {
            ChildAction::Exec => {
                libc::execve(c.program.as_ptr(), c.argv.as_ptr(), c.envp.as_ptr());
                fail(setup_w, step::EXEC, errno());
            }
            ChildAction::ProbeOpenRoot => {
                let fd = libc::open(
                    c"/".as_ptr(),
                    libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
                );
                probe_done(setup_w, if fd >= 0 { 0 } else { errno() });
            }
            ChildAction::ProbeInetSocket => {
                let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
                probe_done(setup_w, if fd >= 0 { 0 } else { errno() });
            }
            ChildAction::ProbeUnshare => {
                let r = libc::unshare(libc::CLONE_NEWUSER);
                probe_done(setup_w, if r == 0 { 0 } else { errno() });
            }
        }
    }
}

fn probe_done(setup_w: RawFd, result: c_int) -> ! {
    let mut bytes = [0u8; 8];
    bytes[..4].copy_from_slice(&step::PROBE.to_ne_bytes());
    bytes[4..].copy_from_slice(&result.to_ne_bytes());
    write_all(setup_w, &bytes);
    exit_now(0)
}

/// Switch to `(uid, gid)` with no capabilities and no supplementary groups.
fn drop_privileges(uid: u32, gid: u32, cap_last: c_int, setup_w: RawFd) {
    // SAFETY: raw credential system calls on a single-threaded process (so the per-thread
    // kernel semantics are the process's), with stack-allocated arguments.
    unsafe {
        // The bounding set needs CAP_SETPCAP, which is gone after setuid: drop it first.
        let mut cap = 0;
        while cap <= cap_last {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) != 0
                && errno() != libc::EINVAL
            {
                fail(setup_w, step::CAPS, errno());
            }
            cap += 1;
        }
        if libc::syscall(libc::SYS_setgroups, 0usize, std::ptr::null::<libc::gid_t>()) != 0 {
            fail(setup_w, step::SETGROUPS, errno());
        }
        if libc::syscall(libc::SYS_setresgid, gid, gid, gid) != 0 {
            fail(setup_w, step::SETGID, errno());
        }
        if libc::syscall(libc::SYS_setresuid, uid, uid, uid) != 0 {
            fail(setup_w, step::SETUID, errno());
        }
        // Clear effective, permitted and inheritable sets explicitly (a uid change away from 0
        // already clears them unless SECBIT_KEEP_CAPS was set by someone).
        #[repr(C)]
        struct CapHeader {
            version: u32,
            pid: c_int,
        }
        #[repr(C)]
        #[derive(Clone, Copy)]
        struct CapData {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        let mut header = CapHeader {
            version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
            pid: 0,
        };
        let data = [CapData {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        if libc::syscall(
            libc::SYS_capset,
            &mut header as *mut CapHeader,
            data.as_ptr(),
        ) != 0
        {
            fail(setup_w, step::CAPS, errno());
        }
        if libc::getuid() != uid
            || libc::geteuid() != uid
            || libc::getgid() != gid
            || libc::getegid() != gid
        {
            fail(setup_w, step::SETUID, libc::EPERM);
        }
    }
}
