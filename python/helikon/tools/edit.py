"""The ``Edit`` tool: an exact string replacement in a file of the sandbox."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from helikon.core.context import ToolContext
from helikon.core.items import TextPart
from helikon.core.tool import ToolEffect, ToolOutput
from helikon.core.tool_args import schema_of, validate_args
from helikon.errors import ConfigError, ToolOther
from helikon.tools._text import binary_reason
from helikon.tools.sandbox import Sandbox

__all__ = ["EditTool"]


class _EditArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(min_length=1, description="File to edit, relative to the workspace root.")
    old_string: str = Field(
        min_length=1,
        description="The exact text to replace, including whitespace and indentation. It "
        "must occur exactly once unless replace_all is true.",
    )
    new_string: str = Field(description="The replacement text (must differ from old_string).")
    replace_all: bool = Field(
        default=False, description="Replace every occurrence instead of exactly one."
    )


class EditTool:
    """Replace exact text in a file inside a :class:`Sandbox` (``"Edit"``, effect ``WRITE``).

    ``old_string`` must occur exactly once, unless ``replace_all`` is true; otherwise the
    call fails and says how many matches there were (none, or how many), leaving the file
    untouched. The result is written atomically. Only UTF-8 text files can be edited.

    Args:
        sandbox: the workspace.
        max_file_bytes: larger files are refused (default 10 MiB).

    Raises:
        ConfigError: ``max_file_bytes`` is not positive.

    Example:
        >>> import tempfile
        >>> from helikon.tools import Sandbox
        >>> with tempfile.TemporaryDirectory() as d:
        ...     sb = Sandbox.open(d)
        ...     sb.dir.write_text("a.py", "x = 1\\n")
        ...     EditTool(sb).edit("a.py", "x = 1", "x = 2")
        'Edited a.py: replaced 1 occurrence (line 1)'
    """

    name = "Edit"
    effect = ToolEffect.WRITE
    description = (
        "Replace exact text in an existing file of the workspace. old_string must match the "
        "file exactly (whitespace and indentation included) and occur exactly once; include "
        "enough surrounding lines to make it unique, or set replace_all to change every "
        "occurrence. Read the file first. The write is atomic."
    )

    def __init__(self, sandbox: Sandbox, *, max_file_bytes: int = 10 * 1024 * 1024) -> None:
        if max_file_bytes < 1:
            raise ConfigError(f"EditTool.max_file_bytes must be >= 1, got {max_file_bytes}")
        self.sandbox = sandbox
        self.max_file_bytes = max_file_bytes
        self.parameters: dict[str, Any] = schema_of(_EditArgs)

    def __repr__(self) -> str:
        return f"EditTool({self.sandbox!r})"

    async def invoke(self, ctx: ToolContext[Any], args: Any) -> ToolOutput:
        """Validate ``args`` and apply the edit.

        Raises:
            InvalidArgs: the arguments do not match the schema.
            ToolDenied: the path escapes the sandbox, or the file is a symlink out or
                hard-linked.
            ToolOther: missing file, binary file, no match, an ambiguous match, or
                ``new_string`` equal to ``old_string``.
        """
        a = validate_args(_EditArgs, args)
        text = await asyncio.to_thread(
            self.edit, a.path, a.old_string, a.new_string, replace_all=a.replace_all
        )
        return ToolOutput([TextPart(text=text)], text)

    def edit(
        self, path: str, old_string: str, new_string: str, *, replace_all: bool = False
    ) -> str:
        """Apply the edit; returns the summary the model gets (synchronous)."""
        if old_string == new_string:
            raise ToolOther(f"{path}: old_string and new_string are identical; nothing to change")
        rel = self.sandbox.relative(path)
        d = self.sandbox.dir
        data = d.read_bytes(rel, self.max_file_bytes)
        reason = binary_reason(data)
        if reason is not None:
            raise ToolOther(f"{path}: binary file ({reason}); Edit changes text files only")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ToolOther(
                f"{path}: not valid UTF-8 text (invalid byte at offset {exc.start}); "
                "Edit changes UTF-8 text files only"
            ) from None
        count = text.count(old_string)
        if count == 0:
            raise ToolOther(
                f"{path}: old_string was not found (it must match the file exactly, "
                "whitespace and indentation included)"
            )
        if count > 1 and not replace_all:
            raise ToolOther(
                f"{path}: old_string occurs {count} times; include more surrounding text to "
                "make it unique, or set replace_all=true to replace every occurrence"
            )
        lines: list[int] = []
        pos = text.find(old_string)
        while pos != -1:
            lines.append(text.count("\n", 0, pos) + 1)
            pos = text.find(old_string, pos + len(old_string))
        d.write_text(rel, text.replace(old_string, new_string))
        where = ", ".join(str(n) for n in dict.fromkeys(lines))
        noun = "occurrence" if count == 1 else "occurrences"
        label = "line" if len(set(lines)) == 1 else "lines"
        return f"Edited {path}: replaced {count} {noun} ({label} {where})"
