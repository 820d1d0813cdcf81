"""Static analysis of Bash commands: every program a command string would run.

This module is the binding of the native shell crate (``helikon-shell``): the analysis, the
compiled Bash permission policy (:class:`CommandPolicy`) and path-rule matching
(:func:`path_rule_matches`) are reached through it.

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
data and run nothing. Analysis never raises on any input and releases the GIL.

Hostile input is bounded by :class:`Limits` (size, nesting depth, word count): past a limit the
command is "not analysable" with a reason naming the limit (``over the analysis limit
max_depth=24``), so deny rules apply their worst case and allow rules never cover it. Analysis
time and memory are linear in the input and no recursion goes deeper than ``max_depth``.

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

import re
from dataclasses import dataclass

from helikon import _native
from helikon._native import CommandPolicy
from helikon._native import ShellAnalysis as Analysis
from helikon._native import ShellAssignment as Assignment
from helikon._native import ShellCommand as Command
from helikon._native import ShellRedirection as Redirection
from helikon._native import ShellUnanalysable as Unanalysable
from helikon.errors import ConfigError

__all__ = [
    "DEFAULT_LIMITS",
    "Analysis",
    "Assignment",
    "Command",
    "CommandPolicy",
    "Limits",
    "Redirection",
    "Unanalysable",
    "analyze",
    "path_rule_matches",
]

# The result types are frozen native classes (attributes, equality, hashing, repr and pickling
# as frozen dataclasses; documented in ``helikon/_native.pyi``): ``analyze`` returns the
# analysis without a JSON round trip, and each field becomes Python objects when first read.

_SURROGATE = re.compile("[\ud800-\udfff]")

_MAX_LIMIT = (1 << 63) - 1

MAX_MAX_DEPTH = 100
"""The largest ``max_depth`` accepted (every level costs the analyser a few stack frames)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """The analysis budget: past any limit a command is "not analysable".

    Attributes:
        max_bytes: the longest command analysed, in bytes of UTF-8 (default 4 MiB); a longer
            one is not analysed at all.
        max_depth: the deepest nesting (default 24): substitutions, re-entered strings
            (``bash -c``, ``eval``, here-documents fed to a shell), compound commands, wrapper
            chains (``sudo env nice ...``) and run chains (``find -exec find -exec ...``) each
            count one level. At most 100.
        max_words: the most words (default 1,048,576): tokens of one script, and the
            argument, environment, wrapper and redirection entries of all resolved commands.
        work_factor: the work budget per byte of input (default 4): every byte lexed
            (re-entered strings such as ``bash -c`` and ``eval`` arguments and here-document
            bodies fed to a shell count again) or copied into the result is charged, and the
            budget is ``work_factor`` x the command's length + ``work_slack`` bytes.
        work_slack: the fixed part of the work budget, in bytes (default 1,048,576).

    Past a limit the reason names the field and its value, e.g. ``over the analysis limit
    max_words=20`` or ``over the analysis limit work_factor=1 with work_slack=1``.

    Raises:
        ConfigError: a limit that is not a positive ``int``, over 2**63 - 1, or ``max_depth``
            over 100.

    Example:
        >>> from helikon.shell import Limits, analyze
        >>> a = analyze("echo $(echo $(echo $(rm x)))", limits=Limits(max_depth=2))
        >>> a.unanalysable[0].reason
        'nesting too deep (over the analysis limit max_depth=2)'
    """

    max_bytes: int = 4 << 20
    max_depth: int = 24
    max_words: int = 1 << 20
    work_factor: int = 4
    work_slack: int = 1 << 20

    def __post_init__(self) -> None:
        for name in ("max_bytes", "max_depth", "max_words", "work_factor", "work_slack"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"Limits.{name} must be a positive int, got {value!r}")
            if value > _MAX_LIMIT:
                raise ConfigError(
                    f"Limits.{name} must be at most {_MAX_LIMIT} (a 64-bit count), got {value}"
                )
        if self.max_depth > MAX_MAX_DEPTH:
            raise ConfigError(
                f"Limits.max_depth must be at most {MAX_MAX_DEPTH} (each level uses stack), "
                f"got {self.max_depth}"
            )

    def to_rules(self) -> dict[str, int]:
        """The ``limits`` object of :class:`helikon._native.CommandPolicy` rules JSON."""
        return {
            "max_bytes": self.max_bytes,
            "max_depth": self.max_depth,
            "max_words": self.max_words,
            "work_factor": self.work_factor,
            "work_slack": self.work_slack,
        }


DEFAULT_LIMITS = Limits()
"""The limits every rule uses unless told otherwise."""


def analyze(command: str, *, limits: Limits = DEFAULT_LIMITS) -> Analysis:
    """Analyse a Bash command string.

    Args:
        command: The command text, possibly several lines.
        limits: The analysis budget; past it the result has an ``unanalysable`` entry whose
            reason names the limit.

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
    if not isinstance(limits, Limits):
        raise ConfigError(
            f"analyze(limits=...) takes a helikon.shell.Limits, got {type(limits).__name__}"
        )
    kw = limits.to_rules()
    try:
        return _native.shell_analyze(command, **kw)
    except UnicodeEncodeError:
        # Lone surrogates (from surrogateescape decoding) cannot cross into Rust; U+FFFD keeps
        # every other character and offset.
        return _native.shell_analyze(_SURROGATE.sub("\ufffd", command), **kw)


def path_rule_matches(pattern: str, path: str) -> bool:
    """Whether a permission rule's path glob matches ``path`` (the native path-rule matcher
    the permission pipeline uses; see ``docs/guides/governance.md`` for the glob syntax).

    ``CommandPolicy`` (re-exported here from the native module) is the compiled Bash
    permission policy built from a rules JSON; its ``check(command)`` returns the decision as
    JSON text (documented in ``helikon/_native.pyi``).
    """
    return bool(_native.path_rule_matches(pattern, path))
