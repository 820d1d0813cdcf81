//! The private temp dir of each call (`TMPDIR`, `TMP`, `TEMP`, `HOME`), kept in a per-policy
//! pool of *slots* so a call normally neither creates nor removes a directory nor builds a
//! Landlock ruleset.
//!
//! # The guarantee
//!
//! Every call gets an empty private directory that no concurrent call can reach: a slot is
//! used by one call at a time, and its Landlock ruleset (built once, when the slot is made)
//! grants the root, the system paths and *that slot's* directory only.
//!
//! # Why a slot can be reused
//!
//! Before a slot is handed out it is checked to be indistinguishable from a freshly created
//! directory ([`Slot::is_fresh`]): the path still leads to the same inode on the same mount
//! (not renamed, replaced, or mounted over), it is a directory with mode 0700, the expected
//! owner and group, no subdirectory (link count 2), no entry at all, no extended attribute
//! (so no ACL), and the same inode flags (`chattr`) and project id as when it was made. A
//! command that left anything behind, or changed any of that, makes the check fail: the slot
//! is removed and a new one is made, exactly as if every call created its own. The check runs
//! when the slot is taken, so anything written into it between two calls (by a process of the
//! same uid outside the sandbox) is caught too. A slot whose call could not sweep every
//! process is never reused. Timestamps are the one thing that carries over.
//!
//! Slots live as long as their policy; the directories of policies still alive when the
//! process exits normally are removed by an exit handler (only in the process that made
//! them, not in a forked child).
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use rustix::fs::{
    flistxattr_query, ioctl_getflags, openat, statx, AtFlags, Mode, OFlags, RawDir, StatxFlags, CWD,
};

use crate::error::{Result, SandboxError};
use crate::sys;

static SLOT_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Directories of live slots, for the exit handler: `(pid that made them, paths)`.
static LIVE: Mutex<(u32, Vec<PathBuf>)> = Mutex::new((0, Vec::new()));
static EXIT_HOOK: std::sync::Once = std::sync::Once::new();

