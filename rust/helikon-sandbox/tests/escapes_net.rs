//! Network escapes against listeners this test runs on the loopback interface and on local
//! sockets. Each must fail in the OS sandbox (network denied) and succeed in host mode.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{probe, probe_verdict, Case, Verdict};
use helikon_sandbox::RunOutcome;

/// errno values that mean "refused by the sandbox": EPERM (seccomp), EACCES (Landlock).
const REFUSED: &[i32] = &[libc::EPERM, libc::EACCES];

fn with_listener(o: &RunOutcome, reached: bool) -> Verdict {
    if reached {
        return Verdict::Escaped("the listener saw the connection/datagram".into());
    }
    probe_verdict(o, REFUSED)
}

fn tcp_connect() -> Case {
    Case::new(
        |c| {
            probe(&format!(
                "socket.create_connection((\"127.0.0.1\", {}), timeout=2)",
                c.tcp.port()
            ))
        },
        |c, o| with_listener(o, c.tcp.connected()),
    )
}

fn tcp_connect_ipv6() -> Case {
    Case::new(
        |c| {
            probe(&format!(
                "socket.create_connection((\"::1\", {}), timeout=2)",
                c.tcp6.port()
            ))
        },
        |c, o| with_listener(o, c.tcp6.connected()),
    )
}

fn tcp_bash_dev_tcp() -> Case {
    Case::new(
        |c| {
            format!(
                "bash -c 'echo hi > /dev/tcp/127.0.0.1/{}' && echo CONNECTED",
                c.tcp.port()
            )
        },
        |c, o| {
            if c.tcp.connected() || o.stdout.contains("CONNECTED") {
                Verdict::Escaped("connected".into())
            } else if common::refused(o) {
                Verdict::Contained
            } else {
                Verdict::Inconclusive("no permission error".into())
            }
        },
    )
}

fn tcp_curl() -> Case {
    Case::new(
        |c| {
            format!(
                "curl -s -m 2 http://127.0.0.1:{}/; echo rc=$?",
                c.tcp.port()
            )
        },
        |c, o| {
            if c.tcp.connected() {
                Verdict::Escaped("connected".into())
            } else if o.stdout.contains("rc=7") || o.stdout.contains("rc=6") {
                // curl: couldn't connect / resolve, after socket() was refused
                Verdict::Contained
            } else {
                Verdict::Inconclusive(format!("curl said {}", o.stdout.trim()))
            }
        },
    )
}

fn tcp_listen() -> Case {
    Case::new(
        |_| probe("s = socket.socket()\ns.bind((\"127.0.0.1\", 0))\ns.listen(1)"),
        |_, o| probe_verdict(o, REFUSED),
    )
}

fn udp_send() -> Case {
    Case::new(
        |c| {
            probe(&format!(
                "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
                 s.sendto(b\"x\", (\"127.0.0.1\", {}))",
                c.udp.port()
            ))
        },
        |c, o| {
            std::thread::sleep(std::time::Duration::from_millis(50));
            with_listener(o, c.udp.received())
        },
    )
}

fn abstract_unix_connect() -> Case {
    Case::new(
        |c| {
            probe(&format!(
                "s = socket.socket(socket.AF_UNIX)\ns.connect(\"\\0{}\")",
                c.abs.1
            ))
        },
        |c, o| with_listener(o, c.abs.connected()),
    )
}

fn pathname_unix_connect() -> Case {
    Case::new(
        |c| {
            probe(&format!(
                "s = socket.socket(socket.AF_UNIX)\ns.connect(\"{}\")",
                c.path.1.display()
            ))
        },
        |c, o| with_listener(o, c.path.connected()),
    )
}

fn unix_datagram_sendto() -> Case {
    Case::new(
        |c| {
            probe(&format!(
                "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n\
                 s.sendto(b\"x\", \"{}\")",
                c.dgram.1.display()
            ))
        },
        |c, o| {
            std::thread::sleep(std::time::Duration::from_millis(50));
            with_listener(o, c.dgram.received())
        },
    )
}

fn netlink_socket() -> Case {
    Case::new(
        |_| probe("socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)"),
        |_, o| probe_verdict(o, REFUSED),
    )
}

fn packet_socket() -> Case {
    // AF_PACKET needs CAP_NET_RAW, which the uid drop removes; seccomp refuses it first.
    Case::new(
        |_| probe("socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)"),
        |_, o| probe_verdict(o, REFUSED),
    )
}

fn io_uring_setup() -> Case {
    // io_uring operations bypass seccomp's view of socket/connect: the ring itself is denied.
    Case::new(
        |_| {
            probe(&common::syscall_action(&format!(
                "{}, 1, 0",
                libc::SYS_io_uring_setup
            )))
        },
        |_, o| probe_verdict(o, REFUSED),
    )
}

fn x32_socket_syscall() -> Case {
    // The x32 numbering of socket(): the ABI guard answers ENOSYS even where x32 is enabled.
    Case::new(
        |_| {
            probe(&common::syscall_action(&format!(
                "{} | 0x40000000, 2, 1, 0",
                libc::SYS_socket
            )))
        },
        |_, o| probe_verdict(o, &[libc::ENOSYS]),
    )
}

os_sandbox_contains!(
    tcp_connect,
    tcp_connect_ipv6,
    tcp_bash_dev_tcp,
    tcp_curl,
    tcp_listen,
    udp_send,
    abstract_unix_connect,
    pathname_unix_connect,
    unix_datagram_sendto,
    netlink_socket,
    packet_socket,
    io_uring_setup,
    x32_socket_syscall,
);

host_mode_allows!(
    tcp_connect,
    tcp_connect_ipv6,
    tcp_bash_dev_tcp,
    tcp_listen,
    udp_send,
    abstract_unix_connect,
    pathname_unix_connect,
    unix_datagram_sendto,
    netlink_socket,
    io_uring_setup,
);

/// With `allow_network`, TCP to the loopback listener works (the opt-out is real) while
/// the other axes stay confined.
#[test]
fn allow_network_opens_only_the_network_axis() {
    let f = common::fixture_with(helikon_sandbox::Mode::OsSandbox, |c| c.allow_network = true);
    let tcp = common::Tcp::new();
    let out = f.run(&probe(&format!(
        "socket.create_connection((\"127.0.0.1\", {}), timeout=2)",
        tcp.port()
    )));
    assert!(out.stdout.contains("PROBE-OK"), "{out:#?}");
    assert!(tcp.connected());
    assert_eq!(
        f.policy.guarantees().network,
        helikon_sandbox::Isolation::None
    );
    assert_eq!(
        f.policy.guarantees().filesystem,
        helikon_sandbox::Isolation::OsKernel
    );
    // Filesystem and syscall containment are unchanged.
    let out = f.run(&format!("cat {}", f.secret()));
    assert!(common::refused(&out), "{out:#?}");
    let out = f.run(&probe(
        "socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)",
    ));
    assert!(out.stdout.contains("PROBE-ERR 1"), "{out:#?}");
    let out = f.run("unshare -U true");
    assert!(common::refused(&out), "{out:#?}");
}
