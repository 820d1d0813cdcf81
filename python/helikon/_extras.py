"""The check each optional package (providers, mcp, ...) runs first, so a missing extra is
named, not a bare import error."""

from __future__ import annotations

import importlib

__all__ = ["require_extra"]


def require_extra(package: str, extra: str, module: str, what: str) -> None:
    """Import ``module`` or fail naming the ``helikon[extra]`` to install.

    Args:
        package: the helikon package that needs it, e.g. ``"helikon.providers.openai"``.
        extra: the pip extra that installs it, e.g. ``"openai"``.
        module: the module to import, e.g. ``"openai"``.
        what: how the message names it, e.g. ``"the openai SDK"``.

    Raises:
        ImportError: ``module`` cannot be imported; e.g. ``helikon.providers.openai needs the
            'openai' extra (the openai SDK is missing): pip install 'helikon[openai]'``.
    """
    try:
        importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{package} needs the '{extra}' extra ({what} is missing): "
            f"pip install 'helikon[{extra}]'"
        ) from exc
