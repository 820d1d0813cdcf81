"""The root of the tree and the errors of bad input.

Part of the one tree of :mod:`helikon.errors` (import from there).
"""

from __future__ import annotations

__all__ = ["ConfigError", "HelikonError", "SchemaError"]


class HelikonError(Exception):
    """Base class of every error helikon raises."""


class ConfigError(HelikonError, ValueError):
    """Bad input to a constructor, a sidecar file or a CLI flag.

    The message names the field (or file and key) and how to fix it.
    """


class SchemaError(HelikonError, ValueError):
    """A JSON Schema could not be normalized (too deep, unsupported construct)."""
