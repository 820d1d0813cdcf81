"""EgressProxy on a loopback port: real curl and a raw SOCKS5 client against real origins."""

from __future__ import annotations

import shutil
import socket
import struct
import subprocess
import threading
from collections.abc import Iterator

import pytest

from helikon.core.events import NetworkAccess
from helikon.tools.egress import EgressProxy, NetworkPolicy, ProxyThread, StaticResolver
from tests.tools.egress.servers import ORIGIN_BODY, origin

CURL = shutil.which("curl")
needs_curl = pytest.mark.skipif(CURL is None, reason="curl is not installed")


class Harness:
    def __init__(self, port: int, events: list[NetworkAccess]) -> None:
        self.port = port
        self.events = events

    def curl(self, *args: str) -> subprocess.CompletedProcess[str]:
        assert CURL is not None
        return subprocess.run(
            [CURL, "-sS", "--max-time", "10", "--noproxy", "", *args],
            capture_output=True,
            text=True,
            timeout=20,
            env={"PATH": "/usr/bin:/bin"},
        )


@pytest.fixture
def proxy() -> Iterator[Harness]:
    events: list[NetworkAccess] = []
    lock = threading.Lock()

    def sink(e: NetworkAccess) -> None:
        with lock:
            events.append(e)

    policy = NetworkPolicy(
        allow_domains=["pypi.test", "*.hosted.test", "rebind.test"],
        deny_domains=["bad.hosted.test"],
        allow_addresses=["127.0.0.1/32"],
    )
    resolver = StaticResolver(
        {
            "pypi.test": "127.0.0.1",
            "files.hosted.test": "127.0.0.1",
            "bad.hosted.test": "127.0.0.1",
            "rebind.test": ["127.0.0.2", "169.254.169.254"],
            "other.test": "127.0.0.1",
        }
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    thread = ProxyThread(EgressProxy(policy, resolver=resolver, on_event=sink), sock)
    try:
        yield Harness(port, events)
    finally:
        thread.close()


@needs_curl
def test_http_forward_reaches_an_allowed_name(proxy: Harness) -> None:
    with origin() as (port, seen):
        r = proxy.curl("-x", f"http://127.0.0.1:{proxy.port}", f"http://pypi.test:{port}/")
    assert r.stdout.encode() == ORIGIN_BODY, r.stderr
    assert seen == ["/"]
    (e,) = proxy.events
    assert (e.host, e.port, e.verdict, e.rule, e.protocol, e.address) == (
        "pypi.test",
        port,
        "allow",
        "allow_domains:pypi.test",
        "http",
        "127.0.0.1",
    )


@needs_curl
def test_connect_tunnel_reaches_a_wildcard_name(proxy: Harness) -> None:
    with origin() as (port, _):
        r = proxy.curl(
            "-p", "-x", f"http://127.0.0.1:{proxy.port}", f"http://files.hosted.test:{port}/"
        )
    assert r.stdout.encode() == ORIGIN_BODY, r.stderr
    assert [(e.protocol, e.rule) for e in proxy.events] == [
        ("connect", "allow_domains:*.hosted.test")
    ]


@needs_curl
@pytest.mark.parametrize("scheme", ["socks5h", "socks5"])
def test_socks5_reaches_an_allowed_name(proxy: Harness, scheme: str) -> None:
    # socks5h sends the name; socks5 makes curl resolve locally (it cannot resolve
    # pypi.test, so --resolve hands it 127.0.0.1 and the proxy sees a literal).
    with origin() as (port, _):
        extra = [] if scheme == "socks5h" else ["--resolve", f"pypi.test:{port}:127.0.0.1"]
        r = proxy.curl(
            *extra, "-x", f"{scheme}://127.0.0.1:{proxy.port}", f"http://pypi.test:{port}/"
        )
    assert r.stdout.encode() == ORIGIN_BODY, r.stderr
    expected = "allow_domains:pypi.test" if scheme == "socks5h" else "allow_addresses:127.0.0.1/32"
    assert [(e.protocol, e.rule) for e in proxy.events] == [("socks5", expected)]


@needs_curl
@pytest.mark.parametrize(
    ("host", "rule"),
    [
        ("other.test", "not_allowed"),
        ("bad.hosted.test", "deny_domains:bad.hosted.test"),
        ("127.0.0.2", "ip_literal"),
        ("2130706434", "ip_literal"),
        ("[::1]", "ip_literal"),
        ("rebind.test", "address"),
        ("unknown.hosted.test", "resolve"),
    ],
)
@pytest.mark.parametrize("mode", ["http", "connect", "socks5h"])
def test_refusals_say_why(proxy: Harness, host: str, rule: str, mode: str) -> None:
    with origin() as (port, seen):
        url = f"http://{host}:{port}/"
        if mode == "http":
            r = proxy.curl("-i", "-x", f"http://127.0.0.1:{proxy.port}", url)
        elif mode == "connect":
            r = proxy.curl("-p", "-x", f"http://127.0.0.1:{proxy.port}", url)
        else:
            r = proxy.curl("-x", f"socks5h://127.0.0.1:{proxy.port}", url)
    assert seen == []
    assert ORIGIN_BODY.decode() not in r.stdout
    if mode == "http":
        assert r.stdout.startswith("HTTP/1.1 403 Forbidden")
        assert f"X-Helikon-Egress-Rule: {rule}" in r.stdout
    else:
        assert r.returncode != 0
    (e,) = proxy.events
    assert (e.verdict, e.rule) == ("deny", rule)
    if rule == "address":
        assert e.address == "127.0.0.2"
        assert e.reason.startswith("rebind.test resolved to 127.0.0.2, a loopback address")


def _socks_greet(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"\x05\x01\x00")
    assert s.recv(2) == b"\x05\x00"
    return s


def test_socks5_udp_associate_and_bind_are_refused(proxy: Harness) -> None:
    for command in (3, 2):
        s = _socks_greet(proxy.port)
        s.sendall(b"\x05" + bytes([command]) + b"\x00\x03\x09pypi.test" + struct.pack("!H", 53))
        assert s.recv(10)[:2] == b"\x05\x07"
        s.close()
    assert [(e.rule, e.port) for e in proxy.events] == [("socks_command", 53)] * 2
    assert "SOCKS5 UDP ASSOCIATE is refused" in proxy.events[0].reason


def test_socks5_without_no_auth_method_is_refused(proxy: Harness) -> None:
    s = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
    s.sendall(b"\x05\x01\x02")
    assert s.recv(2) == b"\x05\xff"
    s.close()


def test_malformed_and_non_http_requests_get_400(proxy: Harness) -> None:
    for request in [b"GARBAGE\r\n\r\n", b"GET /relative HTTP/1.1\r\nHost: pypi.test\r\n\r\n"]:
        s = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
        s.sendall(request)
        assert s.recv(100).startswith(b"HTTP/1.1 400 Bad Request")
        s.close()
    assert proxy.events == []


@needs_curl
def test_forwarded_request_drops_proxy_headers(proxy: Harness) -> None:
    captured: list[bytes] = []
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]

    def serve() -> None:
        conn, _ = srv.accept()
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(4096)
        captured.append(data)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        conn.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    r = proxy.curl(
        "-x",
        f"http://127.0.0.1:{proxy.port}",
        "-H",
        "Proxy-Authorization: Basic c2VjcmV0",
        f"http://pypi.test:{port}/path?q=1",
    )
    t.join(5)
    srv.close()
    assert r.stdout == "ok"
    head = captured[0].decode()
    assert head.startswith("GET /path?q=1 HTTP/1.1\r\n")
    assert "Proxy-Authorization" not in head and "Proxy-Connection" not in head
    assert "Connection: close" in head


