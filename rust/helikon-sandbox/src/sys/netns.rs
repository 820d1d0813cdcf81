//! The child's side of egress through a private network namespace (see `crate::egress`).
//!
//! C creates a network namespace of its own (as root directly; otherwise from inside the
//! user namespace it entered first), brings its loopback interface up, listens on
//! `127.0.0.1:port` there and passes that listener to S over a socket pair S made for it.
//! The namespace then holds nothing but loopback and that listener. S accepts the command's
//! connections on it and hands each one to the host's proxy over the bridge (see
//! `supervisor`); the command never gets a descriptor of the host's network. Raw system
//! calls only; nothing allocates.
use libc::c_int;

use super::raw;

/// Bring the loopback interface of the calling task's network namespace up.
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

/// Make the namespace, listen on `127.0.0.1:port` in it and pass the listener over `to_s`.
pub(super) fn enter(port: u16, to_s: c_int) -> Result<(), c_int> {
    raw::unshare(libc::CLONE_NEWNET)?;
    loopback_up()?;
    // Non-blocking: S accepts in batches until EAGAIN.
    let flags = libc::SOCK_STREAM | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK;
    let fd = raw::socket(libc::AF_INET, flags)? as c_int;
    let r = raw::bind_loopback(fd, port)
        .and_then(|_| raw::listen(fd, 128))
        .and_then(|_| raw::send_fd(to_s, b"L", fd, libc::MSG_NOSIGNAL));
    let _ = raw::close(fd);
    let _ = raw::close(to_s);
    r.map(|_| ())
}
