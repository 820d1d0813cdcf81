"""Differential test: the programs the analyser names vs the programs bash actually runs.

Every backend runs ``bash -c command`` (see ``tests/tools/test_bash_dialect.py``), so the
analyser is right exactly when it agrees with bash. Commands are generated from the grammar
classes where the attack found the analyser and the executing shell disagreeing
(``/work/attack-findings.md`` M8, M15-M18: ANSI-C quotes, ``[[``/``((``, ``coproc``,
``function``/``select`` keywords, here-strings, aliases, ``eval --``/``trap --``), run by the
real bash with ``PATH`` holding only tracing stubs (each stub appends its name to a log), and
compared with :func:`helikon.shell.analyze`:

* random token mixes: every program bash ran is named by the analysis, or the analysis is
  not analysable (then every rule gives its worst case);
* unconditional compositions: the named set EQUALS the set bash ran.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from helikon.shell import analyze

BASH = shutil.which("bash", path="/bin:/usr/bin")
pytestmark = pytest.mark.skipif(BASH is None, reason="bash is not installed")

STUBS = ("alpha", "beta", "gamma", "delta")
TOKENS = (
    "[[", "]]", "((", "))", "$'", "\\'", "'", '"', "$(", ")", "(", "{", "}", ";", "&&", "||",
    "|", "&", "\n", "#", "<<<", "<(", "=~", "!", "function", "coproc", "select", "time",
    "{a,b}", "$[", "]", "x", "case", "in", "esac", ";;", ";&", "${", "`", "\\", '$"', "<<E",
    "E", "-z", "=", "$", "do", "done", "then", "fi", "if", "while", "for", "f()", "alias",
    "trap", "eval", "-c", "--", "EXIT", "-s", "|&",
)  # fmt: skip
PROGRAMS = ("alpha", "beta x", "gamma 'a b'", "delta --", "bash -c 'alpha'", "eval -- beta")


@pytest.fixture(scope="module")
def stubs() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="helikon-diff-"))
    log = d / "log"
    for name in STUBS:
        p = d / name
        p.write_text(f"#!{BASH}\necho {name} >> {log}\n")
        p.chmod(0o755)
    assert BASH is not None
    (d / "bash").symlink_to(BASH)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def ran(stubs: Path, command: str) -> set[str]:
    """The stub programs bash runs for ``command`` (PATH has only the stubs and bash)."""
    log = stubs / "log"
    log.unlink(missing_ok=True)
    work = tempfile.mkdtemp(prefix="helikon-diff-cwd-")
    assert BASH is not None
    try:
        subprocess.run(
            [BASH, "-c", command],
            cwd=work,
            env={"PATH": str(stubs), "HOME": work},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=5,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pass
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return set(log.read_text().split()) if log.exists() else set()


def _mix(rng: random.Random) -> str:
    toks = [rng.choice(TOKENS) for _ in range(rng.randint(1, 7))]
    toks.insert(rng.randint(0, len(toks)), rng.choice(PROGRAMS))
    if rng.random() < 0.5:
        return " ".join(toks)
    return "".join(t if t == "\n" else " " + t for t in toks)


@pytest.mark.parametrize("seed", range(8))
def test_random_mixes_name_every_program_bash_runs(stubs: Path, seed: int) -> None:
    rng = random.Random(seed)
    misses = []
    for _ in range(150):
        command = _mix(rng)
        a = analyze(command)
        if a.unanalysable:
            continue
        missed = ran(stubs, command) - set(a.programs)
        if missed:
            misses.append((command, sorted(missed), a.programs))
    assert misses == []


UNCONDITIONAL = (
    "{P}",
    "{P}; {Q}",
    "{P} && {Q}",
    "{P} | {Q}",
    "{P} |& {Q}",
    "( {P} ); {Q}",
    "{ {P}; {Q}; }",
    "x=$({P}); {Q}",
    "echo `{P}`; {Q}",
    "echo $'\\''; {P}",
    "[[ -n $({P}) ]]; {Q}",
    "if {P}; then :; fi; {Q}",
    "coproc {{ {P}; }}; wait; {Q}",
    "coproc NAME {{ {P}; }}; wait",
    "coproc ( {P} ); wait",
    "function f {{ {P}; }}; f; {Q}",
    "f() {{ {P}; }}; f",
    "eval '{P}'; {Q}",
    "eval -- '{P}'",
    "bash -c '{P}'",
    "bash -c -- '{P}'",
    "bash <<< '{P}'",
    "trap -- '{P}' EXIT; {Q}",
    "trap '{P}' EXIT",
    "cat <({P}) >/dev/null 2>&1; {Q}",
    "case x in x) {P};; esac",
    "for i in 1; do {P}; done",
    "while {P}; do break; done",
    "select v in a; do break; done <<< 1; {P}",
    "time {P}",
    "! {P}",
)


@pytest.mark.parametrize("shape", UNCONDITIONAL)
def test_unconditional_shapes_name_exactly_what_runs(stubs: Path, shape: str) -> None:
    for p, q in (("alpha", "beta"), ("gamma x", "delta 'y z'"), ("alpha --", "beta -c x")):
        command = shape.replace("{{", "\0").replace("}}", "\1")
        command = command.replace("{P}", p).replace("{Q}", q)
        command = command.replace("\0", "{").replace("\1", "}")
        a = analyze(command)
        assert not a.unanalysable, (command, a.unanalysable)
        stub_names = set(STUBS)
        assert set(a.programs) & stub_names == ran(stubs, command), command
