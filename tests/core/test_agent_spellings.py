"""Agents set up the way Pydantic AI and OpenAI Agents SDK users write them (issue 23).

``@agent.tool`` and ``@agent.instructions`` decorators, ``Agent[Deps, Out]``, a tool whose
first parameter is typed as the *run* context (refused, naming ``ToolContext``), ``deps=`` /
``context=`` / ``max_turns=`` (refused, naming helikon's spelling), parameter descriptions
from ``Annotated`` strings, ``Field`` and three docstring styles, and ``Runner.run(agent, q)``.
"""

from __future__ import annotations

import asyncio
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Generic, TypeVar

import pytest
from pydantic import Field

from helikon import (
    Agent,
    ConfigError,
    RunContext,
    RunError,
    Runner,
    ToolContext,
    tool,
)
from helikon.core.items import SystemMessage, text_of
from helikon.sessions import MemorySession
from helikon.testing import Call, MockModel, Text


@dataclass
class Deps:
    user: str


def _system(model: MockModel, call: int = 0) -> str | None:
    first = model.requests[call].messages[0]
    return text_of(first.content) if isinstance(first, SystemMessage) else None


# ------------------------------------------------------------------------ @agent.tool


def test_agent_tool_decorator_adds_the_tool_and_the_run_calls_it() -> None:
    model = MockModel([[Call("c1", "greet", {"name": "Ada"})], [Text("done")]])
    agent = Agent(name="a", model=model)

    @agent.tool
    def greet(ctx: ToolContext[Deps], name: str) -> str:
        """Greet someone."""
        return f"hello {name}, from {ctx.user_ctx.user}"

    @agent.tool(name="shout", effect="read_only")
    async def loud(text: str) -> str:
        """Shout."""
        return text.upper()

    assert [t.name for t in agent.tools] == ["greet", "shout"]
    assert agent.tools[1].effect == "read_only"
    result = agent.run_sync("hi", RunContext.ephemeral(Deps(user="bob")))
    outputs = [e.item.content[0].text for e in result.events if e.type == "tool_output_item"]
    assert outputs == ["hello Ada, from bob"]
    assert loud.fn is not None and asyncio.run(loud("hey")) == "HEY"


def test_a_tool_added_after_a_run_is_offered_on_the_next() -> None:
    model = MockModel([[Text("first")], [Call("c1", "late", {})], [Text("second")]])
    agent = Agent(name="a", model=model)
    assert agent.run_sync("one").final_output == "first"

    @agent.tool
    def late() -> str:
        """Added late."""
        return "here"

    assert agent.run_sync("two").final_output == "second"
    assert [t.name for t in model.requests[1].tools] == ["late"]


def test_agent_tool_refuses_a_second_tool_of_the_same_name() -> None:
    agent = Agent(name="a", model=MockModel([]), tools=[tool(lambda: "x", name="dup")])
    with pytest.raises(ConfigError) as caught:

        @agent.tool(name="dup")
        def other() -> str:
            return "y"

    assert str(caught.value) == (
        "@agent.tool: agent 'a' already has a tool named 'dup'; pass name=... to tell them apart"
    )


# ----------------------------------------------------------------- @agent.instructions


def test_instruction_parts_are_joined_in_order_sync_and_async() -> None:
    model = MockModel([[Text("ok")]])
    agent: Agent[Deps, str] = Agent(name="a", model=model, instructions="You help users.")

    @agent.instructions
    def who(ctx: RunContext[Deps]) -> str:
        return f"The user is {ctx.user_ctx.user}."

    @agent.instructions
    async def today() -> str:
        await asyncio.sleep(0)
        return "Today is Friday."

    @agent.instructions
    def nothing_this_time() -> None:
        return None

    assert who(RunContext.ephemeral(Deps("x"))) == "The user is x."  # returned unchanged
    agent.run_sync("hi", RunContext.ephemeral(Deps(user="Ada")))
    assert _system(model) == "You help users.\n\nThe user is Ada.\n\nToday is Friday."
    assert agent.instruction_parts[0] == "You help users."
    assert len(agent.instruction_parts) == 4


