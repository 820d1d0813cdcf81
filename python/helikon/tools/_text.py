"""Text helpers of the file tools: binary detection, decoding and ``cat -n`` numbering."""

from __future__ import annotations

import re

__all__ = ["BINARY_INVALID_RATIO", "binary_reason", "decode_text", "number_lines", "split_lines"]

#: A file whose bytes are more than this share invalid UTF-8 counts as binary.
BINARY_INVALID_RATIO = 0.10


_ESCAPED = re.compile("[\udc80-\udcff]")


def _invalid_utf8_bytes(data: bytes) -> int:
    """How many bytes of ``data`` are not part of a valid UTF-8 sequence."""
    return len(_ESCAPED.findall(data.decode("utf-8", errors="surrogateescape")))


def binary_reason(data: bytes) -> str | None:
    """Why ``data`` looks binary (``None`` when it is text).

    A NUL byte anywhere, or more than :data:`BINARY_INVALID_RATIO` of the bytes outside
    valid UTF-8 sequences, makes a file binary.
    """
    if b"\x00" in data:
        return "it contains NUL bytes"
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        bad = _invalid_utf8_bytes(data)
        if bad > BINARY_INVALID_RATIO * len(data):
            return f"{bad} of its {len(data)} bytes are not valid UTF-8"
    return None


def decode_text(data: bytes) -> tuple[str, int]:
    """Decode ``data`` as UTF-8; invalid bytes become U+FFFD. Returns (text, invalid bytes)."""
    try:
        return data.decode("utf-8"), 0
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace"), _invalid_utf8_bytes(data)


def split_lines(text: str) -> list[str]:
    """Lines as ``cat`` sees them: split on ``\\n``; a final newline ends the last line."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def number_lines(lines: list[str], first: int, max_line_chars: int) -> list[str]:
    """``cat -n`` style: the 1-based number right-aligned in 6 columns, a tab, the line.

    A line longer than ``max_line_chars`` is cut and the cut is stated on it.
    """
    out = []
    for i, line in enumerate(lines, start=first):
        if len(line) > max_line_chars:
            cut = len(line) - max_line_chars
            line = f"{line[:max_line_chars]}… [line cut: {cut} more characters]"
        out.append(f"{i:>6}\t{line}")
    return out
