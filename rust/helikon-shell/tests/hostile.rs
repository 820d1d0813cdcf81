//! Hostile input: no stack overflow, no unbounded work, limits named in the reason.
//!
//! Every case runs on a thread with a small stack (512 KiB), so recursion the input controls
//! would crash the test; time is measured in `benches/bench_shell.py`, not asserted here.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use helikon_shell::{analyze, analyze_with, CommandPolicy, Limits};

const CONSTRUCTS: &[&str] = &[
    "find . -exec ",
    "find . -execdir ",
    "find . -ok ",
    "find . -okdir ",
    "find . -exec a ; ",
    "find . -delete ",
    "git bisect run ",
    "echo $(",
    "echo `",
    "cat <(",
    "{ a; ",
    "( a; ",
    "if true; then ",
    "while a; do ",
    "case a in a) ",
    "f() { a; ",
    "a | ",
    "a && ",
    "cat <<E\nx\nE\n",
    "bash <<E\n",
    "echo \"",
    "eval ",
    "eval 'eval ",
    "bash -c 'bash -c ",
    "xargs ",
    "ls | xargs ",
    "sudo ",
    "env ",
    "runuser ",
    "timeout 1 ",
    "watch ",
    "parallel ",
    "echo $((",
    "echo ${",
    "x=1 ",
    ">f ",
    "{ a; } >f ",
];

fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

fn repeated(unit: &str, bytes: usize) -> String {
    unit.repeat(bytes / unit.len() + 1)
}

