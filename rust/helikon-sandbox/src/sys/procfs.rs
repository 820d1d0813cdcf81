//! Reading `/proc` from the supervisor: process ids and `/proc/<pid>/stat` fields, with raw
//! system calls and fixed stack buffers (S may not allocate; see the module documentation).
use libc::{c_int, pid_t};

use super::raw;

/// Call `f` with the pid of every numeric entry of `/proc` (processes, not threads).
pub(super) fn for_each_pid(mut f: impl FnMut(pid_t)) {
    let Ok(dir) = raw::open(
        b"/proc\0",
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
    ) else {
        return;
    };
    let dir = dir as c_int;
    let mut buf = [0u8; 8192];
    loop {
        let n = match raw::getdents64(dir, &mut buf) {
            Ok(n) if n > 0 => n.min(buf.len()),
            _ => break,
        };
        let mut off = 0usize;
        // struct linux_dirent64 { u64 ino; i64 off; u16 reclen; u8 type; char name[]; }
        while off.saturating_add(19) < n {
            let reclen = match (buf.get(off + 16), buf.get(off + 17)) {
                (Some(&a), Some(&b)) => u16::from_ne_bytes([a, b]) as usize,
                _ => break,
            };
            if reclen == 0 {
                break;
            }
            let rec_end = off.saturating_add(reclen).min(n);
            let name = buf.get(off + 19..rec_end).unwrap_or(&[]);
            if let Some(pid) = parse_pid(name) {
                f(pid);
            }
            off = off.saturating_add(reclen);
        }
    }
    let _ = raw::close(dir);
}

/// A NUL-terminated run of digits as a pid.
pub(super) fn parse_pid(name: &[u8]) -> Option<pid_t> {
    let mut pid: i64 = 0;
    let mut digits = 0;
    for &c in name {
        if c == 0 {
            break;
        }
        if !c.is_ascii_digit() || digits > 9 {
            return None;
        }
        pid = pid.wrapping_mul(10).wrapping_add(i64::from(c - b'0'));
        digits += 1;
    }
    if digits == 0 {
        return None;
    }
    pid_t::try_from(pid).ok()
}

/// The fields of `/proc/<pid>/stat` the supervisor uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stat {
    /// Parent pid (field 4).
    pub ppid: pid_t,
    /// Session id (field 6).
    pub session: pid_t,
    /// Resident set size in pages (field 24).
    pub rss_pages: u64,
}

/// `/proc/<pid>/stat` as a NUL-terminated path in `path`; returns its length with the NUL.
fn stat_path(pid: pid_t, path: &mut [u8; 32]) -> usize {
    let mut p = 0usize;
    let mut put = |b: u8, p: &mut usize| {
        if let Some(slot) = path.get_mut(*p) {
            *slot = b;
        }
        *p += 1;
    };
    for &b in b"/proc/" {
        put(b, &mut p);
    }
    let mut digits = [0u8; 12];
    let mut nd = 0usize;
    let mut v = pid as u32;
    loop {
        if let Some(d) = digits.get_mut(nd) {
            *d = b'0' + (v % 10) as u8;
        }
        nd += 1;
        v /= 10;
        if v == 0 || nd >= digits.len() {
            break;
        }
    }
    while nd > 0 {
        nd -= 1;
        put(digits.get(nd).copied().unwrap_or(b'0'), &mut p);
    }
    for &b in b"/stat\0" {
        put(b, &mut p);
    }
    p.min(32)
}

/// Parse a `stat` line: "pid (comm) S ppid pgrp session ... rss ...". `comm` may contain
/// `)` and spaces, so fields are counted from the last `)`.
pub(super) fn parse_stat(data: &[u8]) -> Option<Stat> {
    let close = data.iter().rposition(|&c| c == b')')?;
    let rest = data.get(close.saturating_add(2)..)?;
    // Fields after comm, 0-based: 0 state, 1 ppid, 3 session, 21 rss.
    let mut ppid = None;
    let mut session = None;
    let mut rss = None;
    for (i, field) in rest.split(|&c| c == b' ').enumerate() {
        match i {
            1 => ppid = number(field),
            3 => session = number(field),
            21 => {
                rss = number(field);
                break;
            }
            _ => {}
        }
    }
    Some(Stat {
        ppid: pid_t::try_from(ppid?).ok()?,
        session: pid_t::try_from(session?).ok()?,
        rss_pages: u64::try_from(rss?).unwrap_or(0),
    })
}

/// A decimal number, possibly negative (rss can read as a small negative on some kernels).
fn number(field: &[u8]) -> Option<i64> {
    let (neg, digits) = match field.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, field),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut v: i64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.wrapping_mul(10).wrapping_add(i64::from(c - b'0'));
    }
    Some(if neg { -v } else { v })
}

/// Read and parse `/proc/<pid>/stat` (`None` when the process is gone or unreadable).
pub(super) fn stat(pid: pid_t) -> Option<Stat> {
    let mut path = [0u8; 32];
    let len = stat_path(pid, &mut path);
    let fd = raw::open(path.get(..len)?, libc::O_RDONLY | libc::O_CLOEXEC).ok()? as c_int;
    let mut buf = [0u8; 1024];
    let n = raw::read(fd, &mut buf).unwrap_or(0);
    let _ = raw::close(fd);
    parse_stat(buf.get(..n.min(buf.len()))?)
}

/// The parent pid of `pid`, or -1.
pub(super) fn parent_of(pid: pid_t) -> pid_t {
    stat(pid).map_or(-1, |s| s.ppid)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn proc_parsing_helpers() {
        assert_eq!(parse_pid(b"1234\0\0"), Some(1234));
        assert_eq!(parse_pid(b"self\0"), None);
        assert_eq!(parse_pid(b"\0"), None);
        assert_eq!(parent_of(raw::getpid()), raw::getppid());
    }

    #[test]
    fn stat_fields_counted_from_the_last_paren() {
        let line = b"42 (a) b (c) S 7 42 9 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 5 1000 321 \
                     18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n";
        assert_eq!(
            parse_stat(line),
            Some(Stat {
                ppid: 7,
                session: 9,
                rss_pages: 321
            })
        );
        assert_eq!(parse_stat(b"42 (x) S 7"), None);
        assert_eq!(parse_stat(b"garbage"), None);
    }

    #[test]
    fn own_stat_is_read() {
        let s = stat(raw::getpid()).expect("own stat");
        assert_eq!(s.ppid, raw::getppid());
        assert!(s.rss_pages > 0);
    }
}
