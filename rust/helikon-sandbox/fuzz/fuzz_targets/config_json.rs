//! Arbitrary JSON never panics the configuration parser, and whatever parses also validates
//! the same way twice.
#![no_main]

use helikon_sandbox::SandboxConfig;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let first = SandboxConfig::from_json(text).map_err(|e| e.to_string());
        let second = SandboxConfig::from_json(text).map_err(|e| e.to_string());
        assert_eq!(first, second);
    }
});
