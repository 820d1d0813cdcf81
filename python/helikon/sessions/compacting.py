"""A session wrapper that summarises the conversation once it grows past a token budget."""

from __future__ import annotations

import inspect
import logging
import math
from collections.abc import Callable, Sequence

from helikon.core.cancel import CancellationToken
from helikon.core.compaction import DEFAULT_COMPACTION_PROMPT, Compaction
from helikon.core.events import CompactionCompleted, CompactionStarted, TokenDelta
from helikon.core.items import Item, SystemMessage, UserMessage
from helikon.core.model import Model, ModelRequest, ModelSettings
from helikon.errors import ConfigError
from helikon.sessions.chain import Chained
from helikon.sessions.events import Compacted, SequenceId, SessionEvent
from helikon.sessions.projection import event_item, project
from helikon.sessions.protocol import Session
from helikon.sessions.tail import last_items
from helikon.sessions.tokens import HeuristicTokenCounter, TokenCounter

__all__ = ["DEFAULT_COMPACTION_PROMPT", "CompactingSession"]

log = logging.getLogger("helikon.sessions")


def _check_inner(inner: object) -> None:
    """Reject an ``inner`` that is not a session, before anything is appended.

    Raises:
        ConfigError: the message says what to pass instead.
    """
    if isinstance(inner, Session):
        return
    hint = "e.g. CompactingSession(MemorySession(), model, threshold=...)"
    if inspect.iscoroutine(inner):
        inner.close()  # never awaited: close it so Python does not warn
        hint = f"did you forget to await {inner.__qualname__}(...)?"
    raise ConfigError(
        "CompactingSession(inner=...) must be a Session (MemorySession, SqliteSession, "
        f"RedisSession, PostgresSession, ...), got {type(inner).__name__}; {hint}"
    )


def _describe(value: object) -> str:
    if isinstance(value, str):
        return f"the str {value!r}"
    return type(value).__name__


