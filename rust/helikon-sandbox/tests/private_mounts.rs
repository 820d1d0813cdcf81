//! `private_mounts`: metadata calls and existence probes outside the granted paths fail,
//! and everyday work in the workspace (ls, git, python, make) still does.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;
use std::os::unix::fs::MetadataExt;

use common::{fixture_with, py, Fixture};
use helikon_sandbox::Mode;

fn private() -> Fixture {
    fixture_with(Mode::OsSandbox, |c| c.private_mounts = true)
}

fn plain() -> Fixture {
    fixture_with(Mode::OsSandbox, |_| {})
}

/// Python probes: each prints `ok` or the errno.
fn probe(code: &str) -> String {
    py(&format!(
        "import os\ntry:\n {code}\n print(\"ok\")\nexcept OSError as e:\n print(e.errno)"
    ))
}

#[test]
fn metadata_and_existence_probes_outside_fail() {
    let f = private();
    let secret = f.secret();
    let victim = f.outside.join("victim.txt").display().to_string();
    let outside = f.outside.display().to_string();
    let before = fs::metadata(&victim).unwrap();
    let probes = [
        ("stat", format!("os.stat(\"{secret}\")")),
        ("lstat", format!("os.lstat(\"{outside}\")")),
        ("chmod", format!("os.chmod(\"{victim}\", 0o777)")),
        ("utime", format!("os.utime(\"{victim}\", (1, 1))")),
        (
            "setxattr",
            format!("os.setxattr(\"{victim}\", \"user.x\", b\"1\")"),
        ),
        ("listdir", format!("os.listdir(\"{outside}\")")),
        ("stat /etc/shadow", "os.stat(\"/etc/shadow\")".to_string()),
        ("stat /root", "os.stat(\"/root\")".to_string()),
        ("stat /home", "os.stat(\"/home\")".to_string()),
    ];
    for (what, code) in &probes {
        let out = f.run(&probe(code));
        assert_eq!(out.stdout, "2\n", "{what}: {out:?}");
    }
    // The access() spelling that returns False instead of raising.
    let out = f.run(&py(&format!(
        "import os\nprint(os.path.exists(\"{secret}\"), os.access(\"{secret}\", os.F_OK))"
    )));
    assert_eq!(out.stdout, "False False\n");
    for cmd in [
        format!("chmod 777 {victim}"),
        format!("touch -d 2000-01-01 {victim}"),
        format!("test -e {secret} && echo visible"),
        format!("stat {outside}"),
    ] {
        let out = f.run(&cmd);
        assert_ne!(out.exit_code, Some(0), "{cmd}: {out:?}");
        assert!(!out.stdout.contains("visible"));
    }
    let after = fs::metadata(&victim).unwrap();
    assert_eq!(
        (before.mode(), before.mtime()),
        (after.mode(), after.mtime())
    );
    // System files are shown read-only: changing their metadata is EROFS (30) even where
    // the uid would otherwise be refused with EPERM.
    let out = f.run(&probe("os.utime(\"/usr/bin/env\", (1, 1))"));
    assert_eq!(out.stdout, "30\n", "{out:?}");
    assert!(f
        .policy
        .guarantees()
        .notes
        .iter()
        .any(|n| n.starts_with("private_mounts: commands see only the granted paths")));
}

#[test]
fn the_same_probes_work_without_private_mounts() {
    // Shows the probes above can detect a leak: Landlock alone does not mediate them.
    let f = plain();
    let secret = f.secret();
    let victim = f.outside.join("victim.txt").display().to_string();
    let out = f.run(&probe(&format!("os.stat(\"{secret}\")")));
    assert_eq!(out.stdout, "ok\n", "{out:?}");
    let out = f.run(&py(&format!(
        "import os\nprint(os.path.exists(\"{secret}\"), os.access(\"{secret}\", os.F_OK))"
    )));
    assert_eq!(out.stdout, "True True\n");
    // As nobody, chmod on a root-owned outside file is EPERM (not ENOENT): it is visible.
    let out = f.run(&probe(&format!("os.chmod(\"{victim}\", 0o777)")));
    assert_eq!(out.stdout, "1\n");
}

#[test]
fn everyday_work_in_the_workspace_still_works() {
    let f = private();
    fs::write(
        f.root.join("Makefile"),
        "all: out.txt\nout.txt: notes.txt\n\tsort notes.txt > out.txt\n",
    )
    .unwrap();
    std::os::unix::fs::chown(f.root.join("Makefile"), Some(65534), Some(65534)).unwrap();
    let cmds = [
        ("ls", "ls", "Makefile\nnotes.txt\n"),
        ("cat", "cat notes.txt | wc -l", "3\n"),
        (
            "python",
            "python3 -c 'import json, ssl; print(json.dumps([1]))'",
            "[1]\n",
        ),
        ("make", "make -s && cat out.txt", "alpha\nbeta\ngamma\n"),
        (
            "git",
            "git init -q . && git add notes.txt && git -c user.name=t -c user.email=t@e \
             commit -qm init && git log --oneline | wc -l",
            "1\n",
        ),
        (
            "tmp",
            "echo x > \"$TMPDIR/f\" && cat \"$TMPDIR/f\" && pwd",
            "",
        ),
        (
            "devnull",
            "echo hidden > /dev/null && head -c 4 /dev/zero | wc -c",
            "4\n",
        ),
        ("passwd", "id -un", "nobody\n"),
    ];
    for (what, cmd, want) in cmds {
        let out = f.run(cmd);
        assert_eq!(out.exit_code, Some(0), "{what}: {out:?}");
        if what == "tmp" {
            assert_eq!(
                out.stdout,
                format!("x\n{}\n", f.root.canonicalize().unwrap().display())
            );
        } else {
            assert_eq!(out.stdout, want, "{what}: {out:?}");
        }
    }
    // A fresh, unwritable /tmp: nothing of the host's /tmp is listed, nothing can be made.
    let out = f.run("ls -a /tmp; echo x > /tmp/new");
    assert!(!out.stdout.contains("helikon-tools"), "{out:?}");
    assert!(out.stderr.contains("/tmp/new"), "{out:?}");
}

#[test]
fn host_mode_refuses_private_mounts() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cfg = common::config(tmp.path(), Mode::Host);
    cfg.private_mounts = true;
    let err = helikon_sandbox::SandboxPolicy::build(cfg).unwrap_err();
    assert!(err.to_string().contains("need mode os_sandbox"), "{err}");
}
