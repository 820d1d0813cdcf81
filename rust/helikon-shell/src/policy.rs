//! `CommandPolicy`: deny lists, allow lists and guard rules compiled once, checked per command.
//!
//! Rules JSON (every field optional):
//!
//! ```json
//! {
//!   "deny": ["rm", "curl"],
//!   "allow": ["git", "ls"],
//!   "allow_exclusive": false,
//!   "allow_empty": false,
//!   "unanalysable": "ask",
//!   "default_guards": true,
//!   "guard_action": "ask",
//!   "limits": {"max_bytes": 4194304, "max_depth": 24, "max_words": 1048576,
//!              "work_factor": 4, "work_slack": 1048576},
//!   "guards": [
//!     {"name": "no-force-push", "action": "deny", "program": "git",
//!      "args_contain": ["push", "--force*"], "reason": "force push"},
//!     {"name": "no-secrets", "action": "ask", "write_paths": ["secrets/**"]}
//!   ]
//! }
//! ```
//!
//! Evaluation of one command: every deny-list hit (a resolved program, or a wrapper it runs
//! through, listed in `deny`) is a `deny`; when `deny` is non-empty and part of the command is
//! unanalysable, that is an `unanalysable` hit (default `ask`); then the built-in guards (when
//! `default_guards`) and the user guards, each with its action; then the allow list. The
//! verdict is the first `deny` hit, else the first `ask` hit, else `allow` when an allow list
//! is given and covers the command, else `no_match` (or `deny` when `allow_exclusive`).
//! All hits are returned in order (`matches`) so a pipeline can clear one approved guard and
//! continue. Program names compare ASCII case-insensitively.

use serde::{Deserialize, Serialize};

use crate::allow::AllowPattern;
use crate::analyze::analyze_with;
use crate::destructive;
use crate::error::ShellError;
use crate::guards;
use crate::limits::Limits;
use crate::model::{Analysis, Command};
use crate::paths::PathRule;
use crate::smuggle;

/// A guard or fail-closed action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Deny,
    Ask,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GuardSpec {
    name: String,
    action: Action,
    #[serde(default)]
    program: Option<String>,
    #[serde(default)]
    args_contain: Vec<String>,
    #[serde(default)]
    write_paths: Vec<String>,
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesSpec {
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    allow: Option<Vec<String>>,
    #[serde(default)]
    allow_exclusive: bool,
    #[serde(default)]
    allow_empty: Option<bool>,
    #[serde(default)]
    unanalysable: Option<Action>,
    #[serde(default)]
    default_guards: Option<bool>,
    #[serde(default)]
    guard_action: Option<Action>,
    #[serde(default)]
    guards: Vec<GuardSpec>,
    #[serde(default)]
    limits: Option<Limits>,
}

#[derive(Debug)]
enum UserMatch {
    Program { program: String, args: Vec<String> },
    Paths(Vec<PathRule>),
}

#[derive(Debug)]
struct UserGuard {
    name: String,
    action: Action,
    reason: String,
    matcher: UserMatch,
}

/// One rule hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Match {
    /// `deny`, `guard` or `allow`.
    pub stage: &'static str,
    pub rule: String,
    /// `deny`, `ask` or `allow`.
    pub verdict: &'static str,
    pub reason: String,
    /// The sub-command's source text (empty for whole-command hits).
    pub command: String,
    pub program: Option<String>,
    pub line: u32,
    pub explain: String,
}

/// The outcome of [`CommandPolicy::check`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    /// `deny`, `ask`, `allow` or `no_match`.
    pub verdict: &'static str,
    pub rule: Option<String>,
    pub reason: Option<String>,
    pub command: Option<String>,
    pub program: Option<String>,
    pub line: Option<u32>,
    pub explain: Option<String>,
    pub matches: Vec<Match>,
    /// For an `allow` verdict: the allow patterns that covered the sub-commands, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allowed_by: Vec<String>,
}