class CompactingSession:
    """Wraps any session and appends a ``compacted`` summary when it grows too large.

    After every append (the caller's events are always persisted first):

    1. A cheap running estimate grows by the appended events' own token count. It starts
       *unknown*, so the first append through a fresh wrapper always counts the whole
       projected log (resuming a populated durable session compacts its backlog).
    2. When the estimate exceeds ``threshold``, the whole log is projected and counted with
       ``token_counter``. At or under the threshold the estimate is reset to that count.
    3. Over the threshold, unless the projection is empty or a lone system summary (nothing
       left to collapse; this guard stops a summary that is itself too long from looping),
       ``model`` is asked to summarise the projection followed by a user message holding
       ``prompt``. A non-blank answer is appended as ``compacted(summary, n)``, ``n`` being
       the events since and including the previous ``compacted`` marker (or the whole log),
       and the estimate becomes the summary's count.

    Model failures and blank summaries are logged at WARNING and skip compaction; a failure
    to read the inner log or to append the marker raises out of :meth:`append`.
    Assumes one logical writer (the runner model): concurrent writers should share the
    inner session, not one wrapper.

    Args:
        inner: the session to wrap.
        model: the model that writes summaries.
        threshold: compact when the conversation exceeds this many tokens (> 0). Keep it
            well below the summarising model's context window.
        token_counter: how tokens are counted (default :class:`HeuristicTokenCounter`).
        prompt: the summarisation instruction (default :data:`DEFAULT_COMPACTION_PROMPT`).
        model_settings: settings for the summarisation call.

    Raises:
        ConfigError: ``inner`` is not a :class:`Session` (e.g. an un-awaited
            ``SqliteSession.open(...)``), ``model`` has no ``invoke()`` method (e.g. a model
            name), or ``threshold`` is not a positive integer.

    Example:
        >>> import asyncio
        >>> from helikon.sessions import MemorySession, user_message
        >>> from helikon.testing import MockModel, Text
        >>> s = CompactingSession(MemorySession(), MockModel([[Text("S")]]), threshold=2)
        >>> _ = asyncio.run(s.append([user_message("a long enough message")]))
        >>> [(i.type, i.content[0].text) for i in asyncio.run(s.snapshot())]
        [('system', 'S')]
    """

    def __init__(
        self,
        inner: Session,
        model: Model,
        *,
        threshold: int,
        token_counter: TokenCounter | None = None,
        prompt: str = DEFAULT_COMPACTION_PROMPT,
        model_settings: ModelSettings | None = None,
    ) -> None:
        _check_inner(inner)
        if not callable(getattr(model, "invoke", None)):
            raise ConfigError(
                "CompactingSession(model=...) must be a helikon Model (an object with an "
                f"invoke() method), got {_describe(model)}; pass a model "
                'instance, e.g. OpenAIModel.chat("gpt-5-mini") or MockModel([...])'
            )
        if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold <= 0:
            raise ConfigError(
                f"CompactingSession(threshold=...) must be a positive token count, got "
                f"{threshold!r}"
            )
        self.inner = inner
        self.model = model
        self.threshold = threshold
        self.token_counter: TokenCounter = token_counter or HeuristicTokenCounter()
        self.prompt = prompt
        self.model_settings = model_settings or ModelSettings()
        self._estimate: float = math.inf
        self.compactions = 0
        """How many ``compacted`` markers this wrapper appended."""
        self._listeners: list[Callable[[CompactionStarted | CompactionCompleted], None]] = []

    @property
    def compaction(self) -> Compaction:
        """The same budget for a run's conversation while it runs: the ``Runner`` puts it
        on the run's context (unless the context has its own), so a run that grows past
        ``threshold`` compacts before its next model call, the loop machine's
        ``Compacting`` state in the stream at that point (see
        :mod:`helikon.core.live_compaction`). The log itself is compacted after the run, as
        described above."""
        return Compaction(
            self.model, self.threshold, self.token_counter, self.prompt, self.model_settings
        )

    def listen(
        self, callback: Callable[[CompactionStarted | CompactionCompleted], None]
    ) -> Callable[[], None]:
        """Call ``callback`` with ``CompactionStarted`` when a compaction begins and
        ``CompactionCompleted`` (tokens before and after; equal when it was skipped) when it
        ends. Returns the function that stops listening. The ``Runner`` yields these
        events in the run's stream, before its terminal event."""
        self._listeners.append(callback)
        return lambda: self._listeners.remove(callback)

    def _tell(self, event: CompactionStarted | CompactionCompleted) -> None:
        for callback in list(self._listeners):
            callback(event)

    def __repr__(self) -> str:
        return f"CompactingSession({self.inner!r}, threshold={self.threshold})"

    async def append(self, events: Sequence[SessionEvent]) -> list[SequenceId]:
        """Append ``events`` to the inner session, then compact if the budget is exceeded.

        Returns:
            The positions of ``events`` (not of a ``compacted`` marker added after them).

        Raises:
            SessionError: the inner append, the read for the count, or the marker append
                failed.
        """
        ids = await self.inner.append(events)
        if not events:
            return ids
        if math.isfinite(self._estimate):
            own = [i for i in (event_item(e) for e in events) if i is not None]
            self._estimate += self.token_counter.count(own)
        if self._estimate > self.threshold:
            await self._maybe_compact()
        return ids

    async def events(self, since: SequenceId | None = None) -> list[SessionEvent]:
        """The inner session's events."""
        return await self.inner.events(since)

    async def snapshot(self, last: int | None = None) -> list[Item]:
        """The inner session's projected conversation, or its ``last`` items.

        Raises:
            ConfigError: ``last`` is not an int >= 0.
        """
        items = await self.inner.snapshot()
        return last_items(items, last, where="CompactingSession.snapshot")

    async def _maybe_compact(self) -> None:
        log_events = await self.inner.events()
        items = project(log_events)
        count = self.token_counter.count(items)
        self._estimate = count
        if count <= self.threshold:
            return
        if not items or (len(items) == 1 and isinstance(items[0], SystemMessage)):
            return
        self._tell(CompactionStarted(tokens_before=count))
        after = count
        try:
            summary = await self._summarise(items)
            if summary is None:
                return
            last = max((i for i, e in enumerate(log_events) if isinstance(e, Compacted)), default=0)
            marker = Compacted(
                summary=summary,
                original_count=len(log_events) - last,
                replaced_hash=await self._head(len(log_events) - 1),
            )
            await self.inner.append([marker])
            self.compactions += 1
            summary_item = event_item(marker)
            self._estimate = after = self.token_counter.count(
                [summary_item] if summary_item else []
            )
        finally:
            self._tell(CompactionCompleted(tokens_before=count, tokens_after=after))

    async def _head(self, sequence: int) -> str | None:
        """The inner log's chain hash at ``sequence`` (hex), if it keeps a chain."""
        if not isinstance(self.inner, Chained) or sequence < 0:
            return None
        records = await self.inner.chain_records()
        if sequence >= len(records) or records[sequence][2] is None:
            return None
        return bytes(records[sequence][2] or b"").hex()

    async def _summarise(self, items: list[Item]) -> str | None:
        request = ModelRequest(
            messages=[*items, UserMessage.text(self.prompt)], settings=self.model_settings
        )
        parts: list[str] = []
        try:
            async for event in self.model.invoke(request, CancellationToken()):
                if isinstance(event, TokenDelta):
                    parts.append(event.text)
        except Exception as exc:
            log.warning("session compaction skipped: the summary model failed: %s", exc)
            return None
        summary = "".join(parts)
        if not summary.strip():
            log.warning("session compaction skipped: the model returned a blank summary")
            return None
        return summary
