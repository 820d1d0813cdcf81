"""NetworkPolicy on the OS sandbox, end to end on this kernel: real curl and pip inside the
sandbox reach an allowed name (mapped to 127.0.0.1 by the proxy's test resolver) on real
local servers; a refused name, a direct connect, UDP, a raw IP and DNS all fail; the events
say why, in the result, the agent's event stream and the trace span."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helikon import Agent, NetworkAccess, RunContext
from helikon.core.permissions import PermissionMode
from helikon.errors import ConfigError, SandboxUnavailable
from helikon.testing import Call, MockModel, Text
from helikon.tools import BashTool, Isolation, OsSandboxBackend, Sandbox
from helikon.tools.egress import NetworkPolicy, StaticResolver
from tests.tools.conftest import IS_ROOT, needs_os_sandbox, run_as
from tests.tools.egress.servers import ORIGIN_BODY, origin, received, udp_listener

pytestmark = needs_os_sandbox

CURL = shutil.which("curl")
HAS_PIP = (
    subprocess.run(["/usr/bin/python3", "-m", "pip", "--version"], capture_output=True).returncode
    == 0
)
needs_curl = pytest.mark.skipif(
    CURL is None, reason="curl is not installed (scripts/test installs it)"
)
needs_pip = pytest.mark.skipif(
    not HAS_PIP, reason="/usr/bin/python3 has no pip (scripts/test installs python3-pip)"
)

POLICY = NetworkPolicy(
    allow_domains=["pypi.test", "*.hosted.test"],
    deny_domains=["bad.hosted.test"],
    allow_addresses=["127.0.0.1/32"],
)
RESOLVER = StaticResolver(
    {"pypi.test": "127.0.0.1", "bad.hosted.test": "127.0.0.1", "other.test": "127.0.0.1"}
)


@pytest.fixture
def backend(ws: dict[str, Path]) -> Iterator[OsSandboxBackend]:
    b = OsSandboxBackend(
        Sandbox.open(ws["root"]), run_as=run_as(), network=POLICY, network_resolver=RESOLVER
    )
    try:
        yield b
    finally:
        b.close()


def _rules(events: tuple[NetworkAccess, ...]) -> list[tuple[str, str, str]]:
    return [(e.host, e.verdict, e.rule) for e in events]


def test_guarantees_say_proxied_and_name_the_mechanism(backend: OsSandboxBackend) -> None:
    g = backend.guarantees()
    assert g.network is Isolation.PROXIED
    assert backend.egress is not None
    expected = "namespace" if IS_ROOT else "landlock_port"
    assert backend.egress.mechanism == expected
    port = backend.egress.port
    assert any(f"{port}" in n and n.startswith("network: ") for n in g.notes), g.notes
    desc = BashTool(backend).description
    assert "egress proxy" in desc and "reachable domains: pypi.test, *.hosted.test" in desc


@needs_curl
async def test_curl_reaches_an_allowed_name_by_every_proxy_protocol(
    backend: OsSandboxBackend,
) -> None:
    with origin() as (port, seen):
        url = f"http://pypi.test:{port}/"
        r = await backend.run(
            f'curl -sS {url}; curl -sS -p {url}; curl -sS --proxy "$ALL_PROXY" {url}'
        )
    assert r.exit_code == 0, r
    assert r.stdout == ORIGIN_BODY.decode() * 3
    assert seen == ["/", "/", "/"]
    assert [(e.protocol, e.verdict, e.rule, e.address) for e in r.network] == [
        ("http", "allow", "allow_domains:pypi.test", "127.0.0.1"),
        ("connect", "allow", "allow_domains:pypi.test", "127.0.0.1"),
        ("socks5", "allow", "allow_domains:pypi.test", "127.0.0.1"),
    ]
    assert r.notes == ()


@needs_pip
async def test_pip_download_from_a_local_index(backend: OsSandboxBackend) -> None:
    with origin() as (port, seen):
        r = await backend.run(
            "python3 -m pip download --no-deps --no-cache-dir --disable-pip-version-check "
            f"--index-url http://pypi.test:{port}/simple/ --trusted-host pypi.test "
            "-d dl tinypkg && ls dl",
            timeout=60,
        )
    assert r.exit_code == 0, r
    assert r.stdout.strip().endswith("tinypkg-1.0-py3-none-any.whl")
    assert "/files/tinypkg-1.0-py3-none-any.whl" in seen
    assert {(e.host, e.verdict) for e in r.network} == {("pypi.test", "allow")}


@needs_curl
@pytest.mark.parametrize(
    ("target", "host", "rule"),
    [
        ("other.test", "other.test", "not_allowed"),
        ("bad.hosted.test", "bad.hosted.test", "deny_domains:bad.hosted.test"),
        ("127.0.0.2", "127.0.0.2", "ip_literal"),
        ("2130706434", "127.0.0.2", "ip_literal"),  # curl normalizes the spelling itself
        ("0x7f.0.0.2", "127.0.0.2", "ip_literal"),
        ("[::1]", "::1", "ip_literal"),
        ("169.254.169.254", "169.254.169.254", "ip_literal"),
        ("nowhere.hosted.test", "nowhere.hosted.test", "resolve"),
    ],
)
async def test_refused_destinations_fail_and_the_events_say_why(
    backend: OsSandboxBackend, target: str, host: str, rule: str
) -> None:
    with origin() as (port, seen):
        # -p (CONNECT) and plain forwarding both refused; curl exits non-zero on the 403s.
        r = await backend.run(
            f"curl -sS -f http://{target}:{port}/; echo rc=$?; "
            f"curl -sS -p http://{target}:{port}/; echo rc=$?"
        )
    assert seen == []
    assert "rc=0" not in r.stdout and ORIGIN_BODY.decode() not in r.stdout
    assert [(e.host.strip("[]"), e.verdict, e.rule) for e in r.network] == [
        (host, "deny", rule)
    ] * 2
    assert any(f"refused by the egress proxy ({rule}:" in n for n in r.notes), r.notes


@needs_curl
async def test_a_literal_allowed_by_address_is_reached(backend: OsSandboxBackend) -> None:
    with origin() as (port, seen):
        r = await backend.run(f"curl -sS http://127.0.0.1:{port}/")
    assert (r.stdout, seen) == (ORIGIN_BODY.decode(), ["/"])
    assert _rules(r.network) == [("127.0.0.1", "allow", "allow_addresses:127.0.0.1/32")]


@needs_curl
async def test_direct_connect_udp_and_dns_fail_without_reaching_anything(
    backend: OsSandboxBackend,
) -> None:
    with origin() as (port, seen), udp_listener() as (uport, usock):
        r = await backend.run(
            f"curl -sS --noproxy '*' --max-time 3 http://127.0.0.1:{port}/; echo direct=$?; "
            f"curl -sS --noproxy '*' --max-time 3 http://pypi.test:{port}/; echo dns=$?; "
            "python3 -c 'import socket\n"
            "try:\n"
            "    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            f'    u.sendto(b"x", ("127.0.0.1", {uport}))\n'
            'except OSError as e: print("udp", e.errno)\n'
            "try:\n"
            '    socket.getaddrinfo("pypi.org", 443)\n'
            'except OSError as e: print("getaddrinfo failed")\''
        )
        assert received(usock) is None
    assert seen == []
    assert "direct=7" in r.stdout  # curl: could not connect
    assert "dns=6" in r.stdout  # curl: could not resolve host
    assert "udp 1" in r.stdout  # EPERM from seccomp
    assert "getaddrinfo failed" in r.stdout
    assert r.network == ()  # nothing reached the proxy


def _span_exporter(monkeypatch: pytest.MonkeyPatch) -> Any:
    """An in-memory exporter behind a tracer provider seen by helikon for this test only
    (the process-wide provider can be set once, and tests/test_tracing.py sets its own)."""
    sdk = pytest.importorskip("opentelemetry.sdk.trace")
    from opentelemetry import trace
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = sdk.TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: provider)
    monkeypatch.setattr(trace, "get_tracer", lambda name, *a, **k: provider.get_tracer(name))
    return exporter


@needs_curl
async def test_network_access_events_reach_the_agent_stream_and_the_span(
    backend: OsSandboxBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    exporter = _span_exporter(monkeypatch)
    with origin() as (port, _):
        model = MockModel(
            [
                [
                    Call(
                        "c1",
                        "Bash",
                        {"command": f"curl -sS http://pypi.test:{port}/ http://other.test:{port}/"},
                    )
                ],
                [Text("done")],
            ]
        )
        agent = Agent(name="net", model=model, instructions="x", tools=[BashTool(backend)])
        ctx: RunContext[None] = RunContext.ephemeral().with_permission_mode(PermissionMode.BYPASS)
        result = await agent.run("fetch", ctx=ctx)
    events: list[Any] = [e for e in result.events if e.type == "network_access"]
    assert [(e.host, e.verdict, e.rule, e.call_id) for e in events] == [
        ("pypi.test", "allow", "allow_domains:pypi.test", "c1"),
        ("other.test", "deny", "not_allowed", "c1"),
    ]
    output = next(e for e in result.events if e.type == "tool_output_item")
    text = output.item.content[0].text
    assert "network: other.test:" in text and "refused by the egress proxy (not_allowed:" in text
    # each event precedes the call's output in the stream
    order = [e.type for e in result.events]
    assert order.index("network_access") < order.index("tool_output_item")
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "execute_tool Bash"]
    assert [
        (e.name, e.attributes["helikon.host"], e.attributes["helikon.rule"]) for e in span.events
    ] == [
        ("network_access", "pypi.test", "allow_domains:pypi.test"),
        ("network_access", "other.test", "not_allowed"),
    ]
    assert span.events[0].attributes["helikon.port"] == port


def test_bad_combinations_are_refused(ws: dict[str, Path]) -> None:
    sb = Sandbox.open(ws["root"])
    with pytest.raises(ConfigError, match="exclude each other"):
        OsSandboxBackend(sb, run_as=run_as(), network=POLICY, allow_network=True)
    with pytest.raises(ConfigError, match="must be a NetworkPolicy"):
        OsSandboxBackend(sb, run_as=run_as(), network={"allow_domains": ["x"]})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="egress_mechanism must be one of"):
        OsSandboxBackend(sb, run_as=run_as(), network=POLICY, egress_mechanism="vpn")  # type: ignore[arg-type]
    with pytest.raises(SandboxUnavailable, match="allow_unix_sockets cannot be enforced"):
        OsSandboxBackend(
            sb, run_as=run_as(), network=NetworkPolicy(allow_unix_sockets=["/run/x.sock"])
        )


@needs_curl
@pytest.mark.skipif(not IS_ROOT, reason="private_mounts needs the host to run as root")
async def test_egress_works_inside_private_mounts(ws: dict[str, Path]) -> None:
    b = OsSandboxBackend(
        Sandbox.open(ws["root"]),
        run_as=run_as(),
        private_mounts=True,
        network=POLICY,
        network_resolver=RESOLVER,
    )
    try:
        with origin() as (port, seen):
            r = await b.run(
                f"curl -sS http://pypi.test:{port}/; curl -sS --noproxy '*' --max-time 3 "
                f"http://127.0.0.1:{port}/; echo direct=$?"
            )
    finally:
        b.close()
    assert r.stdout == ORIGIN_BODY.decode() + "direct=7\n", r
    assert seen == ["/"]
    assert _rules(r.network) == [("pypi.test", "allow", "allow_domains:pypi.test")]


@pytest.mark.skipif(not IS_ROOT, reason="needs a refusal: root without run_as")
def test_best_available_backend_never_falls_back_to_the_host_with_a_network_policy(
    ws: dict[str, Path],
) -> None:
    from helikon.tools import best_available_backend

    with pytest.raises(SandboxUnavailable) as info:
        best_available_backend(Sandbox.open(ws["root"]), network=POLICY)
    assert str(info.value).startswith(
        "network=NetworkPolicy(...) needs an OS sandbox and there is none: the OS sandbox is "
        "unavailable: unsupported: running as root requires run_as=(uid, gid)"
    )
    choice = best_available_backend(
        Sandbox.open(ws["root"]), run_as=run_as(), network=POLICY, network_resolver=RESOLVER
    )
    try:
        assert choice.backend.guarantees().network is Isolation.PROXIED
    finally:
        assert isinstance(choice.backend, OsSandboxBackend)
        choice.backend.close()


def test_a_dropped_backend_stops_its_proxy(ws: dict[str, Path]) -> None:
    import gc
    import threading

    def proxies() -> int:
        return sum(t.name == "helikon-egress-proxy" for t in threading.enumerate())

    before = proxies()
    b = OsSandboxBackend(
        Sandbox.open(ws["root"]), run_as=run_as(), network=POLICY, network_resolver=RESOLVER
    )
    assert proxies() == before + 1
    del b
    gc.collect()
    assert proxies() == before


# ------------------------------------------------------------- per-command attribution

_WAIT = "for i in $(seq 400); do [ -f {f} ] && break; sleep 0.05; done"


@needs_curl
async def test_two_commands_at_once_each_see_only_their_own_events(
    backend: OsSandboxBackend,
) -> None:
    import asyncio

    # Each command waits for the other to have started before it connects, and for the
    # other's connection to be done before it ends: their lifetimes overlap for certain.
    def command(me: str, other: str, host: str, port: int) -> str:
        return (
            f"touch {me}.start; {_WAIT.format(f=other + '.start')}; "
            f"curl -sS -f http://{host}:{port}/; curl -sS -p -f http://{host}:{port}/; "
            f"touch {me}.done; {_WAIT.format(f=other + '.done')}; echo {me}"
        )

    with origin() as (port, seen):
        a, b = await asyncio.gather(
            backend.run(command("a", "b", "pypi.test", port), timeout=30),
            backend.run(command("b", "a", "other.test", port), timeout=30),
        )
    assert a.stdout.endswith("a\n") and b.stdout.endswith("b\n"), (a, b)
    assert seen == ["/", "/"]
    assert [(e.host, e.verdict, e.rule, e.protocol) for e in a.network] == [
        ("pypi.test", "allow", "allow_domains:pypi.test", "http"),
        ("pypi.test", "allow", "allow_domains:pypi.test", "connect"),
    ]
    assert [(e.host, e.verdict, e.rule, e.protocol) for e in b.network] == [
        ("other.test", "deny", "not_allowed", "http"),
        ("other.test", "deny", "not_allowed", "connect"),
    ]
    assert a.notes == () and len(b.notes) == 1


@needs_curl
@pytest.mark.parametrize(
    "proxy",
    [
        "http://127.0.0.1:{port}",  # no credential (HTTP forwarding and CONNECT)
        "http://c1:forged-token@127.0.0.1:{port}",  # a guessed one
        "socks5h://127.0.0.1:{port}",  # SOCKS5 without the username/password method
        "socks5h://c1:forged-token@127.0.0.1:{port}",  # SOCKS5 with a guessed one
    ],
)
async def test_a_request_without_this_commands_credential_is_refused(
    backend: OsSandboxBackend, proxy: str
) -> None:
    assert backend.egress is not None
    url = proxy.format(port=backend.egress.port)
    with origin() as (port, seen):
        r = await backend.run(
            f"curl -sS -f --proxy {url} http://pypi.test:{port}/; echo rc=$?; "
            f"curl -sS -f -p --proxy {url} http://pypi.test:{port}/; echo rc=$?"
        )
    assert seen == []
    assert "rc=0" not in r.stdout and ORIGIN_BODY.decode() not in r.stdout
    assert {(e.host, e.verdict, e.rule) for e in r.network} == {("pypi.test", "deny", "proxy_auth")}
    assert any(
        "(proxy_auth: the request carried no valid helikon proxy credential" in n for n in r.notes
    ), r.notes


@needs_curl
async def test_a_finished_commands_credential_no_longer_works(
    backend: OsSandboxBackend,
) -> None:
    first = await backend.run('printf %s "$HTTP_PROXY"')
    assert first.stdout.startswith("http://c") and "@127.0.0.1:" in first.stdout
    with origin() as (port, seen):
        r = await backend.run(
            f"echo $HTTP_PROXY; curl -sS -f --proxy {first.stdout} http://pypi.test:{port}/; "
            f"echo rc=$?; curl -sS -f http://pypi.test:{port}/"
        )
    new_proxy = r.stdout.splitlines()[0]
    assert new_proxy != first.stdout  # every command gets a fresh credential
    assert seen == ["/"]  # only the request with the current credential got through
    assert [(e.verdict, e.rule) for e in r.network] == [
        ("deny", "proxy_auth"),
        ("allow", "allow_domains:pypi.test"),
    ]


# ------------------------------------------------------------- per-command connection cap

#: Opens 10 CONNECT tunnels to pypi.test with this command's credential and holds them,
#: then says how many the proxy granted; waits for the other command before it ends.
HOG = """\
import base64, os, socket, sys, time, urllib.parse
proxy = urllib.parse.urlsplit(os.environ["HTTP_PROXY"])
auth = base64.b64encode(f"{proxy.username}:{proxy.password}".encode()).decode()
ok = refused = 0
held = []
for _ in range(10):
    s = socket.create_connection((proxy.hostname, proxy.port), timeout=5)
    try:  # a connection closed at once by the proxy may also be reset
        s.sendall(f"CONNECT pypi.test:{sys.argv[1]} HTTP/1.1\\r\\n"
                  f"Proxy-Authorization: Basic {auth}\\r\\n\\r\\n".encode())
        line = s.recv(4096)
    except ConnectionError:
        line = b""
    if line.startswith(b"HTTP/1.1 200"):
        ok += 1
    else:
        refused += 1
    held.append(s)
