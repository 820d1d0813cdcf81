"""The ``Read`` tool: a text file of the sandbox, line-numbered like ``cat -n``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from helikon.core.context import ToolContext
from helikon.core.items import TextPart
from helikon.core.tool import ToolEffect, ToolOutput
from helikon.core.tool_args import schema_of, validate_args
from helikon.errors import ConfigError, ToolOther
from helikon.tools._text import (
    binary_reason,
    decode_text,
    number_lines,
    redact_lines,
    split_lines,
)
from helikon.tools.sandbox import Sandbox

__all__ = ["ReadTool"]


class _ReadArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(
        min_length=1,
        description="File to read, relative to the workspace root (an absolute path inside "
        "the workspace is accepted).",
    )
    offset: int | None = Field(
        default=None,
        ge=1,
        description="1-based line number to start at (default 1).",
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description="Maximum number of lines to return (default: the tool's page size).",
    )


class ReadTool:
    """Read a text file inside a :class:`Sandbox` (name ``"Read"``, effect ``READ_ONLY``).

    The output numbers lines like ``cat -n``: the 1-based line number right-aligned in six
    columns, a tab, then the line. ``offset``/``limit`` page through long files; when lines
    remain, a last line says which and how to continue. Binary files (a NUL byte, or more
    than 10% of the bytes outside valid UTF-8) are refused; a few invalid bytes in a text
    file are shown as U+FFFD and counted in a note.

    Args:
        sandbox: the workspace.
        max_file_bytes: larger files are refused (default 10 MiB).
        max_lines: lines returned when ``limit`` is not given, and the most ``limit`` may ask
            for (default 2000).
        max_line_chars: longer lines are cut and the cut is stated (default 2000).
        max_output_chars: the numbered output stops before exceeding this (default 100000).

    Raises:
        ConfigError: a cap is not positive.

    Example:
        >>> import tempfile
        >>> from helikon.tools import Sandbox
        >>> with tempfile.TemporaryDirectory() as d:
        ...     sb = Sandbox.open(d)
        ...     sb.dir.write_text("a.txt", "one\\ntwo\\n")
        ...     ReadTool(sb).read_text("a.txt", offset=2)
        '     2\\ttwo'

    """

    name = "Read"
    effect = ToolEffect.READ_ONLY

    def __init__(
        self,
        sandbox: Sandbox,
        *,
        max_file_bytes: int = 10 * 1024 * 1024,
        max_lines: int = 2000,
        max_line_chars: int = 2000,
        max_output_chars: int = 100_000,
    ) -> None:
        for label, value in (
            ("max_file_bytes", max_file_bytes),
            ("max_lines", max_lines),
            ("max_line_chars", max_line_chars),
            ("max_output_chars", max_output_chars),
        ):
            if value < 1:
                raise ConfigError(f"ReadTool.{label} must be >= 1, got {value}")
        self.sandbox = sandbox
        self.max_file_bytes = max_file_bytes
        self.max_lines = max_lines
        self.max_line_chars = max_line_chars
        self.max_output_chars = max_output_chars
        self.description = (
            "Read a text file in the workspace. Paths are relative to the workspace root. "
            "Output is numbered like `cat -n`: each line is its 1-based line number "
            "right-aligned in 6 columns, a tab, then the line text (the number and the tab "
            "are not part of the file). At most "
            f"{max_lines} lines are returned per call; use offset and limit to page through "
            "longer files. Binary files are refused."
        )
        self.parameters: dict[str, Any] = schema_of(_ReadArgs)

    def __repr__(self) -> str:
        return f"ReadTool({self.sandbox!r})"

    async def invoke(self, ctx: ToolContext[Any], args: Any) -> ToolOutput:
        """Validate ``args`` and read the file.

        Raises:
            InvalidArgs: the arguments do not match the schema.
            ToolDenied: the path escapes the sandbox or is hard-linked.
            ToolOther: missing, a directory, too large, binary, or ``offset`` past the end.
        """
        a = validate_args(_ReadArgs, args)
        text = await asyncio.to_thread(self.read_text, a.path, offset=a.offset, limit=a.limit)
        return ToolOutput([TextPart(text=text)], text)

    def read_text(self, path: str, *, offset: int | None = None, limit: int | None = None) -> str:
        """The numbered text the model gets (synchronous; see :meth:`invoke` for errors)."""
        rel = self.sandbox.relative(path)
        d = self.sandbox.dir
        st = json.loads(d.stat(rel))
        if st["kind"] == "dir":
            raise ToolOther(f"{path}: is a directory; use Bash (ls) to list it")
        if st["kind"] != "file":
            raise ToolOther(f"{path}: not a regular file")
        if st["size"] > self.max_file_bytes:
            raise ToolOther(
                f"{path}: file is {st['size']} bytes, over Read's {self.max_file_bytes}-byte "
                "limit; look at parts of it with Bash (head, tail, sed -n)"
            )
        data = d.read_bytes(rel, self.max_file_bytes)
        reason = binary_reason(data)
        if reason is not None:
            raise ToolOther(
                f"{path}: binary file ({len(data)} bytes; {reason}); Read shows text files only"
            )
        text, invalid = decode_text(data)
        lines = split_lines(text)
        total = len(lines)
        if total == 0:
            return f"[{path} is empty]"
        start = offset or 1
        if start > total:
            raise ToolOther(f"{path}: offset {start} is past the end of the file ({total} lines)")
        count = min(limit or self.max_lines, self.max_lines)
        page = lines[start - 1 : start - 1 + count]
        if (
            start > 1
            or start - 1 + count < total
            or any(len(line) > self.max_line_chars for line in page)
        ):
            # A part of the file is shown: redacted with the whole file as context (R9).
            page = redact_lines(text, lines, start - 1, count)
        numbered = number_lines(page, start, self.max_line_chars)
        out: list[str] = []
        size = 0
        for line in numbered:
            if out and size + len(line) + 1 > self.max_output_chars:
                break
            out.append(line)
            size += len(line) + 1
        end = start + len(out) - 1
        notes: list[str] = []
        if end < total:
            notes.append(
                f"[showing lines {start}-{end} of {total}; continue with offset={end + 1}]"
            )
        if invalid:
            notes.append(f"[{invalid} invalid UTF-8 bytes are shown as U+FFFD]")
        return "\n".join(out + notes)
