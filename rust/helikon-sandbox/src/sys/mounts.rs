//! The child's side of `private_mounts` (see `crate::mount_plan`): a new mount namespace,
//! a read-only tmpfs root holding only the planned binds, `pivot_root` into it. Raw system
//! calls over the strings the host prepared; nothing allocates.
use libc::{c_int, c_ulong};

use super::raw;
use crate::mount_plan::{IdMaps, MountOp, MountPlan};

const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
const RESOLVE_NO_SYMLINKS: u64 = 0x04;
const RESOLVE_BENEATH: u64 = 0x08;
const OPEN_TREE_CLONE: u32 = 1;
const AT_RECURSIVE: u32 = 0x8000;
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;
const MOUNT_ATTR_NOEXEC: u64 = 0x8;
const MOVE_MOUNT_F_EMPTY_PATH: u32 = 0x4;
const MOVE_MOUNT_T_EMPTY_PATH: u32 = 0x40;

/// Cover `rel` (relative to the cwd, the workspace) with a read-only copy of itself. A
/// missing path is skipped; a symlink anywhere on the way is an error (`ELOOP`).
fn protect(rel: *const libc::c_char) -> Result<(), c_int> {
    let flags = (libc::O_PATH | libc::O_CLOEXEC) as u64;
    let resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    let fd = match raw::openat2_cwd(rel, flags, resolve) {
        Ok(fd) => fd as c_int,
        Err(libc::ENOENT) => return Ok(()),
        Err(e) => return Err(e),
    };
    let result = (|| {
        let tree = raw::open_tree(
            fd,
            OPEN_TREE_CLONE | AT_RECURSIVE | libc::AT_EMPTY_PATH as u32 | libc::O_CLOEXEC as u32,
        )? as c_int;
        let r = raw::mount_setattr(
            tree,
            libc::AT_EMPTY_PATH as u32 | AT_RECURSIVE,
            MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
        )
        .and_then(|_| raw::move_mount(tree, fd, MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH));
        let _ = raw::close(tree);
        r
    })();
    let _ = raw::close(fd);
    result.map(|_| ())
}

/// Write `data` to the existing file `path` (one `write`).
fn write_file(path: &core::ffi::CStr, data: &[u8]) -> Result<(), c_int> {
    let fd = raw::open_mode(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC, 0)? as c_int;
    let r = raw::write(fd, data);
    let _ = raw::close(fd);
    match r {
        Ok(n) if n == data.len() => Ok(()),
        Ok(_) => Err(libc::EIO),
        Err(e) => Err(e),
    }
}

/// Enter a new user namespace mapping this process's uid and gid to themselves: the child
/// then holds every capability over the namespaces it creates next (and none outside; an
/// `execve` as a non-zero uid clears them).
pub(super) fn enter_user_namespace(maps: &IdMaps) -> Result<(), c_int> {
    raw::unshare(libc::CLONE_NEWUSER)?;
    write_file(c"/proc/self/setgroups", b"deny")?;
    write_file(c"/proc/self/uid_map", maps.uid_map.as_bytes())?;
    write_file(c"/proc/self/gid_map", maps.gid_map.as_bytes())?;
    Ok(())
}

/// Make the mount at `path` (and every mount beneath it) read-only unless `writable`,
/// `nosuid`, `nodev` unless `dev`, and `noexec` if `noexec`. Only adds restrictions
/// (`mount_setattr`), so flags a user namespace cannot clear (a locked `noexec`, `noatime`)
/// stay as they are.
fn restrict(
    path: *const libc::c_char,
    writable: bool,
    dev: bool,
    noexec: bool,
) -> Result<(), c_int> {
    let flags = libc::O_PATH | libc::O_CLOEXEC | libc::O_NOFOLLOW;
    let fd = raw::open_mode(path, flags, 0)? as c_int;
    let mut attrs = MOUNT_ATTR_NOSUID;
    if !dev {
        attrs |= MOUNT_ATTR_NODEV;
    }
    if !writable {
        attrs |= MOUNT_ATTR_RDONLY;
    }
    if noexec {
        attrs |= MOUNT_ATTR_NOEXEC;
    }
    let r = raw::mount_setattr(fd, libc::AT_EMPTY_PATH as u32 | AT_RECURSIVE, attrs);
    let _ = raw::close(fd);
    r.map(|_| ())
}

/// Build the view and enter it. `Err(errno)` names nothing more: the caller reports the
/// step.
pub(super) fn enter(plan: &MountPlan) -> Result<(), c_int> {
    let null = std::ptr::null::<libc::c_char>();
    raw::unshare(libc::CLONE_NEWNS)?;
    // Nothing done here may propagate back to the host's mounts.
    raw::mount(
        null,
        c"/".as_ptr(),
        null,
        (libc::MS_REC | libc::MS_PRIVATE) as c_ulong,
        null,
    )?;
    // Read-only subtrees of the workspace, while it is still the cwd (fchdir'd before):
    // opened beneath it without following any symlink, then covered by a read-only copy of
    // themselves, which the workspace bind below carries along (MS_REC).
    for rel in &plan.read_only {
        protect(rel.as_ptr())?;
    }
    let stage = plan.stage.as_ptr();
    raw::mount(
        c"tmpfs".as_ptr(),
        stage,
        c"tmpfs".as_ptr(),
        (libc::MS_NOSUID | libc::MS_NODEV) as c_ulong,
        c"mode=0755,size=1m".as_ptr(),
    )?;
    for op in &plan.ops {
        match op {
            MountOp::Dir(p) => match raw::mkdir(p.as_ptr(), 0o755) {
                Ok(_) | Err(libc::EEXIST) => {}
                Err(e) => return Err(e),
            },
            MountOp::File(p) => {
                let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC | libc::O_NOFOLLOW;
                match raw::open_mode(p.as_ptr(), flags, 0o644) {
                    Ok(fd) => {
                        let _ = raw::close(fd as c_int);
                    }
                    Err(libc::EEXIST) => {}
                    Err(e) => return Err(e),
                }
            }
            MountOp::Bind {
                src,
                dst,
                writable,
                dev,
                noexec,
            } => {
                let flags = libc::MS_BIND | libc::MS_REC | libc::MS_NOSUID;
                raw::mount(src.as_ptr(), dst.as_ptr(), null, flags as c_ulong, null)?;
                restrict(dst.as_ptr(), *writable, *dev, *noexec)?;
            }
        }
    }
    // The staging tmpfs itself becomes read-only: a fresh, empty and unwritable /tmp and /.
    raw::mount(
        null,
        stage,
        null,
        (libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV) as c_ulong,
        null,
    )?;
    raw::chdir(stage)?;
    raw::pivot_root(c".".as_ptr(), c".".as_ptr())?;
    // The old root is now stacked on "."; detach it so nothing of the host's tree stays
    // reachable (also not through a descriptor's `..`).
    raw::umount2(c".".as_ptr(), libc::MNT_DETACH)?;
    raw::chdir(c"/".as_ptr())?;
    raw::chdir(plan.cwd.as_ptr())?;
    Ok(())
}
