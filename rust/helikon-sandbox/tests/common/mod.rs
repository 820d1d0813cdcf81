//! Shared fixtures for the sandbox tests (these tests run as root and use the real kernel).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    dead_code,
    unreachable_pub
)]

use std::fs;
use std::io::ErrorKind;
use std::net::{TcpListener, UdpSocket};
use std::os::linux::net::SocketAddrExt;
use std::os::unix::fs::{chown, PermissionsExt};
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::PathBuf;
use std::time::Duration;

use helikon_sandbox::{Mode, RunOutcome, SandboxConfig, SandboxPolicy};

/// The unprivileged identity commands run as.
pub const NOBODY: (u32, u32) = (65534, 65534);
/// Content of the file outside the root.
pub const SECRET: &str = "OUTSIDE-SECRET-7f3a";
/// Short timeout for every test command.
pub const T: Duration = Duration::from_secs(5);

/// A root owned by the sandbox uid, an outside directory the uid could read and write under
/// plain Unix permissions (so only the sandbox stands in the way), and a policy.
pub struct Fixture {
    pub tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub outside: PathBuf,
    pub policy: SandboxPolicy,
}

pub fn config(root: &std::path::Path, mode: Mode) -> SandboxConfig {
    let mut cfg = SandboxConfig::new(root);
    cfg.mode = mode;
    cfg.run_as = Some(NOBODY);
    cfg.env
        .insert("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into());
    cfg.env.insert("LC_ALL".into(), "C".into());
    cfg
}

pub fn fixture(mode: Mode) -> Fixture {
    fixture_with(mode, |_| {})
}

pub fn fixture_with(mode: Mode, tweak: impl FnOnce(&mut SandboxConfig)) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let root = tmp.path().join("root");
    let outside = tmp.path().join("outside");
    fs::create_dir(&root).unwrap();
    fs::create_dir(&outside).unwrap();
    chown(&root, Some(NOBODY.0), Some(NOBODY.1)).unwrap();
    fs::set_permissions(&outside, fs::Permissions::from_mode(0o777)).unwrap();
    fs::write(outside.join("secret.txt"), SECRET).unwrap();
    fs::set_permissions(
        outside.join("secret.txt"),
        fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    fs::write(outside.join("victim.txt"), "original").unwrap();
    fs::set_permissions(
        outside.join("victim.txt"),
        fs::Permissions::from_mode(0o666),
    )
    .unwrap();
    fs::write(root.join("notes.txt"), "alpha\nbeta\ngamma\n").unwrap();
    chown(root.join("notes.txt"), Some(NOBODY.0), Some(NOBODY.1)).unwrap();
    let mut cfg = config(&root, mode);
    tweak(&mut cfg);
    let policy = SandboxPolicy::build(cfg).unwrap();
    Fixture {
        tmp,
        root,
        outside,
        policy,
    }
}

impl Fixture {
    pub fn run(&self, cmd: &str) -> RunOutcome {
        self.policy.run(cmd, T).unwrap()
    }

    pub fn secret(&self) -> String {
        self.outside.join("secret.txt").display().to_string()
    }

    pub fn victim_unchanged(&self) -> bool {
        fs::read_to_string(self.outside.join("victim.txt")).unwrap() == "original"
    }

    /// Names in the outside dir other than the two fixtures.
    pub fn outside_extra(&self) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(&self.outside)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "secret.txt" && n != "victim.txt")
            .collect();
        v.sort();
        v
    }
}

/// A Python one-liner run through the shell (single quotes are not allowed in `code`).
pub fn py(code: &str) -> String {
    assert!(!code.contains('\''));
    format!("python3 -c '{code}'")
}

/// A TCP listener on 127.0.0.1 that records whether anything connected.
pub struct Tcp(pub TcpListener);

impl Tcp {
    pub fn new() -> Self {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.set_nonblocking(true).unwrap();
        Self(l)
    }
    pub fn port(&self) -> u16 {
        self.0.local_addr().unwrap().port()
    }
    pub fn connected(&self) -> bool {
        match self.0.accept() {
            Ok(_) => true,
            Err(e) if e.kind() == ErrorKind::WouldBlock => false,
            Err(e) => panic!("{e}"),
        }
    }
}

/// A UDP socket on 127.0.0.1 that records whether a datagram arrived.
pub struct Udp(pub UdpSocket);

impl Udp {
    pub fn new() -> Self {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.set_nonblocking(true).unwrap();
        Self(s)
    }
    pub fn port(&self) -> u16 {
        self.0.local_addr().unwrap().port()
    }
    pub fn received(&self) -> bool {
        let mut buf = [0u8; 64];
        match self.0.recv(&mut buf) {
            Ok(_) => true,
            Err(e) if e.kind() == ErrorKind::WouldBlock => false,
            Err(e) => panic!("{e}"),
        }
    }
}

