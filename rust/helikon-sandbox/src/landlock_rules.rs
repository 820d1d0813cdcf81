//! The Landlock ruleset: which paths the child may touch, and how.
//!
//! Every filesystem right of the running ABI is handled (not a pinned v1 set), so anything
//! not granted below is denied:
//!
//! * the root (from the descriptor of the opened [`crate::ConfinedDir`], never re-opened by
//!   path) and the run's private temp dir: every right except creating character or block
//!   devices and device ioctls;
//! * system trees (`/usr`, `/bin`, `/sbin`, `/lib*`) and `read_paths`: read and execute;
//! * `/etc`: a list of files and a few directories a shell, git and python need, not the
//!   directory (so `/etc/shadow` and host keys stay unreadable even for root);
//! * `/dev/null`, `/dev/zero`, `/dev/full`, `/dev/random`, `/dev/urandom`: read and write, no
//!   ioctl;
//! * `/proc` only when `allow_proc` is set (read).
//!
//! On ABI 4+ TCP bind/connect are handled with no port allowed when the network is denied; on
//! ABI 6+ signals and abstract unix sockets are scoped to the sandbox.
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, PathBeneath, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope, ABI,
};
use rustix::fs::{fstat, open, FileType, Mode, OFlags};

use crate::error::{Result, SandboxError};
use crate::mount_plan::Visible;
use crate::probe::Enforcement;
use crate::workspace_rules::WorkspaceRules;

/// System trees granted read + execute.
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// `/etc` entries granted read (files) or read + list (directories).
const ETC_ENTRIES: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/ld.so.preload",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/localtime",
    "/etc/timezone",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/resolv.conf",
    "/etc/gai.conf",
    "/etc/protocols",
    "/etc/services",
    "/etc/ssl/certs",
    "/etc/ssl/openssl.cnf",
    "/etc/ca-certificates",
    "/etc/ca-certificates.conf",
    "/etc/pki/tls/certs",
    "/etc/gitconfig",
    "/etc/os-release",
    "/etc/debian_version",
    "/etc/alternatives",
    "/etc/inputrc",
    "/etc/mime.types",
    "/etc/magic",
    "/etc/magic.mime",
    "/etc/locale.alias",
    "/etc/profile",
    "/etc/profile.d",
    "/etc/bash.bashrc",
    "/etc/shells",
    "/etc/python3",
    "/etc/python3.11",
    "/etc/python3.12",
    "/etc/python3.13",
    "/etc/pip.conf",
    "/etc/npmrc",
];

/// Device nodes granted read + write (no ioctl).
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GrantKind {
    /// Read + execute (directory or file).
    ReadExec,
    /// Read only (directory or file).
    Read,
    /// Read + write, no truncate, no ioctl.
    Device,
}

/// A path opened once (`O_PATH`) at build time, with what it is granted.
#[derive(Debug)]
pub(crate) struct Grant {
    fd: OwnedFd,
    is_dir: bool,
    kind: GrantKind,
    path: PathBuf,
}

impl Grant {
    /// The granted path (for diagnostics).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// How a private mount namespace shows it.
    pub(crate) fn visible(&self) -> Visible {
        if self.kind == GrantKind::Device {
            Visible::Device
        } else {
            Visible::ReadOnly
        }
    }
}

fn open_grant(path: &Path, kind: GrantKind) -> Result<Option<Grant>> {
    let fd = match open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT | rustix::io::Errno::NOTDIR) => return Ok(None),
        Err(e) => {
            return Err(SandboxError::io(
                format!("open {} for the Landlock rule", path.display()),
                e.into(),
            ))
        }
    };
    let st =
        fstat(&fd).map_err(|e| SandboxError::io(format!("stat {}", path.display()), e.into()))?;
    let is_dir = FileType::from_raw_mode(st.st_mode) == FileType::Directory;
    Ok(Some(Grant {
        fd,
        is_dir,
        kind,
        path: path.to_path_buf(),
    }))
}

