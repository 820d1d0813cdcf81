"""The skeleton every provider adapter is built on: :class:`ProviderModel`.

A provider adapter turns one :class:`~helikon.core.model.ModelRequest` into model events. What
is the same for every provider lives here, once:

* the call loop of :meth:`ProviderModel.invoke`: check the cancellation token, build the body,
  send it, hand the decoder the whole answer or each stream event (stopping early once the
  decoder says the answer is complete), then the decoder's closing events (usage, metadata,
  one ``Finish``);
* cancellation: every wait (the request, the whole body, each next event) races the run's
  :class:`~helikon.CancellationToken`; when it fires the iterator ends without a ``Finish``;
* error mapping: every wait is wrapped so that what the SDK or the network raises comes out as
  the adapter's :class:`~helikon.errors.ModelError` (``_map_error`` over ``_error_types``);
* releasing what a call holds (an open stream, an HTTP response, a worker thread's result),
  on every path out: end, error, cancellation, a consumer that stops iterating;
* the constructor's common checks (:func:`require_model_id`, :func:`require_api_key`,
  :func:`require_retries`), ``model``, ``aclose`` (:class:`~helikon.providers._clients.LoopClient`)
  and ``async with``.

An adapter fills in the hooks:

==========================  =====================================================================
hook                        what it does
==========================  =====================================================================
``provider``                the GenAI ``gen_ai.provider.name`` value (a property)
``capabilities()``          the :class:`~helikon.core.model.ModelCapabilities`
``_build_body(request)``    the request (a JSON body, SDK keyword arguments ...), built before
                            anything is sent; a bad request raises here
``_send(body, call)``       sends it and returns the started answer (an SDK stream, an HTTP
                            response, a whole response); each wait through ``await
                            call.step(...)``, which returns :data:`CANCELLED` when the token
                            fired; what must be released is given to ``call.on_close``
``_new_turn(body, sent)``   the :class:`~helikon.providers._decoder.TurnDecoder` of this answer
``_read_whole(sent)``       (not streamed) the whole response; by default ``sent`` itself
``_pull(sent, call)``       (streamed) a function fetching the next stream event:
                            ``(True, event)``, or ``(False, None)`` at the end
``_map_error(exc)``         the provider's error table: an SDK or network exception (an
                            instance of ``_error_types``) to a ``ModelError``
``_new_client()``           the SDK or HTTP client for the running event loop
==========================  =====================================================================

``docs/guides/adding-a-provider.md`` builds a whole adapter on it
(``examples/custom_provider/acme.py``).
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from helikon.core.model import ModelCapabilities, ModelEvent, ModelRequest
from helikon.errors import ConfigError, ModelError
from helikon.providers._clients import ClosingModel, LoopClient
from helikon.providers._decoder import TurnDecoder
from helikon.providers._errors import guard
from helikon.providers._stream import Cancelled, CancelRace, next_item

if TYPE_CHECKING:
    from helikon.core.cancel import CancellationToken

__all__ = [
    "BuildsOwner",
    "Call",
    "ProviderModel",
    "require_api_key",
    "require_model_id",
    "require_retries",
]

_T = TypeVar("_T")
_M = TypeVar("_M")

Pull = Callable[[], Awaitable[tuple[bool, Any]]]
"""Fetches a stream's next event: ``(True, event)``, or ``(False, None)`` at its end."""


def require_model_id(label: str, model_id: object) -> str:
    """``model_id`` when it is a non-empty string (not only white space).

    Raises:
        ConfigError: ``"{label}: model_id must be a non-empty model name"``.

    Example:
        >>> require_model_id("MyModel.create", "my-model-1")
        'my-model-1'
    """
    if not isinstance(model_id, str) or not model_id.strip():
        raise ConfigError(f"{label}: model_id must be a non-empty model name")
    return model_id


def require_retries(label: str, max_retries: object) -> int:
    """``max_retries`` when it is an int >= 0 (SDK-level retries).

    Raises:
        ConfigError: ``"{label}: max_retries must be an int >= 0"``.
    """
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise ConfigError(f"{label}: max_retries must be an int >= 0")
    return max_retries


