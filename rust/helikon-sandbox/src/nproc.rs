//! How many tasks the sandbox uid already runs, for `RLIMIT_NPROC` (limit = count + margin).
//!
//! The kernel checks `RLIMIT_NPROC` at `fork` against the number of tasks (threads included)
//! whose *real* uid is the caller's, and there is no interface that reports that number: it is
//! counted from `/proc/<pid>/status`, one file per process on the host. That scan used to run
//! on every call (a third of a call's cost on a quiet machine, more on a busy one). Now the
//! count is cached per policy and reused while it provably still holds:
//!
//! * every process counted is pinned with a pidfd (so a recycled pid cannot pass for it); one
//!   `poll` over those descriptors tells whether any of them has exited, and the task count of
//!   each multi-threaded one is re-read from the link count of `/proc/<pid>/task`;
//! * if any counted process exited or lost threads, the next call rescans. A count that is
//!   too *high* would let the sandbox start more than the margin; these checks make sure that
//!   never happens through exits. Growth of the uid's tasks (new processes) only makes the
//!   limit tighter, never looser, so it does not need a check;
//! * the cache is also dropped after [`REFRESH`] (catching the rare process that changes its
//!   real uid without exiting) and when the uid runs more than [`TRACK_MAX`] processes (then
//!   every call scans, as before, so no descriptor budget is spent on a busy uid).
//!
//! For uid 0 in the initial user namespace the kernel never enforces the limit, so there the
//! cache is kept for [`REFRESH`] without the pidfd checks.
//!
//! The scan itself reads each `status` file with one `read` into a stack buffer (no
//! allocation per process) and pins matching processes before re-reading their status.
use std::ffi::CStr;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::fs::{openat, statx, AtFlags, Mode, OFlags, StatxFlags, CWD};
use rustix::process::{pidfd_open, Pid, PidfdFlags};

/// Longest time a cached count is trusted.
pub(crate) const REFRESH: Duration = Duration::from_secs(1);
/// Most processes of the uid that are tracked with pidfds; above it every call rescans.
pub(crate) const TRACK_MAX: usize = 64;

/// One counted process, pinned.
struct Tracked {
    pidfd: OwnedFd,
    pid: i32,
    threads: u64,
}

struct Snapshot {
    total: u64,
    taken: Instant,
    /// `None`: too many processes to track; the snapshot is not reused.
    tracked: Option<Vec<Tracked>>,
}

/// The per-policy count of the sandbox uid's tasks.
pub(crate) struct NprocCache {
    uid: u32,
    /// The kernel ignores `RLIMIT_NPROC` for this uid (root in the initial user namespace).
    unenforced: bool,
    state: Mutex<Option<Snapshot>>,
}

impl std::fmt::Debug for NprocCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NprocCache")
            .field("uid", &self.uid)
            .finish_non_exhaustive()
    }
}

fn in_initial_user_namespace() -> bool {
    std::fs::read_to_string("/proc/self/uid_map").is_ok_and(|m| {
        let f: Vec<&str> = m.split_whitespace().collect();
        f == ["0", "0", "4294967295"]
    })
}

impl NprocCache {
    /// A cache for tasks whose real uid is `uid`.
    pub(crate) fn new(uid: u32) -> Self {
        Self {
            uid,
            unenforced: uid == 0 && in_initial_user_namespace(),
            state: Mutex::new(None),
        }
    }

    /// The uid's current task count (cached while it provably holds; see the module doc).
    pub(crate) fn count(&self) -> u64 {
        let mut guard = match self.state.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(s) = guard.as_ref() {
            if self.still_valid(s) {
                return s.total;
            }
        }
        let s = scan(self.uid, !self.unenforced);
        let total = s.total;
        *guard = Some(s);
        total
    }

