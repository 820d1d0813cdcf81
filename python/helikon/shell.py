"""Static analysis of Bash commands: every program a command string would run.

The analyser is Rust (``helikon._native.shell_analyze``); this module is its typed surface.
It splits a command on every control operator (quote-, escape- and redirection-aware),
strips wrappers and their flags (``sudo``, ``env``, ``timeout``, ``nice``, ``xargs``, …),
normalises the program word (``\\rm``, ``r''m``, ``$'\\x72m'`` and ``/bin/rm`` are all ``rm``),
and follows nested execution: ``$(…)`` and backticks, ``<(…)``/``>(…)``, subshells and
``{ …; }`` groups, function bodies, ``if``/loop/``case`` bodies, ``bash -c``/``eval``
strings, here-documents and here-strings fed to a shell, ``find -exec``/``-delete``,
``watch``, ``su -c`` and git/tar/ssh options that take commands.

What cannot be resolved statically (a program given by a variable, ``eval "$x"``, a shell
reading a pipe, an unterminated quote, nesting past the bound) is listed in
:attr:`Analysis.unanalysable`; permission rules treat it as the worst case. Comments,
quoted arguments, a here-document fed to ``cat``, ``command -v rm`` and ``which rm`` are
data and run nothing. Analysis never raises and releases the GIL.

Example:
    >>> from helikon.shell import analyze
    >>> a = analyze("echo ok && sudo rm -rf /tmp/x")
    >>> a.programs
    ('echo', 'rm')
    >>> a.commands[1].args
    ('-rf', '/tmp/x')
    >>> a.commands[1].via
    ('sudo',)
    >>> analyze("echo $(cat notes.txt)").programs
    ('echo', 'cat')
    >>> analyze("$CMD x").analysable
    False
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from helikon import _native

__all__ = ["Analysis", "Assignment", "Command", "Redirection", "Unanalysable", "analyze"]

_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class Redirection:
    """One redirection.

    Attributes:
        op: ``out`` (``>``, ``>|``, ``&>``), ``append`` (``>>``, ``&>>``), ``in`` (``<``),
            ``read_write`` (``<>``), ``fd_dup`` (``2>&1``), ``heredoc`` or ``herestring``.
        target: The target after quote removal (the delimiter for a here-document).
        fd: The file descriptor written before the operator, if any (``"2"`` in ``2>f``).
        line: For a redirection that belongs to no command, its 1-based line.
    """

    op: str
    target: str
    fd: str | None = None
    line: int | None = None

    @property
    def writes(self) -> bool:
        """True when the redirection writes to its target file."""
        return self.op in ("out", "append", "read_write")


@dataclass(frozen=True, slots=True)
class Command:
    """One resolved command.

    Attributes:
        program: The program name: quotes removed, basename of a path.
        argv: The arguments after quote removal; ``argv[0]`` is the program word as written.
            Expansions appear as their source text (``$HOME``).
        redirections: The command's redirections (including those of an enclosing group).
        line: Its 1-based line in the analysed text.
        via: The wrappers and nesting constructs it was reached through, outermost first
            (``"sudo"``, ``"$(...)"``, ``"bash -c"``, ``"find -exec"``, ``"function f"``).
        text: The source text of the sub-command.
        env: ``NAME=value`` assignments applying to the command.
    """

    program: str
    argv: tuple[str, ...]
    redirections: tuple[Redirection, ...]
    line: int
    via: tuple[str, ...]
    text: str
    env: tuple[tuple[str, str], ...]

    @property
    def args(self) -> tuple[str, ...]:
        """The arguments after the program word."""
        return self.argv[1:]


@dataclass(frozen=True, slots=True)
class Unanalysable:
    """A part of the command that could not be resolved statically.

    Attributes:
        reason: Why, e.g. ``"program given by an expansion"``.
        snippet: The offending text (shortened).
        line: Its 1-based line.
    """

    reason: str
    snippet: str
    line: int


@dataclass(frozen=True, slots=True)
class Assignment:
    """A variable assignment that is not a command prefix (``X=1; …``, ``export X=1``)."""

    name: str
    value: str
    line: int


@dataclass(frozen=True, slots=True)
class Analysis:
    """The analysis of one command string.

    Attributes:
        commands: Every resolved command, in resolution order (a command before the
            commands nested in it).
        unanalysable: What could not be resolved statically; empty when fully analysed.
        assignments: Standalone variable assignments.
        redirections: Redirections that belong to no command (``> f`` alone, ``exec > f``).
    """

    commands: tuple[Command, ...]
    unanalysable: tuple[Unanalysable, ...]
    assignments: tuple[Assignment, ...] = ()
    redirections: tuple[Redirection, ...] = ()

    @property
    def programs(self) -> tuple[str, ...]:
        """The resolved program names, in resolution order."""
        return tuple(c.program for c in self.commands)

    @property
    def analysable(self) -> bool:
        """True when everything was resolved statically."""
        return not self.unanalysable


def _redirection(d: dict[str, Any]) -> Redirection:
    return Redirection(op=d["op"], target=d["target"], fd=d.get("fd"), line=d.get("line"))


def _command(d: dict[str, Any]) -> Command:
    return Command(
        program=d["program"],
        argv=tuple(d["argv"]),
        redirections=tuple(_redirection(r) for r in d["redirections"]),
        line=d["line"],
        via=tuple(d["via"]),
        text=d["text"],
        env=tuple((n, v) for n, v in d["env"]),
    )


def analyze(command: str) -> Analysis:
    """Analyse a Bash command string.

    Args:
        command: The command text, possibly several lines.

    Returns:
        The resolved commands and anything that could not be analysed. Never raises: input
        that does not parse yields a partial analysis with ``unanalysable`` entries.

    Example:
        >>> from helikon.shell import analyze
        >>> [c.program for c in analyze("find . -name '*.o' -exec rm {} +").commands]
        ['find', 'rm']
        >>> analyze("echo 'rm -rf /' # rm").programs
        ('echo',)
    """
    # Lone surrogates (from surrogateescape decoding) cannot cross into Rust; U+FFFD keeps
    # every other character and offset.
    data = json.loads(_native.shell_analyze(_SURROGATE.sub("\ufffd", command)))
    return Analysis(
        commands=tuple(_command(c) for c in data["commands"]),
        unanalysable=tuple(
            Unanalysable(reason=u["reason"], snippet=u["snippet"], line=u["line"])
            for u in data["unanalysable"]
        ),
        assignments=tuple(
            Assignment(name=a["name"], value=a["value"], line=a["line"])
            for a in data["assignments"]
        ),
        redirections=tuple(_redirection(r) for r in data["redirections"]),
    )
