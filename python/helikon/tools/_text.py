"""Text helpers of the file tools: binary detection, decoding and ``cat -n`` numbering."""

from __future__ import annotations

import re

from helikon.redaction import process_redactor

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


def redact_lines(text: str, lines: list[str], first: int, count: int) -> list[str]:
    """``lines[first:first + count]`` (the lines of ``text``, see :func:`split_lines`) with
    the secrets of the *whole* text masked line by line.

    A page of a file (or a line cut short) is a cut: a private key or a YAML block whose
    start is on an earlier page would not be known as a secret on this one (attack R9). The
    secrets are found over the whole text (every pattern and the process's secret-named
    environment values); each line keeps its place, a secret spanning lines is masked on
    each of them.
    """
    redactor = process_redactor()
    page = lines[first : first + count]
    found = redactor.findings(text)
    if not found:
        return page
    starts = []
    at = 0
    for line in lines[: first + count]:
        starts.append(at)
        at += len(line) + 1
    out = []
    k = 0
    for i, line in enumerate(page, start=first):
        lo, hi = starts[i], starts[i] + len(line)
        while k < len(found) and found[k].end <= lo:
            k += 1
        pieces, pos, j = [], lo, k
        while j < len(found) and found[j].start < hi:
            s, e = max(found[j].start, lo), min(found[j].end, hi)
            if s < e:
                pieces.append(text[pos:s])
                pieces.append(redactor.mask)
                pos = e
            j += 1
        pieces.append(text[pos:hi])
        out.append("".join(pieces))
    return out
