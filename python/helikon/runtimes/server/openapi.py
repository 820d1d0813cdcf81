"""The OpenAPI 3.1 schema served at ``GET /openapi.json``."""

from __future__ import annotations

from typing import Any

from helikon.core.events import event_adapter

__all__ = ["openapi_schema"]

_REF = "#/components/schemas/{model}"


def _json(schema: str) -> dict[str, Any]:
    return {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema}"}}}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": _json("Error")}


def openapi_schema(agents: list[str]) -> dict[str, Any]:
    """The schema; ``name`` path parameters enumerate ``agents``.

    Example:
        >>> openapi_schema(["calc"])["openapi"]
        '3.1.0'
    """
    events = event_adapter.json_schema(ref_template=_REF, by_alias=True)
    schemas: dict[str, Any] = dict(events.pop("$defs", {}))
    schemas["AgentEvent"] = events
    schemas["Error"] = {
        "type": "object",
        "required": ["error", "message"],
        "properties": {
            "error": {"type": "string", "description": "machine-readable code"},
            "message": {"type": "string"},
            "field": {"type": ["string", "null"], "description": "the offending field (400)"},
            "agents": {"type": "array", "items": {"type": "string"}},
        },
    }
    schemas["RunRequest"] = {
        "type": "object",
        "oneOf": [
            {"required": ["input"], "properties": {"input": {"type": "string"}}},
            {
                "required": ["messages"],
                "properties": {"messages": {"type": "array", "items": {"type": "object"}}},
            },
        ],
    }
    schemas["Run"] = {
        "type": "object",
        "properties": {
            "run_id": {"type": "string", "format": "uuid"},
            "agent": {"type": "string"},
            "session_id": {"type": ["string", "null"]},
            "status": {
                "enum": [
                    "queued",
                    "running",
                    "needs_approval",
                    "completed",
                    "failed",
                    "incomplete",
                ],
            },
            "pending": {"type": "array", "items": {"$ref": "#/components/schemas/PendingCall"}},
            "output": {"type": "string"},
            "usage": {},
            "error": {},
            "events": {"type": "array", "items": {"$ref": "#/components/schemas/AgentEvent"}},
        },
    }
    schemas["RunAccepted"] = {
        "type": "object",
        "properties": {
            "run_id": {"type": "string", "format": "uuid"},
            "agent": {"type": "string"},
            "session_id": {"type": ["string", "null"]},
            "status": {"type": "string"},
            "run_url": {"type": "string"},
            "events_url": {"type": "string"},
        },
    }
    schemas["Approvals"] = {
        "type": "object",
        "properties": {
            "run_id": {"type": "string", "format": "uuid"},
            "status": {"type": "string"},
            "pending": {"type": "array", "items": {"$ref": "#/components/schemas/PendingCall"}},
        },
    }
    decision = {
        "oneOf": [
            {
                "type": "object",
                "required": ["decision"],
                "properties": {
                    "decision": {"const": "approve"},
                    "remember": {"type": "boolean"},
                },
            },
            {
                "type": "object",
                "required": ["decision", "reason"],
                "properties": {
                    "decision": {"const": "deny"},
                    "reason": {"type": "string", "minLength": 1},
                    "remember": {"type": "boolean"},
                },
            },
            {
                "type": "object",
                "required": ["decision", "args"],
                "properties": {"decision": {"const": "edit"}, "args": {"type": "object"}},
            },
        ]
    }
    schemas["ApprovalDecisions"] = {
        "type": "object",
        "required": ["decisions"],
        "properties": {
            "decisions": {
                "type": "object",
                "description": "call id -> decision, one for every waiting call",
                "additionalProperties": decision,
            }
        },
    }
    name = {"name": "name", "in": "path", "required": True, "schema": {"enum": agents}}
    run_id = {"name": "run_id", "in": "path", "required": True, "schema": {"type": "string"}}
    run_id_header = {"X-Run-Id": {"schema": {"type": "string", "format": "uuid"}}}
    sse = {"text/event-stream": {"schema": {"type": "string"}}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "helikon agent server", "version": "1"},
        "paths": {
            "/agents/{name}/runs": {
                "post": {
                    "summary": "Start a run (one-shot JSON, ?stream=sse, or ?mode=async)",
                    "parameters": [
                        name,
                        {"name": "stream", "in": "query", "schema": {"enum": ["sse", "true"]}},
                        {"name": "mode", "in": "query", "schema": {"enum": ["async"]}},
                        {"name": "X-Session-Id", "in": "header", "schema": {"type": "string"}},
                    ],
                    "requestBody": {"required": True, "content": _json("RunRequest")},
                    "responses": {
                        "200": {
                            "description": "the finished run, or its SSE event stream",
                            "headers": run_id_header,
                            "content": {**_json("Run"), **sse},
                        },
                        "202": {
                            "description": "accepted (mode=async)",
                            "headers": run_id_header,
                            "content": _json("RunAccepted"),
                        },
                        "400": _error("invalid body or query"),
                        "401": _error("rejected by auth"),
                        "404": _error("unknown agent"),
                        "413": _error("body too large"),
                        "500": _error("the run could not start"),
                        "503": _error("too many runs in flight"),
                    },
                }
            },
            "/agents/{name}/runs/{run_id}": {
                "get": {
                    "summary": "A run's status and events so far",
                    "parameters": [name, run_id],
                    "responses": {
                        "200": {"description": "the run", "content": _json("Run")},
                        "404": _error("unknown agent or run"),
                    },
                }
            },
            "/agents/{name}/runs/{run_id}/approvals": {
                "get": {
                    "summary": "The calls a run paused for (status needs_approval) waits on",
                    "parameters": [name, run_id],
                    "responses": {
                        "200": {"description": "the waiting calls", "content": _json("Approvals")},
                        "404": _error("unknown agent or run"),
                    },
                },
                "post": {
                    "summary": "Answer every waiting call; the same run continues",
                    "parameters": [name, run_id],
                    "requestBody": {"required": True, "content": _json("ApprovalDecisions")},
                    "responses": {
                        "202": {
                            "description": "accepted; the run's event streams go on",
                            "content": _json("RunAccepted"),
                        },
                        "400": _error("invalid body, or decisions that do not fit"),
                        "404": _error("unknown agent or run"),
                        "409": _error(
                            "the run does not wait for approval, or another answer (here or "
                            "on a server sharing the paused-run store) took it first"
                        ),
                        "500": _error("the paused-run store failed (paused_runs_unavailable)"),
                    },
                },
            },
            "/agents/{name}/runs/{run_id}/events": {
                "get": {
                    "summary": "Replay then tail a run's events (WebSocket, or SSE)",
                    "parameters": [
                        name,
                        run_id,
                        {"name": "Last-Event-ID", "in": "header", "schema": {"type": "integer"}},
                    ],
                    "responses": {
                        "101": {"description": "WebSocket: one text frame per event"},
                        "200": {"description": "SSE stream", "content": sse},
                        "404": _error("unknown agent or run"),
                    },
                }
            },
        },
        "components": {"schemas": schemas},
    }
