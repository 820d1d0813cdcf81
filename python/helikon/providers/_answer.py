"""Who answered: the model and response id every adapter reports on its turn's ``Finish``.

Providers repeat the answering model and the response id on several chunks (or send them once,
on the first); :func:`latest_text` keeps the newest non-empty string seen, so an adapter folds
each chunk's value in with one line.
"""

from __future__ import annotations

__all__ = ["latest_text"]


def latest_text(current: str | None, value: object) -> str | None:
    """``value`` when it is a non-empty string, else ``current`` (the value kept so far).

    Example:
        >>> latest_text(None, "gpt-4o-2024-08-06")
        'gpt-4o-2024-08-06'
        >>> latest_text("msg_1", None), latest_text("msg_1", ""), latest_text("msg_1", 7)
        ('msg_1', 'msg_1', 'msg_1')
    """
    return value if isinstance(value, str) and value else current
