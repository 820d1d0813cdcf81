//! The seccomp policy, compiled once when the policy is built into one program.
//!
//! The program (see [`crate::bpf`] for its shape and why it is hand-compiled) answers, in
//! order:
//!
//! 1. any architecture other than the native one: the process is killed (this covers
//!    `int 0x80` on x86_64); x32 system calls (`nr | 0x4000_0000`) get `ENOSYS`, because the
//!    table below is keyed by native numbers;
//! 2. `EPERM` for tracing and cross-process memory, mounts and namespaces, kernel-level attack
//!    surface (bpf, perf_event_open, keyrings, io_uring, module and kexec loading,
//!    userfaultfd), host administration (clock, hostname, reboot, swap, accounting, quotas),
//!    `personality` except the query forms, `ioctl(TIOCSTI/TIOCLINUX)`, device-node `mknod`,
//!    the `chown` family, path `truncate` when Landlock cannot mediate it, and the socket
//!    policy;
//! 3. `clone3` answers `ENOSYS` (its flags live behind a pointer seccomp cannot read), so libc
//!    falls back to `clone`, whose namespace flags are checked.
//!
//! Everything else is allowed. Argument tests look at the low 32 bits, which is where every
//! tested value lives (flags, families, types, modes, request numbers).
use std::collections::BTreeMap;

use crate::bpf::{self, Action, Cond, Rule, Test, Verdict};
use crate::config::UnixSockets;
use crate::error::{Result, SandboxError};

/// What the socket part of the filter allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SocketPolicy {
    /// Network denied; AF_UNIX as configured.
    Denied(UnixSockets),
    /// Network allowed: AF_UNIX, AF_INET, AF_INET6 only.
    InetAllowed,
    /// Egress through the proxy: `socket()` only for TCP over IPv4/IPv6 (no UDP, no raw,
    /// no AF_UNIX socket that could `connect` a pathname socket), AF_UNIX stream/seqpacket
    /// pairs, no TCP Fast Open `sendto`/`sendmsg` (a connect the Landlock connect hook
    /// would not see). Where each connection may go is Landlock's and the namespace's job.
    Proxied,
}

/// Inputs that change the filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FilterOptions {
    pub sockets: SocketPolicy,
    /// Landlock below ABI 3 cannot mediate `truncate(2)` on paths.
    pub deny_path_truncate: bool,
    /// Refuse inotify: a watch reports other processes' activity on directories outside the
    /// workspace that Landlock lets the command traverse but not read, and on the host's
    /// own inodes of the granted system files (also through `private_mounts` binds).
    pub deny_inotify: bool,
    /// `deny_delete`: `fallocate` may not punch holes, collapse or zero ranges (truncation
    /// and deletion of a file's data without Landlock's `TRUNCATE` right).
    pub deny_fallocate_destroy: bool,
}

