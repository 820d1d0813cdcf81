"""``read_resource`` and ``get_prompt``: a server's resources and prompts as agent tools.

Both are ``READ_ONLY`` (reading a resource or rendering a prompt changes nothing on the
server, by the protocol's definition of the two), call through the handle (so a dead server
is reconnected like for any tool), and fail as a :class:`~helikon.errors.ToolError` the model
reads. Their descriptions list what the server offered when they were built (at most
:data:`LISTED` of each), so the model knows which URIs and prompt names exist.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import mcp_types as types

from helikon.core.context import ToolContext
from helikon.core.items import AssistantMessage, UserMessage
from helikon.core.tool import ToolEffect, ToolOutput
from helikon.errors import ConfigError, InvalidArgs
from helikon.mcp._catalog import expand_template, resource_text

__all__ = ["LISTED", "GetPromptTool", "ReadResourceTool"]

LISTED = 50
"""At most this many resources, templates and prompts are named in a tool description."""

ReadFn = Callable[[str, Any], Awaitable[str]]


def _listing(lines: Sequence[str], what: str) -> str:
    if not lines:
        return ""
    shown = "\n".join(f"- {line}" for line in lines[:LISTED])
    more = f"\n(and {len(lines) - LISTED} more)" if len(lines) > LISTED else ""
    return f"\n{what}:\n{shown}{more}"


class ReadResourceTool:
    """``{"uri": string}`` or ``{"template": string, "variables": {...}}`` -> the text."""

    effect = ToolEffect.READ_ONLY

    def __init__(
        self,
        name: str,
        read: Callable[[str, Any], Awaitable[str]],
        resources: Sequence[types.Resource],
        templates: Sequence[types.ResourceTemplate],
    ) -> None:
        self.name = name
        self._read = read
        self.description = ""
        self.relist(resources, templates)
        self.parameters: dict[str, Any] = {
            "type": "object",
            "properties": {
                "uri": {"type": "string", "description": "The resource URI."},
                "template": {"type": "string", "description": "A URI template (instead of uri)."},
                "variables": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "description": "Values for the template's variables.",
                },
            },
            "additionalProperties": False,
        }

    def relist(
        self, resources: Sequence[types.Resource], templates: Sequence[types.ResourceTemplate]
    ) -> None:
        """Describe these resources and templates (after ``resources/list_changed``)."""
        listed = [
            f"{r.uri} ({r.name}{': ' + r.description if r.description else ''})" for r in resources
        ]
        templated = [f"{t.uri_template} ({t.name})" for t in templates]
        self.description = (
            "Read a resource of this MCP server by its URI, or by a URI template and its "
            "variables." + _listing(listed, "Resources") + _listing(templated, "Templates")
        )

    def __repr__(self) -> str:
        return f"<mcp tool {self.name}>"

    async def invoke(self, ctx: ToolContext[Any], args: Any) -> ToolOutput:
        """Read the resource.

        Raises:
            InvalidArgs: neither ``uri`` nor ``template`` (or both), bad ``variables``, or
                a template that does not expand.
            ToolOther: the server failed, refused or is gone.
        """
        args = args if isinstance(args, dict) else {}
        uri, template = args.get("uri"), args.get("template")
        if (uri is None) == (template is None):
            raise InvalidArgs(["exactly one of uri or template is required"])
        if template is not None:
            variables = args.get("variables") or {}
            if not isinstance(template, str) or not isinstance(variables, dict):
                raise InvalidArgs(["template must be a string and variables an object"])
            try:
                uri = expand_template(template, {str(k): str(v) for k, v in variables.items()})
            except ConfigError as exc:
                raise InvalidArgs([str(exc)]) from None
        if not isinstance(uri, str):
            raise InvalidArgs(["uri must be a string"])
        return ToolOutput.from_value(await self._read(uri, ctx.cancel))


def _role(item: UserMessage | AssistantMessage) -> str:
    return "assistant" if isinstance(item, AssistantMessage) else "user"


class GetPromptTool:
    """``{"name": string, "arguments": {...}}`` -> the prompt's messages as text."""

    effect = ToolEffect.READ_ONLY

    def __init__(
        self,
        name: str,
        get: Callable[[str, dict[str, str], Any], Awaitable[list[UserMessage | AssistantMessage]]],
        prompts: Sequence[types.Prompt],
    ) -> None:
        self.name = name
        self._get = get
        self.relist(prompts)
        self.parameters: dict[str, Any] = {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The prompt's name."},
                "arguments": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                    "description": "The prompt's arguments.",
                },
            },
            "required": ["name"],
            "additionalProperties": False,
        }

    def relist(self, prompts: Sequence[types.Prompt]) -> None:
        """Describe these prompts (after ``prompts/list_changed``)."""
        listed = []
        for p in prompts:
            params = ", ".join(a.name + ("" if a.required else "?") for a in (p.arguments or []))
            about = f": {p.description}" if p.description else ""
            listed.append(f"{p.name}({params}){about}")
        self.description = (
            "Get a prompt of this MCP server, filled in with its arguments."
            + _listing(listed, "Prompts")
        )

    def __repr__(self) -> str:
        return f"<mcp tool {self.name}>"

    async def invoke(self, ctx: ToolContext[Any], args: Any) -> ToolOutput:
        """Render the prompt: each message as ``role: text`` on its own lines.

        Raises:
            InvalidArgs: ``name`` is not a string or ``arguments`` not an object.
            ToolOther: the server failed, refused or is gone.
        """
        args = args if isinstance(args, dict) else {}
        name, arguments = args.get("name"), args.get("arguments") or {}
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise InvalidArgs(["name must be a string and arguments an object"])
        items = await self._get(name, {str(k): str(v) for k, v in arguments.items()}, ctx.cancel)
        lines = [f"{_role(i)}: {resource_text(i.content)}" for i in items]
        return ToolOutput.from_value("\n".join(lines))
