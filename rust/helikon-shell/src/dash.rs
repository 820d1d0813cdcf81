//! The command as `/bin/sh` reads it when `/bin/sh` is dash (Debian, Ubuntu), which is the
//! shell `BashTool` runs.
//!
//! The analyser's grammar is bash's. Where dash reads the same text differently, a command
//! can hide from the bash reading and still run under dash (found by the attack round,
//! `docs/design/matcher.md`):
//!
//! - `$'…'` is ANSI-C quoting to bash; dash has none, so it reads `$` and a plain
//!   single-quoted string: `echo $'\'; rm f; #'` runs `rm f` under dash only;
//! - `[[`, `function`, `select` and `coproc` are keywords to bash and command names to dash,
//!   so what follows `||`, `&&`, `|`, `;` or a newline inside them is a command to dash
//!   (`[[ -z x || sh ]]` runs `sh ]]`);
//! - `((…))` (handled in the lexer: its body is also read as a script).
//!
//! [`reading`] rewrites the text so that the bash-grammar analyser reads it as dash does:
//! `$'` loses its `$`, and the keywords are escaped (`\[[`), which makes them plain words. The
//! analysis runs on both texts and keeps the union (`analyze.rs`): a command either shell
//! would run is named. The rewrite ignores quoting, so it can only add commands.

/// Words that are keywords to bash and plain command names to dash.
const KEYWORDS: &[&[u8]] = &[b"[[", b"function", b"select", b"coproc"];

/// Program names that only exist as bash keywords: under dash they are "not found", so the
/// dash reading does not report them as programs.
pub(crate) fn is_bash_keyword(program: &str) -> bool {
    KEYWORDS.contains(&program.as_bytes())
}

fn is_word_break(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b';' | b'|' | b'&' | b'(' | b')' | b'`')
}

/// The text as dash reads it, or `None` when it holds nothing dash reads differently.
pub(crate) fn reading(src: &str) -> Option<String> {
    let b = src.as_bytes();
    let needs = src.contains("$'")
        || KEYWORDS
            .iter()
            .any(|k| std::str::from_utf8(k).is_ok_and(|k| src.contains(k)));
    if !needs {
        return None;
    }
    let mut out: Vec<u8> = Vec::with_capacity(src.len() + 16);
    let mut i = 0;
    let mut changed = false;
    while let Some(&c) = b.get(i) {
        let at_word = i == 0 || b.get(i - 1).copied().is_some_and(is_word_break);
        if at_word {
            if let Some(k) = KEYWORDS.iter().find(|k| {
                b.get(i..i + k.len()) == Some(**k)
                    && b.get(i + k.len()).is_none_or(|&n| is_word_break(n))
            }) {
                out.push(b'\\');
                out.extend_from_slice(k);
                i += k.len();
                changed = true;
                continue;
            }
        }
        if c == b'$' && b.get(i + 1) == Some(&b'\'') {
            i += 1;
            changed = true;
            continue;
        }
        out.push(c);
        i += 1;
    }
    // Only ASCII bytes were inserted or removed, so the text stays UTF-8.
    String::from_utf8(out).ok().filter(|_| changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites() {
        assert_eq!(
            reading("echo $'\\'; rm f; #'").as_deref(),
            Some("echo '\\'; rm f; #'")
        );
        assert_eq!(
            reading("[[ -z x || sh ]]").as_deref(),
            Some("\\[[ -z x || sh ]]")
        );
        assert_eq!(
            reading("function f { ls; }").as_deref(),
            Some("\\function f { ls; }")
        );
        assert_eq!(reading("ls -la"), None);
        assert_eq!(reading("myfunction x"), None);
        assert_eq!(reading("é $'x' é").as_deref(), Some("é 'x' é"));
    }
}
