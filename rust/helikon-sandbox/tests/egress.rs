//! Egress through the proxy port only, on the real kernel (as root, commands as nobody).
//!
//! The test plays the proxy: it receives the connections the supervisor passes over the
//! bridge the policy hands out (namespace) or accepts on its own loopback port (Landlock port
//! rules). Everything else the command tries must
//! fail: a direct connect to a listener in the host's namespace, UDP, an AF_UNIX socket, a
//! DNS query, a bind.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeMap;
use std::io::Read;
use std::mem::MaybeUninit;
use std::net::{TcpListener, TcpStream};
use std::os::fd::OwnedFd;
use std::time::Duration;

use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};

use common::{fixture_with, probe, Fixture, Tcp, Udp};
use helikon_sandbox::{EgressConfig, EgressMechanism, Isolation, Mode};

fn egress_fixture(mechanism: EgressMechanism, host_port: Option<u16>) -> Fixture {
    fixture_with(Mode::OsSandbox, move |c| {
        c.egress = Some(EgressConfig {
            mechanism,
            host_port,
        })
    })
}

/// Accept one connection on `l` within a few seconds and return what it sent.
fn accept_one(l: TcpListener) -> std::thread::JoinHandle<Option<String>> {
    l.set_nonblocking(false).unwrap();
    std::thread::spawn(move || {
        let (mut s, _) = l.accept().ok()?;
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = String::new();
        s.read_to_string(&mut buf).ok()?;
        Some(buf)
    })
}

/// Receive one connection from the bridge within a few seconds: its tag and what it sent.
fn bridged_one(bridge: OwnedFd) -> std::thread::JoinHandle<Option<(u64, String)>> {
    std::thread::spawn(move || {
        let mut tag = [0u8; 8];
        let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut control = RecvAncillaryBuffer::new(&mut space);
        let mut iov = [std::io::IoSliceMut::new(&mut tag)];
        let msg =
            rustix::net::recvmsg(&bridge, &mut iov, &mut control, RecvFlags::CMSG_CLOEXEC).ok()?;
        assert_eq!(msg.bytes, 8);
        let conn = control.drain().find_map(|m| match m {
            RecvAncillaryMessage::ScmRights(mut fds) => fds.next(),
            _ => None,
        })?;
        let mut s = TcpStream::from(conn);
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = String::new();
        s.read_to_string(&mut buf).ok()?;
        Some((u64::from_le_bytes(tag), buf))
    })
}

fn send_to_proxy(port: u16) -> String {
    probe(&format!(
        "s = socket.create_connection((\"127.0.0.1\", {port}), timeout=3)\n\
         s.sendall(b\"via-proxy\")\n\
         s.close()"
    ))
}

fn errno_of(out: &helikon_sandbox::RunOutcome) -> Option<i32> {
    out.stdout
        .split("PROBE-ERR ")
        .nth(1)
        .and_then(|r| r.trim().parse().ok())
}

#[test]
fn namespace_reaches_the_proxy_listener_and_nothing_else() {
    let f = egress_fixture(EgressMechanism::Namespace, None);
    assert_eq!(
        f.policy.egress_mechanism(),
        Some(EgressMechanism::Namespace)
    );
    assert_eq!(f.policy.guarantees().network, Isolation::Proxied);
    let port = f.policy.egress_port().unwrap();
    assert_eq!(port, helikon_sandbox::egress::NAMESPACE_PORT);
    let bridge = f.policy.egress_bridge().unwrap().unwrap();
    let got = bridged_one(bridge);
    let out = f
        .policy
        .run_tagged(
            &send_to_proxy(port),
            common::T,
            &BTreeMap::new(),
            0x1234_5678_9abc,
        )
        .unwrap();
    assert!(out.stdout.contains("PROBE-OK"), "{out:#?}");
    assert_eq!(
        got.join().unwrap(),
        Some((0x1234_5678_9abc, "via-proxy".to_string()))
    );

    // A listener in the host's namespace, on loopback: unreachable (no such address there).
    let host = Tcp::new();
    let out = f.run(&probe(&format!(
        "socket.create_connection((\"127.0.0.1\", {}), timeout=2)",
        host.port()
    )));
    assert!(!host.connected());
    // Landlock refuses the port (EACCES); without it the namespace refuses (ECONNREFUSED).
    assert!(
        matches!(errno_of(&out), Some(libc::EACCES | libc::ECONNREFUSED)),
        "{out:#?}"
    );
    let guarantees = f.policy.guarantees();
    assert!(
        guarantees
            .notes
            .iter()
            .any(|n| n.contains(&format!("127.0.0.1:{port} in a private network namespace"))),
        "{guarantees:?}"
    );
}

