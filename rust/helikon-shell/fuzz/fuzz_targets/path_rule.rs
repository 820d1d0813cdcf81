//! Path rules: arbitrary pattern/path pairs never panic; cleaning is idempotent.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (pattern, path) = text.split_once('\0').unwrap_or((&text, "a/b"));
    let _ = helikon_shell::path_rule_matches(pattern, path);
    let once = helikon_shell::clean_path(path);
    if !once.starts_with("..") {
        assert_eq!(helikon_shell::clean_path(&once), once);
    }
});
