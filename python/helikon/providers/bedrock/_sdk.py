"""The boundary to AWS's own SDK: ``boto3`` / ``botocore``, imported once, typed ``Any``.

``boto3`` ships no type information, so everything this package touches from it passes
through here as ``Any`` and is narrowed right where it is read. Importing this module without
the extra installed raises an :class:`ImportError` that names it.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["EXTRA_HINT", "boto3", "botocore_config", "botocore_exceptions"]

EXTRA_HINT = "pip install 'helikon[bedrock]'"


def _load(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ImportError(
            f"helikon.providers.bedrock needs the 'bedrock' extra (AWS's SDK: {name} is "
            f"missing): {EXTRA_HINT}"
        ) from exc


boto3: Any = _load("boto3")
botocore_config: Any = _load("botocore.config")
botocore_exceptions: Any = _load("botocore.exceptions")
