//! System-call escapes: tracing, namespaces, mounts, kernel attack surface. Where the kernel
//! answers differently once a call is reached (EINVAL, EFAULT, ENOTTY, a result), host mode
//! shows the call got through, so "refused by seccomp" is told apart from "refused anyway".
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{probe, probe_verdict, refused, syscall_action, Case, Verdict};

fn shell_refused(o: &helikon_sandbox::RunOutcome, escaped_marker: &str) -> Verdict {
    if o.exit_code == Some(0) || o.stdout.contains(escaped_marker) {
        Verdict::Escaped("the command succeeded".into())
    } else if refused(o) {
        Verdict::Contained
    } else {
        Verdict::Inconclusive("no permission error".into())
    }
}

fn ptrace_strace() -> Case {
    Case::new(
        |_| "strace -o /dev/null true".into(),
        |_, o| shell_refused(o, "\u{0}"),
    )
}

fn unshare_user_namespace() -> Case {
    Case::new(
        |_| "unshare -U true".into(),
        |_, o| shell_refused(o, "\u{0}"),
    )
}

fn unshare_net_namespace_syscall() -> Case {
    Case::new(
        |_| {
            probe(&syscall_action(&format!(
                "{}, {}",
                libc::SYS_unshare,
                libc::CLONE_NEWUSER | libc::CLONE_NEWNET
            )))
        },
        |_, o| probe_verdict(o, &[libc::EPERM]),
    )
}

fn clone_new_user_namespace() -> Case {
    Case::new(
        |_| {
            probe(&syscall_action(&format!(
                "{}, {}, 0, 0, 0, 0",
                libc::SYS_clone,
                libc::CLONE_NEWUSER | libc::SIGCHLD
            )))
        },
        |_, o| probe_verdict(o, &[libc::EPERM]),
    )
}

fn clone3_hides_namespace_flags() -> Case {
    // clone3 passes its flags by pointer, which seccomp cannot inspect: it answers ENOSYS.
    Case::new(
        |_| {
            probe(&format!(
                "l = ctypes.CDLL(None, use_errno=True)\n\
                 a = (ctypes.c_uint64 * 8)()\n\
                 a[0] = {}\n\
                 a[4] = {}\n\
                 me = os.getpid()\n\
                 r = l.syscall(ctypes.c_long({}), ctypes.byref(a), ctypes.c_long(64))\n\
                 if r == 0 and os.getpid() != me: os._exit(0)\n\
                 if r < 0: raise OSError(ctypes.get_errno(), \"clone3\")",
                libc::CLONE_NEWUSER,
                libc::SIGCHLD,
                libc::SYS_clone3
            ))
        },
        |_, o| probe_verdict(o, &[libc::ENOSYS]),
    )
}

fn mount_tmpfs() -> Case {
    Case::new(
        |_| {
            "mkdir -p m; mount -t tmpfs none m; \
             unshare -Urm sh -c 'mount -t tmpfs none m && echo MOUNTED'"
                .into()
        },
        |_, o| {
            if o.stdout.contains("MOUNTED") {
                Verdict::Escaped("mounted".into())
            } else if refused(o) {
                Verdict::Contained
            } else {
                Verdict::Inconclusive("no permission error".into())
            }
        },
    )
}

fn bpf_syscall() -> Case {
    Case::new(
        |_| probe(&syscall_action(&format!("{}, 9999, 0, 0", libc::SYS_bpf))),
        |_, o| probe_verdict(o, &[libc::EPERM]),
    )
}

fn perf_event_open_syscall() -> Case {
    Case::new(
        |_| {
            probe(&syscall_action(&format!(
                "{}, 0, 0, -1, -1, 0",
                libc::SYS_perf_event_open
            )))
        },
        |_, o| probe_verdict(o, &[libc::EPERM]),
    )
}

fn keyctl_session_keyring() -> Case {
    Case::new(
        |_| probe(&syscall_action(&format!("{}, 0, -3, 0", libc::SYS_keyctl))),
        |_, o| probe_verdict(o, &[libc::EPERM]),
    )
}

fn userfaultfd_syscall() -> Case {
    Case::new(
        |_| probe(&syscall_action(&format!("{}, 1", libc::SYS_userfaultfd))),
        |_, o| probe_verdict(o, &[libc::EPERM]),
    )
}

fn process_vm_readv_syscall() -> Case {
    Case::new(
        |_| {
            probe(&syscall_action(&format!(
                "{}, os.getpid(), 0, 0, 0, 0, 0",
                libc::SYS_process_vm_readv
            )))
        },
        |_, o| probe_verdict(o, &[libc::EPERM]),
    )
}

