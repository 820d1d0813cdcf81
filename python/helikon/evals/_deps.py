"""Optional third-party modules of the evals extra, loaded on first use.

They are imported through :func:`importlib.import_module` so the rest of the package sees
them as ``Any`` at this one boundary (pyarrow and jsonschema ship no complete type hints).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["require"]


def require(module: str, *, feature: str) -> Any:
    """Import ``module`` or raise an ImportError that names the extra to install.

    Raises:
        ImportError: ``module`` is not installed.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{feature} needs the {module.split('.')[0]!r} package: pip install 'helikon[evals]'"
        ) from exc