#[test]
fn namespace_refuses_udp_dns_unix_and_bind() {
    let f = egress_fixture(EgressMechanism::Namespace, None);
    let udp = Udp::new();
    for (action, errnos) in [
        (
            format!(
                "socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b\"x\", (\"127.0.0.1\", {}))",
                udp.port()
            ),
            vec![libc::EPERM],
        ),
        // A DNS query over UDP and over TCP.
        (
            "socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b\"q\", (\"127.0.0.53\", 53))"
                .to_string(),
            vec![libc::EPERM],
        ),
        (
            "socket.create_connection((\"127.0.0.53\", 53), timeout=2)".to_string(),
            vec![libc::EACCES, libc::ECONNREFUSED],
        ),
        (
            "socket.getaddrinfo(\"pypi.org\", 443)".to_string(),
            // gaierror carries the EAI_* code: AGAIN, NONAME, NODATA or SYSTEM.
            vec![-3, -2, -5, -11],
        ),
        (
            "socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)".to_string(),
            vec![libc::EPERM],
        ),
        (
            "socket.socket(socket.AF_INET6, socket.SOCK_RAW, 58)".to_string(),
            vec![libc::EPERM],
        ),
        (
            "socket.socket().bind((\"127.0.0.1\", 0))".to_string(),
            vec![libc::EACCES],
        ),
    ] {
        let out = f.run(&probe(&action));
        let errno = errno_of(&out);
        assert!(
            errno.is_some_and(|e| errnos.contains(&e)),
            "{action}: {out:#?}"
        );
    }
    assert!(!udp.received());
}

#[test]
fn namespace_sets_the_proxy_variables() {
    let f = egress_fixture(EgressMechanism::Namespace, None);
    let port = f.policy.egress_port().unwrap();
    let out = f.run("echo \"$HTTP_PROXY $https_proxy $ALL_PROXY [$NO_PROXY]\"");
    assert_eq!(
        out.stdout.trim(),
        format!("http://127.0.0.1:{port} http://127.0.0.1:{port} socks5h://127.0.0.1:{port} []")
    );
}

#[test]
fn landlock_port_reaches_only_the_proxy_port() {
    let proxy = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = proxy.local_addr().unwrap().port();
    let f = egress_fixture(EgressMechanism::LandlockPort, Some(port));
    assert_eq!(
        f.policy.egress_mechanism(),
        Some(EgressMechanism::LandlockPort)
    );
    assert!(f.policy.egress_bridge().unwrap().is_none());
    let got = accept_one(proxy);
    let out = f.run(&send_to_proxy(port));
    assert!(out.stdout.contains("PROBE-OK"), "{out:#?}");
    assert_eq!(got.join().unwrap().as_deref(), Some("via-proxy"));

    let other = Tcp::new();
    let out = f.run(&probe(&format!(
        "socket.create_connection((\"127.0.0.1\", {}), timeout=2)",
        other.port()
    )));
    assert_eq!(errno_of(&out), Some(libc::EACCES), "{out:#?}");
    assert!(!other.connected());
    let udp = Udp::new();
    let out = f.run(&probe(&format!(
        "socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b\"x\", (\"127.0.0.1\", {}))",
        udp.port()
    )));
    assert_eq!(errno_of(&out), Some(libc::EPERM), "{out:#?}");
    assert!(!udp.received());
    let notes = &f.policy.guarantees().notes;
    assert!(
        notes
            .iter()
            .any(|n| n.contains("Landlock matches ports, not addresses")),
        "{notes:?}"
    );
}

#[test]
fn host_mode_and_allow_network_refuse_egress() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cfg = common::config(tmp.path(), Mode::OsSandbox);
    cfg.allow_network = true;
    cfg.egress = Some(EgressConfig {
        mechanism: EgressMechanism::Auto,
        host_port: None,
    });
    let err = helikon_sandbox::SandboxPolicy::build(cfg).unwrap_err();
    assert!(err.to_string().contains("exclude each other"), "{err}");
}
