//! No panics on arbitrary input, bounded recursion, and near-linear time on pathological input.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::{Duration, Instant};

use helikon_shell::{analyze, split, CommandPolicy, PathRule};

/// xorshift64*: deterministic pseudo-random bytes without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

const PIECES: &[&str] = &[
    " ",
    "\n",
    "\t",
    ";",
    "&",
    "&&",
    "|",
    "||",
    "|&",
    "(",
    ")",
    "((",
    "))",
    "{",
    "}",
    "$(",
    "${",
    "$((",
    "`",
    "'",
    "\"",
    "\\",
    "$'",
    "<",
    ">",
    ">>",
    "<<",
    "<<-",
    "<<<",
    ">&",
    "&>",
    "2>&1",
    "<(",
    ">(",
    "#",
    "=",
    "rm",
    "-rf",
    "/",
    "~",
    "$HOME",
    "bash",
    "-c",
    "eval",
    "sudo",
    "env",
    "xargs",
    "find",
    "-exec",
    "\\;",
    "if",
    "then",
    "fi",
    "case",
    "in",
    "esac",
    ";;",
    "for",
    "do",
    "done",
    "function",
    "EOF",
    "x=",
    "[[",
    "]]",
    "*",
    "?",
    "[",
    "]",
    ",",
    "..",
    "é",
    "\u{0}",
    "\r",
    "git",
    "-c",
    "core.pager=",
    "watch",
    "tee",
];

#[test]
fn random_inputs_never_panic() {
    let policy = CommandPolicy::from_json(
        r#"{"deny": ["rm"], "allow": ["ls", "git"], "guards": [{"name": "g", "action": "ask", "write_paths": ["a/**"]}]}"#,
    )
    .unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..4000 {
        let n = (rng.next() % 40) as usize;
        let mut s = String::new();
        for _ in 0..n {
            s.push_str(PIECES[(rng.next() % PIECES.len() as u64) as usize]);
        }
        let a = analyze(&s);
        let _ = a.to_json();
        let _ = split(&s);
        let v = policy.check(&s);
        assert!(["deny", "ask", "allow", "no_match"].contains(&v.verdict));
        let _ = policy.check_write(&s);
        let _ = PathRule::new(&s).map(|r| r.matches(&s));
    }
}

fn timed(input: &str) -> Duration {
    let t = Instant::now();
    let a = analyze(input);
    let _ = CommandPolicy::from_json(r#"{"deny":["rm"]}"#)
        .unwrap()
        .check_analysis(&a);
    t.elapsed()
}

#[test]
fn pathological_inputs_are_fast_and_bounded() {
    let n = 20_000;
    let inputs = [
        "(".repeat(n),
        "((".repeat(n),
        "$(".repeat(n),
        "${".repeat(n),
        "$((".repeat(n),
        "`".repeat(n),
        "\"$(".repeat(n),
        "<(".repeat(n),
        "{ ".repeat(n),
        "eval ".repeat(n),
        "bash -c ".repeat(n),
        "a=(".repeat(n),
        "cat <<EOF\n".repeat(n),
        "\\".repeat(n),
        "'".repeat(n),
        "$'\\x".repeat(n),
        "if then ".repeat(n),
        "case x in ".repeat(n),
        "rm -rf / ; ".repeat(n / 4),
        "sudo env timeout 1 nice ".repeat(n / 4),
        "{a,".repeat(n),
        "x ".repeat(n) + &")".repeat(n),
    ];
    for input in &inputs {
        let d = timed(input);
        assert!(
            d < Duration::from_secs(5),
            "{} bytes of {:?}... took {d:?}",
            input.len(),
            &input[..8.min(input.len())]
        );
    }
}

#[test]
fn deep_nesting_is_unanalysable_not_a_crash() {
    let mut s = "rm x".to_string();
    for _ in 0..200 {
        s = format!("echo $({s})");
    }
    let a = analyze(&s);
    assert!(a
        .unanalysable
        .iter()
        .any(|u| u.reason.starts_with("nesting too deep")));
    let v = CommandPolicy::from_json(r#"{"deny":["rm"]}"#)
        .unwrap()
        .check(&s);
    assert_eq!(v.verdict, "ask");
}

#[test]
fn time_scales_roughly_linearly() {
    let unit = "echo $(cat a | grep \"b ${c:-d}\") && { rm -rf ./x; } > out.txt; f() { ls; }\n";
    let small = unit.repeat(2000);
    let large = unit.repeat(8000);
    let _ = timed(&small);
    let ts = timed(&small).as_secs_f64();
    let tl = timed(&large).as_secs_f64();
    assert!(tl < ts * 12.0 + 0.05, "4x input took {tl}s vs {ts}s");
}

#[test]
fn nested_command_strings_do_not_blow_up() {
    // Each level holds a command string with a substitution; analysing both the substitution
    // and a re-parse of the string would double the work per level.
    for wrap in [
        "watch \"$({})\"",
        "su -c \"$({})\"",
        "git -c core.pager=\"$({})\" log",
        "bash <<EOF\n$({})\nEOF",
    ] {
        let mut s = "rm x".to_string();
        for _ in 0..22 {
            s = wrap.replace("{}", &s);
        }
        let d = timed(&s);
        assert!(d < Duration::from_secs(2), "{wrap}: {d:?}");
        let v = CommandPolicy::from_json(r#"{"deny":["rm"]}"#)
            .unwrap()
            .check(&s);
        assert_ne!(v.verdict, "no_match", "{wrap}");
    }
}
