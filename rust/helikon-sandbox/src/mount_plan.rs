//! `private_mounts`: the child's own mount namespace showing only what it may use.
//!
//! Landlock decides what a command may open, but not what it may `stat`, `access`, `chmod`,
//! `chown`, `utime` or `setxattr`: those metadata calls reach every path the uid may
//! traverse. With `private_mounts`, the child (still privileged, before the uid drop) enters
//! a new mount namespace whose root is a small read-only tmpfs holding only bind mounts of
//! the paths the Landlock rules grant: the system directories, `read_paths` and the `/etc`
//! and `/dev` entries read-only, the workspace and the private temp dir read-write. Every
//! other path does not exist for the command (`ENOENT`), so metadata calls and existence
//! probes outside the allowed set fail; the read-only binds make `chmod`/`utime`/`setxattr`
//! on system files fail with `EROFS` whatever the uid. Landlock and seccomp still apply on
//! top (their rules follow inodes, so the binds keep them).
//!
//! The plan is prepared here, in the host, as NUL-terminated strings; the child only walks
//! it with raw system calls (see `sys::mounts`). It needs `CAP_SYS_ADMIN` in the child, so
//! when the host runs as root with `run_as` the child has it before the uid drop; a host that
//! is not root gets it from an unprivileged user namespace the child enters first
//! ([`IdMaps`]). Where the kernel refuses that, the build's self-test fails and the policy is
//! refused (fail closed).
use std::collections::BTreeSet;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use crate::error::{Result, SandboxError};

/// One step of the plan, executed in order by the child.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum MountOp {
    /// Create a directory (an existing one is fine).
    Dir(CString),
    /// Create an empty file as a mount point (an existing one is fine).
    File(CString),
    /// Bind `src` at `dst` (recursive, nosuid), then make it read-only unless `writable`.
    Bind {
        src: CString,
        dst: CString,
        writable: bool,
        /// Keep device nodes usable (the `/dev` entries); else `nodev`.
        dev: bool,
        /// `noexec` (the workspace and temp dir under `no_exec_in_workspace`): nothing on
        /// it can be executed or mapped executable (`ld.so ./x`, `dlopen`).
        noexec: bool,
    },
}

/// Everything the child needs to build its view: where to stage it, the steps, and where
/// to change directory once it is the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MountPlan {
    /// An empty directory of the host's, mounted over (in the child's namespace only).
    pub stage: CString,
    /// The steps.
    pub ops: Vec<MountOp>,
    /// The workspace path, the cwd after the pivot.
    pub cwd: CString,
    /// Paths relative to the workspace shown read-only (`read_only_paths`).
    pub read_only: Vec<CString>,
}

/// The `uid_map` and `gid_map` lines of the child's user namespace (`"ID ID 1\n"`): for a
/// host that is not root, the child first enters a new user namespace with these one-line
/// maps (its own uid and gid mapped to themselves), which gives it `CAP_SYS_ADMIN` over the
/// mount and network namespaces it then creates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IdMaps {
    pub uid_map: CString,
    pub gid_map: CString,
}

impl IdMaps {
    /// Map `uid` and `gid` to themselves (the only mapping an unprivileged process may
    /// write).
    pub(crate) fn identity(uid: u32, gid: u32) -> Self {
        let line = |id: u32| CString::new(format!("{id} {id} 1\n")).unwrap_or_default();
        Self {
            uid_map: line(uid),
            gid_map: line(gid),
        }
    }
}

/// How a path is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Visible {
    /// Read-only bind (nodev).
    ReadOnly,
    /// Read-only bind keeping device nodes.
    Device,
    /// Read-write bind.
    Writable,
    /// Read-write bind, `noexec`.
    WritableNoExec,
}

fn cstring(p: &Path) -> Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| SandboxError::Config(format!("{}: path contains a NUL byte", p.display())))
}

