"""The loop driver: runs the side effects between pure transitions.

The state machine itself is Rust (``helikon._native.transition``): given the state and the
latest input it returns the next state, the events to emit and the next action. This module
does what the machine asks — call the model, run tools, hand off — and feeds the outcome
back. Python owns every message body: per turn only the turn's own items cross the native
boundary, never the whole conversation, so a run is O(turns), not O(turns²).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from helikon import _native
from helikon.core.context import RunConfig, RunContext, ToolContext
from helikon.core.events import (
    AgentEvent,
    AgentUpdated,
    HandoffItem,
    RunFailed,
    RunStarted,
    event_adapter,
)
from helikon.core.items import (
    AssistantMessage,
    Item,
    SystemMessage,
    TextPart,
    ToolCall,
    ToolResult,
    item_adapter,
    text_of,
)
from helikon.core.model import JsonSchemaFormat, ModelRequest, ToolDef
from helikon.core.tool import Tool
from helikon.core.turn import TurnAccumulator
from helikon.core.usage import Usage
from helikon.errors import (
    AgentError,
    AgentOther,
    Cancelled,
    InvalidArgs,
    MaxAgentDepthExceeded,
    ModelError,
    RunTimeout,
    ToolError,
)

if TYPE_CHECKING:
    from helikon.core.agent import Agent

__all__ = ["run_agent"]

_TRANSFER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {},
    "additionalProperties": False,
}


class _Stop(Exception):
    """Internal: the run ends with this agent error."""

    def __init__(self, error: AgentError) -> None:
        self.error = error


def _dump(items: list[Item]) -> list[dict[str, Any]]:
    return [i.model_dump(mode="json", exclude_none=True) for i in items]


class _Run:
    """One agent's loop within a run (a handoff starts a new ``_Run`` for the target)."""

    def __init__(self, agent: Agent, ctx: RunContext[Any], config: RunConfig, token: Any) -> None:
        self.agent = agent
        self.ctx = ctx
        self.config = config
        self.token = token
        self.tools: dict[str, Tool] = {t.name: t for t in agent.tools}
        self.handoffs = {h.tool_name: h for h in agent.handoff_specs}
        self.native_config = agent.native_config(config.max_turns)
        self.usage = Usage()
        self.invalid_args_seen: set[str] = set()

    # ----------------------------------------------------------------- model turn

    def _request(self, conversation: list[Item], plan: dict[str, Any]) -> ModelRequest:
        agent = self.agent
        settings = agent.model_settings
        rf = plan.get("response_format", "unchanged")
        if isinstance(rf, dict) and agent.output_type is not None:
            ot = agent.output_type
            settings = settings.merged(
                response_format=JsonSchemaFormat(name=ot.name, schema=ot.schema, strict=ot.strict)
            )
        if plan.get("clear_tool_choice"):
            settings = settings.merged(tool_choice=None)
        tools: list[ToolDef] = []
        for name in plan.get("tools", ()):
            t = self.tools.get(name)
            if t is not None:
                tools.append(ToolDef(t.name, t.description, t.parameters))
            elif name in self.handoffs:
                h = self.handoffs[name]
                tools.append(ToolDef(name, h.description, dict(_TRANSFER_SCHEMA)))
        if not tools and settings.tool_choice is not None:
            settings = settings.merged(tool_choice=None)
        return ModelRequest(messages=list(conversation), tools=tools, settings=settings)

    async def _model_turn(
        self, request: ModelRequest, acc: TurnAccumulator
    ) -> AsyncIterator[AgentEvent]:
        stream = self.agent.model.invoke(request, self.token)
        try:
            async for ev in stream:
                acc.add(ev)
                if ev.type in ("token_delta", "reasoning_delta", "tool_call_delta"):
                    yield ev
                if self.token.cancelled:
                    break
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()

    # ----------------------------------------------------------------- tools

    async def _call_tool(
        self, call: dict[str, Any], sem: asyncio.Semaphore | None
    ) -> dict[str, Any]:
        call_id, name = call["call_id"], call["name"]
        t = self.tools.get(name)
        if t is None:
            return {"call_id": call_id, "error": f"unknown tool: {name}"}
        tctx = ToolContext(
            user_ctx=self.ctx.user_ctx,
            state=self.ctx.state,
            cancel=self.token,
            call_id=call_id,
            agent_name=self.agent.name,
            agent_depth=self.ctx.agent_depth,
            max_agent_depth=self.config.max_agent_depth,
        )
        try:
            if sem is None:
                out = await t.invoke(tctx, call.get("args"))
            else:
                async with sem:
                    out = await t.invoke(tctx, call.get("args"))
        except InvalidArgs as exc:
            if name in self.invalid_args_seen:
                raise _Stop(
                    AgentOther(
                        f"tool {name!r} got invalid arguments again after the errors were fed "
                        f"back once: {'; '.join(exc.schema_errors)}"
                    )
                ) from None
            self.invalid_args_seen.add(name)
            return {"call_id": call_id, "error": str(exc)}
        except ToolError as exc:
            return {"call_id": call_id, "error": str(exc)}
        except Exception as exc:  # a third-party Tool implementation raised
            return {"call_id": call_id, "error": f"{type(exc).__name__}: {exc}"}
        return {
            "call_id": call_id,
            "ok": [p.model_dump(mode="json", exclude_none=True) for p in out.content],
        }

    async def _run_tools(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        limit = self.config.parallel_tool_call_limit
        sem = asyncio.Semaphore(limit) if limit is not None and limit < len(calls) else None
        if len(calls) == 1:
            work: Any = self._call_tool(calls[0], sem)
            gathered = asyncio.ensure_future(work)
        else:
            gathered = asyncio.gather(*(self._call_tool(c, sem) for c in calls))
        waiter = asyncio.ensure_future(self.token.wait())
        try:
            done, _ = await asyncio.wait({gathered, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        if gathered not in done:
            gathered.cancel()
            raise _Stop(self._cancel_error())
        result = gathered.result()
        return [result] if len(calls) == 1 else list(result)

    def _cancel_error(self) -> AgentError:
        if self.token.reason == "timeout" and self.config.timeout is not None:
            return RunTimeout(self.config.timeout)
        return Cancelled()

    # ----------------------------------------------------------------- the loop

    async def drive(self, conversation: list[Item]) -> AsyncIterator[AgentEvent]:
        """Drive this agent's loop over ``conversation`` (mutated in place)."""
        state_json: str | None = None
        outcome = self._transition(state_json, '"start"', "[]")
        while True:
            state = outcome["next_state"]
            state_json = json.dumps(state)
            self.usage = Usage.model_validate(state.get("usage") or {})
            for raw in outcome["events"]:
                yield event_adapter.validate_python(raw)
            for appended in outcome.get("conversation_appends") or ():
                conversation.append(item_adapter.validate_python(appended))
            action = outcome["next_action"]
            kind = action["action"]
            if kind == "Terminate":
                return
            if self.token.cancelled:
                raise _Stop(self._cancel_error())
            if kind == "CallModel":
                request = self._request(conversation, action["request"])
                acc = TurnAccumulator()
                try:
                    async for ev in self._model_turn(request, acc):
                        yield ev
                except ModelError as exc:
                    self.usage = self.usage + acc.usage
                    raise _Stop(AgentOther(f"model error ({exc.kind}): {exc}")) from exc
                if self.token.cancelled:
                    self.usage = self.usage + acc.usage
                    raise _Stop(self._cancel_error())
                items = acc.items(self.agent.name)
                conversation.extend(items)
                response: dict[str, Any] = {
                    "items": _dump(items),
                    "usage": acc.usage.model_dump(),
                    "finish_reason": acc.finish.value,
                }
                if state.get("state") in ("Finalizing", "RepairingOutput"):
                    response["validation"] = self._validate(items)
                conv = "[]"
                if self.handoffs and any(
                    isinstance(i, ToolCall) and i.name in self.handoffs for i in items
                ):
                    conv = json.dumps(_dump(conversation[: -len(items)] if items else conversation))
                outcome = self._transition(
                    state_json, json.dumps({"model_response": response}), conv
                )
            elif kind == "ExecuteTools":
                calls = action["calls"]
                results = await self._run_tools(calls)
                for r in results:
                    if "ok" in r:
                        content = r["ok"]
                        conversation.append(
                            ToolResult.model_validate({"call_id": r["call_id"], "content": content})
                        )
                    else:
                        conversation.append(
                            ToolResult(
                                call_id=r["call_id"],
                                content=[TextPart(text=r["error"])],
                                is_error=True,
                            )
                        )
                outcome = self._transition(state_json, json.dumps({"tool_results": results}), "[]")
            elif kind == "Handoff":
                async for ev in self._handoff(state, action["target"]):
                    yield ev
                return
            else:  # pragma: no cover - the native machine only emits the four actions
                raise _Stop(AgentOther(f"internal: unknown next action {kind!r}"))

    def _validate(self, items: list[Item]) -> dict[str, Any] | None:
        ot = self.agent.output_type
        if ot is None:
            return None
        if any(isinstance(i, ToolCall) for i in items):
            return None  # the machine reports the tool-call violation itself
        last = next((i for i in reversed(items) if isinstance(i, AssistantMessage)), None)
        _, errors = ot.validate_text(text_of(last.content) if last else "")
        return {"errors": errors}

    def _transition(self, state_json: str | None, input_json: str, conv: str) -> dict[str, Any]:
        out: dict[str, Any] = json.loads(
            _native.transition(state_json, input_json, self.native_config, conv)
        )
        return out

    async def _handoff(self, state: dict[str, Any], target_name: str) -> AsyncIterator[AgentEvent]:
        target = self.agent.handoff_target(target_name)
        depth = self.ctx.agent_depth + 1
        if depth >= self.config.max_agent_depth:
            raise _Stop(MaxAgentDepthExceeded(self.config.max_agent_depth))
        yield HandoffItem.model_validate({"from": self.agent.name, "to": target.name})
        yield AgentUpdated(agent=target.name)
        transcript = [item_adapter.validate_python(i) for i in state.get("transcript", [])]
        conversation = _with_instructions(target, self.ctx, transcript)
        sub = _Run(target, self.ctx.nested(), self.config, self.token)
        base = Usage.model_validate(state.get("usage") or {})
        try:
            async for ev in sub.drive(conversation):
                if ev.type == "run_completed":
                    yield ev.model_copy(update={"usage": base + ev.usage})
                    continue
                if ev.type == "run_failed":
                    yield ev.model_copy(update={"usage": base + sub.usage})
                    continue
                yield ev
        except _Stop:
            self.usage = base + sub.usage
            raise
        self.usage = base + sub.usage


def _with_instructions(agent: Agent, ctx: RunContext[Any], items: list[Item]) -> list[Item]:
    text = agent.render_instructions(ctx)
    head: list[Item] = [SystemMessage(content=[TextPart(text=text)])] if text else []
    return head + items


async def run_agent(
    agent: Agent, input_items: list[Item], ctx: RunContext[Any], config: RunConfig
) -> AsyncIterator[AgentEvent]:
    """Yield the run's events: ``RunStarted`` first, exactly one terminal event last.

    Failures never raise out of the stream: they arrive as ``RunFailed``. Cancellation and
    ``config.timeout`` are best-effort: a terminal event already emitted wins.
    """
    yield RunStarted(agent=agent.name)
    token = ctx.cancel.child()
    timer: asyncio.TimerHandle | None = None
    if config.timeout is not None:
        timer = asyncio.get_running_loop().call_later(config.timeout, token.cancel, "timeout")
    run = _Run(agent, ctx, config, token)
    try:
        conversation = _with_instructions(agent, ctx, list(input_items))
        async for ev in run.drive(conversation):
            yield ev
    except _Stop as stop:
        yield RunFailed(error=stop.error.to_dict(), usage=run.usage)
    except Exception as exc:  # an agent bug must still end the stream with RunFailed
        yield RunFailed(
            error=AgentOther(f"internal error: {type(exc).__name__}: {exc}").to_dict(),
            usage=run.usage,
        )
    finally:
        if timer is not None:
            timer.cancel()
