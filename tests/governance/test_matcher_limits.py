"""A hostile command never crashes or hangs the matcher, and never gets past a deny rule.

Section 1 of the matcher hardening: the analysis budget (``helikon.shell.Limits``), the
reproduction of the ``find -exec`` stack overflow, and Hypothesis properties over generated
commands up to 1 MB. Time is measured in ``benches/bench_shell.py --scaling``, not here.
"""

from __future__ import annotations

import json
import shlex

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helikon import _native
from helikon.errors import ConfigError
from helikon.shell import DEFAULT_LIMITS, Limits, analyze

DENY_RM = _native.CommandPolicy(json.dumps({"deny": ["rm"], "default_guards": False}))
# Every program the generator uses except rm: an allow list that covers everything else.
ALLOW_ALL_BUT_RM = _native.CommandPolicy(
    json.dumps(
        {
            "allow": [
                "ls", "echo", "cat", "true", "grep", "find", "xargs", "bash", "sh", "sudo",
                "env", "timeout", "nice", "nohup", "eval", "date", "wc", "sort",
            ],
            "default_guards": False,
        }
    )
)  # fmt: skip


def verdict(policy: _native.CommandPolicy, command: str) -> str:
    return str(json.loads(policy.check(command))["verdict"])


# --------------------------------------------------------------------------- reproduction


