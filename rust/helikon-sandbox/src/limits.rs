//! Resource limits for one run, computed in the parent.
use std::time::Duration;

use libc::c_int;

use crate::config::Limits;

fn hard_limit(resource: rustix::process::Resource) -> Option<u64> {
    rustix::process::getrlimit(resource).maximum
}

/// `(resource, value)` pairs for `setrlimit` (soft = hard). Values above the current hard
/// limit are lowered to it unless this process may raise limits (root). `running_tasks` is
/// asked (only when `max_processes` is set) for the sandbox uid's current task count, which
/// `RLIMIT_NPROC` is relative to (see [`crate::nproc`]).
pub(crate) fn rlimits(
    limits: &Limits,
    timeout: Duration,
    running_tasks: impl FnOnce() -> u64,
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
        let v = running_tasks().saturating_add(extra);
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
