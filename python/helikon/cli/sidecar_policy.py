"""A sidecar's ``[permissions]`` table (the run context every command uses) and an agent's
``output_type``.

Forms::

    [permissions]
    mode   = "default"          # default | accept_edits | plan | bypass | dont_ask
    deny   = ["bash:rm", "tool:delete_account", "edit:secrets/**", "read:.env"]
    allow  = ["bash:git", "tool:Read"]
    guards = [{ name = "no-push", program = "git", args_contain = ["push"], action = "deny",
                reason = "pushing is not allowed" }]
    default_guards = true       # the built-in destructive-command guards

    [agents.triage]
    output_type = "answers:Answer"                                  # a pydantic model
    output_type = { python = "answers:Answer", strict = false }
    output_type = { schema = "schemas/answer.json" }                # a JSON Schema file
    output_type = { schema = { type = "object", ... }, name = "Answer" }

A rule is ``KIND:VALUE`` with ``KIND`` one of ``tool``, ``bash`` (a program; analysed per
sub-command), ``read`` and ``edit`` (gitignore-style globs), as
:class:`~helikon.DenyRule` and :class:`~helikon.AllowRule` take them.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass
from typing import Annotated, Any

from helikon.cli.sidecar_file import SidecarFile, unknown_keys
from helikon.core.context import RunContext
from helikon.core.output import OutputType
from helikon.core.permissions import AllowRule, DenyRule, GuardRule, PermissionMode
from helikon.errors import ConfigError

__all__ = ["PERMISSION_KEYS", "PermissionSettings", "build_output_type", "check_permissions"]

PERMISSION_KEYS = ("mode", "deny", "allow", "guards", "default_guards")
_GUARD_KEYS = ("name", "action", "program", "args_contain", "write_paths", "reason")
_RULE_KINDS = {"tool": "tool", "bash": "bash_command", "read": "read", "edit": "edit"}
_RULE_FIX = 'e.g. "bash:rm", "tool:delete_account", "edit:secrets/**" or "read:.env"'
_OUTPUT_KEYS = ("python", "schema", "strict", "name")
_OUTPUT_FIX = 'output_type = "module:Model" or output_type = { schema = "answer.schema.json" }'


@dataclass(frozen=True)
class PermissionSettings:
    """The checked ``[permissions]`` table."""

    mode: PermissionMode = PermissionMode.DEFAULT
    deny: tuple[DenyRule, ...] = ()
    allow: tuple[AllowRule, ...] = ()
    guards: tuple[GuardRule, ...] = ()
    default_guards: bool = True

    def context(self) -> RunContext[Any]:
        """A fresh run context carrying these settings."""
        ctx: RunContext[Any] = RunContext.ephemeral()
        ctx = ctx.with_permission_mode(self.mode)
        ctx = ctx.with_deny_rules(self.deny).with_allow_rules(self.allow)
        ctx = ctx.with_guard_rules(self.guards)
        return ctx if self.default_guards else ctx.without_default_guards()


def _rules(sc: SidecarFile, key: str, value: Any, cls: type[DenyRule] | type[AllowRule]) -> Any:
    if not isinstance(value, list):
        raise sc.err(key, "must be a list of KIND:VALUE rules", _RULE_FIX)
    out = []
    for i, text in enumerate(value):
        kind, sep, rest = text.partition(":") if isinstance(text, str) else ("", "", "")
        if not sep or kind not in _RULE_KINDS or not rest.strip():
            raise sc.err(
                f"{key}[{i}]",
                f"{text!r} is not KIND:VALUE with KIND one of {list(_RULE_KINDS)}",
                _RULE_FIX,
            )
        out.append(cls(_RULE_KINDS[kind], rest))  # type: ignore[arg-type]
    return tuple(out)


def check_permissions(sc: SidecarFile, raw: Any) -> PermissionSettings:
    """Check the ``[permissions]`` table (``None``: the defaults).

    Raises:
        SidecarError: naming the key (``permissions.deny[2]``), the problem and the fix.
    """
    if raw is None:
        return PermissionSettings()
    if not isinstance(raw, dict):
        raise sc.err("permissions", "must be a table", '[permissions] mode = "default"')
    unknown_keys(sc, "permissions", raw, PERMISSION_KEYS)
    mode = raw.get("mode", "default")
    try:
        checked_mode = PermissionMode(mode)
    except ValueError:
        raise sc.err(
            "permissions.mode",
            f"unknown mode {mode!r}",
            "use one of " + ", ".join(repr(m.value) for m in PermissionMode),
        ) from None
    guards = raw.get("guards", [])
    if not isinstance(guards, list):
        raise sc.err("permissions.guards", "must be a list of tables", "guards = [{ name = ... }]")
    built_guards = []
    for i, g in enumerate(guards):
        gkey = f"permissions.guards[{i}]"
        if not isinstance(g, dict):
            raise sc.err(gkey, "must be a table", '{ name = "no-push", program = "git" }')
        unknown_keys(sc, gkey, g, _GUARD_KEYS)
        try:
            built_guards.append(GuardRule(**g))
        except (ConfigError, TypeError) as exc:
            raise sc.err(
                gkey, str(exc), '{ name = "no-push", program = "git", args_contain = ["push"] }'
            ) from None
    default_guards = raw.get("default_guards", True)
    if not isinstance(default_guards, bool):
        raise sc.err("permissions.default_guards", "must be true or false", "default_guards = true")
    return PermissionSettings(
        mode=checked_mode,
        deny=_rules(sc, "permissions.deny", raw.get("deny", []), DenyRule),
        allow=_rules(sc, "permissions.allow", raw.get("allow", []), AllowRule),
        guards=tuple(built_guards),
        default_guards=default_guards,
    )


def build_output_type(sc: SidecarFile, key: str, value: Any) -> OutputType[Any] | None:
    """The agent's ``output_type`` (``None`` when not given).

    Raises:
        SidecarError: a bad form, an import failure, an unreadable or invalid schema, or a
            type that cannot use strict mode (the fix says ``strict = false``).
    """
    if value is None:
        return None
    if isinstance(value, str):
        value = {"python": value}
    if not isinstance(value, dict):
        raise sc.err(key, f"unsupported value {value!r}", _OUTPUT_FIX)
    unknown_keys(sc, key, value, _OUTPUT_KEYS)
    if ("python" in value) == ("schema" in value):
        raise sc.err(key, "needs exactly one of python or schema", _OUTPUT_FIX)
    strict = value.get("strict", True)
    name = value.get("name", "")
    if not isinstance(strict, bool):
        raise sc.err(f"{key}.strict", "must be true or false", "strict = false")
    if not isinstance(name, str):
        raise sc.err(f"{key}.name", "must be a string", 'name = "Answer"')
    if "python" in value:
        from helikon.cli.sidecar_tools import import_ref

        ref = value["python"]
        if not isinstance(ref, str) or ":" not in ref:
            raise sc.err(key, f"{ref!r} is not module:Model", _OUTPUT_FIX)
        type_: Any = import_ref(sc, key, ref)
    else:
        type_ = _schema_type(sc, f"{key}.schema", value["schema"])
    try:
        return OutputType(type_, strict=strict, name=name)
    except ConfigError as exc:
        fix = "add strict = false to send the schema without strict mode"
        raise sc.err(key, str(exc), fix if strict else "correct the type") from None


def _schema_type(sc: SidecarFile, key: str, raw: Any) -> Any:
    """A type whose JSON Schema is ``raw`` (a table or a file) and whose validation is it."""
    if isinstance(raw, str):
        text = sc.text_or_file(key, {"file": raw}) or ""
        try:
            schema = json.loads(text)
        except json.JSONDecodeError as exc:
            raise sc.err(
                key, f"{raw} is not JSON ({exc.msg}, line {exc.lineno})", "fix the file"
            ) from None
    else:
        schema = raw
    if not isinstance(schema, dict):
        raise sc.err(key, "must be a JSON Schema object (a table or a .json file)", _OUTPUT_FIX)
    try:
        jsonschema: Any = importlib.import_module("jsonschema")
    except ImportError:
        raise sc.err(
            key, "a JSON Schema output_type needs jsonschema", "pip install 'helikon[cli]'"
        ) from None
    try:
        validator_cls = jsonschema.validators.validator_for(schema)
        validator_cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise sc.err(key, f"not a valid JSON Schema: {exc.message}", "correct the schema") from None
    validator = validator_cls(schema)

    def check(data: Any) -> Any:
        errors = sorted(validator.iter_errors(data), key=lambda e: list(e.path))
        if errors:
            first = errors[0]
            where = ".".join(str(p) for p in first.path) or "<root>"
            raise ValueError(f"{where}: {first.message}")
        return data

    from pydantic import AfterValidator, WithJsonSchema

    return Annotated[Any, WithJsonSchema(schema), AfterValidator(check)]
