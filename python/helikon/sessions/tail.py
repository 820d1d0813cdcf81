"""The last ``n`` items of a conversation: ``await session.snapshot(last=n)``.

Every built-in session's ``snapshot`` takes ``last``: the projected conversation's final
``last`` items, in order (``last=0`` gives none, ``None`` all). The cut is by item, so it
may start with a tool result whose call it leaves out: use it to show or inspect recent
history, and give the model the whole snapshot (or compact it, see
:class:`~helikon.sessions.CompactingSession`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from helikon.errors import ConfigError

__all__ = ["last_items"]

_T = TypeVar("_T")


def last_items(items: Sequence[_T], last: int | None, *, where: str = "snapshot") -> list[_T]:
    """``items[-last:]`` (all of them when ``last`` is ``None``, none when it is 0).

    Raises:
        ConfigError: ``last`` is not an int >= 0 (a bool is refused too).

    Example:
        >>> last_items(["a", "b", "c"], 2)
        ['b', 'c']
        >>> last_items(["a"], 0)
        []
    """
    if last is None:
        return list(items)
    if isinstance(last, bool) or not isinstance(last, int) or last < 0:
        raise ConfigError(f"{where}(last=...) must be an int >= 0 or None, got {last!r}")
    return list(items[len(items) - last :]) if last else []
