"""WebFetch's SSRF guard against a real loopback server and fake resolvers.

The server listens on 127.0.0.1, which the guard blocks, so tests that must reach it exempt
exactly that address (``allow_private_networks=["127.0.0.1/32"]``). Other private addresses
are never contacted: the guard refuses them before any connection.
"""

from __future__ import annotations

import httpx
import pytest

from helikon.errors import ConfigError, InvalidArgs, ToolDenied, ToolOther
from helikon.tools.web import WebFetchTool
from helikon.tools.web.transport import GuardedTransport

from .conftest import FakeResolver, LocalServer, TlsFiles, tool_ctx
from .test_ssrf import BLOCKED

LOOPBACK_ONLY = ["127.0.0.1/32"]


def _literal_host(ip: str) -> str:
    return f"[{ip}]" if ":" in ip else ip


async def test_loopback_is_blocked_by_default(server: LocalServer) -> None:
    server.page("/", "<p>secret</p>")
    with pytest.raises(ToolDenied) as info:
        await WebFetchTool().invoke(tool_ctx(), {"url": server.url("/")})
    msg = str(info.value)
    assert server.url("/") in msg and "127.0.0.1" in msg and "loopback" in msg
    assert server.seen == []  # never connected


async def test_explicit_exemption_reaches_the_local_server(server: LocalServer) -> None:
    server.page("/hello.txt", "hello", "text/plain")
    tool = WebFetchTool(allow_private_networks=LOOPBACK_ONLY)
    out = await tool.invoke(tool_ctx(), {"url": server.url("/hello.txt")})
    assert out.content[0].text.endswith("\n\nhello")  # type: ignore[union-attr]
    assert server.seen[0].headers["user-agent"].startswith("Mozilla/5.0 (compatible; helikon")


async def test_guard_off_reaches_the_local_server(server: LocalServer) -> None:
    server.page("/hello.txt", "hello", "text/plain")
    out = await WebFetchTool(ssrf_guard=False).invoke(tool_ctx(), {"url": server.url("/hello.txt")})
    assert out.value["content_type"] == "text/plain"


def test_exemptions_need_the_guard() -> None:
    with pytest.raises(ConfigError, match="ssrf_guard=False"):
        WebFetchTool(ssrf_guard=False, allow_private_networks=LOOPBACK_ONLY)


@pytest.mark.parametrize(("ip", "words"), [b for b in BLOCKED if "%" not in b[0]])
async def test_each_blocked_range_as_a_literal(ip: str, words: str) -> None:
    url = f"http://{_literal_host(ip)}/latest/meta-data/"
    with pytest.raises(ToolDenied) as info:
        await WebFetchTool().fetch(url)
    msg = str(info.value)
    assert words in msg and "SSRF guard" in msg
    assert str(httpx.URL(url).host) in msg


@pytest.mark.parametrize(("ip", "words"), BLOCKED)
async def test_each_blocked_range_through_the_resolver(ip: str, words: str) -> None:
    resolver = FakeResolver({"innocent.example": [[ip]]})
    with pytest.raises(ToolDenied) as info:
        await WebFetchTool(resolver=resolver).fetch("https://innocent.example/page")
    msg = str(info.value)
    assert "'innocent.example' resolved to" in msg and words in msg
    assert resolver.calls == ["innocent.example"]


async def test_a_mixed_answer_is_refused_even_if_the_first_address_is_public() -> None:
    resolver = FakeResolver({"mixed.example": [["93.184.216.34", "10.1.2.3"]]})
    sent: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200)

    inner = httpx.MockTransport(record)
    tool = WebFetchTool(resolver=resolver, transport=inner)
    with pytest.raises(ToolDenied, match=r"resolved to 10\.1\.2\.3, a private address"):
        await tool.fetch("http://mixed.example/")
    assert sent == []


@pytest.mark.parametrize("host", ["2130706433", "127.1", "0x7f.1", "localhost"])
async def test_numeric_host_spellings_resolve_then_get_blocked(
    server: LocalServer, host: str
) -> None:
    server.page("/", "secret", "text/plain")
    with pytest.raises(ToolDenied, match=r"resolved to 127\.0\.0\.1, a loopback"):
        await WebFetchTool().fetch(server.url("/", host=host))
    assert server.seen == []


