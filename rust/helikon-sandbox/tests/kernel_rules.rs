//! `deny_delete` and `no_exec_in_workspace`: effects refused by the kernel whatever program
//! runs (copied, symlinked or interpreted spellings included), with the everyday commands
//! that must keep working.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;
use std::os::unix::fs::chown;
use std::path::Path;
use std::process::Command;

use common::{fixture_with, py, Fixture, NOBODY};
use helikon_sandbox::{Mode, SandboxError, SandboxPolicy};

fn deny_delete(except: &[&str]) -> Fixture {
    let except: Vec<String> = except.iter().map(|s| s.to_string()).collect();
    fixture_with(Mode::OsSandbox, move |c| {
        fs::create_dir(c.root.join("keep")).unwrap();
        fs::write(c.root.join("keep/file.txt"), "kept").unwrap();
        for p in [c.root.join("keep"), c.root.join("keep/file.txt")] {
            chown(&p, Some(NOBODY.0), Some(NOBODY.1)).unwrap();
        }
        if !except.is_empty() {
            git_init(&c.root);
        }
        c.deny_delete = true;
        c.deny_delete_except = except.iter().map(Into::into).collect();
    })
}

fn git_init(root: &Path) {
    let ok = Command::new("git")
        .args(["init", "-q"])
        .current_dir(root)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let ok = Command::new("chown")
        .args(["-R", "65534:65534", ".git"])
        .current_dir(root)
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

const EACCES_TEXT: &str = "Permission denied";

#[test]
fn deletion_is_refused_in_every_spelling() {
    let f = deny_delete(&[]);
    let spellings = [
        "rm notes.txt",
        "rm -f notes.txt",
        "cp /bin/rm ./x && ./x notes.txt",
        "ln -s /bin/rm ./r && ./r notes.txt",
        "cp /bin/rm \"$TMPDIR/x\" && \"$TMPDIR/x\" notes.txt",
        "unlink notes.txt",
        "find . -name notes.txt -delete",
        "mv notes.txt moved.txt",
        "mv notes.txt keep/",
        "rm -r keep",
        "rmdir keep",
    ];
    for cmd in spellings {
        let out = f.run(cmd);
        assert_ne!(out.exit_code, Some(0), "{cmd}: {out:?}");
        assert!(out.stderr.contains(EACCES_TEXT), "{cmd}: {}", out.stderr);
        assert_eq!(
            fs::read_to_string(f.root.join("notes.txt")).unwrap(),
            "alpha\nbeta\ngamma\n",
            "{cmd}"
        );
        assert_eq!(
            fs::read_to_string(f.root.join("keep/file.txt")).unwrap(),
            "kept"
        );
    }
    for (what, code) in [
        ("unlink", "os.unlink(\"notes.txt\")"),
        ("rmdir", "os.rmdir(\"keep\")"),
        ("rename", "os.rename(\"notes.txt\", \"n2\")"),
        (
            "replace",
            "open(\"n3\",\"w\").close(); os.replace(\"n3\", \"notes.txt\")",
        ),
        ("truncate", "os.truncate(\"notes.txt\", 0)"),
        ("O_TRUNC", "os.open(\"notes.txt\", os.O_WRONLY|os.O_TRUNC)"),
        (
            "ftruncate",
            "fd=os.open(\"notes.txt\", os.O_WRONLY); os.ftruncate(fd, 0)",
        ),
    ] {
        let out = f.run(&py(&format!(
            "import os\ntry:\n {code}\n print(\"DONE\")\nexcept OSError as e:\n print(e.errno)"
        )));
        assert_eq!(out.stdout, "13\n", "{what}: {out:?}");
    }
    for cmd in [
        "truncate -s 0 notes.txt",
        ": > notes.txt",
        "cp keep/file.txt notes.txt",
    ] {
        let out = f.run(cmd);
        assert_ne!(out.exit_code, Some(0), "{cmd}");
        assert!(out.stderr.contains(EACCES_TEXT), "{cmd}: {}", out.stderr);
    }
    assert_eq!(
        fs::read_to_string(f.root.join("notes.txt")).unwrap(),
        "alpha\nbeta\ngamma\n"
    );
    // Creating, appending and working in the temp dir still work.
    let out = f.run(
        "echo new > new.txt && echo more >> notes.txt && mkdir d && echo x > d/y && \
         cat new.txt d/y && t=\"$TMPDIR/t\" && echo tmp > \"$t\" && rm \"$t\" && echo ok",
    );
    assert_eq!(out.stdout, "new\nx\nok\n", "{out:?}");
    let g = f.policy.guarantees();
    assert!(
        g.notes
            .iter()
            .any(|n| n.starts_with("deny_delete: unlink, rmdir")),
        "{:?}",
        g.notes
    );
}

#[test]
fn git_commit_needs_the_git_exception() {
    let f = deny_delete(&[".git"]);
    let commit = "git add notes.txt && git -c user.name=t -c user.email=t@e commit -qm one && \
                  echo more >> notes.txt && git -c user.name=t -c user.email=t@e commit -qam two \
                  && git log --oneline | wc -l";
    let out = f.run(commit);
    assert_eq!(out.stdout.trim(), "2", "{out:?}");
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    // The exception covers .git only.
    let out = f.run("rm notes.txt");
    assert!(out.stderr.contains(EACCES_TEXT));
    // Without it, git cannot replace its index (a rename over an existing file).
    let tmp = tempfile::tempdir().unwrap();
    fs::set_permissions(
        tmp.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let root = tmp.path().join("root");
    fs::create_dir(&root).unwrap();
    chown(&root, Some(NOBODY.0), Some(NOBODY.1)).unwrap();
    git_init(&root);
    fs::write(root.join("a.txt"), "a").unwrap();
    chown(root.join("a.txt"), Some(NOBODY.0), Some(NOBODY.1)).unwrap();
    let mut cfg = common::config(&root, Mode::OsSandbox);
    cfg.deny_delete = true;
    let strict = SandboxPolicy::build(cfg).unwrap();
    let out = strict
        .run(
            "git add a.txt && git -c user.name=t -c user.email=t@e commit -qm one",
            common::T,
        )
        .unwrap();
    assert_ne!(out.exit_code, Some(0), "{out:?}");
}

#[test]
fn no_exec_in_workspace_refuses_copied_and_written_binaries() {
    let f = fixture_with(Mode::OsSandbox, |c| c.no_exec_in_workspace = true);
    for cmd in [
        "cp /bin/true ./t && ./t",
        "cp /bin/true \"$TMPDIR/t\" && \"$TMPDIR/t\"",
        "printf '#!/bin/sh\\necho ran\\n' > s.sh && chmod +x s.sh && ./s.sh",
        "cp /bin/true ./t && exec ./t",
        "cp /bin/true ./t && env ./t",
    ] {
        let out = f.run(cmd);
        assert_eq!(out.exit_code, Some(126), "{cmd}: {out:?}");
        assert!(out.stderr.contains(EACCES_TEXT), "{cmd}: {}", out.stderr);
        assert!(!out.stdout.contains("ran"));
    }
    let out = f.run(&py(
        "import os, shutil\nshutil.copy(\"/bin/true\", \"t2\")\nos.chmod(\"t2\", 0o755)\ntry:\n os.execv(\"t2\", [\"t2\"])\nexcept OSError as e:\n print(e.errno)",
    ));
    assert_eq!(out.stdout, "13\n", "{out:?}");
    // System programs and interpreters still run, also on scripts in the workspace.
    let out =
        f.run("printf 'echo ran\\n' > s2.sh && sh s2.sh && ls s2.sh && python3 -c 'print(1)'");
    assert_eq!(out.stdout, "ran\ns2.sh\n1\n", "{out:?}");
}

#[test]
fn bad_settings_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cfg = common::config(tmp.path(), Mode::Host);
    cfg.deny_delete = true;
    let err = SandboxPolicy::build(cfg).unwrap_err();
    assert!(matches!(err, SandboxError::Config(_)));
    assert!(err.to_string().contains("need mode os_sandbox"), "{err}");
    for (except, want) in [
        ("../x", "must be a relative path inside the root"),
        ("missing", "cannot be opened inside the root"),
    ] {
        let mut cfg = common::config(tmp.path(), Mode::OsSandbox);
        cfg.deny_delete = true;
        cfg.deny_delete_except = vec![except.into()];
        let err = SandboxPolicy::build(cfg).unwrap_err();
        assert!(err.to_string().contains(want), "{except}: {err}");
    }
    fs::create_dir(tmp.path().join("real")).unwrap();
    fs::write(tmp.path().join("file"), "x").unwrap();
    let mut cfg = common::config(tmp.path(), Mode::OsSandbox);
    cfg.deny_delete = true;
    cfg.deny_delete_except = vec!["file".into(), "real".into()];
    let p = SandboxPolicy::build(cfg).unwrap();
    assert!(p
        .guarantees()
        .notes
        .iter()
        .any(|n| n.contains("except beneath file, real")));
    std::os::unix::fs::symlink(tmp.path().join("real"), tmp.path().join("link")).unwrap();
    let mut cfg = common::config(tmp.path(), Mode::OsSandbox);
    cfg.deny_delete = true;
    cfg.deny_delete_except = vec!["link".into()];
    let err = SandboxPolicy::build(cfg).unwrap_err();
    assert!(
        err.to_string().contains("not be or pass through a symlink"),
        "{err}"
    );
    let mut cfg = common::config(tmp.path(), Mode::OsSandbox);
    cfg.deny_delete_except = vec!["real".into()];
    let err = SandboxPolicy::build(cfg).unwrap_err();
    assert!(err.to_string().contains("needs deny_delete=true"), "{err}");
}

/// Attack finding S2: `fallocate` can destroy a file's data without Landlock's `TRUNCATE`
/// right (punching a hole over the whole file zeroes it; collapsing or zeroing a range
/// too). Under `deny_delete` seccomp refuses those modes; plain allocation still works.
#[test]
fn deny_delete_refuses_the_fallocate_spellings_of_truncation() {
    let f = deny_delete(&[]);
    for (name, mode) in [("punch", 0x03), ("collapse", 0x08), ("zero", 0x10), ("zero-keep", 0x11)] {
        let out = f.run(&py(&format!(
            "import ctypes, os; l = ctypes.CDLL(None, use_errno=True); \
             fd = os.open(\"notes.txt\", os.O_RDWR); \
             r = l.fallocate(fd, {mode}, ctypes.c_long(0), ctypes.c_long(4096)); \
             print(\"{name}\", r, ctypes.get_errno())"
        )));
        assert_eq!(out.stdout, format!("{name} -1 {}\n", libc::EPERM), "{out:#?}");
        assert_eq!(
            fs::read_to_string(f.root.join("notes.txt")).unwrap(),
            "alpha\nbeta\ngamma\n"
        );
    }
    let out = f.run(&py(
        "import os; fd = os.open(\"grow.bin\", os.O_RDWR | os.O_CREAT); \
         os.posix_fallocate(fd, 0, 8192); print(os.fstat(fd).st_size)",
    ));
    assert_eq!(out.stdout, "8192\n", "{out:#?}");
    // Without deny_delete, punching a hole works (the rule is deny_delete's).
    let g = fixture_with(Mode::OsSandbox, |_| {});
    let out = g.run(&py(
        "import ctypes, os; l = ctypes.CDLL(None, use_errno=True); \
         fd = os.open(\"notes.txt\", os.O_RDWR); \
         print(l.fallocate(fd, 3, ctypes.c_long(0), ctypes.c_long(4096)))",
    ));
    assert_eq!(out.stdout, "0\n", "{out:#?}");
}
