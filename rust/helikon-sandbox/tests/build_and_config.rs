//! Building a policy: configuration errors, fail-closed kernel planning, guarantees, options.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::Duration;

use common::{fixture, fixture_with, probe, refused, NOBODY};
use helikon_sandbox::probe::{plan, probe as probe_kernel};
use helikon_sandbox::{
    Isolation, KernelFeatures, Mode, SandboxConfig, SandboxError, SandboxPolicy, UnixSockets,
    Weakening,
};

fn features(abi: i32) -> KernelFeatures {
    KernelFeatures {
        landlock_abi: abi,
        landlock_missing: None,
        landlock_errata: 0,
        seccomp: true,
        arch_supported: true,
        kernel_release: "test".into(),
    }
}

fn cfg() -> SandboxConfig {
    let mut c = SandboxConfig::new("/work/x");
    c.run_as = Some(NOBODY);
    c
}

fn unsupported(r: Result<impl std::fmt::Debug, SandboxError>) -> String {
    match r {
        Err(SandboxError::Unsupported(m)) => m,
        other => panic!("expected Unsupported, got {other:?}"),
    }
}

#[test]
fn this_kernel_offers_what_the_tests_need() {
    let k = probe_kernel();
    assert!(k.landlock_abi >= 6, "{k:?}");
    assert!(k.seccomp);
    let e = plan(&cfg(), &k).unwrap();
    assert!(e.tcp_rules && e.scope_signal && e.scope_abstract_unix && !e.deny_path_truncate);
}

#[test]
fn missing_landlock_is_refused_naming_the_kernel() {
    let mut k = features(0);
    k.landlock_missing =
        Some("disabled at boot (add 'landlock' to the lsm= kernel parameter)".into());
    let m = unsupported(plan(&cfg(), &k));
    assert!(
        m.contains("Linux 5.13") && m.contains("disabled at boot"),
        "{m}"
    );
}

#[test]
fn missing_seccomp_is_refused() {
    let mut k = features(7);
    k.seccomp = false;
    assert!(unsupported(plan(&cfg(), &k)).contains("seccomp"));
}

#[test]
fn abi_below_6_is_refused_unless_signal_scope_is_waived() {
    let m = unsupported(plan(&cfg(), &features(5)));
    assert!(
        m.contains("Landlock ABI 6 (Linux 6.12)") && m.contains("this kernel has ABI 5"),
        "{m}"
    );
    assert!(m.contains("allow_weaker=[\"signal_scope\"]"), "{m}");
    let mut c = cfg();
    c.allow_weaker = vec![Weakening::SignalScope];
    let e = plan(&c, &features(5)).unwrap();
    assert_eq!(e.waived, vec!["signal_scope".to_string()]);
    assert!(e.tcp_rules && !e.scope_signal && !e.scope_abstract_unix);
}

#[test]
fn abstract_socket_scope_is_required_once_unix_connect_is_allowed() {
    let mut c = cfg();
    c.allow_weaker = vec![Weakening::SignalScope];
    c.unix_sockets = UnixSockets::Connect;
    let m = unsupported(plan(&c, &features(5)));
    assert!(m.contains("abstract unix sockets"), "{m}");
    c.allow_weaker.push(Weakening::AbstractUnixScope);
    let e = plan(&c, &features(5)).unwrap();
    assert_eq!(e.waived.len(), 2);
    assert!(e.notes.iter().any(|n| n.contains("RESOLVE_UNIX")));
}

#[test]
fn old_abis_fall_back_to_seccomp_for_tcp_and_truncate() {
    let mut c = cfg();
    c.allow_weaker = vec![Weakening::SignalScope];
    let e = plan(&c, &features(2)).unwrap();
    assert!(!e.tcp_rules && e.deny_path_truncate);
    assert!(e.notes.iter().any(|n| n.contains("seccomp alone")));
    let e = plan(&c, &features(3)).unwrap();
    assert!(!e.deny_path_truncate);
}

#[test]
fn root_without_run_as_is_refused() {
    let f = fixture(Mode::OsSandbox);
    let mut c = SandboxConfig::new(&f.root);
    c.run_as = None;
    let m = unsupported(SandboxPolicy::build(c));
    assert!(m.contains("running as root requires run_as"), "{m}");
}

