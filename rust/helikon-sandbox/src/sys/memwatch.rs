//! The resident-memory watchdog, run by the supervisor while the command runs.
//!
//! Used where no delegated cgroup v2 can hold a `memory.max` for the command: every
//! `interval_ms` S sums the resident set (`/proc/<pid>/stat` field 24) of every process in
//! the command's session (C calls `setsid`, so the session id is C's pid) and of every
//! orphan re-parented to S (a subreaper), and kills the command's process group when the sum
//! passes the ceiling. Resident memory, not address space, is what is bounded, so runtimes
//! that reserve large mappings (JVM heaps, Go arenas, V8 cages) are not affected. Between two
//! checks a command can overshoot by what it touches in one interval; a process that left
//! the session and has a parent other than S (a daemon's child after `setsid`) is not
//! counted. Raw system calls and stack buffers only.
use libc::pid_t;

use super::procfs;

/// The watchdog's state in S.
pub(super) struct MemWatch {
    limit_pages: u64,
    interval_ms: u64,
    next_ms: u64,
}

impl MemWatch {
    /// A watchdog for `limit_pages` (0: none) checking every `interval_ms`, first at
    /// `now_ms + interval_ms`.
    pub(super) fn new(limit_pages: u64, interval_ms: u64, now_ms: u64) -> Option<Self> {
        if limit_pages == 0 {
            return None;
        }
        let interval_ms = interval_ms.max(1);
        Some(Self {
            limit_pages,
            interval_ms,
            next_ms: now_ms.saturating_add(interval_ms),
        })
    }

    /// Milliseconds until the next check is due.
    pub(super) fn due_in(&self, now_ms: u64) -> u64 {
        self.next_ms.saturating_sub(now_ms)
    }

    /// Check if due: true when the command's resident memory is over the ceiling.
    pub(super) fn over(&mut self, now_ms: u64, session: pid_t, supervisor: pid_t) -> bool {
        if now_ms < self.next_ms {
            return false;
        }
        self.next_ms = now_ms.saturating_add(self.interval_ms);
        resident_pages(session, supervisor) > self.limit_pages
    }
}

/// Resident pages of the processes in `session` and of the direct children of `supervisor`.
pub(super) fn resident_pages(session: pid_t, supervisor: pid_t) -> u64 {
    let mut total = 0u64;
    procfs::for_each_pid(|pid| {
        if pid == supervisor {
            return;
        }
        if let Some(st) = procfs::stat(pid) {
            if st.session == session || st.ppid == supervisor {
                total = total.saturating_add(st.rss_pages);
            }
        }
    });
    total
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::sys::raw;

    #[test]
    fn counts_the_session_and_schedules_checks() {
        let me = raw::getpid();
        let sid = procfs::stat(me).map(|s| s.session).expect("own stat");
        // This test process is in session `sid`, so the sum is at least its own RSS.
        assert!(resident_pages(sid, -1) > 0);
        assert!(MemWatch::new(0, 10, 0).is_none());
        let mut w = MemWatch::new(1, 10, 100).expect("watch");
        assert_eq!(w.due_in(105), 5);
        assert!(!w.over(105, sid, -1), "not due yet");
        assert!(w.over(110, sid, -1), "one page is exceeded");
        assert_eq!(w.due_in(110), 10);
        let mut big = MemWatch::new(u64::MAX, 10, 0).expect("watch");
        assert!(!big.over(10, sid, -1));
    }
}
