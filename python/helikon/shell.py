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

import re

from helikon import _native
from helikon._native import ShellAnalysis as Analysis
from helikon._native import ShellAssignment as Assignment
from helikon._native import ShellCommand as Command
from helikon._native import ShellRedirection as Redirection
from helikon._native import ShellUnanalysable as Unanalysable

__all__ = ["Analysis", "Assignment", "Command", "Redirection", "Unanalysable", "analyze"]

# The result types are frozen native classes (attributes, equality, hashing, repr and pickling
# as frozen dataclasses; documented in ``helikon/_native.pyi``): ``analyze`` returns the
# analysis without a JSON round trip, and each field becomes Python objects when first read.

_SURROGATE = re.compile("[\ud800-\udfff]")


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
    try:
        return _native.shell_analyze(command)
    except UnicodeEncodeError:
        # Lone surrogates (from surrogateescape decoding) cannot cross into Rust; U+FFFD keeps
        # every other character and offset.
        return _native.shell_analyze(_SURROGATE.sub("\ufffd", command))
