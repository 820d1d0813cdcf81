"""The ready-made sandboxed toolset: Read, Write, Edit and Bash over a workspace directory.

* :class:`Sandbox` — a directory opened as an OS capability (cap-std); the file tools cannot
  leave it through ``..``, absolute paths, symlinks (also one swapped in mid-call) or hard
  links.
* :class:`ReadTool` (``"Read"``, read-only), :class:`WriteTool` (``"Write"``),
  :class:`EditTool` (``"Edit"``) — file tools confined to the sandbox.
* :class:`BashTool` (``"Bash"``, side effect) — shell commands through an
  :class:`ExecutionBackend`: :class:`OsSandboxBackend` (Landlock + seccomp, fail-closed) or
  :class:`HostBackend` (cwd-pinned, no containment). :func:`best_available_backend` picks the
  strongest one the host enforces and says why.

Containment (what the kernel prevents), approval (the permission pipeline) and resource caps
(rlimits) are separate axes; each backend's :meth:`~ExecutionBackend.guarantees` states its
containment per axis, and the Bash tool shows that label to the model.

Example:
    >>> import tempfile
    >>> from helikon.tools import EditTool, ReadTool, Sandbox, WriteTool
    >>> with tempfile.TemporaryDirectory() as d:
    ...     sb = Sandbox.open(d)
    ...     tools = [ReadTool(sb), WriteTool(sb), EditTool(sb)]
    ...     [t.name for t in tools]
    ['Read', 'Write', 'Edit']
"""

from helikon.tools.backend import (
    ExecResult,
    ExecutionBackend,
    Isolation,
    ResourceLimits,
    SandboxGuarantees,
)
from helikon.tools.bash import BashTool
from helikon.tools.capabilities import SandboxCapabilities, sandbox_capabilities
from helikon.tools.choose import BackendChoice, best_available_backend
from helikon.tools.edit import EditTool
from helikon.tools.egress import NetworkPolicy
from helikon.tools.host import HostBackend
from helikon.tools.os_sandbox import OsSandboxBackend
from helikon.tools.read import ReadTool
from helikon.tools.sandbox import Sandbox
from helikon.tools.seatbelt import SeatbeltBackend
from helikon.tools.write import WriteTool

__all__ = [
    "BackendChoice",
    "BashTool",
    "EditTool",
    "ExecResult",
    "ExecutionBackend",
    "HostBackend",
    "Isolation",
    "NetworkPolicy",
    "OsSandboxBackend",
    "ReadTool",
    "ResourceLimits",
    "Sandbox",
    "SandboxCapabilities",
    "SandboxGuarantees",
    "SeatbeltBackend",
    "WriteTool",
    "best_available_backend",
    "sandbox_capabilities",
]
