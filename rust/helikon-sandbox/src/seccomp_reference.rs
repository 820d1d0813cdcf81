//! The previous seccomp programs, generated with `seccompiler` as three filters (ABI guard,
//! deny list as a chain of rules, `clone3`). Test-only: the oracle that the compact program of
//! [`crate::seccomp_rules`] must match verdict for verdict (see the equivalence test there).
//! The socket rules are kept in their original "any rule matches -> EPERM" form, so the
//! rewritten decision lists are checked against an independent formulation.
#![allow(clippy::unwrap_used)]
use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition,
    SeccompFilter, SeccompRule, TargetArch,
};

use crate::config::UnixSockets;
use crate::error::{Result, SandboxError};
use crate::seccomp_rules::{denied_syscalls, FilterOptions, SocketPolicy};

fn arch() -> Result<TargetArch> {
    #[cfg(target_arch = "x86_64")]
    {
        Ok(TargetArch::x86_64)
    }
    #[cfg(target_arch = "aarch64")]
    {
        Ok(TargetArch::aarch64)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        Err(SandboxError::Unsupported(
            "the OS sandbox supports x86_64 and aarch64 only".into(),
        ))
    }
}

/// A system call number as seccompiler wants it (`c_long` is `i64` on the supported targets).
#[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
fn nr(n: libc::c_long) -> i64 {
    n as i64
}

/// An ioctl request number as a comparison value (its type differs between libcs).
#[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
fn ioctl_req(r: libc::Ioctl) -> u64 {
    r as u64
}

fn cond(arg: u8, len: Len, op: Op, value: u64) -> Result<SeccompCondition> {
    SeccompCondition::new(arg, len, op, value).map_err(|e| SandboxError::Config(e.to_string()))
}

fn rule(conds: Vec<SeccompCondition>) -> Result<SeccompRule> {
    SeccompRule::new(conds).map_err(|e| SandboxError::Config(e.to_string()))
}

fn socket_rules(rules: &mut BTreeMap<i64, Vec<SeccompRule>>, policy: SocketPolicy) -> Result<()> {
    const SOCK_TYPE_MASK: u64 = 0xf;
    let unix = libc::AF_UNIX as u64;
    match policy {
        SocketPolicy::InetAllowed => {
            // socket(): only AF_UNIX, AF_INET, AF_INET6 (no AF_PACKET, AF_NETLINK, AF_VSOCK,
            // AF_ALG, AF_XDP, Bluetooth, ...).
            rules.insert(
                nr(libc::SYS_socket),
                vec![rule(vec![
                    cond(0, Len::Dword, Op::Ne, unix)?,
                    cond(0, Len::Dword, Op::Ne, libc::AF_INET as u64)?,
                    cond(0, Len::Dword, Op::Ne, libc::AF_INET6 as u64)?,
                ])?],
            );
            rules.insert(
                nr(libc::SYS_socketpair),
                vec![rule(vec![cond(0, Len::Dword, Op::Ne, unix)?])?],
            );
        }
        SocketPolicy::Proxied => {
            let mut chain = vec![rule(vec![
                cond(0, Len::Dword, Op::Ne, libc::AF_INET as u64)?,
                cond(0, Len::Dword, Op::Ne, libc::AF_INET6 as u64)?,
            ])?];
            for t in 0..=SOCK_TYPE_MASK {
                if t != libc::SOCK_STREAM as u64 {
                    chain.push(rule(vec![cond(
                        1,
                        Len::Dword,
                        Op::MaskedEq(SOCK_TYPE_MASK),
                        t,
                    )?])?);
                }
            }
            rules.insert(nr(libc::SYS_socket), chain);
            let mut pairs = vec![rule(vec![cond(0, Len::Dword, Op::Ne, unix)?])?];
            for t in 0..=SOCK_TYPE_MASK {
                if t != libc::SOCK_STREAM as u64 && t != libc::SOCK_SEQPACKET as u64 {
                    pairs.push(rule(vec![
                        cond(0, Len::Dword, Op::Eq, unix)?,
                        cond(1, Len::Dword, Op::MaskedEq(SOCK_TYPE_MASK), t)?,
                    ])?);
                }
            }
            rules.insert(nr(libc::SYS_socketpair), pairs);
            let fastopen = libc::MSG_FASTOPEN as u64;
            for (sc, arg) in [
                (libc::SYS_sendto, 3),
                (libc::SYS_sendmsg, 2),
                (libc::SYS_sendmmsg, 3),
            ] {
                rules.insert(
                    nr(sc),
                    vec![rule(vec![cond(
                        arg,
                        Len::Dword,
                        Op::MaskedEq(fastopen),
                        fastopen,
                    )?])?],
                );
            }
        }
        SocketPolicy::Denied(UnixSockets::None) => {
            rules.insert(nr(libc::SYS_socket), vec![]);
            rules.insert(nr(libc::SYS_socketpair), vec![]);
        }
        SocketPolicy::Denied(UnixSockets::Connect) => {
            rules.insert(
                nr(libc::SYS_socket),
                vec![rule(vec![cond(0, Len::Dword, Op::Ne, unix)?])?],
            );
            rules.insert(
                nr(libc::SYS_socketpair),
                vec![rule(vec![cond(0, Len::Dword, Op::Ne, unix)?])?],
            );
        }
        SocketPolicy::Denied(UnixSockets::Pairs) => {
            // AF_UNIX stream/seqpacket only: a datagram socket could sendto() a pathname
            // socket without connect().
            for sc in [libc::SYS_socket, libc::SYS_socketpair] {
                let mut chain = vec![rule(vec![cond(0, Len::Dword, Op::Ne, unix)?])?];
                for t in 0..=SOCK_TYPE_MASK {
                    if t == libc::SOCK_STREAM as u64 || t == libc::SOCK_SEQPACKET as u64 {
                        continue;
                    }
                    chain.push(rule(vec![
                        cond(0, Len::Dword, Op::Eq, unix)?,
                        cond(1, Len::Dword, Op::MaskedEq(SOCK_TYPE_MASK), t)?,
                    ])?);
                }
                rules.insert(nr(sc), chain);
            }
            for sc in [
                libc::SYS_connect,
                libc::SYS_bind,
                libc::SYS_listen,
                libc::SYS_accept,
                libc::SYS_accept4,
            ] {
                rules.insert(nr(sc), vec![]);
            }
        }
    }
    Ok(())
}