/// Open every system path the child is granted (missing ones are skipped).
pub(crate) fn open_grants(read_paths: &[PathBuf], allow_proc: bool) -> Result<Vec<Grant>> {
    let mut out = Vec::new();
    for p in SYSTEM_DIRS {
        out.extend(open_grant(Path::new(p), GrantKind::ReadExec)?);
    }
    for p in read_paths {
        match open_grant(p, GrantKind::ReadExec)? {
            Some(g) => out.push(g),
            None => {
                return Err(SandboxError::Config(format!(
                    "read_paths: {} does not exist",
                    p.display()
                )))
            }
        }
    }
    for p in ETC_ENTRIES {
        out.extend(open_grant(Path::new(p), GrantKind::Read)?);
    }
    for p in DEVICES {
        out.extend(open_grant(Path::new(p), GrantKind::Device)?);
    }
    if allow_proc {
        out.extend(open_grant(Path::new("/proc"), GrantKind::Read)?);
    }
    Ok(out)
}

fn ll_err(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Unsupported(format!("Landlock ruleset: {e}"))
}

/// Rights of the root and the private temp dir.
fn workspace_rights(abi: ABI) -> BitFlags<AccessFs> {
    AccessFs::from_all(abi) & !(AccessFs::MakeChar | AccessFs::MakeBlock | AccessFs::IoctlDev)
}

fn grant_rights(g: &Grant, abi: ABI) -> BitFlags<AccessFs> {
    let file_ok = AccessFs::from_file(abi);
    let rights: BitFlags<AccessFs> = match g.kind {
        GrantKind::ReadExec => AccessFs::ReadFile | AccessFs::ReadDir | AccessFs::Execute,
        GrantKind::Read => AccessFs::ReadFile | AccessFs::ReadDir,
        GrantKind::Device => AccessFs::ReadFile | AccessFs::WriteFile,
    };
    if g.is_dir {
        rights
    } else {
        rights & file_ok
    }
}

/// Build the ruleset for one run. Returns the ruleset descriptor for
/// `landlock_restrict_self` in the child.
pub(crate) fn ruleset(
    enf: &Enforcement,
    root: BorrowedFd<'_>,
    tmp: BorrowedFd<'_>,
    grants: &[Grant],
    workspace: &WorkspaceRules,
) -> Result<OwnedFd> {
    let abi = ABI::from(enf.abi);
    let mut rs = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(abi))
        .map_err(ll_err)?;
    if enf.tcp_rules {
        rs = rs.handle_access(AccessNet::from_all(abi)).map_err(ll_err)?;
    }
    let mut scopes = BitFlags::<Scope>::empty();
    if enf.scope_signal {
        scopes |= Scope::Signal;
    }
    if enf.scope_abstract_unix {
        scopes |= Scope::AbstractUnixSocket;
    }
    if !scopes.is_empty() {
        rs = rs.scope(scopes).map_err(ll_err)?;
    }
    let mut created = rs.create().map_err(ll_err)?;
    let ws = workspace_rights(abi);
    created = created
        .add_rule(PathBeneath::new(root, workspace.root_rights(ws)))
        .map_err(ll_err)?;
    created = created
        .add_rule(PathBeneath::new(tmp, workspace.tmp_rights(ws)))
        .map_err(ll_err)?;
    for (fd, rights) in workspace.extra_rules(ws, abi) {
        created = created
            .add_rule(PathBeneath::new(fd, rights))
            .map_err(ll_err)?;
    }
    if let (true, Some(port)) = (enf.tcp_rules, enf.tcp_connect_port) {
        created = created
            .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
            .map_err(ll_err)?;
    }
    for g in grants {
        created = created
            .add_rule(PathBeneath::new(g.fd.as_fd(), grant_rights(g, abi)))
            .map_err(ll_err)?;
    }
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or_else(|| SandboxError::Unsupported("Landlock ruleset was not created".into()))
}
