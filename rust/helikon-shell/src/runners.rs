//! Runners: package and environment managers that run a program given as their arguments
//! (`uv run`, `uvx`, `conda run`, `npm exec`, `npx`, `poetry run`, `nix-shell --run`, …) and
//! a few programs that run a shell with arguments (`capsh -- -c`) or install commands that
//! run later (`crontab FILE`). Attack classes M5/M6.
//!
//! The runner itself stays a command (so an allow rule for it matches the runner) and the
//! program it runs is resolved as a command of its own, reached `via` the runner, so a deny
//! rule sees it and an allow rule for the runner does not cover it. An option the runner's
//! table does not know may take the next word as its value, so the program is then uncertain
//! and the command fails closed.

use std::borrow::Cow;

use crate::analyze::{Analyzer, Ctx, Stdin};
use crate::model::Via;
use crate::word::Word;

/// One runner: the program, the subcommand words that make it run a program, its options
/// that take a separate value, its options that take none, and the label of the via entry.
struct Runner {
    program: &'static str,
    sub: &'static [&'static str],
    valued: &'static [&'static str],
    flags: &'static [&'static str],
    label: &'static str,
}

const UV_VALUED: &[&str] = &[
    "--with",
    "--with-editable",
    "--with-requirements",
    "--python",
    "-p",
    "--package",
    "--extra",
    "--group",
    "--only-group",
    "--no-group",
    "--env-file",
    "--directory",
    "--project",
    "--index",
    "--default-index",
    "--index-url",
    "-i",
    "--extra-index-url",
    "--find-links",
    "-f",
    "--config-file",
    "--cache-dir",
    "--color",
    "--python-preference",
    "--resolution",
    "--prerelease",
    "--exclude-newer",
    "--index-strategy",
    "--keyring-provider",
    "--link-mode",
    "--refresh-package",
    "--reinstall-package",
    "--upgrade-package",
    "-P",
    "--config-setting",
    "-C",
    "--allow-insecure-host",
    "--from",
];
const UV_FLAGS: &[&str] = &[
    "--frozen",
    "--locked",
    "--no-sync",
    "--isolated",
    "--all-extras",
    "--all-packages",
    "--no-dev",
    "--dev",
    "--only-dev",
    "--all-groups",
    "--no-project",
    "--no-config",
    "--no-cache",
    "-n",
    "--offline",
    "--quiet",
    "-q",
    "--verbose",
    "-v",
    "--upgrade",
    "-U",
    "--refresh",
    "--reinstall",
    "--native-tls",
    "--no-env-file",
    "--script",
    "-s",
    "--gui-script",
    "--active",
    "--exact",
    "--no-editable",
    "--managed-python",
    "--no-managed-python",
    "--no-python-downloads",
    "--compile-bytecode",
    "--no-build-isolation",
    "--no-progress",
    "--preview",
];
const CONDA_VALUED: &[&str] = &[
    "-n",
    "--name",
    "-p",
    "--prefix",
    "--cwd",
    "-r",
    "--root-prefix",
];
const CONDA_FLAGS: &[&str] = &[
    "--live-stream",
    "--no-capture-output",
    "--debug-wrapper-scripts",
    "-v",
    "--verbose",
    "-q",
    "--quiet",
    "--dev",
    "-a",
    "--attach",
];
const NPM_VALUED: &[&str] = &[
    "--package",
    "-p",
    "--prefix",
    "-w",
    "--workspace",
    "--cwd",
    "--registry",
    "--userconfig",
    "--cache",
    "--loglevel",
    "--filter",
    "-F",
    "--dir",
    "-C",
];
const NPM_FLAGS: &[&str] = &[
    "--yes",
    "-y",
    "--no",
    "--no-install",
    "--ignore-existing",
    "-q",
    "--quiet",
    "-s",
    "--silent",
    "--workspaces",
    "-ws",
    "--include-workspace-root",
    "--recursive",
    "-r",
    "--bun",
    "--verbose",
    "--shell-mode",
    "--no-shell-mode",
];
const PY_MANAGER_VALUED: &[&str] = &[
    "--directory",
    "-C",
    "--project",
    "-p",
    "--env",
    "-e",
    "--python",
    "--spec",
    "--index-url",
    "--pip-args",
];
const PY_MANAGER_FLAGS: &[&str] = &[
    "-v",
    "--verbose",
    "-q",
    "--quiet",
    "--no-interaction",
    "-n",
    "--no-ansi",
    "--ansi",
    "--no-plugins",
    "--no-cache",
    "--no-cache-dir",
    "--system",
    "--path",
    "--verbose",
    "--no-sync",
    "--frozen",
];