#[test]
fn bad_configs_are_config_errors() {
    let cases = [
        r#"{"root": "relative/path"}"#,
        r#"{"root": "/"}"#,
        r#"{"root": "/tmp", "unknown_field": 1}"#,
        r#"{"root": "/tmp", "run_as": [0, 0]}"#,
        r#"{"root": "/tmp", "read_paths": ["/"]}"#,
        r#"{"root": "/tmp", "mode": "docker"}"#,
        r#"{"root": "/tmp", "limits": {"cpu": 1}}"#,
        r#"{"root": "/tmp", "output_cap_bytes": 0}"#,
        r#"{"root": "/tmp", "env": {"A=B": "x"}}"#,
        r#"not json"#,
    ];
    for text in cases {
        match SandboxPolicy::from_json(text) {
            Err(SandboxError::Config(_)) => {}
            other => panic!("{text}: {other:?}"),
        }
    }
    match SandboxPolicy::from_json(r#"{"root": "/nonexistent/helikon"}"#) {
        Err(SandboxError::NotFound(_)) => {}
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_shell_that_cannot_start_fails_the_self_test() {
    let f = fixture(Mode::OsSandbox);
    let mut c = common::config(&f.root, Mode::OsSandbox);
    c.shell = "/nonexistent/sh".into();
    match SandboxPolicy::build(c) {
        Err(SandboxError::SelfTest(m)) => assert!(m.contains("execve"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn guarantees_follow_the_spec_shapes() {
    let f = fixture(Mode::OsSandbox);
    let g = f.policy.guarantees();
    assert_eq!(
        (g.filesystem, g.network, g.syscalls),
        (
            Isolation::OsKernel,
            Isolation::OsKernel,
            Isolation::OsKernel
        )
    );
    assert_eq!(g.label, "os-sandbox (landlock+seccomp)");
    let json = serde_json::to_value(g).unwrap();
    assert_eq!(json["filesystem"], "os_kernel");
    assert_eq!(json["landlock_abi"], probe_kernel().landlock_abi.min(10));
    let h = fixture(Mode::Host);
    let g = h.policy.guarantees();
    assert_eq!(
        (g.filesystem, g.network, g.syscalls),
        (Isolation::None, Isolation::None, Isolation::None)
    );
    assert_eq!(g.label, "host (no containment)");
}

#[test]
fn bad_run_arguments_are_config_errors() {
    let f = fixture(Mode::Host);
    assert!(matches!(
        f.policy.run("true", Duration::ZERO),
        Err(SandboxError::Config(_))
    ));
    assert!(matches!(
        f.policy.run("echo a\0b", Duration::from_secs(1)),
        Err(SandboxError::Config(_))
    ));
}

#[test]
fn unix_connect_option_allows_a_server_in_the_root_but_not_abstract_sockets_outside() {
    let f = fixture_with(Mode::OsSandbox, |c| c.unix_sockets = UnixSockets::Connect);
    let out = f.run(&probe(
        "s = socket.socket(socket.AF_UNIX)\ns.bind(\"srv.sock\")\ns.listen(1)\n\
         c = socket.socket(socket.AF_UNIX)\nc.connect(\"srv.sock\")",
    ));
    assert!(out.stdout.contains("PROBE-OK"), "{out:#?}");
    let abs = common::Abstract::new();
    let out = f.run(&probe(&format!(
        "s = socket.socket(socket.AF_UNIX)\ns.connect(\"\\0{}\")",
        abs.1
    )));
    // Refused by Landlock's abstract-socket scope (seccomp allows connect here).
    assert!(
        out.stdout.contains(&format!("PROBE-ERR {}", libc::EPERM)),
        "{out:#?}"
    );
    assert!(!abs.connected());
}

#[test]
fn unix_sockets_none_refuses_even_socketpair() {
    let f = fixture_with(Mode::OsSandbox, |c| c.unix_sockets = UnixSockets::None);
    let out = f.run(&probe("socket.socketpair()"));
    assert!(out.stdout.contains("PROBE-ERR 1"), "{out:#?}");
}

#[test]
fn allow_proc_opens_proc_for_reading_only() {
    let f = fixture(Mode::OsSandbox);
    assert!(refused(&f.run("cat /proc/self/status")));
    let f = fixture_with(Mode::OsSandbox, |c| c.allow_proc = true);
    let out = f.run("grep -c . /proc/self/status");
    assert_eq!(out.exit_code, Some(0), "{out:#?}");
    assert!(f
        .policy
        .guarantees()
        .notes
        .iter()
        .any(|n| n.contains("/proc")));
}

#[test]
fn read_paths_are_readable_but_not_writable() {
    let extra = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(extra.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::write(extra.path().join("tool.txt"), "TOOL-DATA").unwrap();
    let p = extra.path().to_path_buf();
    let f = fixture_with(Mode::OsSandbox, move |c| c.read_paths = vec![p.clone()]);
    let out = f.run(&format!(
        "cat {0}/tool.txt && echo x > {0}/new",
        extra.path().display()
    ));
    assert!(out.stdout.contains("TOOL-DATA"), "{out:#?}");
    assert!(refused(&out), "{out:#?}");
    assert!(!extra.path().join("new").exists());
}

#[test]
fn one_policy_serves_concurrent_calls() {
    let f = fixture(Mode::OsSandbox);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let f = &f;
                s.spawn(move || f.run(&format!("echo call-{i}; sleep 0.2")))
            })
            .collect();
        for (i, h) in handles.into_iter().enumerate() {
            let out = h.join().unwrap();
            assert_eq!(out.stdout.trim(), format!("call-{i}"));
        }
    });
}
