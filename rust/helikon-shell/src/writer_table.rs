//! A table of programs that write a file named by an option or an operand (attack G4
//! residue): `uniq IN OUT`, `shuf -o`, `iconv -o`, `xxd IN OUT`, `openssl … -out`,
//! `gpg -o`, `split IN PREFIX`, `csplit -f`, `sponge`, `dos2unix`, `yq -i`, `ssh-keygen -f`,
//! `strip`/`objcopy`, `ar`, `7z`, `zip`, `script`, `pandoc -o`, ImageMagick, `ffmpeg`; the
//! files named by `sed` `w` commands and `sqlite3` dot-commands; `GIT_TRACE*` set to a path.
//! Used by [`crate::writers::extra_targets`]. Over-approximates: a word taken as a target
//! that is not one only matters when it names a protected path.

use crate::model::Command;

/// Where a program's written file is.
enum Target {
    /// The values of these options (`-o F`, `-oF`, `--output F`, `--output=F`).
    Opt(&'static [&'static str]),
    /// The operand at this index.
    Nth(usize),
    /// Every operand.
    All,
    /// The last operand.
    Last,
    /// Every operand when one of these flags is present (in-place editors).
    AllIf(&'static [&'static str]),
}

struct Writer {
    names: &'static [&'static str],
    /// Options that take the next word (their values are not operands).
    valued: &'static [&'static str],
    targets: &'static [Target],
}

const TABLE: &[Writer] = &[
    Writer {
        names: &["uniq"],
        valued: &[
            "-f",
            "-s",
            "-w",
            "--skip-fields",
            "--skip-chars",
            "--check-chars",
        ],
        targets: &[Target::Nth(1)],
    },
    Writer {
        names: &["shuf"],
        valued: &[
            "-n",
            "-i",
            "--head-count",
            "--input-range",
            "--random-source",
        ],
        targets: &[Target::Opt(&["-o", "--output"])],
    },
    Writer {
        names: &["iconv"],
        valued: &["-f", "-t", "--from-code", "--to-code"],
        targets: &[Target::Opt(&["-o", "--output"])],
    },
    Writer {
        names: &["xxd"],
        valued: &[
            "-c", "-g", "-l", "-s", "-o", "-n", "-cols", "-len", "-seek", "-name",
        ],
        targets: &[Target::Nth(1)],
    },
    Writer {
        names: &["openssl"],
        valued: &[
            "-in", "-pass", "-passin", "-passout", "-K", "-iv", "-md", "-inkey",
        ],
        targets: &[Target::Opt(&["-out", "-keyout", "-signkey"])],
    },
    Writer {
        names: &["gpg", "gpg2"],
        valued: &["-r", "-u", "--recipient", "--local-user", "--homedir"],
        targets: &[Target::Opt(&["-o", "--output"])],
    },
    Writer {
        names: &["split", "gsplit"],
        valued: &[
            "-a",
            "-b",
            "-C",
            "-l",
            "-n",
            "-t",
            "--suffix-length",
            "--bytes",
            "--line-bytes",
            "--lines",
            "--number",
            "--separator",
            "--additional-suffix",
            "--filter",
        ],
        targets: &[Target::Nth(1)],
    },
    Writer {
        names: &["csplit"],
        valued: &["-b", "-n", "--suffix-format", "--digits"],
        targets: &[Target::Opt(&["-f", "--prefix"])],
    },
    Writer {
        names: &["sponge"],
        valued: &[],
        targets: &[Target::All],
    },
    Writer {
        names: &["dos2unix", "unix2dos", "mac2unix", "unix2mac"],
        valued: &[],
        targets: &[Target::All],
    },
    Writer {
        names: &["yq"],
        valued: &[
            "-o",
            "-p",
            "-I",
            "--output-format",
            "--input-format",
            "--indent",
        ],
        targets: &[Target::AllIf(&["-i", "--inplace"])],
    },
    Writer {
        names: &["ssh-keygen"],
        valued: &[
            "-t", "-b", "-C", "-N", "-P", "-m", "-Y", "-n", "-I", "-O", "-s", "-Z",
        ],
        targets: &[Target::Opt(&["-f"])],
    },
    Writer {
        names: &["strip", "objcopy", "ranlib"],
        valued: &[
            "-R", "-K", "-N", "-F", "-O", "-I", "-B", "-j", "-W", "-L", "-G",
        ],
        targets: &[Target::Opt(&["-o"]), Target::All],
    },
    Writer {
        names: &["zip"],
        valued: &["-b", "-n", "-t", "-tt", "-P", "-s", "-Z"],
        targets: &[Target::Opt(&["-O", "--out"]), Target::Nth(0)],
    },
    Writer {
        names: &["script"],
        valued: &["-c", "-E", "--command", "--echo"],
        targets: &[
            Target::Opt(&[
                "-O",
                "-I",
                "-B",
                "-T",
                "--log-out",
                "--log-in",
                "--log-io",
                "--log-timing",
                "--timing",
            ]),
            Target::Nth(0),
        ],
    },
    Writer {
        names: &["pandoc"],
        valued: &[
            "-f", "-t", "-r", "-w", "--from", "--to", "--read", "--write",
        ],
        targets: &[Target::Opt(&["-o", "--output", "--extract-media"])],
    },
    Writer {
        names: &["convert", "magick", "mogrify", "montage", "composite"],
        valued: &[],
        targets: &[Target::Last],
    },
];

