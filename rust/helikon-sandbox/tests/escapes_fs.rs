//! Filesystem escapes: each must fail in the OS sandbox; the safe ones succeed in host mode
//! (same uid, same Unix permissions), which shows every case can detect an escape.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::fs;

use common::{probe, probe_verdict, refused, Case, Ctx, Verdict, SECRET};
use helikon_sandbox::RunOutcome;

fn leaked(o: &RunOutcome) -> bool {
    o.stdout.contains(SECRET)
}

/// A read of the secret: escaped when it shows up, contained on a permission error.
fn read_verdict(_: &Ctx, o: &RunOutcome) -> Verdict {
    if leaked(o) {
        Verdict::Escaped("secret printed".into())
    } else if refused(o) {
        Verdict::Contained
    } else {
        Verdict::Inconclusive("neither the secret nor a permission error".into())
    }
}

/// A write outside: escaped when a new entry or a change appears there.
fn write_verdict(c: &Ctx, o: &RunOutcome) -> Verdict {
    let extra = c.f.outside_extra();
    let extra: Vec<_> = extra
        .into_iter()
        .filter(|n| n != "host.sock" && n != "log.sock")
        .collect();
    if !extra.is_empty() {
        Verdict::Escaped(format!("created outside: {extra:?}"))
    } else if !c.f.victim_unchanged() {
        Verdict::Escaped("victim.txt changed".into())
    } else if refused(o) {
        Verdict::Contained
    } else {
        Verdict::Inconclusive("no change and no permission error".into())
    }
}

fn read_absolute() -> Case {
    Case::new(|c| format!("cat {}", c.f.secret()), read_verdict)
}

fn read_dotdot() -> Case {
    Case::new(|_| "cat ../outside/secret.txt".into(), read_verdict)
}

fn read_after_cd_up() -> Case {
    Case::new(|_| "cd .. && cat outside/secret.txt".into(), read_verdict)
}

fn read_symlink_to_file() -> Case {
    Case::new(
        |c| format!("ln -s {} link && cat link", c.f.secret()),
        read_verdict,
    )
}

fn read_symlink_to_dir() -> Case {
    Case::new(
        |c| format!("ln -s {} d && cat d/secret.txt", c.f.outside.display()),
        read_verdict,
    )
}

fn read_proc_self_root() -> Case {
    Case::new(
        |c| format!("cat /proc/self/root{}", c.f.secret()),
        read_verdict,
    )
}

fn read_proc_self_cwd_parent() -> Case {
    Case::new(
        |_| "cat /proc/self/cwd/../outside/secret.txt".into(),
        read_verdict,
    )
}

fn read_hardlink() -> Case {
    // Linking an outside file into the root is refused (Landlock REFER / protected_hardlinks)
    // so the read never finds the secret.
    Case::new(
        |c| format!("ln {} hl; cat hl", c.f.secret()),
        |c, o| {
            if leaked(o) {
                Verdict::Escaped("secret printed".into())
            } else if c.f.root.join("hl").exists() {
                Verdict::Escaped("hard link created".into())
            } else if refused(o) {
                Verdict::Contained
            } else {
                Verdict::Inconclusive("no permission error".into())
            }
        },
    )
}

fn read_python_open() -> Case {
    Case::new(
        |c| probe(&format!("print(open(\"{}\").read())", c.f.secret())),
        |_, o| probe_verdict(o, &[libc::EACCES]),
    )
}

fn read_unlisted_etc_file() -> Case {
    // /etc/hostname is world-readable; only the sandbox's /etc file list keeps it out.
    Case::new(
        |_| "cat /etc/hostname".into(),
        |_, o| {
            if o.exit_code == Some(0) {
                Verdict::Escaped("read /etc/hostname".into())
            } else if refused(o) {
                Verdict::Contained
            } else {
                Verdict::Inconclusive("no permission error".into())
            }
        },
    )
}

fn list_filesystem_root() -> Case {
    Case::new(
        |_| "ls /".into(),
        |_, o| {
            if o.stdout.contains("usr") {
                Verdict::Escaped("listed /".into())
            } else if refused(o) {
                Verdict::Contained
            } else {
                Verdict::Inconclusive("no permission error".into())
            }
        },
    )
}

fn list_outside_dir() -> Case {
    Case::new(
        |c| format!("ls {}", c.f.outside.display()),
        |_, o| {
            if o.stdout.contains("secret.txt") {
                Verdict::Escaped("listed the outside dir".into())
            } else if refused(o) {
                Verdict::Contained
            } else {
                Verdict::Inconclusive("no permission error".into())
            }
        },
    )
}

fn write_absolute() -> Case {
    Case::new(
        |c| format!("echo pwned > {}/new.txt", c.f.outside.display()),
        write_verdict,
    )
}

fn write_dotdot() -> Case {
    Case::new(|_| "echo pwned > ../outside/new.txt".into(), write_verdict)
}

fn write_through_dir_symlink() -> Case {
    Case::new(
        |c| {
            format!(
                "ln -s {} d && echo pwned > d/new.txt",
                c.f.outside.display()
            )
        },
        write_verdict,
    )
}

