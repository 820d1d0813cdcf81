//! Lexer + analysis: arbitrary text never panics, the JSON always parses back, and the
//! packed form (what the Python binding keeps) converts to the same analysis.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let a = helikon_shell::analyze(&text);
    let json = a.to_json();
    assert!(json.starts_with('{'));
    assert_eq!(helikon_shell::analyze_packed(&text).into_analysis(), a);
    let _ = helikon_shell::split(&text);
});
