//! Arbitrary relative paths against a root holding symlinks that point outside: no read or
//! stat ever reaches the file outside, and no write ever creates anything outside.
#![no_main]

use std::os::unix::fs::symlink;
use std::path::PathBuf;
use std::sync::OnceLock;

use helikon_sandbox::ConfinedDir;
use libfuzzer_sys::fuzz_target;

const SECRET: &[u8] = b"FUZZ-OUTSIDE-SECRET";

struct World {
    _tmp: tempfile::TempDir,
    outside: PathBuf,
    dir: ConfinedDir,
}

fn world() -> &'static World {
    static W: OnceLock<World> = OnceLock::new();
    W.get_or_init(|| {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().join("root");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(root.join("sub")).expect("mkdir");
        std::fs::create_dir(&outside).expect("mkdir");
        std::fs::write(outside.join("s"), SECRET).expect("write");
        std::fs::write(root.join("in"), b"inside").expect("write");
        symlink(outside.join("s"), root.join("abs")).expect("symlink");
        symlink("../outside", root.join("rel")).expect("symlink");
        symlink("../../outside/s", root.join("sub/deep")).expect("symlink");
        symlink("/proc/self/root", root.join("proc")).expect("symlink");
        symlink("in", root.join("ok")).expect("symlink");
        let dir = ConfinedDir::open(&root).expect("open");
        World {
            _tmp: tmp,
            outside,
            dir,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(path) = std::str::from_utf8(data) else {
        return;
    };
    let w = world();
    if let Ok(bytes) = w.dir.read(path, 1 << 16) {
        assert_ne!(bytes, SECRET, "read escaped through {path:?}");
    }
    let _ = w.dir.stat(path);
    let _ = w.dir.list(path);
    if path.len() < 64 && !path.contains('\0') {
        let _ = w.dir.write_atomic(path, b"w");
        let names: Vec<_> = std::fs::read_dir(&w.outside)
            .expect("read_dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names.len(), 1, "write escaped through {path:?}: {names:?}");
        assert_eq!(std::fs::read(w.outside.join("s")).expect("read"), SECRET);
    }
});
