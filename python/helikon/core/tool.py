"""Tools: the :class:`Tool` protocol and the :func:`tool` decorator.

``@tool`` turns a plain (sync or async) function into a tool. The function name becomes the
tool name, the docstring's summary the description the model sees, and the parameters'
type hints the JSON Schema of its arguments (pydantic builds it). Per-argument descriptions
come from ``Annotated[T, Field(description=...)]``, else ``Annotated[T, "a description"]``,
else the docstring's ``Args:`` section (Google style) or ``:param name:`` lines (Sphinx style).
An optional first parameter annotated :class:`ToolContext` receives the run's tool context;
one annotated with the *run* context (``RunContext[Deps]``, as Pydantic AI writes it, or the
OpenAI Agents SDK's ``RunContextWrapper``) is refused with an error naming ``ToolContext``.

Arguments are validated before the function runs: invalid arguments never reach it; the
model gets an ``InvalidArgs`` result listing each problem instead.
"""

from __future__ import annotations

import asyncio
import enum
import functools
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import (
    Any,
    Protocol,
    get_args,
    get_origin,
    get_type_hints,
    overload,
    runtime_checkable,
)

import pydantic
import pydantic_core
from pydantic import BaseModel, ConfigDict
from pydantic.fields import FieldInfo

from helikon.core.context import RunContext, ToolContext
from helikon.core.docstrings import parse_docstring
from helikon.core.items import ContentPart, TextPart
from helikon.core.tool_args import schema_of, validate_args
from helikon.errors import ConfigError, ModelRetry, PeerSpellingError, ToolError, ToolOther

__all__ = ["FunctionTool", "NeedsApproval", "Tool", "ToolEffect", "ToolOutput", "tool"]

NeedsApproval = bool | Callable[[Any, Any], "bool | Awaitable[bool]"]
"""``@tool(needs_approval=...)``: ``True``/``False``, or ``(ctx, args) -> bool`` (sync or
async) deciding per call."""


class ToolEffect(enum.StrEnum):
    """What a tool does to the world; drives permission modes.

    ``PLAN`` mode allows only ``READ_ONLY``; ``ACCEPT_EDITS`` auto-approves ``WRITE``.
    An undeclared tool is ``SIDE_EFFECT``.
    """

    READ_ONLY = "read_only"
    WRITE = "write"
    SIDE_EFFECT = "side_effect"


def _as_effect(effect: ToolEffect | str, *, where: str = "@tool") -> ToolEffect:
    """``effect`` as a :class:`ToolEffect`; its value string (``"read_only"``) is accepted.

    Raises:
        ConfigError: ``effect`` is neither a :class:`ToolEffect` nor one of its values.

    Example:
        >>> _as_effect("read_only")
        <ToolEffect.READ_ONLY: 'read_only'>
    """
    if isinstance(effect, ToolEffect):
        return effect
    if isinstance(effect, str):
        try:
            return ToolEffect(effect)
        except ValueError:
            pass
    valid = ", ".join(f"ToolEffect.{e.name} ({e.value!r})" for e in ToolEffect)
    raise ConfigError(f"{where}: effect={effect!r} is not a ToolEffect; use one of {valid}")


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """A successful tool result: content parts for the model and the raw returned value.

    ``events`` are agent events the tool reports (e.g. the Bash tool's
    :class:`~helikon.core.events.NetworkAccess`); the runner emits them, with the call's id,
    before the result and records them on the call's trace span.
    """

    content: list[ContentPart]
    value: Any = None
    events: tuple[Any, ...] = ()
    meta: dict[str, Any] | None = None
    """Metadata for the result item (:attr:`ToolResult.meta <helikon.core.items.ToolResult>`;
    an MCP result's ``_meta``), redacted like the text, never sent to a model."""

    def with_meta(self, meta: dict[str, Any] | None) -> ToolOutput:
        """This output with ``meta`` (itself when ``meta`` is ``None``)."""
        if meta is None:
            return self
        return ToolOutput(self.content, self.value, self.events, meta)

    @classmethod
    def from_value(cls, value: Any) -> ToolOutput:
        """Serialize a return value: ``str`` as-is, anything else as UTF-8 JSON text.

        Non-ASCII characters stay characters (never ``\\u`` escapes).
        """
        if isinstance(value, ToolOutput):
            return value
        if isinstance(value, str):
            return cls([TextPart(text=value)], value)
        if value is None:
            return cls([TextPart(text="null")], None)
        text = pydantic_core.to_json(value).decode("utf-8")
        return cls([TextPart(text=text)], value)


