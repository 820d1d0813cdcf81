"""What scripts/check-wheel runs inside the fresh venv that holds only the built wheel.

Checks, each failing with a message naming what broke:

1. ``helikon`` is imported from the venv (not from a source tree) and its version matches the
   wheel's metadata and the native module's;
2. a sandboxed ``BashTool`` command works and an escape is refused: on Linux under
   ``OsSandboxBackend`` (Landlock + seccomp; reading outside the workspace fails), on macOS
   under ``SeatbeltBackend`` (writing outside fails) after ``OsSandboxBackend`` refused with
   ``SandboxUnavailable``; on Windows ``OsSandboxBackend`` must refuse clearly and the file
   tools must work. Where a Linux kernel cannot enforce the sandbox, the check fails when
   ``HELIKON_REQUIRE_SANDBOX=1`` (CI) and otherwise says so and runs on ``HostBackend``.

Used by scripts/check-wheel (here) and scripts/test-installed-wheel (each wheel's runner in
.github/workflows/wheels.yml).

Usage: ``python wheel_smoke.py VENV_DIR``.
"""

from __future__ import annotations

import os
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path
from typing import Any

NOBODY = (65534, 65534)
WEAKER = ("signal_scope", "abstract_unix_scope")


def _landlock_abi() -> int:
    import json

    from helikon import _native

    abi: int = json.loads(_native.sandbox_probe())["landlock_abi"]
    return abi


def check_installed(venv: Path) -> None:
    """The imported helikon is the venv's, and its three version sources agree."""
    import helikon
    from helikon import _native

    where = Path(helikon.__file__).resolve()
    if not where.is_relative_to(venv.resolve()):
        sys.exit(f"FAIL: helikon imported from {where}, not from the venv {venv}")
    meta = version("helikon")
    if not (meta == helikon.__version__ == _native.__version__):
        sys.exit(
            f"FAIL: versions disagree: metadata {meta}, helikon.__version__ "
            f"{helikon.__version__}, native {_native.__version__}"
        )
    print(f"ok: helikon {meta} imported from {where.parent}")


def _outputs(result: Any) -> dict[str, str]:
    return {
        e.item.call_id: e.item.content[0].text
        for e in result.events
        if e.type == "tool_output_item"
    }


def _backend(sandbox: Any, run_as: tuple[int, int] | None, require: bool) -> Any:
    """The platform's OS-sandbox backend, or ``None`` where Bash has none (Windows).

    Linux: ``OsSandboxBackend``; on a kernel before 6.12 (Landlock ABI < 6, as on hosted CI
    runners) with the documented explicit ``allow_weaker`` waiver. Elsewhere
    ``OsSandboxBackend`` must refuse with ``SandboxUnavailable``; on macOS
    ``best_available_backend`` then gives Seatbelt.
    """
    from helikon.errors import SandboxUnavailable
    from helikon.tools import OsSandboxBackend, best_available_backend

    try:
        return OsSandboxBackend(sandbox, run_as=run_as)
    except SandboxUnavailable as exc:
        refusal = str(exc)
    if sys.platform == "linux":
        if _landlock_abi() in range(1, 6):
            print(f"note: {refusal}; retrying with allow_weaker={list(WEAKER)}")
            try:
                return OsSandboxBackend(sandbox, run_as=run_as, allow_weaker=WEAKER)
            except SandboxUnavailable as exc:
                refusal = str(exc)
        if require:
            sys.exit(f"FAIL: the OS sandbox is unavailable: {refusal}")
        print(f"SKIPPED (OS sandbox unavailable here: {refusal}); running on HostBackend")
        from helikon.tools import HostBackend

        return HostBackend(sandbox)
    if not refusal:
        sys.exit("FAIL: OsSandboxBackend refused without saying why")
    print(f"ok: OsSandboxBackend refuses on {sys.platform}: {refusal}")
    if os.name != "posix":
        return None
    backend = best_available_backend(sandbox, run_as=run_as).backend
    if sys.platform == "darwin" and require and not backend.guarantees().contained:
        sys.exit(f"FAIL: no Seatbelt backend on macOS: {backend.guarantees().label}")
    return backend


def check_bash_tool() -> None:
    """One command runs under the platform's OS sandbox, and an escape is refused.

    Linux: ``OsSandboxBackend`` (Landlock + seccomp); reading a file outside the workspace
    fails. macOS: ``OsSandboxBackend`` refuses with ``SandboxUnavailable`` and
    ``best_available_backend`` gives ``SeatbeltBackend``; writing outside fails. Windows:
    ``OsSandboxBackend`` refuses with ``SandboxUnavailable``; the file tools still work.
    """
    from helikon import Agent
    from helikon.testing import Call, MockModel, Text
    from helikon.tools import BashTool, ReadTool, Sandbox, WriteTool

    require = os.environ.get("HELIKON_REQUIRE_SANDBOX") == "1"
    with tempfile.TemporaryDirectory() as base:
        os.chmod(base, 0o755)
        root = Path(base) / "root"
        root.mkdir()
        outside = Path(base) / "outside.txt"
        outside.write_text("OUTSIDE-SECRET\n")
        outside.chmod(0o644)
        posix = os.name == "posix"
        run_as = NOBODY if posix and os.geteuid() == 0 else None
        if run_as is not None:
            os.chown(root, *run_as)
        sandbox = Sandbox.open(root)
        backend = _backend(sandbox, run_as, require)
        if backend is None:
            model = MockModel([
                [Call("w", "Write", {"path": "a.txt", "content": "hi\n"})],
                [Call("r", "Read", {"path": "a.txt"})],
                [Text("done")],
            ])
            agent = Agent(name="f", model=model, tools=[ReadTool(sandbox), WriteTool(sandbox)])
            out = _outputs(agent.run_sync("go"))
            if out.get("r") != "     1\thi":
                sys.exit(f"FAIL: the file tools on {sys.platform}: {out!r}")
            print("ok: Read/Write tools work; no OS sandbox for Bash on this platform")
            return
        contained = backend.guarantees().contained
        escape = f"cat {outside}" if sys.platform == "linux" else f"echo pwned > {outside}"
        model = MockModel(
            [
                [
                    Call("c1", "Bash", {"command": "echo 6x7=$((6 * 7)) > out.txt && cat out.txt"}),
                    Call("c2", "Bash", {"command": escape}),
                ],
                [Text("done")],
            ]
        )
        out = _outputs(Agent(name="sh", model=model, tools=[BashTool(backend)]).run_sync("go"))
        expected = "exit code: 0\nstdout:\n6x7=42\nstderr: (empty)"
        if out.get("c1") != expected:
            sys.exit(f"FAIL: the Bash command's output was {out.get('c1')!r}, not {expected!r}")
        escaped = "OUTSIDE-SECRET" in out["c2"] or outside.read_text() != "OUTSIDE-SECRET\n"
        if contained and (escaped or out["c2"].startswith("exit code: 0")):
            sys.exit(f"FAIL: the sandbox let a command reach outside the workspace: {out['c2']!r}")
        label = backend.guarantees().label
        verdict = "the escape was refused" if contained else "NOT contained (host backend)"
        print(f"ok: BashTool on {type(backend).__name__} ({label}); {verdict}")


def main() -> None:
    """Run the checks; exit non-zero with a FAIL line on the first that fails."""
    venv = Path(sys.argv[1])
    check_installed(venv)
    check_bash_tool()


if __name__ == "__main__":
    main()