print(f"ok={ok} refused={refused}", flush=True)
open("a.ready", "w").close()
for _ in range(400):
    if os.path.exists("b.done"):
        break
    time.sleep(0.05)
"""


@needs_curl
@pytest.mark.parametrize("mechanism", ["auto", "landlock_port"])
async def test_one_command_cannot_take_every_proxy_connection(
    ws: dict[str, Path], mechanism: Any
) -> None:
    import asyncio

    policy = NetworkPolicy(
        allow_domains=["pypi.test"], allow_addresses=["127.0.0.1/32"], max_connections_per_command=4
    )
    b = OsSandboxBackend(
        Sandbox.open(ws["root"]),
        run_as=run_as(),
        network=policy,
        network_resolver=RESOLVER,
        egress_mechanism=mechanism,
    )
    (ws["root"] / "hog.py").write_text(HOG)
    try:
        with origin() as (port, seen):
            hog, other = await asyncio.gather(
                b.run(f"python3 hog.py {port}", timeout=30),
                b.run(
                    f"{_WAIT.format(f='a.ready')}; curl -sS http://pypi.test:{port}/; touch b.done",
                    timeout=30,
                ),
            )
    finally:
        b.close()
    assert hog.stdout == "ok=4 refused=6\n", hog
    assert [e.rule for e in hog.network].count("allow_domains:pypi.test") == 4
    limits = [e for e in hog.network if e.rule == "connection_limit"]
    assert limits and all(e.verdict == "deny" for e in limits)
    assert "max_connections_per_command" in limits[0].reason
    assert any("(connection_limit: the command already has 4 connections" in n for n in hog.notes)
    # The other command, at the same time, still gets through.
    assert other.exit_code == 0 and other.stdout == ORIGIN_BODY.decode(), other
    assert [(e.host, e.rule) for e in other.network] == [("pypi.test", "allow_domains:pypi.test")]
    assert seen == ["/"]


def test_bad_connection_caps_are_refused() -> None:
    for bad in (0, 257, True, "4"):
        with pytest.raises(ConfigError, match=r"max_connections_per_command: .* is not an int"):
            NetworkPolicy(max_connections_per_command=bad)  # type: ignore[arg-type]
    assert (
        NetworkPolicy.from_dict({"max_connections_per_command": 8}).to_dict()[
            "max_connections_per_command"
        ]
        == 8
    )