def test_async_instructions_given_to_the_constructor() -> None:
    model = MockModel([[Text("ok")]])

    async def prompt(ctx: RunContext[Any]) -> str:
        return f"depth {ctx.agent_depth}"

    Agent(name="a", model=model, instructions=prompt).run_sync("hi")
    assert _system(model) == "depth 0"


def test_an_instructions_function_that_returns_no_text_fails_the_run() -> None:
    agent = Agent(name="a", model=MockModel([[Text("x")]]))

    @agent.instructions
    def number() -> int:
        return 3

    with pytest.raises(RunError) as caught:
        agent.run_sync("hi")
    assert "the instructions function 'number' returned int, not str" in str(caught.value)


@pytest.mark.parametrize(
    "fn",
    [lambda ctx, other: "x", lambda *, key: "x"],
    ids=["two arguments", "keyword-only"],
)
def test_an_instructions_function_with_other_arguments_is_refused(fn: Any) -> None:
    agent = Agent(name="a", model=MockModel([]))
    with pytest.raises(ConfigError) as caught:
        agent.instructions(fn)
    assert str(caught.value) == (
        "@agent.instructions: the function '<lambda>' must take the run context or nothing "
        "(def fn(ctx) -> str or def fn() -> str)"
    )


# -------------------------------------------------------------- the run context in a tool

RunContextAlias = RunContext


class RunContextWrapper(Generic[TypeVar("T")]):  # the OpenAI Agents SDK's name
    pass


def _first_param_error(name: str, shown: str) -> str:
    return (
        f"tool 'lookup': parameter {name!r} is annotated {shown}, the run context; a tool "
        f"receives the tool context instead: annotate it {name}: ToolContext[Deps] (from "
        f"helikon import ToolContext; {name}.user_ctx is the object the run was given with "
        "ctx=RunContext.ephemeral(deps), what Pydantic AI calls ctx.deps)"
    )


def test_run_context_first_parameter_is_refused_naming_tool_context() -> None:
    def lookup(ctx: RunContext[Deps], city: str) -> str:
        return city

    with pytest.raises(ConfigError) as caught:
        tool(lookup)
    assert str(caught.value) == _first_param_error("ctx", "RunContext[Deps]")


@pytest.mark.parametrize(
    ("annotation", "shown"),
    [
        ("RunContext", "RunContext"),
        ("RunContextAlias[Deps]", "RunContext[Deps]"),
        ("RunContextWrapper[Deps]", "RunContextWrapper[Deps]"),
        ("UnknownModule.RunContext[Deps]", "UnknownModule.RunContext[Deps]"),
        ("RunContext[NotDefinedHere]", "RunContext[NotDefinedHere]"),
    ],
)
def test_every_spelling_of_the_run_context_is_refused(annotation: str, shown: str) -> None:
    namespace: dict[str, Any] = {}
    source = f"def lookup(run: {annotation!s}, city: str) -> str:\n    return city\n"
    exec(compile(source, "<test>", "exec"), globals(), namespace)
    fn = namespace["lookup"]
    fn.__annotations__["run"] = annotation  # a string, as `from __future__ import annotations`
    with pytest.raises(ConfigError) as caught:
        tool(fn)
    assert str(caught.value) == _first_param_error("run", shown)


def test_pydantic_ai_run_context_class_is_refused() -> None:
    """A class named RunContext from another library (Pydantic AI's) is refused too."""

    class RunContext(Generic[TypeVar("D")]):
        pass

    def lookup(ctx: RunContext[Deps]) -> str:  # type: ignore[type-arg]
        return ""

    lookup.__annotations__["ctx"] = RunContext[Deps]  # type: ignore[misc]
    with pytest.raises(ConfigError) as caught:
        tool(lookup)
    assert str(caught.value) == _first_param_error("ctx", "RunContext[Deps]")


