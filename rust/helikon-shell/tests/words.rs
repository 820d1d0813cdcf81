//! Word rendering and program resolution on quoting edge cases, through both result forms
//! (`analyze` and the packed `analyze_packed` the Python binding uses). The expectations
//! were recorded from the analyser before its lexer kept literals as source spans, so they
//! pin that behaviour, including the lossy rendering of an escape that splits a character.

use helikon_shell::{analyze, analyze_packed};

/// A resolved command: (program, argv).
type Resolved = (&'static str, Vec<&'static str>);

/// (command, its resolved commands, number of unanalysable parts)
fn cases() -> Vec<(&'static str, Vec<Resolved>, usize)> {
    vec![
        (
            "echo a'b'\"c\"d\\ e",
            vec![("echo", vec!["echo", "abcd e"])],
            0,
        ),
        (
            "echo $'\\x41\\n' \"x$HOME\"y 'it''s'",
            vec![("echo", vec!["echo", "A\n", "x$HOMEy", "its"])],
            0,
        ),
        (
            "r''m -rf \\/tmp",
            vec![("rm", vec!["rm", "-rf", "/tmp"])],
            0,
        ),
        (
            "echo é\\é 'ü' \"ö\"",
            vec![("echo", vec!["echo", "é\u{fffd}\u{fffd}", "ü", "ö"])],
            0,
        ),
        (
            "echo \\é",
            vec![("echo", vec!["echo", "\u{fffd}\u{fffd}"])],
            0,
        ),
        ("cat <<'EOF' > out\nhi\nEOF", vec![("cat", vec!["cat"])], 0),
        (
            "arr=(a 'b c' $(whoami)) cmd",
            vec![("cmd", vec!["cmd"]), ("whoami", vec!["whoami"])],
            0,
        ),
        (
            "ls *.py {a,b} '*' \\*",
            vec![("ls", vec!["ls", "*.py", "{a,b}", "*", "*"])],
            0,
        ),
        (
            "x=1 y+=2 env Z=3 sudo -u root rm -f a",
            vec![("rm", vec!["rm", "-f", "a"])],
            0,
        ),
        (
            "echo \"$(date) and `id`\" ${HOME:-$(pwd)}",
            vec![
                ("echo", vec!["echo", "$(date) and `id`", "${HOME:-$(pwd)}"]),
                ("date", vec!["date"]),
                ("id", vec!["id"]),
                ("pwd", vec!["pwd"]),
            ],
            0,
        ),
        (
            "f() { rm x; }; f",
            vec![("rm", vec!["rm", "x"]), ("f", vec!["f"])],
            0,
        ),
        (
            "ls @(a|b) ?(x)",
            vec![("ls", vec!["ls", "@(a|b)", "?(x)"])],
            0,
        ),
        (
            "echo \"a\\$b\\\\c\\\"d\" \"\"",
            vec![("echo", vec!["echo", "a$b\\c\"d", ""])],
            0,
        ),
        ("$HOME/bin/tool --x", vec![], 1),
        (
            "/usr/bin/env -S 'rm -rf x'",
            vec![("rm", vec!["rm", "-rf", "x"])],
            0,
        ),
    ]
}

#[test]
fn words_render_as_before() {
    for (command, want, issues) in cases() {
        let a = analyze(command);
        let got: Vec<(&str, Vec<&str>)> = a
            .commands
            .iter()
            .map(|c| {
                (
                    c.program.as_str(),
                    c.argv.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(got, want, "{command:?}");
        assert_eq!(a.unanalysable.len(), issues, "{command:?}");

        let p = analyze_packed(command);
        let packed: Vec<(&str, Vec<&str>)> = p
            .commands()
            .map(|c| (c.program(), c.argv().collect()))
            .collect();
        assert_eq!(packed, want, "packed {command:?}");
        assert_eq!(p.into_analysis(), a, "packed to owned {command:?}");
    }
}

#[test]
fn packed_text_and_context_match_the_owned_form() {
    let command = "FOO=1 sudo -u x rm -rf ./a > log 2>&1 && echo $(cat f)";
    let p = analyze_packed(command);
    let a = analyze(command);
    assert_eq!(p.command_count(), a.commands.len());
    for (c, o) in p.commands().zip(&a.commands) {
        assert_eq!(c.text(), o.text);
        assert_eq!(c.line(), o.line);
        assert_eq!(c.via(), o.via.as_slice());
        assert_eq!(c.env(), o.env.as_slice());
        assert_eq!(c.redirections(), o.redirections.as_slice());
        assert_eq!(&c.to_command(), o);
    }
    assert!(p.command(0).is_some());
    assert!(p.command(p.command_count()).is_none());
}
