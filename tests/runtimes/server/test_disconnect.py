"""A client that goes away while its request body is read: one clean log line, no traceback."""

from __future__ import annotations

import asyncio
import logging

import pytest

from helikon.runtimes.server import AgentServer

from .conftest import BOUND, Live, calc_agent


async def send_part_of_a_body(port: int, path: str) -> None:
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "Content-Length: 100\r\n\r\n".encode()
        + b'{"input": '
    )
    await writer.drain()
    await asyncio.sleep(0.05)  # the server is reading the body now
    writer.close()
    await writer.wait_closed()


@pytest.mark.parametrize("path", ["/agents/calc/runs?stream=sse", "/agents/calc/runs?mode=async"])
async def test_a_client_leaving_mid_body_logs_one_line(
    path: str, caplog: pytest.LogCaptureFixture
) -> None:
    server = AgentServer([calc_agent()])
    # uvicorn's own loggers do not propagate, and it configures them when it starts
    uvicorn_log = logging.getLogger("uvicorn.error")
    with caplog.at_level(logging.INFO):
        async with Live(server):
            caplog.clear()  # the server's "ready" line
            uvicorn_log.addHandler(caplog.handler)
            try:
                assert server.port is not None
                await send_part_of_a_body(server.port, path)
                async with asyncio.timeout(BOUND):
                    while not caplog.records:
                        await asyncio.sleep(0.01)
                await asyncio.sleep(0.1)  # room for a traceback, were one logged
            finally:
                uvicorn_log.removeHandler(caplog.handler)
    (line,) = [r for r in caplog.records if r.name == "helikon.server"]
    assert line.levelno == logging.INFO and line.exc_info is None
    assert line.getMessage() == (
        f"client disconnected while sending the request body of POST {path.split('?')[0]} "
        "(10 of 100 bytes read)"
    )
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert len(server.runs) == 0
