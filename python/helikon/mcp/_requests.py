"""Requests a server sends to the client: sampling, elicitation and roots.

Declaring a callback to the ``mcp`` package's ``ClientSession`` is what declares the
capability at ``initialize``, so a handle declares only what it can answer:

* ``sampling/createMessage`` (unless the handle's ``sampling_model`` is ``None``): the
  request is a call of the pseudo-tool ``<prefix>mcp_sampling`` (effect ``SIDE_EFFECT``,
  arguments the request's messages, system prompt and token limit) under the permission
  pipeline of the run whose tool call is in flight on this handle (deny rules, mode,
  policy, approval handler; outside a run, the default permissions, which allow). Allowed,
  it is answered by the named model, or with ``sampling_model="agent"`` (the default) by
  the calling agent's own model (refused when no run is calling). Its usage is added to
  :attr:`ServerRequests.sampling_usage` and, inside a run, to the run's usage (one request
  plus its tokens) and counted against the run's usage limits (a spent budget refuses it).
  Refused, the server gets an MCP error naming the reason.
* ``elicitation/create`` (always declared): in a run with ``RunConfig(approval="defer")``
  the tool call in flight waits for a person: the server's request is cancelled, the call
  pauses the run (its prompt ``<prefix>mcp_elicitation: the MCP server asks: <message>``),
  and on resume ``Approve()`` runs the call again, accepting the server's repeated request
  (content from the schema's defaults, as below) while ``Deny(reason)`` gives the model the
  denial without running it; a remembered answer for ``<prefix>mcp_elicitation`` is used
  too. Otherwise it is routed to the approval handler of the run in flight, as a call of
  ``<prefix>mcp_elicitation`` with the message and the requested schema (or URL). With no
  run or no handler it is declined. ``ApprovalAllow`` accepts:
  with content built from the requested schema's ``default`` values (a form with a required
  field that has no default is declined: an approval handler cannot fill it in);
  ``ApprovalDeny`` declines.
* ``roots/list`` (unless the handle's ``roots`` is ``None``): the directories of
  :class:`~helikon.mcp._roots.Roots` as ``file://`` URIs (by default the calling agent's
  workspace).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import mcp_types as types

from helikon.core.authorize import Deferred, authorize
from helikon.core.cancel import CancellationToken
from helikon.core.context import RunContext
from helikon.core.driver import calling_agent, calling_run_context
from helikon.core.items import AssistantMessage, SystemMessage, TextPart, UserMessage
from helikon.core.model import Model, ModelRequest, ModelSettings
from helikon.core.pause import CALLING_APPROVALS, Approvals
from helikon.core.permissions import ApprovalAllow, PermissionAllow, PermissionDeny
from helikon.core.tool import ToolEffect
from helikon.core.turn import TurnAccumulator
from helikon.core.usage import Usage
from helikon.core.usage_limits import UsageMeter, current_meter
from helikon.errors import UsageLimitExceeded
from helikon.mcp._roots import Roots, RootsSetting, root_uris

__all__ = ["AGENT_MODEL", "Caller", "ServerRequests", "calling"]

AGENT_MODEL = "agent"
"""``sampling_model=AGENT_MODEL``: the calling agent's own model answers sampling."""

SamplingModel = Model | Literal["agent"] | None


@dataclass(eq=False)
class Caller:
    """The run whose tool call is in flight on a handle: what server requests need of it."""

    run: RunContext[Any]
    agent: Any = None
    """The calling agent (its ``model`` samples; its tools' sandboxes are the roots)."""
    meter: UsageMeter | None = None
    approvals: Approvals | None = None
    """The run's pause/resume answers (``RunConfig(approval="defer")``)."""
    call_id: str = ""
    """The tool call in flight."""
    deferred: str | None = None
    """Set when an elicitation must wait for a person: the call then pauses the run."""

    @property
    def model(self) -> Model | None:
        """The calling agent's model."""
        model = getattr(self.agent, "model", None)
        return model if isinstance(model, Model) else None


def calling(call_id: str = "") -> Caller | None:
    """The calling run (read in the tool call's task), or ``None`` outside a run."""
    run = calling_run_context()
    if run is None:
        return None
    return Caller(run, calling_agent(), current_meter().get(), CALLING_APPROVALS.get(), call_id)


_REFUSED = -32600  # INVALID_REQUEST, what the package's own refusal uses


def _text(content: Any) -> str:
    blocks = content if isinstance(content, list) else [content]
    return "\n".join(b.text if isinstance(b, types.TextContent) else f"[{b.type}]" for b in blocks)


