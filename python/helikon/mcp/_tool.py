"""A remote MCP tool as a helikon :class:`~helikon.Tool`, and the result mapping."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Protocol

import mcp_types as types

from helikon.core.context import ToolContext
from helikon.core.items import AudioPart, ContentPart, ImagePart, TextPart
from helikon.core.tool import ToolEffect, ToolOutput
from helikon.core.tool_exec import CallDeferred
from helikon.errors import ToolOther
from helikon.mcp._catalog import block_parts
from helikon.mcp._connection import SessionExpired
from helikon.mcp._requests import Caller, calling
from helikon.redaction import CUT_GUARD, process_redactor

if TYPE_CHECKING:
    from helikon.mcp._connection import Connection


class ConnectionSource(Protocol):
    """What a tool calls through: the handle, which reconnects a dead server."""

    async def live_connection(self, display: str) -> Connection:
        """The connection to call on (raises ``ToolOther`` when there is none)."""
        ...

    def calls_from(self, caller: Caller | None) -> AbstractAsyncContextManager[None]:
        """Server requests during the block are answered for the calling run."""
        ...


__all__ = ["DEFAULT_MAX_RESULT_CHARS", "PLACEHOLDER_SCHEMA", "McpTool", "effect_of", "map_result"]

DEFAULT_MAX_RESULT_CHARS = 100_000
"""A tool result's text for the model is cut to this many characters by default."""

PLACEHOLDER_SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": True}
"""The schema every tool advertises in lazy mode (the real one comes from ``search_tools``)."""


def effect_of(tool: types.Tool) -> ToolEffect:
    """``READ_ONLY`` only when the server says ``readOnlyHint: true``; else ``SIDE_EFFECT``.

    Annotations are untrusted server metadata, so ``WRITE`` (which ``ACCEPT_EDITS``
    auto-approves) is never produced.
    """
    ann = tool.annotations
    if ann is not None and ann.read_only_hint is True:
        return ToolEffect.READ_ONLY
    return ToolEffect.SIDE_EFFECT


def _block_json(block: Any) -> Any:
    dump = getattr(block, "model_dump", None)
    return dump(by_alias=True, mode="json", exclude_none=True) if callable(dump) else block


def _text_of(result: types.CallToolResult) -> str:
    texts = [b.text for b in result.content if isinstance(b, types.TextContent)]
    if texts:
        return "\n".join(texts)
    if result.structured_content is not None:
        return ToolOutput.from_value(result.structured_content).content[0].text  # type: ignore[union-attr]
    return "(the server gave no error text)"


def truncate(text: str, limit: int) -> str:
    r"""``text`` cut to ``limit`` characters plus a note naming the full length, or itself.

    A cut text is redacted before the cut (the loop redacts the result again with the run's
    own secrets), and the cut falls after a newline or blank near the limit when there is one.

    Example:
        >>> truncate("abcdef", 3)
        'abc\n[truncated: the MCP server returned 6 characters; the first 3 are shown]'
    """
    if len(text) <= limit:
        return text
    # Redacted before the cut, with the text after it as context: a secret straddling the
    # cut would otherwise keep a piece too short to be recognised (attack R9).
    shown = process_redactor().redact_head(text[: limit + CUT_GUARD], limit)
    return (
        f"{shown}\n[truncated: the MCP server returned {len(text)} characters; "
        f"the first {len(shown)} are shown]"
    )


def map_result(
    display: str,
    result: types.CallToolResult,
    max_chars: int = DEFAULT_MAX_RESULT_CHARS,
    media: frozenset[str] = frozenset(),
) -> ToolOutput:
    """A ``tools/call`` result as a :class:`ToolOutput`.

    The content for the model: a single text block is its text, several text blocks the
    JSON array of the blocks; with no content, the JSON of ``structuredContent``. Content
    with other blocks becomes one part per block: text as text, an image (audio) as an
    image (audio) part when ``media`` holds ``"image"`` (``"audio"``: the calling model
    takes it), else a text note naming its type and size; an embedded resource as its
    contents, a resource link as a text naming it. The value is ``structuredContent`` when
    the server sent one (the SDK has checked it against the tool's ``outputSchema``), else
    the single text or the JSON list of the blocks. A text longer than ``max_chars``
    characters is cut (see :func:`truncate`); a cut text-only result's value is that cut
    text, so neither keeps the whole answer. The result's ``_meta`` is the output's
    ``meta`` (kept on the tool result item, never sent to the model).

    Raises:
        ToolOther: the server flagged the result ``isError``; the message is its text (cut
            the same way).
    """
    if result.is_error:
        raise ToolOther(f"MCP tool {display!r} failed: {truncate(_text_of(result), max_chars)}")
    meta = dict(result.meta) if result.meta else None
    blocks = result.content
    if blocks and not all(isinstance(b, types.TextContent) for b in blocks):
        value = result.structured_content
        if value is None:
            value = [_block_json(b) for b in blocks]
        parts = [_for_model(p, media, max_chars) for b in blocks for p in block_parts(b)]
        return ToolOutput(parts, value, meta=meta)
    if len(blocks) == 1:
        out = ToolOutput.from_value(blocks[0].text)  # type: ignore[union-attr]
    elif blocks or result.structured_content is None:
        out = ToolOutput.from_value([_block_json(b) for b in blocks])
    else:
        out = ToolOutput.from_value(result.structured_content)
    text = out.content[0].text  # type: ignore[union-attr]
    if len(text) > max_chars:
        return ToolOutput.from_value(truncate(text, max_chars)).with_meta(meta)
    if result.structured_content is not None:
        return ToolOutput(out.content, result.structured_content, meta=meta)
    return out.with_meta(meta)


