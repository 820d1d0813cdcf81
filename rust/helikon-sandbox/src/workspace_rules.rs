//! Kernel-enforced effects inside the workspace, whatever program runs.
//!
//! A deny rule on a program name is a static promise (a copied or renamed `rm` is another
//! name); these are enforced by Landlock on every path beneath the root instead:
//!
//! * `deny_delete`: the root loses `REMOVE_FILE`, `REMOVE_DIR` and `TRUNCATE` (Landlock ABI
//!   3, Linux 6.2), so `unlink`, `rmdir`, `rename` of or over an existing entry, `O_TRUNC`
//!   and `truncate` fail with `EACCES`. Paths listed in `deny_delete_except` (relative,
//!   existing when the policy is built, e.g. `.git` so that git can replace its lock files)
//!   keep every workspace right. Overwriting a file's bytes in place stays possible.
//! * `no_exec_in_workspace`: the root and the private temp dir lose `EXECUTE`, so a binary
//!   copied or written there cannot be run (`execve` fails with `EACCES`); scripts can still
//!   be run through an interpreter from a system directory (`sh script.sh`).
//!
//! Landlock only adds rights beneath a rule, so a read-only subtree inside a writable root
//! cannot be expressed with it; that needs a mount namespace (not done here).
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use landlock::{AccessFs, BitFlags, ABI};
use rustix::fs::{fstat, openat2, FileType, Mode, OFlags, ResolveFlags};

use crate::config::SandboxConfig;
use crate::error::{Result, SandboxError};
use crate::probe::kernel_for_abi;

/// Landlock ABI that adds `TRUNCATE`.
const TRUNCATE_ABI: i32 = 3;

/// The prepared workspace rules of one policy.
#[derive(Debug, Default)]
pub(crate) struct WorkspaceRules {
    deny_delete: bool,
    no_exec: bool,
    /// Paths beneath the root that keep every workspace right under `deny_delete`.
    exceptions: Vec<(OwnedFd, PathBuf, bool)>,
}

fn is_plain_relative(p: &Path) -> bool {
    !p.as_os_str().is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)))
}

impl WorkspaceRules {
    /// Check the settings against the kernel (`abi`) and open the exception paths beneath
    /// `root` (no symlinks, no `..`).
    ///
    /// # Errors
    /// [`SandboxError::Config`] for an exception path that is not a plain relative path, does
    /// not exist or is given without `deny_delete`; [`SandboxError::Unsupported`] when
    /// `deny_delete` is asked on a kernel without Landlock `TRUNCATE`.
    pub(crate) fn prepare(cfg: &SandboxConfig, root: BorrowedFd<'_>, abi: i32) -> Result<Self> {
        if !cfg.deny_delete && !cfg.deny_delete_except.is_empty() {
            return Err(SandboxError::Config(
                "deny_delete_except needs deny_delete=true".into(),
            ));
        }
        if cfg.deny_delete && abi < TRUNCATE_ABI {
            return Err(SandboxError::Unsupported(format!(
                "deny_delete needs Landlock ABI {TRUNCATE_ABI} ({}) to refuse truncation; this \
                 kernel has ABI {abi}",
                kernel_for_abi(TRUNCATE_ABI)
            )));
        }
        let mut exceptions = Vec::new();
        for p in &cfg.deny_delete_except {
            if !is_plain_relative(p) {
                return Err(SandboxError::Config(format!(
                    "deny_delete_except: {} must be a relative path inside the root without \
                     '..' or '.'",
                    p.display()
                )));
            }
            let fd = openat2(
                root,
                p,
                OFlags::PATH | OFlags::CLOEXEC,
                Mode::empty(),
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
            )
            .map_err(|e| {
                SandboxError::Config(format!(
                    "deny_delete_except: {} cannot be opened inside the root ({}); it must \
                     exist and not be or pass through a symlink",
                    p.display(),
                    std::io::Error::from(e)
                ))
            })?;
            let st = fstat(&fd).map_err(|e| SandboxError::io("stat an exception", e.into()))?;
            let is_dir = FileType::from_raw_mode(st.st_mode) == FileType::Directory;
            exceptions.push((fd, p.clone(), is_dir));
        }
        Ok(Self {
            deny_delete: cfg.deny_delete,
            no_exec: cfg.no_exec_in_workspace,
            exceptions,
        })
    }

