//! Arbitrary JSON through every normalizer: no panic, budgets hold, and the strict output is
//! a fixed point (normalizing it again changes nothing and reports no rewrite).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(schema) = helikon_schema::parse(text) else { return };
    let _ = helikon_schema::strict(&schema);
    let _ = helikon_schema::bedrock(&schema);
    let _ = helikon_schema::gemini(&schema);
    let _ = helikon_schema::gemini_function(&schema);
    if let Ok((out, _)) = helikon_schema::strict_report(&schema) {
        if let Ok((again, report)) = helikon_schema::strict_report(&out) {
            assert_eq!(again, out, "strict output is not a fixed point");
            assert!(report.lossy.is_empty(), "second pass rewrote: {:?}", report.lossy);
        }
    }
    let _ = helikon_schema::strict_report_json(text);
});
