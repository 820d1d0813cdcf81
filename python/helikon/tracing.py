"""OpenTelemetry spans for agent runs, following the GenAI semantic conventions.

helikon emits spans through ``opentelemetry-api`` only; the exporter, processor and backend
are yours (``pip install 'helikon[otel]'`` brings the API; add the SDK and an exporter). The
trace tree of a run is::

    invoke_agent {agent}            gen_ai.operation.name=invoke_agent, gen_ai.agent.name,
    │                               session.id, user.id, tags  (from TracerHandle)
    └── agent.turn                  helikon.turn
        ├── chat {model}            gen_ai.operation.name=chat, gen_ai.provider.name,
        │                           gen_ai.request.model, gen_ai.usage.input_tokens,
        │                           gen_ai.usage.output_tokens, gen_ai.response.finish_reasons,
        │                           gen_ai.response.model, gen_ai.response.id (when named),
        │                           gen_ai.usage.cache_read.input_tokens,
        │                           gen_ai.usage.cache_creation.input_tokens (when not 0)
        └── execute_tool {tool}     gen_ai.operation.name=execute_tool, gen_ai.tool.name,
                                    gen_ai.tool.call.id, error.type (on failure); span
                                    events a tool reports (``network_access``: helikon.host,
                                    .port, .verdict, .rule, .reason, .address, .protocol)

When the API is not installed or no tracer provider has been set, nothing is created: the
cost is one check per run. Spans never carry message or tool content, so no secret reaches
a span attribute.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["TracerHandle"]

try:  # the otel extra
    from opentelemetry import trace as _otel
    from opentelemetry.trace import Status, StatusCode
except ImportError:  # pragma: no cover - exercised only without the extra
    _otel = None  # type: ignore[assignment]

_SCOPE = "helikon"


@dataclass(frozen=True, slots=True)
class TracerHandle:
    """Run-scoped trace attributes: ``session_id``, ``user_id`` and ``tags``.

    Example:
        >>> h = TracerHandle().with_session_id("demo").with_tag("prod")
        >>> (h.session_id, h.tags)
        ('demo', ('prod',))
    """

    session_id: str | None = None
    user_id: str | None = None
    tags: tuple[str, ...] = field(default_factory=tuple)

    def with_session_id(self, session_id: str) -> TracerHandle:
        """A copy with ``session.id`` set."""
        return replace(self, session_id=session_id)

    def with_user_id(self, user_id: str) -> TracerHandle:
        """A copy with ``user.id`` set."""
        return replace(self, user_id=user_id)

    def with_tag(self, tag: str) -> TracerHandle:
        """A copy with one more tag."""
        return replace(self, tags=(*self.tags, tag))

    def with_tags(self, tags: Sequence[str]) -> TracerHandle:
        """A copy with ``tags`` replacing the current ones."""
        return replace(self, tags=tuple(tags))


def _enabled() -> bool:
    if _otel is None:
        return False
    return not isinstance(_otel.get_tracer_provider(), _otel.ProxyTracerProvider)


def _chat_attributes(provider: str, model: str) -> dict[str, Any]:
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "gen_ai.request.model": model,
    }


def chat_span(provider: str, model: str) -> Any:
    """Open a ``chat`` span under the current context (on the durable path: the model
    activity's), or return ``None`` when tracing is off; end it with
    :meth:`RunSpans.end_chat_turn`."""
    if not _enabled():
        return None
    assert _otel is not None
    return _otel.get_tracer(_SCOPE).start_span(
        f"chat {model}", attributes=_chat_attributes(provider, model)
    )


class RunSpans:
    """The spans of one agent run (internal to the loop driver)."""

    __slots__ = ("_root", "_tracer", "_turn")

    def __init__(self, agent: str, handle: TracerHandle, parent: RunSpans | None) -> None:
        assert _otel is not None
        self._tracer = _otel.get_tracer(_SCOPE)
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": agent,
        }
        if handle.session_id:
            attrs["session.id"] = handle.session_id
        if handle.user_id:
            attrs["user.id"] = handle.user_id
        if handle.tags:
            attrs["tags"] = list(handle.tags)
        ctx = None if parent is None else parent._context()
        self._root = self._tracer.start_span(f"invoke_agent {agent}", context=ctx, attributes=attrs)
        self._turn: Any = None

    @classmethod
    def start(
        cls, agent: str, handle: TracerHandle, parent: RunSpans | None = None
    ) -> RunSpans | None:
        """Open the run span, or return ``None`` when tracing is off."""
        return cls(agent, handle, parent) if _enabled() else None

    def _context(self) -> Any:
        assert _otel is not None
        return _otel.set_span_in_context(self._turn or self._root)

    def turn(self, turn: int) -> None:
        """End the previous turn span and open ``agent.turn`` for ``turn``."""
        if self._turn is not None:
            self._turn.end()
        assert _otel is not None
        self._turn = self._tracer.start_span(
            "agent.turn",
            context=_otel.set_span_in_context(self._root),
            attributes={"helikon.turn": turn},
        )

    def chat(self, provider: str, model: str) -> Any:
        """Open a ``chat`` span under the current turn."""
        return self._tracer.start_span(
            f"chat {model}", context=self._context(), attributes=_chat_attributes(provider, model)
        )

    @staticmethod
    def end_chat_turn(span: Any, turn: Any, error: str | None) -> None:
        """:meth:`end_chat` from a settled turn (a ``TurnAccumulator``: its usage, finish,
        answering model and response id); ``error``: the failure's type name, if any."""
        usage = turn.usage
        RunSpans.end_chat(
            span,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            finish=turn.finish_raw or turn.finish.value,
            error=error,
            response_model=turn.model,
            response_id=turn.response_id,
            cache_read_tokens=usage.cached_input_tokens,
            cache_write_tokens=usage.cache_write_input_tokens,
        )

    @staticmethod
    def end_chat(
        span: Any,
        *,
        input_tokens: int,
        output_tokens: int,
        finish: str | None,
        error: str | None,
        response_model: str | None = None,
        response_id: str | None = None,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
    ) -> None:
        """Record usage (input tokens include the prompt-cache reads and writes, also set
        apart when not zero), finish reason, the answering model and the response id (or
        the error) and end a chat span."""
        span.set_attribute("gen_ai.usage.input_tokens", input_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", output_tokens)
        if cache_read_tokens:
            span.set_attribute("gen_ai.usage.cache_read.input_tokens", cache_read_tokens)
        if cache_write_tokens:
            span.set_attribute("gen_ai.usage.cache_creation.input_tokens", cache_write_tokens)
        if finish is not None:
            span.set_attribute("gen_ai.response.finish_reasons", [finish])
        if response_model is not None:
            span.set_attribute("gen_ai.response.model", response_model)
        if response_id is not None:
            span.set_attribute("gen_ai.response.id", response_id)
        _finish(span, error)

    def tool(self, name: str, call_id: str) -> Any:
        """Open an ``execute_tool`` span under the current turn."""
        return self._tracer.start_span(
            f"execute_tool {name}",
            context=self._context(),
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": name,
                "gen_ai.tool.call.id": call_id,
            },
        )

    @staticmethod
    def tool_events(span: Any, events: Sequence[Any]) -> None:
        """Record a tool's reported events (e.g. ``network_access``) as span events.

        Attributes are the event's scalar fields under ``helikon.*`` (host, port, verdict,
        rule, reason, address, protocol); nothing from the tool's output.
        """
        for event in events:
            attrs = {
                f"helikon.{k}": v
                for k, v in event.model_dump(exclude={"type", "call_id"}).items()
                if isinstance(v, str | int | float | bool)
            }
            span.add_event(str(getattr(event, "type", "event")), attributes=attrs)

    @staticmethod
    def end_tool(span: Any, error: str | None) -> None:
        """End an ``execute_tool`` span, marking an error type if the call failed."""
        _finish(span, error)

    def end(self, error: str | None = None) -> None:
        """End the open turn and the run span."""
        if self._turn is not None:
            self._turn.end()
            self._turn = None
        _finish(self._root, error)


def _finish(span: Any, error: str | None) -> None:
    if error is not None:
        span.set_attribute("error.type", error)
        span.set_status(Status(StatusCode.ERROR, error))
    span.end()
