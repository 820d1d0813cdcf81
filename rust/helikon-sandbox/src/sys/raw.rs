//! System calls without libc: no `errno`, no locks, no thread-local state.
//!
//! The supervisor and the child share the host's address space and, because they are not
//! threads libc knows about, also the thread-local block of the host thread that created
//! them. A libc wrapper that fails writes `errno` into that thread's storage while it keeps
//! running, so everything after `clone` goes through these wrappers instead: one `syscall` /
//! `svc` instruction, the result as `Ok(value)` or `Err(errno)`.
use libc::{c_int, c_long, c_uint, pid_t};

/// A raw system call with up to six arguments; negative results in `-4095..0` are errors.
///
/// # Safety
/// The caller must pass arguments the kernel accepts for `nr` (valid pointers for the
/// duration of the call, descriptors it owns).
#[inline(always)]
unsafe fn syscall6(nr: c_long, a: [usize; 6]) -> Result<usize, c_int> {
    let ret: isize;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the `syscall` instruction with the Linux x86_64 calling convention; rcx and r11
    // are clobbered by the instruction itself.
    unsafe {
        core::arch::asm!(
            "syscall",
            inlateout("rax") nr as isize => ret,
            in("rdi") a[0],
            in("rsi") a[1],
            in("rdx") a[2],
            in("r10") a[3],
            in("r8") a[4],
            in("r9") a[5],
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    #[cfg(target_arch = "aarch64")]
    // SAFETY: `svc 0` with the Linux aarch64 calling convention.
    unsafe {
        core::arch::asm!(
            "svc 0",
            in("x8") nr,
            inlateout("x0") a[0] as isize => ret,
            in("x1") a[1],
            in("x2") a[2],
            in("x3") a[3],
            in("x4") a[4],
            in("x5") a[5],
            options(nostack),
        );
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = (nr, a);
        ret = -(libc::ENOSYS as isize);
    }
    if (-4095..0).contains(&ret) {
        Err((-ret) as c_int)
    } else {
        Ok(ret as usize)
    }
}

macro_rules! sc {
    ($nr:expr) => { sc!($nr, 0, 0, 0, 0, 0, 0) };
    ($nr:expr, $a:expr) => { sc!($nr, $a, 0, 0, 0, 0, 0) };
    ($nr:expr, $a:expr, $b:expr) => { sc!($nr, $a, $b, 0, 0, 0, 0) };
    ($nr:expr, $a:expr, $b:expr, $c:expr) => { sc!($nr, $a, $b, $c, 0, 0, 0) };
    ($nr:expr, $a:expr, $b:expr, $c:expr, $d:expr) => { sc!($nr, $a, $b, $c, $d, 0, 0) };
    ($nr:expr, $a:expr, $b:expr, $c:expr, $d:expr, $e:expr) => { sc!($nr, $a, $b, $c, $d, $e, 0) };
    ($nr:expr, $a:expr, $b:expr, $c:expr, $d:expr, $e:expr, $f:expr) => {
        // SAFETY: each wrapper below documents what its pointers refer to.
        unsafe {
            syscall6(
                $nr,
                [$a as usize, $b as usize, $c as usize, $d as usize, $e as usize, $f as usize],
            )
        }
    };
}

/// The result type of every wrapper: the kernel's return value or the errno.
pub(crate) type R = Result<usize, c_int>;

pub(crate) fn getpid() -> pid_t {
    sc!(libc::SYS_getpid).map_or(-1, |v| v as pid_t)
}

pub(crate) fn getppid() -> pid_t {
    sc!(libc::SYS_getppid).map_or(-1, |v| v as pid_t)
}

pub(crate) fn getuid() -> u32 {
    sc!(libc::SYS_getuid).map_or(u32::MAX, |v| v as u32)
}

pub(crate) fn geteuid() -> u32 {
    sc!(libc::SYS_geteuid).map_or(u32::MAX, |v| v as u32)
}

pub(crate) fn getgid() -> u32 {
    sc!(libc::SYS_getgid).map_or(u32::MAX, |v| v as u32)
}

pub(crate) fn getegid() -> u32 {
    sc!(libc::SYS_getegid).map_or(u32::MAX, |v| v as u32)
}

pub(crate) fn setsid() -> R {
    sc!(libc::SYS_setsid)
}

pub(crate) fn close(fd: c_int) -> R {
    sc!(libc::SYS_close, fd)
}

pub(crate) fn close_range(first: c_uint, last: c_uint, flags: c_uint) -> R {
    sc!(libc::SYS_close_range, first, last, flags)
}

pub(crate) fn fcntl(fd: c_int, cmd: c_int, arg: c_int) -> R {
    sc!(libc::SYS_fcntl, fd, cmd, arg)
}

pub(crate) fn dup3(old: c_int, new: c_int) -> R {
    sc!(libc::SYS_dup3, old, new, 0)
}

/// `pipe2(O_CLOEXEC)`: `(read end, write end)`.
pub(crate) fn pipe() -> Result<(c_int, c_int), c_int> {
    let mut fds = [-1 as c_int; 2];
    sc!(libc::SYS_pipe2, fds.as_mut_ptr(), libc::O_CLOEXEC)?;
    Ok((fds[0], fds[1]))
}

pub(crate) fn fchdir(fd: c_int) -> R {
    sc!(libc::SYS_fchdir, fd)
}

pub(crate) fn read(fd: c_int, buf: &mut [u8]) -> R {
    sc!(libc::SYS_read, fd, buf.as_mut_ptr(), buf.len())
}

pub(crate) fn write(fd: c_int, buf: &[u8]) -> R {
    sc!(libc::SYS_write, fd, buf.as_ptr(), buf.len())
}

/// `openat(AT_FDCWD, path, flags)`; `path` must be NUL-terminated.
pub(crate) fn open(path: &[u8], flags: c_int) -> R {
    if path.last() != Some(&0) {
        return Err(libc::EINVAL);
    }
    sc!(libc::SYS_openat, libc::AT_FDCWD, path.as_ptr(), flags, 0)
}

pub(crate) fn getdents64(fd: c_int, buf: &mut [u8]) -> R {
    sc!(libc::SYS_getdents64, fd, buf.as_mut_ptr(), buf.len())
}

pub(crate) fn prctl(option: c_int, a2: usize, a3: usize, a4: usize, a5: usize) -> R {
    sc!(libc::SYS_prctl, option, a2, a3, a4, a5)
}

pub(crate) fn setrlimit(resource: c_int, value: u64) -> R {
    let lim = [value, value]; // struct rlimit64 { cur, max }
    sc!(libc::SYS_prlimit64, 0, resource, lim.as_ptr(), 0)
}

pub(crate) fn setgroups_none() -> R {
    sc!(libc::SYS_setgroups, 0, 0)
}

pub(crate) fn setresgid(g: u32) -> R {
    sc!(libc::SYS_setresgid, g, g, g)
}

pub(crate) fn setresuid(u: u32) -> R {
    sc!(libc::SYS_setresuid, u, u, u)
}

/// Clear the effective, permitted and inheritable capability sets.
pub(crate) fn capset_none() -> R {
    let header: [u32; 2] = [0x2008_0522, 0]; // _LINUX_CAPABILITY_VERSION_3, pid 0
    let data = [0u32; 6]; // two { effective, permitted, inheritable }
    sc!(libc::SYS_capset, header.as_ptr(), data.as_ptr())
}

/// Reset `sig` to its default disposition.
pub(crate) fn signal_default(sig: c_int) -> R {
    // struct kernel_sigaction { handler, flags, restorer, mask }: all zero is SIG_DFL.
    let act = [0usize; 4];
    sc!(libc::SYS_rt_sigaction, sig, act.as_ptr(), 0, 8)
}

/// `rt_sigprocmask(how, &mask, NULL)` on the kernel's 64-bit mask.
pub(crate) fn sigprocmask(how: c_int, mask: u64) -> R {
    sc!(libc::SYS_rt_sigprocmask, how, &mask as *const u64, 0, 8)
}

pub(crate) fn kill(pid: pid_t, sig: c_int) -> R {
    sc!(libc::SYS_kill, pid, sig)
}

/// `wait4(pid, &status, options, NULL)`; returns the pid reaped (0 with `WNOHANG` if none).
pub(crate) fn wait4(pid: pid_t, status: &mut c_int, options: c_int) -> R {
    sc!(libc::SYS_wait4, pid, status as *mut c_int, options, 0)
}

pub(crate) fn pidfd_open(pid: pid_t) -> R {
    sc!(libc::SYS_pidfd_open, pid, 0)
}

/// `ppoll` on `fds` for at most `ms` (negative descriptors are ignored by the kernel).
pub(crate) fn ppoll(fds: &mut [libc::pollfd], ms: u64) -> R {
    let ts = [(ms / 1000) as i64, ((ms % 1000) * 1_000_000) as i64];
    sc!(
        libc::SYS_ppoll,
        fds.as_mut_ptr(),
        fds.len(),
        ts.as_ptr(),
        0,
        8
    )
}

pub(crate) fn monotonic_ns() -> u64 {
    let mut ts = [0i64; 2];
    let _ = sc!(
        libc::SYS_clock_gettime,
        libc::CLOCK_MONOTONIC,
        ts.as_mut_ptr()
    );
    (ts[0] as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts[1] as u64)
}

pub(crate) fn monotonic_ms() -> u64 {
    monotonic_ns() / 1_000_000
}

pub(crate) fn sleep_ms(ms: u64) {
    let ts = [(ms / 1000) as i64, ((ms % 1000) * 1_000_000) as i64];
    let _ = sc!(
        libc::SYS_clock_nanosleep,
        libc::CLOCK_MONOTONIC,
        0,
        ts.as_ptr(),
        0
    );
}

/// A CPU mask for up to 1024 CPUs.
pub(crate) type CpuMask = [u64; 16];

/// This thread's allowed CPUs; returns the mask size in bytes the kernel wrote.
pub(crate) fn sched_getaffinity(mask: &mut CpuMask) -> R {
    sc!(
        libc::SYS_sched_getaffinity,
        0,
        std::mem::size_of::<CpuMask>(),
        mask.as_mut_ptr()
    )
}

/// Restrict this thread to `mask` (`len` bytes of it).
pub(crate) fn sched_setaffinity(mask: &CpuMask, len: usize) -> R {
    sc!(
        libc::SYS_sched_setaffinity,
        0,
        len.min(std::mem::size_of::<CpuMask>()),
        mask.as_ptr()
    )
}

/// The CPU this thread runs on.
pub(crate) fn getcpu() -> Option<u32> {
    let mut cpu: u32 = 0;
    sc!(libc::SYS_getcpu, &mut cpu as *mut u32, 0, 0).ok()?;
    Some(cpu)
}

pub(crate) fn landlock_restrict_self(fd: c_int) -> R {
    sc!(libc::SYS_landlock_restrict_self, fd, 0)
}

pub(crate) fn seccomp_filter(prog: &[libc::sock_filter]) -> R {
    let fprog = libc::sock_fprog {
        len: prog.len() as libc::c_ushort,
        filter: prog.as_ptr() as *mut libc::sock_filter,
    };
    sc!(
        libc::SYS_seccomp,
        libc::SECCOMP_SET_MODE_FILTER,
        0,
        &fprog as *const libc::sock_fprog
    )
}

/// `execve`; only returns on failure.
pub(crate) fn execve(
    path: *const libc::c_char,
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
) -> R {
    sc!(libc::SYS_execve, path, argv, envp)
}

pub(crate) fn socket(domain: c_int, ty: c_int) -> R {
    sc!(libc::SYS_socket, domain, ty, 0)
}

pub(crate) fn unshare(flags: c_int) -> R {
    sc!(libc::SYS_unshare, flags)
}

/// `mount(2)`; the strings must be NUL-terminated (or null pointers where allowed).
pub(crate) fn mount(
    src: *const libc::c_char,
    target: *const libc::c_char,
    fstype: *const libc::c_char,
    flags: libc::c_ulong,
    data: *const libc::c_char,
) -> R {
    sc!(libc::SYS_mount, src, target, fstype, flags, data)
}

/// `umount2(2)`; `target` must be NUL-terminated.
pub(crate) fn umount2(target: *const libc::c_char, flags: c_int) -> R {
    sc!(libc::SYS_umount2, target, flags)
}

/// `pivot_root(2)`; both paths must be NUL-terminated.
pub(crate) fn pivot_root(new_root: *const libc::c_char, put_old: *const libc::c_char) -> R {
    sc!(libc::SYS_pivot_root, new_root, put_old)
}

/// `mkdirat(AT_FDCWD, path, mode)`; `path` must be NUL-terminated.
pub(crate) fn mkdir(path: *const libc::c_char, mode: libc::mode_t) -> R {
    sc!(libc::SYS_mkdirat, libc::AT_FDCWD, path, mode)
}

/// `openat(AT_FDCWD, path, flags, mode)`; `path` must be NUL-terminated.
pub(crate) fn open_mode(path: *const libc::c_char, flags: c_int, mode: libc::mode_t) -> R {
    sc!(libc::SYS_openat, libc::AT_FDCWD, path, flags, mode)
}

/// `chdir(2)`; `path` must be NUL-terminated.
pub(crate) fn chdir(path: *const libc::c_char) -> R {
    sc!(libc::SYS_chdir, path)
}

/// `openat2(AT_FDCWD, path, {flags, 0, resolve})`; `path` must be NUL-terminated.
pub(crate) fn openat2_cwd(path: *const libc::c_char, flags: u64, resolve: u64) -> R {
    let how: [u64; 3] = [flags, 0, resolve]; // struct open_how
    sc!(
        libc::SYS_openat2,
        libc::AT_FDCWD,
        path,
        how.as_ptr(),
        std::mem::size_of_val(&how)
    )
}

/// `open_tree(fd, "", flags)`: a detached copy of the mount tree at `fd`.
pub(crate) fn open_tree(fd: c_int, flags: c_uint) -> R {
    sc!(libc::SYS_open_tree, fd, c"".as_ptr(), flags)
}

/// `mount_setattr(fd, "", flags, {attr_set, 0, 0, 0})`.
pub(crate) fn mount_setattr(fd: c_int, flags: c_uint, attr_set: u64) -> R {
    let attr: [u64; 4] = [attr_set, 0, 0, 0]; // struct mount_attr
    sc!(
        libc::SYS_mount_setattr,
        fd,
        c"".as_ptr(),
        flags,
        attr.as_ptr(),
        std::mem::size_of_val(&attr)
    )
}

/// `move_mount(from, "", to, "", flags)`.
pub(crate) fn move_mount(from: c_int, to: c_int, flags: c_uint) -> R {
    sc!(
        libc::SYS_move_mount,
        from,
        c"".as_ptr(),
        to,
        c"".as_ptr(),
        flags
    )
}

/// `ioctl` with a pointer argument (`arg` is the address of the request's struct).
pub(crate) fn ioctl_ptr(fd: c_int, request: libc::c_ulong, arg: usize) -> R {
    sc!(libc::SYS_ioctl, fd, request, arg)
}

/// `socketpair(AF_UNIX, ty, 0)`.
pub(crate) fn socketpair_unix(ty: c_int) -> Result<(c_int, c_int), c_int> {
    let mut fds = [-1 as c_int; 2];
    sc!(libc::SYS_socketpair, libc::AF_UNIX, ty, 0, fds.as_mut_ptr())?;
    Ok((fds[0], fds[1]))
}

/// `bind(fd, 127.0.0.1:port)`.
pub(crate) fn bind_loopback(fd: c_int, port: u16) -> R {
    // SAFETY: sockaddr_in is plain old data; all-zero is a valid value.
    let mut addr: libc::sockaddr_in = unsafe { core::mem::zeroed() };
    addr.sin_family = libc::AF_INET as libc::sa_family_t;
    addr.sin_port = port.to_be();
    addr.sin_addr.s_addr = u32::from_be_bytes([127, 0, 0, 1]).to_be();
    sc!(
        libc::SYS_bind,
        fd,
        &addr as *const libc::sockaddr_in,
        core::mem::size_of::<libc::sockaddr_in>()
    )
}

pub(crate) fn listen(fd: c_int, backlog: c_int) -> R {
    sc!(libc::SYS_listen, fd, backlog)
}

/// `accept4(fd, NULL, NULL, flags)`.
pub(crate) fn accept4(fd: c_int, flags: c_int) -> R {
    sc!(
        libc::SYS_accept4,
        fd,
        core::ptr::null_mut::<libc::sockaddr>(),
        core::ptr::null_mut::<libc::socklen_t>(),
        flags
    )
}

/// Bytes of a control message header, and of one carrying one descriptor.
const CMSG_HDR: usize = core::mem::size_of::<libc::cmsghdr>();
const CMSG_FD_SPACE: usize = CMSG_HDR + 8; // one c_int, padded to the 8-byte alignment

/// `sendmsg(sock, data, SCM_RIGHTS [fd], flags)`: pass `fd` with the bytes `data`.
pub(crate) fn send_fd(sock: c_int, data: &[u8], fd: c_int, flags: c_int) -> R {
    let mut control = [0u64; CMSG_FD_SPACE / 8];
    let mut iov = libc::iovec {
        iov_base: data.as_ptr() as *mut libc::c_void,
        iov_len: data.len(),
    };
    // SAFETY: msghdr is plain old data; all-zero is a valid value.
    let mut msg: libc::msghdr = unsafe { core::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = CMSG_FD_SPACE as _;
    let hdr = control.as_mut_ptr() as *mut libc::cmsghdr;
    // SAFETY: `control` is 8-byte aligned and holds a cmsghdr followed by one c_int.
    unsafe {
        (*hdr).cmsg_len = (CMSG_HDR + core::mem::size_of::<c_int>()) as _;
        (*hdr).cmsg_level = libc::SOL_SOCKET;
        (*hdr).cmsg_type = libc::SCM_RIGHTS;
        core::ptr::write_unaligned((hdr as *mut u8).add(CMSG_HDR) as *mut c_int, fd);
    }
    sc!(libc::SYS_sendmsg, sock, &msg as *const libc::msghdr, flags)
}

/// `recvmsg(sock, ..., flags | MSG_CMSG_CLOEXEC)`: one descriptor passed with SCM_RIGHTS
/// (`Err(EBADMSG)` when the message carried none).
pub(crate) fn recv_fd(sock: c_int, flags: c_int) -> R {
    let mut control = [0u64; CMSG_FD_SPACE / 8];
    let mut bytes = [0u8; 8];
    let mut iov = libc::iovec {
        iov_base: bytes.as_mut_ptr() as *mut libc::c_void,
        iov_len: bytes.len(),
    };
    // SAFETY: msghdr is plain old data; all-zero is a valid value.
    let mut msg: libc::msghdr = unsafe { core::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr() as *mut libc::c_void;
    msg.msg_controllen = CMSG_FD_SPACE as _;
    sc!(
        libc::SYS_recvmsg,
        sock,
        &mut msg as *mut libc::msghdr,
        flags | libc::MSG_CMSG_CLOEXEC
    )?;
    let hdr = control.as_ptr() as *const libc::cmsghdr;
    // SAFETY: `control` is ours and at least one header long; the kernel wrote at most
    // `CMSG_FD_SPACE` bytes into it (unwritten bytes are zero).
    #[allow(clippy::unnecessary_cast)] // cmsg_len is u32 on some libcs
    let (len, level, ty) = unsafe {
        (
            (*hdr).cmsg_len as usize,
            (*hdr).cmsg_level,
            (*hdr).cmsg_type,
        )
    };
    if (msg.msg_controllen as usize) < CMSG_HDR + 4
        || len < CMSG_HDR + 4
        || level != libc::SOL_SOCKET
        || ty != libc::SCM_RIGHTS
    {
        return Err(libc::EBADMSG);
    }
    // SAFETY: as above; the descriptor follows the header.
    let fd = unsafe { core::ptr::read_unaligned((hdr as *const u8).add(CMSG_HDR) as *const c_int) };
    Ok(fd as usize)
}

/// End this process now (no destructors, no atexit handlers, no libc).
pub(crate) fn exit_now(code: c_int) -> ! {
    loop {
        let _ = sc!(libc::SYS_exit_group, code);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_and_errors_come_back_without_errno() {
        assert_eq!(getpid(), std::process::id() as pid_t);
        assert_eq!(close(-1), Err(libc::EBADF));
        assert_eq!(
            open(b"/nonexistent-helikon\0", libc::O_RDONLY),
            Err(libc::ENOENT)
        );
        assert_eq!(open(b"/no-nul", libc::O_RDONLY), Err(libc::EINVAL));
        let fd = open(b"/dev/null\0", libc::O_RDONLY | libc::O_CLOEXEC);
        assert!(matches!(fd, Ok(fd) if fd > 2), "{fd:?}");
        let fd = fd.unwrap_or(0) as c_int;
        let mut b = [0u8; 4];
        assert_eq!(read(fd, &mut b), Ok(0));
        assert_eq!(close(fd), Ok(0));
        let t0 = monotonic_ms();
        sleep_ms(2);
        assert!(monotonic_ms() > t0);
    }
}
