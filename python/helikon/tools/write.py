"""The ``Write`` tool: create or replace a file of the sandbox, atomically."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from helikon.core.context import ToolContext
from helikon.core.items import TextPart
from helikon.core.tool import ToolEffect, ToolOutput
from helikon.core.tool_args import schema_of, validate_args
from helikon.tools.sandbox import Sandbox

__all__ = ["WriteTool"]


class _WriteArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(
        min_length=1,
        description="File to write, relative to the workspace root; missing parent "
        "directories are created.",
    )
    content: str = Field(description="The complete new content of the file (UTF-8 text).")


def _line_count(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


class WriteTool:
    """Create or replace a file inside a :class:`Sandbox` (name ``"Write"``, effect ``WRITE``).

    The write is atomic (a temp file in the target's directory, then ``rename``), so a
    reader never sees half a file; missing parent directories are created inside the root;
    a replaced file keeps its mode. Symlinked or hard-linked targets and paths that escape
    the root are refused with :class:`helikon.errors.ToolDenied`.

    Args:
        sandbox: the workspace.

    Example:
        >>> import tempfile
        >>> from helikon.tools import Sandbox
        >>> with tempfile.TemporaryDirectory() as d:
        ...     WriteTool(Sandbox.open(d)).write("src/a.txt", "x\\n")
        'Created src/a.txt (2 bytes, 1 line)'
    """

    name = "Write"
    effect = ToolEffect.WRITE
    description = (
        "Create a file or replace its whole content in the workspace. Paths are relative to "
        "the workspace root; missing parent directories are created. The write is atomic. "
        "To change part of an existing file, prefer Edit."
    )

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.parameters: dict[str, Any] = schema_of(_WriteArgs)

    def __repr__(self) -> str:
        return f"WriteTool({self.sandbox!r})"

    async def invoke(self, ctx: ToolContext[Any], args: Any) -> ToolOutput:
        """Validate ``args`` and write the file.

        Raises:
            InvalidArgs: the arguments do not match the schema.
            ToolDenied: the path escapes the sandbox, or the target is a symlink or
                hard-linked.
            ToolOther: the target is a directory, or the write failed.
        """
        a = validate_args(_WriteArgs, args)
        text = await asyncio.to_thread(self.write, a.path, a.content)
        return ToolOutput([TextPart(text=text)], text)

    def write(self, path: str, content: str) -> str:
        """Write ``content``; returns the summary the model gets (synchronous)."""
        rel = self.sandbox.relative(path)
        d = self.sandbox.dir
        existed = d.exists(rel)
        d.write_text(rel, content)
        size = len(content.encode("utf-8"))
        lines = _line_count(content)
        verb = "Replaced" if existed else "Created"
        plural = "" if lines == 1 else "s"
        return f"{verb} {path} ({size} bytes, {lines} line{plural})"
