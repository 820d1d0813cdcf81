"""Child process for the process-restart check: ``python -m helikon.sessions.testkit._child
MODULE:FUNCTION SESSION_ID write|read``.

``write`` appends the restart sample; ``read`` reads the log. Either prints the events as one
JSON line and exits at once with ``os._exit`` (no cleanup: committed data must already be
durable, exactly as after a crash).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import sys
from typing import Any

from helikon.sessions.testkit.samples import every_event_type


async def _main(spec: str, sid: str, mode: str) -> list[dict[str, Any]]:
    module, _, name = spec.partition(":")
    opener = getattr(importlib.import_module(module), name)
    session = await opener(sid)
    if mode == "write":
        await session.append(every_event_type("restart"))
    events = await session.events()
    return [e.model_dump(mode="json") for e in events]


def main(argv: list[str]) -> None:
    """Run the child (see the module docstring)."""
    spec, sid, mode = argv
    try:
        out = asyncio.run(_main(spec, sid, mode))
    except BaseException as exc:
        sys.stderr.write(f"{type(exc).__name__}: {exc}\n")
        sys.stderr.flush()
        os._exit(1)
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
