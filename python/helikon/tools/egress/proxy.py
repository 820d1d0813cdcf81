""":class:`EgressProxy`: the only way out of a sandbox with a :class:`NetworkPolicy`.

One asyncio server speaks three client protocols on the same socket, told apart by the
first byte:

* SOCKS5 (``0x05``): the no-auth method, and username/password (RFC 1929) when the proxy
  identifies clients; the ``CONNECT`` command with an IPv4, IPv6 or domain address.
  ``BIND`` and ``UDP ASSOCIATE`` are refused (reply ``0x07``), so no UDP
  and no DNS leaves through the proxy. A refused destination gets reply ``0x02``
  ("connection not allowed by ruleset").
* HTTP ``CONNECT host:port`` (what ``HTTPS_PROXY`` clients send): ``200`` then a byte relay.
* Plain-HTTP forwarding (``GET http://host/path``, what ``HTTP_PROXY`` clients send): the
  request goes upstream in origin form with ``Connection: close`` and without ``Proxy-*``
  headers; one request per client connection.

For each request the proxy checks the name with :meth:`NetworkPolicy.check_target`, resolves
it itself with its :class:`~helikon.tools.web.resolve.Resolver` (the sandboxed command has no
resolver of its own), checks every address with :meth:`NetworkPolicy.check_address`, and
connects only to an address that passed. A refusal is answered ``403`` (HTTP) or ``0x02``
(SOCKS5) with the reason, and every decision, allowed or refused, is reported to
``on_event`` as a :class:`~helikon.core.events.NetworkAccess`.

Identifying clients (``identify``): the sandbox gives each command its own proxy credential
(``http://USER:TOKEN@127.0.0.1:PORT`` in its proxy variables), so each decision can be
attributed to the command that caused it even when commands run at once. With
``identify`` set, a request must carry a credential it accepts (HTTP ``Proxy-Authorization:
Basic``, SOCKS5 username/password); one without is refused (``407`` with a ``Basic``
challenge, or SOCKS reply ``0x02``) with rule ``proxy_auth``, and ``on_client_event`` gets
each event with the client's tag (``None`` when it did not identify).

The proxy serves a listening socket it is handed (:meth:`EgressProxy.serve`, a loopback
port), or the bridge from the sandbox's per-command network namespaces
(:meth:`EgressProxy.serve_bridge`): a unix socket on which each connection arrives as a
descriptor with the tag of the command that made it.

Connection limits: at most ``max_connections`` client connections at once in all, and at
most ``max_connections_per_command`` per command, so one command cannot starve another.
A bridged connection counts against its command from the moment it is accepted; a
connection on a loopback port counts once its request names a credential (before that, only
``head_timeout`` bounds it). One past a command's limit is refused with rule
``connection_limit`` (``403`` / SOCKS reply ``0x02``, or closed at once when bridged).
:class:`ProxyThread` runs it on its own event loop in a daemon thread that helikon owns, so
it keeps serving whichever event loop (or thread) runs the sandboxed command.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import ipaddress
import logging
import socket
import struct
import threading
from collections.abc import Callable
from concurrent.futures import Future

from helikon.core.events import NetworkAccess
from helikon.errors import ConfigError
from helikon.tools.egress.policy import (
    DEFAULT_MAX_CONNECTIONS_PER_COMMAND,
    NetworkDecision,
    NetworkPolicy,
    literal_ip,
)
from helikon.tools.web.resolve import Resolver, SystemResolver

__all__ = ["EgressProxy", "ProxyThread"]

_log = logging.getLogger("helikon.tools.egress")

_HEAD_LIMIT = 64 * 1024
_CHUNK = 64 * 1024
_HOP_HEADERS = frozenset(
    {b"connection", b"keep-alive", b"proxy-connection", b"proxy-authorization", b"te", b"upgrade"}
)

EventSink = Callable[[NetworkAccess], None]
#: ``(event, tag)``: the tag ``identify`` gave the client, or ``None``.
ClientEventSink = Callable[[NetworkAccess, "str | None"], None]
#: ``(username, password) -> tag`` for a credential the proxy accepts, else ``None``.
Identify = Callable[[str, str], "str | None"]

_LIMIT_REASON = (
    "the command already has {n} connections open through the egress proxy "
    "(max_connections_per_command); close some first"
)

_AUTH_REFUSAL = NetworkDecision(
    "deny",
    "proxy_auth",
    "the request carried no valid helikon proxy credential (each sandboxed command gets its "
    "own in HTTP_PROXY, HTTPS_PROXY and ALL_PROXY; keep the user:password part of the URL)",
)


class _Refused(Exception):
    """A request refused before any upstream connection (carries the decision)."""

    def __init__(self, decision: NetworkDecision, address: str | None = None) -> None:
        super().__init__(decision.reason)
        self.decision = decision
        self.address = address


class _Slot:
    """The command one client connection is counted against (``None``: not yet known)."""

    __slots__ = ("tag",)

    def __init__(self, tag: str | None = None) -> None:
        self.tag = tag


class _BadRequest(Exception):
    """The client did not speak a protocol the proxy understands."""


def _split_host_port(authority: str, default_port: int | None) -> tuple[str, int]:
    text = authority.strip()
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            raise _BadRequest(f"bad authority {authority!r}")
        host, rest = text[1:end], text[end + 1 :]
        port_text = rest[1:] if rest.startswith(":") else ""
    elif text.count(":") == 1:
        host, port_text = text.split(":")
    else:
        host, port_text = text, ""
    if not port_text:
        if default_port is None:
            raise _BadRequest(f"no port in {authority!r}")
        return host, default_port
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise _BadRequest(f"bad port in {authority!r}")
    return host, int(port_text)


class EgressProxy:
    """An HTTP (CONNECT and forward) and SOCKS5 proxy enforcing a :class:`NetworkPolicy`.

    Args:
        policy: what may be reached.
        resolver: resolves names (default: the system resolver). Tests pass a table
            resolver mapping a test name to ``127.0.0.1``.
        on_event: called with a :class:`NetworkAccess` for every decision (from the proxy's
            event loop; it must not block).
        connect_timeout: seconds allowed for one upstream connection.
        identify: when given, every request must carry a credential it maps to a tag
            (``(username, password) -> tag | None``); others are refused (rule
            ``proxy_auth``).
        on_client_event: like ``on_event``, with the client's tag as a second argument.
        max_connections: client connections served at once (default 256); one past it is
            closed at once, so a command cannot exhaust this process's descriptors (each
            client holds at most two: its own and the upstream one).
        head_timeout: seconds a client has to finish its request (SOCKS5 handshake or HTTP
            head) after connecting (default 10); an idle connection is then closed.
        max_connections_per_command: client connections one command (one tag) may have open
            at once (default :data:`DEFAULT_MAX_CONNECTIONS_PER_COMMAND`); see the module
            doc.

    Raises:
        ConfigError: ``policy`` is not a :class:`NetworkPolicy` or ``resolver`` has no
            ``resolve`` method.
    """

    def __init__(
        self,
        policy: NetworkPolicy,
        *,
        resolver: Resolver | None = None,
        on_event: EventSink | None = None,
        connect_timeout: float = 10.0,
        identify: Identify | None = None,
        on_client_event: ClientEventSink | None = None,
        max_connections: int = 256,
        head_timeout: float = 10.0,
        max_connections_per_command: int | None = None,
    ) -> None:
        if not isinstance(policy, NetworkPolicy):
            raise ConfigError(f"EgressProxy needs a NetworkPolicy, got {type(policy).__name__}")
        if resolver is not None and not isinstance(resolver, Resolver):
            raise ConfigError("EgressProxy.resolver must have an async resolve(host, port)")
        self.policy = policy
        self.resolver: Resolver = resolver or SystemResolver()
        self.on_event = on_event
        self.connect_timeout = float(connect_timeout)
        self.identify = identify
        self.on_client_event = on_client_event
        if isinstance(max_connections, bool) or not isinstance(max_connections, int):
            raise ConfigError("EgressProxy.max_connections must be an int >= 1")
        if max_connections < 1 or not head_timeout > 0:
            raise ConfigError(
                "EgressProxy.max_connections must be >= 1 and head_timeout > 0 seconds"
            )
        self.max_connections = max_connections
        per = (
            DEFAULT_MAX_CONNECTIONS_PER_COMMAND
            if max_connections_per_command is None
            else max_connections_per_command
        )
        if isinstance(per, bool) or not isinstance(per, int) or per < 1:
            raise ConfigError("EgressProxy.max_connections_per_command must be an int >= 1")
        self.max_connections_per_command = per
        self.head_timeout = float(head_timeout)
        self.active = 0
        #: Open connections per command tag.
        self.active_by_tag: dict[str, int] = {}
        self._bridged: set[asyncio.Task[None]] = set()
        self._limited: set[str] = set()
        #: Connections closed because ``max_connections`` were being served.
        self.dropped = 0

    async def serve(self, sock: socket.socket) -> asyncio.Server:
        """Start serving on a listening TCP socket (it is put in non-blocking mode)."""
        sock.setblocking(False)
        return await asyncio.start_server(self._client, sock=sock, limit=_HEAD_LIMIT)

    async def serve_bridge(self, bridge: socket.socket, tag_of: Callable[[int], str]) -> None:
        """Serve the connections that arrive over ``bridge`` (a ``SOCK_SEQPACKET`` unix
        socket; each message is one connection's descriptor with its command's number as 8
        little-endian bytes, which ``tag_of`` turns into the command's tag). Returns once
        reading has started; the bridge is served until :meth:`stop_bridge` or until its
        other end closes."""
        bridge.setblocking(False)
        loop = asyncio.get_running_loop()
        loop.add_reader(bridge.fileno(), self._bridge_ready, bridge, tag_of)

    def stop_bridge(self, bridge: socket.socket) -> None:
        """Stop reading ``bridge`` (from the proxy's loop)."""
        with contextlib.suppress(ValueError, OSError):
            asyncio.get_running_loop().remove_reader(bridge.fileno())

    def _bridge_ready(self, bridge: socket.socket, tag_of: Callable[[int], str]) -> None:
        for _ in range(64):
            try:
                data, fds, _flags, _addr = socket.recv_fds(bridge, 8, 4)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self.stop_bridge(bridge)
                return
            if not data and not fds:  # the other end is gone
                self.stop_bridge(bridge)
                return
            conns = [socket.socket(fileno=fd) for fd in fds]
            tag = tag_of(int.from_bytes(data, "little")) if len(data) == 8 else None
            for conn in conns:
                if tag is None:
                    conn.close()
                    continue
                task = asyncio.get_running_loop().create_task(self._bridged_client(conn, tag))
                self._bridged.add(task)
                task.add_done_callback(self._bridged.discard)

    async def _bridged_client(self, conn: socket.socket, tag: str) -> None:
        if self.active_by_tag.get(tag, 0) >= self.max_connections_per_command:
            self._limit_refused(tag)
            conn.close()
            return
        try:
            reader, writer = await asyncio.open_connection(sock=conn, limit=_HEAD_LIMIT)
        except OSError:
            conn.close()
            return
        await self._client(reader, writer, tag)

    def _limit_refused(self, tag: str) -> None:
        """Record a connection refused for its command's limit (one event per command while
        it stays at the limit)."""
        if tag in self._limited:
            return
        self._limited.add(tag)
        n = self.max_connections_per_command
        decision = NetworkDecision("deny", "connection_limit", _LIMIT_REASON.format(n=n))
        self._emit("", 0, decision, "connection", None, tag)

    def _count(self, tag: str) -> bool:
        """Count one more connection for ``tag``; False (nothing counted) at its limit."""
        n = self.active_by_tag.get(tag, 0)
        if n >= self.max_connections_per_command:
            return False
        self.active_by_tag[tag] = n + 1
        return True

    def _uncount(self, tag: str) -> None:
        n = self.active_by_tag.get(tag, 0) - 1
        if n > 0:
            self.active_by_tag[tag] = n
        else:
            self.active_by_tag.pop(tag, None)
            self._limited.discard(tag)

    def _emit(
        self,
        host: str,
        port: int,
        decision: NetworkDecision,
        protocol: str,
        address: str | None,
        tag: str | None = None,
    ) -> None:
        if self.on_event is None and self.on_client_event is None:
            return
        event = NetworkAccess(
            host=host,
            port=port,
            verdict=decision.verdict,
            rule=decision.rule,
            reason=decision.reason,
            address=address,
            protocol=protocol,
        )
        if self.on_event is not None:
            self.on_event(event)
        if self.on_client_event is not None:
            self.on_client_event(event, tag)

    def _tag(self, username: str | None, password: str | None) -> str | None:
        if self.identify is None or username is None or password is None:
            return None
        return self.identify(username, password)

    async def _open(
        self,
        host: str,
        port: int,
        protocol: str,
        tag: str | None = None,
        slot: _Slot | None = None,
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Check, resolve, check each address, connect. Raises :class:`_Refused` or OSError."""
        if self.identify is not None and tag is None:
            self._emit(host, port, _AUTH_REFUSAL, protocol, None, tag)
            raise _Refused(_AUTH_REFUSAL)
        if slot is not None and slot.tag is None and tag is not None:
            if not self._count(tag):
                n = self.max_connections_per_command
                limit = NetworkDecision("deny", "connection_limit", _LIMIT_REASON.format(n=n))
                self._emit(host, port, limit, protocol, None, tag)
                raise _Refused(limit)
            slot.tag = tag
        decision = self.policy.check_target(host, port)
        if not decision.allowed:
            self._emit(host, port, decision, protocol, None, tag)
            raise _Refused(decision)
        if decision.rule.startswith("allow_addresses:"):
            addresses = [str(literal_ip(host))]
        else:
            try:
                resolved = await asyncio.wait_for(
                    self.resolver.resolve(host.rstrip(".").lower(), port), self.connect_timeout
                )
            except (OSError, TimeoutError) as exc:
                failed = NetworkDecision("deny", "resolve", f"{host} did not resolve: {exc}")
                self._emit(host, port, failed, protocol, None, tag)
                raise _Refused(failed) from None
            addresses = []
            first_refusal: NetworkDecision | None = None
            refused_at: str | None = None
            for ip in resolved:
                verdict = self.policy.check_address(host, ip)
                if verdict.allowed:
                    addresses.append(str(ip))
                elif first_refusal is None:
                    first_refusal, refused_at = verdict, str(ip)
            if not addresses:
                refusal = first_refusal or NetworkDecision(
                    "deny", "resolve", f"{host} resolved to no address"
                )
                self._emit(host, port, refusal, protocol, refused_at, tag)
                raise _Refused(refusal, refused_at)
        last: OSError | None = None
        for address in addresses:
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(address, port, limit=_CHUNK), self.connect_timeout
                )
            except (OSError, TimeoutError) as exc:
                last = exc if isinstance(exc, OSError) else OSError(f"timed out: {exc}")
                continue
            self._emit(host, port, decision, protocol, address, tag)
            return reader, writer
        raise last or OSError(f"could not connect to {host}:{port}")

    async def _client(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        bridged: str | None = None,
    ) -> None:
        slot = _Slot()
        if bridged is not None:
            if not self._count(bridged):
                self._limit_refused(bridged)
                with contextlib.suppress(OSError, RuntimeError):
                    writer.close()
                return
            slot.tag = bridged
        if self.active >= self.max_connections:
            if slot.tag is not None:
                self._uncount(slot.tag)
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 1000 == 0:
                _log.warning(
                    "egress proxy: %d connections open (max_connections); closed %d more",
                    self.active,
                    self.dropped,
                )
            with contextlib.suppress(OSError, RuntimeError):
                writer.close()
            return
        self.active += 1
        try:
            async with asyncio.timeout(self.head_timeout) as deadline:
                first = await reader.readexactly(1)
                if first == b"\x05":
                    await self._socks5(reader, writer, deadline, slot)
                else:
                    await self._http(first, reader, writer, deadline, slot)
        except (
            _BadRequest,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            OSError,
            TimeoutError,
        ):
            pass
        finally:
            self.active -= 1
            if slot.tag is not None:
                self._uncount(slot.tag)
            with contextlib.suppress(OSError, RuntimeError):
                writer.close()

    # ----------------------------------------------------------------------------- SOCKS5

    async def _socks5(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        deadline: asyncio.Timeout,
        slot: _Slot,
    ) -> None:
        (count,) = await reader.readexactly(1)
        methods = await reader.readexactly(count)
        tag: str | None = None
        if self.identify is not None and 2 in methods:
            # RFC 1929. A wrong credential is answered "success" here and refused at the
            # request (0x02, rule proxy_auth), so the refusal names the destination.
            writer.write(b"\x05\x02")
            (version,) = await reader.readexactly(1)
            if version != 1:
                raise _BadRequest("bad SOCKS5 auth version")
            (ulen,) = await reader.readexactly(1)
            user = (await reader.readexactly(ulen)).decode("utf-8", "replace")
            (plen,) = await reader.readexactly(1)
            password = (await reader.readexactly(plen)).decode("utf-8", "replace")
            tag = self._tag(user, password)
            writer.write(b"\x01\x00")
        elif 0 in methods:
            writer.write(b"\x05\x00")
        else:
            writer.write(b"\x05\xff")
            await writer.drain()
            return
        version, command, _rsv, atyp = await reader.readexactly(4)
        if version != 5:
            raise _BadRequest("bad SOCKS version")
        if atyp == 1:
            host = str(ipaddress.IPv4Address(await reader.readexactly(4)))
        elif atyp == 4:
            host = str(ipaddress.IPv6Address(await reader.readexactly(16)))
        elif atyp == 3:
            (length,) = await reader.readexactly(1)
            host = (await reader.readexactly(length)).decode("ascii", "replace")
        else:
            raise _BadRequest("bad SOCKS address type")
        (port,) = struct.unpack("!H", await reader.readexactly(2))
        if command != 1:
            kind = {2: "BIND", 3: "UDP ASSOCIATE"}.get(command, f"command {command}")
            refusal = NetworkDecision(
                "deny", "socks_command", f"SOCKS5 {kind} is refused; only CONNECT is proxied"
            )
            self._emit(host, port, refusal, "socks5", None, tag)
            writer.write(b"\x05\x07\x00\x01" + bytes(6))
            await writer.drain()
            return
        deadline.reschedule(None)  # the request is in; _open has its own timeouts
        try:
            up_reader, up_writer = await self._open(host, port, "socks5", tag, slot)
        except _Refused:
            writer.write(b"\x05\x02\x00\x01" + bytes(6))
            await writer.drain()
            return
        except OSError:
            writer.write(b"\x05\x05\x00\x01" + bytes(6))
            await writer.drain()
            return
        writer.write(b"\x05\x00\x00\x01" + bytes(6))
        await _relay(reader, writer, up_reader, up_writer)

    # ------------------------------------------------------------------------------- HTTP

    async def _open_http(
        self,
        writer: asyncio.StreamWriter,
        host: str,
        port: int,
        protocol: str,
        tag: str | None,
        slot: _Slot,
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        """:meth:`_open`, answering a refusal (403, or 407 for a missing credential) or a
        failed connect (502) itself."""
        try:
            return await self._open(host, port, protocol, tag, slot)
        except _Refused as exc:
            status = 407 if exc.decision is _AUTH_REFUSAL else 403
            await _reply(writer, status, exc.decision.reason, exc.decision.rule)
        except OSError as exc:
            await _reply(writer, 502, f"could not connect to {host}:{port}: {exc}")
        return None

    async def _http(
        self,
        first: bytes,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        deadline: asyncio.Timeout,
        slot: _Slot,
    ) -> None:
        head = first + await reader.readuntil(b"\r\n\r\n")
        deadline.reschedule(None)  # the head is in; _open has its own timeouts
        lines = head[:-4].split(b"\r\n")
        try:
            method, target, version = lines[0].decode("ascii").split(" ")
        except (UnicodeDecodeError, ValueError):
            await _reply(writer, 400, "malformed request line")
            return
        tag = self._tag(*_basic_credential(lines[1:]))
        if method == "CONNECT":
            try:
                host, port = _split_host_port(target, None)
            except _BadRequest as exc:
                await _reply(writer, 400, str(exc))
                return
            upstream = await self._open_http(writer, host, port, "connect", tag, slot)
            if upstream is None:
                return
            up_reader, up_writer = upstream
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await _relay(reader, writer, up_reader, up_writer)
            return
        if not target.lower().startswith("http://"):
            await _reply(writer, 400, "only absolute http:// URLs and CONNECT are proxied")
            return
        rest = target[len("http://") :]
        authority, slash, path = rest.partition("/")
        authority = authority.rsplit("@", 1)[-1]
        try:
            host, port = _split_host_port(authority, 80)
        except _BadRequest as exc:
            await _reply(writer, 400, str(exc))
            return
        upstream = await self._open_http(writer, host, port, "http", tag, slot)
        if upstream is None:
            return
        up_reader, up_writer = upstream
        out = [f"{method} {slash}{path} {version}".encode("ascii")]
        out.extend(
            line for line in lines[1:] if line.split(b":", 1)[0].strip().lower() not in _HOP_HEADERS
        )
        out.append(b"Connection: close")
        up_writer.write(b"\r\n".join(out) + b"\r\n\r\n")
        await _relay(reader, writer, up_reader, up_writer)


def _basic_credential(headers: list[bytes]) -> tuple[str | None, str | None]:
    """``(user, password)`` of a ``Proxy-Authorization: Basic`` header, else ``(None, None)``."""
    for line in headers:
        name, _, value = line.partition(b":")
        if name.strip().lower() != b"proxy-authorization":
            continue
        scheme, _, encoded = value.strip().partition(b" ")
        if scheme.lower() != b"basic":
            return None, None
        try:
            text = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None, None
        user, sep, password = text.partition(":")
        return (user, password) if sep else (None, None)
    return None, None


async def _reply(
    writer: asyncio.StreamWriter, status: int, reason: str, rule: str | None = None
) -> None:
    title = {
        400: "Bad Request",
        403: "Forbidden",
        407: "Proxy Authentication Required",
        502: "Bad Gateway",
    }[status]
    body = f"helikon egress proxy: {reason}\n".encode()
    extra = f"X-Helikon-Egress-Rule: {rule}\r\n" if rule else ""
    if status == 407:
        extra += 'Proxy-Authenticate: Basic realm="helikon egress proxy"\r\n'

    writer.write(
        f"HTTP/1.1 {status} {title}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\n{extra}Connection: close\r\n\r\n".encode()
        + body
    )
    with contextlib.suppress(ConnectionError):
        await writer.drain()


async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    try:
        while chunk := await src.read(_CHUNK):
            dst.write(chunk)
            await dst.drain()
        if dst.can_write_eof():
            dst.write_eof()
    except (ConnectionError, OSError):
        pass


async def _relay(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    up_reader: asyncio.StreamReader,
    up_writer: asyncio.StreamWriter,
) -> None:
    try:
        await writer.drain()
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            up_writer.close()


class ProxyThread:
    """An :class:`EgressProxy` served on its own event loop in a daemon thread.

    Args:
        proxy: the proxy to run.
        sock: the listening socket to serve (ownership passes to the thread).
        bridge: instead of ``sock``, the bridge to serve (see
            :meth:`EgressProxy.serve_bridge`), with ``tag_of``.
        tag_of: a connection's command number to its tag.

    Raises:
        OSError: the server could not start on ``sock``.
    """

    def __init__(
        self,
        proxy: EgressProxy,
        sock: socket.socket | None = None,
        *,
        bridge: socket.socket | None = None,
        tag_of: Callable[[int], str] = "c{}".format,
    ) -> None:
        self.proxy = proxy
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._bridge = bridge
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="helikon-egress-proxy", daemon=True
        )
        self._thread.start()
        try:
            if sock is not None:
                started: Future[asyncio.Server] = asyncio.run_coroutine_threadsafe(
                    proxy.serve(sock), self._loop
                )
                self._server = started.result(timeout=10)
            if bridge is not None:
                asyncio.run_coroutine_threadsafe(
                    proxy.serve_bridge(bridge, tag_of), self._loop
                ).result(timeout=10)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Stop serving and end the thread (idempotent)."""
        if self._loop.is_closed():
            return

        async def _stop() -> None:
            if self._server is not None:
                self._server.close()
            if self._bridge is not None:
                self.proxy.stop_bridge(self._bridge)
                self._bridge.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        if self._thread.is_alive():
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(_stop(), self._loop).result(timeout=5)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self._loop.close()