    /// Rights of the root, from the default workspace rights `base`.
    pub(crate) fn root_rights(&self, base: BitFlags<AccessFs>) -> BitFlags<AccessFs> {
        let mut r = base;
        if self.deny_delete {
            r &= !(AccessFs::RemoveFile | AccessFs::RemoveDir | AccessFs::Truncate);
            // Refer (ABI 2) lets a file move between directories; without removal it is
            // pointless and only widens what a link can do.
            r &= !AccessFs::Refer;
        }
        if self.no_exec {
            r &= !AccessFs::Execute;
        }
        r
    }

    /// Rights of the private temp dir.
    pub(crate) fn tmp_rights(&self, base: BitFlags<AccessFs>) -> BitFlags<AccessFs> {
        if self.no_exec {
            base & !AccessFs::Execute
        } else {
            base
        }
    }

    /// Extra rules: each exception with the workspace rights (minus `EXECUTE` under
    /// `no_exec_in_workspace`).
    pub(crate) fn extra_rules(
        &self,
        base: BitFlags<AccessFs>,
        abi: ABI,
    ) -> impl Iterator<Item = (BorrowedFd<'_>, BitFlags<AccessFs>)> {
        let rights = self.tmp_rights(base);
        let file_rights = rights & AccessFs::from_file(abi);
        self.exceptions
            .iter()
            .map(move |(fd, _, is_dir)| (fd.as_fd(), if *is_dir { rights } else { file_rights }))
    }

    /// What these rules add to the guarantees' notes.
    pub(crate) fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.deny_delete {
            let mut n = "deny_delete: unlink, rmdir, rename over or away from an entry and \
                         truncation are refused by Landlock in the root"
                .to_string();
            if !self.exceptions.is_empty() {
                let names: Vec<String> = self
                    .exceptions
                    .iter()
                    .map(|(_, p, _)| p.display().to_string())
                    .collect();
                n.push_str(&format!(" except beneath {}", names.join(", ")));
            }
            n.push_str("; overwriting bytes in place is still possible");
            notes.push(n);
        }
        if self.no_exec {
            notes.push(
                "no_exec_in_workspace: files in the root and the temp dir cannot be executed \
                 (execve); interpreters from system directories still run scripts"
                    .to_string(),
            );
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use landlock::Access;

    #[test]
    fn plain_relative_paths_only() {
        assert!(is_plain_relative(Path::new(".git")));
        assert!(is_plain_relative(Path::new("a/b")));
        assert!(!is_plain_relative(Path::new("")));
        assert!(!is_plain_relative(Path::new("/etc")));
        assert!(!is_plain_relative(Path::new("../x")));
        assert!(!is_plain_relative(Path::new("./x")));
        assert!(!is_plain_relative(Path::new("a/../b")));
    }

    #[test]
    fn rights_lose_exactly_what_was_asked() {
        let abi = ABI::V5;
        let base = AccessFs::from_all(abi);
        let none = WorkspaceRules::default();
        assert_eq!(none.root_rights(base), base);
        let dd = WorkspaceRules {
            deny_delete: true,
            ..Default::default()
        };
        let r = dd.root_rights(base);
        assert!(!r.contains(AccessFs::RemoveFile));
        assert!(!r.contains(AccessFs::RemoveDir));
        assert!(!r.contains(AccessFs::Truncate));
        assert!(r.contains(AccessFs::WriteFile | AccessFs::MakeReg | AccessFs::Execute));
        assert_eq!(dd.tmp_rights(base), base);
        let nx = WorkspaceRules {
            no_exec: true,
            ..Default::default()
        };
        assert_eq!(nx.root_rights(base), base & !AccessFs::Execute);
        assert_eq!(nx.tmp_rights(base), base & !AccessFs::Execute);
    }
}
