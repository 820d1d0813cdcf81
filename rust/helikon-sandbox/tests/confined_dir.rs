//! ConfinedDir: every way out of the root is refused with a reason; normal use works.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use helikon_sandbox::{ConfinedDir, EntryKind, SandboxError};

struct Fixture {
    _tmp: tempfile::TempDir,
    root: std::path::PathBuf,
    outside: std::path::PathBuf,
    dir: ConfinedDir,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let outside = tmp.path().join("outside");
    fs::create_dir(&root).unwrap();
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("secret.txt"), "TOP-SECRET").unwrap();
    fs::write(root.join("hello.txt"), "hello\n").unwrap();
    let dir = ConfinedDir::open(&root).unwrap();
    Fixture {
        _tmp: tmp,
        root,
        outside,
        dir,
    }
}

fn assert_denied(r: Result<impl std::fmt::Debug, SandboxError>, path: &str, reason_part: &str) {
    match r {
        Err(SandboxError::Denied { path: p, reason }) => {
            assert_eq!(p, path);
            assert!(
                reason.contains(reason_part),
                "reason {reason:?} lacks {reason_part:?}"
            );
        }
        other => panic!("expected Denied for {path}, got {other:?}"),
    }
}

#[test]
fn reads_writes_stats_and_lists_inside() {
    let f = fixture();
    assert_eq!(f.dir.read("hello.txt", 100).unwrap(), b"hello\n");
    assert_eq!(f.dir.read("./hello.txt", 100).unwrap(), b"hello\n");
    f.dir.write_atomic("a/b/c.txt", b"deep").unwrap();
    assert_eq!(fs::read(f.root.join("a/b/c.txt")).unwrap(), b"deep");
    let st = f.dir.stat("a/b/c.txt").unwrap();
    assert_eq!(st.kind, EntryKind::File);
    assert_eq!(st.size, 4);
    assert_eq!(st.nlink, 1);
    assert!(st.modified_ms.unwrap() > 0);
    assert_eq!(f.dir.stat("").unwrap().kind, EntryKind::Dir);
    assert!(f.dir.exists("a/b").unwrap());
    assert!(!f.dir.exists("a/nope").unwrap());
    let names: Vec<_> = f
        .dir
        .list("")
        .unwrap()
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert_eq!(names, vec!["a".to_string(), "hello.txt".to_string()]);
    let sub = f.dir.list("a/b").unwrap();
    assert_eq!(sub.len(), 1);
    assert_eq!(sub[0].kind, EntryKind::File);
}

