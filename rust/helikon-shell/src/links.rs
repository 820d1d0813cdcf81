//! Links made earlier in the same command, for the guards (attack G6).
//!
//! `ln -s /etc x; echo hi > x/passwd` writes `/etc/passwd`, `ln -s / r && rm -rf r/` removes
//! `/`, `cp -s /etc/passwd y; echo > y` writes `/etc/passwd`. The guards see each write or
//! remove target through the links made by the commands before it: `ln` (symbolic or hard),
//! `cp -s`/`--symbolic-link`, `cp -l`/`--link`. A link whose target is not known statically
//! (an expansion) stands for `/`, the worst case. Only the first [`MAX_PREFIX`] components of
//! a path are looked up, so the cost stays linear in its length.

use std::collections::HashMap;

use crate::model::Command;
use crate::paths::clean_path;

/// Path components of a target looked up as link names.
const MAX_PREFIX: usize = 8;

/// Link name (cleaned, relative to where it was made) -> what it points to.
#[derive(Debug, Default)]
pub(crate) struct Links {
    map: HashMap<String, String>,
}

fn key(p: &str) -> String {
    let c = clean_path(p);
    let c = c.trim_end_matches('/');
    c.strip_prefix("./").unwrap_or(c).to_string()
}

impl Links {
    /// Record the links command `c` makes.
    pub(crate) fn record(&mut self, c: &Command) {
        let program = c.program.to_ascii_lowercase();
        let args = c.args();
        let links = match program.as_str() {
            "ln" => true,
            "cp" => args.iter().any(|a| {
                matches!(a.as_str(), "--symbolic-link" | "--link")
                    || (a.starts_with('-') && !a.starts_with("--") && a.contains(['s', 'l']))
            }),
            _ => false,
        };
        if !links {
            return;
        }
        let mut ops: Vec<&str> = Vec::new();
        let mut dir: Option<&str> = None;
        let mut i = 0;
        let mut done = false;
        while let Some(a) = args.get(i) {
            if !done && a == "--" {
                done = true;
            } else if !done && (a == "-t" || a == "--target-directory") {
                dir = args.get(i + 1).map(String::as_str);
                i += 1;
            } else if let Some(d) = a.strip_prefix("--target-directory=").filter(|_| !done) {
                dir = Some(d);
            } else if !done && (a == "-S" || a == "--suffix") {
                i += 1;
            } else if done || !a.starts_with('-') || a == "-" {
                ops.push(a);
            }
            i += 1;
        }
        let (sources, dest_dir, dest): (&[&str], Option<&str>, Option<&str>) =
            match (dir, ops.len()) {
                (Some(d), _) => (&ops[..], Some(d), None),
                (None, 0) => return,
                // `ln -s TARGET` links `./basename(TARGET)`.
                (None, 1) => (&ops[..], Some("."), None),
                (None, 2) => (&ops[..1], None, ops.get(1).copied()),
                (None, n) => (&ops[..n - 1], ops.last().copied(), None),
            };
        for src in sources {
            let name = match (dest, dest_dir) {
                (Some(d), _) => d.to_string(),
                (None, Some(d)) => format!("{d}/{}", crate::analyze::basename(src)),
                (None, None) => continue,
            };
            let to = self.through(src).unwrap_or_else(|| (*src).to_string());
            let to = if to.contains(['$', '`']) {
                "/".to_string()
            } else if !to.starts_with(['/', '~']) {
                // A relative link target is relative to the link's directory.
                match key(&name).rsplit_once('/') {
                    Some((parent, _)) => format!("{parent}/{to}"),
                    None => to,
                }
            } else {
                to
            };
            self.map.insert(key(&name), to);
        }
    }

    /// `target` seen through the links recorded so far, when a link is on its path.
    pub(crate) fn through(&self, target: &str) -> Option<String> {
        if self.map.is_empty() {
            return None;
        }
        let k = key(target);
        let mut end = 0;
        let mut found: Option<(usize, &String)> = None;
        for (n, comp) in k.split('/').enumerate() {
            if n >= MAX_PREFIX {
                break;
            }
            end += comp.len() + usize::from(n > 0);
            if let Some(to) = k.get(..end).and_then(|p| self.map.get(p)) {
                found = Some((end, to));
            }
        }
        let (end, to) = found?;
        let rest = k.get(end..).unwrap_or("");
        let joined = format!("{}{rest}", to.trim_end_matches('/'));
        Some(if joined.is_empty() {
            "/".into()
        } else {
            joined
        })
    }

    /// `c` with its arguments seen through the links, when any argument goes through one.
    pub(crate) fn rewrite(&self, c: &Command) -> Option<Command> {
        if self.map.is_empty() {
            return None;
        }
        let mut changed = false;
        let argv: Vec<String> = c
            .argv
            .iter()
            .enumerate()
            .map(|(i, a)| match (i, self.through(a)) {
                (0, _) | (_, None) => a.clone(),
                (_, Some(t)) => {
                    changed = true;
                    t
                }
            })
            .collect();
        changed.then(|| Command { argv, ..c.clone() })
    }
}