def require_api_key(
    label: str,
    given: str | None,
    env: Sequence[str],
    *,
    client_given: bool = False,
    client_hint: str = "",
) -> str | None:
    """The API key: ``given``, else the first non-empty environment variable of ``env``.

    Args:
        label: the constructor's name, for the message.
        given: the ``api_key`` argument.
        env: the variables to read, in order (e.g. ``("GEMINI_API_KEY", "GOOGLE_API_KEY")``).
        client_given: a ready client was passed, which carries its own key: then no key is
            required (``None`` may be returned).
        client_hint: how to pass a ready client, for the message, e.g.
            ``"client=AsyncOpenAI(...)"``.

    Returns:
        The key, or ``None`` when none is set and a client was given.

    Raises:
        ConfigError: no key and no client; the message names the variables and the argument.

    Example:
        >>> require_api_key("MyModel.create", "k-1", ["MY_API_KEY"])
        'k-1'
    """
    key = given or next((os.environ[name] for name in env if os.environ.get(name)), None)
    if key is None and not client_given:
        names = " (or ".join(env) + ")" * (len(env) - 1)
        alternative = f" (or {client_hint})" if client_hint else ""
        raise ConfigError(
            f"{label}: no API key. Set the {names} environment variable or pass "
            f"api_key=...{alternative}."
        )
    return key


class BuildsOwner:
    """A named factory that is the class it is read on: ``AnthropicModel.messages(...)`` is
    ``AnthropicModel(...)``.

    The factory then has the constructor's signature (type checkers check its arguments) and
    its arguments are documented once, in the class docstring. Read on a subclass, it builds
    the subclass.

    Example:
        >>> class Demo:
        ...     create = BuildsOwner()
        ...     def __init__(self, name: str) -> None:
        ...         self.name = name
        >>> Demo.create("x").name
        'x'
    """

    def __get__(self, instance: object, owner: type[_M]) -> type[_M]:
        return owner


class Call:
    """One model call: its waits raced against the token and mapped, and what it must release.

    Made by :meth:`ProviderModel.invoke` and handed to the adapter's ``_send``.
    """

    def __init__(
        self,
        cancel: CancellationToken,
        map_error: Callable[[BaseException], ModelError],
        error_types: type[BaseException] | tuple[type[BaseException], ...],
    ) -> None:
        self._race = CancelRace(cancel)
        self._map_error = map_error
        self._error_types = error_types
        self._closers: list[Callable[[], object]] = []

    def guarded(self, awaitable: Awaitable[_T]) -> Awaitable[_T]:
        """``awaitable`` with what it raises mapped to the adapter's ``ModelError``."""
        return guard(awaitable, self._map_error, self._error_types)

    async def step(self, awaitable: Awaitable[_T]) -> _T | Cancelled:
        """``awaitable``'s result (errors mapped), or :data:`CANCELLED` when the token fired
        first (the step is then cancelled)."""
        return await self._race.step(self.guarded(awaitable))

    def items(self, pull: Pull) -> AsyncIterator[Any]:
        """The events ``pull`` fetches, each raced against the token and mapped."""
        return self._race.items(lambda: self.guarded(pull()))

    def on_close(self, release: Callable[[], object]) -> None:
        """Call ``release`` (sync, or returning an awaitable) when the call ends, however it
        ends; what it raises is ignored. The last registered is released first."""
        self._closers.append(release)

    async def close(self) -> None:
        """Stop waiting on the token, then release what was registered."""
        await self._race.close()
        while self._closers:
            release = self._closers.pop()
            with suppress(Exception):
                result = release()
                if isinstance(result, Awaitable):
                    await result