#[test]
fn overwrite_is_atomic_and_keeps_mode_and_leaves_no_temp_file() {
    let f = fixture();
    fs::set_permissions(f.root.join("hello.txt"), fs::Permissions::from_mode(0o600)).unwrap();
    f.dir.write_atomic("hello.txt", b"replaced").unwrap();
    assert_eq!(fs::read(f.root.join("hello.txt")).unwrap(), b"replaced");
    let mode = fs::metadata(f.root.join("hello.txt"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let names: Vec<_> = f
        .dir
        .list("")
        .unwrap()
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert_eq!(names, vec!["hello.txt".to_string()]);
}

#[test]
fn parent_dir_components_are_denied() {
    let f = fixture();
    assert_denied(
        f.dir.read("../outside/secret.txt", 100),
        "../outside/secret.txt",
        "'..'",
    );
    assert_denied(f.dir.read("a/../../x", 100), "a/../../x", "'..'");
    assert_denied(
        f.dir.write_atomic("../escape.txt", b"x"),
        "../escape.txt",
        "'..'",
    );
    assert_denied(f.dir.stat(".."), "..", "'..'");
    assert_denied(f.dir.list(".."), "..", "'..'");
    assert!(!f.root.parent().unwrap().join("escape.txt").exists());
}

#[test]
fn absolute_paths_are_denied() {
    let f = fixture();
    let abs = f.outside.join("secret.txt");
    let abs = abs.to_str().unwrap();
    assert_denied(f.dir.read(abs, 100), abs, "absolute");
    assert_denied(f.dir.read("/etc/passwd", 100), "/etc/passwd", "absolute");
    assert_denied(f.dir.write_atomic("/tmp/x", b"x"), "/tmp/x", "absolute");
    assert_denied(f.dir.exists("/etc"), "/etc", "absolute");
}

#[test]
fn symlinks_out_of_the_root_are_denied() {
    let f = fixture();
    symlink(f.outside.join("secret.txt"), f.root.join("link")).unwrap();
    symlink(&f.outside, f.root.join("dirlink")).unwrap();
    symlink("../outside/secret.txt", f.root.join("rel")).unwrap();
    assert_denied(f.dir.read("link", 100), "link", "outside the root");
    assert_denied(
        f.dir.read("dirlink/secret.txt", 100),
        "dirlink/secret.txt",
        "outside",
    );
    assert_denied(f.dir.read("rel", 100), "rel", "outside the root");
    assert_denied(f.dir.stat("dirlink"), "dirlink", "outside the root");
    assert_denied(f.dir.exists("link"), "link", "outside the root");
    assert_denied(f.dir.list("dirlink"), "dirlink", "outside the root");
    assert_denied(
        f.dir.write_atomic("dirlink/planted.txt", b"x"),
        "dirlink/planted.txt",
        "outside the root",
    );
    assert!(!f.outside.join("planted.txt").exists());
}

#[test]
fn proc_self_root_links_are_denied() {
    let f = fixture();
    symlink("/proc/self/root/etc/passwd", f.root.join("p")).unwrap();
    symlink("/proc/self/root", f.root.join("pr")).unwrap();
    assert_denied(f.dir.read("p", 1 << 20), "p", "outside the root");
    assert_denied(
        f.dir.read("pr/etc/passwd", 1 << 20),
        "pr/etc/passwd",
        "outside the root",
    );
}

#[test]
fn symlinks_inside_the_root_are_followed_for_reads_but_never_written_through() {
    let f = fixture();
    symlink("hello.txt", f.root.join("alias")).unwrap();
    assert_eq!(f.dir.read("alias", 100).unwrap(), b"hello\n");
    assert_denied(f.dir.write_atomic("alias", b"x"), "alias", "symbolic link");
    assert_eq!(fs::read(f.root.join("hello.txt")).unwrap(), b"hello\n");
}

#[test]
fn hard_links_are_denied_for_read_and_write() {
    let f = fixture();
    // Same filesystem (one tempdir), so the hard link to the outside file can be made.
    fs::hard_link(f.outside.join("secret.txt"), f.root.join("hl")).unwrap();
    assert_denied(f.dir.read("hl", 100), "hl", "2 hard links");
    assert_denied(f.dir.write_atomic("hl", b"overwritten"), "hl", "hard links");
    assert_eq!(
        fs::read(f.outside.join("secret.txt")).unwrap(),
        b"TOP-SECRET"
    );
}

#[test]
fn size_cap_is_enforced() {
    let f = fixture();
    fs::write(f.root.join("big"), vec![b'x'; 1000]).unwrap();
    match f.dir.read("big", 999) {
        Err(SandboxError::TooLarge { size, cap, .. }) => {
            assert_eq!((size, cap), (1000, 999));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(f.dir.read("big", 1000).unwrap().len(), 1000);
}

#[test]
fn directories_fifos_and_missing_files_are_reported() {
    let f = fixture();
    fs::create_dir(f.root.join("d")).unwrap();
    assert!(matches!(
        f.dir.read("d", 10),
        Err(SandboxError::NotRegular { .. })
    ));
    assert!(matches!(
        f.dir.write_atomic("d", b"x"),
        Err(SandboxError::NotRegular { .. })
    ));
    let fifo = std::ffi::CString::new(f.root.join("fifo").to_str().unwrap()).unwrap();
    // Created with the mkfifo binary to keep the test free of unsafe code.
    let st = std::process::Command::new("mkfifo")
        .arg(fifo.to_str().unwrap())
        .status()
        .unwrap();
    assert!(st.success());
    assert!(matches!(
        f.dir.read("fifo", 10),
        Err(SandboxError::NotRegular { .. })
    ));
    assert!(matches!(
        f.dir.read("missing", 10),
        Err(SandboxError::NotFound(_))
    ));
    assert!(matches!(
        f.dir.stat("missing"),
        Err(SandboxError::NotFound(_))
    ));
    assert_denied(f.dir.read("a\0b", 10), "a\0b", "NUL");
}

#[test]
fn directory_swapped_for_symlink_during_reads_never_leaks() {
    let f = fixture();
    let d = f.root.join("d");
    fs::create_dir(&d).unwrap();
    fs::write(d.join("secret.txt"), "inside").unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let stop = stop.clone();
        let root = f.root.clone();
        let outside = f.outside.clone();
        std::thread::spawn(move || {
            let real = root.join("d-real");
            let link = root.join("d-link");
            symlink(&outside, &link).unwrap();
            while !stop.load(Ordering::Relaxed) {
                fs::rename(root.join("d"), &real).unwrap();
                fs::rename(&link, root.join("d")).unwrap();
                fs::rename(root.join("d"), &link).unwrap();
                fs::rename(&real, root.join("d")).unwrap();
                std::thread::yield_now();
            }
        })
    };
    let mut inside = 0;
    let mut attempts = 0;
    let started = std::time::Instant::now();
    // At least 3000 reads, and on until one legitimate read got through (a loaded machine can
    // starve the window where `d` is the real directory for a while), within a bound.
    while attempts < 3000 || (inside == 0 && started.elapsed() < std::time::Duration::from_secs(20))
    {
        attempts += 1;
        match f.dir.read("d/secret.txt", 100) {
            Ok(data) => {
                assert_eq!(data, b"inside", "read escaped the root");
                inside += 1;
            }
            Err(SandboxError::Denied { .. } | SandboxError::NotFound(_)) => {}
            Err(e) => panic!("{e:?}"),
        }
    }
    stop.store(true, Ordering::Relaxed);
    flipper.join().unwrap();
    assert!(inside > 0, "the race never let a legitimate read through");
}
