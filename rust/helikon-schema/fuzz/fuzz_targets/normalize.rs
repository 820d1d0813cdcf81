//! Arbitrary JSON through every normalizer: no panic, budgets hold, the strict output is a
//! fixed point (normalizing it again changes nothing and reports no rewrite), and the
//! report-free `strict()` agrees with `strict_report()`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(schema) = helikon_schema::parse(text) else {
        return;
    };
    let fast = helikon_schema::strict(&schema);
    let _ = helikon_schema::bedrock(&schema);
    let _ = helikon_schema::gemini(&schema);
    let _ = helikon_schema::gemini_function(&schema);
    if let Ok((out, first)) = helikon_schema::strict_report(&schema) {
        match &fast {
            Ok(fast) => assert!(
                first.is_strict() && *fast == out,
                "strict() and the report differ"
            ),
            Err(helikon_schema::SchemaError::NotStrict(issues)) => {
                assert_eq!(*issues, first.non_strict, "strict() and the report differ");
            }
            Err(e) => panic!("strict() failed where the report did not: {e}"),
        }
        if let Ok((again, report)) = helikon_schema::strict_report(&out) {
            assert_eq!(again, out, "strict output is not a fixed point");
            assert!(
                report.lossy.is_empty(),
                "second pass rewrote: {:?}",
                report.lossy
            );
        }
    } else {
        assert!(fast.is_err(), "strict() passed a budget error");
    }
    let _ = helikon_schema::strict_report_json(text);
});
