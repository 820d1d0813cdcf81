//! Host side of the egress namespace: a private network namespace that holds only a loopback
//! interface and one listening TCP socket on `127.0.0.1`, created once per policy.
//!
//! * As root: a short-lived thread `unshare(CLONE_NEWNET)`s itself (a network namespace is
//!   per task, so the rest of the host is untouched), brings `lo` up, binds the listener and
//!   opens `/proc/thread-self/ns/net`; then it ends. The namespace lives on through those two
//!   descriptors. The child enters it with `setns` before it drops root.
//! * Not root: not available. Entering a network namespace needs `CAP_SYS_ADMIN` over it,
//!   which an unprivileged process only has inside a user namespace of its own, and the
//!   kernel refuses `setns`/`unshare` of a user namespace to a process that shares its
//!   address space (`mm_users > 1`), as the child does until `execve` (see the module doc
//!   of `sys`). The policy then uses Landlock TCP port rules instead (see `egress`).
//!
//! The listener is handed to the host's egress proxy, which accepts the command's
//! connections from inside the namespace and opens its own from the host's namespace.
use std::io;
use std::net::TcpListener;
use std::os::fd::OwnedFd;

use libc::c_int;

use super::raw;

/// A private network namespace with the proxy's listener inside.
#[derive(Debug)]
pub(crate) struct NetNamespace {
    /// `/proc/.../ns/net` of the namespace.
    pub net: OwnedFd,
    /// The listening socket on `127.0.0.1:port` inside the namespace.
    pub listener: OwnedFd,
    /// Its port.
    pub port: u16,
}

fn last_os_error() -> io::Error {
    io::Error::last_os_error()
}

/// Bring the loopback interface of the calling task's network namespace up (raw calls only).
fn loopback_up() -> raw::R {
    let fd = raw::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC)? as c_int;
    // SAFETY: ifreq is plain old data; all-zero is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(b"lo\0") {
        *dst = *src as libc::c_char;
    }
    let r = raw::ioctl_ptr(
        fd,
        libc::SIOCGIFFLAGS as _,
        &mut req as *mut libc::ifreq as usize,
    )
    .and_then(|_| {
        // SAFETY: SIOCGIFFLAGS filled the flags member of the union.
        unsafe { req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short };
        raw::ioctl_ptr(
            fd,
            libc::SIOCSIFFLAGS as _,
            &mut req as *mut libc::ifreq as usize,
        )
    });
    let _ = raw::close(fd);
    r
}

/// Bind a listener on 127.0.0.1:0 in the current task's namespace.
fn bind_listener() -> io::Result<(OwnedFd, u16)> {
    let listener = TcpListener::bind(("127.0.0.1", 0))?;
    let port = listener.local_addr()?.port();
    Ok((OwnedFd::from(listener), port))
}

/// Create the namespace as root (needs `CAP_SYS_ADMIN`).
pub(crate) fn create_as_root() -> io::Result<NetNamespace> {
    let worker = std::thread::Builder::new()
        .name("helikon-netns".into())
        .spawn(|| -> io::Result<NetNamespace> {
            // SAFETY: unshare only changes this thread's network namespace; the thread ends
            // right after, so no other host code ever runs in the new namespace.
            if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
                return Err(last_os_error());
            }
            loopback_up().map_err(io::Error::from_raw_os_error)?;
            let net = std::fs::File::open("/proc/thread-self/ns/net")?;
            let (listener, port) = bind_listener()?;
            Ok(NetNamespace {
                net: OwnedFd::from(net),
                listener,
                port,
            })
        })?;
    worker
        .join()
        .map_err(|_| io::Error::other("the namespace thread panicked"))?
}
