"""helikon's version: one place to read it from below the package root.

The installed distribution's version; in an uninstalled source tree, the native module's.
Both come from the one version in the Cargo workspace (pyproject's version is dynamic).
Library modules that send the version (the web tool's ``User-Agent``, the MCP client's
``clientInfo``) import it from here, not from the package root, which imports everything.
"""

from __future__ import annotations

__all__ = ["__version__"]


def _installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("helikon")
    except PackageNotFoundError:
        from helikon._native import __version__ as native_version

        return native_version


__version__: str = _installed_version()