@needs_curl
def test_runtime_serves_a_host_port_and_attributes_events_per_command() -> None:
    from helikon.tools.egress.runtime import EgressRuntime, denial_notes, proxy_env

    policy = NetworkPolicy(allow_domains=["pypi.test"], allow_addresses=["127.0.0.1/32"])
    rt = EgressRuntime(policy, resolver=StaticResolver({"pypi.test": "127.0.0.1"}))
    port = rt.start_host()
    try:
        env = proxy_env(port)
        assert env["ALL_PROXY"] == env["all_proxy"] == f"socks5h://127.0.0.1:{port}"
        first, env1 = rt.open_command()
        second, env2 = rt.open_command()
        assert first != second and env1["HTTP_PROXY"] != env2["HTTP_PROXY"]
        assert env1["ALL_PROXY"].startswith(f"socks5h://{first}:")
        with origin() as (oport, seen):
            h = Harness(port, [])
            ok = h.curl("-x", env1["HTTP_PROXY"], f"http://pypi.test:{oport}/")
            no = h.curl("-x", env2["ALL_PROXY"], f"http://other.test:{oport}/")
            anon = h.curl("-f", "-x", env["HTTP_PROXY"], f"http://pypi.test:{oport}/")
        assert ok.stdout.encode() == ORIGIN_BODY and no.returncode != 0
        assert anon.returncode != 0 and "407" in anon.stderr
        assert seen == ["/"]
        one, two = rt.close_command(first), rt.close_command(second)
        anonymous = ("pypi.test", "deny", "proxy_auth")  # goes to both: no credential
        assert [(e.host, e.verdict, e.rule) for e in one] == [
            ("pypi.test", "allow", "allow_domains:pypi.test"),
            anonymous,
        ]
        assert [(e.host, e.verdict, e.rule) for e in two] == [
            ("other.test", "deny", "not_allowed"),
            anonymous,
        ]
        assert rt.close_command(first) == ()
        assert denial_notes(two)[0] == (
            f"network: other.test:{oport} refused by the egress proxy (not_allowed: other.test "
            "is not in allow_domains ['pypi.test'])"
        )
    finally:
        rt.close()
        rt.close()


