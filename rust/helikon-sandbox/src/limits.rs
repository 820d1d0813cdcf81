//! Resource limits for one run, computed in the parent.
use std::time::Duration;

use libc::c_int;

use crate::config::Limits;

/// Count the tasks (threads included) whose real uid is `uid`, by reading `/proc/*/status`.
/// `RLIMIT_NPROC` is checked against this count, so the limit is set relative to it.
pub(crate) fn count_tasks(uid: u32) -> u64 {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let mut total = 0u64;
    for entry in dir.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        let mut real_uid = None;
        let mut threads = 1u64;
        for line in status.lines() {
            if let Some(rest) = line.strip_prefix("Uid:") {
                real_uid = rest
                    .split_whitespace()
                    .next()
                    .and_then(|s| s.parse::<u32>().ok());
            } else if let Some(rest) = line.strip_prefix("Threads:") {
                threads = rest.trim().parse().unwrap_or(1);
            }
        }
        if real_uid == Some(uid) {
            total = total.saturating_add(threads);
        }
    }
    total
}

fn hard_limit(resource: rustix::process::Resource) -> Option<u64> {
    rustix::process::getrlimit(resource).maximum
}

/// `(resource, value)` pairs for `setrlimit` (soft = hard). Values above the current hard
/// limit are lowered to it unless this process may raise limits (root).
pub(crate) fn rlimits(
    limits: &Limits,
    timeout: Duration,
    task_uid: u32,
    may_raise: bool,
) -> Vec<(c_int, u64)> {
    use rustix::process::Resource as R;
    let cpu = limits
        .cpu_seconds
        .unwrap_or_else(|| timeout.as_secs().saturating_add(1).saturating_add(5));
    let mut wanted: Vec<(c_int, R, u64)> = vec![
        (libc::RLIMIT_CPU as c_int, R::Cpu, cpu),
        (libc::RLIMIT_CORE as c_int, R::Core, 0),
    ];
    if let Some(v) = limits.file_size_bytes {
        wanted.push((libc::RLIMIT_FSIZE as c_int, R::Fsize, v));
    }
    if let Some(v) = limits.address_space_bytes {
        wanted.push((libc::RLIMIT_AS as c_int, R::As, v));
    }
    if let Some(v) = limits.open_files {
        wanted.push((libc::RLIMIT_NOFILE as c_int, R::Nofile, v));
    }
    if let Some(extra) = limits.max_processes {
        let v = count_tasks(task_uid).saturating_add(extra);
        wanted.push((libc::RLIMIT_NPROC as c_int, R::Nproc, v));
    }
    wanted
        .into_iter()
        .map(|(res, r, v)| {
            let v = match hard_limit(r) {
                Some(h) if !may_raise => v.min(h),
                _ => v,
            };
            (res, v)
        })
        .collect()
}
