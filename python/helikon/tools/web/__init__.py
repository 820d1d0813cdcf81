"""Network tools: ``WebFetch`` and ``WebSearch`` (``pip install 'helikon[web]'``).

* :class:`WebFetchTool` (``"WebFetch"``, side effect) fetches an http(s) URL and returns the
  main article as Markdown (plain text and JSON pass through). An SSRF guard is on by
  default: private, loopback, link-local (cloud metadata), CGNAT, ULA, IPv4-mapped and other
  internal addresses are refused, checked on the resolved address at connect time (which
  closes the DNS-rebinding window) and on every redirect hop. Host allow/deny lists, a size
  cap, a time cap and a redirect cap bound the rest.
* :class:`WebSearchTool` (``"WebSearch"``, side effect) runs a query through a
  :class:`SearchBackend`: :class:`BraveBackend` (``BRAVE_API_KEY``) or
  :class:`TavilyBackend` (``TAVILY_API_KEY``), or your own.

The guard's opt-outs are explicit: ``allow_private_networks=["127.0.0.1/32"]`` exempts
chosen ranges, ``ssrf_guard=False`` turns the address check off.

Example:
    >>> from helikon.tools.web import TavilyBackend, WebFetchTool, WebSearchTool
    >>> tools = [WebFetchTool(deny_hosts=["*.internal.example"]),
    ...          WebSearchTool(TavilyBackend(api_key="tvly-example"))]
    >>> [t.name for t in tools]
    ['WebFetch', 'WebSearch']
"""

from typing import TYPE_CHECKING, Any

from helikon.tools.web.page import FetchedPage
from helikon.tools.web.resolve import Resolver, SystemResolver
from helikon.tools.web.search import SearchBackend, SearchResult, WebSearchTool
from helikon.tools.web.ssrf import AddressPolicy

if TYPE_CHECKING:
    from helikon.tools.web.brave import BraveBackend
    from helikon.tools.web.extract import Extracted, html_to_markdown
    from helikon.tools.web.fetch import DEFAULT_USER_AGENT, WebFetchTool
    from helikon.tools.web.hosts import HostRules
    from helikon.tools.web.tavily import TavilyBackend

# Names whose modules need the `web` extra (httpx, readability, markdownify): imported on
# first use, so `helikon.tools` (whose egress proxy uses the SSRF rules above) imports
# without the extra.
_LAZY = {
    "BraveBackend": "brave",
    "Extracted": "extract",
    "html_to_markdown": "extract",
    "DEFAULT_USER_AGENT": "fetch",
    "WebFetchTool": "fetch",
    "HostRules": "hosts",
    "TavilyBackend": "tavily",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_USER_AGENT",
    "AddressPolicy",
    "BraveBackend",
    "Extracted",
    "FetchedPage",
    "HostRules",
    "Resolver",
    "SearchBackend",
    "SearchResult",
    "SystemResolver",
    "TavilyBackend",
    "WebFetchTool",
    "WebSearchTool",
    "html_to_markdown",
]
