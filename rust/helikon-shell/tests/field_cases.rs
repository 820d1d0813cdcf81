//! Field cases BR-17, BR-18 and BR-20 (shared/field-cases.md).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use helikon_shell::CommandPolicy;

/// BR-17: reordered, split, extra and long-form rm flags at / and ~ all trip the guard.
#[test]
fn br17_destructive_defaults() {
    // Default guards on; with no approval handler the pipeline turns Ask into Deny.
    let policy = CommandPolicy::from_json("{}").unwrap();
    for cmd in [
        "rm -fr /",
        "rm -r -f /",
        "rm -Rf --no-preserve-root /",
        "rm --force --recursive /",
        "rm -rfv -- /",
        "rm -rf ~/",
    ] {
        let v = policy.check(cmd);
        assert_eq!(v.verdict, "ask", "{cmd}");
        assert_eq!(
            v.rule.as_deref(),
            Some("rm_recursive_root_or_home"),
            "{cmd}"
        );
        let explain = v.explain.unwrap();
        assert!(
            explain.contains("rm_recursive_root_or_home") && explain.contains(cmd),
            "{explain}"
        );
    }
    assert_eq!(policy.check("rm -rf ./build").verdict, "no_match");
}

/// BR-18: leading comment lines do not hide the command; the verdict names line 4.
#[test]
fn br18_multiline_script() {
    let policy = CommandPolicy::from_json(r#"{"deny": ["rm"]}"#).unwrap();
    let v = policy.check("# tidy\n# temp files\necho start\nrm -rf ./build\necho end");
    assert_eq!(v.verdict, "deny");
    assert_eq!(v.line, Some(4));
    assert_eq!(v.command.as_deref(), Some("rm -rf ./build"));
    assert!(v.explain.unwrap().contains("line 4"));
    let control = policy.check("# rm -rf / is dangerous\necho hi");
    assert_eq!(control.verdict, "no_match");
}

/// BR-20: reads wrapped in $(...), backticks, a brace group, process substitution or a
/// subshell are denied like the plain command; a single-quoted control is data.
#[test]
fn br20_substitutions_and_groups() {
    let policy = CommandPolicy::from_json(r#"{"deny": ["cat"]}"#).unwrap();
    for cmd in [
        r#"API_KEY="$(cat ./secrets/key.txt)" ./deploy.sh"#,
        "echo `cat notes.txt`",
        "{ cat notes.txt; } | wc -c",
        "wc -c <(cat notes.txt)",
        "( cat notes.txt )",
    ] {
        let v = policy.check(cmd);
        assert_eq!(v.verdict, "deny", "{cmd}");
        assert_eq!(v.program.as_deref(), Some("cat"), "{cmd}");
        assert_eq!(
            v.reason.as_deref(),
            Some("command `cat` is blocked by the deny list")
        );
    }
    assert_eq!(policy.check("echo '$(cat x)'").verdict, "no_match");
}
