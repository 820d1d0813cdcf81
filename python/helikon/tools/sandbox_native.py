"""The binding of the native sandbox: the one module of :mod:`helikon.tools` that reaches
``helikon._native`` (crate ``helikon-sandbox``; documented in ``helikon/_native.pyi``).

* :class:`ConfinedDir`: a directory confined with cap-std (the host backend's file tools).
* :class:`SandboxPolicy`: a built OS sandbox that runs commands (Landlock + seccomp on Linux).
* :func:`capabilities_json`: what this machine's kernel can enforce, as JSON text.
"""

from __future__ import annotations

from helikon._native import ConfinedDir, SandboxPolicy
from helikon._native import sandbox_capabilities as capabilities_json

__all__ = ["ConfinedDir", "SandboxPolicy", "capabilities_json"]
