"""Misbehaving stdio MCP servers for the robustness tests: ``python bad_server.py MODE``.

JSON-RPC is spoken by hand (no SDK), so each mode can break the protocol on purpose. Every
mode answers ``initialize`` and ``tools/list`` (one tool, ``echo``) correctly unless its
name says otherwise; ``tools/call`` echoes ``arguments.text``.

Modes:
    badline   before every answer: one line that is not UTF-8, then one that is not JSON
    noinit    reads requests, never answers (not even ``initialize``)
    wrongid   answers ``tools/call`` with an id no request carries, never the right one
    flood     on ``tools/call``: 64 MiB of non-JSON lines on stdout and stderr, then the answer
    bigline   on ``tools/call``: a single 80 MiB line without a newline, then hangs
    big       ``tools/call`` answers with a 10 MB text
    dies      answers the first ``tools/call``; on the second writes ``fatal: out of cheese``
              to stderr and exits with code 7
    midcall   exits with code 5 on ``tools/call`` without answering

With ``HELIKON_ONCE=<path>`` in the environment, a start finding ``<path>`` writes
``refusing to start again`` to stderr and exits with code 9 (else it creates the file):
a server that cannot be restarted.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

MODE = sys.argv[1]
OUT = sys.stdout.buffer
TOOL = {
    "name": "echo",
    "description": "Echo the text back.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
}


def send(obj: dict[str, Any]) -> None:
    if MODE == "badline":
        OUT.write(b"\xff\xfe\xfd not utf-8 \xc3\x28\n")
        OUT.write(b"this is not json {\n")
    OUT.write(json.dumps(obj).encode() + b"\n")
    OUT.flush()


def answer(msg: dict[str, Any], result: dict[str, Any]) -> None:
    send({"jsonrpc": "2.0", "id": msg["id"], "result": result})


def text(t: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": t}]}


def main() -> None:
    once = os.environ.get("HELIKON_ONCE")
    if once:
        if os.path.exists(once):
            os.write(2, b"refusing to start again\n")
            os._exit(9)
        open(once, "w").close()
    calls = 0
    for raw in sys.stdin.buffer:
        msg = json.loads(raw)
        method = msg.get("method")
        if "id" not in msg or MODE == "noinit":
            continue
        if method == "initialize":
            answer(
                msg,
                {
                    "protocolVersion": msg["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": f"bad-{MODE}", "version": "0"},
                },
            )
        elif method == "tools/list":
            answer(msg, {"tools": [TOOL]})
        elif method == "tools/call":
            calls += 1
            arg = str((msg["params"].get("arguments") or {}).get("text", ""))
            if MODE == "wrongid":
                send({"jsonrpc": "2.0", "id": 987654, "result": text(arg)})
            elif MODE == "flood":
                junk = b"x" * 1023 + b"\n"
                for _ in range(64 * 1024):
                    OUT.write(junk)
                    os.write(2, junk)
                answer(msg, text(arg))
            elif MODE == "bigline":
                OUT.write(b"y" * (80 * 1024 * 1024))
                OUT.flush()
                time.sleep(60)
            elif MODE == "big":
                answer(msg, text("z" * 10_000_000))
            elif MODE == "dies" and calls >= 2:
                os.write(2, b"fatal: out of cheese\n")
                os._exit(7)
            elif MODE == "midcall":
                os._exit(5)
            else:
                answer(msg, text(arg))
        else:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": msg["id"],
                    "error": {"code": -32601, "message": f"no method {method}"},
                }
            )


if __name__ == "__main__":
    main()