def _for_model(part: ContentPart, media: frozenset[str], max_chars: int) -> ContentPart:
    """``part`` as the calling model can take it (see :func:`map_result`)."""
    if isinstance(part, TextPart):
        cut = truncate(part.text, max_chars)
        return part if cut is part.text else TextPart(text=cut)
    if isinstance(part, ImagePart | AudioPart) and part.type not in media:
        data = part.source.data or ""
        size = len(data) * 3 // 4 - data[-2:].count("=")
        return TextPart(
            text=f"[{part.type} ({part.source.mime_type}, {size} bytes) from the MCP tool; "
            f"not shown: this model does not take {part.type} input]"
        )
    return part


class McpTool:
    """One remote tool: ``tools/call`` on the handle's connection.

    Attributes:
        name: the handle's prefix + the server's name for the tool.
        wire_name: the server's name for the tool.
        description: the server's description ('' when it gave none).
        parameters: the server's input schema (the placeholder in lazy mode).
        effect: see :func:`effect_of`.
        output_schema: the server's output schema (``None`` when it declares none); the
            ``mcp`` package checks each ``structuredContent`` against it, and the checked
            value becomes the tool result's value.
    """

    def __init__(
        self,
        handle: ConnectionSource,
        remote: types.Tool,
        display: str,
        *,
        lazy: bool,
        max_result_chars: int = DEFAULT_MAX_RESULT_CHARS,
    ) -> None:
        self._handle = handle
        self.tool_source = handle
        """The handle: a run follows its tool list between model turns."""
        self.listed_in = 0
        """The handle's listing that first had this tool (set by the handle)."""
        self._max_chars = max_result_chars
        self._lazy = lazy
        self.name = display
        self.wire_name = remote.name
        self.update(remote)

    def update(self, remote: types.Tool) -> None:
        """Take the description, schema and effect of a new listing of the same tool."""
        self.description = remote.description or ""
        self.full_parameters: dict[str, Any] = dict(remote.input_schema)
        self.parameters: dict[str, Any] = (
            dict(PLACEHOLDER_SCHEMA) if self._lazy else self.full_parameters
        )
        self.effect: ToolEffect = effect_of(remote)
        self.output_schema: dict[str, Any] | None = (
            dict(remote.output_schema) if remote.output_schema is not None else None
        )

    def __repr__(self) -> str:
        return f"<mcp tool {self.name}>"

    async def invoke(self, ctx: ToolContext[Any], args: Any) -> ToolOutput:
        """Call the tool on the server; races ``ctx.cancel`` and the server going away.

        Raises:
            ToolOther: the server answered ``isError``, the call failed, the server died or
                answered HTTP 5xx, or the run was cancelled (the message says which).
        """
        run = calling(ctx.call_id)
        connection = await self._handle.live_connection(self.name)
        try:
            async with self._handle.calls_from(run):
                result = await connection.call(self.wire_name, self.name, args, ctx.cancel)
        except SessionExpired:  # not processed by the server: once more, on a new session
            fresh = await self._handle.live_connection(self.name)
            if fresh is connection:  # no reconnect (max_reconnects=0): the 404 stands
                raise
            async with self._handle.calls_from(run):
                result = await fresh.call(self.wire_name, self.name, args, ctx.cancel)
        if run is not None and run.deferred is not None:
            raise CallDeferred(run.deferred)
        return map_result(self.name, result, self._max_chars, _media_of(run))


def _media_of(caller: Caller | None) -> frozenset[str]:
    """The media kinds the calling agent's model takes (``"image"``, ``"audio"``)."""
    model = caller.model if caller is not None else None
    if model is None:
        return frozenset()
    try:
        caps = model.capabilities()
    except Exception:  # a model whose capabilities fail: text only
        return frozenset()
    kinds = {"image" if caps.vision else "", "audio" if caps.audio else ""}
    return frozenset(kinds - {""})