/// Build the deny-list program.
fn deny_filter(opts: &FilterOptions) -> Result<BpfProgram> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in denied_syscalls(opts) {
        rules.insert(nr, vec![]);
    }
    // clone(): any namespace flag.
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
    let mut clone_rules = Vec::new();
    for f in ns_flags {
        let f = f as u64;
        clone_rules.push(rule(vec![cond(0, Len::Qword, Op::MaskedEq(f), f)?])?);
    }
    rules.insert(nr(libc::SYS_clone), clone_rules);
    // fallocate() under deny_delete: no PUNCH_HOLE, COLLAPSE_RANGE, ZERO_RANGE.
    if opts.deny_fallocate_destroy {
        let mut f = Vec::new();
        for bit in [0x02u64, 0x08, 0x10] {
            f.push(rule(vec![cond(1, Len::Dword, Op::MaskedEq(bit), bit)?])?);
        }
        rules.insert(nr(libc::SYS_fallocate), f);
    }
    // personality(): only the query (0xffffffff) and PER_LINUX (0).
    rules.insert(
        nr(libc::SYS_personality),
        vec![rule(vec![
            cond(0, Len::Dword, Op::Ne, 0xffff_ffff)?,
            cond(0, Len::Dword, Op::Ne, 0)?,
        ])?],
    );
    // ioctl(): no pushing input into a terminal, no TIOCLINUX.
    rules.insert(
        nr(libc::SYS_ioctl),
        vec![
            rule(vec![cond(1, Len::Dword, Op::Eq, ioctl_req(libc::TIOCSTI))?])?,
            rule(vec![cond(
                1,
                Len::Dword,
                Op::Eq,
                ioctl_req(libc::TIOCLINUX),
            )?])?,
        ],
    );
    // mknod/mknodat: no character or block devices.
    let fmt = libc::S_IFMT as u64;
    let dev_rules = |arg: u8| -> Result<Vec<SeccompRule>> {
        Ok(vec![
            rule(vec![cond(
                arg,
                Len::Dword,
                Op::MaskedEq(fmt),
                libc::S_IFCHR as u64,
            )?])?,
            rule(vec![cond(
                arg,
                Len::Dword,
                Op::MaskedEq(fmt),
                libc::S_IFBLK as u64,
            )?])?,
        ])
    };
    #[cfg(target_arch = "x86_64")]
    rules.insert(nr(libc::SYS_mknod), dev_rules(1)?);
    rules.insert(nr(libc::SYS_mknodat), dev_rules(2)?);
    socket_rules(&mut rules, opts.sockets)?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch()?,
    )
    .map_err(|e| SandboxError::Config(format!("seccomp filter: {e}")))?;
    BpfProgram::try_from(filter).map_err(|e| SandboxError::Config(format!("seccomp: {e}")))
}

fn clone3_filter() -> Result<BpfProgram> {
    let mut rules = BTreeMap::new();
    rules.insert(nr(libc::SYS_clone3), vec![]);
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch()?,
    )
    .map_err(|e| SandboxError::Config(format!("seccomp filter: {e}")))?;
    BpfProgram::try_from(filter).map_err(|e| SandboxError::Config(format!("seccomp: {e}")))
}

/// The architecture guard, written by hand.
fn abi_guard() -> Result<crate::sys::BpfProgram> {
    const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
    const RET_K: u16 = 0x06; // BPF_RET | BPF_K
    let ins = |code: u16, jt: u8, jf: u8, k: u32| libc::sock_filter { code, jt, jf, k };
    #[cfg(target_arch = "x86_64")]
    let audit_arch: u32 = 62 | 0x8000_0000 | 0x4000_0000;
    #[cfg(target_arch = "aarch64")]
    let audit_arch: u32 = 183 | 0x8000_0000 | 0x4000_0000;
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let audit_arch: u32 = {
        arch()?;
        0
    };
    let enosys = libc::SECCOMP_RET_ERRNO | (libc::ENOSYS as u32);
    Ok(vec![
        ins(LD_W_ABS, 0, 0, 4), // seccomp_data.arch
        ins(JEQ_K, 1, 0, audit_arch),
        ins(RET_K, 0, 0, libc::SECCOMP_RET_KILL_PROCESS),
        ins(LD_W_ABS, 0, 0, 0), // seccomp_data.nr
        ins(JGE_K, 0, 1, 0x4000_0000),
        ins(RET_K, 0, 0, enosys),
        ins(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW),
    ])
}

/// Every program, in installation order (the three filters the crate used to install).
pub(crate) fn programs(opts: &FilterOptions) -> Result<Vec<crate::sys::BpfProgram>> {
    let mut out = vec![abi_guard()?];
    for prog in [deny_filter(opts)?, clone3_filter()?] {
        out.push(
            prog.into_iter()
                .map(|f| libc::sock_filter {
                    code: f.code,
                    jt: f.jt,
                    jf: f.jf,
                    k: f.k,
                })
                .collect(),
        );
    }
    Ok(out)
}