    fn still_valid(&self, s: &Snapshot) -> bool {
        if s.taken.elapsed() >= REFRESH {
            return false;
        }
        if self.unenforced {
            return true;
        }
        let Some(tracked) = &s.tracked else {
            return false;
        };
        if tracked.is_empty() {
            return true;
        }
        // Any pinned process exited (its pidfd turns readable)?
        let mut fds: Vec<PollFd<'_>> = tracked
            .iter()
            .map(|t| PollFd::new(&t.pidfd, PollFlags::IN))
            .collect();
        let zero = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        match poll(&mut fds, Some(&zero)) {
            Ok(0) => {}
            _ => return false,
        }
        // Fewer threads in a multi-threaded one?
        tracked
            .iter()
            .filter(|t| t.threads > 1)
            .all(|t| threads_now(t.pid).is_some_and(|n| n >= t.threads))
    }
}

/// `/proc/<pid>/...` into `buf` as a NUL-terminated path.
fn proc_path<'a>(buf: &'a mut [u8; 48], pid: i32, tail: &[u8]) -> Option<&'a CStr> {
    let mut digits = [0u8; 12];
    let mut n = 0usize;
    let mut v = u32::try_from(pid).ok()?;
    loop {
        *digits.get_mut(n)? = b'0' + (v % 10) as u8;
        n += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let mut len = 0usize;
    for b in b"/proc/".iter().chain(digits[..n].iter().rev()).chain(tail) {
        *buf.get_mut(len)? = *b;
        len += 1;
    }
    *buf.get_mut(len)? = 0;
    CStr::from_bytes_with_nul(buf.get(..=len)?).ok()
}

/// The task count of `pid` from the link count of `/proc/<pid>/task` (2 + threads).
fn threads_now(pid: i32) -> Option<u64> {
    let mut buf = [0u8; 48];
    let path = proc_path(&mut buf, pid, b"/task")?;
    let st = statx(CWD, path, AtFlags::empty(), StatxFlags::NLINK).ok()?;
    u64::from(st.stx_nlink).checked_sub(2)
}

/// `(real uid, threads)` from `/proc/<pid>/status`.
fn status(pid: i32) -> Option<(u32, u64)> {
    let mut path_buf = [0u8; 48];
    let path = proc_path(&mut path_buf, pid, b"/status")?;
    let fd = openat(CWD, path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()).ok()?;
    let mut buf = [0u8; 4096];
    let mut len = 0usize;
    while len < buf.len() {
        match rustix::io::read(&fd, &mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => return None,
        }
    }
    parse_status(buf.get(..len)?)
}

/// The real uid (first field of `Uid:`) and `Threads:` of a status file.
pub(crate) fn parse_status(text: &[u8]) -> Option<(u32, u64)> {
    let mut uid = None;
    let mut threads = None;
    for line in text.split(|&b| b == b'\n') {
        if let Some(rest) = line.strip_prefix(b"Uid:") {
            uid = first_number(rest).and_then(|v| u32::try_from(v).ok());
        } else if let Some(rest) = line.strip_prefix(b"Threads:") {
            threads = first_number(rest);
        }
        if uid.is_some() && threads.is_some() {
            break;
        }
    }
    Some((uid?, threads.unwrap_or(1)))
}

fn first_number(s: &[u8]) -> Option<u64> {
    let s = s.trim_ascii_start();
    let end = s
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(s.len());
    std::str::from_utf8(s.get(..end)?).ok()?.parse().ok()
}

/// Count the tasks whose real uid is `uid`, pinning the processes while there are few (and
/// `track` is set).
fn scan(uid: u32, track: bool) -> Snapshot {
    let taken = Instant::now();
    let mut total = 0u64;
    let mut tracked: Option<Vec<Tracked>> = track.then(Vec::new);
    let Ok(dir) = openat(
        CWD,
        c"/proc",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return Snapshot {
            total,
            taken,
            tracked: None,
        };
    };
    let Ok(mut entries) = rustix::fs::Dir::read_from(dir.as_fd()) else {
        return Snapshot {
            total,
            taken,
            tracked: None,
        };
    };
    while let Some(Ok(e)) = entries.read() {
        let name = e.file_name().to_bytes();
        if name.is_empty() || !name.iter().all(u8::is_ascii_digit) {
            continue;
        }
        let Some(pid) = std::str::from_utf8(name)
            .ok()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Some((ruid, threads)) = status(pid) else {
            continue;
        };
        if ruid != uid {
            continue;
        }
        if let Some(list) = tracked.as_mut() {
            if list.len() >= TRACK_MAX {
                tracked = None;
            } else if let Some(t) = pin(pid, uid) {
                total = total.saturating_add(t.threads);
                list.push(t);
                continue;
            } else {
                // Gone (or no longer this uid's) between the two reads: not counted.
                continue;
            }
        }
        total = total.saturating_add(threads);
    }
    Snapshot {
        total,
        taken,
        tracked,
    }
}