class ProviderModel(ClosingModel, ABC):
    """The base of a provider adapter (see the module docstring for the hooks).

    Args:
        model_id: the model name requested (checked with :func:`require_model_id`).
        label: the constructor's name in messages and ``repr``, e.g. ``"AnthropicModel.messages"``.
        stream: stream the answer or fetch it whole; the events are the same.
        client: a ready SDK/HTTP client to use on every event loop (never closed here), or
            ``None`` to make one per loop with ``_new_client``.

    Raises:
        ConfigError: an empty ``model_id``.
    """

    _error_types: ClassVar[type[BaseException] | tuple[type[BaseException], ...]] = Exception
    """The exceptions ``_map_error`` translates; others (a ``ModelError``, cancellation)
    propagate unchanged."""

    def __init__(self, model_id: str, *, label: str, stream: bool, client: Any = None) -> None:
        self._model_id = require_model_id(label, model_id)
        self._label = label
        self._stream = stream
        self._clients: LoopClient[Any] = LoopClient(self._new_client, self._close_client, client)

    # ------------------------------------------------------------------ Model protocol

    @property
    @abstractmethod
    def provider(self) -> str:
        """The provider's name (the GenAI ``gen_ai.provider.name`` value)."""

    @property
    def model(self) -> str:
        """The model id requested."""
        return self._model_id

    @abstractmethod
    def capabilities(self) -> ModelCapabilities:
        """What this model can do."""

    async def invoke(
        self, request: ModelRequest, cancel: CancellationToken
    ) -> AsyncIterator[ModelEvent]:
        """Call the model and stream its answer as model events.

        Args:
            request: the conversation, tools and settings.
            cancel: stops the call promptly when fired (the iterator just ends, no ``Finish``).

        Yields:
            The decoder's events as they arrive (``ReasoningDelta``, ``TokenDelta``,
            ``ToolCallDelta``, ``ProviderMetadata``), then its closing events: one
            ``UsageReported`` when the provider reports usage, metadata, one ``Finish``.

        Raises:
            ModelError: the adapter's mapping of what the provider or the network raised, or
                the decoder's error for a failed, refused or cut-off answer.
        """
        if cancel.cancelled:
            return
        body = self._build_body(request)
        call = Call(cancel, self._map_error, self._error_types)
        try:
            sent = await self._send(body, call)
            if isinstance(sent, Cancelled):
                return
            turn = self._new_turn(body, sent)
            if not self._stream:
                whole = await call.step(self._read_whole(sent))
                if isinstance(whole, Cancelled):
                    return
                for event in turn.whole(whole):
                    yield event
            else:
                async for chunk in call.items(self._pull(sent, call)):
                    for event in turn.chunk(chunk):
                        yield event
                    if turn.finished:
                        break
            if cancel.cancelled:
                return
            for event in turn.ending():
                yield event
        finally:
            await call.close()

    async def aclose(self) -> None:
        """Close the client this model created (a client passed in is left open)."""
        await self._clients.aclose()

    def __repr__(self) -> str:
        return f"{self._label}({self._model_id!r}, stream={self._stream})"

    # ------------------------------------------------------------------ hooks

    @abstractmethod
    def _build_body(self, request: ModelRequest) -> Any:
        """The request to send for ``request``."""

    @abstractmethod
    async def _send(self, body: Any, call: Call) -> Any:
        """Send ``body``; the started answer, or :data:`CANCELLED`."""

    @abstractmethod
    def _new_turn(self, body: Any, sent: Any) -> TurnDecoder:
        """The decoder of this one answer."""

    async def _read_whole(self, sent: Any) -> Any:
        """The whole (not streamed) response; ``sent`` itself unless overridden."""
        return sent

    def _pull(self, sent: Any, call: Call) -> Pull:
        """Fetches the next event of the streamed answer ``sent`` (an async iterable unless
        overridden); what the reader holds is given to ``call.on_close``."""
        iterator = sent.__aiter__()
        return lambda: next_item(iterator)

    @abstractmethod
    def _map_error(self, exc: BaseException) -> ModelError:
        """The provider's error table: ``exc`` (an instance of ``_error_types``) as a
        ``ModelError``."""

    def _new_client(self) -> Any:
        """A new SDK/HTTP client for the running event loop (none unless overridden)."""
        return None

    async def _close_client(self, client: Any) -> None:
        """Close a client ``_new_client`` made (``aclose()`` or ``close()``, awaited when it
        is a coroutine)."""
        closer = getattr(client, "aclose", None) or getattr(client, "close", None)
        if closer is not None:
            result = closer()
            if isinstance(result, Awaitable):
                await result
