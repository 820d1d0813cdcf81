//! Any source and arguments: compiling and calling a script tool never panics, and every
//! call ends within its (small) budget with a value or a `ScriptError`.
#![no_main]

use std::time::Duration;

use helikon_script::{Limits, ScriptTool};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (source, args) = text.split_once('\u{0}').unwrap_or((&text, "{}"));
    let limits = Limits {
        max_operations: 20_000,
        max_string_bytes: 64 * 1024,
        max_array_items: 4096,
        max_map_entries: 4096,
        max_result_bytes: 64 * 1024,
        timeout: Duration::from_millis(200),
        ..Limits::default()
    };
    // a source without fn run still exercises the parser
    let wrapped = format!("fn run(args) {{ {source} }}");
    for candidate in [source, wrapped.as_str()] {
        if let Ok(tool) = ScriptTool::compile(candidate, limits.clone()) {
            let _ = tool.call(args);
        }
    }
});