fn personality_no_aslr() -> Case {
    Case::new(
        |_| "setarch x86_64 -R true".into(),
        |_, o| shell_refused(o, "\u{0}"),
    )
}

fn tiocsti_injection() -> Case {
    Case::new(
        |_| probe("fcntl.ioctl(0, termios.TIOCSTI, b\"x\")"),
        |_, o| probe_verdict(o, &[libc::EPERM]),
    )
}

fn chown_own_file() -> Case {
    // Allowed by Unix permissions (same owner); the sandbox refuses the chown family.
    Case::new(
        |_| "chown 65534:65534 notes.txt".into(),
        |_, o| shell_refused(o, "\u{0}"),
    )
}

fn kill_the_supervisor() -> Case {
    Case::new(
        |_| "kill -9 $PPID && echo KILLED".into(),
        |_, o| shell_refused(o, "KILLED"),
    )
}

// Attack findings S1/S3 (memfd: exec past no_exec_in_workspace, memory past the ceiling),
// S8 (SysV and POSIX IPC objects outlive the call in the host's IPC namespace) and S7
// (inotify on directories outside). Arguments are invalid on purpose: where the call is
// allowed (host mode) the kernel answers EINVAL/EFAULT/EBADF and creates nothing.
fn memfd_create_syscall() -> Case {
    Case::new(
        |_| probe(&syscall_action(&format!("{}, 0, 0", libc::SYS_memfd_create))),
        |_, o| probe_verdict(o, &[libc::EPERM]),
    )
}

fn sysv_shmget_syscall() -> Case {
    Case::new(
        |_| probe(&syscall_action(&format!("{}, 0, 0, 0", libc::SYS_shmget))),
        |_, o| probe_verdict(o, &[libc::EPERM]),
    )
}

fn sysv_msgctl_syscall() -> Case {
    Case::new(
        |_| probe(&syscall_action(&format!("{}, -1, 0, 0", libc::SYS_msgctl))),
        |_, o| probe_verdict(o, &[libc::EPERM]),
    )
}

fn sysv_semget_syscall() -> Case {
    Case::new(
        |_| probe(&syscall_action(&format!("{}, 0, -1, 0", libc::SYS_semget))),
        |_, o| probe_verdict(o, &[libc::EPERM]),
    )
}

fn posix_mq_open_syscall() -> Case {
    Case::new(
        |_| probe(&syscall_action(&format!("{}, 0, 0, 0, 0", libc::SYS_mq_open))),
        |_, o| probe_verdict(o, &[libc::EPERM]),
    )
}

fn inotify_init1_syscall() -> Case {
    Case::new(
        |_| probe(&syscall_action(&format!("{}, 1", libc::SYS_inotify_init1))),
        |_, o| probe_verdict(o, &[libc::EPERM]),
    )
}

fn inotify_add_watch_syscall() -> Case {
    Case::new(
        |_| {
            probe(&syscall_action(&format!(
                "{}, -1, 0, 0",
                libc::SYS_inotify_add_watch
            )))
        },
        |_, o| probe_verdict(o, &[libc::EPERM]),
    )
}

os_sandbox_contains!(
    ptrace_strace,
    unshare_user_namespace,
    unshare_net_namespace_syscall,
    clone_new_user_namespace,
    clone3_hides_namespace_flags,
    mount_tmpfs,
    bpf_syscall,
    perf_event_open_syscall,
    keyctl_session_keyring,
    userfaultfd_syscall,
    process_vm_readv_syscall,
    personality_no_aslr,
    tiocsti_injection,
    chown_own_file,
    kill_the_supervisor,
    memfd_create_syscall,
    sysv_shmget_syscall,
    sysv_msgctl_syscall,
    sysv_semget_syscall,
    posix_mq_open_syscall,
    inotify_init1_syscall,
    inotify_add_watch_syscall,
);

host_mode_allows!(
    ptrace_strace,
    unshare_user_namespace,
    unshare_net_namespace_syscall,
    clone_new_user_namespace,
    clone3_hides_namespace_flags,
    mount_tmpfs,
    bpf_syscall,
    perf_event_open_syscall,
    keyctl_session_keyring,
    userfaultfd_syscall,
    process_vm_readv_syscall,
    personality_no_aslr,
    tiocsti_injection,
    chown_own_file,
    memfd_create_syscall,
    sysv_shmget_syscall,
    sysv_msgctl_syscall,
    sysv_semget_syscall,
    posix_mq_open_syscall,
    inotify_init1_syscall,
    inotify_add_watch_syscall,
);
