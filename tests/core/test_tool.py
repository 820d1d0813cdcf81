"""@tool: schemas from type hints and docstrings, validation, results, ToolContext."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from helikon import (
    CancellationToken,
    ConfigError,
    InvalidArgs,
    ToolContext,
    ToolDenied,
    ToolEffect,
    ToolOutput,
    tool,
)
from helikon.errors import ToolOther


def _ctx(user_ctx: Any = None) -> ToolContext[Any]:
    return ToolContext(
        user_ctx=user_ctx, state={}, cancel=CancellationToken(), call_id="c1", agent_name="t"
    )


class Filter(BaseModel):
    field: str
    value: str


@tool
def search(
    query: str,
    filters: list[Filter],
    limit: Annotated[int, Field(description="Max hits.", ge=1)] = 10,
    mode: Literal["fast", "deep"] = "fast",
) -> list[str]:
    """Search the index.

    Longer explanation that stays in the description.

    Args:
        query: What to look for.
        filters: Field filters,
            all of which must match.
        limit: overridden by the Field description.
    """
    return [query, str(len(filters)), str(limit), mode]


def test_schema_from_hints_and_docstring() -> None:
    assert search.name == "search"
    assert search.description == (
        "Search the index.\n\nLonger explanation that stays in the description."
    )
    p = search.parameters
    assert p["type"] == "object"
    assert p["required"] == ["query", "filters"]
    assert p["properties"]["query"] == {"description": "What to look for.", "type": "string"}
    assert p["properties"]["filters"]["description"] == "Field filters, all of which must match."
    assert p["properties"]["filters"]["items"] == {"$ref": "#/$defs/Filter"}
    assert p["properties"]["limit"]["description"] == "Max hits."
    assert p["properties"]["limit"]["minimum"] == 1
    assert p["properties"]["mode"]["enum"] == ["fast", "deep"]
    assert p["additionalProperties"] is False
    assert search.effect is ToolEffect.SIDE_EFFECT


async def test_invoke_validates_and_serializes() -> None:
    out = await search.invoke(
        _ctx(), {"query": "q", "filters": [{"field": "a", "value": "b"}], "limit": 3}
    )
    assert json.loads(out.content[0].text) == ["q", "1", "3", "fast"]
    assert out.value == ["q", "1", "3", "fast"]


async def test_invalid_args_never_reach_the_function() -> None:
    calls: list[int] = []

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        calls.append(1)
        return a + b

    with pytest.raises(InvalidArgs) as exc:
        await add.invoke(_ctx(), {"a": "x", "c": 1})
    assert calls == []
    assert exc.value.schema_errors == [
        "a: Input should be a valid integer, unable to parse string as an integer",
        "b: Field required",
        "c: Extra inputs are not permitted",
    ]
    with pytest.raises(InvalidArgs, match="not valid JSON"):
        await add.invoke(_ctx(), '{"a": 1,')
    with pytest.raises(InvalidArgs, match="must be a JSON object, got list"):
        await add.invoke(_ctx(), [1, 2])
    assert (await add.invoke(_ctx(), '{"a": 1, "b": 2}')).content[0].text == "3"


async def test_async_tool_with_context_and_effect() -> None:
    @tool(name="who", effect=ToolEffect.READ_ONLY)
    async def whoami(ctx: ToolContext[dict[str, str]], greeting: str = "hi") -> str:
        """Greet the current user."""
        await asyncio.sleep(0)
        return f"{greeting} {ctx.user_ctx['user']} ({ctx.call_id})"

    assert whoami.name == "who"
    assert whoami.effect is ToolEffect.READ_ONLY
    assert "ctx" not in whoami.parameters["properties"]
    out = await whoami.invoke(_ctx({"user": "ada"}), {})
    assert out.content[0].text == "hi ada (c1)"


async def test_non_ascii_results_stay_characters() -> None:
    """Field case BR-07: tool output reaches the model as characters, not \\u escapes."""

    @tool
    def notice() -> str:
        """Price notice."""
        return "本日の価格は ¥1,200 🚀 — 完了"

    @tool
    def note() -> dict[str, str]:
        """Note."""
        return {"note": "本日 🚀"}

    assert (await notice.invoke(_ctx(), {})).content[0].text == "本日の価格は ¥1,200 🚀 — 完了"
    text = (await note.invoke(_ctx(), {})).content[0].text
    assert text == '{"note":"本日 🚀"}'
    assert "\\u" not in text


async def test_errors_from_the_function() -> None:
    @tool
    def guarded(path: str) -> str:
        """Refuse."""
        raise ToolDenied(f"{path} is outside the sandbox")

    @tool
    def broken() -> str:
        """Break."""
        raise KeyError("missing")

    with pytest.raises(ToolDenied, match="denied: /etc is outside the sandbox"):
        await guarded.invoke(_ctx(), {"path": "/etc"})
    with pytest.raises(ToolOther, match="KeyError: 'missing'"):
        await broken.invoke(_ctx(), {})


def test_decorated_function_stays_callable() -> None:
    assert search("q", [], 2) == ["q", "0", "2", "fast"]


def test_signature_errors_are_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"\*args/\*\*kwargs"):

        @tool
        def bad(*items: str) -> None:
            """Bad."""

    with pytest.raises(ConfigError, match="must match"):
        tool(name="has space")(lambda: None)


def test_tool_output_from_value() -> None:
    assert ToolOutput.from_value(None).content[0].text == "null"
    assert ToolOutput.from_value(Filter(field="a", value="b")).content[0].text == (
        '{"field":"a","value":"b"}'
    )


# --- a parameter type pydantic cannot describe ----------------------------------------


def test_unschemable_parameter_type_is_a_config_error_naming_tool_param_and_type() -> None:
    with pytest.raises(ConfigError) as info:

        @tool
        def send(host: str, conn: socket.socket) -> str:
            """Send."""
            return host

    message = str(info.value)
    assert message.startswith(
        "tool 'send': parameter 'conn' has type socket, which pydantic cannot describe as "
        "JSON Schema (Unable to generate pydantic-core schema for <class 'socket.socket'>)"
    )
    assert "ToolContext" in message
    assert "arbitrary_types_allowed" not in message  # not a fix a tool author can apply


def test_unschemable_type_inside_a_container_and_a_callable_are_named_too() -> None:
    with pytest.raises(ConfigError, match=r"parameter 'conns' has type list\[socket.socket\]"):

        @tool
        def broadcast(conns: list[socket.socket]) -> str:
            """Broadcast."""
            return ""

    with pytest.raises(ConfigError, match=r"tool 'apply': parameter 'fn' has type .*Callable"):

        @tool
        async def apply(x: int, fn: Callable[[int], int]) -> str:
            """Apply."""
            return ""

    with pytest.raises(ConfigError, match=r"parameter 'o' has type _Opaque, which pydantic"):

        @tool
        def opaque(o: _Opaque) -> str:
            """Opaque."""
            return ""


class _Opaque:
    """A plain class: pydantic has no schema for it."""
