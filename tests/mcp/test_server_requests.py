"""Requests from the server: sampling under the permission pipeline, elicitation through the
approval handler, roots."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

import helikon.testing as testing
from helikon import Agent, Approve, Deny, RunState
from helikon.core.context import RunConfig, RunContext
from helikon.core.events import ToolOutputItem
from helikon.core.permissions import (
    AllowRule,
    ApprovalAllow,
    ApprovalDeny,
    DenyRule,
    PermissionAllow,
    PermissionDeny,
    PermissionMode,
)
from helikon.core.usage import Usage
from helikon.core.usage_limits import UsageLimits
from helikon.errors import ConfigError, RunError, RunInterruptedError, ToolOther
from helikon.runtimes.runner import Runner
from helikon.testing import Call, MockModel, Text
from helikon.tools import ReadTool, Sandbox
from tests.mcp._support import bounded, by_name, stdio_handle, tool_ctx


def _sampler() -> MockModel:
    return MockModel([[Text("short answer"), testing.Usage(7, 2)] for _ in range(4)])


async def _run(handle: Any, tool: str, ctx: RunContext[Any] | None = None) -> tuple[bool, str]:
    agent = Agent(
        name="a",
        model=MockModel([[Call("c1", tool, {"text": "what is 2+2?"})], [Text("ok")]]),
        tools=handle.tools(),
    )
    result = await bounded(agent.run("go", ctx) if ctx is not None else agent.run("go"))
    (out,) = [e.item for e in result.events if isinstance(e, ToolOutputItem)]
    return out.is_error, "".join(getattr(p, "text", "") for p in out.content)


async def test_sampling_is_answered_by_the_named_model_and_its_usage_counted() -> None:
    sampler = _sampler()
    async with stdio_handle("asks", sampling_model=sampler) as h:
        error, text = await _run(h, "ask_llm")
        assert (error, text) == (False, "mock: short answer")
        assert h.sampling_usage == Usage(input_tokens=7, output_tokens=2, total_tokens=9)
    request = sampler.requests[0]  # type: ignore[attr-defined]
    assert [type(m).__name__ for m in request.messages] == ["SystemMessage", "UserMessage"]
    assert request.messages[1].content[0].text == "what is 2+2?"
    assert request.settings.max_output_tokens == 50


class _Budget:
    async def check(self, ctx: Any, tool: str, args: Any) -> PermissionDeny | PermissionAllow:
        if tool == "mcp_sampling" and args["max_tokens"] > 10:
            return PermissionDeny(f"over budget: {args['max_tokens']} tokens")
        return PermissionAllow()


async def test_sampling_is_refused_by_the_calling_runs_permissions() -> None:
    sampler = _sampler()
    base = RunContext.ephemeral()
    refusals = {
        "MCP tool 'ask_llm' failed: refused: sampling refused: "
        "DenyRule.tool('mcp_sampling') matched": base.with_deny_rules(
            [DenyRule.tool("mcp_sampling")]
        ),
        "MCP tool 'ask_llm' failed: refused: sampling refused: "
        "mode dont_ask does not allow mcp_sampling (side_effect)": base.with_permission_mode(
            PermissionMode.DONT_ASK
        ).with_allow_rules([AllowRule.tool("ask_llm")]),
        "MCP tool 'ask_llm' failed: refused: sampling refused: over budget: 50 tokens": (
            base.with_permission_policy(_Budget())
        ),
    }
    async with stdio_handle("asks", sampling_model=sampler) as h:
        for expected, ctx in refusals.items():
            assert await _run(h, "ask_llm", ctx) == (True, expected)
    assert sampler.requests == []  # type: ignore[attr-defined]


async def test_with_sampling_model_none_sampling_is_not_offered() -> None:
    async with stdio_handle("asks", sampling_model=None) as h:
        error, text = await _run(h, "ask_llm")
    assert error
    assert "refused:" in text


async def test_by_default_the_calling_agents_model_samples_and_the_run_counts_its_usage() -> None:
    model = MockModel(
        [
            [Call("c1", "ask_llm", {"text": "what is 2+2?"}), testing.Usage(10, 3)],
            [Text("four"), testing.Usage(7, 2)],  # the server's sampling request
            [Text("ok"), testing.Usage(20, 4)],
        ]
    )
    async with stdio_handle("asks") as h:
        agent = Agent(name="a", model=model, tools=h.tools())
        result = await bounded(agent.run("go"))
        assert h.sampling_usage == Usage(input_tokens=7, output_tokens=2, total_tokens=9)
    (out,) = [e.item for e in result.events if isinstance(e, ToolOutputItem)]
    assert out.content[0].text == "mock: four"  # type: ignore[union-attr]
    assert result.final_output == "ok"
    assert result.usage == Usage(input_tokens=37, output_tokens=9, total_tokens=46, requests=3)
    sampled = model.requests[1]
    assert [type(m).__name__ for m in sampled.messages] == ["SystemMessage", "UserMessage"]
    assert sampled.messages[1].content[0].text == "what is 2+2?"
    assert sampled.tools == []


async def test_default_sampling_outside_a_run_is_refused_naming_the_fix() -> None:
    async with stdio_handle("asks") as h:
        error, text = await _outside_run(h)
    assert error
    assert text == (
        "MCP tool 'ask_llm' failed: refused: sampling refused: no agent run is calling this "
        "server, so there is no agent model to answer it (pass sampling_model=... to the handle)"
    )


async def _outside_run(h: Any) -> tuple[bool, str]:
    try:
        out = await bounded(by_name(h)["ask_llm"].invoke(tool_ctx(), {"text": "hi"}))
    except ToolOther as exc:
        return True, str(exc)
    return False, str(out.value)


async def test_sampling_counts_against_the_runs_usage_limits() -> None:
    model = MockModel([[Call("c1", "ask_llm", {"text": "q"}), testing.Usage(10, 3)]])
    async with stdio_handle("asks") as h:
        agent = Agent(name="a", model=model, tools=h.tools())
        config = RunConfig(usage_limits=UsageLimits(request_limit=1))
        with pytest.raises(RunError) as err:  # the run's next turn is over the limit too
            await bounded(agent.run("go", run_config=config))
    (out,) = [e.item for e in err.value.events if isinstance(e, ToolOutputItem)]
    limit = (
        "usage limit request_limit=1 reached: model request 2 was not sent (the run and its "
        "sub-agents); raise UsageLimits(request_limit=...) to allow more"
    )
    assert out.content[0].text == (  # type: ignore[union-attr]
        f"MCP tool 'ask_llm' failed: refused: sampling refused: {limit}"
    )
    assert len(model.requests) == 1  # the sampling request never reached the model
    assert str(err.value) == f"run failed: {limit}"


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        (
            {"sampling_model": "openai:gpt-5"},
            "McpServerHandle(sampling_model=...) must be a Model, 'agent' (the calling agent's "
            "model) or None (no sampling), got 'openai:gpt-5'",
        ),
        (
            {"roots": "/srv/data"},
            "McpServerHandle(roots=...) must be a list of directories, 'workspace' (the "
            "calling agent's) or None (no roots), got '/srv/data'; pass roots=['/srv/data']",
        ),
    ],
)
def test_a_bad_sampling_model_or_roots_is_a_config_error(arg: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as err:
        stdio_handle("asks", **arg)
    assert str(err.value) == message


class _Approver:
    def __init__(self, allow: bool) -> None:
        self.allow = allow
        self.seen: list[tuple[str, str, Any]] = []

    async def decide(self, tool: str, prompt: str, args: Any) -> ApprovalAllow | ApprovalDeny:
        self.seen.append((tool, prompt, args))
        return ApprovalAllow() if self.allow else ApprovalDeny("no thanks")


async def test_elicitation_goes_to_the_approval_handler() -> None:
    approver = _Approver(allow=True)
    async with stdio_handle("asks") as h:
        ctx = RunContext.ephemeral().with_approval_handler(approver)
        assert await _run(h, "ask_user", ctx) == (False, "accept {'name': 'Ada'}")
        # a required field without a default cannot be filled in by an approval: declined
        assert await _run(h, "ask_user_required", ctx) == (False, "decline None")
        denied = RunContext.ephemeral().with_approval_handler(_Approver(allow=False))
        assert await _run(h, "ask_user", denied) == (False, "decline None")
        # no handler: declined
        assert await _run(h, "ask_user") == (False, "decline None")
    tool, prompt, args = approver.seen[0]
    assert (tool, prompt) == ("mcp_elicitation", "Your name?")
    assert args["requested_schema"]["required"] == ["name"]


async def test_roots_are_declared_listed_and_changed(tmp_path: Path) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    async with stdio_handle("asks", roots=[first]) as h:
        t = by_name(h)
        out = await bounded(t["ask_roots"].invoke(tool_ctx(), {}))
        assert out.value == f"one={first.resolve().as_uri()}"
        await bounded(h.set_roots([first, second]))
        out = await bounded(t["ask_roots"].invoke(tool_ctx(), {}))
        assert out.value == f"one={first.resolve().as_uri()} two={second.resolve().as_uri()}"
        for _ in range(200):  # the notification is processed after the request before it
            seen = await bounded(t["roots_seen"].invoke(tool_ctx(), {}))
            if seen.value != "0":
                break
            await asyncio.sleep(0.01)
        assert seen.value == "1"
        assert h.roots == [first, second]


async def test_roots_default_to_the_calling_agents_workspace(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    sandbox = Sandbox.open(work)
    async with stdio_handle("asks", cwd=home) as h:
        t = by_name(h)
        # before any agent called: the server's working directory
        out = await bounded(t["ask_roots"].invoke(tool_ctx(), {}))
        assert out.value == f"home={home.resolve().as_uri()}"
        assert h.roots == [home.resolve()]
        model = MockModel(
            [[Call("c1", "ask_roots", {})], [Call("c2", "roots_seen", {})], [Text("ok")]]
        )
        agent = Agent(name="a", model=model, tools=[ReadTool(sandbox), *h.tools()])
        result = await bounded(agent.run("go"))
        outs = [e.item for e in result.events if isinstance(e, ToolOutputItem)]
        texts = [o.content[0].text for o in outs]  # type: ignore[union-attr]
        assert texts == [f"work={sandbox.root.as_uri()}", "1"]  # told once, before the call
        # a later call outside a run keeps the workspace last seen; the same agent again
        # sends no second notification
        out = await bounded(t["ask_roots"].invoke(tool_ctx(), {}))
        assert out.value == f"work={sandbox.root.as_uri()}"
        again = MockModel([[Call("c1", "roots_seen", {})], [Text("ok")]])
        agent2 = Agent(name="b", model=again, tools=[ReadTool(sandbox), *h.tools()])
        result = await bounded(agent2.run("go"))
        outs = [e.item for e in result.events if isinstance(e, ToolOutputItem)]
        assert outs[0].content[0].text == "1"  # type: ignore[union-attr]


async def test_an_agent_without_a_sandbox_leaves_the_default_roots(tmp_path: Path) -> None:
    async with stdio_handle("asks", cwd=tmp_path) as h:
        error, text = await _run(h, "ask_roots")
    assert (error, text) == (False, f"{tmp_path.name}={tmp_path.resolve().as_uri()}")


async def test_with_roots_none_roots_list_is_refused() -> None:
    async with stdio_handle("asks", roots=None) as h:
        error, text = await _run(h, "ask_roots")
    assert error and "refused:" in text


async def test_with_approval_defer_an_elicitation_pauses_the_run_and_resumes_with_the_answer() -> (
    None
):
    defer = RunConfig(approval="defer")
    async with stdio_handle("asks") as h:
        agent = Agent(name="a", model=MockModel([[Call("c1", "ask_user", {})]]), tools=h.tools())
        with pytest.raises(RunInterruptedError) as err:
            await bounded(Runner().run(agent, "go", run_config=defer))
        state = RunState.from_json(err.value.state.to_json())
        assert [(p.call_id, p.tool, p.reason) for p in state.pending] == [
            ("c1", "ask_user", "mcp_elicitation: the MCP server asks: Your name?")
        ]
        model = MockModel([[Text("hello Ada")]])
        again = Agent(name="a", model=model, tools=h.tools())
        result = await bounded(Runner().resume(again, state, decisions={"c1": Approve()}))
        outs = [e.item for e in result.events if isinstance(e, ToolOutputItem)]
        assert [o.content[0].text for o in outs] == ["accept {'name': 'Ada'}"]  # type: ignore[union-attr]
        assert result.final_output == "hello Ada"
        # denied on resume: the call does not run again and the model reads the denial
        agent = Agent(name="a", model=MockModel([[Call("c1", "ask_user", {})]]), tools=h.tools())
        with pytest.raises(RunInterruptedError) as err:
            await bounded(Runner().run(agent, "go", run_config=defer))
        model = MockModel([[Text("ok")]])
        again = Agent(name="a", model=model, tools=h.tools())
        decisions = {"c1": Deny("not now")}
        result = await bounded(Runner().resume(again, err.value.state, decisions=decisions))
        assert result.final_output == "ok"
        last = model.requests[0].messages[-1]
        assert last.content[0].text == "approval denied: not now"  # type: ignore[union-attr]


async def test_without_defer_the_approval_handler_still_answers_elicitation() -> None:
    approver = _Approver(allow=True)
    async with stdio_handle("asks") as h:
        ctx = RunContext.ephemeral().with_approval_handler(approver)
        config = RunConfig(approval="inline")
        agent = Agent(
            name="a", model=MockModel([[Call("c1", "ask_user", {})], [Text("ok")]]), tools=h.tools()
        )
        result = await bounded(agent.run("go", ctx, run_config=config))
    outs = [e.item for e in result.events if isinstance(e, ToolOutputItem)]
    assert outs[0].content[0].text == "accept {'name': 'Ada'}"  # type: ignore[union-attr]
    assert [t for t, _, _ in approver.seen] == ["mcp_elicitation"]