#[test]
fn repeated_constructs_do_not_overflow_the_stack() {
    for unit in CONSTRUCTS {
        let input = repeated(unit, 100_000);
        let policy = CommandPolicy::from_json(r#"{"deny": ["rm"]}"#).unwrap();
        let verdict = on_small_stack(move || policy.check(&input).verdict);
        assert!(
            ["deny", "ask", "no_match"].contains(&verdict),
            "{unit:?}: {verdict}"
        );
    }
}

#[test]
fn the_issue_reproduction_is_unanalysable_by_depth() {
    // `find . -exec ` repeated to 100 KB crashed the process (stack overflow).
    let input = repeated("find . -exec ", 100_000);
    let a = on_small_stack(move || analyze(&input));
    assert_eq!(a.commands.len(), 25, "the outer find and 24 nested levels");
    assert_eq!(
        a.unanalysable[0].reason,
        "nesting too deep (over the analysis limit max_depth=24)"
    );
    let deny = CommandPolicy::from_json(r#"{"deny": ["rm"]}"#).unwrap();
    assert_eq!(
        deny.check(&repeated("find . -exec ", 100_000)).verdict,
        "ask"
    );
}

#[test]
fn each_limit_is_named_in_the_reason() {
    let small = Limits {
        max_bytes: 100,
        max_depth: 3,
        max_words: 50,
        ..Limits::default()
    };
    let long = "echo ".repeat(30);
    let a = analyze_with(&long, &small);
    assert!(a.commands.is_empty());
    assert_eq!(
        a.unanalysable[0].reason,
        "command is 150 bytes, over the analysis limit max_bytes=100"
    );
    let deep = "echo $(echo $(echo $(echo $(rm x))))";
    let a = analyze_with(deep, &small);
    assert!(a.unanalysable[0].reason.contains("max_depth=3"), "{a:?}");
    let wordy = "a b c d e f g h i j; ".repeat(6);
    let a = analyze_with(
        &wordy,
        &Limits {
            max_bytes: 1000,
            ..small
        },
    );
    assert_eq!(
        a.unanalysable[0].reason,
        "too many words (over the analysis limit max_words=50)"
    );
    let compound = "{ ".repeat(5) + "ls";
    let a = analyze_with(&compound, &small);
    assert!(a
        .unanalysable
        .iter()
        .any(|u| u.reason.contains("max_depth=3")));
    let wrappers = "sudo env nice nohup ls";
    let a = analyze_with(wrappers, &small);
    assert!(a
        .unanalysable
        .iter()
        .any(|u| u.reason.contains("max_depth=3")));
    assert!(analyze(wrappers).is_analysable());
}

#[test]
fn the_work_budget_is_a_limit_named_with_its_value() {
    // Re-entered strings are lexed again: with a budget of 1 x the input + 1 byte, every
    // spelling of re-entry runs out, and the reason names both fields and their values.
    let tight = Limits {
        work_factor: 1,
        work_slack: 1,
        ..Limits::default()
    };
    for cmd in [
        "bash -c 'echo hi'",
        "eval 'echo hi'",
        "sh -c \"sh -c 'ls'\"",
        "bash <<'EOF'\nls\nEOF",
        "echo $(bash -c 'ls')",
    ] {
        let a = analyze_with(cmd, &tight);
        assert_eq!(
            a.unanalysable.last().map(|u| u.reason.as_str()),
            Some(
                "analysis work budget exceeded (over the analysis limit work_factor=1 with \
                 work_slack=1: 1 x the input + 1 bytes)"
            ),
            "{cmd}: {a:?}"
        );
        assert!(analyze(cmd).is_analysable(), "{cmd}");
    }
    let p = CommandPolicy::from_json(
        r#"{"deny": ["rm"], "limits": {"work_factor": 1, "work_slack": 1}}"#,
    )
    .unwrap();
    let v = p.check("bash -c 'ls'");
    assert_eq!(v.verdict, "ask");
    assert!(v.reason.unwrap().contains("work_factor=1"));
    let allow = CommandPolicy::from_json(
        r#"{"allow": ["bash", "ls"], "limits": {"work_factor": 1, "work_slack": 1}}"#,
    )
    .unwrap();
    assert_ne!(allow.check("bash -c 'ls'").verdict, "allow");
}

#[test]
fn limits_are_worst_case_under_deny_and_never_allowed() {
    let rules = r#"{"deny": ["rm"], "limits": {"max_bytes": 64}}"#;
    let p = CommandPolicy::from_json(rules).unwrap();
    let v = p.check(&"ls ".repeat(30));
    assert_eq!(v.verdict, "ask");
    assert!(v.reason.unwrap().contains("max_bytes=64"));
    let allow = CommandPolicy::from_json(
        r#"{"allow": ["ls"], "default_guards": false, "limits": {"max_words": 4}}"#,
    )
    .unwrap();
    assert_eq!(allow.check("ls a b").verdict, "allow");
    assert_eq!(allow.check("ls a b c d e").verdict, "no_match");
    // The built-in guards take their worst case past a limit too (attack G5): the rest of
    // the command may wipe `/`.
    let guarded =
        CommandPolicy::from_json(r#"{"allow": ["ls"], "limits": {"max_words": 4}}"#).unwrap();
    let v = guarded.check("ls a b c d e");
    assert_eq!(v.verdict, "ask");
    assert_eq!(v.rule.as_deref(), Some("guard_analysis_limit"));
    assert!(v.reason.unwrap().contains("max_words=4"));
    let guards_only = CommandPolicy::from_json(r#"{"limits": {"max_depth": 3}}"#).unwrap();
    for cmd in [
        "echo $(echo $(echo $(echo $(rm -rf /))))",
        "sudo env nice nohup timeout 1 rm -rf /",
        "echo $(echo $(echo $(echo $(git reset --hard))))",
    ] {
        assert_eq!(guards_only.check(cmd).verdict, "ask", "{cmd}");
    }
    assert_eq!(guards_only.check("echo $(echo ok)").verdict, "no_match");
}

#[test]
fn bad_limits_are_refused_naming_the_field() {
    for (rules, want) in [
        (
            r#"{"limits": {"max_depth": 0}}"#,
            "limits.max_depth must be at least 1",
        ),
        (
            r#"{"limits": {"max_depth": 1000}}"#,
            "limits.max_depth must be at most 100",
        ),
        (
            r#"{"limits": {"max_bytes": 0}}"#,
            "limits.max_bytes must be at least 1",
        ),
        (
            r#"{"limits": {"work_factor": 0}}"#,
            "limits.work_factor must be at least 1",
        ),
        (
            r#"{"limits": {"work_slack": 0}}"#,
            "limits.work_slack must be at least 1",
        ),
        (r#"{"limits": {"depth": 3}}"#, "unknown field `depth`"),
    ] {
        let e = CommandPolicy::from_json(rules).unwrap_err().to_string();
        assert!(e.contains(want), "{rules}: {e}");
    }
}

#[test]
fn many_redirections_on_a_big_group_hit_the_word_limit() {
    let input = format!("{{ {} }}{}", "a; ".repeat(2000), " >f".repeat(2000));
    let a = analyze_with(
        &input,
        &Limits {
            max_words: 10_000,
            ..Limits::default()
        },
    );
    assert!(a
        .unanalysable
        .iter()
        .any(|u| u.reason.contains("max_words=10000")));
}
