//! A directory opened as a capability: file operations that cannot leave it.
//!
//! [`ConfinedDir`] holds a cap-std [`Dir`] for the root. Every path is relative and resolved by
//! the kernel beneath the root's file descriptor (`openat2(RESOLVE_BENEATH)` through cap-std,
//! with cap-std's own checked walk where `openat2` is missing), so `..`, absolute paths and
//! symlinks that lead outside are refused even when a directory is swapped for a symlink between
//! a check and the use. Two rules go further than cap-std:
//!
//! * paths containing `..` or starting at `/` are refused before any lookup, with a reason;
//! * a regular file with more than one hard link is refused for reads and writes, because a
//!   hard link inside the root may be the same inode as a file outside it.
//!
//! Writes are atomic: the data goes to a fresh temporary file in the target's own directory,
//! is synced, then renamed over the target. A rename replaces the directory entry, so a target
//! that is (or becomes) a symlink or hard link is never written through.
use std::io::{Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::UNIX_EPOCH;

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, Metadata, MetadataExt, OpenOptions, OpenOptionsExt, PermissionsExt};
use serde::Serialize;

use crate::error::{Result, SandboxError};

/// What a directory entry is (symlinks are not followed for [`ConfinedDir::list`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// Anything else (FIFO, socket, device).
    Other,
}

/// Metadata of one path inside the root (symlinks inside the root are followed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EntryStat {
    /// What the path is.
    pub kind: EntryKind,
    /// Size in bytes.
    pub size: u64,
    /// Permission bits (`st_mode & 0o7777`).
    pub mode: u32,
    /// Number of hard links.
    pub nlink: u64,
    /// Last modification, milliseconds since the Unix epoch, when known.
    pub modified_ms: Option<i64>,
}

/// One entry of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DirEntryInfo {
    /// The entry's file name (lossily decoded as UTF-8).
    pub name: String,
    /// What it is, without following symlinks.
    pub kind: EntryKind,
    /// Size in bytes (of the link itself for symlinks).
    pub size: u64,
}

