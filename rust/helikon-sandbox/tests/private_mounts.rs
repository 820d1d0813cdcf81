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

fn protected(paths: &[&str]) -> Fixture {
    let paths: Vec<std::path::PathBuf> = paths.iter().map(Into::into).collect();
    fixture_with(Mode::OsSandbox, move |c| {
        let ok = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(&c.root)
            .status()
            .unwrap()
            .success();
        assert!(ok);
        fs::write(c.root.join(".env"), "TOKEN=1\n").unwrap();
        fs::create_dir(c.root.join(".ssh")).unwrap();
        fs::write(c.root.join(".ssh/id"), "KEY\n").unwrap();
        let ok = std::process::Command::new("chown")
            .args(["-R", "65534:65534", "."])
            .current_dir(&c.root)
            .status()
            .unwrap()
            .success();
        assert!(ok);
        c.private_mounts = true;
        c.read_only_paths = paths;
    })
}

const GIT: &str = "git -c user.name=t -c user.email=t@e";

#[test]
fn read_only_paths_refuse_every_write_spelling() {
    let f = protected(&[".git", ".env", ".ssh"]);
    for cmd in [
        "echo x >> .env",
        ": > .env",
        "rm .env",
        "mv .env env2",
        "rm -rf .git",
        "mv .git g2",
        "echo x > .git/config",
        "touch .git/new",
        "chmod 600 .env",
        "rm .ssh/id",
        "echo k > .ssh/authorized_keys",
        "cp /bin/rm ./x && ./x .env",
        "ln -sf /etc/passwd .ssh/id",
    ] {
        let out = f.run(cmd);
        assert_ne!(out.exit_code, Some(0), "{cmd}: {out:?}");
        assert!(
            out.stderr.contains("Read-only file system") || out.stderr.contains("busy"),
            "{cmd}: {}",
            out.stderr
        );
    }
    assert_eq!(
        fs::read_to_string(f.root.join(".env")).unwrap(),
        "TOKEN=1\n"
    );
    assert_eq!(fs::read_to_string(f.root.join(".ssh/id")).unwrap(), "KEY\n");
    assert!(!f.root.join(".git/new").exists());
    // Reading them and writing elsewhere still work; git can read the repository.
    let out = f.run("cat .env .ssh/id && echo y > other.txt && git status --short | sort");
    assert_eq!(
        out.stdout, "TOKEN=1\nKEY\n?? .env\n?? .ssh/\n?? notes.txt\n?? other.txt\n?? x\n",
        "{out:?}"
    );
    // Committing needs a writable .git.
    let out = f.run(&format!("{GIT} add other.txt"));
    assert_ne!(out.exit_code, Some(0));
    assert!(
        out.stderr.contains("Read-only file system"),
        "{}",
        out.stderr
    );
}

#[test]
fn git_commit_works_when_git_is_not_protected() {
    let f = protected(&[".env"]);
    let out = f.run(&format!(
        "echo y > other.txt && {GIT} add other.txt && {GIT} commit -qm one && \
         git log --oneline | wc -l && echo z >> .env"
    ));
    assert_eq!(out.stdout, "1\n", "{out:?}");
    assert!(
        out.stderr.contains("Read-only file system"),
        "{}",
        out.stderr
    );
}

#[test]
fn read_only_paths_symlinked_or_missing() {
    let f = protected(&[".git", "missing", "link"]);
    // A missing path is not protected (creating it works) ...
    let out = f.run("echo x > missing && cat missing");
    assert_eq!(out.stdout, "x\n", "{out:?}");
    fs::remove_file(f.root.join("missing")).unwrap();
    // ... and a symlink in its place stops the run before the command starts.
    std::os::unix::fs::symlink("/etc", f.root.join("link")).unwrap();
    let err = f.policy.run("true", common::T).unwrap_err();
    assert!(
        err.to_string()
            .contains("'private mount namespace': Too many levels of symbolic links"),
        "{err}"
    );
    fs::remove_file(f.root.join("link")).unwrap();
    assert_eq!(f.run("true").exit_code, Some(0));
}

#[test]
fn read_only_paths_need_private_mounts() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cfg = common::config(tmp.path(), Mode::OsSandbox);
    cfg.read_only_paths = vec![".git".into()];
    let err = helikon_sandbox::SandboxPolicy::build(cfg.clone()).unwrap_err();
    assert!(
        err.to_string()
            .contains("read_only_paths needs private_mounts=true"),
        "{err}"
    );
    cfg.private_mounts = true;
    cfg.read_only_paths = vec!["../x".into()];
    let err = helikon_sandbox::SandboxPolicy::build(cfg).unwrap_err();
    assert!(
        err.to_string()
            .contains("must be a relative path inside the root"),
        "{err}"
    );
}

/// Attack finding S1: `no_exec_in_workspace` refuses `execve` of workspace files (Landlock),
/// but the dynamic loader maps a file with `mmap(PROT_EXEC)`, which Landlock does not
/// mediate. With `private_mounts` the workspace and temp dir are mounted `noexec`, so every
/// spelling fails; a script still runs through a system interpreter.
#[test]
fn no_exec_in_workspace_with_private_mounts_refuses_the_loader_spellings() {
    let f = fixture_with(Mode::OsSandbox, |c| {
        c.private_mounts = true;
        c.no_exec_in_workspace = true;
    });
    let loaders = ["/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"];
    for loader in loaders.iter().filter(|l| std::path::Path::new(l).exists()) {
        for target in ["./e", "\"$TMPDIR/e\""] {
            let cmd = format!(
                "cp /bin/echo ./e && cp /bin/echo \"$TMPDIR/e\" && {loader} {target} RAN-IT"
            );
            let out = f.run(&cmd);
            assert!(!out.stdout.contains("RAN-IT"), "{cmd}: {out:#?}");
            assert_ne!(out.exit_code, Some(0), "{cmd}: {out:#?}");
        }
    }
    let out = f.run(&py(
        "import ctypes, shutil; shutil.copy(\"/lib/x86_64-linux-gnu/libc.so.6\", \"l.so\"); \
         ctypes.CDLL(\"./l.so\"); print(\"LOADED\")",
    ));
    assert!(!out.stdout.contains("LOADED"), "{out:#?}");
    let out = f.run("printf 'echo from-script\\n' > s.sh && sh s.sh && ./s.sh; echo rc=$?");
    assert!(out.stdout.starts_with("from-script\n"), "{out:#?}");
    assert!(out.stdout.contains("rc=126"), "{out:#?}");
    // Without no_exec_in_workspace the loader runs a workspace binary (the mount is exec).
    let g = private();
    let out = g.run("cp /bin/echo ./e && /lib64/ld-linux-x86-64.so.2 ./e RAN-IT");
    assert_eq!(out.stdout, "RAN-IT\n", "{out:#?}");
}
