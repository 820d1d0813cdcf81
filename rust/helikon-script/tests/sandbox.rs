//! The sandbox holds: the spec's example runs, and runaway, deep, huge and file-reaching
//! scripts stop with the matching error instead of wedging the thread.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use helikon_script::{Limits, ScriptError, ScriptTool};

const LOOKUP_SPENDING: &str = r#"
// The spec's CLI chapter: [tools.lookup_spending] with params { month } runs this.
fn run(args) {
    let ledger = #{ "2025-01": #{ total: 312.40, count: 18 }, "2025-02": #{ total: 540.10, count: 9 } };
    let month = args.month;
    if month in ledger { ledger[month] } else { #{ total: 0.0, count: 0, note: `no data for ${month}` } }
}
"#;

fn tool(source: &str) -> ScriptTool {
    ScriptTool::compile(source, Limits::default()).unwrap()
}

#[test]
fn the_spec_lookup_spending_example_runs() {
    let t = tool(LOOKUP_SPENDING);
    let out: serde_json::Value =
        serde_json::from_str(&t.call(r#"{"month": "2025-01"}"#).unwrap()).unwrap();
    assert_eq!(out, serde_json::json!({"total": 312.4, "count": 18}));
    let out: serde_json::Value =
        serde_json::from_str(&t.call(r#"{"month": "1999-12"}"#).unwrap()).unwrap();
    assert_eq!(
        out,
        serde_json::json!({"total": 0.0, "count": 0, "note": "no data for 1999-12"})
    );
}

#[test]
fn a_string_result_is_a_json_string() {
    let t = tool("fn run(args) { `hello ${args.name}` }");
    assert_eq!(t.call(r#"{"name": "Ana"}"#).unwrap(), r#""hello Ana""#);
}

#[test]
fn an_infinite_loop_stops_at_the_operation_cap() {
    let t = tool("fn run(args) { let n = 0; loop { n += 1; } }");
    let started = Instant::now();
    assert_eq!(
        t.call("{}").unwrap_err(),
        ScriptError::TooManyOperations(1_000_000)
    );
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn a_slow_script_stops_at_its_time_budget() {
    let limits = Limits {
        max_operations: u64::MAX / 2,
        timeout: Duration::from_millis(200),
        ..Limits::default()
    };
    let t = ScriptTool::compile("fn run(args) { while true {} }", limits).unwrap();
    let err = t.call("{}").unwrap_err();
    assert!(
        matches!(err, ScriptError::Timeout(ms) if ms >= 200),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("the script was stopped after "));
}

#[test]
fn deep_recursion_stops_at_the_call_depth_cap() {
    for source in [
        "fn down(n) { down(n + 1) } fn run(args) { down(0) }",
        "fn run(args) { run(args) }",
        "fn a(n) { b(n) } fn b(n) { a(n) } fn run(args) { a(1) }",
    ] {
        assert_eq!(
            tool(source).call("{}").unwrap_err(),
            ScriptError::TooDeep(32),
            "{source}"
        );
    }
}

#[test]
fn deep_nesting_in_the_source_is_a_compile_error() {
    let source = format!(
        "fn run(args) {{ {}1{} }}",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    let err = ScriptTool::compile(&source, Limits::default()).unwrap_err();
    assert!(matches!(err, ScriptError::Compile(_)), "{err:?}");
}

#[test]
fn huge_strings_arrays_and_maps_stop_at_their_caps() {
    for (source, what) in [
        (
            "fn run(args) { let s = \"x\"; loop { s += s; } }",
            "Length of string",
        ),
        (
            "fn run(args) { \"x\".pad(2000000, \"y\") }",
            "Length of string",
        ),
        (
            "fn run(args) { let a = [1]; loop { a += a; } }",
            "Size of array",
        ),
        (
            "fn run(args) { let a = []; a.pad(200000, 0); a }",
            "Size of array",
        ),
    ] {
        let err = tool(source).call("{}").unwrap_err();
        match &err {
            ScriptError::TooLarge(text) => assert!(text.starts_with(what), "{source}: {text}"),
            other => panic!("{source}: {other:?}"),
        }
    }
}

#[test]
fn a_huge_result_is_refused() {
    let limits = Limits {
        max_result_bytes: 1000,
        ..Limits::default()
    };
    let source = "fn run(args) { let m = #{}; for i in 0..1000 { m[`k${i}`] = i; } m }";
    let err = ScriptTool::compile(source, limits)
        .unwrap()
        .call("{}")
        .unwrap_err();
    assert_eq!(
        err,
        ScriptError::TooLarge("the result is 10781 bytes of JSON, over 1000".into())
    );
}

#[test]
fn files_modules_processes_and_eval_are_not_there() {
    for source in [
        r#"fn run(args) { open("/etc/passwd") }"#,
        r#"fn run(args) { read_file("/etc/passwd") }"#,
        r#"fn run(args) { File::open("/etc/passwd") }"#,
        r#"import "/etc/passwd" as p; fn run(args) { p::x }"#,
        r#"fn run(args) { import "os" as os; os::system("id") }"#,
        r#"fn run(args) { system("id") }"#,
        r#"fn run(args) { http_get("http://127.0.0.1/") }"#,
        r#"fn run(args) { exec("rm -rf /") }"#,
    ] {
        let err = tool(source).call("{}").unwrap_err();
        assert!(
            matches!(err, ScriptError::Forbidden(_)),
            "{source}: {err:?}"
        );
    }
    let err = ScriptTool::compile(r#"fn run(args) { eval("1 + 1") }"#, Limits::default())
        .map(|t| t.call("{}"));
    assert!(
        matches!(
            err,
            Err(ScriptError::Compile(_)) | Ok(Err(ScriptError::Forbidden(_)))
        ),
        "{err:?}"
    );
}

#[test]
fn print_and_debug_go_nowhere() {
    let t = tool(r#"fn run(args) { print("leak"); debug("leak"); 1 }"#);
    assert_eq!(t.call("{}").unwrap(), "1");
}

#[test]
fn compile_errors_and_a_missing_run_are_refused() {
    assert!(matches!(
        ScriptTool::compile("fn run(args) { ", Limits::default()),
        Err(ScriptError::Compile(_))
    ));
    for source in [
        "fn main(args) { 1 }",
        "fn run() { 1 }",
        "fn run(a, b) { 1 }",
        "40 + 2",
    ] {
        assert_eq!(
            ScriptTool::compile(source, Limits::default()).unwrap_err(),
            ScriptError::NoRun,
            "{source}"
        );
    }
}

#[test]
fn script_failures_and_bad_arguments_are_errors() {
    let t = tool(r#"fn run(args) { if args.n < 0 { throw "n must be >= 0"; } args.n * 2 }"#);
    assert_eq!(t.call(r#"{"n": 21}"#).unwrap(), "42");
    let err = t.call(r#"{"n": -1}"#).unwrap_err();
    assert!(
        matches!(&err, ScriptError::Runtime(m) if m.contains("n must be >= 0")),
        "{err:?}"
    );
    assert!(matches!(t.call("{not json"), Err(ScriptError::BadArgs(_))));
    let fp = tool("fn run(args) { Fn(\"run\") }");
    assert!(matches!(fp.call("{}"), Err(ScriptError::BadResult(_))));
}

#[test]
fn one_tool_is_callable_from_many_threads() {
    let t = std::sync::Arc::new(tool(LOOKUP_SPENDING));
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let t = t.clone();
            std::thread::spawn(move || t.call(r#"{"month": "2025-02"}"#).unwrap())
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), r#"{"count":9,"total":540.1}"#);
    }
}