async def test_octal_ipv4_spelling_is_rejected_as_invalid() -> None:
    with pytest.raises(InvalidArgs, match="not a valid URL"):
        await WebFetchTool().invoke(tool_ctx(), {"url": "http://0177.0.0.1/"})


async def test_redirect_into_a_private_address_is_blocked(server: LocalServer) -> None:
    server.redirect("/start", server.url("/middle"))
    server.redirect("/middle", "http://169.254.169.254/latest/meta-data/iam/")
    tool = WebFetchTool(allow_private_networks=LOOPBACK_ONLY)
    with pytest.raises(ToolDenied) as info:
        await tool.invoke(tool_ctx(), {"url": server.url("/start")})
    msg = str(info.value)
    assert "http://169.254.169.254/latest/meta-data/iam/" in msg
    assert "cloud metadata endpoint" in msg
    assert [s.path for s in server.seen] == ["/start", "/middle"]


async def test_redirect_to_a_host_resolving_privately_is_blocked(server: LocalServer) -> None:
    resolver = FakeResolver({"intranet.corp": [["192.168.10.5"]]})
    server.redirect("/go", "http://intranet.corp/admin")
    tool = WebFetchTool(allow_private_networks=LOOPBACK_ONLY, resolver=resolver)
    with pytest.raises(ToolDenied, match=r"'intranet.corp' resolved to 192\.168\.10\.5"):
        await tool.fetch(server.url("/go"))


async def test_dns_rebinding_across_connections_is_blocked(server: LocalServer) -> None:
    """First answer allowed, second answer private: the second connection is refused."""
    resolver = FakeResolver({"rebind.test": [["127.0.0.1"], ["10.0.0.7"]]})
    server.redirect("/hop", f"http://rebind.test:{server.port}/final")
    server.page("/final", "must not be served", "text/plain")
    tool = WebFetchTool(allow_private_networks=LOOPBACK_ONLY, resolver=resolver)
    with pytest.raises(ToolDenied) as info:
        await tool.fetch(f"http://rebind.test:{server.port}/hop")
    assert "'rebind.test' resolved to 10.0.0.7, a private address (RFC 1918)" in str(info.value)
    assert resolver.calls == ["rebind.test", "rebind.test"]  # once per connection
    assert [s.path for s in server.seen] == ["/hop"]
    assert server.seen[0].headers["host"] == f"rebind.test:{server.port}"


async def test_dns_rebinding_public_then_private_connects_only_to_checked_ips() -> None:
    """The inner transport receives the checked IP literal, so nothing resolves again."""
    resolver = FakeResolver({"rebind.test": [["93.184.216.34"], ["127.0.0.1"]]})
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(302, headers={"location": "https://rebind.test/next"})

    tool = WebFetchTool(resolver=resolver, transport=httpx.MockTransport(handler))
    with pytest.raises(ToolDenied, match=r"resolved to 127\.0\.0\.1, a loopback"):
        await tool.fetch("https://rebind.test/")
    assert len(sent) == 1
    assert sent[0].url.host == "93.184.216.34"  # pinned to the address that was checked
    assert sent[0].headers["host"] == "rebind.test"
    assert sent[0].extensions["sni_hostname"] == "rebind.test"  # TLS verifies the name
    assert resolver.calls == ["rebind.test", "rebind.test"]


async def test_tls_is_verified_against_the_name_not_the_pinned_address(
    tls_server: LocalServer, tls_files: TlsFiles
) -> None:
    tls_server.page("/", "over tls", "text/plain")
    resolver = FakeResolver({"secure.test": [["127.0.0.1"]], "other.test": [["127.0.0.1"]]})
    tool = WebFetchTool(
        allow_private_networks=LOOPBACK_ONLY,
        resolver=resolver,
        transport=httpx.AsyncHTTPTransport(verify=tls_files.client),
    )
    page = await tool.fetch(f"https://secure.test:{tls_server.port}/")
    assert page.body == b"over tls"
    assert tls_server.seen[0].headers["host"] == f"secure.test:{tls_server.port}"
    # same address, another name: the certificate does not match, so nothing is fetched
    with pytest.raises(ToolOther, match="CERTIFICATE_VERIFY_FAILED"):
        await tool.fetch(f"https://other.test:{tls_server.port}/")
    assert len(tls_server.seen) == 1


