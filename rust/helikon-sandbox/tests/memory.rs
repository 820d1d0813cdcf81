//! The default resident-memory ceiling: a command that keeps allocating is killed and the
//! outcome says why; a large address-space reservation that touches little memory runs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::Duration;

use common::{fixture, fixture_with, py};
use helikon_sandbox::{KilledReason, Mode, DEFAULT_MEMORY_BYTES};

const LONG: Duration = Duration::from_secs(60);

/// Allocates up to 4 GiB in 64 MiB steps, touching every page, printing progress.
fn grow() -> String {
    py("import sys\nb=[]\nfor i in range(64):\n b.append(bytearray(64<<20)); print(i, flush=True)\nprint(\"DONE\")")
}

/// Reserves 8 GiB of address space (like a JVM heap) and touches 100 MiB of it.
fn reserve() -> String {
    py("import mmap\nm=mmap.mmap(-1, 8<<30, flags=mmap.MAP_PRIVATE|mmap.MAP_ANONYMOUS|getattr(mmap,\"MAP_NORESERVE\",0x4000))\nfor off in range(0, 100<<20, 4096):\n m[off]=1\nprint(\"touched\", sum(m[o] for o in range(0, 100<<20, 4096)))")
}

#[test]
fn default_ceiling_kills_a_growing_command_in_both_modes() {
    assert_eq!(DEFAULT_MEMORY_BYTES, 2 << 30);
    for mode in [Mode::OsSandbox, Mode::Host] {
        let f = fixture(mode);
        let out = f.policy.run(&grow(), LONG).unwrap();
        assert_eq!(
            out.killed_reason,
            Some(KilledReason::Memory),
            "{mode:?}: {out:?}"
        );
        assert_eq!(out.signal, Some(libc::SIGKILL), "{mode:?}");
        assert!(!out.stdout.contains("DONE"), "{mode:?}");
        assert!(!out.timed_out);
        assert!(
            out.stderr
                .contains("killed: the command's resident memory exceeded the ceiling of 2.0 GiB"),
            "{mode:?}: {}",
            out.stderr
        );
        // It got past 1 GiB (16 steps) before the 2 GiB ceiling stopped it, never to the end.
        let steps = out.stdout.lines().count();
        assert!((16..64).contains(&steps), "{mode:?}: {steps} steps");
    }
}

#[test]
fn a_lower_ceiling_is_honoured_and_children_count() {
    let f = fixture_with(Mode::OsSandbox, |c| c.limits.memory_bytes = Some(256 << 20));
    // Two processes of 160 MiB each: neither alone passes 256 MiB, together they do.
    let hold = py("import time\nb=bytearray(160<<20)\nprint(\"held\", flush=True)\ntime.sleep(5)");
    let out = f
        .policy
        .run(&format!("{hold} & {hold} & wait; echo END"), LONG)
        .unwrap();
    assert_eq!(out.killed_reason, Some(KilledReason::Memory), "{out:?}");
    assert!(!out.stdout.contains("END"));
    assert!(out.stderr.contains("ceiling of 256 MiB"), "{}", out.stderr);
}

#[test]
fn address_space_reservation_is_not_memory() {
    for mode in [Mode::OsSandbox, Mode::Host] {
        let f = fixture(mode);
        let out = f.policy.run(&reserve(), LONG).unwrap();
        assert_eq!(out.exit_code, Some(0), "{mode:?}: {out:?}");
        assert_eq!(out.stdout, "touched 25600\n");
        assert_eq!(out.killed_reason, None);
    }
}

#[test]
fn no_ceiling_when_disabled_and_timeout_reason() {
    let f = fixture_with(Mode::OsSandbox, |c| c.limits.memory_bytes = None);
    let out = f
        .policy
        .run(&py("b=bytearray(300<<20)\nprint(len(b))"), LONG)
        .unwrap();
    assert_eq!(out.stdout, format!("{}\n", 300 << 20));
    assert_eq!(out.killed_reason, None);
    let out = f.policy.run("sleep 5", Duration::from_millis(200)).unwrap();
    assert!(out.timed_out);
    assert_eq!(out.killed_reason, Some(KilledReason::Timeout));
}

#[test]
fn zero_ceiling_is_a_config_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = common::config(dir.path(), Mode::Host);
    cfg.limits.memory_bytes = Some(0);
    let err = helikon_sandbox::SandboxPolicy::build(cfg).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid sandbox configuration: limits.memory_bytes must be > 0 (null disables the ceiling)"
    );
}