@pytest.mark.parametrize("unit", ["find . -exec ", "find . -execdir ", "find . -ok "])
def test_find_actions_repeated_to_100_kb_are_unanalysable_not_a_crash(unit: str) -> None:
    command = unit * (100_000 // len(unit) + 1)
    a = analyze(command)
    assert a.programs == ("find",) * 25  # the outer find and max_depth nested levels
    assert a.unanalysable[0].reason == "nesting too deep (over the analysis limit max_depth=24)"
    assert verdict(DENY_RM, command) == "ask"
    assert verdict(ALLOW_ALL_BUT_RM, command) == "no_match"


def test_find_actions_repeated_to_1_mb_return_a_decision() -> None:
    command = "find . -exec " * (1_000_000 // 13 + 1)
    assert verdict(DENY_RM, command) == "ask"


# --------------------------------------------------------------------------- limits


def test_default_limits_are_documented_values() -> None:
    assert (
        Limits(
            max_bytes=4 * 1024 * 1024,
            max_depth=24,
            max_words=1 << 20,
            work_factor=4,
            work_slack=1 << 20,
        )
        == DEFAULT_LIMITS
    )
    assert DEFAULT_LIMITS.to_rules() == {
        "max_bytes": 4194304,
        "max_depth": 24,
        "max_words": 1048576,
        "work_factor": 4,
        "work_slack": 1048576,
    }


WORK_REASON = (
    "analysis work budget exceeded (over the analysis limit work_factor=1 with work_slack=1: "
    "1 x the input + 1 bytes)"
)


@pytest.mark.parametrize(
    "command",
    [
        "bash -c 'echo hi'",
        "eval 'echo hi'",
        "sh -c \"sh -c 'ls'\"",
        "bash <<'EOF'\nls\nEOF",
        "echo $(bash -c 'ls')",
        "su -c 'ls' root",
    ],
)
def test_the_work_budget_is_a_limit_and_the_reason_names_it(command: str) -> None:
    tight = Limits(work_factor=1, work_slack=1)
    a = analyze(command, limits=tight)
    assert [u.reason for u in a.unanalysable][-1:] == [WORK_REASON]
    assert analyze(command).analysable
    # A larger budget analyses the same command fully.
    assert analyze(command, limits=Limits(work_factor=1, work_slack=1 << 20)).analysable


def test_the_work_budget_per_policy_is_the_worst_case() -> None:
    tight = Limits(work_factor=1, work_slack=1).to_rules()
    deny = _native.CommandPolicy(
        json.dumps({"deny": ["rm"], "default_guards": False, "limits": tight})
    )
    v = json.loads(deny.check("bash -c 'ls'"))
    assert (v["verdict"], v["rule"]) == ("ask", "unanalysable")
    assert "work_factor=1 with work_slack=1" in v["reason"]
    allow = _native.CommandPolicy(json.dumps({"allow": ["bash", "ls"], "limits": tight}))
    assert verdict(allow, "bash -c 'ls'") != "allow"
    roomy = _native.CommandPolicy(json.dumps({"allow": ["bash", "ls"]}))
    assert verdict(roomy, "bash -c 'ls'") == "allow"


def test_each_limit_is_named_in_the_reason() -> None:
    a = analyze("ls " * 50, limits=Limits(max_bytes=100))
    assert a.commands == ()
    assert a.unanalysable[0].reason == "command is 150 bytes, over the analysis limit max_bytes=100"
    a = analyze("echo $(echo $(echo $(rm x)))", limits=Limits(max_depth=2))
    assert a.unanalysable[0].reason == "nesting too deep (over the analysis limit max_depth=2)"
    assert "rm" not in a.programs
    a = analyze("a b c d e; " * 10, limits=Limits(max_words=20))
    assert a.unanalysable[-1].reason == "too many words (over the analysis limit max_words=20)"
    nested = [
        "{ { { ls; }; }; }",
        "if a; then if b; then if c; then ls; fi; fi; fi",
        "sudo env nice ls",
        "find . -exec find . -exec find . -exec ls ;",
    ]
    for spelling in nested:
        reasons = [u.reason for u in analyze(spelling, limits=Limits(max_depth=2)).unanalysable]
        assert "nesting too deep (over the analysis limit max_depth=2)" in reasons, spelling
        assert analyze(spelling).analysable, spelling


def test_a_command_over_a_limit_gets_the_worst_case() -> None:
    rules = {"deny": ["rm"], "default_guards": False, "limits": {"max_bytes": 64}}
    deny = _native.CommandPolicy(json.dumps(rules))
    v = json.loads(deny.check("ls " * 30))
    assert (v["verdict"], v["rule"]) == ("ask", "unanalysable")
    assert "max_bytes=64" in v["reason"]
    allow = _native.CommandPolicy(
        json.dumps({"allow": ["ls"], "default_guards": False, "limits": {"max_words": 4}})
    )
    assert verdict(allow, "ls a b") == "allow"
    v = json.loads(allow.check("ls a b c d e"))
    assert v["verdict"] == "no_match"
    assert "max_words=4" in v["reason"]
    # The built-in guards take their worst case past a limit as well (attack G5).
    guarded = _native.CommandPolicy(json.dumps({"allow": ["ls"], "limits": {"max_words": 4}}))
    v = json.loads(guarded.check("ls a b c d e"))
    assert (v["verdict"], v["rule"]) == ("ask", "guard_analysis_limit")
    assert "max_words=4" in v["reason"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_depth": 0}, "Limits.max_depth must be a positive int, got 0"),
        ({"max_depth": 101}, "Limits.max_depth must be at most 100"),
        ({"max_bytes": -1}, "Limits.max_bytes must be a positive int, got -1"),
        ({"max_words": 1.5}, "Limits.max_words must be a positive int, got 1.5"),
        ({"max_words": True}, "Limits.max_words must be a positive int, got True"),
        ({"work_factor": 0}, "Limits.work_factor must be a positive int, got 0"),
        ({"work_slack": "1"}, "Limits.work_slack must be a positive int, got '1'"),
    ],
)
def test_bad_limits_are_refused_naming_the_field(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        Limits(**kwargs)  # type: ignore[arg-type]


def test_bad_policy_limits_are_refused_naming_the_field() -> None:
    with pytest.raises(ConfigError, match=r"limits\.max_depth must be at most 100"):
        _native.CommandPolicy(json.dumps({"limits": {"max_depth": 500}}))
    with pytest.raises(ConfigError, match="unknown field `depth`"):
        _native.CommandPolicy(json.dumps({"limits": {"depth": 5}}))


def test_analyze_refuses_a_limits_of_the_wrong_type() -> None:
    with pytest.raises(ConfigError, match=r"analyze\(limits=...\) takes a helikon.shell.Limits"):
        analyze("ls", limits={"max_depth": 3})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("command", "programs"),
    [
        # arithmetic: bash evaluates the words as an expression and runs nothing
        ("echo $(( sudo rm x ))", ("echo",)),
        ('echo "$(( rm -rf x ))"', ("echo",)),
        # a subshell in a command substitution, and substitutions inside arithmetic, do run
        ("echo $( ( rm x ) )", ("echo", "rm")),
        ("echo $(( a[$(rm x)] ))", ("echo", "rm")),
        ("echo $(($(rm x) + 1))", ("echo", "rm")),
        ("cat <(( rm x ))", ("cat", "rm")),
    ],
)
def test_arithmetic_runs_only_the_substitutions_inside_it(
    command: str, programs: tuple[str, ...]
) -> None:
    assert analyze(command).programs == programs
    assert verdict(DENY_RM, command) == ("deny" if "rm" in programs else "no_match")


# --------------------------------------------------------------------------- properties

# Templates that run their inner command; `{}` is the inner command (or simple command).
# `$(` is followed by a space: `$((` opens an arithmetic expansion, which runs nothing when
# the inner command is a subshell `( ... )` (see the arithmetic test below).
ANY_COMMAND = [
    "echo $( {} )",
    "cat <({})",
    "{{ {}; }}",
    "( {} )",
    "ls | {}",
    "{} && ls",
    "true || {}",
    "if true; then {}; fi",
    "for i in a b; do {}; done",
    "while true; do {}; done",
    "f() {{ {}; }}; f",
    'echo "$( {} )"',
]
SIMPLE_ONLY = [
    "sudo {}",
    "env A=1 {}",
    "timeout 5 {}",
    "nice -n 5 {}",
    "nohup {}",
    "find . -exec {} \\;",
    "ls | xargs {}",
]
RM = ["rm x", "\\rm -rf x", "/bin/rm x", "'rm' x", 'r"m" x', "$'\\x72m' x", "command rm x"]
FILLER = ["ls -la; ", "echo $(date) | wc -l; ", "cat a | grep b && sort c; ", "{ ls; } > f; "]
PIECES = [" ", "\n", ";", "&&", "|", "(", ")", "$(", "`", "'", '"', "\\", "{", "}", "<<E\n",
          "E\n", "find . -exec ", "-delete", "eval ", "bash -c ", "xargs ", "sudo ", "rm ",
          "if ", "then ", "fi ", "${", "$((", "))", "<(", "#", "=", "*"]  # fmt: skip


def quoted(inner: str, how: str) -> str:
    if how == "bash -c":
        return f"bash -c {shlex.quote(inner)}"
    if how == "eval":
        return f"eval {shlex.quote(inner)}"
    return f"bash <<'EOF{len(inner)}'\n{inner}\nEOF{len(inner)}\n"


@st.composite
def commands_running_rm(draw: st.DrawFn) -> str:
    """A command that certainly runs rm, padded with benign commands to up to ~1 MB."""
    inner = draw(st.sampled_from(RM))
    simple = True
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["any", "simple", "string"]))
        if kind == "any" and draw(st.booleans()):
            # Backquotes nest only with the inner ones escaped.
            inner = "echo `" + inner.replace("\\", "\\\\").replace("`", "\\`") + "`"
            simple = False
        elif kind == "simple" and simple:
            inner = draw(st.sampled_from(SIMPLE_ONLY)).format(inner)
        elif kind == "string":
            inner = quoted(inner, draw(st.sampled_from(["bash -c", "eval", "heredoc"])))
            simple = False
        else:
            inner = draw(st.sampled_from(ANY_COMMAND)).format(inner)
            simple = False
    filler = draw(st.sampled_from(FILLER))
    before = draw(st.integers(0, 1_000_000 // len(filler)))
    after = draw(st.integers(0, 100))
    return filler * before + inner + "\n" + filler * after


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(commands_running_rm())
def test_a_command_running_rm_is_never_allowed(command: str) -> None:
    assert verdict(DENY_RM, command) in ("deny", "ask")
    assert verdict(ALLOW_ALL_BUT_RM, command) == "no_match"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=40),
    st.integers(1, 1_000_000),
)
def test_any_soup_of_shell_syntax_up_to_1_mb_gets_a_decision(pieces: list[str], size: int) -> None:
    unit = "".join(pieces)
    command = (unit * (size // len(unit) + 1))[:size]
    a = analyze(command)
    v = verdict(DENY_RM, command)
    assert v in ("deny", "ask", "no_match")
    if "rm" in a.programs:
        assert v == "deny"
    if verdict(ALLOW_ALL_BUT_RM, command) == "allow":
        assert a.analysable
        assert "rm" not in a.programs


def test_a_limit_too_large_for_the_native_side_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"Limits.max_words must be at most 9223372036854775807"):
        Limits(max_words=10**30)
