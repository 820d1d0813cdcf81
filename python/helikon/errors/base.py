"""The root of the tree and the errors of bad input.

Part of the one tree of :mod:`helikon.errors` (import from there).
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "HelikonError",
    "PeerImportError",
    "PeerSpellingError",
    "SchemaError",
]


class HelikonError(Exception):
    """Base class of every error helikon raises."""


class ConfigError(HelikonError, ValueError):
    """Bad input to a constructor, a sidecar file or a CLI flag.

    The message names the field (or file and key) and how to fix it.
    """


class PeerSpellingError(ConfigError, AttributeError):
    """Another SDK's spelling of an attribute or method helikon spells differently
    (``result.usage()``, ``agent.as_tool(...)``, ``stream_events()``): the message gives
    helikon's. An ``AttributeError`` too, so ``hasattr`` and ``getattr(obj, name, default)``
    keep working."""


class PeerImportError(ConfigError, ImportError):
    """Another SDK's name imported from a helikon module (``from helikon import
    function_tool``): the message gives helikon's. An ``ImportError``, so ``from x import y``
    shows the message (Python replaces an ``AttributeError`` there with its own)."""


class SchemaError(HelikonError, ValueError):
    """A JSON Schema could not be normalized (too deep, unsupported construct)."""