async def test_ipv6_addresses_are_pinned_in_brackets() -> None:
    resolver = FakeResolver({"v6.example": [["2606:4700::1111"]]})
    sent: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, text="v6", headers={"content-type": "text/plain"})

    tool = WebFetchTool(resolver=resolver, transport=httpx.MockTransport(record))
    page = await tool.fetch("http://v6.example:8080/p?q=1")
    assert page.body == b"v6" and page.final_url == "http://v6.example:8080/p?q=1"
    assert str(sent[0].url) == "http://[2606:4700::1111]:8080/p?q=1"
    assert sent[0].headers["host"] == "v6.example:8080"


async def test_next_checked_address_is_tried_when_one_fails() -> None:
    resolver = FakeResolver({"multi.example": [["93.184.216.34", "93.184.216.35"]]})
    tried: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        tried.append(request.url.host)
        if request.url.host == "93.184.216.34":
            raise httpx.ConnectError("refused", request=request)
        return httpx.Response(200, text="ok", headers={"content-type": "text/plain"})

    page = await WebFetchTool(resolver=resolver, transport=httpx.MockTransport(handler)).fetch(
        "http://multi.example/"
    )
    assert page.body == b"ok"
    assert tried == ["93.184.216.34", "93.184.216.35"]


async def test_unresolvable_host_is_a_tool_error() -> None:
    with pytest.raises(ToolOther, match=r"could not resolve host 'nowhere\.test'"):
        await WebFetchTool(resolver=FakeResolver({})).fetch("http://nowhere.test/")


async def test_guarded_transport_without_policy_passes_through() -> None:
    sent: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(204)

    inner = httpx.MockTransport(record)
    transport = GuardedTransport(policy=None, resolver=FakeResolver({}), inner=inner)
    async with httpx.AsyncClient(transport=transport) as client:
        resp = await client.get("http://anything.test/x")
    assert resp.status_code == 204 and sent[0].url.host == "anything.test"


# ---------------------------------------------------------------------- scheme and hosts


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://example.com/x", "gopher://127.0.0.1:70/", "data:,hi"]
)
async def test_only_http_and_https(url: str) -> None:
    with pytest.raises((ToolDenied, InvalidArgs)) as info:
        await WebFetchTool().invoke(tool_ctx(), {"url": url})
    if isinstance(info.value, ToolDenied):
        assert "is not allowed (only http, https)" in str(info.value)


async def test_redirect_to_another_scheme_is_denied(server: LocalServer) -> None:
    server.redirect("/r", "file:///etc/passwd")
    tool = WebFetchTool(allow_private_networks=LOOPBACK_ONLY)
    with pytest.raises(ToolDenied, match=r"file:/+etc/passwd: scheme 'file' is not allowed"):
        await tool.fetch(server.url("/r"))


async def test_url_without_scheme_is_invalid_args() -> None:
    with pytest.raises(InvalidArgs, match="no scheme"):
        await WebFetchTool().invoke(tool_ctx(), {"url": "example.com/page"})


async def test_deny_list_blocks_before_connecting(server: LocalServer) -> None:
    tool = WebFetchTool(deny_hosts=["127.0.0.1"], allow_private_networks=LOOPBACK_ONLY)
    with pytest.raises(ToolDenied, match=r"host '127\.0\.0\.1' is on the deny list"):
        await tool.fetch(server.url("/"))
    assert server.seen == []


async def test_allow_list_admits_matching_hosts_only(server: LocalServer) -> None:
    resolver = FakeResolver({"www.site.test": [["127.0.0.1"]], "evil.test": [["127.0.0.1"]]})
    server.page("/ok.txt", "fine", "text/plain")
    server.redirect("/away", f"http://evil.test:{server.port}/ok.txt")
    tool = WebFetchTool(
        allow_hosts=["*.site.test"], allow_private_networks=LOOPBACK_ONLY, resolver=resolver
    )
    page = await tool.fetch(f"http://www.site.test:{server.port}/ok.txt")
    assert page.body == b"fine"
    with pytest.raises(ToolDenied, match=r"host 'evil\.test' is not on the allow list"):
        await tool.fetch(f"http://www.site.test:{server.port}/away")
    assert resolver.calls.count("evil.test") == 0
    assert "Only these hosts may be fetched: *.site.test" in tool.description