extern "C" fn remove_live_slots() {
    // try_lock: a call running on another thread at exit must not dead-lock the exit.
    let Ok(mut live) = LIVE.try_lock() else {
        return;
    };
    if live.0 != std::process::id() {
        return;
    }
    for path in live.1.drain(..) {
        if std::fs::remove_dir(&path).is_err() {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

fn register(path: &Path) {
    EXIT_HOOK.call_once(|| sys::at_exit(remove_live_slots));
    let mut live = match LIVE.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    let me = std::process::id();
    if live.0 != me {
        // First slot of this process (or of a forked child: the parent's list is not ours).
        live.0 = me;
        live.1.clear();
    }
    live.1.push(path.to_path_buf());
}

fn unregister(path: &Path) {
    let mut live = match LIVE.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    if let Some(i) = live.1.iter().position(|p| p == path) {
        live.1.swap_remove(i);
    }
}

/// What a fresh slot looks like (recorded when it is made).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: (u32, u32),
    ino: u64,
    mnt_id: u64,
    uid: u32,
    gid: u32,
    /// `FS_IOC_GETFLAGS` (None where the filesystem has none).
    flags: Option<u32>,
    /// `FS_IOC_FSGETXATTR` flags and project id (None where unsupported).
    fsx: Option<(u32, u32)>,
}

/// One private temp dir and the Landlock ruleset that grants it.
#[derive(Debug)]
pub(crate) struct Slot {
    path: PathBuf,
    identity: Identity,
    /// Held open so the inode cannot be freed and its number reused while the slot exists
    /// (a directory replaced by a new one always shows a different inode).
    pinned: Option<OwnedFd>,
    /// The ruleset for this slot (None in host mode).
    landlock: Option<OwnedFd>,
    /// The process that made the directory (a forked child's copy never removes it).
    maker: u32,
}

fn open_dir(path: &Path) -> rustix::io::Result<OwnedFd> {
    openat(
        CWD,
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

fn identity_of(fd: BorrowedFd<'_>) -> Option<(Identity, u32, u32)> {
    let st = statx(
        fd,
        c"",
        AtFlags::EMPTY_PATH,
        StatxFlags::BASIC_STATS | StatxFlags::MNT_ID,
    )
    .ok()?;
    let id = Identity {
        dev: (st.stx_dev_major, st.stx_dev_minor),
        ino: st.stx_ino,
        mnt_id: st.stx_mnt_id,
        uid: st.stx_uid,
        gid: st.stx_gid,
        flags: ioctl_getflags(fd).ok().map(|f| f.bits()),
        fsx: sys::fs_xattr(fd),
    };
    Some((id, u32::from(st.stx_mode), st.stx_nlink))
}

/// Only `.` and `..` in the directory.
fn is_empty(fd: BorrowedFd<'_>) -> bool {
    let mut buf = [MaybeUninit::<u8>::uninit(); 1024];
    let mut dir = RawDir::new(fd, &mut buf);
    while let Some(entry) = dir.next() {
        match entry {
            Ok(e) => {
                let name = e.file_name().to_bytes();
                if name != b"." && name != b".." {
                    return false;
                }
            }
            Err(_) => return false,
        }
    }
    true
}

impl Slot {
    /// Make a new private directory under the system temp dir, owned by `owner` (or this
    /// process), and its ruleset via `ruleset` (given the directory's descriptor).
    fn create(
        owner: Option<(u32, u32)>,
        ruleset: &dyn Fn(BorrowedFd<'_>) -> Result<Option<OwnedFd>>,
    ) -> Result<Self> {
        let n = SLOT_COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path =
            std::env::temp_dir().join(format!("helikon-sbx-{}-{n}-{nanos:x}", std::process::id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|e| SandboxError::io("create private temp dir", e))?;
        // From here on, dropping the half-made slot removes the directory.
        register(&path);
        let mut slot = Self {
            path,
            identity: Identity {
                dev: (0, 0),
                ino: 0,
                mnt_id: 0,
                uid: 0,
                gid: 0,
                flags: None,
                fsx: None,
            },
            pinned: None,
            landlock: None,
            maker: std::process::id(),
        };
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(&slot.path, Some(uid), Some(gid))
                .map_err(|e| SandboxError::io("chown private temp dir", e))?;
        }
        let fd = open_dir(&slot.path)
            .map_err(|e| SandboxError::io("open private temp dir", e.into()))?;
        let (identity, _, _) = identity_of(fd.as_fd())
            .ok_or_else(|| SandboxError::Spawn("cannot stat the private temp dir".into()))?;
        slot.identity = identity;
        slot.landlock = ruleset(fd.as_fd())?;
        slot.pinned = Some(fd);
        Ok(slot)
    }

    /// The directory's path (what `TMPDIR` and friends are set to).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The Landlock ruleset granting this slot (None in host mode).
    pub(crate) fn landlock(&self) -> Option<BorrowedFd<'_>> {
        self.landlock.as_ref().map(|fd| fd.as_fd())
    }

    /// Whether the directory is still exactly as it was made: see the module doc.
    pub(crate) fn is_fresh(&self) -> bool {
        let Ok(fd) = open_dir(&self.path) else {
            return false;
        };
        let Some((now, mode, nlink)) = identity_of(fd.as_fd()) else {
            return false;
        };
        now == self.identity
            && mode == (libc::S_IFDIR | 0o700)
            && nlink == 2
            && is_empty(fd.as_fd())
            && flistxattr_query(&fd).is_ok_and(|n| n == 0)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if self.maker != std::process::id() {
            return;
        }
        unregister(&self.path);
        if std::fs::remove_dir(&self.path).is_ok() {
            return;
        }
        if std::fs::remove_dir_all(&self.path).is_err() {
            // A command may have left directories without write or search permission.
            make_removable(&self.path);
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

fn make_removable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    // Never through a symlink (a command may have swapped its temp dir for one).
    if !std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) {
        return;
    }
    let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                make_removable(&e.path());
            }
        }
    }
}

/// The per-policy pool of slots not in use.
#[derive(Debug)]
pub(crate) struct SlotPool {
    owner: Option<(u32, u32)>,
    free: Mutex<Vec<Slot>>,
}

impl SlotPool {
    /// An empty pool whose slots will be owned by `owner` (None: by this process).
    pub(crate) fn new(owner: Option<(u32, u32)>) -> Self {
        Self {
            owner,
            free: Mutex::new(Vec::new()),
        }
    }

    /// A fresh slot: a free one that passes [`Slot::is_fresh`] (others are removed), or a
    /// new one whose ruleset `ruleset` builds.
    pub(crate) fn take(
        &self,
        ruleset: &dyn Fn(BorrowedFd<'_>) -> Result<Option<OwnedFd>>,
    ) -> Result<Slot> {
        loop {
            let candidate = match self.free.lock() {
                Ok(mut g) => g.pop(),
                Err(p) => p.into_inner().pop(),
            };
            match candidate {
                Some(slot) if slot.is_fresh() => return Ok(slot),
                Some(stale) => drop(stale),
                None => return Slot::create(self.owner, ruleset),
            }
        }
    }

    /// Return a slot after its call. `reusable` is false when the call could not make sure
    /// every process it started is gone; the slot is then removed.
    pub(crate) fn put_back(&self, slot: Slot, reusable: bool) {
        if !reusable {
            return;
        }
        match self.free.lock() {
            Ok(mut g) => g.push(slot),
            Err(p) => p.into_inner().push(slot),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn pool() -> SlotPool {
        SlotPool::new(None)
    }

    fn none(_: BorrowedFd<'_>) -> Result<Option<OwnedFd>> {
        Ok(None)
    }

    #[test]
    fn an_untouched_slot_is_reused_and_removed_at_the_end() {
        let p = pool();
        let a = p.take(&none).unwrap();
        let path = a.path().to_path_buf();
        assert!(a.is_fresh());
        p.put_back(a, true);
        let b = p.take(&none).unwrap();
        assert_eq!(b.path(), path);
        drop(b);
        assert!(!path.exists());
    }

    #[test]
    fn any_change_makes_a_slot_stale() {
        type Change = fn(&Path);
        let changes: [(&str, Change); 7] = [
            ("file", |d| std::fs::write(d.join("f"), "x").unwrap()),
            ("dotfile", |d| std::fs::write(d.join(".f"), "").unwrap()),
            ("subdir", |d| std::fs::create_dir(d.join("s")).unwrap()),
            ("mode", |d| {
                std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap()
            }),
            ("xattr", |d| {
                let c = std::ffi::CString::new(d.as_os_str().as_encoded_bytes()).unwrap();
                rustix::fs::setxattr(
                    c.as_c_str(),
                    c"user.helikon",
                    b"1",
                    rustix::fs::XattrFlags::empty(),
                )
                .unwrap();
            }),
            ("replaced", |d| {
                std::fs::remove_dir(d).unwrap();
                std::fs::create_dir(d).unwrap();
                std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700)).unwrap();
            }),
            ("symlinked", |d| {
                std::fs::remove_dir(d).unwrap();
                std::os::unix::fs::symlink("/tmp", d).unwrap();
            }),
        ];
        for (what, change) in changes {
            let p = pool();
            let a = p.take(&none).unwrap();
            let path = a.path().to_path_buf();
            change(&path);
            assert!(!a.is_fresh(), "{what}");
            p.put_back(a, true);
            let b = p.take(&none).unwrap();
            assert_ne!(b.path(), path, "{what}: a stale slot was handed out again");
            if what == "symlinked" {
                let _ = std::fs::remove_file(&path);
            }
        }
    }

    #[test]
    fn a_slot_that_may_still_be_in_use_is_not_reused() {
        let p = pool();
        let a = p.take(&none).unwrap();
        let path = a.path().to_path_buf();
        p.put_back(a, false);
        assert!(!path.exists());
        let b = p.take(&none).unwrap();
        assert_ne!(b.path(), path);
    }
}
