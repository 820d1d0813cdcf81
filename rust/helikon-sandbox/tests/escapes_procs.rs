//! Process, signal and resource escapes: killing outside processes, fork bombs, detached
//! daemons, disk fill, runaway output and CPU, leaked descriptors, environment leaks and
//! reaching into a concurrent run.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{fixture, fixture_with, processes_of_uid, processes_with, refused, NOBODY};
use helikon_sandbox::Mode;

/// A process of the sandbox's uid running *outside* any sandbox.
fn same_uid_victim() -> Child {
    Command::new("sleep")
        .arg("30")
        .uid(NOBODY.0)
        .gid(NOBODY.1)
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

fn alive(c: &mut Child) -> bool {
    c.try_wait().unwrap().is_none()
}

#[test]
fn os_sandbox_cannot_signal_a_same_uid_process_outside() {
    let f = fixture(Mode::OsSandbox);
    let mut victim = same_uid_victim();
    let out = f.run(&format!("kill -9 {} && echo KILLED", victim.id()));
    std::thread::sleep(Duration::from_millis(50));
    let was_alive = alive(&mut victim);
    let _ = victim.kill();
    let _ = victim.wait();
    assert!(was_alive, "{out:#?}");
    assert!(refused(&out), "{out:#?}");
}

#[test]
fn host_mode_can_signal_a_same_uid_process_outside() {
    let f = fixture(Mode::Host);
    let mut victim = same_uid_victim();
    let out = f.run(&format!("kill -9 {} && echo KILLED", victim.id()));
    std::thread::sleep(Duration::from_millis(50));
    let was_alive = alive(&mut victim);
    let _ = victim.kill();
    let _ = victim.wait();
    assert!(!was_alive, "{out:#?}");
    assert!(out.stdout.contains("KILLED"));
}

#[test]
fn os_sandbox_kill_minus_one_spares_everything_outside() {
    let f = fixture(Mode::OsSandbox);
    let mut victim = same_uid_victim();
    let out = f.run("kill -9 -1; echo still-here");
    std::thread::sleep(Duration::from_millis(50));
    let was_alive = alive(&mut victim);
    let _ = victim.kill();
    let _ = victim.wait();
    assert!(was_alive, "{out:#?}");
    assert!(out.stdout.contains("still-here"), "{out:#?}");
}

#[test]
fn os_sandbox_fork_bomb_is_bounded_and_swept() {
    const UID: u32 = 61_001;
    let f = fixture_with(Mode::OsSandbox, |c| {
        c.run_as = Some((UID, UID));
        c.limits.max_processes = Some(40);
    });
    let started = Instant::now();
    let out = f
        .policy
        .run(
            "bomb() { bomb | bomb & }; bomb; sleep 1; echo done",
            Duration::from_secs(3),
        )
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(7), "{out:#?}");
    assert_eq!(
        processes_of_uid(UID),
        0,
        "processes survived the call: {out:#?}"
    );
    assert!(
        out.stderr.contains("fork") || out.stderr.contains("Resource temporarily unavailable"),
        "the process limit never refused a fork: {out:#?}"
    );
}

fn daemon_command(token: &str) -> String {
    format!(
        "setsid sleep {token} > /dev/null 2>&1 & \
         nohup sleep {token} > /dev/null 2>&1 & \
         (sleep {token} &) ; \
         sh -c 'sleep {token} &'; \
         echo started"
    )
}

fn assert_daemons_swept(mode: Mode) {
    let f = fixture(mode);
    let token = format!("1{}", common::Tcp::new().port());
    let started = Instant::now();
    let out = f.run(&daemon_command(&token));
    let took = started.elapsed();
    assert!(out.stdout.contains("started"), "{out:#?}");
    // The subshell's sleep holds stdout: without the sweep the call would stall to the timeout.
    assert!(took < Duration::from_secs(2), "took {took:?}");
    let left = processes_with(&format!("sleep {token}"));
    assert!(left.is_empty(), "daemons survived: {left:?}");
}

#[test]
fn os_sandbox_detached_daemons_never_survive_or_stall_the_call() {
    assert_daemons_swept(Mode::OsSandbox);
}

#[test]
fn host_mode_detached_daemons_never_survive_or_stall_the_call() {
    assert_daemons_swept(Mode::Host);
}

#[test]
fn os_sandbox_disk_fill_stops_at_the_file_size_limit() {
    let f = fixture_with(Mode::OsSandbox, |c| {
        c.limits.file_size_bytes = Some(1 << 20)
    });
    let out = f.run("head -c 5000000 /dev/zero > big; echo rc=$?");
    let size = std::fs::metadata(f.root.join("big")).unwrap().len();
    assert!(size <= 1 << 20, "file grew to {size}: {out:#?}");
    assert!(!out.stdout.contains("rc=0"), "{out:#?}");
}