/// System calls denied outright.
pub(crate) fn denied_syscalls(opts: &FilterOptions) -> Vec<i64> {
    let mut v: Vec<libc::c_long> = vec![
        // tracing and other processes' memory
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_pidfd_getfd,
        // mounts, roots and namespaces
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_chroot,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_mount_setattr,
        libc::SYS_unshare,
        libc::SYS_setns,
        // kernel attack surface
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_fanotify_init,
        // memory no process maps and code no path holds: a memfd's pages are charged to no
        // process's resident set (past the memory ceiling) and it can be executed
        // (`/proc/self/fd/N`, `execveat`) although no_exec_in_workspace refuses every path
        libc::SYS_memfd_create,
        libc::SYS_memfd_secret,
        // IPC objects in the host's IPC namespace: they outlive the call's process sweep,
        // hold memory past the ceiling and are a channel between calls
        libc::SYS_shmget,
        libc::SYS_shmat,
        libc::SYS_shmctl,
        libc::SYS_msgget,
        libc::SYS_msgsnd,
        libc::SYS_msgrcv,
        libc::SYS_msgctl,
        libc::SYS_semget,
        libc::SYS_semop,
        libc::SYS_semtimedop,
        libc::SYS_semctl,
        libc::SYS_mq_open,
        libc::SYS_mq_unlink,
        libc::SYS_mq_timedsend,
        libc::SYS_mq_timedreceive,
        libc::SYS_mq_notify,
        libc::SYS_mq_getsetattr,
        // host administration
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_acct,
        libc::SYS_settimeofday,
        libc::SYS_clock_settime,
        libc::SYS_clock_adjtime,
        libc::SYS_adjtimex,
        libc::SYS_sethostname,
        libc::SYS_setdomainname,
        libc::SYS_quotactl,
        libc::SYS_vhangup,
        // ownership changes of files the sandbox uid owns outside the root
        libc::SYS_fchown,
        libc::SYS_fchownat,
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([
        libc::SYS_iopl,
        libc::SYS_ioperm,
        libc::SYS_uselib,
        libc::SYS_chown,
        libc::SYS_lchown,
    ]);
    if opts.deny_path_truncate {
        v.push(libc::SYS_truncate);
    }
    if opts.deny_inotify {
        v.push(libc::SYS_inotify_add_watch);
        #[cfg(target_arch = "x86_64")]
        v.push(libc::SYS_inotify_init);
        v.push(libc::SYS_inotify_init1);
    }
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    v.into_iter().map(|n| n as i64).collect()
}

const EPERM: Action = Action::Errno(libc::EPERM as u16);

fn num(n: i64) -> Result<u32> {
    u32::try_from(n).map_err(|_| SandboxError::Config(format!("seccomp: bad syscall number {n}")))
}

#[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
fn sys(n: libc::c_long) -> Result<u32> {
    num(n as i64)
}

fn c(arg: u8, test: Test) -> Cond {
    Cond { arg, test }
}

/// Any rule matching -> EPERM, otherwise allowed.
fn deny_if(rules: Vec<Vec<Cond>>) -> Verdict {
    Verdict::Rules {
        rules: rules
            .into_iter()
            .map(|conds| Rule {
                conds,
                action: EPERM,
            })
            .collect(),
        default: Action::Allow,
    }
}

/// An ioctl request number as a 32-bit value (its type differs between libcs).
#[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
fn ioctl_req(r: libc::Ioctl) -> u32 {
    r as u32
}

const SOCK_TYPE_MASK: u32 = 0xf;

/// AF_UNIX stream/seqpacket only: a datagram socket could sendto() a pathname socket
/// without connect().
fn unix_pairs() -> Verdict {
    let kind = |ty: i32| {
        c(
            1,
            Test::MaskedEq {
                mask: SOCK_TYPE_MASK,
                value: ty as u32,
            },
        )
    };
    Verdict::Rules {
        rules: vec![
            Rule {
                conds: vec![c(0, Test::Ne(libc::AF_UNIX as u32))],
                action: EPERM,
            },
            Rule {
                conds: vec![kind(libc::SOCK_STREAM)],
                action: Action::Allow,
            },
            Rule {
                conds: vec![kind(libc::SOCK_SEQPACKET)],
                action: Action::Allow,
            },
        ],
        default: EPERM,
    }
}

fn socket_table(t: &mut BTreeMap<u32, Verdict>, policy: SocketPolicy) -> Result<()> {
    let unix = libc::AF_UNIX as u32;
    let socket = sys(libc::SYS_socket)?;
    let socketpair = sys(libc::SYS_socketpair)?;
    match policy {
        SocketPolicy::InetAllowed => {
            // socket(): only AF_UNIX, AF_INET, AF_INET6 (no AF_PACKET, AF_NETLINK, AF_VSOCK,
            // AF_ALG, AF_XDP, Bluetooth, ...).
            t.insert(
                socket,
                deny_if(vec![vec![
                    c(0, Test::Ne(unix)),
                    c(0, Test::Ne(libc::AF_INET as u32)),
                    c(0, Test::Ne(libc::AF_INET6 as u32)),
                ]]),
            );
            t.insert(socketpair, deny_if(vec![vec![c(0, Test::Ne(unix))]]));
        }
        SocketPolicy::Proxied => {
            let stream = Test::MaskedEq {
                mask: SOCK_TYPE_MASK,
                value: libc::SOCK_STREAM as u32,
            };
            t.insert(
                socket,
                Verdict::Rules {
                    rules: vec![
                        Rule {
                            conds: vec![
                                c(0, Test::Ne(libc::AF_INET as u32)),
                                c(0, Test::Ne(libc::AF_INET6 as u32)),
                            ],
                            action: EPERM,
                        },
                        Rule {
                            conds: vec![c(1, stream)],
                            action: Action::Allow,
                        },
                    ],
                    default: EPERM,
                },
            );
            t.insert(socketpair, unix_pairs());
            let fastopen = Test::MaskedEq {
                mask: libc::MSG_FASTOPEN as u32,
                value: libc::MSG_FASTOPEN as u32,
            };
            t.insert(sys(libc::SYS_sendto)?, deny_if(vec![vec![c(3, fastopen)]]));
            t.insert(sys(libc::SYS_sendmsg)?, deny_if(vec![vec![c(2, fastopen)]]));
            t.insert(
                sys(libc::SYS_sendmmsg)?,
                deny_if(vec![vec![c(3, fastopen)]]),
            );
        }
        SocketPolicy::Denied(UnixSockets::None) => {
            t.insert(socket, Verdict::Always(EPERM));
            t.insert(socketpair, Verdict::Always(EPERM));
        }
        SocketPolicy::Denied(UnixSockets::Connect) => {
            t.insert(socket, deny_if(vec![vec![c(0, Test::Ne(unix))]]));
            t.insert(socketpair, deny_if(vec![vec![c(0, Test::Ne(unix))]]));
        }
        SocketPolicy::Denied(UnixSockets::Pairs) => {
            let pairs = unix_pairs();
            t.insert(socket, pairs.clone());
            t.insert(socketpair, pairs);
            for sc in [
                libc::SYS_connect,
                libc::SYS_bind,
                libc::SYS_listen,
                libc::SYS_accept,
                libc::SYS_accept4,
            ] {
                t.insert(sys(sc)?, Verdict::Always(EPERM));
            }
        }
    }
    Ok(())
}

/// System-call number -> verdict, for every number that is not simply allowed.
pub(crate) fn table(opts: &FilterOptions) -> Result<BTreeMap<u32, Verdict>> {
    let mut t = BTreeMap::new();
    for n in denied_syscalls(opts) {
        t.insert(num(n)?, Verdict::Always(EPERM));
    }
    // clone(): any namespace flag (one masked test of all of them).
    let ns_flags = [
        libc::CLONE_NEWNS,
        libc::CLONE_NEWCGROUP,
        libc::CLONE_NEWUTS,
        libc::CLONE_NEWIPC,
        libc::CLONE_NEWUSER,
        libc::CLONE_NEWPID,
        libc::CLONE_NEWNET,
        0x80, // CLONE_NEWTIME
    ];
    let all_ns = ns_flags.iter().fold(0u32, |m, &f| m | f as u32);
    t.insert(
        sys(libc::SYS_clone)?,
        Verdict::Rules {
            rules: vec![Rule {
                conds: vec![c(
                    0,
                    Test::MaskedEq {
                        mask: all_ns,
                        value: 0,
                    },
                )],
                action: Action::Allow,
            }],
            default: EPERM,
        },
    );
    // fallocate() under deny_delete: no PUNCH_HOLE (0x02), COLLAPSE_RANGE (0x08) or
    // ZERO_RANGE (0x10), the spellings of truncation Landlock's TRUNCATE does not cover.
    if opts.deny_fallocate_destroy {
        let bit = |b: u32| vec![c(1, Test::MaskedEq { mask: b, value: b })];
        t.insert(
            sys(libc::SYS_fallocate)?,
            deny_if(vec![bit(0x02), bit(0x08), bit(0x10)]),
        );
    }
    // personality(): only the query (0xffffffff) and PER_LINUX (0).
    t.insert(
        sys(libc::SYS_personality)?,
        deny_if(vec![vec![c(0, Test::Ne(0xffff_ffff)), c(0, Test::Ne(0))]]),
    );
    // ioctl(): no pushing input into a terminal, no TIOCLINUX.
    t.insert(
        sys(libc::SYS_ioctl)?,
        deny_if(vec![
            vec![c(1, Test::Eq(ioctl_req(libc::TIOCSTI)))],
            vec![c(1, Test::Eq(ioctl_req(libc::TIOCLINUX)))],
        ]),
    );
    // mknod/mknodat: no character or block devices.
    let fmt = libc::S_IFMT;
    let dev = |arg: u8| {
        deny_if(vec![
            vec![c(
                arg,
                Test::MaskedEq {
                    mask: fmt,
                    value: libc::S_IFCHR,
                },
            )],
            vec![c(
                arg,
                Test::MaskedEq {
                    mask: fmt,
                    value: libc::S_IFBLK,
                },
            )],
        ])
    };
    #[cfg(target_arch = "x86_64")]
    t.insert(sys(libc::SYS_mknod)?, dev(1));
    t.insert(sys(libc::SYS_mknodat)?, dev(2));
    socket_table(&mut t, opts.sockets)?;
    t.insert(
        sys(libc::SYS_clone3)?,
        Verdict::Always(Action::Errno(libc::ENOSYS as u16)),
    );
    Ok(t)
}

/// The programs to install, in order (one).
pub(crate) fn build(opts: &FilterOptions) -> Result<Vec<crate::sys::BpfProgram>> {
    Ok(vec![bpf::compile(&table(opts)?)?])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::bpf::{run, NATIVE_ARCH, X32_BIT};
    use crate::seccomp_reference;

    /// The kernel's verdict for several filters: the lowest action wins (on a tie the most
    /// recently installed filter's data).
    fn combined(progs: &[crate::sys::BpfProgram], nr: u32, arch: u32, args: &[u64; 6]) -> u32 {
        let action = |r: u32| (r & 0xffff_0000) as i32;
        let mut best: Option<u32> = None;
        for p in progs.iter().rev() {
            let r = run(p, nr, arch, args).unwrap();
            if best.is_none_or(|b| action(r) < action(b)) {
                best = Some(r);
            }
        }
        best.unwrap()
    }

    fn options() -> Vec<FilterOptions> {
        let mut v = Vec::new();
        for sockets in [
            SocketPolicy::InetAllowed,
            SocketPolicy::Proxied,
            SocketPolicy::Denied(UnixSockets::Pairs),
            SocketPolicy::Denied(UnixSockets::None),
            SocketPolicy::Denied(UnixSockets::Connect),
        ] {
            for deny_path_truncate in [false, true] {
                for deny_inotify in [false, true] {
                    v.push(FilterOptions {
                        sockets,
                        deny_path_truncate,
                        deny_inotify,
                        deny_fallocate_destroy: deny_inotify,
                    });
                }
            }
        }
        v
    }

    /// Argument values that exercise every rule: families, socket types with flag bits,
    /// namespace flags, personality values, ioctl requests, file modes, high halves.
    fn interesting() -> Vec<u64> {
        let mut v: Vec<u64> = vec![0, 1, 2, 3, 5, 6, 10, 16, 17, 0xffff_ffff, u64::MAX];
        for t in 0..16u64 {
            v.push(t);
            v.push(t | libc::SOCK_CLOEXEC as u64);
            v.push(t | libc::SOCK_NONBLOCK as u64 | (1 << 32));
        }
        for f in [
            libc::CLONE_NEWNS,
            libc::CLONE_NEWCGROUP,
            libc::CLONE_NEWUTS,
            libc::CLONE_NEWIPC,
            libc::CLONE_NEWUSER,
            libc::CLONE_NEWPID,
            libc::CLONE_NEWNET,
            0x80,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            libc::CLONE_THREAD | libc::CLONE_SIGHAND | libc::CLONE_VM,
        ] {
            v.push(f as u64);
            v.push(f as u64 | 0x11);
            v.push(f as u64 | (libc::CLONE_NEWUSER | libc::CLONE_NEWNS) as u64);
            v.push(f as u64 | (1 << 40));
        }
        for r in [libc::TIOCSTI, libc::TIOCLINUX, libc::TCGETS, libc::FIONREAD] {
            let r = u64::from(ioctl_req(r));
            v.push(r);
            v.push(r | (3 << 32));
        }
        for m in [
            libc::S_IFCHR,
            libc::S_IFBLK,
            libc::S_IFREG,
            libc::S_IFIFO,
            libc::S_IFSOCK,
        ] {
            v.push(u64::from(m | 0o644));
        }
        for mode in [0x01u64, 0x03, 0x04, 0x08, 0x10, 0x11, 0x20, 0x40, 0x21] {
            v.push(mode); // fallocate modes: KEEP_SIZE, PUNCH_HOLE|KEEP_SIZE, ..., INSERT
        }
        v.push(0x0008); // PER_LINUX32-like
        let fastopen = libc::MSG_FASTOPEN as u64;
        v.extend([fastopen, fastopen | 0x40, fastopen | (1 << 33)]);
        v
    }

    #[test]
    fn compact_program_matches_the_three_reference_filters() {
        let vals = interesting();
        for opts in options() {
            let new = build(&opts).unwrap();
            assert_eq!(new.len(), 1);
            let old = seccomp_reference::programs(&opts).unwrap();
            let mut checked = 0u64;
            for nr in (0..600u32).chain([X32_BIT, X32_BIT | 41, X32_BIT | 435, u32::MAX]) {
                for arch in [NATIVE_ARCH, 0x4000_0003] {
                    let zero = [0u64; 6];
                    assert_eq!(
                        combined(&new, nr, arch, &zero),
                        combined(&old, nr, arch, &zero),
                        "{opts:?} nr {nr} arch {arch:x}"
                    );
                }
                if !matches!(table(&opts).unwrap().get(&nr), Some(Verdict::Rules { .. })) {
                    continue;
                }
                // Numbers with rules: every argument position with every value, and pairs
                // of values in the first three arguments.
                for a in 0..6 {
                    for &x in &vals {
                        let mut args = [0u64; 6];
                        args[a] = x;
                        assert_eq!(
                            combined(&new, nr, NATIVE_ARCH, &args),
                            combined(&old, nr, NATIVE_ARCH, &args),
                            "{opts:?} nr {nr} args {args:x?}"
                        );
                        checked += 1;
                    }
                }
                for &x in &vals {
                    for &y in &vals {
                        for (i, j) in [(0, 1), (1, 2), (0, 2)] {
                            let mut args = [0u64; 6];
                            args[i] = x;
                            args[j] = y;
                            assert_eq!(
                                combined(&new, nr, NATIVE_ARCH, &args),
                                combined(&old, nr, NATIVE_ARCH, &args),
                                "{opts:?} nr {nr} args {args:x?}"
                            );
                            checked += 1;
                        }
                    }
                }
            }
            assert!(checked > 10_000, "{checked}");
        }
    }

    #[test]
    fn every_path_is_short() {
        // The kernel emulates the program for every number when it installs it; a long path
        // per number is what made the old filter slow to install.
        let p = &build(&FilterOptions {
            sockets: SocketPolicy::Denied(UnixSockets::Pairs),
            deny_path_truncate: true,
            deny_inotify: true,
            deny_fallocate_destroy: true,
        })
        .unwrap()[0];
        assert!(p.len() < 400, "{}", p.len());
        // Count the instructions executed for an allowed number with no entry.
        let steps = |nr: u32| {
            let mut pc = 0usize;
            let mut n = 0;
            let mut acc = 0u32;
            loop {
                let i = p[pc];
                n += 1;
                pc += 1;
                match i.code {
                    0x20 => acc = if i.k == 0 { nr } else { NATIVE_ARCH },
                    0x05 => pc += i.k as usize,
                    0x15 => pc += usize::from(if acc == i.k { i.jt } else { i.jf }),
                    0x35 => pc += usize::from(if acc >= i.k { i.jt } else { i.jf }),
                    0x06 => return n,
                    _ => return n,
                }
            }
        };
        let worst = (0..500u32).map(steps).max().unwrap();
        assert!(worst <= 20, "longest path {worst}");
    }
}
