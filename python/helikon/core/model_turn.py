"""One model turn of an agent's loop: the request the machine's plan asks for, and the
model's streamed answer.

:class:`ModelTurns` belongs to one agent's loop (the driver's ``_Run``). It builds each
turn's :class:`~helikon.core.model.ModelRequest` from the conversation and the
``CallModel`` step's plan (the tools offered, the response format, a cleared tool choice;
plans repeat, so their tool lists and settings are cached while the agent's settings and
output type stay the same objects), and streams the model's answer into a
:class:`~helikon.core.turn.TurnAccumulator`, forwarding the deltas and recording the chat
span.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from helikon.core.driven import DrivenAgent
from helikon.core.events import AgentEvent
from helikon.core.handoff import TRANSFER_SCHEMA, HandoffSpec
from helikon.core.items import Item, SystemMessage, TextPart
from helikon.core.loop_core import request_settings, turn_plan
from helikon.core.model import CALLING_AGENT, ModelRequest, ModelSettings, ToolDef
from helikon.core.retries import output_tool_def
from helikon.core.tool import Tool
from helikon.core.turn import TurnAccumulator
from helikon.errors import ModelError
from helikon.tracing import RunSpans

__all__ = ["ModelTurns"]


class ModelTurns:
    """Requests and answers of one agent's model turns (see the module doc)."""

    def __init__(
        self,
        agent: DrivenAgent,
        tools: dict[str, Tool],
        handoffs: dict[str, HandoffSpec],
        spans: RunSpans | None,
        token: Any,
    ) -> None:
        self.agent = agent
        self.tools = tools
        #: the agent's own tool names (the native config's); others in ``tools`` came
        #: from a tool source during the run (see :mod:`helikon.core.live_tools`)
        self.configured = frozenset(t.name for t in agent.tools)
        self.handoffs = handoffs
        self.spans = spans
        self.token = token
        self._requests: dict[str, tuple[Any, Any, list[ToolDef], ModelSettings]] = {}

    def request(
        self,
        conversation: list[Item],
        plan_json: str,
        injected: list[str],
        output_tool: str | None = None,
    ) -> ModelRequest:
        """The request for ``conversation`` under the plan ``plan_json``; ``injected``
        texts (from ``OnTurnStart`` hooks) follow as system messages, this turn only;
        ``output_tool`` is the name of the structured-output tool when the agent's output
        mode uses one (offered when the plan names it)."""
        agent = self.agent
        cached = self._requests.get(plan_json)
        if (
            cached is None
            or cached[0] is not agent.model_settings
            or cached[1] is not agent.output_type
        ):
            tools, settings = self._plan_request(plan_json, output_tool)
            cached = (agent.model_settings, agent.output_type, tools, settings)
            self._requests[plan_json] = cached
        messages = list(conversation)
        messages.extend(SystemMessage(content=[TextPart(text=t)]) for t in injected if t.strip())
        return ModelRequest(messages=messages, tools=list(cached[2]), settings=cached[3])

    def retool(self) -> None:
        """``tools`` changed (a tool source's list did): plans are built afresh."""
        self._requests.clear()

    def _plan_request(
        self, plan_json: str, output_tool: str | None
    ) -> tuple[list[ToolDef], ModelSettings]:
        plan = turn_plan(plan_json)
        tools: list[ToolDef] = []
        for name in plan.tools:
            t = self.tools.get(name)
            if t is not None:
                tools.append(ToolDef(t.name, t.description, t.parameters))
            elif name in self.handoffs:
                h = self.handoffs[name]
                tools.append(ToolDef(name, h.description, dict(TRANSFER_SCHEMA)))
            elif self.agent.output_type is not None and name == output_tool:
                tools.append(output_tool_def(self.agent.output_type, name))
        # tools a source added during the run, on every turn that offers the agent's tools
        if not self.configured.issuperset(self.tools) and any(
            name in self.configured for name in plan.tools
        ):
            tools.extend(
                ToolDef(t.name, t.description, t.parameters)
                for name, t in self.tools.items()
                if name not in self.configured
            )
        settings = request_settings(
            self.agent.model_settings,
            self.agent.output_type,
            response_format=plan.response_format,
            clear_tool_choice=plan.clear_tool_choice,
            has_tools=bool(tools),
        )
        return tools, settings

    async def stream(
        self, request: ModelRequest, acc: TurnAccumulator
    ) -> AsyncIterator[AgentEvent]:
        """Invoke the model, adding every event to ``acc`` and yielding the deltas; stops at
        cancellation.

        Raises:
            ModelError: the model call failed (what was received is in ``acc``).
        """
        model = self.agent.model
        span = self.spans.chat(model.provider, model.model) if self.spans is not None else None
        error: str | None = None
        caller = CALLING_AGENT.set(self.agent.name)
        try:
            stream = model.invoke(request, self.token)
        finally:
            CALLING_AGENT.reset(caller)
        try:
            async for ev in stream:
                acc.add(ev)
                if ev.type in ("token_delta", "reasoning_delta", "tool_call_delta"):
                    yield ev
                if self.token.cancelled:
                    break
        except ModelError as exc:
            error = type(exc).__name__
            raise
        finally:
            aclose = getattr(stream, "aclose", None)
            if aclose is not None:
                await aclose()
            if span is not None:
                RunSpans.end_chat_turn(span, acc, error)