const RUNNERS: &[Runner] = &[
    Runner {
        program: "uv",
        sub: &["run"],
        valued: UV_VALUED,
        flags: UV_FLAGS,
        label: "uv run",
    },
    Runner {
        program: "uv",
        sub: &["tool", "run"],
        valued: UV_VALUED,
        flags: UV_FLAGS,
        label: "uv tool run",
    },
    Runner {
        program: "uvx",
        sub: &[],
        valued: UV_VALUED,
        flags: UV_FLAGS,
        label: "uvx",
    },
    Runner {
        program: "conda",
        sub: &["run"],
        valued: CONDA_VALUED,
        flags: CONDA_FLAGS,
        label: "conda run",
    },
    Runner {
        program: "mamba",
        sub: &["run"],
        valued: CONDA_VALUED,
        flags: CONDA_FLAGS,
        label: "mamba run",
    },
    Runner {
        program: "micromamba",
        sub: &["run"],
        valued: CONDA_VALUED,
        flags: CONDA_FLAGS,
        label: "micromamba run",
    },
    Runner {
        program: "pipx",
        sub: &["run"],
        valued: PY_MANAGER_VALUED,
        flags: PY_MANAGER_FLAGS,
        label: "pipx run",
    },
    Runner {
        program: "poetry",
        sub: &["run"],
        valued: PY_MANAGER_VALUED,
        flags: PY_MANAGER_FLAGS,
        label: "poetry run",
    },
    Runner {
        program: "pdm",
        sub: &["run"],
        valued: PY_MANAGER_VALUED,
        flags: PY_MANAGER_FLAGS,
        label: "pdm run",
    },
    Runner {
        program: "hatch",
        sub: &["run"],
        valued: PY_MANAGER_VALUED,
        flags: PY_MANAGER_FLAGS,
        label: "hatch run",
    },
    Runner {
        program: "pipenv",
        sub: &["run"],
        valued: PY_MANAGER_VALUED,
        flags: PY_MANAGER_FLAGS,
        label: "pipenv run",
    },
    Runner {
        program: "rye",
        sub: &["run"],
        valued: PY_MANAGER_VALUED,
        flags: PY_MANAGER_FLAGS,
        label: "rye run",
    },
    Runner {
        program: "npm",
        sub: &["exec"],
        valued: NPM_VALUED,
        flags: NPM_FLAGS,
        label: "npm exec",
    },
    Runner {
        program: "npm",
        sub: &["x"],
        valued: NPM_VALUED,
        flags: NPM_FLAGS,
        label: "npm exec",
    },
    Runner {
        program: "npx",
        sub: &[],
        valued: NPM_VALUED,
        flags: NPM_FLAGS,
        label: "npx",
    },
    Runner {
        program: "pnpm",
        sub: &["exec"],
        valued: NPM_VALUED,
        flags: NPM_FLAGS,
        label: "pnpm exec",
    },
    Runner {
        program: "pnpm",
        sub: &["dlx"],
        valued: NPM_VALUED,
        flags: NPM_FLAGS,
        label: "pnpm dlx",
    },
    Runner {
        program: "pnpx",
        sub: &[],
        valued: NPM_VALUED,
        flags: NPM_FLAGS,
        label: "pnpx",
    },
    Runner {
        program: "yarn",
        sub: &["exec"],
        valued: NPM_VALUED,
        flags: NPM_FLAGS,
        label: "yarn exec",
    },
    Runner {
        program: "yarn",
        sub: &["dlx"],
        valued: NPM_VALUED,
        flags: NPM_FLAGS,
        label: "yarn dlx",
    },
    Runner {
        program: "bunx",
        sub: &[],
        valued: NPM_VALUED,
        flags: NPM_FLAGS,
        label: "bunx",
    },
    Runner {
        program: "bun",
        sub: &["x"],
        valued: NPM_VALUED,
        flags: NPM_FLAGS,
        label: "bunx",
    },
    Runner {
        program: "direnv",
        sub: &["exec"],
        valued: &[],
        flags: &[],
        label: "direnv exec",
    },
];

fn t(w: &Word) -> &str {
    w.text()
}

/// Handle `p` if it is a runner, `capsh`, `crontab` or `nix-shell`; true when it was.
pub(crate) fn follow(an: &mut Analyzer, p: &str, args: &[&Word], ctx: &Ctx<'_>) -> bool {
    match p {
        "capsh" => capsh(an, args, ctx),
        "crontab" => crontab(an, args, ctx),
        "nix-shell" => nix_shell(an, args, ctx),
        _ => RUNNERS
            .iter()
            .filter(|r| r.program == p)
            .any(|r| run(an, r, args, ctx)),
    }
}