#[test]
fn os_sandbox_runaway_output_is_capped_head_and_tail() {
    let f = fixture_with(Mode::OsSandbox, |c| c.output_cap_bytes = 10_000);
    let out =
        f.run("echo FIRST-LINE; head -c 20000000 /dev/zero | tr '\\0' a; echo; echo LAST-LINE");
    assert_eq!(out.exit_code, Some(0), "{out:#?}");
    assert!(out.truncated);
    assert!(out.stdout.len() < 10_000 + 300, "{}", out.stdout.len());
    assert!(out.stdout.starts_with("FIRST-LINE\n"));
    assert!(out.stdout.trim_end().ends_with("LAST-LINE"));
    assert!(out.stdout.contains("bytes omitted"));
}

#[test]
fn os_sandbox_endless_output_is_capped_and_killed_at_the_timeout() {
    let f = fixture(Mode::OsSandbox);
    let out = f.policy.run("yes", Duration::from_secs(1)).unwrap();
    assert!(out.timed_out);
    assert!(out.truncated);
    assert!(out.stdout.len() < 64 * 1024 + 300);
    assert!(out.duration_ms < 3000, "{}", out.duration_ms);
}

#[test]
fn os_sandbox_cpu_burn_is_stopped_by_the_cpu_limit() {
    let f = fixture_with(Mode::OsSandbox, |c| c.limits.cpu_seconds = Some(1));
    let out = f
        .policy
        .run("while :; do :; done", Duration::from_secs(10))
        .unwrap();
    assert!(!out.timed_out, "{out:#?}");
    assert!(matches!(out.signal, Some(9) | Some(24)), "{out:#?}");
    assert!(out.duration_ms < 5000);
}

#[test]
fn os_sandbox_memory_hog_hits_the_address_space_limit() {
    let f = fixture_with(Mode::OsSandbox, |c| {
        c.limits.address_space_bytes = Some(512 << 20)
    });
    let out = f.run(
        "python3 -c 'try:\n    b = bytearray(2 * 1024**3)\n    print(\"ALLOCATED\")\n\
         except MemoryError:\n    print(\"MEMORY-ERROR\")'",
    );
    assert!(out.stdout.contains("MEMORY-ERROR"), "{out:#?}");
}

#[test]
fn os_sandbox_timeout_kills_and_escalates_to_sigkill() {
    let f = fixture_with(Mode::OsSandbox, |c| c.kill_grace_ms = 100);
    let out = f.policy.run("sleep 30", Duration::from_secs(1)).unwrap();
    assert!(out.timed_out);
    assert_eq!(out.signal, Some(libc::SIGTERM));
    let out = f
        .policy
        .run(
            "trap '' TERM; sleep 30; echo unreachable",
            Duration::from_secs(1),
        )
        .unwrap();
    assert!(out.timed_out);
    assert_eq!(out.signal, Some(libc::SIGKILL), "{out:#?}");
    assert!(out.duration_ms < 3000);
}

fn env_leaks(mode: Mode) -> String {
    let f = fixture(mode);
    f.run("env").stdout
}

#[test]
fn os_sandbox_and_host_mode_scrub_the_environment() {
    for mode in [Mode::OsSandbox, Mode::Host] {
        let env = env_leaks(mode);
        assert!(!env.contains("CARGO"), "{mode:?}: {env}");
        assert!(!env.contains("HOME=/root"), "{mode:?}: {env}");
        assert!(env.contains("TMPDIR=/"), "{mode:?}: {env}");
        assert!(env.contains("LC_ALL=C"), "{mode:?}: {env}");
    }
}

#[test]
fn inherited_descriptors_are_closed_in_both_modes() {
    use rustix::fs::{open, Mode as M, OFlags};
    for mode in [Mode::OsSandbox, Mode::Host] {
        let f = fixture(mode);
        // Deliberately inheritable (no O_CLOEXEC), as a careless host library might leave it.
        let fd = open(&f.outside, OFlags::RDONLY | OFlags::DIRECTORY, M::empty()).unwrap();
        use std::os::fd::AsRawFd;
        let out = f.run(&common::probe(&format!(
            "print(os.listdir({}))",
            fd.as_raw_fd()
        )));
        assert!(!out.stdout.contains("secret.txt"), "{mode:?}: {out:#?}");
        assert!(
            out.stdout.contains(&format!("PROBE-ERR {}", libc::EBADF)),
            "{out:#?}"
        );
    }
}

#[test]
fn os_sandbox_run_cannot_read_a_concurrent_runs_temp_dir() {
    let f = fixture(Mode::OsSandbox);
    std::thread::scope(|s| {
        let a = s.spawn(|| {
            f.policy
                .run(
                    "echo RUN-A-SECRET > $TMPDIR/s; echo $TMPDIR > a-tmp; sleep 2",
                    Duration::from_secs(5),
                )
                .unwrap()
        });
        let path_file = f.root.join("a-tmp");
        let t0 = Instant::now();
        while !path_file.exists() && t0.elapsed() < Duration::from_secs(3) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let b = f.run("cat $(cat a-tmp)/s");
        assert!(!b.stdout.contains("RUN-A-SECRET"), "{b:#?}");
        assert!(refused(&b), "{b:#?}");
        let a = a.join().unwrap();
        assert_eq!(a.exit_code, Some(0), "{a:#?}");
    });
}