@runtime_checkable
class Tool(Protocol):
    """A callable the model can invoke.

    Attributes:
        name: the name the model calls it by.
        description: what the model reads to decide when to call it.
        parameters: JSON Schema (an object schema) of the arguments.
        effect: a :class:`ToolEffect`.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    effect: ToolEffect

    async def invoke(self, ctx: ToolContext[Any], args: Any) -> ToolOutput:
        """Run the tool. Raise :class:`helikon.errors.ToolError` to report a failure."""
        ...


def _is_tool_context(annotation: Any) -> bool:
    origin = get_origin(annotation) or annotation
    return isinstance(origin, type) and issubclass(origin, ToolContext)


_RUN_CONTEXT_NAMES = ("RunContext", "RunContextWrapper")


def _is_run_context(annotation: Any) -> bool:
    """``RunContext[...]`` (helikon's or Pydantic AI's) or ``RunContextWrapper[...]`` (the
    OpenAI Agents SDK's), resolved or still a string."""
    if isinstance(annotation, str):
        return annotation.strip().strip("'\"").split("[")[0].split(".")[-1] in _RUN_CONTEXT_NAMES
    origin = get_origin(annotation) or annotation
    if not isinstance(origin, type):
        return False
    return issubclass(origin, RunContext) or origin.__name__ in _RUN_CONTEXT_NAMES


def _short(annotation: Any) -> str:
    """``RunContext[Deps]`` for the alias (class names, not module paths)."""
    if isinstance(annotation, str):
        return annotation.strip()
    origin = get_origin(annotation) or annotation
    name = getattr(origin, "__name__", None) or repr(origin).replace("typing.", "")
    args = get_args(annotation)
    return f"{name}[{', '.join(_short(a) for a in args)}]" if args else name


def _context_error(tool: str, param: str, annotation: Any, *, first: bool) -> ConfigError:
    shown = _short(annotation)
    if first:
        return ConfigError(
            f"tool {tool!r}: parameter {param!r} is annotated {shown}, the run context; a tool "
            f"receives the tool context instead: annotate it {param}: ToolContext[Deps] (from "
            f"helikon import ToolContext; {param}.user_ctx is the object the run was given "
            "with ctx=RunContext.ephemeral(deps), what Pydantic AI calls ctx.deps)"
        )
    return ConfigError(
        f"tool {tool!r}: parameter {param!r} is annotated {shown}; the context must be the "
        f"first parameter, annotated ToolContext[Deps] ({param}: ToolContext[Deps], then the "
        "arguments)"
    )


def _annotated_text(annotation: Any) -> str | None:
    """The plain string in ``Annotated[T, "a description"]``, if there is one."""
    for meta in getattr(annotation, "__metadata__", ()):
        if isinstance(meta, str) and meta.strip():
            return meta.strip()
    return None


def _has_field_description(annotation: Any) -> bool:
    """True when ``Annotated[..., Field(description=...)]`` already describes the argument."""
    for meta in getattr(annotation, "__metadata__", ()):
        if isinstance(meta, FieldInfo) and meta.description:
            return True
    return False


_SCHEMA_ERRORS = (
    pydantic.PydanticSchemaGenerationError,
    pydantic.PydanticInvalidForJsonSchema,
    pydantic.PydanticUserError,
)


def _args_model(name: str, fields: dict[str, Any]) -> type[BaseModel]:
    return pydantic.create_model(
        name,
        __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=False),
        **fields,
    )


def _type_name(annotation: Any) -> str:
    """``annotation`` as a reader writes it: ``Path``, ``list[socket]``, ``Callable[..]``."""
    if isinstance(annotation, type) and not getattr(annotation, "__args__", None):
        return annotation.__qualname__
    return repr(annotation).replace("typing.", "")