/// Try runner `r` on `args`; true when its subcommand matched (and the command was followed).
fn run(an: &mut Analyzer, r: &Runner, args: &[&Word], ctx: &Ctx<'_>) -> bool {
    let mut i = 0;
    let mut sub = r.sub.iter();
    let mut next_sub = sub.next();
    let mut unknown: Option<&str> = None;
    loop {
        let Some(w) = args.get(i) else {
            return next_sub.is_none();
        };
        let s = t(w);
        if s == "--" && next_sub.is_none() {
            i += 1;
            break;
        }
        if matches!(s, "-c" | "--call") && r.valued == NPM_VALUED {
            // `npx -c 'cmd'`: a shell string, analysed with the npm options (escapes.rs).
            return next_sub.is_none();
        }
        if s.starts_with('-') && s.len() > 1 {
            if r.valued.contains(&s) {
                i += 2;
            } else {
                let known = r.flags.contains(&s)
                    || (s.starts_with("--") && s.contains('='))
                    || (s.len() > 2
                        && !s.starts_with("--")
                        && r.valued.contains(&s.get(..2).unwrap_or("")));
                if !known && unknown.is_none() {
                    unknown = Some(s);
                }
                i += 1;
            }
            continue;
        }
        match next_sub {
            Some(word) if s == *word => {
                next_sub = sub.next();
                i += 1;
            }
            Some(_) => return false,
            None => break,
        }
        if r.program == "direnv" && next_sub.is_none() {
            // `direnv exec DIR COMMAND…`
            i += 1;
        }
    }
    let rest = args.get(i..).unwrap_or(&[]);
    if rest.is_empty() {
        return true;
    }
    if let Some(opt) = unknown {
        an.issue(
            &format!(
                "option `{opt}` of `{}` is not known, so the program it runs is uncertain",
                r.label
            ),
            ctx.text,
            ctx.line,
        );
    }
    let mut c = ctx.with_via(Via::Nested(Cow::Borrowed(r.label)));
    c.depth += 1;
    c.text = crate::word::span_text(rest).unwrap_or(ctx.text);
    an.resolve(rest, c);
    true
}

/// `capsh [OPTIONS] -- ARGS`: the words after `--` are arguments of `/bin/bash` (or of the
/// `--shell=` program): `capsh -- -c 'rm f'` runs `rm f`.
fn capsh(an: &mut Analyzer, args: &[&Word], ctx: &Ctx<'_>) -> bool {
    let mut shell_ok = true;
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let s = t(w);
        if let Some(prog) = s.strip_prefix("--shell=") {
            let base = crate::analyze::basename(prog);
            shell_ok = !w.is_dynamic() && matches!(base, "bash" | "sh" | "dash");
        }
        if s == "--" || s == "==" {
            break;
        }
        i += 1;
    }
    let Some(sep) = args.get(i) else {
        return true;
    };
    let rest = args.get(i + 1..).unwrap_or(&[]);
    if t(sep) == "==" || !shell_ok {
        an.issue("capsh runs a program given by option", ctx.text, ctx.line);
        return true;
    }
    match rest {
        [] => {}
        [c, code, ..]
            if t(c) == "-c"
                || (t(c).starts_with('-') && t(c).ends_with('c') && !t(c).starts_with("--")) =>
        {
            let mut c2 = ctx.with_via(Via::Nested(Cow::Borrowed("capsh --")));
            c2.depth += 1;
            an.reenter_word(t(code), code.is_dynamic(), "bash -c", &c2);
        }
        _ => an.issue("capsh runs a shell with arguments", ctx.text, ctx.line),
    }
    true
}

/// `crontab FILE` and `crontab -` install commands that run later: unanalysable, like a
/// crontab fed on standard input. `-l`, `-r`, `-e` (an editor) install nothing given here.
fn crontab(an: &mut Analyzer, args: &[&Word], ctx: &Ctx<'_>) -> bool {
    let mut i = 0;
    let mut file = false;
    while let Some(w) = args.get(i) {
        let s = t(w);
        if s == "-u" {
            i += 2;
            continue;
        }
        if s == "-" || !s.starts_with('-') {
            file = true;
        }
        i += 1;
    }
    let listing = args.iter().any(|w| matches!(t(w), "-l" | "-r" | "-e"));
    let fed = matches!(
        ctx.stdin,
        Stdin::HereDoc(_) | Stdin::HereString { .. } | Stdin::Pipe | Stdin::Process
    );
    if file || (fed && !listing) {
        an.issue(
            "crontab installs commands that run later",
            ctx.text,
            ctx.line,
        );
    }
    true
}

/// `nix-shell --run CMD` / `--command CMD` runs a shell string.
fn nix_shell(an: &mut Analyzer, args: &[&Word], ctx: &Ctx<'_>) -> bool {
    for (v, dynamic) in crate::programs::option_values(args, &["--run", "--command"]) {
        an.reenter_word(v, dynamic, "nix-shell --run", ctx);
    }
    true
}