#[test]
fn os_sandbox_setuid_binaries_gain_nothing() {
    // no_new_privs: the setuid bit of mount/su is ignored, so they run as the sandbox uid.
    let f = fixture(Mode::OsSandbox);
    let out = f.run("mount -t tmpfs none /mnt 2>&1; su -c 'id -u' root 2>&1; id -u");
    assert!(!out.stdout.lines().any(|l| l.trim() == "0"), "{out:#?}");
    assert!(out.stdout.contains("65534"));
}

#[test]
fn every_call_gets_an_empty_private_temp_dir_whatever_the_last_one_did() {
    for mode in [Mode::OsSandbox, Mode::Host] {
        let f = fixture(mode);
        for leave_behind in [
            "echo secret > $TMPDIR/left; mkdir $TMPDIR/d",
            "touch $TMPDIR/.hidden",
            "chmod 777 $TMPDIR",
            "python3 -c 'import os; os.setxattr(os.environ[\"TMPDIR\"], \"user.k\", b\"v\")' \
             2>/dev/null; true",
            "true",
        ] {
            let first = f.run(&format!("{leave_behind}; echo $TMPDIR"));
            assert_eq!(first.exit_code, Some(0), "{mode:?}: {first:#?}");
            let next = f.run(
                "ls -A $TMPDIR | wc -l; stat -c %a $TMPDIR; \
                 python3 -c 'import os; print(len(os.listxattr(os.environ[\"TMPDIR\"])))'",
            );
            let lines: Vec<&str> = next.stdout.lines().map(str::trim).collect();
            assert_eq!(
                lines,
                ["0", "700", "0"],
                "{mode:?} after {leave_behind:?}: {next:#?}"
            );
        }
    }
}

#[test]
fn concurrent_calls_keep_their_own_output_and_leave_the_host_dumpable() {
    use rustix::process::{dumpable_behavior, DumpableBehavior};
    let f = fixture(Mode::OsSandbox);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..6)
            .map(|t| {
                let f = &f;
                s.spawn(move || {
                    for i in 0..8 {
                        let out = f.run(&format!("echo out-{t}-{i}; echo err-{t}-{i} >&2; id -u"));
                        assert_eq!(out.exit_code, Some(0), "{out:#?}");
                        assert_eq!(out.stdout, format!("out-{t}-{i}\n65534\n"), "{out:#?}");
                        assert_eq!(out.stderr, format!("err-{t}-{i}\n"), "{out:#?}");
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    });
    // The uid drop marks the shared address space non-dumpable while a child is between
    // clone and execve; the host's own flag is back once no call is in flight (other tests of
    // this binary may still have calls in flight, so wait for them).
    let t0 = Instant::now();
    while dumpable_behavior().unwrap() != DumpableBehavior::Dumpable {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the host stayed non-dumpable"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_command_and_the_calling_thread_keep_the_full_cpu_mask() {
    // The supervisor and the child are pinned to the caller's CPU only while they start.
    // (`available_parallelism` reads this thread's affinity mask, as `nproc` does.)
    let cpus = || std::thread::available_parallelism().unwrap().get();
    let before = cpus();
    for mode in [Mode::OsSandbox, Mode::Host] {
        let f = fixture(mode);
        let out = f.run("nproc");
        assert_eq!(out.stdout.trim(), before.to_string(), "{mode:?}: {out:#?}");
        assert_eq!(cpus(), before);
    }
}

#[test]
fn per_command_variables_override_the_configured_ones_for_that_command_only() {
    use std::collections::BTreeMap;
    let f = fixture(Mode::OsSandbox);
    let mut extra = BTreeMap::new();
    extra.insert("HTTP_PROXY".to_string(), "http://u1:t1@127.0.0.1:9".to_string());
    extra.insert("LC_ALL".to_string(), "C.UTF-8".to_string());
    let out = f
        .policy
        .run_with_env("echo \"$HTTP_PROXY|$LC_ALL\"", common::T, &extra)
        .unwrap();
    assert_eq!(out.stdout, "http://u1:t1@127.0.0.1:9|C.UTF-8\n", "{out:#?}");
    // The next command gets only the configured environment again.
    assert_eq!(f.run("echo \"$HTTP_PROXY|$LC_ALL\"").stdout, "|C\n");
    for (k, v) in [("", "x"), ("A=B", "x"), ("A\0", "x"), ("A", "x\0y")] {
        let mut bad = BTreeMap::new();
        bad.insert(k.to_string(), v.to_string());
        match f.policy.run_with_env("true", common::T, &bad) {
            Err(helikon_sandbox::SandboxError::Config(m)) => {
                assert!(m.contains("environment variable"), "{m}")
            }
            other => panic!("{k:?}={v:?}: expected Config, got {other:?}"),
        }
    }
}