/// Build the plan for `paths` (absolute, existing; missing ones are skipped), staged at
/// `stage`, with `cwd` as the working directory.
///
/// # Errors
/// [`SandboxError::Config`] for a relative path or one with a NUL byte.
pub(crate) fn plan(
    stage: &Path,
    paths: &[(PathBuf, Visible)],
    cwd: &Path,
    read_only: &[PathBuf],
) -> Result<MountPlan> {
    let mut sorted: Vec<&(PathBuf, Visible)> = paths.iter().collect();
    // Parents before children, so a bind inside another bind lands on top of it.
    sorted.sort_by_key(|(p, _)| p.components().count());
    let mut made: BTreeSet<PathBuf> = BTreeSet::new();
    let mut ops = Vec::new();
    for (path, how) in sorted {
        if !path.is_absolute() {
            return Err(SandboxError::Config(format!(
                "private_mounts: {} is not absolute",
                path.display()
            )));
        }
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        let mut at = stage.to_path_buf();
        let comps: Vec<Component<'_>> = path.components().skip(1).collect();
        let last = comps.len().saturating_sub(1);
        for (i, c) in comps.iter().enumerate() {
            at.push(c.as_os_str());
            if i == last {
                break;
            }
            if made.insert(at.clone()) {
                ops.push(MountOp::Dir(cstring(&at)?));
            }
        }
        if made.insert(at.clone()) {
            ops.push(if meta.is_dir() {
                MountOp::Dir(cstring(&at)?)
            } else {
                MountOp::File(cstring(&at)?)
            });
        }
        ops.push(MountOp::Bind {
            src: cstring(path)?,
            dst: cstring(&at)?,
            writable: matches!(how, Visible::Writable | Visible::WritableNoExec),
            dev: *how == Visible::Device,
            noexec: *how == Visible::WritableNoExec,
        });
    }
    Ok(MountPlan {
        stage: cstring(stage)?,
        ops,
        cwd: cstring(cwd)?,
        read_only: read_only
            .iter()
            .map(|p| cstring(p))
            .collect::<Result<Vec<_>>>()?,
    })
}

/// The empty host directory the child mounts its tmpfs on; removed when dropped.
#[derive(Debug)]
pub(crate) struct Stage(PathBuf);

impl Stage {
    /// Create a fresh `0700` directory in the temp dir.
    ///
    /// # Errors
    /// [`SandboxError::Io`] when it cannot be created.
    pub(crate) fn create() -> Result<Self> {
        use std::os::unix::fs::DirBuilderExt;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path =
            std::env::temp_dir().join(format!("helikon-stage-{}-{nanos:x}", std::process::id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|e| SandboxError::io(format!("create {}", path.display()), e))?;
        Ok(Self(path))
    }

    /// Its path.
    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn c(s: &str) -> CString {
        CString::new(s).unwrap()
    }

    #[test]
    fn parents_first_and_each_directory_once() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        let file = dir.path().join("f.txt");
        std::fs::write(&file, "x").unwrap();
        let paths = vec![
            (ws.clone(), Visible::Writable),
            (file.clone(), Visible::ReadOnly),
            (PathBuf::from("/nonexistent-helikon"), Visible::ReadOnly),
            (PathBuf::from("/usr"), Visible::ReadOnly),
        ];
        let p = plan(Path::new("/stage"), &paths, &ws, &[".git".into()]).unwrap();
        assert_eq!(p.read_only, vec![c(".git")]);
        assert_eq!(p.stage, c("/stage"));
        assert_eq!(p.cwd, cstring(&ws).unwrap());
        // /usr has one component, so it comes first.
        assert_eq!(p.ops[0], MountOp::Dir(c("/stage/usr")));
        assert_eq!(
            p.ops[1],
            MountOp::Bind {
                src: c("/usr"),
                dst: c("/stage/usr"),
                writable: false,
                dev: false,
                noexec: false
            }
        );
        let base = format!("/stage{}", dir.path().display());
        let dirs: Vec<&MountOp> = p
            .ops
            .iter()
            .filter(|o| matches!(o, MountOp::Dir(d) if d.as_bytes() == base.as_bytes()))
            .collect();
        assert_eq!(dirs.len(), 1, "{:?}", p.ops);
        assert!(p.ops.contains(&MountOp::File(c(&format!("{base}/f.txt")))));
        assert!(p.ops.contains(&MountOp::Bind {
            src: cstring(&ws).unwrap(),
            dst: c(&format!("{base}/ws")),
            writable: true,
            dev: false,
            noexec: false
        }));
        assert!(!p.ops.iter().any(
            |o| matches!(o, MountOp::Bind { src, .. } if src.as_bytes() == b"/nonexistent-helikon")
        ));
        assert!(plan(
            Path::new("/s"),
            &[(PathBuf::from("rel"), Visible::ReadOnly)],
            &ws,
            &[]
        )
        .is_err());
    }

    #[test]
    fn stage_is_created_and_removed() {
        let s = Stage::create().unwrap();
        let p = s.path().to_path_buf();
        assert!(p.is_dir());
        drop(s);
        assert!(!p.exists());
    }
}
