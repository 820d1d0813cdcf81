"""A handle's resources and prompts: listing, reading, and the tools that describe them.

:class:`ResourcesAndPrompts` is a part of :class:`~helikon.mcp.McpServerHandle`; every request
goes through the live connection (reconnecting when the server died).
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Mapping
from typing import Any

import mcp_types as types

from helikon.core.cancel import CancellationToken
from helikon.core.items import AssistantMessage, ContentPart, UserMessage
from helikon.core.tool import Tool
from helikon.errors import McpError, McpOther, McpServiceError, ToolOther
from helikon.mcp._catalog import prompt_items, resource_parts, resource_text
from helikon.mcp._connection import Connection
from helikon.mcp._context_tools import GetPromptTool, ReadResourceTool
from helikon.mcp._naming import display_name

__all__ = ["ResourcesAndPrompts"]


class ResourcesAndPrompts:
    """The resources-and-prompts part of a handle (its state is set by the handle)."""

    _connection: Connection
    _remote: list[types.Tool] | None
    _read_tool: weakref.WeakSet[ReadResourceTool]
    _prompt_tool: weakref.WeakSet[GetPromptTool]
    tool_prefix: str | None

    async def live_connection(self, display: str) -> Connection:
        raise NotImplementedError

    async def _conn(self, what: str) -> Connection:
        if self._remote is None:
            raise McpOther(f"MCP server {self._connection.label}: connect before {what}")
        try:
            return await self.live_connection(what)
        except ToolOther as exc:
            raise McpServiceError(f"MCP server {self._connection.label}: {exc}") from None

    async def _pages(self, what: str, fetch: Callable[[Any, Any], Any], field: str) -> list[Any]:
        conn = await self._conn(what)
        items: list[Any] = []
        cursor: str | None = None
        for _ in range(1000):
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page: Any = await conn.request(what, functools.partial(_fetch_page, fetch, params))
            items.extend(getattr(page, field))
            cursor = page.next_cursor
            if not cursor:
                return items
        raise McpServiceError(f"MCP server {conn.label}: {what} did not end after 1000 pages")

    async def list_resources(self) -> list[types.Resource]:
        """Every page of ``resources/list`` (``mcp_types.Resource``: uri, name, ...).

        Raises:
            McpServiceError: the server failed (one without resources answers "method not
                found") or is gone.
            McpOther: :meth:`connect` has not run.
        """
        return await self._pages(
            "resources/list", lambda s, p: s.list_resources(params=p), "resources"
        )

    async def list_resource_templates(self) -> list[types.ResourceTemplate]:
        """Every page of ``resources/templates/list`` (RFC 6570 ``uri_template`` each).

        Raises:
            McpServiceError, McpOther: as for :meth:`list_resources`.
        """
        return await self._pages(
            "resources/templates/list",
            lambda s, p: s.list_resource_templates(params=p),
            "resource_templates",
        )

    async def list_prompts(self) -> list[types.Prompt]:
        """Every page of ``prompts/list`` (``mcp_types.Prompt``: name, arguments, ...).

        Raises:
            McpServiceError, McpOther: as for :meth:`list_resources`.
        """
        return await self._pages("prompts/list", lambda s, p: s.list_prompts(params=p), "prompts")

    async def read_resource(
        self, uri: str, *, cancel: CancellationToken | None = None
    ) -> list[ContentPart]:
        """``resources/read``: the resource's contents as content parts (text as
        ``TextPart``, image/audio blobs as ``ImagePart``/``AudioPart``, other blobs as a
        ``TextPart`` naming their type and size). Expand a template first with
        :func:`helikon.mcp.expand_template`.

        Raises:
            McpServiceError: the server failed (unknown URI, ...), is gone, or ``cancel``
                fired.
            McpOther: :meth:`connect` has not run.
        """
        conn = await self._conn("resources/read")
        result = await conn.request("resources/read", lambda s: s.read_resource(uri), cancel)
        return resource_parts(result)

    async def resource_message(self, uri: str) -> UserMessage:
        """The resource as a user message to put in a run's input (attach it as context):
        ``agent.run([await handle.resource_message(uri), UserMessage.text("...")])``.

        Raises:
            McpServiceError, McpOther: as for :meth:`read_resource`.
        """
        return UserMessage(content=await self.read_resource(uri))

    async def get_prompt(
        self,
        name: str,
        arguments: Mapping[str, str] | None = None,
        *,
        cancel: CancellationToken | None = None,
    ) -> list[UserMessage | AssistantMessage]:
        """``prompts/get``: the prompt's messages as items, to use as (part of) a run's
        input.

        Raises:
            McpServiceError: the server failed (unknown prompt, missing argument, ...), is
                gone, or ``cancel`` fired.
            McpOther: :meth:`connect` has not run.
        """
        args = {str(k): str(v) for k, v in (arguments or {}).items()}
        conn = await self._conn("prompts/get")
        result = await conn.request(
            "prompts/get", lambda s: s.get_prompt(name, arguments=args), cancel
        )
        return prompt_items(result)

    async def context_tools(self) -> list[Tool]:
        """``<prefix>read_resource`` and ``<prefix>get_prompt`` as agent tools, for what the
        server offers (a server without resources, or without prompts, gets no such tool).
        Their descriptions list the resources, templates and prompts the server has, and
        follow ``notifications/resources/list_changed`` and ``prompts/list_changed``.

        Raises:
            McpServiceError, McpOther: as for :meth:`list_resources`.
        """
        caps = self._connection.capabilities
        tools: list[Tool] = []
        if caps is None or caps.resources is not None:
            name = display_name(self.tool_prefix, "read_resource")
            resources = await self.list_resources()
            templates = await self.list_resource_templates()

            async def read(uri: str, cancel: Any) -> str:
                try:
                    return resource_text(await self.read_resource(uri, cancel=cancel))
                except McpError as exc:
                    raise ToolOther(f"MCP tool {name!r} failed: {exc}") from None

            read_tool = ReadResourceTool(name, read, resources, templates)
            self._read_tool.add(read_tool)
            tools.append(read_tool)
        if caps is None or caps.prompts is not None:
            prompt_tool = display_name(self.tool_prefix, "get_prompt")
            prompts = await self.list_prompts()

            async def get(
                name: str, arguments: dict[str, str], cancel: Any
            ) -> list[UserMessage | AssistantMessage]:
                try:
                    return await self.get_prompt(name, arguments, cancel=cancel)
                except McpError as exc:
                    raise ToolOther(f"MCP tool {prompt_tool!r} failed: {exc}") from None

            get_tool = GetPromptTool(prompt_tool, get, prompts)
            self._prompt_tool.add(get_tool)
            tools.append(get_tool)
        return tools


def _fetch_page(fetch: Callable[[Any, Any], Any], params: Any, session: Any) -> Any:
    return fetch(session, params)