@pytest.mark.parametrize("annotation", [ToolContext[Deps], RunContext[Deps]])
def test_a_context_parameter_after_the_first_is_refused(annotation: Any) -> None:
    def lookup(city: str, ctx: Any) -> str:
        return city

    lookup.__annotations__["ctx"] = annotation
    with pytest.raises(ConfigError) as caught:
        tool(lookup)
    assert str(caught.value).startswith("tool 'lookup': parameter 'ctx' is annotated ")
    assert str(caught.value).endswith(
        "; the context must be the first parameter, annotated ToolContext[Deps] "
        "(ctx: ToolContext[Deps], then the arguments)"
    )


# ------------------------------------------------------------ deps= / context= / max_turns=

_AGENT_DEPS = (
    "Agent({kw}=...): helikon gives dependencies per run, in the run context: "
    "agent.run(input, ctx=RunContext.ephemeral(deps)); tools read them as ctx.user_ctx through "
    "a first parameter ctx: ToolContext[Deps] (type it with Agent[Deps, Output])"
)


@pytest.mark.parametrize("kw", ["deps", "context", "deps_type", "context_type"])
def test_agent_deps_or_context_names_the_run_context(kw: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Agent(name="a", model=MockModel([]), **{kw: Deps("x")})
    assert str(caught.value) == _AGENT_DEPS.format(kw=kw)


def _run_message(where: str, kw: str) -> str:
    return (
        f"{where}({kw}=...): helikon calls it the run context: pass "
        "ctx=RunContext.ephemeral(deps); tools read it as ctx.user_ctx through a first "
        "parameter ctx: ToolContext[Deps]"
    )


@pytest.mark.parametrize("kw", ["deps", "context"])
def test_run_deps_or_context_names_the_run_context(kw: str) -> None:
    agent = Agent(name="a", model=MockModel([[Text("x")]]))
    with pytest.raises(ConfigError) as caught:
        agent.run_sync("hi", **{kw: Deps("x")})
    assert str(caught.value) == _run_message("Agent.run_sync", kw)
    with pytest.raises(ConfigError) as caught:
        asyncio.run(agent.run("hi", **{kw: Deps("x")}))
    assert str(caught.value) == _run_message("Agent.run", kw)
    with pytest.raises(ConfigError) as caught:
        agent.stream("hi", **{kw: Deps("x")})
    assert str(caught.value) == _run_message("Agent.stream", kw)
    with pytest.raises(ConfigError) as caught:
        asyncio.run(Runner.run(agent, "hi", **{kw: Deps("x")}))
    assert str(caught.value) == _run_message("Runner.run", kw)


def test_max_turns_names_the_run_config() -> None:
    agent = Agent(name="a", model=MockModel([]))
    with pytest.raises(ConfigError) as caught:
        asyncio.run(Runner.run(agent, "hi", max_turns=3))
    assert str(caught.value) == (
        "Runner.run(max_turns=...): helikon takes it in the run config: "
        "run_config=RunConfig(max_turns=N)"
    )
    with pytest.raises(ConfigError, match=r"^Agent.run_sync\(max_turns=\.\.\.\): helikon takes"):
        agent.run_sync("hi", max_turns=3)


def test_other_unknown_keywords_stay_type_errors_with_the_closest_name() -> None:
    with pytest.raises(TypeError) as caught:
        Agent(name="a", model=MockModel([]), instruction="x")
    assert str(caught.value) == (
        "Agent() got an unexpected keyword argument 'instruction'; did you mean 'instructions'?"
    )
    with pytest.raises(TypeError) as caught:
        asyncio.run(Runner.run(Agent(name="a", model=MockModel([])), "hi", sesion=None))
    assert str(caught.value) == (
        "Runner.run() got an unexpected keyword argument 'sesion'; did you mean 'session'?"
    )


# ------------------------------------------------------------------ Runner.run(agent, q)


def test_runner_run_as_the_openai_agents_sdk_spells_it() -> None:
    session = MemorySession()
    model = MockModel([[Text("first")], [Text("second")], [Text("third")]])
    agent = Agent(name="a", model=model)
    assert asyncio.run(Runner.run(agent, "one", session=session)).final_output == "first"
    assert asyncio.run(Runner().run(agent, "two", session=session)).final_output == "second"

    async def streamed() -> list[str]:
        return [e.type async for e in Runner.run_streamed(agent, "three", session=session)]

    assert asyncio.run(streamed())[-1] == "run_completed"
    texts = [text_of(m.content) for m in model.requests[2].messages]
    assert texts == ["one", "first", "two", "second", "three"]


def test_runner_run_sync_on_the_class() -> None:
    session = MemorySession()
    agent = Agent(name="a", model=MockModel([[Text("first")], [Text("second")]]))
    assert Runner.run_sync(agent, "one", session=session).final_output == "first"
    assert Runner().run_sync(agent, "two", session=session).final_output == "second"
    with pytest.raises(ConfigError, match=r"^Runner.run_sync\(context=\.\.\.\): helikon calls"):
        Runner.run_sync(agent, "x", context=1)

    async def inside() -> None:
        Runner.run_sync(agent, "x")

    with pytest.raises(RuntimeError) as caught:
        asyncio.run(inside())
    assert str(caught.value) == (
        "Runner.run_sync() cannot run inside an event loop; use await Runner.run()"
    )


# -------------------------------------------------------- parameter descriptions


def _descriptions(fn: Any) -> dict[str, Any]:
    return {k: v.get("description") for k, v in tool(fn).parameters["properties"].items()}


def test_annotated_plain_string_is_the_description() -> None:
    def weather(
        city: Annotated[str, "The city, in English"],
        unit: Annotated[str, Field(description="C or F")] = "C",
        days: Annotated[int, Field(ge=1), "How many days ahead"] = 1,
        note: str = "",
    ) -> str:
        """Get the weather.

        Args:
            city: overridden by the Annotated string.
            note: from the docstring.
        """
        return city

    assert _descriptions(weather) == {
        "city": "The city, in English",
        "unit": "C or F",
        "days": "How many days ahead",
        "note": "from the docstring.",
    }
    assert tool(weather).parameters["properties"]["days"]["minimum"] == 1


def test_sphinx_docstring_parameters() -> None:
    def weather(city: str, unit: str = "C") -> str:
        """Get the weather.

        :param city: The city,
            in English.
        :param str unit: C or F.
        :returns: the forecast.
        """
        return city

    made = tool(weather)
    assert made.description == "Get the weather."
    assert _descriptions(weather) == {"city": "The city, in English.", "unit": "C or F."}


def test_numpy_docstring_parameters() -> None:
    def weather(city: str, unit: str = "C") -> str:
        """Get the weather.

        Parameters
        ----------
        city : str
            The city name.
        unit : str, optional
            C or F.

        Returns
        -------
        str
            The forecast.
        """
        return city

    made = tool(weather)
    assert made.description == "Get the weather."
    assert _descriptions(weather) == {"city": "The city name.", "unit": "C or F."}


# ------------------------------------------------------------------ Agent[Deps, Out]


def test_agent_generic_parameters_reach_the_type_checker(tmp_path: Path) -> None:
    from mypy import api

    source = tmp_path / "typed.py"
    source.write_text(
        textwrap.dedent(
            """
            from dataclasses import dataclass
            from pydantic import BaseModel
            from helikon import Agent, RunContext
            from helikon.testing import MockModel

            @dataclass
            class Deps:
                user: str

            class City(BaseModel):
                name: str

            agent: Agent[Deps, City] = Agent(name="a", model=MockModel([]), output_type=City)
            result = agent.run_sync("hi", RunContext.ephemeral(Deps("ada")))
            reveal_type(result.final_output)
            agent.run_sync("hi", RunContext.ephemeral(42))
            plain = Agent(name="b", model="openai:gpt-5-mini")
            reveal_type(plain)
            """
        )
    )
    out, _, _ = api.run([str(source), "--no-incremental", "--cache-dir=/dev/null",
                         "--config-file=/dev/null", "--ignore-missing-imports"])
    assert 'Revealed type is "typed.City"' in out
    assert "Argument 1 to \"ephemeral\" of \"RunContext\" has incompatible type" in out or (
        'Argument 2 to "run_sync" of "Agent" has incompatible type "RunContext[int]"' in out
    ), out
    assert 'Revealed type is "helikon.core.agent.Agent[Any, Any]"' in out