/// Write targets of `cmd` found through [`TABLE`] and the special grammars below.
pub(crate) fn targets(cmd: &Command, out: &mut Vec<String>) {
    for (name, value) in &cmd.env {
        if name.starts_with("GIT_TRACE") && value.contains(['/', '~', '$']) {
            out.push(value.clone());
        }
    }
    let program = cmd.program.to_ascii_lowercase();
    let args = cmd.args();
    match program.as_str() {
        "sed" | "gsed" => sed(args, out),
        "sqlite3" => sqlite_dot(args, out),
        "ar" => ar(args, out),
        "7z" | "7za" | "7zr" => seven_zip(args, out),
        "ffmpeg" | "avconv" => ffmpeg(args, out),
        _ => {}
    }
    let Some(w) = TABLE.iter().find(|w| w.names.contains(&program.as_str())) else {
        return;
    };
    let (ops, opts) = split(args, w);
    for t in w.targets {
        match t {
            Target::Opt(names) => out.extend(
                opts.iter()
                    .filter(|(n, _)| names.contains(&n.as_str()))
                    .map(|(_, v)| v.clone()),
            ),
            Target::Nth(n) => out.extend(ops.get(*n).cloned()),
            Target::All => out.extend(ops.iter().cloned()),
            Target::Last => out.extend(ops.last().cloned()),
            Target::AllIf(flags) => {
                if args
                    .iter()
                    .any(|a| flags.contains(&a.as_str()) || a.starts_with("-i"))
                {
                    out.extend(ops.iter().cloned());
                }
            }
        }
    }
}

/// Operands and `(option, value)` pairs of `args`, given the options in the table entry that
/// take a value (its own valued options and the ones its targets name).
fn split(args: &[String], w: &Writer) -> (Vec<String>, Vec<(String, String)>) {
    let takes = |n: &str| {
        w.valued.contains(&n)
            || w.targets
                .iter()
                .any(|t| matches!(t, Target::Opt(names) if names.contains(&n)))
    };
    let mut ops = Vec::new();
    let mut opts = Vec::new();
    let mut i = 0;
    let mut done = false;
    while let Some(a) = args.get(i) {
        i += 1;
        if done || a == "-" || !a.starts_with('-') {
            ops.push(a.clone());
            continue;
        }
        if a == "--" {
            done = true;
            continue;
        }
        if let Some((n, v)) = a.split_once('=') {
            opts.push((n.to_string(), v.to_string()));
            continue;
        }
        if takes(a) {
            opts.push((a.clone(), args.get(i).cloned().unwrap_or_default()));
            i += 1;
            continue;
        }
        // A short option with its value attached (`-oFILE`).
        if !a.starts_with("--") {
            if let Some(head) = a.get(..2).filter(|h| takes(h)) {
                opts.push((head.to_string(), a.get(2..).unwrap_or("").to_string()));
                continue;
            }
        }
        opts.push((a.clone(), String::new()));
    }
    (ops, opts)
}

