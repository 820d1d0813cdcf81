"""An agent with Read/Write/Edit/Bash on an OS-sandboxed temporary workspace.

Runs offline on a scripted model (``helikon.testing.MockModel``) and prints every tool call
and its result. The script explores the workspace, fixes a bug with Edit, writes notes, runs
the program, and finally tries to read ``/etc/shadow``, reach the network and read a file
outside the workspace, which the sandbox refuses.

Containment: the Bash tool runs under :class:`helikon.tools.OsSandboxBackend` (Landlock +
seccomp on Linux). Building it fails closed; if this host cannot enforce it, the example
says why and then *explicitly* opts in to :class:`helikon.tools.HostBackend`, which is not
a security boundary (the escape attempts at the end then succeed, and you will see it).
Run as root, commands run as ``nobody`` (``run_as=(65534, 65534)``) and the workspace is
handed to that uid.

For a live run, replace the model with e.g. ``OpenAIModel.chat("gpt-5-mini")``
(``pip install 'helikon[openai]'``, ``OPENAI_API_KEY``).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path

from helikon import Agent, RunContext, text_of
from helikon.errors import SandboxUnavailable
from helikon.testing import Call, MockModel, Script, Text
from helikon.tools import (
    BashTool,
    EditTool,
    ExecutionBackend,
    HostBackend,
    OsSandboxBackend,
    ReadTool,
    Sandbox,
    WriteTool,
)

NOBODY = (65534, 65534)

INSTRUCTIONS = (
    "You can inspect and change the workspace with Read, Write, Edit and Bash. Paths are "
    "relative to the workspace root. Read a file before you edit it."
)

APP = """def total(prices):
    result = 0
    for p in prices:
        result = p  # bug: should add
    return result


print("total:", total([3, 4, 5]))
"""

SCRIPT: list[Script] = [
    [Text("Let me look around."), Call("c1", "Bash", {"command": "ls -la && wc -l app.py"})],
    [Call("c2", "Read", {"path": "app.py"})],
    [
        Call(
            "c3",
            "Edit",
            {
                "path": "app.py",
                "old_string": "result = p  # bug: should add",
                "new_string": "result += p",
            },
        )
    ],
    [Call("c4", "Bash", {"command": "python3 app.py"})],
    [
        Call(
            "c5",
            "Write",
            {"path": "notes/FIXES.md", "content": "- app.py: total() now adds the prices\n"},
        )
    ],
    [
        Call(
            "c6",
            "Bash",
            {
                "command": "cat /etc/shadow | head -1; "
                "python3 -c \"import socket; socket.create_connection(('127.0.0.1', 9), 1)\""
                " 2>&1 | tail -1"
            },
        )
    ],
    [Call("c7", "Read", {"path": "/etc/os-release"})],
    [Text("Fixed total() in app.py (it now prints 12) and noted it in notes/FIXES.md.")],
]


def make_workspace() -> Path:
    """A fresh temp workspace with a small buggy program, usable by the sandbox uid."""
    root = Path(tempfile.mkdtemp(prefix="explore-sandbox-"))
    root.chmod(0o755)
    (root / "app.py").write_text(APP)
    (root / "README.md").write_text("A tiny program with a bug in total().\n")
    if os.geteuid() == 0:
        for path in (root, root / "app.py", root / "README.md"):
            os.chown(path, *NOBODY)
    return root


def make_backend(sandbox: Sandbox) -> ExecutionBackend:
    """The OS sandbox, or, only with a printed explanation, the unconfined host backend."""
    run_as = NOBODY if os.geteuid() == 0 else None
    try:
        backend: ExecutionBackend = OsSandboxBackend(sandbox, run_as=run_as, timeout=30)
    except SandboxUnavailable as exc:
        print(f"[sandbox] OS sandbox unavailable: {exc}")
        print(
            "[sandbox] Falling back to HostBackend by explicit choice of this example: "
            "commands are NOT contained (they can read and write anything this process can)."
        )
        backend = HostBackend(sandbox, timeout=30)
    print(f"[sandbox] backend: {backend.guarantees().summary()}")
    return backend


async def main() -> None:
    root = make_workspace()
    try:
        sandbox = Sandbox.open(root)
        print(f"[sandbox] workspace: {sandbox.root}")
        agent = Agent(
            name="sandbox-explorer",
            model=MockModel(SCRIPT),
            instructions=INSTRUCTIONS,
            tools=[
                ReadTool(sandbox),
                WriteTool(sandbox),
                EditTool(sandbox),
                BashTool(make_backend(sandbox)),
            ],
        )
        # This demo shows what the KERNEL refuses, so the built-in guards (which would ask
        # before running inline Python such as the network probe below) are off.
        ctx = RunContext.ephemeral().without_default_guards()
        task = "Find and fix the bug in app.py, then take notes."
        async for event in agent.stream(task, ctx):
            if event.type == "message_output" and text_of(event.item.content):
                print(f"\n[model] {text_of(event.item.content)}")
            elif event.type == "tool_call_item":
                print(f"\n→ {event.item.name}({event.item.args})")
            elif event.type == "tool_output_item":
                text = "".join(getattr(p, "text", "") for p in event.item.content)
                mark = "✗" if event.item.is_error else "←"
                print(f"{mark} {text}")
            elif event.type == "run_failed":
                print(f"\n[run failed] {event.error}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
