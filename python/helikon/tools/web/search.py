"""The ``WebSearch`` tool over a swappable :class:`SearchBackend`.

A backend turns a query into :class:`SearchResult` hits; :class:`WebSearchTool` validates the
model's arguments, calls the backend (honouring the run's cancellation token) and renders the
hits as a numbered list. helikon ships :class:`~helikon.tools.web.brave.BraveBackend` and
:class:`~helikon.tools.web.tavily.TavilyBackend`; any object with a matching ``search``
coroutine works.

Example:
    >>> import asyncio
    >>> from helikon.core.cancel import CancellationToken
    >>> from helikon.core.context import ToolContext
    >>> class Fixed:
    ...     async def search(self, query, max_results):
    ...         return [SearchResult("Python", "https://www.python.org/", "The language.")]
    >>> tool = WebSearchTool(Fixed())
    >>> ctx = ToolContext(None, {}, CancellationToken(), "call-1", "agent")
    >>> out = asyncio.run(tool.invoke(ctx, {"query": "python"}))
    >>> print(out.content[0].text)
    1. Python
       https://www.python.org/
       The language.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from helikon.core.context import ToolContext
from helikon.core.items import TextPart
from helikon.core.tool import ToolEffect, ToolOutput
from helikon.core.tool_args import schema_of, validate_args
from helikon.errors import ConfigError, ToolError, ToolOther
from helikon.tools.web._cancel import until_cancelled

__all__ = ["SearchBackend", "SearchResult", "WebSearchTool"]

#: The most hits a single call may ask for (both shipped backends cap at 20).
MAX_RESULTS_LIMIT = 20


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One search hit.

    Attributes:
        title: the page title.
        url: the page URL.
        snippet: a short plain-text excerpt (may be empty).
    """

    title: str
    url: str
    snippet: str = ""


@runtime_checkable
class SearchBackend(Protocol):
    """Something that answers a web search query."""

    async def search(self, query: str, max_results: int) -> list[SearchResult]:
        """Return up to ``max_results`` hits for ``query``, best first.

        Raise a :class:`~helikon.errors.ToolError` subclass on failure; the message reaches
        the model.
        """
        ...


class _SearchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(min_length=1, max_length=400, description="The search query.")
    max_results: int = Field(
        default=5,
        ge=1,
        le=MAX_RESULTS_LIMIT,
        description=f"How many results to return (1-{MAX_RESULTS_LIMIT}, default 5).",
    )


def _render(results: list[SearchResult], query: str) -> str:
    if not results:
        return f"No results for {query!r}."
    blocks = []
    for i, hit in enumerate(results, 1):
        lines = [f"{i}. {hit.title or hit.url}", f"   {hit.url}"]
        if hit.snippet:
            lines.append(f"   {hit.snippet}")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


class WebSearchTool:
    """Search the web through a :class:`SearchBackend` (``"WebSearch"``, side effect).

    Args:
        backend: the search service, e.g. ``BraveBackend()`` or ``TavilyBackend()``.

    Raises:
        ConfigError: ``backend`` has no ``search`` coroutine.
    """

    name = "WebSearch"
    effect = ToolEffect.SIDE_EFFECT

    def __init__(self, backend: SearchBackend) -> None:
        if not isinstance(backend, SearchBackend):
            raise ConfigError(
                f"WebSearchTool needs a SearchBackend (an object with an async "
                f"search(query, max_results) method), got {type(backend).__name__}"
            )
        self.backend = backend
        self.description = (
            "Search the web. Returns a numbered list of results, each with its title, URL "
            "and a snippet. Use WebFetch on a result's URL to read the page."
        )
        self.parameters: dict[str, Any] = schema_of(_SearchArgs)

    async def invoke(self, ctx: ToolContext[Any], args: Any) -> ToolOutput:
        """Validate ``args``, run the search and return the numbered hits.

        Raises:
            InvalidArgs: the arguments do not match the schema.
            ToolError: whatever the backend raised as a ToolError.
            ToolOther: the backend failed otherwise, or the run was cancelled.
        """
        a = validate_args(_SearchArgs, args)
        try:
            hits = await until_cancelled(
                self.backend.search(a.query, a.max_results), ctx.cancel, "WebSearch"
            )
        except ToolError:
            raise
        except Exception as exc:
            raise ToolOther(f"WebSearch failed: {type(exc).__name__}: {exc}") from exc
        hits = list(hits)[: a.max_results]
        return ToolOutput([TextPart(text=_render(hits, a.query))], [asdict(hit) for hit in hits])

    def __repr__(self) -> str:
        return f"<WebSearchTool backend={type(self.backend).__name__}>"