impl Verdict {
    fn from_match(verdict: &'static str, m: Match, matches: Vec<Match>) -> Verdict {
        Verdict {
            verdict,
            rule: Some(m.rule),
            reason: Some(m.reason),
            command: (!m.command.is_empty()).then_some(m.command),
            program: m.program,
            line: Some(m.line),
            explain: Some(m.explain),
            matches,
            allowed_by: Vec::new(),
        }
    }

    fn none(matches: Vec<Match>) -> Verdict {
        Verdict {
            verdict: "no_match",
            rule: None,
            reason: None,
            command: None,
            program: None,
            line: None,
            explain: None,
            matches,
            allowed_by: Vec::new(),
        }
    }

    /// JSON text of the verdict.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string())
    }
}

/// A compiled rule set.
#[derive(Debug)]
pub struct CommandPolicy {
    deny: Vec<String>,
    allow: Option<Vec<AllowPattern>>,
    allow_exclusive: bool,
    allow_empty: bool,
    unanalysable: Action,
    default_guards: bool,
    guard_action: Action,
    guards: Vec<UserGuard>,
    limits: Limits,
}

fn act(a: Action) -> &'static str {
    match a {
        Action::Deny => "deny",
        Action::Ask => "ask",
    }
}

fn hit(
    stage: &'static str,
    rule: &str,
    verdict: &'static str,
    reason: String,
    cmd: Option<&Command>,
    line: u32,
) -> Match {
    let (command, program, line) = match cmd {
        Some(c) => (c.text.clone(), Some(c.program.clone()), c.line),
        None => (String::new(), None, line),
    };
    let explain = if command.is_empty() {
        format!("{rule}: {reason}")
    } else {
        format!("{rule}: {reason}, in sub-command `{command}` on line {line}")
    };
    Match {
        stage,
        rule: rule.to_string(),
        verdict,
        reason,
        command,
        program,
        line,
        explain,
    }
}

