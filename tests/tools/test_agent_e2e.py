"""An agent end to end: a scripted model drives Read/Write/Edit/Bash on an OS-sandboxed
workspace, and the example under examples/explore_sandbox runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from helikon import Agent, RunContext
from helikon.testing import Call, MockModel, Text
from helikon.tools import BashTool, EditTool, OsSandboxBackend, ReadTool, Sandbox, WriteTool

from .conftest import IS_ROOT, needs_command_policy, needs_os_sandbox, run_as

REPO = Path(__file__).resolve().parents[2]


def _outputs(events: list[Any]) -> dict[str, tuple[str, bool]]:
    out = {}
    for e in events:
        if e.type == "tool_output_item":
            text = "".join(getattr(p, "text", "") for p in e.item.content)
            out[e.item.call_id] = (text, e.item.is_error)
    return out


@needs_os_sandbox
@needs_command_policy  # the run's permission pipeline checks Bash/Write/Edit with it
async def test_agent_uses_the_toolset_in_an_os_sandbox(ws: dict[str, Path]) -> None:
    root, outside = ws["root"], ws["outside"]
    sb = Sandbox.open(root)
    model = MockModel(
        [
            [Call("w", "Write", {"path": "src/calc.py", "content": "def f(x):\n    return x\n"})],
            [
                Call(
                    "e",
                    "Edit",
                    {"path": "src/calc.py", "old_string": "return x", "new_string": "return 2 * x"},
                )
            ],
            [Call("r", "Read", {"path": "src/calc.py"})],
            [
                Call(
                    "b",
                    "Bash",
                    {"command": "cd src && python3 -c 'import calc; print(calc.f(21))'"},
                )
            ],
            [Call("x", "Bash", {"command": f"cat {outside}/secret.txt"})],
            [Call("y", "Read", {"path": f"{outside}/secret.txt"})],
            [Call("z", "Write", {"path": "../outside/pwned.txt", "content": "x"})],
            [Text("done: f doubles now")],
        ]
    )
    agent = Agent(
        name="e2e",
        model=model,
        instructions="Use the tools.",
        tools=[
            ReadTool(sb),
            WriteTool(sb),
            EditTool(sb),
            BashTool(OsSandboxBackend(sb, run_as=run_as(), timeout=20)),
        ],
    )
    # Inline Python (`python3 -c 'import calc; …'`) is not analysable, so the built-in guards
    # would ask; this test is about the sandbox, so they are off.
    ctx: RunContext[Any] = RunContext.ephemeral().without_default_guards()
    result = await agent.run("Make f double its input and show it works.", ctx)
    model.assert_exhausted()
    assert result.final_output == "done: f doubles now"
    out = _outputs(result.events)
    assert out["w"] == ("Created src/calc.py (23 bytes, 2 lines)", False)
    assert out["e"] == ("Edited src/calc.py: replaced 1 occurrence (line 2)", False)
    assert out["r"] == ("     1\tdef f(x):\n     2\t    return 2 * x", False)
    assert out["b"] == ("exit code: 0\nstdout:\n42\nstderr: (empty)", False)
    text, is_error = out["x"]
    assert not is_error  # a failed command is a result, not a tool error
    assert text.startswith("exit code: 1\nstdout: (empty)\nstderr:\n")
    assert "secret.txt: Permission denied" in text
    assert out["y"] == (
        f"denied: {outside}/secret.txt: absolute path outside the sandbox root {sb.root}",
        True,
    )
    assert out["z"][1] is True
    assert out["z"][0].startswith("denied: ../outside/pwned.txt: '..' components")
    assert (root / "src/calc.py").read_text() == "def f(x):\n    return 2 * x\n"
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    # the model saw the containment label in the Bash tool's description
    tools = {t.name: t for t in model.requests[0].tools}
    assert "os-sandbox (landlock+seccomp)" in tools["Bash"].description


@needs_command_policy
def test_example_runs_and_shows_containment() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "examples/explore_sandbox/main.py")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO / "examples/explore_sandbox",
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "→ Edit(" in out
    assert "← Edited app.py: replaced 1 occurrence (line 4)" in out
    assert "total: 12" in out
    assert "[model] Fixed total() in app.py" in out
    assert "✗ denied: /etc/os-release: absolute path outside the sandbox root" in out
    if "os-sandbox (landlock+seccomp)" in out:
        assert "/etc/shadow: Permission denied" in out
        assert "PermissionError" in out
    else:
        assert "Falling back to HostBackend by explicit choice" in out
    if IS_ROOT:
        assert "running as root requires" not in out  # the example passes run_as