def _schema_error(tool: str, fields: dict[str, Any], exc: Exception) -> ConfigError:
    """The :class:`ConfigError` for arguments pydantic cannot describe: names the first
    parameter whose type fails on its own, its type and what pydantic said."""
    for param, (annotation, default) in fields.items():
        try:
            _args_model(f"{tool}_{param}", {param: (annotation, default)}).model_json_schema()
        except _SCHEMA_ERRORS as one:
            reason = str(one).splitlines()[0].split(". ")[0].rstrip(".")
            return ConfigError(
                f"tool {tool!r}: parameter {param!r} has type {_type_name(annotation)}, which "
                f"pydantic cannot describe as JSON Schema ({reason}); use a JSON type (str, "
                "int, float, bool, list, dict, a pydantic model, a dataclass or a TypedDict), "
                "or take the object from ToolContext (ctx.user_ctx) instead of an argument"
            )
    return ConfigError(
        f"tool {tool!r}: pydantic cannot describe the arguments as JSON Schema: "
        f"{str(exc).splitlines()[0]}"
    )


class FunctionTool:
    """A :class:`Tool` backed by a Python function; made by :func:`tool`.

    Calling the object calls the original function unchanged, so decorated functions stay
    unit-testable.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        effect: ToolEffect | str = ToolEffect.SIDE_EFFECT,
        retries: int | None = None,
        needs_approval: NeedsApproval = False,
    ) -> None:
        if not callable(fn):
            raise ConfigError(f"@tool needs a function, got {type(fn).__name__}")
        if not isinstance(needs_approval, bool) and not callable(needs_approval):
            raise ConfigError(
                f"@tool(needs_approval={needs_approval!r}) must be True, False or a function "
                "(ctx, args) -> bool (sync or async)"
            )
        #: whether (or a function deciding whether) each call asks a person first
        self.needs_approval: NeedsApproval = needs_approval
        if retries is not None and (
            isinstance(retries, bool) or not isinstance(retries, int) or retries < 0
        ):
            raise ConfigError(f"@tool(retries={retries!r}) must be an int >= 0, or None")
        #: ModelRetry / invalid-argument rounds before the run fails (None: the agent's)
        self.retries = retries
        self.fn = fn
        self.name = name or fn.__name__
        if not self.name.replace("_", "a").replace("-", "a").isalnum():
            raise ConfigError(
                f"tool name {self.name!r} must match [A-Za-z0-9_-]+; pass name=... to @tool"
            )
        doc_desc, arg_docs = parse_docstring(inspect.getdoc(fn))
        self.description = description if description is not None else doc_desc
        self.effect: ToolEffect = _as_effect(effect, where=f"tool {self.name!r}")
        self._is_async = inspect.iscoroutinefunction(fn)
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())
        try:
            hints = get_type_hints(fn, include_extras=True)
        except Exception as exc:  # unresolved forward refs
            for i, p in enumerate(params):
                if _is_run_context(p.annotation):
                    raise _context_error(self.name, p.name, p.annotation, first=i == 0) from None
            raise ConfigError(f"tool {self.name!r}: cannot resolve type hints: {exc}") from exc
        for i, p in enumerate(params):
            ann = hints.get(p.name)
            if _is_run_context(ann):
                raise _context_error(self.name, p.name, ann, first=i == 0)
            if i > 0 and _is_tool_context(ann):
                raise _context_error(self.name, p.name, ann, first=False)
        self._takes_ctx = bool(params) and _is_tool_context(hints.get(params[0].name))
        if self._takes_ctx:
            params = params[1:]
        fields: dict[str, Any] = {}
        for p in params:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise ConfigError(
                    f"tool {self.name!r}: *args/**kwargs parameters cannot be described to a "
                    f"model; declare each argument ({p.name!r})"
                )
            if p.kind is p.POSITIONAL_ONLY:
                raise ConfigError(
                    f"tool {self.name!r}: positional-only parameter {p.name!r} is not supported"
                )
            ann = hints.get(p.name, Any)
            default = ... if p.default is p.empty else p.default
            if _has_field_description(ann):
                fields[p.name] = (ann, default)
            else:
                described = _annotated_text(ann) or arg_docs.get(p.name)
                fields[p.name] = (ann, pydantic.Field(default, description=described))
        self._params = [p.name for p in params]
        try:
            self._args_model: type[BaseModel] = _args_model(f"{self.name}_args", fields)
            schema = schema_of(self._args_model)
        except _SCHEMA_ERRORS as exc:
            raise _schema_error(self.name, fields, exc) from None
        self.parameters: dict[str, Any] = schema
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<tool {self.name}>"

    def validate_args(self, args: Any) -> dict[str, Any]:
        """Validate raw arguments; returns the keyword arguments for the function.

        Raises:
            InvalidArgs: with one message per problem (``field: reason``).
        """
        model = validate_args(self._args_model, args)
        return {name: getattr(model, name) for name in self._params}

    async def invoke(self, ctx: ToolContext[Any], args: Any) -> ToolOutput:
        """Validate ``args``, call the function (sync ones in a worker thread), wrap the result.

        Raises:
            InvalidArgs: the arguments do not match the schema (the function is not called).
            ToolError: whatever the function raised as a ToolError, unchanged.
            ModelRetry: the function asked the model to try again, unchanged.
            ToolOther: any other exception, with its type and message.
        """
        kwargs = self.validate_args(args)
        call_args: tuple[Any, ...] = (ctx,) if self._takes_ctx else ()
        try:
            if self._is_async:
                result = await self.fn(*call_args, **kwargs)
            else:
                result = await asyncio.to_thread(self.fn, *call_args, **kwargs)
        except (ToolError, ModelRetry):
            raise
        except Exception as exc:
            raise ToolOther(f"{type(exc).__name__}: {exc}") from exc
        return ToolOutput.from_value(result)


@overload
def tool(fn: Callable[..., Awaitable[Any]] | Callable[..., Any], /) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    effect: ToolEffect | str = ToolEffect.SIDE_EFFECT,
    retries: int | None = None,
    needs_approval: NeedsApproval = False,
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    effect: ToolEffect | str = ToolEffect.SIDE_EFFECT,
    retries: int | None = None,
    needs_approval: NeedsApproval = False,
    **unexpected: Any,
) -> FunctionTool | Callable[[Callable[..., Any]], FunctionTool]:
    """Make a tool from a function (bare ``@tool`` or ``@tool(name=..., effect=...)``).

    Args:
        fn: the function (sync or async).
        name: the tool name; defaults to the function name.
        description: overrides the docstring summary.
        effect: a :class:`ToolEffect` or its value (``"read_only"``, ``"write"``,
            ``"side_effect"``); defaults to ``SIDE_EFFECT``.
        retries: rounds of :class:`~helikon.ModelRetry` (raised by the function) or invalid
            arguments the model gets before the run fails with ``ToolRetriesExceeded``;
            ``None`` (default) takes the agent's ``retries`` (default 1).
        needs_approval: ``True`` to ask a person before every call, or a function
            ``(ctx, args) -> bool`` (sync or async; ``ctx`` the :class:`~helikon.RunContext`,
            ``args`` the call's arguments as the model gave them) deciding per call. The ask
            goes through the permission pipeline like an ask guard (after deny rules and
            guards, before allow rules): the approval handler answers it, or with
            ``RunConfig(approval="defer")`` the run pauses. A function that raises denies
            the call (fail closed).

    Returns:
        A :class:`FunctionTool`.

    Raises:
        ConfigError: the signature cannot be described to a model (``*args``, bad name), or
            ``effect`` is not a :class:`ToolEffect` or one of its values.
        PeerSpellingError: another SDK's keyword (``requires_approval=``), naming
            helikon's; TypeError: any other unknown keyword.

    Example:
        >>> @tool(effect=ToolEffect.READ_ONLY)
        ... def budget_status(category: str) -> dict:
        ...     '''Look up the monthly budget for a category.
        ...
        ...     Args:
        ...         category: Spending category, e.g. "Dining".
        ...     '''
        ...     return {"budget": 250.0}
        >>> budget_status.parameters["properties"]["category"]["description"]
        'Spending category, e.g. "Dining".'
    """
    _refuse_tool_keywords(unexpected)
    options: dict[str, Any] = {
        "name": name,
        "description": description,
        "effect": effect,
        "retries": retries,
        "needs_approval": needs_approval,
    }
    if fn is not None:
        return FunctionTool(fn, **options)

    def wrap(f: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(f, **options)

    return wrap


_TOOL_SPELLINGS = {
    "requires_approval": "needs_approval=",
    "approval_required": "needs_approval=",
    "name_override": "name=",
    "description_override": "description=",
}


def _refuse_tool_keywords(unexpected: dict[str, Any]) -> None:
    """Raise for ``@tool``'s unknown keywords: another SDK's spelling gets helikon's."""
    for key in unexpected:
        fix = _TOOL_SPELLINGS.get(key)
        if fix is not None:
            raise PeerSpellingError(
                f"@tool({key}=...) is another SDK's spelling; in helikon use @tool({fix}...)"
            )
        raise TypeError(f"tool() got an unexpected keyword argument {key!r}")