/// A directory opened once as a capability; all operations stay beneath it.
#[derive(Debug)]
pub struct ConfinedDir {
    dir: Dir,
    root: PathBuf,
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl ConfinedDir {
    /// Open `root` (which must be an existing directory) as the capability.
    ///
    /// # Errors
    /// [`SandboxError::NotFound`] when it does not exist, [`SandboxError::Io`] otherwise.
    pub fn open(root: impl AsRef<Path>) -> Result<Self> {
        let root = root.as_ref();
        let dir = Dir::open_ambient_dir(root, ambient_authority()).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                SandboxError::NotFound(root.display().to_string())
            } else {
                SandboxError::io(format!("open root {}", root.display()), e)
            }
        })?;
        let root = std::fs::canonicalize(root)
            .map_err(|e| SandboxError::io(format!("canonicalize {}", root.display()), e))?;
        Ok(Self { dir, root })
    }

    /// The root's canonical path as it was when opened (informational: operations use the
    /// descriptor, never this path).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The root directory's descriptor (used to build the Landlock rule and to pin the cwd of
    /// spawned children to the very directory that was opened).
    pub fn as_fd(&self) -> BorrowedFd<'_> {
        self.dir.as_fd()
    }

    /// Read a whole regular file of at most `max_bytes` bytes.
    ///
    /// # Errors
    /// `Denied` (escape, hard link), `NotFound`, `NotRegular`, `TooLarge`, `Io`.
    pub fn read(&self, path: &str, max_bytes: u64) -> Result<Vec<u8>> {
        let rel = check_relative(path)?;
        let mut opts = OpenOptions::new();
        opts.read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
        let mut file = self
            .dir
            .open_with(rel, &opts)
            .map_err(|e| map_io(path, "open", e))?;
        let meta = file.metadata().map_err(|e| map_io(path, "stat", e))?;
        check_regular(path, &meta)?;
        if meta.len() > max_bytes {
            return Err(SandboxError::TooLarge {
                path: path.to_string(),
                size: meta.len(),
                cap: max_bytes,
            });
        }
        let mut buf = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        (&mut file)
            .take(max_bytes.saturating_add(1))
            .read_to_end(&mut buf)
            .map_err(|e| map_io(path, "read", e))?;
        let len = buf.len() as u64;
        if len > max_bytes {
            return Err(SandboxError::TooLarge {
                path: path.to_string(),
                size: len,
                cap: max_bytes,
            });
        }
        Ok(buf)
    }

    /// Replace (or create) the file at `path` with `data`, atomically, creating missing
    /// parent directories inside the root. An existing file keeps its permission bits.
    ///
    /// # Errors
    /// `Denied` (escape, symlink or hard-linked target), `NotRegular` (a directory), `Io`.
    pub fn write_atomic(&self, path: &str, data: &[u8]) -> Result<()> {
        let rel = check_relative(path)?;
        let name = match rel.file_name() {
            Some(n) => n,
            None => return Err(SandboxError::denied(path, "names no file")),
        };
        let parent = rel.parent().unwrap_or(Path::new(""));
        let parent_dir = if parent.as_os_str().is_empty() {
            self.dir
                .try_clone()
                .map_err(|e| map_io(path, "open root", e))?
        } else {
            match self.dir.open_dir(parent) {
                Ok(d) => d,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    self.dir
                        .create_dir_all(parent)
                        .map_err(|e| map_io(path, "create parent directories", e))?;
                    self.dir
                        .open_dir(parent)
                        .map_err(|e| map_io(path, "open parent directory", e))?
                }
                Err(e) => return Err(map_io(path, "open parent directory", e)),
            }
        };
        let mut mode = 0o644;
        match parent_dir.symlink_metadata(name) {
            Ok(meta) => {
                if meta.file_type().is_symlink() {
                    return Err(SandboxError::denied(
                        path,
                        "is a symbolic link; write to the file it points at instead",
                    ));
                }
                check_regular(path, &meta)?;
                mode = meta.permissions().mode() & 0o7777;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(map_io(path, "stat", e)),
        }
        let tmp_name = temp_name(&name.to_string_lossy());
        let mut opts = OpenOptions::new();
        opts.write(true)
            .create_new(true)
            .mode(mode)
            .follow(FollowSymlinks::No);
        let mut tmp = parent_dir
            .open_with(&tmp_name, &opts)
            .map_err(|e| map_io(path, "create temporary file", e))?;
        let written = tmp
            .write_all(data)
            .and_then(|()| tmp.sync_all())
            .and_then(|()| {
                drop(tmp);
                parent_dir.rename(&tmp_name, &parent_dir, name)
            });
        if let Err(e) = written {
            let _ = parent_dir.remove_file(&tmp_name);
            return Err(map_io(path, "write", e));
        }
        Ok(())
    }

    /// Metadata of `path` (`""` or `"."` is the root); symlinks inside the root are followed.
    ///
    /// # Errors
    /// `Denied` (escape), `NotFound`, `Io`.
    pub fn stat(&self, path: &str) -> Result<EntryStat> {
        let rel = check_relative(path)?;
        let meta = if is_root(rel) {
            self.dir.dir_metadata()
        } else {
            self.dir.metadata(rel)
        }
        .map_err(|e| map_io(path, "stat", e))?;
        Ok(entry_stat(&meta))
    }

    /// Whether `path` exists inside the root. A path that would escape is an error, not
    /// `false`, so nothing is learnt about the outside.
    ///
    /// # Errors
    /// `Denied` (escape), `Io`.
    pub fn exists(&self, path: &str) -> Result<bool> {
        match self.stat(path) {
            Ok(_) => Ok(true),
            Err(SandboxError::NotFound(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// The entries of the directory `path` (`""` or `"."` is the root), sorted by name.
    ///
    /// # Errors
    /// `Denied` (escape), `NotFound`, `Io`.
    pub fn list(&self, path: &str) -> Result<Vec<DirEntryInfo>> {
        let rel = check_relative(path)?;
        let entries = if is_root(rel) {
            self.dir.entries()
        } else {
            self.dir.read_dir(rel)
        }
        .map_err(|e| map_io(path, "list", e))?;
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| map_io(path, "list", e))?;
            let meta = entry.metadata().map_err(|e| map_io(path, "list", e))?;
            out.push(DirEntryInfo {
                name: entry.file_name().to_string_lossy().into_owned(),
                kind: kind_of(&meta),
                size: meta.len(),
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }
}

/// Lexical checks done before any lookup: relative, no `..`, no NUL.
fn check_relative(path: &str) -> Result<&Path> {
    if path.contains('\0') {
        return Err(SandboxError::denied(path, "contains a NUL byte"));
    }
    let p = Path::new(path);
    if p.is_absolute() {
        return Err(SandboxError::denied(
            path,
            "absolute paths are not allowed; give a path relative to the root",
        ));
    }
    if p.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(SandboxError::denied(
            path,
            "'..' components are not allowed (the path must stay inside the root)",
        ));
    }
    Ok(p)
}

fn is_root(rel: &Path) -> bool {
    rel.components().all(|c| matches!(c, Component::CurDir))
}

fn check_regular(path: &str, meta: &Metadata) -> Result<()> {
    if meta.is_dir() {
        return Err(SandboxError::NotRegular {
            path: path.to_string(),
            what: "a directory".into(),
        });
    }
    if !meta.is_file() {
        return Err(SandboxError::NotRegular {
            path: path.to_string(),
            what: "not a regular file".into(),
        });
    }
    if meta.nlink() > 1 {
        return Err(SandboxError::denied(
            path,
            format!(
                "regular file has {} hard links; it may be the same file as one outside the root",
                meta.nlink()
            ),
        ));
    }
    Ok(())
}

fn kind_of(meta: &Metadata) -> EntryKind {
    let ft = meta.file_type();
    if ft.is_symlink() {
        EntryKind::Symlink
    } else if ft.is_dir() {
        EntryKind::Dir
    } else if ft.is_file() {
        EntryKind::File
    } else {
        EntryKind::Other
    }
}

fn entry_stat(meta: &Metadata) -> EntryStat {
    let modified_ms = meta
        .modified()
        .ok()
        .map(|t| t.into_std())
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_millis()).ok());
    EntryStat {
        kind: kind_of(meta),
        size: meta.len(),
        mode: meta.mode() & 0o7777,
        nlink: meta.nlink(),
        modified_ms,
    }
}

fn temp_name(target: &str) -> String {
    let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let suffix = format!(".helikon-tmp-{}-{n}-{nanos:x}", std::process::id());
    // Keep the name under NAME_MAX (255) whatever the target's length.
    let keep: String = target.chars().take(120).collect();
    format!(".{keep}{suffix}")
}

/// Turn a cap-std error into a [`SandboxError`] that says why.
fn map_io(path: &str, doing: &str, e: std::io::Error) -> SandboxError {
    use std::io::ErrorKind;
    // cap-std reports a resolution that would leave the root as PermissionDenied without an
    // OS error code (the kernel's EXDEV from RESOLVE_BENEATH is translated to it).
    if e.kind() == ErrorKind::PermissionDenied && e.raw_os_error().is_none() {
        return SandboxError::denied(
            path,
            "resolves outside the root (through a symbolic link or a magic link)",
        );
    }
    match e.raw_os_error() {
        Some(libc::EXDEV) => {
            return SandboxError::denied(path, "resolves outside the root");
        }
        Some(libc::ELOOP) => {
            return SandboxError::denied(path, "too many levels of symbolic links");
        }
        Some(libc::ENOTDIR) => {
            return SandboxError::NotRegular {
                path: path.to_string(),
                what: "a path component is not a directory".into(),
            };
        }
        Some(libc::EISDIR) => {
            return SandboxError::NotRegular {
                path: path.to_string(),
                what: "a directory".into(),
            };
        }
        _ => {}
    }
    if e.kind() == ErrorKind::NotFound {
        return SandboxError::NotFound(path.to_string());
    }
    SandboxError::io(format!("{doing} '{path}'"), e)
}
