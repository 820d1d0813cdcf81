"""What the OS sandbox enforces for one Bash call, in sentences for ``explain``.

A permission rule is a promise about names; the sandbox enforces effects. For a Bash call on
an :class:`~helikon.tools.OsSandboxBackend` these notes say what the kernel (and the egress
proxy) would still refuse whatever the permission decision is: the network (denied, open, or
the egress policy with a verdict for every URL in the command), deletion in the workspace
(``deny_delete``) and executing a program from the workspace (``no_exec_in_workspace``).
:meth:`OsSandboxBackend.containment_notes` returns them; :func:`helikon.permissions.explain`
puts them on :attr:`~helikon.permissions.Explanation.containment` when given the backend (or
the Bash tool).
"""

from __future__ import annotations

import re
from typing import Any

from helikon.shell import analyze
from helikon.tools._workspace_rules import DELETING_PROGRAMS, kernel_note

__all__ = ["containment_notes", "urls_in"]

_URL = re.compile(
    r"\b(https?|wss?|ftp)://(?:[^\s/@'\"]*@)?(\[[0-9a-fA-F:.]+\]|[^\s/:?#'\"\\]+)(?::(\d{1,5}))?"
)
_DEFAULT_PORT = {"http": 80, "ws": 80, "https": 443, "wss": 443, "ftp": 21}


def urls_in(command: str) -> list[tuple[str, int]]:
    """The ``(host, port)`` of every URL in ``command``, in order, without repeats.

    Example:
        >>> urls_in("curl https://pypi.org/simple/ http://x.test:8080/a https://pypi.org/")
        [('pypi.org', 443), ('x.test', 8080)]
    """
    out: list[tuple[str, int]] = []
    for scheme, host, port in _URL.findall(command):
        item = (host, int(port) if port else _DEFAULT_PORT[scheme.lower()])
        if item not in out:
            out.append(item)
    return out


def containment_notes(backend: Any, tool: str, args: Any) -> tuple[str, ...]:
    """The notes for ``tool`` called with ``args`` on ``backend`` (an ``OsSandboxBackend``).

    Only ``Bash`` runs through the backend; other tools get ``()``.
    """
    if tool != "Bash":
        return ()
    command = args.get("command") if isinstance(args, dict) else None
    command = command if isinstance(command, str) else ""
    notes = [*_network(backend, command)]
    analysis = analyze(command)
    if getattr(backend, "deny_delete", False):
        deleting = [p for p in analysis.programs if p in DELETING_PROGRAMS]
        note = kernel_note(backend, deleting) if deleting else None
        notes.append(
            note
            or "deletion in the workspace is refused by the kernel (deny_delete: Landlock "
            "without REMOVE_FILE/REMOVE_DIR/TRUNCATE): unlink, rmdir, renaming over or away "
            "from an entry, O_TRUNC and truncate fail with EACCES whatever program runs"
        )
    if getattr(backend, "no_exec_in_workspace", False):
        local = sorted(
            {
                c.argv[0]
                for c in analysis.commands
                if c.argv and "/" in c.argv[0] and not c.argv[0].startswith("/")
            }
        )
        which = f" ({', '.join(local)} would fail with EACCES, exit 126)" if local else ""
        loader = (
            " and its noexec mount (no ld.so ./x, no dlopen)"
            if getattr(backend, "private_mounts", False)
            else "; without private_mounts the dynamic loader can still run one (ld.so ./x)"
        )
        notes.append(
            "executing a program from the workspace or the temp dir is refused by the kernel "
            f"(no_exec_in_workspace: Landlock without EXECUTE there){which}{loader}; "
            "interpreters from the system directories still run scripts (sh x.sh, python3 x.py)"
        )
    return tuple(notes)


def _network(backend: Any, command: str) -> list[str]:
    policy = getattr(backend, "network", None)
    if policy is not None:
        egress = getattr(backend, "egress", None)
        how = f" ({egress.mechanism})" if egress is not None else ""
        notes = [
            f"network: only helikon's egress proxy is reachable{how}; it allows "
            f"allow_domains {list(policy.allow_domains)} minus deny_domains "
            f"{list(policy.deny_domains)}, and checks every resolved address (private, "
            "loopback, link-local and metadata ranges refused unless in allow_addresses "
            f"{list(policy.allow_addresses)})"
        ]
        for host, port in urls_in(command):
            d = policy.check_target(host, port)
            if d.allowed:
                notes.append(
                    f"network: {host}:{port} would be allowed by the egress proxy ({d.rule}), "
                    "if its addresses pass the address check"
                )
            else:
                notes.append(
                    f"network: {host}:{port} would be refused by the egress proxy "
                    f"({d.rule}: {d.reason})"
                )
        return notes
    if getattr(backend, "allow_network", False):
        return ["network: not contained (allow_network=True): TCP and UDP to every address"]
    return [
        "network: denied by the kernel (Landlock TCP rules and a seccomp socket-family "
        "filter): the command reaches no address"
    ]