impl CommandPolicy {
    /// Compile a rule set from its JSON text (see the module docs).
    ///
    /// # Errors
    /// [`ShellError::InvalidRules`] for malformed JSON, unknown fields or a guard with neither
    /// `program` nor `write_paths`; [`ShellError::InvalidGlob`] for a bad `write_paths` glob.
    pub fn from_json(json: &str) -> Result<CommandPolicy, ShellError> {
        let value: serde_json::Value =
            serde_json::from_str(json).map_err(|e| ShellError::InvalidRules(e.to_string()))?;
        if !value.is_object() {
            return Err(ShellError::InvalidRules(
                "the rules must be a JSON object".into(),
            ));
        }
        let spec: RulesSpec =
            serde_json::from_value(value).map_err(|e| ShellError::InvalidRules(e.to_string()))?;
        if let Some(l) = &spec.limits {
            l.validate().map_err(ShellError::InvalidRules)?;
        }
        let mut guards = Vec::new();
        for g in spec.guards {
            let matcher = match (&g.program, g.write_paths.is_empty()) {
                (Some(p), true) => UserMatch::Program {
                    program: p.to_ascii_lowercase(),
                    args: g.args_contain.clone(),
                },
                (None, false) => UserMatch::Paths(
                    g.write_paths
                        .iter()
                        .map(|p| PathRule::new(p))
                        .collect::<Result<_, _>>()?,
                ),
                _ => {
                    return Err(ShellError::InvalidRules(format!(
                        "guard `{}` needs exactly one of `program` or `write_paths`",
                        g.name
                    )))
                }
            };
            guards.push(UserGuard {
                reason: g
                    .reason
                    .clone()
                    .unwrap_or_else(|| format!("guard `{}`", g.name)),
                name: g.name,
                action: g.action,
                matcher,
            });
        }
        let lower = |v: Vec<String>| {
            v.into_iter()
                .map(|s| s.to_ascii_lowercase())
                .collect::<Vec<_>>()
        };
        let allow = match spec.allow {
            Some(list) => Some(
                list.iter()
                    .map(|p| AllowPattern::new(p))
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            None => None,
        };
        Ok(CommandPolicy {
            deny: lower(spec.deny),
            allow,
            allow_exclusive: spec.allow_exclusive,
            allow_empty: spec.allow_empty.unwrap_or(spec.allow_exclusive),
            unanalysable: spec.unanalysable.unwrap_or(Action::Ask),
            default_guards: spec.default_guards.unwrap_or(true),
            guard_action: spec.guard_action.unwrap_or(Action::Ask),
            guards,
            limits: spec.limits.unwrap_or_default(),
        })
    }

    /// Check a Bash command string (analysed under the policy's [`Limits`]).
    pub fn check(&self, command: &str) -> Verdict {
        self.check_analysis(&analyze_with(command, &self.limits))
    }

    /// The analysis limits of this policy.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Check an already computed analysis.
    pub fn check_analysis(&self, a: &Analysis) -> Verdict {
        let mut matches: Vec<Match> = Vec::new();
        // 1. Deny list.
        if !self.deny.is_empty() {
            for c in &a.commands {
                let listed = |n: &str| self.deny.iter().any(|d| d.eq_ignore_ascii_case(n));
                let name = if listed(&c.program) {
                    Some(format!(
                        "command `{}` is blocked by the deny list",
                        c.program
                    ))
                } else if listed("rm") && destructive::rm_equivalent(c) {
                    Some(format!(
                        "command `{}` removes files like `rm`, which the deny list blocks",
                        c.program
                    ))
                } else {
                    c.wrappers()
                        .find(|w| listed(w))
                        .map(|n| format!("command `{n}` is blocked by the deny list"))
                };
                if let Some(reason) = name {
                    matches.push(hit("deny", "deny_list", "deny", reason, Some(c), c.line));
                } else if let Some(arg) = names_denied_program(c, &listed) {
                    // A program whose grammar the matcher does not know may run an argument
                    // as a command (`fakeroot rm f`, `chpst -u x rm f`, `ip netns exec n rm
                    // f`): a denied name among its arguments is a possible hit.
                    let reason = format!(
                        "command `{}` is given `{arg}` as an argument and may run it (the deny \
                         list blocks `{arg}`)",
                        c.program
                    );
                    matches.push(hit(
                        "deny",
                        "argument_names_denied",
                        act(self.unanalysable),
                        reason,
                        Some(c),
                        c.line,
                    ));
                }
            }
            if let Some(u) = a.unanalysable.first() {
                let reason = format!(
                    "the command cannot be fully analysed ({}: `{}`), so a denied program may run",
                    u.reason, u.snippet
                );
                matches.push(hit(
                    "deny",
                    "unanalysable",
                    act(self.unanalysable),
                    reason,
                    None,
                    u.line,
                ));
            }
        }
        // 2. Guards.
        if self.default_guards {
            self.builtin_guards(a, &mut matches);
        }
        for g in &self.guards {
            self.user_guard(g, a, &mut matches);
        }
        // 3. Allow list.
        let mut allow_fail: Option<Match> = None;
        let mut allowed_by: Vec<String> = Vec::new();
        if let Some(allow) = &self.allow {
            match self.allow_blocker(allow, a, &mut allowed_by) {
                None => matches.push(hit(
                    "allow",
                    "allow_list",
                    "allow",
                    "every sub-command is in the allow list".into(),
                    None,
                    1,
                )),
                Some(m) => allow_fail = Some(m),
            }
        }
        let first = |v: &str| matches.iter().find(|m| m.verdict == v).cloned();
        if let Some(m) = first("deny")
            .or_else(|| first("ask"))
            .or_else(|| first("allow"))
        {
            let mut v = Verdict::from_match(m.verdict, m, matches);
            if v.verdict == "allow" {
                v.allowed_by = allowed_by;
            }
            return v;
        }
        match allow_fail {
            Some(mut m) if self.allow_exclusive => {
                m.verdict = "deny";
                matches.push(m.clone());
                Verdict::from_match("deny", m, matches)
            }
            Some(m) => Verdict::from_match("no_match", m, matches),
            None => Verdict::none(matches),
        }
    }

    fn builtin_guards(&self, a: &Analysis, matches: &mut Vec<Match>) {
        let action = act(self.guard_action);
        // A command that cannot be fully analysed (past an analysis limit, a program or a
        // string known only when it runs, code the matcher does not read) may wipe `/`,
        // discard work or write system files unseen, so the guards take their worst case,
        // as deny rules do (attack finding G5: `bash -c "$(printf %s 'rm -rf ~')"`).
        let past_limit = a
            .unanalysable
            .iter()
            .find(|u| guards::is_limit_hit(&u.reason));
        if let Some(u) = past_limit.or(a.unanalysable.first()) {
            let limit = guards::is_limit_hit(&u.reason);
            let reason = if limit {
                format!(
                    "the command is past an analysis limit ({}), so the built-in guards cannot \
                     see all of it",
                    u.reason
                )
            } else {
                format!(
                    "the command cannot be fully analysed ({}: `{}`), so the built-in guards \
                     cannot see what it runs",
                    u.reason, u.snippet
                )
            };
            matches.push(hit(
                "guard",
                if limit {
                    guards::UNANALYSABLE
                } else {
                    guards::GUARD_UNANALYSABLE
                },
                action,
                reason,
                None,
                u.line,
            ));
        }
        let mut rm_hit = vec![false; a.commands.len()];
        // Links made by earlier commands (attack G6): targets are seen through them.
        let mut links = crate::links::Links::default();
        let mut targets: Vec<(String, Option<&Command>, u32)> = Vec::new();
        let mut find_starts: Vec<String> = Vec::new();
        let mut link_dir: Option<String> = None;
        for (i, c) in a.commands.iter().enumerate() {
            // Only `rm` is checked by argument; other commands by their write targets.
            let through = if c.program.eq_ignore_ascii_case("rm") {
                links.rewrite(c)
            } else {
                None
            };
            // `find START… -exec rm -rf {} +`: the start paths are the targets (attack G2).
            if c.program.eq_ignore_ascii_case("find") {
                find_starts = guards::find_start_paths(c);
            }
            let from_find = guards::with_find_paths(c, &find_starts);
            // `ln -s / r; cd r && rm -rf *`: a cd/pushd from the start directory into a link
            // made earlier moves to the link's target (attack G6 residue).
            if matches!(c.program.as_str(), "cd" | "pushd") {
                if let Some(t) = c.args().first().and_then(|a| links.through(a)) {
                    link_dir = Some(t);
                }
            }
            let in_link = match (&link_dir, &c.cwd) {
                (Some(d), None) if c.program.eq_ignore_ascii_case("rm") => Some(Command {
                    cwd: Some(d.clone()),
                    ..c.clone()
                }),
                _ => None,
            };
            let rm = guards::rm_root_or_home(c)
                .or_else(|| through.as_ref().and_then(guards::rm_root_or_home))
                .or_else(|| from_find.as_ref().and_then(guards::rm_root_or_home))
                .or_else(|| in_link.as_ref().and_then(guards::rm_root_or_home));
            if let Some(t) = rm {
                rm_hit[i] = true;
                if !matches.iter().any(|m| m.rule == guards::RM_ROOT_OR_HOME) {
                    let reason = guards::prompt(guards::RM_ROOT_OR_HOME).to_string();
                    let mut m = hit(
                        "guard",
                        guards::RM_ROOT_OR_HOME,
                        action,
                        reason,
                        Some(c),
                        c.line,
                    );
                    m.explain.push_str(&format!(" (target `{t}`)"));
                    matches.push(m);
                }
            }
            for t in guards::write_targets(c, !rm_hit[i]) {
                if let Some(seen) = links.through(&t) {
                    targets.push((seen, Some(c), c.line));
                }
                // A relative target in the directory an earlier `cd` moved to.
                let t = crate::cwd::resolve(c.cwd.as_deref(), &t).unwrap_or(t);
                targets.push((t, Some(c), c.line));
            }
            links.record(c);
        }
        for r in a
            .redirections
            .iter()
            .filter(|r| matches!(r.op, "out" | "append" | "read_write"))
        {
            if let Some(seen) = links.through(&r.target) {
                targets.push((seen, None, r.line));
            }
            targets.push((r.target.clone(), None, r.line));
        }
        for (rule, test) in [
            (
                guards::PROTECTED_PATH,
                guards::is_protected_system_path as fn(&str) -> bool,
            ),
            (guards::PROTECTED_DOTPATH, guards::is_protected_dotpath),
        ] {
            if let Some((t, c, line)) = targets.iter().find(|(t, _, _)| test(t)) {
                let mut m = hit(
                    "guard",
                    rule,
                    action,
                    guards::prompt(rule).to_string(),
                    *c,
                    *line,
                );
                m.explain.push_str(&format!(" (target `{t}`)"));
                matches.push(m);
            }
        }
        if let Some((c, why)) = a
            .commands
            .iter()
            .find_map(|c| destructive::destructive(c).map(|w| (c, w)))
        {
            let mut m = hit(
                "guard",
                destructive::DESTRUCTIVE,
                action,
                guards::prompt(destructive::DESTRUCTIVE).to_string(),
                Some(c),
                c.line,
            );
            m.explain.push_str(&format!(" ({why})"));
            matches.push(m);
        }
    }

    fn user_guard(&self, g: &UserGuard, a: &Analysis, matches: &mut Vec<Match>) {
        for c in &a.commands {
            let tripped = match &g.matcher {
                UserMatch::Program { program, args } => {
                    c.program.eq_ignore_ascii_case(program)
                        && args
                            .iter()
                            .all(|want| c.args().iter().any(|have| arg_matches(want, have)))
                }
                UserMatch::Paths(rules) => guards::write_targets(c, true)
                    .iter()
                    .any(|t| rules.iter().any(|r| r.matches(t))),
            };
            if tripped {
                matches.push(hit(
                    "guard",
                    &g.name,
                    act(g.action),
                    g.reason.clone(),
                    Some(c),
                    c.line,
                ));
                return;
            }
        }
    }

    fn allow_blocker(
        &self,
        allow: &[AllowPattern],
        a: &Analysis,
        used: &mut Vec<String>,
    ) -> Option<Match> {
        let fail = |reason: String, c: Option<&Command>, line: u32| {
            Some(hit("allow", "allow_list", "no_match", reason, c, line))
        };
        if let Some(u) = a.unanalysable.first() {
            return fail(
                format!(
                    "the command cannot be fully analysed ({}: `{}`)",
                    u.reason, u.snippet
                ),
                None,
                u.line,
            );
        }
        for c in &a.commands {
            match allow.iter().find(|p| p.covers(c)) {
                Some(p) => {
                    if !used.contains(&p.raw) {
                        used.push(p.raw.clone());
                    }
                }
                None => {
                    let same: Vec<&str> = allow
                        .iter()
                        .filter(|p| p.program.eq_ignore_ascii_case(&c.program))
                        .map(|p| p.raw.as_str())
                        .collect();
                    let reason = if same.is_empty() {
                        format!("command `{}` is not in the allow list", c.program)
                    } else {
                        format!(
                            "`{}` is not covered by the allow patterns `{}`",
                            c.argv.join(" "),
                            same.join("`, `")
                        )
                    };
                    return fail(reason, Some(c), c.line);
                }
            }
            if let Some(reason) = smuggle::allow_blocker(c) {
                return fail(reason, Some(c), c.line);
            }
        }
        if let Some((s, asg)) = a
            .assignments
            .iter()
            .find_map(|x| smuggle::assignment_blocker(x).map(|s| (s, x)))
        {
            return fail(s, None, asg.line);
        }
        if a.commands.is_empty() && !self.allow_empty {
            return fail("the command runs no program".into(), None, 1);
        }
        None
    }

    /// Check a file path written by a Write/Edit tool against the write guards.
    pub fn check_write(&self, path: &str) -> Verdict {
        let mut matches = Vec::new();
        if self.default_guards {
            let action = act(self.guard_action);
            for (rule, test) in [
                (
                    guards::PROTECTED_PATH,
                    guards::is_protected_system_path as fn(&str) -> bool,
                ),
                (guards::PROTECTED_DOTPATH, guards::is_protected_dotpath),
            ] {
                if test(path) {
                    let mut m = hit(
                        "guard",
                        rule,
                        action,
                        guards::prompt(rule).to_string(),
                        None,
                        1,
                    );
                    m.explain = format!("{rule}: {} (path `{path}`)", guards::prompt(rule));
                    matches.push(m);
                }
            }
        }
        for g in &self.guards {
            if let UserMatch::Paths(rules) = &g.matcher {
                if rules.iter().any(|r| r.matches(path)) {
                    matches.push(hit(
                        "guard",
                        &g.name,
                        act(g.action),
                        g.reason.clone(),
                        None,
                        1,
                    ));
                }
            }
        }
        let chosen = matches
            .iter()
            .find(|m| m.verdict == "deny")
            .or_else(|| matches.first())
            .cloned();
        match chosen {
            Some(m) => Verdict::from_match(m.verdict, m, matches),
            None => Verdict::none(matches),
        }
    }
}

/// `want` matches an argument exactly, or as a prefix when it ends in `*`.
fn arg_matches(want: &str, have: &str) -> bool {
    match want.strip_suffix('*') {
        Some(prefix) => have.starts_with(prefix),
        None => want == have,
    }
}

/// Programs that only print, search or describe their arguments: a denied name among them
/// is data (`echo rm`, `man rm`, `grep rm notes`, `which rm`).
const DATA_PROGRAMS: &[&str] = &[
    "echo",
    "printf",
    "command",
    "man",
    "info",
    "help",
    "which",
    "whereis",
    "whatis",
    "apropos",
    "type",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ack",
    "cat",
    "less",
    "more",
    "head",
    "tail",
    "wc",
    "sort",
    "uniq",
    "cut",
    "tr",
    "test",
    "[",
    "[[",
    "true",
    "false",
    ":",
    "hash",
    "alias",
    "unalias",
    "unset",
    "export",
    "declare",
    "local",
    "readonly",
    "typeset",
    "compgen",
    "complete",
    "pgrep",
    "pkill",
    "killall",
    "pidof",
    "apt",
    "apt-get",
    "apt-cache",
    "dpkg",
    "yum",
    "dnf",
    "brew",
    "pip",
    "pip3",
    "npm",
    "cargo",
    "tldr",
    "git",
    "ls",
    "stat",
    "file",
    "du",
    "touch",
    "mkdir",
    "cp",
    "mv",
    "ln",
    "chmod",
    "chown",
    "diff",
    "cmp",
    "jq",
    "sed",
    "awk",
    "basename",
    "dirname",
    "realpath",
    "readlink",
];

/// The first argument of `c` (a path's basename counts) that names a denied program, when
/// `c`'s program is not one that treats its arguments as data.
fn names_denied_program(c: &Command, listed: &impl Fn(&str) -> bool) -> Option<String> {
    let program = c.program.to_ascii_lowercase();
    if DATA_PROGRAMS.contains(&program.as_str()) {
        return None;
    }
    c.args()
        .iter()
        .map(|a| a.rsplit('/').next().unwrap_or(a))
        .find(|a| !a.is_empty() && listed(a))
        .map(str::to_string)
}
