//! Arbitrary schema + instance: compiling may fail, validating a compiled schema never panics
//! or recurses without bound. Input layout: schema JSON, NUL, instance JSON.
#![no_main]

use helikon_loop::OutputSchema;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (schema, instance) = text.split_once('\0').unwrap_or((text, "null"));
    let Ok(schema) = serde_json::from_str(schema) else { return };
    let Ok(instance) = serde_json::from_str(instance) else { return };
    if let Ok(compiled) = OutputSchema::compile(schema) {
        let _ = compiled.validate(&instance);
    }
});