fn overwrite_outside_file() -> Case {
    Case::new(
        |c| format!("echo pwned > {}/victim.txt", c.f.outside.display()),
        write_verdict,
    )
}

fn append_outside_file() -> Case {
    Case::new(
        |c| format!("echo pwned >> {}/victim.txt", c.f.outside.display()),
        write_verdict,
    )
}

fn truncate_outside_file() -> Case {
    Case::new(
        |c| format!("truncate -s 0 {}/victim.txt", c.f.outside.display()),
        write_verdict,
    )
}

fn mkdir_outside() -> Case {
    Case::new(
        |c| format!("mkdir {}/newdir", c.f.outside.display()),
        write_verdict,
    )
}

fn remove_outside_file() -> Case {
    Case::new(
        |c| format!("rm -f {}/victim.txt", c.f.outside.display()),
        |c, o| {
            if !c.f.outside.join("victim.txt").exists() {
                Verdict::Escaped("victim.txt removed".into())
            } else {
                write_verdict(c, o)
            }
        },
    )
}

fn move_file_out_of_root() -> Case {
    Case::new(
        |c| format!("mv notes.txt {}/moved.txt", c.f.outside.display()),
        write_verdict,
    )
}

fn move_outside_file_in() -> Case {
    Case::new(
        |c| format!("mv {}/victim.txt ./stolen", c.f.outside.display()),
        |c, o| {
            if !c.f.outside.join("victim.txt").exists() {
                Verdict::Escaped("victim.txt moved".into())
            } else {
                write_verdict(c, o)
            }
        },
    )
}

fn symlink_planted_outside() -> Case {
    Case::new(
        |c| format!("ln -s /etc/passwd {}/link", c.f.outside.display()),
        write_verdict,
    )
}

fn write_python_outside() -> Case {
    Case::new(
        |c| {
            probe(&format!(
                "open(\"{}/new.txt\", \"w\").write(\"x\")",
                c.f.outside.display()
            ))
        },
        |c, o| match write_verdict(c, o) {
            Verdict::Escaped(e) => Verdict::Escaped(e),
            _ => probe_verdict(o, &[libc::EACCES]),
        },
    )
}

fn write_dev_shm() -> Case {
    Case::new(
        |c| format!("echo x > /dev/shm/helikon-escape-{}", c.tcp.port()),
        |c, o| {
            let p = format!("/dev/shm/helikon-escape-{}", c.tcp.port());
            if fs::remove_file(&p).is_ok() {
                Verdict::Escaped("wrote /dev/shm".into())
            } else if refused(o) {
                Verdict::Contained
            } else {
                Verdict::Inconclusive("no permission error".into())
            }
        },
    )
}

fn chmod_outside_file() -> Case {
    Case::new(
        |c| format!("chmod 600 {}", c.f.secret()),
        |c, o| {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(c.f.outside.join("secret.txt"))
                .unwrap()
                .permissions()
                .mode();
            if mode & 0o777 != 0o644 {
                Verdict::Escaped("mode changed".into())
            } else if refused(o) {
                Verdict::Contained
            } else {
                Verdict::Inconclusive("no permission error".into())
            }
        },
    )
}

fn mknod_char_device() -> Case {
    Case::new(
        |_| "mknod mem c 1 1".into(),
        |c, o| {
            if c.f.root.join("mem").exists() {
                Verdict::Escaped("device node created".into())
            } else if refused(o) {
                Verdict::Contained
            } else {
                Verdict::Inconclusive("no permission error".into())
            }
        },
    )
}

os_sandbox_contains!(
    read_absolute,
    read_dotdot,
    read_after_cd_up,
    read_symlink_to_file,
    read_symlink_to_dir,
    read_proc_self_root,
    read_proc_self_cwd_parent,
    read_hardlink,
    read_python_open,
    read_unlisted_etc_file,
    list_filesystem_root,
    list_outside_dir,
    write_absolute,
    write_dotdot,
    write_through_dir_symlink,
    overwrite_outside_file,
    append_outside_file,
    truncate_outside_file,
    mkdir_outside,
    remove_outside_file,
    move_file_out_of_root,
    move_outside_file_in,
    symlink_planted_outside,
    write_python_outside,
    write_dev_shm,
    chmod_outside_file,
    mknod_char_device,
);

host_mode_allows!(
    read_absolute,
    read_dotdot,
    read_after_cd_up,
    read_symlink_to_file,
    read_symlink_to_dir,
    read_proc_self_root,
    read_proc_self_cwd_parent,
    read_python_open,
    read_unlisted_etc_file,
    list_filesystem_root,
    list_outside_dir,
    write_absolute,
    write_dotdot,
    write_through_dir_symlink,
    overwrite_outside_file,
    append_outside_file,
    truncate_outside_file,
    mkdir_outside,
    remove_outside_file,
    move_file_out_of_root,
    move_outside_file_in,
    symlink_planted_outside,
    write_python_outside,
    write_dev_shm,
);