class ServerRequests:
    """The handle's answers to server requests (see the module docstring)."""

    def __init__(
        self,
        prefix: str | None,
        *,
        sampling_model: SamplingModel,
        roots: RootsSetting,
        default_root: Path | None = None,
    ) -> None:
        self.sampling_tool = f"{prefix or ''}mcp_sampling"
        self.elicitation_tool = f"{prefix or ''}mcp_elicitation"
        self.sampling_model = sampling_model
        self.roots = Roots(roots, default_root)
        self.sampling_usage = Usage()
        """Tokens the sampling model used for this handle's server, summed."""
        self.active: list[Caller] = []
        """Runs with a tool call in flight on the handle (the last one decides)."""

    def callbacks(self) -> dict[str, Any]:
        """Keyword arguments for ``ClientSession``: one per capability to declare."""
        out: dict[str, Any] = {"elicitation_callback": self._elicit}
        if self.sampling_model is not None:
            out["sampling_callback"] = self._sample
        if self.roots.offered:
            out["list_roots_callback"] = self._list_roots
        return out

    def _run(self) -> RunContext[Any]:
        return self.active[-1].run if self.active else RunContext.ephemeral()

    # ------------------------------------------------------------------ sampling

    async def _sample(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        caller = self.active[-1] if self.active else None
        model = self.sampling_model
        if model == AGENT_MODEL:
            model = caller.model if caller is not None else None
            if model is None:
                return _refused(
                    "no agent run is calling this server, so there is no agent model to "
                    "answer it (pass sampling_model=... to the handle)"
                )
        assert isinstance(model, Model)
        args = {
            "messages": [{"role": m.role, "text": _text(m.content)} for m in params.messages],
            "system_prompt": params.system_prompt,
            "max_tokens": params.max_tokens,
        }
        decision = await authorize(self._run(), self.sampling_tool, ToolEffect.SIDE_EFFECT, args)
        if not isinstance(decision, PermissionAllow):
            return _refused(decision.reason if isinstance(decision, PermissionDeny) else "deferred")
        meter = caller.meter if caller is not None else None
        try:
            if meter is not None:
                meter.before_request()
            acc = await _answer(model, params)
        except UsageLimitExceeded as exc:
            return _refused(str(exc))
        except Exception as exc:
            return types.ErrorData(
                code=_REFUSED, message=f"sampling failed: {type(exc).__name__}: {exc}"
            )
        self.sampling_usage = self.sampling_usage + acc.usage
        if meter is not None:
            meter.add_side(acc.usage + Usage(requests=1))
            try:
                meter.add_tokens(acc.usage)
            except UsageLimitExceeded as exc:
                return _refused(str(exc))
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="".join(acc.text)),
            model=str(getattr(model, "model", "") or type(model).__name__),
            stop_reason="maxTokens" if acc.finish.value == "length" else "endTurn",
        )

    # ------------------------------------------------------------------ elicitation

    async def _elicit(self, context: Any, params: Any) -> types.ElicitResult | types.ErrorData:
        ctx = self._run()
        caller = self.active[-1] if self.active else None
        schema = getattr(params, "requested_schema", None)
        approvals = caller.approvals if caller is not None else None
        answer: Any = None
        if approvals is not None and caller is not None and approvals.active:
            answer = approvals.answer(caller.call_id, self.elicitation_tool, params.message)
        if isinstance(answer, Deferred):  # approval="defer": the call waits for a person
            assert caller is not None
            caller.deferred = f"{self.elicitation_tool}: the MCP server asks: {params.message}"
            return types.ElicitResult(action="cancel")
        if answer is None:
            handler = ctx.permissions.approval_handler if self.active else None
            if handler is None:
                return types.ElicitResult(action="decline")
            args: dict[str, Any] = {"message": params.message}
            if schema is not None:
                args["requested_schema"] = schema
            if getattr(params, "url", None):
                args["url"] = params.url
            try:
                answer = await handler.decide(self.elicitation_tool, params.message, args)
            except Exception:  # fail closed
                return types.ElicitResult(action="decline")
        if not isinstance(answer, ApprovalAllow | PermissionAllow):
            return types.ElicitResult(action="decline")
        if schema is None:
            return types.ElicitResult(action="accept")
        content = _defaults(schema)
        if content is None:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content=content)

    # ------------------------------------------------------------------ roots

    async def _list_roots(self, context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=root_uris(self.roots.current()))


def _refused(reason: str) -> types.ErrorData:
    return types.ErrorData(code=_REFUSED, message=f"sampling refused: {reason}")


async def _answer(model: Model, params: types.CreateMessageRequestParams) -> TurnAccumulator:
    """The model's answer to a sampling request (its text, usage and finish)."""
    items: list[Any] = []
    if params.system_prompt:
        items.append(SystemMessage(content=[TextPart(text=params.system_prompt)]))
    for m in params.messages:
        part = TextPart(text=_text(m.content))
        items.append(
            AssistantMessage(content=[part])
            if m.role == "assistant"
            else UserMessage(content=[part])
        )
    settings = ModelSettings(temperature=params.temperature, max_output_tokens=params.max_tokens)
    acc = TurnAccumulator()
    async for event in model.invoke(
        ModelRequest(messages=items, settings=settings), CancellationToken()
    ):
        acc.add(event)
    return acc


def _defaults(schema: Any) -> dict[str, Any] | None:
    """The schema's property defaults, or ``None`` when a required one has none."""
    props = schema.get("properties", {}) if isinstance(schema, dict) else {}
    content = {k: v["default"] for k, v in props.items() if isinstance(v, dict) and "default" in v}
    required = schema.get("required", []) if isinstance(schema, dict) else []
    if any(r not in content for r in required):
        return None
    return content
