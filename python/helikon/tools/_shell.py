"""Which shell the backends run commands with: bash, the shell the command matcher models.

The matcher (:mod:`helikon.shell`) reads commands with bash's grammar (``$'…'`` quoting,
``[[ … ]]``, ``((…))``, ``coproc``, ``function``). Another shell reads the same text
differently: dash runs ``echo $'\\'; rm -rf /; #'`` as ``echo`` then ``rm -rf /``, and
``((rm f))`` as nested subshells running ``rm``. So every backend runs ``bash -c command``,
and a backend built with a shell that is not bash marks its commands as not analysable:
deny rules, guards and allow lists then give their worst case for every command (see the
design note ``docs/design/matcher.md``, "The shell that runs the command").
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from helikon.errors import ConfigError

__all__ = ["BASH_PATHS", "ShellChoice", "resolve_shell"]

#: Where bash is looked for when a backend is built without ``shell=`` (first found wins).
BASH_PATHS = ("/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash", "/opt/homebrew/bin/bash")


@dataclass(frozen=True)
class ShellChoice:
    """The shell a backend runs ``<path> -c command`` with.

    Attributes:
        path: absolute path of the shell.
        unanalysed: ``None`` when the shell is bash (the matcher's grammar), else the reason
            every command run with it counts as not analysable under rules and guards.
    """

    path: str
    unanalysed: str | None


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def resolve_shell(owner: str, shell: str | None) -> ShellChoice:
    """The shell for ``owner``'s backend.

    Args:
        owner: the backend class name (used in messages).
        shell: ``None`` for bash found at one of :data:`BASH_PATHS`, or an absolute path.
            A path whose file name is ``bash`` is taken as bash; any other shell (``/bin/sh``,
            ``/bin/dash``, ``zsh``) is allowed but its commands are not analysable.

    Returns:
        The :class:`ShellChoice`. When ``shell`` is ``None`` and bash is not installed, the
        choice is ``/bin/sh`` with :attr:`ShellChoice.unanalysed` saying so: commands still
        run without rules, and every Bash call under deny/allow rules or guards is refused
        with that reason (fail closed).

    Raises:
        ConfigError: ``shell`` is not an absolute path string.
    """
    if shell is None:
        for path in BASH_PATHS:
            if _is_executable(path):
                return ShellChoice(path, None)
        return ShellChoice(
            "/bin/sh",
            f"bash is not installed (looked for {', '.join(BASH_PATHS)}), so {owner} runs "
            "commands with /bin/sh, whose grammar the command matcher does not model; install "
            "bash (or pass shell= with the path of bash) to use rules and guards on Bash commands",
        )
    if not isinstance(shell, str) or not os.path.isabs(shell):
        raise ConfigError(
            f"{owner}.shell must be an absolute path such as '/bin/bash', got {shell!r}"
        )
    if os.path.basename(shell) == "bash":
        return ShellChoice(shell, None)
    return ShellChoice(
        shell,
        f"{owner} runs commands with {shell}, not bash: the command matcher models bash's "
        "grammar, so what this shell runs cannot be analysed; drop shell= (bash is the "
        "default) to use rules and guards on Bash commands",
    )
