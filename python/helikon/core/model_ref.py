"""Model strings reach the core through one registered resolver.

``Agent(model="openai:gpt-5-mini")`` is read by :func:`helikon.providers.infer.infer_model`,
which lives above the core (it imports the provider adapters). The core only holds the
resolver ``helikon.providers`` registers when it is imported, which ``import helikon`` always
does; so the core never imports a provider, and a string model works wherever an
:class:`~helikon.Agent` can be built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from helikon.core.model import Model
from helikon.errors import ConfigError

__all__ = ["register_model_resolver", "resolve_model"]

ModelResolver = Callable[..., Model]
"""``resolver(spec, where=...) -> Model``: reads a ``PROVIDER:MODEL_ID`` string."""

_resolver: list[ModelResolver] = []


def register_model_resolver(resolver: ModelResolver) -> None:
    """Install the resolver (``helikon.providers`` does this at import; the last one wins)."""
    _resolver[:] = [resolver]


def resolve_model(where: str, value: Any) -> Any:
    """``value`` unchanged unless it is a str, else the model the string names.

    Raises:
        ConfigError: the string is not a model string, or its provider cannot be built (the
            message names the extra or the environment variable to set).
    """
    if not isinstance(value, str):
        return value
    if not _resolver:  # pragma: no cover - helikon.providers is imported by import helikon
        raise ConfigError(f"{where}: model strings need helikon.providers; import helikon first")
    return _resolver[0](value, where=where)
