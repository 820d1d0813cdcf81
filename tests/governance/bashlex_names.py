"""Program names as bashlex and as helikon see them, for the agreement test.

bashlex (a Python port of bash's parser) builds an AST; the names it gives are the first
word of every ``command`` node, including commands inside substitutions. helikon's names are
every resolved program plus every wrapper a command ran through (``sudo``, ``env``,
``xargs``, ...), since bashlex sees those as the command's first word. Both are compared as
sets of basenames.
"""

from __future__ import annotations

import os
import re
from typing import Any

import bashlex

from helikon.shell import analyze

# Nesting labels of ``Command.via`` that are one word but no wrapper.
_NOT_WRAPPERS = {"heredoc"}
_WORD = re.compile(r"[\w.+-]+")


def bashlex_names(command: str) -> set[str] | None:
    """The command names bashlex finds, or ``None`` when bashlex cannot parse the command."""
    try:
        trees = bashlex.parse(command)
    except (bashlex.errors.ParsingError, NotImplementedError, IndexError, AttributeError):
        return None
    names: set[str] = set()

    class Visitor(bashlex.ast.nodevisitor):  # type: ignore[misc]
        def visitcommand(self, node: Any, parts: list[Any]) -> None:
            for p in parts:
                if p.kind in ("assignment", "redirect"):
                    continue
                if p.kind == "word":
                    names.add(os.path.basename(p.word) or p.word)
                break

    for tree in trees:
        Visitor().visit(tree)
    return names


def helikon_names(command: str) -> set[str]:
    """The programs helikon resolves and the wrappers they run through."""
    names: set[str] = set()
    for c in analyze(command).commands:
        names.add(c.program)
        names.update(v for v in c.via if _WORD.fullmatch(v) and v not in _NOT_WRAPPERS)
    return names
