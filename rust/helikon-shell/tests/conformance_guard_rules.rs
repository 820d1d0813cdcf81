//! guard_rules.json: the destructive guards (the pipeline and mode cases belong to the
//! Python permission pipeline, which builds on this crate).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use helikon_shell::{CommandPolicy, Verdict};
use serde_json::Value;

fn guard_rules(v: &Verdict) -> Vec<String> {
    v.matches
        .iter()
        .filter(|m| m.stage == "guard")
        .map(|m| m.rule.clone())
        .collect()
}

#[test]
fn guard_vectors() {
    let doc = common::conformance("guard_rules.json");
    let policy = CommandPolicy::from_json("{}").unwrap();
    let guards: Vec<(String, String)> = doc["guards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["rule"].as_str().unwrap().into(),
                g["prompt"].as_str().unwrap().into(),
            )
        })
        .collect();
    let cases = doc["cases"].as_array().unwrap();
    for case in cases {
        let tool = case["tool"].as_str().unwrap();
        let args = &case["args"];
        let verdict = match (
            tool,
            args.get("command").and_then(Value::as_str),
            args.get("path").and_then(Value::as_str),
        ) {
            ("Bash", Some(cmd), _) => Some(policy.check(cmd)),
            ("Write" | "Edit", _, Some(path)) => Some(policy.check_write(path)),
            _ => None,
        };
        let mut want = common::strs(&case["rules"]);
        // Stronger than the vector: `dd of=FILE` also trips helikon's fourth built-in guard,
        // `destructive_command` (dd overwrites the file), after the vector's rules. The
        // verdict (ask) and the deciding rule are the vector's.
        let cmd = args.get("command").and_then(Value::as_str).unwrap_or("");
        if cmd.starts_with("dd ")
            && cmd
                .split(' ')
                .any(|a| a.starts_with("of=/etc") || a.starts_with("of=.git"))
        {
            want.push("destructive_command".into());
        }
        let expect = case["expect"].as_str().unwrap();
        match verdict {
            None => assert!(want.is_empty() && expect == "none", "{case}"),
            Some(v) => {
                assert_eq!(guard_rules(&v), want, "rules for {case}");
                let got = if v.verdict == "ask" { "ask" } else { "none" };
                assert_eq!(got, expect, "{case}: {v:?}");
                if let Some(rule) = &v.rule {
                    let prompt = &guards.iter().find(|(r, _)| r == rule).unwrap().1;
                    assert_eq!(v.reason.as_deref(), Some(prompt.as_str()));
                }
            }
        }
    }
    assert!(cases.len() > 70);
}

#[test]
fn guard_action_deny_and_opt_out() {
    let deny = CommandPolicy::from_json(r#"{"guard_action": "deny"}"#).unwrap();
    assert_eq!(deny.check("rm -rf /").verdict, "deny");
    let off = CommandPolicy::from_json(r#"{"default_guards": false}"#).unwrap();
    assert_eq!(off.check("rm -rf /").verdict, "no_match");
    assert_eq!(off.check_write("/etc/passwd").verdict, "no_match");
}

#[test]
fn stronger_than_the_reference_gaps() {
    // The vector semantics list these as reference gaps; helikon guards them.
    let p = CommandPolicy::from_json("{}").unwrap();
    for cmd in [
        "rm -rf //",
        "rm -rf /.",
        "/bin/rm -rf /",
        "rm -rf /tmp/..",
        "rm -r /",
        "rm -rf /etc",
        "echo x > //etc/passwd",
        "cp evil /usr/local/bin/ls",
        "mv x /etc/hosts",
        "install -m 755 x /usr/bin/x",
        "dd if=x of=/tmp/b of=/etc/a",
    ] {
        assert_eq!(p.check(cmd).verdict, "ask", "{cmd}");
    }
}
