//! Lexer + analysis: arbitrary text never panics, and the JSON always parses back.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let a = helikon_shell::analyze(&text);
    let json = a.to_json();
    assert!(json.starts_with('{'));
    let _ = helikon_shell::split(&text);
});
