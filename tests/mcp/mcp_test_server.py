"""MCP servers for the tests, run as child processes: ``python mcp_test_server.py MODE``.

Modes:
    tools     echo / multi / structured / image / fail / peek / boom / slow, paginated 3 a page
    many      30 tools ``tool_00`` .. ``tool_29`` (lazy-mode search), paginated 7 a page
    dynamic   ``echo`` and ``grow``: each ``grow`` call adds a tool ``extra_N`` (N = 1, 2, ...)
              and changes ``echo``'s description to ``Echo, version N.``, then sends
              ``notifications/tools/list_changed``
    context   resources ``note://readme`` (text), ``img://logo`` (PNG), ``bin://blob`` (4 bytes),
              template ``note://{name}``, prompt ``review(code, style?)``; tools ``echo`` and
              ``add_more`` (adds ``note://new`` and prompt ``summarize``, sends both
              list_changed notifications), ``shaped`` (output schema ``{n: integer}``;
              its structuredContent breaks it when ``text`` is not a number)
    asks      tools that ask the client back: ``ask_llm`` (sampling/createMessage with the
              text), ``ask_user`` (elicitation, a form whose field ``name`` defaults to Ada;
              ``ask_user_required``: one without a default), ``ask_roots`` (roots/list) and
              ``roots_seen`` (the roots/list_changed notifications received so far)
    media     results with other content: ``picture`` (text + PNG image, ``_meta``
              ``{"trace": "t-1", "token": <$MEDIA_SECRET>}``), ``sound`` (WAV audio), ``links``
              (a resource link + an embedded text resource), ``tagged`` (one text, ``_meta``)
    stubborn  serves ``initialize``/``tools/list``, then ignores stdin EOF and SIGTERM (BR-25)
    agent     helikon's McpAgentServer over a scripted MockModel (``agent:slow`` etc.,
              see ``agent_server.build``)
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

_OBJ: dict[str, Any] = {"type": "object"}


def _tool(name: str, description: str, *, read_only: bool | None = None) -> types.Tool:
    ann = None if read_only is None else types.ToolAnnotations(read_only_hint=read_only)
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    return types.Tool(name=name, description=description, input_schema=schema, annotations=ann)


TOOLS = [
    _tool("echo", "Echo the text back.", read_only=True),
    _tool("multi", "Two text blocks.", read_only=False),
    _tool("structured", "Structured content."),
    _tool("image", "One image block."),
    _tool("fail", "Always an error result."),
    _tool("peek", "Reports the environment variable HELIKON_MCP_PEEK and the cwd."),
    _tool("boom", "Kills the server with exit code 3."),
    _tool("slow", "Sleeps 30 seconds."),
]


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


async def _call(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    name = params.name
    if name == "echo":
        return types.CallToolResult(content=[_text(str(args.get("text", "")))])
    if name == "multi":
        return types.CallToolResult(content=[_text("one"), _text("two")])
    if name == "structured":
        return types.CallToolResult(
            content=[_text('{"n": 1}')], structured_content={"n": 1, "echo": args}
        )
    if name == "image":
        return types.CallToolResult(
            content=[types.ImageContent(type="image", data="aGk=", mime_type="image/png")]
        )
    if name == "fail":
        return types.CallToolResult(content=[_text("the disk is on fire")], is_error=True)
    if name == "peek":
        return types.CallToolResult(
            content=[_text(f"{os.environ.get('HELIKON_MCP_PEEK')}|{os.getcwd()}")]
        )
    if name == "boom":
        sys.stdout.flush()
        os._exit(3)
    if name == "slow":
        await asyncio.sleep(30)
        return types.CallToolResult(content=[_text("late")])
    return types.CallToolResult(content=[_text(f"unknown tool {name}")], is_error=True)


def _paged(tools: list[types.Tool], size: int) -> Any:
    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> Any:
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + size
        cursor = str(end) if end < len(tools) else None
        return types.ListToolsResult(tools=tools[start:end], next_cursor=cursor)

    return list_tools


async def _serve(server: Server[Any]) -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def _dynamic() -> Server[Any]:
    tools = [_tool("echo", "Echo the text back."), _tool("grow", "Adds a tool.")]

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> Any:
        return types.ListToolsResult(tools=list(tools))

    async def call(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name == "grow":
            n = len(tools) - 1
            tools.append(_tool(f"extra_{n}", f"Extra tool {n}."))
            tools[0] = _tool("echo", f"Echo, version {n}.")
            await ctx.session.send_tool_list_changed()
            return types.CallToolResult(content=[_text(f"added extra_{n}")])
        if params.name.startswith("extra_"):
            return types.CallToolResult(content=[_text(f"{params.name} ran")])
        return await _call(ctx, params)

    return Server("dynamic", on_list_tools=list_tools, on_call_tool=call)


def _context() -> Server[Any]:
    resources = [
        types.Resource(uri="note://readme", name="readme", description="The readme."),
        types.Resource(uri="img://logo", name="logo", mime_type="image/png"),
        types.Resource(uri="bin://blob", name="blob", mime_type="application/octet-stream"),
    ]

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        cursor = str(start + 2) if start + 2 < len(resources) else None
        return types.ListResourcesResult(resources=resources[start : start + 2], next_cursor=cursor)

    async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        template = types.ResourceTemplate(uri_template="note://{name}", name="note")
        return types.ListResourceTemplatesResult(resource_templates=[template])

    async def read(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        if uri == "img://logo":
            blob: Any = types.BlobResourceContents(uri=uri, blob="aGk=", mime_type="image/png")
            return types.ReadResourceResult(contents=[blob])
        if uri == "bin://blob":
            blob = types.BlobResourceContents(uri=uri, blob="AAECAw==", mime_type="application/x-y")
            return types.ReadResourceResult(contents=[blob])
        if uri == "note://readme":
            text = "hello from the readme"
        elif uri.startswith("note://"):
            text = f"note named {uri[len('note://') :]}"
        else:
            from mcp.shared.exceptions import MCPError

            raise MCPError(code=-32002, message=f"no resource {uri}")
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, text=text, mime_type="text/plain")]
        )

    prompt = types.Prompt(
        name="review",
        description="Review some code.",
        arguments=[
            types.PromptArgument(name="code", required=True),
            types.PromptArgument(name="style", required=False),
        ],
    )

    prompts = [prompt]

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=list(prompts))

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        args = params.arguments or {}
        if params.name != "review" or "code" not in args:
            from mcp.shared.exceptions import MCPError

            raise MCPError(code=-32602, message="review needs the argument code")
        style = args.get("style", "plain")
        return types.GetPromptResult(
            messages=[
                types.PromptMessage(
                    role="user", content=_text(f"Review ({style}): {args['code']}")
                ),
                types.PromptMessage(role="assistant", content=_text("Sure, send it.")),
            ]
        )

    async def call(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name == "add_more":
            resources.append(types.Resource(uri="note://new", name="new"))
            prompts.append(types.Prompt(name="summarize", description="Summarize."))
            await ctx.session.send_resource_list_changed()
            await ctx.session.send_prompt_list_changed()
            return types.CallToolResult(content=[_text("added")])
        if params.name == "shaped":
            n: Any = (params.arguments or {}).get("text", "1")
            value = int(n) if n.isdigit() else n
            return types.CallToolResult(content=[_text(str(n))], structured_content={"n": value})
        return await _call(ctx, params)

    shaped = _tool("shaped", "Structured {n: int} (text not a number: the wrong shape).")
    shaped.output_schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
    }

    return Server(
        "context",
        on_list_tools=_paged(
            [TOOLS[0], _tool("add_more", "Adds a resource and a prompt."), shaped], 3
        ),
        on_call_tool=call,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


def _asks() -> Server[Any]:
    tools = [
        _tool(n, n) for n in ("ask_llm", "ask_user", "ask_user_required", "ask_roots", "roots_seen")
    ]
    changes: list[str] = []

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        from mcp.shared.exceptions import MCPError

        text = str((params.arguments or {}).get("text", ""))
        try:
            if params.name == "ask_llm":
                msg = types.SamplingMessage(role="user", content=_text(text))
                res = await ctx.session.create_message(
                    [msg],
                    max_tokens=50,
                    system_prompt="Be brief.",
                    related_request_id=ctx.request_id,
                )
                return types.CallToolResult(content=[_text(f"{res.model}: {res.content.text}")])
            if params.name in ("ask_user", "ask_user_required"):
                field: dict[str, Any] = {"type": "string"}
                if params.name == "ask_user":
                    field["default"] = "Ada"
                schema = {"type": "object", "properties": {"name": field}, "required": ["name"]}
                res = await ctx.session.elicit(
                    "Your name?", schema, related_request_id=ctx.request_id
                )
                return types.CallToolResult(content=[_text(f"{res.action} {res.content}")])
            if params.name == "ask_roots":
                res = await ctx.session.list_roots()
                return types.CallToolResult(
                    content=[_text(" ".join(f"{r.name}={r.uri}" for r in res.roots))]
                )
            if params.name == "roots_seen":
                return types.CallToolResult(content=[_text(str(len(changes)))])
        except MCPError as exc:
            return types.CallToolResult(content=[_text(f"refused: {exc.message}")], is_error=True)
        return types.CallToolResult(content=[_text("?")], is_error=True)

    async def roots_changed(ctx: Any, params: Any) -> None:
        changes.append("changed")

    return Server(
        "asks", on_list_tools=list_tools, on_call_tool=call, on_roots_list_changed=roots_changed
    )


def _media() -> Server[Any]:
    tools = [_tool(n, f"Returns {n}.") for n in ("picture", "sound", "links", "tagged")]

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> Any:
        return types.ListToolsResult(tools=tools)

    async def call(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        meta = {"trace": "t-1", "token": os.environ.get("MEDIA_SECRET", "")}
        if params.name == "picture":
            image = types.ImageContent(type="image", data="iVBORw0KGgo=", mime_type="image/png")
            return types.CallToolResult(content=[_text("a picture:"), image], _meta=meta)
        if params.name == "sound":
            audio = types.AudioContent(type="audio", data="UklGRg==", mime_type="audio/wav")
            return types.CallToolResult(content=[audio])
        if params.name == "links":
            link = types.ResourceLink(
                type="resource_link",
                uri="file:///srv/report.pdf",
                name="report",
                description="The quarterly report.",
                mime_type="application/pdf",
            )
            embedded = types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(uri="note://x", text="embedded note"),
            )
            return types.CallToolResult(content=[link, embedded])
        return types.CallToolResult(content=[_text("tagged")], _meta={"trace": "t-2"})

    return Server("media", on_list_tools=list_tools, on_call_tool=call)


def main(mode: str) -> None:
    if mode.startswith("agent"):
        from tests.mcp.agent_server import serve_stdio

        asyncio.run(serve_stdio(mode.partition(":")[2] or "plain"))
        return
    if mode == "dynamic":
        asyncio.run(_serve(_dynamic()))
        return
    if mode == "asks":
        asyncio.run(_serve(_asks()))
        return
    if mode == "context":
        asyncio.run(_serve(_context()))
        return
    if mode == "media":
        asyncio.run(_serve(_media()))
        return
    if mode == "many":
        tools = [
            _tool(f"tool_{i:02d}", f"Numbered tool {i}" + (" (Special)" if i % 10 == 3 else ""))
            for i in range(30)
        ]
        server: Server[Any] = Server("many", on_list_tools=_paged(tools, 7), on_call_tool=_call)
    else:
        server = Server("tools", on_list_tools=_paged(TOOLS, 3), on_call_tool=_call)
    if mode == "stubborn":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print(f"pid {os.getpid()}", file=sys.stderr, flush=True)
    asyncio.run(_serve(server))
    if mode == "stubborn":
        while True:
            time.sleep(1)


if __name__ == "__main__":
    main(sys.argv[1])