/// The files `sed` `w`/`W` commands and `s///w` flags write: the script is each `-e` value
/// (or `--expression=`) or, without one, the first operand.
fn sed(args: &[String], out: &mut Vec<String>) {
    let mut scripts: Vec<&str> = Vec::new();
    let mut first_op: Option<&str> = None;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if a == "-e" || a == "--expression" {
            scripts.extend(args.get(i).map(String::as_str));
            i += 1;
        } else if let Some(v) = a.strip_prefix("--expression=") {
            scripts.push(v);
        } else if a.starts_with("-e") && !a.starts_with("--") {
            scripts.push(a.get(2..).unwrap_or(""));
        } else if a == "-f" || a == "--file" || a == "-l" || a == "--line-length" {
            i += 1;
        } else if !a.starts_with('-') && first_op.is_none() {
            first_op = Some(a);
        } else if let Some(flags) = a.strip_prefix('-').filter(|f| !f.starts_with('-')) {
            // `-ne 'w F'`: a bundle ending in `e` takes the script as the next word.
            if flags.ends_with('e') {
                scripts.extend(args.get(i).map(String::as_str));
                i += 1;
            }
        }
    }
    if scripts.is_empty() {
        scripts.extend(first_op);
    }
    for s in scripts {
        sed_writes(s, out);
    }
}

/// File names after a `w`/`W` command or flag in a sed script: a `w` not preceded by a
/// letter (or preceded by `s` flags) followed by blanks takes the rest of its line.
fn sed_writes(script: &str, out: &mut Vec<String>) {
    for line in script.lines() {
        let b = line.as_bytes();
        for (k, c) in b.iter().enumerate() {
            if !matches!(c, b'w' | b'W') || !b.get(k + 1).is_some_and(u8::is_ascii_whitespace) {
                continue;
            }
            let before = b[..k]
                .iter()
                .rev()
                .find(|p| !matches!(p, b'g' | b'p' | b'e' | b'i' | b'I' | b'm' | b'M'))
                .copied();
            if before.is_none_or(|p| !p.is_ascii_alphabetic()) {
                let name = line.get(k + 1..).unwrap_or("").trim();
                if !name.is_empty() {
                    out.push(name.to_string());
                }
            }
        }
    }
}

/// `sqlite3 DB ".output F"`, `.once F`, `.backup [DB] F`, `.save F`, also in `-cmd` values
/// and in any later argument: the last word of the dot-command.
fn sqlite_dot(args: &[String], out: &mut Vec<String>) {
    for a in args {
        for line in a.lines() {
            let mut words = line.split_whitespace();
            let Some(cmd) = words.next() else { continue };
            if matches!(cmd, ".output" | ".once" | ".backup" | ".save" | ".log") {
                if let Some(last) = words.last() {
                    out.push(last.trim_matches(['"', '\'']).to_string());
                }
            }
        }
    }
}

/// `ar KEY ARCHIVE [FILE…]` (key with or without a dash): the archive.
fn ar(args: &[String], out: &mut Vec<String>) {
    let mut ops = args.iter().filter(|a| !a.starts_with("--"));
    let key = ops.next();
    let archive = if key.is_some_and(|k| k.starts_with('-') || !k.contains('/')) {
        ops.find(|a| !a.starts_with('-'))
    } else {
        key
    };
    out.extend(archive.cloned());
}

/// `7z a|u|d|rn ARCHIVE …` writes the archive; `-oDIR` is where `x`/`e` extract to.
fn seven_zip(args: &[String], out: &mut Vec<String>) {
    let ops: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    if ops
        .first()
        .is_some_and(|c| matches!(c.as_str(), "a" | "u" | "d" | "rn"))
    {
        out.extend(ops.get(1).map(|s| (*s).clone()));
    }
    out.extend(
        args.iter()
            .filter_map(|a| a.strip_prefix("-o"))
            .map(str::to_string),
    );
}

/// `ffmpeg [-i IN]… OUT`: every word that is neither an option nor an `-i` input (option
/// values are over-approximated as outputs).
fn ffmpeg(args: &[String], out: &mut Vec<String>) {
    let mut prev = "";
    for a in args {
        if !a.starts_with('-') && prev != "-i" {
            out.push(a.clone());
        }
        prev = a;
    }
}