/// Pin `pid` with a pidfd and re-read its status, so the numbers belong to the pinned
/// process (a pid recycled in between fails the uid check or the liveness check).
fn pin(pid: i32, uid: u32) -> Option<Tracked> {
    let pidfd = pidfd_open(Pid::from_raw(pid)?, PidfdFlags::empty()).ok()?;
    let (ruid, threads) = status(pid)?;
    let mut fds = [PollFd::new(&pidfd, PollFlags::IN)];
    let zero = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    if ruid != uid || !matches!(poll(&mut fds, Some(&zero)), Ok(0)) {
        return None;
    }
    Some(Tracked {
        pidfd,
        pid,
        threads,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn parses_real_uid_and_threads() {
        let s = b"Name:\tx\nUid:\t1000\t0\t0\t0\nGid:\t5\nThreads:\t7\n";
        assert_eq!(parse_status(s), Some((1000, 7)));
        assert_eq!(parse_status(b"Threads:\t2\n"), None);
        assert_eq!(parse_status(b"Uid:\t42\t42\t42\t42\n"), Some((42, 1)));
    }

    #[test]
    fn proc_paths_are_built_without_allocation() {
        let mut b = [0u8; 48];
        assert_eq!(
            proc_path(&mut b, 12345, b"/status").unwrap().to_bytes(),
            b"/proc/12345/status"
        );
        assert!(proc_path(&mut b, -1, b"/status").is_none());
    }

    #[test]
    fn this_process_is_counted_with_its_threads() {
        let me = rustix::process::getuid().as_raw();
        let (uid, threads) = status(std::process::id() as i32).unwrap();
        assert_eq!(uid, me);
        assert!(threads >= 1);
        assert!(threads_now(std::process::id() as i32).unwrap() >= 1);
        let s = scan(me, true);
        assert!(s.total >= 1);
        // This process is pinned (or the uid runs too many processes to pin).
        if let Some(t) = &s.tracked {
            assert!(t.iter().any(|t| t.pid == std::process::id() as i32));
        }
    }

    #[test]
    fn a_cached_count_is_reused_until_a_counted_process_exits() {
        use std::os::unix::process::CommandExt;
        // As root, a uid of its own (so nothing else runs under it); otherwise this uid.
        let me = rustix::process::getuid().as_raw();
        let uid = if me == 0 { 61_077 } else { me };
        let cache = NprocCache::new(uid);
        let before = cache.count();
        let mut cmd = std::process::Command::new("sleep");
        cmd.arg("5");
        if me == 0 {
            cmd.uid(uid).gid(uid);
        }
        let mut child = cmd.spawn().unwrap();
        // Wait until the child runs as `uid` (after its setuid) and drop the cache.
        let t0 = Instant::now();
        while status(child.id() as i32).map(|s| s.0) != Some(uid) {
            assert!(t0.elapsed() < Duration::from_secs(5));
            std::thread::sleep(Duration::from_millis(5));
        }
        *cache.state.lock().unwrap() = None;
        let with = cache.count();
        assert!(with > before || me != 0, "{with} {before}");
        let tracked = cache
            .state
            .lock()
            .unwrap()
            .as_ref()
            .unwrap()
            .tracked
            .is_some();
        if tracked {
            let snap = cache.state.lock().unwrap();
            assert!(cache.still_valid(snap.as_ref().unwrap()));
        }
        child.kill().unwrap();
        child.wait().unwrap();
        if tracked {
            let snap = cache.state.lock().unwrap();
            assert!(!cache.still_valid(snap.as_ref().unwrap()));
        }
        if me == 0 {
            assert_eq!(cache.count(), before);
        }
    }
}
