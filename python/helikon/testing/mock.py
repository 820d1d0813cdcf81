""":class:`MockModel`, which lives in :mod:`helikon.providers.scripted` (library code such as
the sidecar uses it there; tests import it from here)."""

from helikon.providers.scripted.model import MockModel

__all__ = ["MockModel"]