@pytest.mark.parametrize(
    "junk",
    [
        b"GET http://pypi.test/ HTTP/1.1\r\n" + b"X-Pad: " + b"a" * 70_000,  # head over 64 KiB
        b"\x05",  # SOCKS greeting cut short
        b"\x05\x01\x00\x05\x01\x00\x09",  # unknown address type
        b"\x05\x01\x00\x05\x01\x00\x03\xffpypi",  # domain length past the data
        b"CONNECT pypi.test HTTP/1.1\r\n\r\n",  # no port
        b"CONNECT [::1 HTTP/1.1\r\n\r\n",
        b"GET http://pypi.test:99999/ HTTP/1.1\r\n\r\n",
        b"\xff\xfe\r\n\r\n",
    ],
)
def test_malformed_input_never_reaches_an_origin_and_the_proxy_keeps_serving(
    proxy: Harness, junk: bytes
) -> None:
    s = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
    try:
        s.sendall(junk)
        s.shutdown(socket.SHUT_WR)
        reply = b""
        while chunk := s.recv(4096):
            reply += chunk
    except (ConnectionResetError, BrokenPipeError):
        reply = b""
    finally:
        s.close()
    assert not reply or reply.startswith((b"HTTP/1.1 400", b"\x05\x00"))
    assert [e for e in proxy.events if e.verdict == "allow"] == []
    # still serving
    s = _socks_greet(proxy.port)
    s.close()


def _small_proxy(**kw: object) -> tuple[ProxyThread, int]:
    policy = NetworkPolicy(allow_domains=["pypi.test"], allow_addresses=["127.0.0.1/32"])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    resolver = StaticResolver({"pypi.test": "127.0.0.1"})
    proxy = EgressProxy(policy, resolver=resolver, **kw)  # type: ignore[arg-type]
    return ProxyThread(proxy, sock), sock.getsockname()[1]


def _closed_by_peer(conn: socket.socket, within: float) -> bool:
    """Whether the proxy closes ``conn`` within ``within`` seconds (replies are skipped)."""
    conn.settimeout(within)
    try:
        while conn.recv(64):
            pass
        return True
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


@needs_curl
@pytest.mark.parametrize(
    "idle",
    [
        b"",  # connects and sends nothing
        b"\x05",  # a SOCKS5 greeting cut short
        b"\x05\x01\x00\x05\x01\x00\x03",  # a SOCKS5 request cut short
        b"CONNECT pypi.test:80 HTTP/1.1\r\n",  # an HTTP head never finished
    ],
)
def test_connections_past_the_cap_are_closed_and_idle_ones_time_out(idle: bytes) -> None:
    # S5 of the attack findings: idle connections held by a sandboxed command must not
    # exhaust this process's descriptors.
    thread, port = _small_proxy(max_connections=3, head_timeout=0.5)
    try:
        held = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
        for conn in held:
            conn.sendall(idle) if idle else None
        extra = [socket.create_connection(("127.0.0.1", port)) for _ in range(4)]
        assert all(_closed_by_peer(c, 2.0) for c in extra)  # closed at once, past the cap
        assert thread.proxy.active == 3 and thread.proxy.dropped == 4
        assert all(_closed_by_peer(c, 3.0) for c in held)  # idle past head_timeout
        with origin() as (oport, seen):
            ok = Harness(port, []).curl(
                "-x", f"http://127.0.0.1:{port}", f"http://pypi.test:{oport}/"
            )
        assert ok.stdout.encode() == ORIGIN_BODY and seen == ["/"]
        for conn in held + extra:
            conn.close()
    finally:
        thread.close()


def test_bad_limits_are_refused() -> None:
    from helikon.errors import ConfigError

    policy = NetworkPolicy(allow_domains=["pypi.test"])
    for kw in ({"max_connections": 0}, {"max_connections": True}, {"head_timeout": 0}):
        with pytest.raises(ConfigError, match="max_connections must be"):
            EgressProxy(policy, **kw)  # type: ignore[arg-type]
