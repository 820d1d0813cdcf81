//! `SandboxPolicy::start_tagged`: the command runs while the caller goes on; its pidfd turns
//! readable when it is done and `finish` returns the outcome; a run dropped unfinished is
//! killed.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::os::fd::BorrowedFd;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::Fixture;
use helikon_sandbox::{Mode, SandboxPolicy};
use rustix::event::{PollFd, PollFlags, Timespec};

fn policy(mode: Mode) -> (tempfile::TempDir, PathBuf, Arc<SandboxPolicy>) {
    let Fixture {
        tmp, root, policy, ..
    } = common::fixture(mode);
    (tmp, root, Arc::new(policy))
}

/// Wait until `fd` is readable, at most `ms`; true when it is.
fn readable(fd: BorrowedFd<'_>, ms: i64) -> bool {
    let mut fds = [PollFd::new(&fd, PollFlags::IN)];
    let t = Timespec {
        tv_sec: ms / 1000,
        tv_nsec: (ms % 1000) * 1_000_000,
    };
    rustix::event::poll(&mut fds, Some(&t)).unwrap() == 1
}

#[test]
fn a_started_command_runs_while_the_caller_goes_on() {
    for mode in [Mode::OsSandbox, Mode::Host] {
        let (_tmp, _root, p) = policy(mode);
        let env = BTreeMap::from([("GREETING".to_string(), "hi".to_string())]);
        let mut run = p
            .start_tagged(
                "read x < /dev/null; sleep 0.3; echo \"$GREETING\"; exit 3",
                common::T,
                &env,
                0,
            )
            .unwrap();
        assert!(run.supervisor_pid().is_some_and(|pid| pid > 0));
        let fd = run.pidfd().expect("pidfd on this kernel");
        // Not done yet: the caller is free meanwhile.
        assert!(!readable(fd, 50), "{mode:?}");
        assert!(readable(fd, 5_000), "{mode:?}");
        let out = run.finish().unwrap();
        assert_eq!(
            (out.exit_code, out.stdout.as_str()),
            (Some(3), "hi\n"),
            "{mode:?}"
        );
        assert!(run.pidfd().is_none() && run.supervisor_pid().is_none());
        let again = run.finish().unwrap_err().to_string();
        assert!(again.contains("already finished"), "{again}");
    }
}

#[test]
fn several_runs_at_once_finish_in_any_order() {
    let (_tmp, _root, p) = policy(Mode::OsSandbox);
    let none = BTreeMap::new();
    let mut slow = p
        .start_tagged("sleep 0.4; echo slow", common::T, &none, 0)
        .unwrap();
    let mut fast = p.start_tagged("echo fast", common::T, &none, 0).unwrap();
    assert_eq!(fast.finish().unwrap().stdout, "fast\n");
    assert_eq!(slow.finish().unwrap().stdout, "slow\n");
}

#[test]
fn a_run_dropped_unfinished_is_killed() {
    let (_tmp, root, p) = policy(Mode::OsSandbox);
    let marker = root.join("late");
    let run = p
        .start_tagged("sleep 1; touch late", common::T, &BTreeMap::new(), 0)
        .unwrap();
    let t0 = Instant::now();
    drop(run);
    assert!(t0.elapsed() < Duration::from_millis(900));
    std::thread::sleep(Duration::from_millis(1_500));
    assert!(!marker.exists());
    // The policy still works after.
    assert_eq!(p.run("echo ok", common::T).unwrap().stdout, "ok\n");
}
