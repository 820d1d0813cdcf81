//! The child's side of `private_mounts` (see `crate::mount_plan`): a new mount namespace,
//! a read-only tmpfs root holding only the planned binds, `pivot_root` into it. Raw system
//! calls over the strings the host prepared; nothing allocates.
use libc::{c_int, c_ulong};

use super::raw;
use crate::mount_plan::{MountOp, MountPlan};

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
            } => {
                let mut flags = libc::MS_BIND | libc::MS_REC | libc::MS_NOSUID;
                raw::mount(src.as_ptr(), dst.as_ptr(), null, flags as c_ulong, null)?;
                if !*dev {
                    flags |= libc::MS_NODEV;
                }
                if !*writable {
                    flags |= libc::MS_RDONLY;
                }
                flags = (flags & !libc::MS_REC) | libc::MS_REMOUNT;
                raw::mount(null, dst.as_ptr(), null, flags as c_ulong, null)?;
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
