"""An in-process stand-in for the Acme API (an ``httpx.MockTransport`` handler): no network."""

from __future__ import annotations

import json

import httpx

ANSWER = ["Hello", ", ", "world."]


def acme_api(request: httpx.Request) -> httpx.Response:
    """Answer like the Acme API: 401 without the key, a scripted answer otherwise."""
    if request.headers.get("authorization") != "Bearer acme-test-key":
        body = {"error": {"code": "bad_key", "message": "unknown key"}}
        return httpx.Response(401, json=body)
    sent = json.loads(request.content)
    closing = {
        "id": "cmpl_42",
        "model": f"{sent['model']}-2025-01",
        "stop": "end",
        "usage": {"in": 7, "out": 3},
    }
    if not sent["stream"]:
        return httpx.Response(200, json={**closing, "text": "".join(ANSWER)})
    lines = [json.dumps({"delta": part}) for part in ANSWER] + [json.dumps(closing)]
    return httpx.Response(200, text="\n".join(lines) + "\n")
