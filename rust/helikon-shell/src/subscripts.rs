//! Builtins whose arguments bash evaluates as arithmetic (attack M11 residue).
//!
//! An array subscript is arithmetic, and arithmetic expands `$(…)` and backquotes in its
//! text even when the word was quoted: `printf -v 'a[$(cmd)]'`, `read 'a[$(cmd)]'`,
//! `declare 'a[$(cmd)]=1'`, `test -v 'a[$(cmd)]'`, `[[ 'a[$(cmd)]' -eq 1 ]]` and
//! `let 'x=a[$(cmd)]'` all run `cmd`. Such a word is analysed as the body of `$((…))`, so
//! the command inside is named. `mapfile -C CALLBACK` / `readarray -C` run the callback as a
//! command: it is analysed as shell code.

use crate::analyze::{Analyzer, Ctx};
use crate::programs::option_values;
use crate::word::Word;

fn t(w: &Word) -> &str {
    w.text()
}

/// Options of `read` that take a value (the word after them is not a variable name).
const READ_VALUED: &[&str] = &["-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u"];
/// Options of `mapfile`/`readarray` that take a value.
const MAPFILE_VALUED: &[&str] = &["-d", "-n", "-O", "-s", "-u", "-C", "-c"];
/// `[[ … ]]` operators whose operands are arithmetic or variable names.
const ARITH_TESTS: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge", "-v"];

/// Analyse the arithmetic-evaluated arguments of builtin `p`.
pub(crate) fn follow(an: &mut Analyzer, p: &str, args: &[&Word], ctx: &Ctx<'_>) {
    let words: Vec<&Word> = match p {
        "printf" => named_values(args, &["-v"]),
        "read" => {
            let mut w = named_values(args, &["-a"]);
            w.extend(operands(args, READ_VALUED));
            w
        }
        "mapfile" | "readarray" => {
            for (cb, dynamic) in option_values(args, &["-C"]) {
                an.reenter_word(cb, dynamic, "mapfile -C", ctx);
            }
            operands(args, MAPFILE_VALUED)
        }
        "declare" | "typeset" | "local" | "export" | "readonly" | "unset" | "let" => args
            .iter()
            .copied()
            .filter(|w| !t(w).starts_with(['-', '+']) || p == "let")
            .collect(),
        "test" | "[" => args
            .windows(2)
            .filter(|p| t(p[0]) == "-v")
            .map(|p| p[1])
            .collect(),
        "[[" if args.iter().any(|w| ARITH_TESTS.contains(&t(w))) => args.to_vec(),
        _ => return,
    };
    for w in words {
        let s = t(w);
        if !w.is_dynamic() && (s.contains("$(") || s.contains('`')) {
            an.reenter(&format!("_=$(({s}))"), "arithmetic subscript", ctx);
        }
    }
}

/// The words given as values of the listed options (`-v NAME`, `-vNAME`).
fn named_values<'a>(args: &[&'a Word], names: &[&str]) -> Vec<&'a Word> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let s = t(w);
        if s == "--" {
            break;
        }
        if names.contains(&s) {
            if let Some(v) = args.get(i + 1) {
                out.push(*v);
            }
            i += 2;
            continue;
        }
        if names.iter().any(|n| s.len() > n.len() && s.starts_with(n)) {
            out.push(*w);
        }
        i += 1;
    }
    out
}

/// Non-option arguments, skipping the values of `valued` options.
fn operands<'a>(args: &[&'a Word], valued: &[&str]) -> Vec<&'a Word> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut options = true;
    while let Some(w) = args.get(i) {
        let s = t(w);
        if options && s == "--" {
            options = false;
        } else if options && s.len() > 1 && s.starts_with('-') {
            if valued.contains(&s) {
                i += 1;
            }
        } else {
            out.push(*w);
        }
        i += 1;
    }
    out
}