/// An abstract unix-socket listener.
pub struct Abstract(pub UnixListener, pub String);

impl Abstract {
    pub fn new() -> Self {
        let name = format!("helikon-test-{}-{}", std::process::id(), rand_u32());
        let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
        let l = UnixListener::bind_addr(&addr).unwrap();
        l.set_nonblocking(true).unwrap();
        Self(l, name)
    }
    pub fn connected(&self) -> bool {
        match self.0.accept() {
            Ok(_) => true,
            Err(e) if e.kind() == ErrorKind::WouldBlock => false,
            Err(e) => panic!("{e}"),
        }
    }
}

/// A pathname unix-socket listener in `dir`, connectable by anyone under Unix permissions.
pub struct PathSock(pub UnixListener, pub PathBuf);

impl PathSock {
    pub fn new(dir: &std::path::Path) -> Self {
        let p = dir.join("host.sock");
        let l = UnixListener::bind(&p).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o777)).unwrap();
        l.set_nonblocking(true).unwrap();
        Self(l, p)
    }
    pub fn connected(&self) -> bool {
        match self.0.accept() {
            Ok(_) => true,
            Err(e) if e.kind() == ErrorKind::WouldBlock => false,
            Err(e) => panic!("{e}"),
        }
    }
}

pub fn rand_u32() -> u32 {
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    n ^ std::process::id().rotate_left(16)
}

/// Pids of live processes whose command line contains `needle`.
pub fn processes_with(needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cmd) = fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(needle) {
                // Zombies have an empty cmdline, so a match is a live process.
                out.push(pid);
            }
        }
    }
    out
}

/// Number of processes whose real uid is `uid`.
pub fn processes_of_uid(uid: u32) -> usize {
    let mut n = 0;
    for e in fs::read_dir("/proc").unwrap().flatten() {
        if e.file_name().to_string_lossy().parse::<u32>().is_err() {
            continue;
        }
        if let Ok(status) = fs::read_to_string(e.path().join("status")) {
            let uid_line = status.lines().find(|l| l.starts_with("Uid:"));
            let real = uid_line.and_then(|l| l.split_whitespace().nth(1));
            if real == Some(uid.to_string().as_str()) {
                n += 1;
            }
        }
    }
    n
}

// ------------------------------------------------------------------ escape-case machinery

/// What a run shows about an escape attempt.
#[derive(Debug)]
pub enum Verdict {
    /// The attempt reached what it wanted (how we know).
    Escaped(String),
    /// The attempt was refused, and the refusal was observed.
    Contained,
    /// The attempt did not run far enough to tell (a broken test, not a pass).
    Inconclusive(String),
}

/// Everything a case may use: the fixture and listeners it can try to reach.
pub struct Ctx {
    pub f: Fixture,
    pub tcp: Tcp,
    pub tcp6: Tcp6,
    pub udp: Udp,
    pub abs: Abstract,
    pub path: PathSock,
    pub dgram: PathDgram,
}

/// One escape attempt: the command, how to read its outcome, and config tweaks.
pub struct Case {
    pub cmd: fn(&Ctx) -> String,
    pub verdict: fn(&Ctx, &RunOutcome) -> Verdict,
    pub tweak: fn(&mut SandboxConfig),
    pub timeout: Duration,
}

impl Case {
    pub fn new(cmd: fn(&Ctx) -> String, verdict: fn(&Ctx, &RunOutcome) -> Verdict) -> Self {
        Self {
            cmd,
            verdict,
            tweak: |_| {},
            timeout: T,
        }
    }
    pub fn tweak(mut self, t: fn(&mut SandboxConfig)) -> Self {
        self.tweak = t;
        self
    }
    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = t;
        self
    }
}

fn run_case(case: &Case, mode: Mode) -> (Verdict, RunOutcome, String) {
    let f = fixture_with(mode, case.tweak);
    let ctx = Ctx {
        tcp: Tcp::new(),
        tcp6: Tcp6::new(),
        udp: Udp::new(),
        abs: Abstract::new(),
        path: PathSock::new(&f.outside),
        dgram: PathDgram::new(&f.outside),
        f,
    };
    let cmd = (case.cmd)(&ctx);
    let out = ctx.f.policy.run(&cmd, case.timeout).unwrap();
    ((case.verdict)(&ctx, &out), out, cmd)
}

