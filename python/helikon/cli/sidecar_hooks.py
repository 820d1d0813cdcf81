"""An agent's hooks and guardrails in the sidecar: Python objects named ``module:attr``.

Format (modules are found next to the sidecar, as for tools)::

    [agents.assistant]
    hooks             = ["audit:AuditHook"]      # on_event(self, ctx, event), helikon.Hook
    input_guardrails  = ["guards:no_secrets"]    # fn(input) / fn(ctx, input), or an object
                                                 # with async check(self, ctx, input)
    output_guardrails = ["guards:ToneCheck"]

Each name is an instance, or a class that is made with no arguments. Every problem raises
:class:`~helikon.cli.sidecar_file.SidecarError` naming ``agents.NAME.FIELD[i]`` and the fix.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from helikon.cli.sidecar_file import SidecarFile
from helikon.cli.sidecar_tools import import_ref
from helikon.core.guardrails import as_guardrail
from helikon.core.hooks import check_hook
from helikon.errors import ConfigError

__all__ = ["HOOK_FIELDS", "build_hooks"]

_CHECKS: dict[str, tuple[Callable[[str, object], object], str]] = {
    "hooks": (check_hook, "a class or instance with async def on_event(self, ctx, event)"),
    "input_guardrails": (
        as_guardrail,
        "a function fn(input) or fn(ctx, input), or a class or instance with "
        "async def check(self, ctx, input)",
    ),
    "output_guardrails": (
        as_guardrail,
        "a function fn(input) or fn(ctx, input), or a class or instance with "
        "async def check(self, ctx, input)",
    ),
}
HOOK_FIELDS = tuple(_CHECKS)
"""The agent keys this module reads."""


def build_hooks(sc: SidecarFile, key: str, field_name: str, value: Any) -> list[Any]:
    """The objects an agent's ``hooks`` / ``input_guardrails`` / ``output_guardrails`` name.

    Args:
        sc: the sidecar file (its folder is put on ``sys.path`` for the imports).
        key: the agent's key, ``"agents.NAME"``.
        field_name: one of :data:`HOOK_FIELDS`.
        value: the parsed TOML value (``None`` when absent).

    Raises:
        SidecarError: not a list of ``module:attr`` strings, a name that does not import, a
            class that cannot be made without arguments, or an object of the wrong shape.
    """
    where = f"{key}.{field_name}"
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise sc.err(where, "must be a list of module:attr names", f'{field_name} = ["mod:Name"]')
    check, shape = _CHECKS[field_name]
    out: list[Any] = []
    for i, ref in enumerate(value):
        item = f"{where}[{i}]"
        if ref.count(":") != 1 or not all(ref.split(":")):
            raise sc.err(item, f"{ref!r} is not module:attr", f'e.g. "{field_name[:5]}:Name"')
        obj = import_ref(sc, item, ref)
        if isinstance(obj, type):
            try:
                obj = obj()
            except TypeError as exc:
                raise sc.err(
                    item,
                    f"cannot make {ref} without arguments ({exc})",
                    f"name an instance made in the module instead, e.g. x = {obj.__name__}(...)",
                ) from None
        try:
            check(item, obj)
        except ConfigError as exc:
            raise sc.err(item, str(exc).removeprefix(f"{item}: "), f"name {shape}") from None
        out.append(obj)
    return out
