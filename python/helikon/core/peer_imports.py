"""Names other SDKs export that helikon spells differently, answered on import.

``from helikon import function_tool`` (the OpenAI Agents SDK's decorator) raises a
:class:`~helikon.errors.PeerImportError` naming helikon's spelling (``tool``); a module's
``__getattr__`` calls :func:`peer_import` for a name it does not have.
"""

from __future__ import annotations

from helikon.errors import PeerImportError

__all__ = ["PEER_IMPORTS", "peer_import"]

_SQLITE = "SqliteSession (from helikon.sessions import SqliteSession)"

PEER_IMPORTS: dict[str, dict[str, str]] = {
    "helikon": {
        "function_tool": (
            "tool (from helikon import tool; @tool, or @tool(needs_approval=True) for a tool "
            "a person approves)"
        ),
        "input_guardrail": (
            "a plain function as the guardrail: def check(input) returning Pass() or "
            "Tripwire(kind, info) (from helikon import Pass, Tripwire), given as "
            "Agent(input_guardrails=[check])"
        ),
        "output_guardrail": (
            "a plain function as the guardrail: def check(input) returning Pass() or "
            "Tripwire(kind, info) (from helikon import Pass, Tripwire), given as "
            "Agent(output_guardrails=[check])"
        ),
        "GuardrailFunctionOutput": (
            "Pass() to let the run go on, Tripwire(kind, info) to halt it "
            "(from helikon import Pass, Tripwire)"
        ),
        "SQLiteSession": _SQLITE,
    },
    "helikon.sessions": {"SQLiteSession": _SQLITE},
    "helikon.sessions.sqlite": {"SQLiteSession": _SQLITE},
}
"""Per helikon module: another SDK's name -> helikon's spelling."""


def peer_import(module: str, name: str) -> PeerImportError | AttributeError:
    """The error for ``module.name`` that ``module`` does not have: a
    :class:`PeerImportError` naming helikon's spelling when ``name`` is another SDK's, else
    Python's usual ``AttributeError``. Raise it from the module's ``__getattr__``."""
    fix = PEER_IMPORTS.get(module, {}).get(name)
    if fix is None:
        return AttributeError(f"module {module!r} has no attribute {name!r}")
    return PeerImportError(f"{module}.{name} is another SDK's name; in helikon use {fix}")
