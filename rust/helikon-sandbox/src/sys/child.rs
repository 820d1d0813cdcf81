//! The confined child C: the steps between `clone` and `execve`. C runs on its own stack in the
//! host's address space until `execve` replaces it; raw system calls only, nothing allocates
//! or panics. A failed step is recorded in the launch block and ends C before `execve`; S
//! learns that C is done with the block when the setup pipe (close-on-exec) reaches EOF.
use std::sync::atomic::Ordering;

use libc::{c_int, c_uint};

use super::launch::{Launch, Mark};
use super::raw::{self, exit_now};
use super::{mounts, netns, step, ChildAction};

/// Record a failed step for the supervisor and end the child.
fn fail(l: &Launch, which: i32, err: c_int) -> ! {
    l.errno.store(err, Ordering::SeqCst);
    l.step.store(which, Ordering::SeqCst);
    exit_now(127)
}

fn check(l: &Launch, which: i32, r: raw::R) {
    if let Err(e) = r {
        fail(l, which, e);
    }
}

/// Arm the parent-death signal and make sure the parent (S) is still there.
fn tie_to_supervisor(l: &Launch, supervisor: libc::pid_t) {
    check(
        l,
        step::PDEATHSIG,
        raw::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as usize, 0, 0, 0),
    );
    if raw::getppid() != supervisor {
        fail(l, step::PDEATHSIG, libc::ESRCH);
    }
}

/// The child: confine, then exec (or run a probe). Never returns.
pub(super) fn confine_and_run(l: &Launch) -> ! {
    l.mark(Mark::Child);
    // Back to the caller's full CPU mask (C was pinned only to start at once). It can only
    // fail if the allowed CPUs changed meanwhile; the command then runs on the pinned CPU.
    if l.affinity_len > 0 {
        let _ = raw::sched_setaffinity(&l.affinity, l.affinity_len);
    }
    let supervisor = l.supervisor.load(Ordering::SeqCst);
    // Signals: default dispositions (this process has its own copy of the table), then
    // nothing blocked (the host may ignore SIGPIPE; S blocked everything).
    for sig in 1..=64 {
        if sig == libc::SIGKILL || sig == libc::SIGSTOP {
            continue;
        }
        let _ = raw::signal_default(sig);
    }
    check(l, step::SIGNALS, raw::sigprocmask(libc::SIG_SETMASK, 0));
    l.mark(Mark::Signals);
    // If S dies from here on, C dies too instead of running on a stack nobody keeps.
    tie_to_supervisor(l, supervisor);
    check(l, step::SETSID, raw::setsid());
    let stdio = [
        l.stdin,
        l.out_w.load(Ordering::SeqCst),
        l.err_w.load(Ordering::SeqCst),
    ];
    for (target, src) in stdio.into_iter().enumerate() {
        check(l, step::STDIO, raw::dup3(src, target as c_int));
    }
    // Every other descriptor closes at exec; cwd and the ruleset stay usable until then.
    if raw::close_range(3, c_uint::MAX, libc::CLOSE_RANGE_CLOEXEC).is_err() {
        let mut fd = 3;
        while fd <= 65_535 {
            let _ = raw::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            fd += 1;
        }
    }
    check(l, step::CHDIR, raw::fchdir(l.cwd_fd));
    for &(res, lim) in &l.rlimits {
        check(l, step::RLIMIT, raw::setrlimit(res, lim));
    }
    // Ambient capabilities never survive into the sandbox (no privilege needed).
    let _ = raw::prctl(
        libc::PR_CAP_AMBIENT,
        libc::PR_CAP_AMBIENT_CLEAR_ALL as usize,
        0,
        0,
        0,
    );
    l.mark(Mark::Limits);
    if let Some(maps) = &l.userns {
        // Not root: the namespaces below are made from a user namespace of C's own.
        if let Err(e) = mounts::enter_user_namespace(maps) {
            fail(l, step::USERNS, e);
        }
    }
    if l.egress_port != 0 {
        // Egress through the proxy: a namespace whose only interface is loopback.
        let to_s = l.listener_pair[1].load(Ordering::SeqCst);
        if let Err(e) = netns::enter(l.egress_port, to_s) {
            fail(l, step::NETNS, e);
        }
    }
    if let Some(plan) = &l.mounts {
        if let Err(e) = mounts::enter(plan) {
            fail(l, step::MOUNTS, e);
        }
    }
    if let Some((uid, gid)) = l.creds {
        drop_privileges(l, uid, gid);
    }
    // The parent-death signal is cleared by credential changes, so it is armed again.
    tie_to_supervisor(l, supervisor);
    l.mark(Mark::Creds);
    if l.no_new_privs {
        check(
            l,
            step::NO_NEW_PRIVS,
            raw::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0),
        );
    }
    if let Some(fd) = l.landlock_fd {
        check(l, step::LANDLOCK, raw::landlock_restrict_self(fd));
    }
    l.mark(Mark::Landlock);
    for prog in &l.seccomp {
        check(l, step::SECCOMP, raw::seccomp_filter(prog));
    }
    l.mark(Mark::Seccomp);
    match l.action {
        ChildAction::Exec => {
            let r = raw::execve(l.program.as_ptr(), l.argv.as_ptr(), l.envp.as_ptr());
            fail(l, step::EXEC, r.err().unwrap_or(libc::EINVAL))
        }
        ChildAction::ProbeOpenRoot => {
            let r = raw::open(b"/\0", libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC);
            probe_done(l, r)
        }
        ChildAction::ProbeInetSocket => {
            let r = raw::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC);
            probe_done(l, r)
        }
        ChildAction::ProbeUdpSocket => {
            let r = raw::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC);
            probe_done(l, r)
        }
        ChildAction::ProbeUnshare => probe_done(l, raw::unshare(libc::CLONE_NEWUSER)),
        ChildAction::ProbeHiddenPath => {
            let r = match &l.mounts {
                Some(plan) => {
                    raw::open_mode(plan.stage.as_ptr(), libc::O_PATH | libc::O_CLOEXEC, 0)
                }
                None => Ok(0),
            };
            probe_done(l, r)
        }
    }
}

fn probe_done(l: &Launch, r: raw::R) -> ! {
    l.errno.store(r.err().unwrap_or(0), Ordering::SeqCst);
    l.step.store(step::PROBE, Ordering::SeqCst);
    exit_now(0)
}

/// Switch to `(uid, gid)` with no capabilities and no supplementary groups.
fn drop_privileges(l: &Launch, uid: u32, gid: u32) {
    // The bounding set needs CAP_SETPCAP, which is gone after setuid: drop it first.
    let mut cap = 0;
    while cap <= l.cap_last {
        match raw::prctl(libc::PR_CAPBSET_DROP, cap as usize, 0, 0, 0) {
            Ok(_) | Err(libc::EINVAL) => {}
            Err(e) => fail(l, step::CAPS, e),
        }
        cap += 1;
    }
    check(l, step::SETGROUPS, raw::setgroups_none());
    check(l, step::SETGID, raw::setresgid(gid));
    check(l, step::SETUID, raw::setresuid(uid));
    // Clear effective, permitted and inheritable sets explicitly (a uid change away from 0
    // already clears them unless SECBIT_KEEP_CAPS was set by someone).
    check(l, step::CAPS, raw::capset_none());
    if raw::getuid() != uid
        || raw::geteuid() != uid
        || raw::getgid() != gid
        || raw::getegid() != gid
    {
        fail(l, step::SETUID, libc::EPERM);
    }
}
