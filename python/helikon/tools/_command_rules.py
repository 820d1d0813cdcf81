"""The Bash tool's allow/deny lists, checked with the native ``CommandPolicy`` matcher."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from helikon.errors import ConfigError, ToolDenied

__all__ = ["CommandRules"]


def _names(label: str, names: Sequence[str] | None) -> list[str] | None:
    if names is None:
        return None
    if isinstance(names, str):
        raise ConfigError(f"BashTool.{label} must be a list of program names, not a string")
    out = [str(n) for n in names]
    if any(not n.strip() for n in out):
        raise ConfigError(f"BashTool.{label} has an empty program name")
    return out


class CommandRules:
    """Allow/deny lists compiled once into the native matcher.

    The matcher parses the command (nested substitutions, wrappers such as ``env`` or
    ``sh -c``, path-disguised program names) and checks every sub-command. A deny list
    refuses any sub-command running a listed program; an allow list is exclusive: every
    sub-command must run a listed program without options that run other code. Anything the
    analyser cannot resolve is refused (fail closed: this tool cannot ask for approval).
    """

    def __init__(
        self, allow: Sequence[str] | None = None, deny: Sequence[str] | None = None
    ) -> None:
        from helikon.shell import CommandPolicy

        self.allow = _names("allow_commands", allow)
        self.deny = _names("deny_commands", deny) or []
        rules: dict[str, Any] = {
            "deny": self.deny,
            "default_guards": False,
            "unanalysable": "deny",
        }
        if self.allow is not None:
            rules["allow"] = self.allow
            rules["allow_exclusive"] = True
        self._policy = CommandPolicy(json.dumps(rules))

    def check(
        self,
        command: str,
        note: Callable[[str], str | None] | None = None,
        unanalysed: str | None = None,
    ) -> None:
        """Raise :class:`ToolDenied` naming the rule and the sub-command, or return.

        Args:
            command: the shell command.
            note: given the refused program's name, a sentence to add to the refusal (the
                Bash tool says when the kernel would refuse the same effect), or ``None``.
            unanalysed: why the shell that will run the command is not the one the matcher
                models (a backend built with ``shell=`` other than bash): every command is
                then refused with this reason (fail closed).
        """
        if unanalysed:
            raise ToolDenied(f"Bash command refused: not analysable: {unanalysed}")
        verdict: dict[str, Any] = json.loads(self._policy.check(command))
        if verdict.get("verdict") != "deny":
            return
        rule = verdict.get("rule") or "policy"
        explain = str(verdict.get("explain") or verdict.get("reason") or "refused")
        explain = explain.removeprefix(f"{rule}: ")  # the analyser's text names the rule too
        extra = note(str(verdict.get("program") or "")) if note is not None else None
        if extra:
            explain = f"{explain}; {extra}"
        raise ToolDenied(f"Bash command refused by rule {rule}: {explain}")
