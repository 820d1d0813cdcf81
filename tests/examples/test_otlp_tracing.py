"""examples/otlp_tracing: the run's spans arrive at an OTLP/HTTP endpoint."""

from __future__ import annotations

import http.server
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "otlp_tracing"


def test_spans_are_exported_over_otlp_http() -> None:
    received: list[bytes] = []

    class Collector(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.append(self.rfile.read(int(self.headers["content-length"])))
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        endpoint = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
        proc = subprocess.run(
            [sys.executable, "main.py", "--endpoint", endpoint],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=EXAMPLE,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "The capital of the UK is London."
    spans = []
    for body in received:
        req = ExportTraceServiceRequest()
        req.ParseFromString(body)
        for rs in req.resource_spans:
            for ss in rs.scope_spans:
                spans.extend(ss.spans)
    names = sorted(s.name for s in spans)
    assert names == [
        "agent.turn",
        "agent.turn",
        "chat scripted",
        "chat scripted",
        "execute_tool get_capital",
        "invoke_agent capitals",
    ]
    root = next(s for s in spans if s.name == "invoke_agent capitals")
    attrs = {a.key: a.value.string_value for a in root.attributes}
    assert attrs["session.id"] == "demo-session" and attrs["user.id"] == "demo-user"
