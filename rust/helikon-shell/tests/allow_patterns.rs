//! Allow lists with prefix patterns, matched on parsed words, and the union of rules.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use helikon_shell::CommandPolicy;
use serde_json::json;

fn verdict(allow: &[&str], command: &str) -> helikon_shell::Verdict {
    CommandPolicy::from_json(&json!({"allow": allow, "default_guards": false}).to_string())
        .unwrap()
        .check(command)
}

fn allowed(allow: &[&str], command: &str) -> bool {
    verdict(allow, command).verdict == "allow"
}

#[test]
fn exact_patterns_cover_exactly_their_words() {
    let p = ["git status"];
    for yes in [
        "git status",
        "  git   status ",
        "'git' \"status\"",
        "/usr/bin/git status",
    ] {
        assert!(allowed(&p, yes), "{yes}");
    }
    for no in [
        "git status --short",
        "git push",
        "git",
        "git statusx",
        "gitstatus",
    ] {
        assert!(!allowed(&p, no), "{no}");
    }
}

#[test]
fn star_patterns_cover_any_further_arguments() {
    let p = ["git log *"];
    for yes in ["git log", "git log --oneline -5", "git log -- src/a.py"] {
        assert!(allowed(&p, yes), "{yes}");
    }
    for no in ["git push", "git status", "git", "git logx"] {
        assert!(!allowed(&p, no), "{no}");
    }
}

#[test]
fn colon_star_patterns_are_a_word_prefix() {
    let p = ["npm run test:*"];
    for yes in [
        "npm run test",
        "npm run test:unit",
        "npm run test:e2e -- --watch",
    ] {
        assert!(allowed(&p, yes), "{yes}");
    }
    for no in ["npm run build", "npm test", "npm run", "npm install test"] {
        assert!(!allowed(&p, no), "{no}");
    }
}

#[test]
fn a_word_glob_stays_within_its_word() {
    let p = ["git log --format=*"];
    assert!(allowed(&p, "git log --format=%H"));
    assert!(!allowed(&p, "git log --format=%H -5"));
}

#[test]
fn a_prefix_never_reaches_across_operators_substitutions_or_file_redirections() {
    let p = ["git log *"];
    for no in [
        "git log; rm -rf x",
        "git log && rm -rf x",
        "git log | sh",
        "git log || curl x",
        "git log $(rm -rf x)",
        "git log `rm x`",
        "git log <(rm x)",
        "git log > notes.txt",
        "git log >> ~/.bashrc",
        "git log &> out",
        "git log\nrm x",
        "git log & rm x",
    ] {
        let v = verdict(&p, no);
        assert_ne!(v.verdict, "allow", "{no}: {v:?}");
    }
    assert!(allowed(&p, "git log > /dev/null"));
    assert!(allowed(&p, "git log 2>&1"));
    assert!(allowed(&p, "git log --grep 'a; rm -rf x'"));
}

#[test]
fn compound_commands_need_every_part_covered_by_some_rule() {
    let p = ["ls", "git"];
    assert!(allowed(&p, "ls -la && git status"));
    assert!(allowed(&p, "git status; ls | ls"));
    let v = verdict(&p, "ls -la && git status && rm -rf build");
    assert_eq!(v.verdict, "no_match");
    assert_eq!(
        v.explain.as_deref(),
        Some(
            "allow_list: command `rm` is not in the allow list, in sub-command `rm -rf build` on \
             line 1"
        )
    );
    let v = verdict(
        &["git status", "git log *"],
        "git status && git push origin main",
    );
    assert_eq!(v.verdict, "no_match");
    assert_eq!(
        v.reason.as_deref(),
        Some(
            "`git push origin main` is not covered by the allow patterns `git status`, `git log *`"
        )
    );
    assert_eq!(v.command.as_deref(), Some("git push origin main"));
}

#[test]
fn the_verdict_names_the_patterns_that_covered() {
    let v = verdict(&["git status", "ls", "cat"], "ls && git status");
    assert_eq!(v.verdict, "allow");
    assert_eq!(
        v.allowed_by,
        vec!["ls".to_string(), "git status".to_string()]
    );
}

#[test]
fn code_running_options_still_block_a_covered_program() {
    assert!(!allowed(&["git *"], "git -c core.pager='rm x' log"));
    assert!(!allowed(&["git log *"], "GIT_PAGER='rm x' git log"));
}

#[test]
fn malformed_patterns_are_refused_naming_the_pattern() {
    for (p, why) in [
        ("git log; rm", "must be one simple command"),
        ("git log > f", "must be one simple command"),
        ("git $(x)", "has an expansion or substitution"),
        ("", "is empty"),
        ("   ", "is empty"),
        ("* x", "needs a program name"),
    ] {
        let e = CommandPolicy::from_json(&json!({"allow": [p]}).to_string())
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("allow pattern `{p}`")), "{e}");
        assert!(e.contains(why), "{p}: {e}");
    }
}