/// The OS sandbox must refuse the attempt.
pub fn contained(case: Case) {
    let (v, out, cmd) = run_case(&case, Mode::OsSandbox);
    assert!(
        matches!(v, Verdict::Contained),
        "os sandbox: {v:?}\ncommand: {cmd}\n{out:#?}"
    );
}

/// The same attempt in host mode succeeds (proving the case can detect an escape).
pub fn escapes_on_host(case: Case) {
    let (v, out, cmd) = run_case(&case, Mode::Host);
    assert!(
        matches!(v, Verdict::Escaped(_)),
        "host mode: {v:?}\ncommand: {cmd}\n{out:#?}"
    );
}

/// An IPv6 loopback TCP listener.
pub struct Tcp6(pub TcpListener);

impl Tcp6 {
    pub fn new() -> Self {
        let l = TcpListener::bind("[::1]:0").unwrap();
        l.set_nonblocking(true).unwrap();
        Self(l)
    }
    pub fn port(&self) -> u16 {
        self.0.local_addr().unwrap().port()
    }
    pub fn connected(&self) -> bool {
        match self.0.accept() {
            Ok(_) => true,
            Err(e) if e.kind() == ErrorKind::WouldBlock => false,
            Err(e) => panic!("{e}"),
        }
    }
}

/// A pathname unix datagram socket in `dir` (like /dev/log).
pub struct PathDgram(pub std::os::unix::net::UnixDatagram, pub PathBuf);

impl PathDgram {
    pub fn new(dir: &std::path::Path) -> Self {
        let p = dir.join("log.sock");
        let s = std::os::unix::net::UnixDatagram::bind(&p).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o777)).unwrap();
        s.set_nonblocking(true).unwrap();
        Self(s, p)
    }
    pub fn received(&self) -> bool {
        let mut buf = [0u8; 64];
        match self.0.recv(&mut buf) {
            Ok(_) => true,
            Err(e) if e.kind() == ErrorKind::WouldBlock => false,
            Err(e) => panic!("{e}"),
        }
    }
}

/// A Python probe: runs `action` (one or more lines) and prints `PROBE-OK` or
/// `PROBE-ERR <errno>`. The code must not contain single quotes.
pub fn probe(action: &str) -> String {
    let body: String = action.lines().map(|l| format!("    {l}\n")).collect();
    let code = format!(
        "import os, socket, ctypes, fcntl, termios\ntry:\n{body}    print(\"PROBE-OK\")\n\
         except OSError as e:\n    print(\"PROBE-ERR\", e.errno)\n"
    );
    assert!(!code.contains('\''));
    format!("python3 -c '{code}'")
}

/// A raw system call through ctypes, as a [`probe`] action. In a forked child (`r == 0`)
/// the child exits at once.
pub fn syscall_action(args: &str) -> String {
    format!(
        "l = ctypes.CDLL(None, use_errno=True)\n\
         me = os.getpid()\n\
         r = l.syscall(*[ctypes.c_long(x) for x in ({args})])\n\
         if r == 0 and os.getpid() != me: os._exit(0)\n\
         if r < 0: raise OSError(ctypes.get_errno(), \"syscall\")"
    )
}

/// Read a [`probe`]'s outcome: `PROBE-OK` is an escape, `PROBE-ERR e` with `e` in
/// `refused` is contained, anything else is inconclusive.
pub fn probe_verdict(out: &RunOutcome, refused: &[i32]) -> Verdict {
    if out.stdout.contains("PROBE-OK") {
        return Verdict::Escaped("the probe succeeded".into());
    }
    if let Some(rest) = out.stdout.split("PROBE-ERR ").nth(1) {
        let errno: i32 = rest.trim().parse().unwrap_or(-1);
        if refused.contains(&errno) {
            return Verdict::Contained;
        }
        return Verdict::Escaped(format!("reached the kernel (errno {errno})"));
    }
    Verdict::Inconclusive("the probe printed no result".into())
}

/// A shell command was refused by a permission check and printed nothing secret.
pub fn refused(out: &RunOutcome) -> bool {
    out.exit_code != Some(0)
        && (out.stderr.contains("Permission denied")
            || out.stderr.contains("Operation not permitted"))
}

/// Generate `#[test]`s asserting the OS sandbox contains each case.
#[macro_export]
macro_rules! os_sandbox_contains {
    ($($name:ident),* $(,)?) => {
        mod os_sandbox {
            $( #[test] fn $name() { $crate::common::contained(super::$name()) } )*
        }
    };
}

/// Generate `#[test]`s asserting host mode lets each case through.
#[macro_export]
macro_rules! host_mode_allows {
    ($($name:ident),* $(,)?) => {
        mod host_mode {
            $( #[test] fn $name() { $crate::common::escapes_on_host(super::$name()) } )*
        }
    };
}
