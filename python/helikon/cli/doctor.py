"""``helikon doctor``: what this installation is and what it can do on this machine.

Prints the version, how the native core was built, whether what every installation needs is
there (the package metadata, a native module of the same version, the core dependencies),
which optional extras are installed, what the OS sandbox can enforce here and, with
``--check-services``, whether the Redis, PostgreSQL and Temporal servers named in the
environment answer. Every missing piece comes with a one-line fix. ``--json`` prints the same
report as one JSON object for scripts.

The report is a dict of plain values (see :func:`collect`); each check inside it is
``{"name": str, "ok": bool, "detail": str, "fix": str | None}``.

Exit status (:func:`exit_code`), so scripts and CI can gate on it:

* ``0``: everything required is there (and every service answered, when checked);
* ``1``: something required is missing: a ``core`` check failed, or an extra or the OS
  sandbox named with ``--require`` is not available (this wins over ``3``);
* ``2``: a usage error (an unknown ``--require`` name, an unknown option);
* ``3``: ``--check-services`` was given and a service did not answer.

Optional extras and sandbox pieces not named with ``--require`` never change the status:
a missing one is reported with its fix and the command still exits ``0``.
"""

from __future__ import annotations

import json
import os
import platform
import re
import socket
import struct
import sys
import tempfile
from importlib.metadata import PackageNotFoundError, metadata, requires, version
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

import typer

__all__ = [
    "EXIT_OK",
    "EXIT_REQUIRED_MISSING",
    "EXIT_SERVICE_UNREACHABLE",
    "EXIT_USAGE",
    "collect",
    "core",
    "doctor",
    "exit_code",
    "failures",
    "native_build",
    "render",
]

EXIT_OK = 0
"""Everything required is there (and every checked service answered)."""
EXIT_REQUIRED_MISSING = 1
"""A core check failed, or something named with ``--require`` is missing."""
EXIT_USAGE = 2
"""An unknown ``--require`` name (or any other usage error)."""
EXIT_SERVICE_UNREACHABLE = 3
"""``--check-services``: a service did not answer."""

Check = dict[str, Any]

_HIDDEN_EXTRAS = {"all", "bench", "test"}
_NOBODY = (65534, 65534)
_TIMEOUT_S = 2.0


def _check(name: str, ok: bool, detail: str, fix: str | None = None) -> Check:
    return {"name": name, "ok": ok, "detail": detail, "fix": None if ok else fix}


def native_build() -> dict[str, str]:
    """How the native module was built: ``{"version", "profile", "target"}``.

    ``profile`` is ``"release"`` or ``"debug"``; ``target`` is ``arch-os[-env]``
    (``x86_64-linux-gnu``). A native module older than ``build_info`` reports ``"unknown"``.
    """
    from helikon import _native

    build_info = getattr(_native, "build_info", None)
    if build_info is None:
        return {"version": _native.__version__, "profile": "unknown", "target": "unknown"}
    info: dict[str, str] = json.loads(build_info())
    return info


# --------------------------------------------------------------------------------- core


def _native_version() -> str | None:
    try:
        from helikon import _native
    except ImportError:
        return None
    return str(_native.__version__)


def core() -> list[Check]:
    """What every installation needs: helikon's metadata, a native module of the same
    version, and each core (non-extra) dependency installed. A failure here exits ``1``."""
    fix_reinstall = "pip install --force-reinstall helikon"
    try:
        package = version("helikon")
        reqs = requires("helikon") or []
    except PackageNotFoundError:
        return [
            _check(
                "helikon",
                False,
                "not installed (no package metadata)",
                "pip install helikon (in a checkout: pip install .)",
            )
        ]
    checks = [_check("helikon", True, package)]
    native = _native_version()
    if native is None:
        checks.append(
            _check("native module", False, "helikon._native cannot be imported", fix_reinstall)
        )
    elif native != package:
        checks.append(
            _check(
                "native module",
                False,
                f"version {native}, but the package is {package}",
                fix_reinstall,
            )
        )
    else:
        checks.append(_check("native module", True, native))
    for requirement in reqs:
        if "extra" in requirement.partition(";")[2]:
            continue
        name = _requirement_name(requirement)
        ok = _installed(name)
        checks.append(
            _check(
                name,
                ok,
                "installed" if ok else "missing",
                f"pip install '{requirement.partition(';')[0].strip()}'",
            )
        )
    return checks


# ------------------------------------------------------------------------------- extras


def _requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return match.group(1) if match else requirement


def _installed(distribution: str) -> bool:
    try:
        version(distribution)
    except PackageNotFoundError:
        return False
    return True


def extras() -> list[Check]:
    """One check per optional extra: are all of its packages installed?"""
    try:
        provided = metadata("helikon").get_all("Provides-Extra") or []
        reqs = requires("helikon") or []
    except PackageNotFoundError:
        return [_check("extras", False, "helikon is not installed", "pip install helikon")]
    checks: list[Check] = []
    for extra in provided:
        if extra in _HIDDEN_EXTRAS:
            continue
        marker = re.compile(rf"extra\s*==\s*['\"]{re.escape(extra)}['\"]")
        packages = [_requirement_name(r) for r in reqs if marker.search(r)]
        missing = [p for p in packages if not _installed(p)]
        detail = ", ".join(packages) if not missing else "missing " + ", ".join(missing)
        checks.append(_check(extra, not missing, detail, f"pip install 'helikon[{extra}]'"))
    return checks


# ------------------------------------------------------------------------------ sandbox


def _linux_capabilities() -> dict[str, Any]:
    """:func:`helikon.tools.sandbox_capabilities` as plain values."""
    from dataclasses import asdict

    from helikon.tools import sandbox_capabilities

    return asdict(sandbox_capabilities())


def _egress(caps: dict[str, Any]) -> Check:
    """Which mechanism keeps a command with a ``NetworkPolicy`` to the egress proxy."""
    if caps["user_namespaces"]:
        detail = "namespace (a private network namespace per command)"
        ok = True
    elif int(caps.get("landlock_abi") or 0) >= 4:
        detail = "landlock_port (the proxy's port number at other addresses is reachable)"
        ok = False
    else:
        detail = "none (network=NetworkPolicy is refused: no user namespaces, Landlock ABI < 4)"
        ok = False
    return _check(
        "network egress",
        ok,
        detail,
        "allow unprivileged user namespaces (sysctl -w user.max_user_namespaces=15000 "
        "kernel.unprivileged_userns_clone=1) or run as root with run_as=(uid, gid)",
    )


def _os_backend() -> Check:
    """Build a default ``OsSandboxBackend`` (its probe and self-test) in a scratch root."""
    from helikon.errors import HelikonError, SandboxUnavailable
    from helikon.tools import OsSandboxBackend, Sandbox

    with tempfile.TemporaryDirectory() as root:
        run_as = _NOBODY if os.geteuid() == 0 else None
        if run_as is not None:
            os.chown(root, *run_as)
        try:
            backend = OsSandboxBackend(Sandbox.open(root), run_as=run_as)
        except SandboxUnavailable as exc:
            return _check(
                "OsSandboxBackend",
                False,
                str(exc),
                "use a kernel that has what is named above, or best_available_backend() "
                "for an explicit HostBackend fallback",
            )
        except HelikonError as exc:  # e.g. a native module older than this Python code
            return _check(
                "OsSandboxBackend",
                False,
                f"could not be built: {type(exc).__name__}: {exc}",
                "reinstall helikon so the native module matches: pip install --force-reinstall "
                "helikon",
            )
    return _check("OsSandboxBackend", True, backend.guarantees().label)


def sandbox() -> dict[str, Any]:
    """What the OS sandbox can enforce on this machine, as checks with fixes."""
    system = platform.system()
    if system == "Darwin":
        seatbelt = Path("/usr/bin/sandbox-exec").exists()
        checks = [
            _check(
                "Seatbelt (sandbox-exec)",
                seatbelt,
                "SeatbeltBackend: writes outside the root and the network denied; reads open",
                "sandbox-exec ships with macOS; restore /usr/bin/sandbox-exec",
            )
        ]
        return {"platform": f"macOS {platform.mac_ver()[0]}", "checks": checks}
    if system != "Linux":
        checks = [
            _check(
                "OS sandbox",
                False,
                f"none on {system}: BashTool runs on HostBackend, which is not a boundary",
                "run agents that execute commands under WSL2 or in a Linux container",
            )
        ]
        return {"platform": f"{system} {platform.release()}", "checks": checks}
    caps = _linux_capabilities()
    abi = int(caps["landlock_abi"])
    if abi >= 6:
        landlock = _check("Landlock", True, f"ABI {abi}")
    elif abi > 0:
        landlock = _check(
            "Landlock",
            False,
            f"ABI {abi}: no signal/abstract-socket scoping (ABI 6)",
            "upgrade to Linux 6.12+, or pass allow_weaker=['signal_scope', "
            "'abstract_unix_scope'] to OsSandboxBackend",
        )
    else:
        landlock = _check(
            "Landlock",
            False,
            str(caps.get("landlock_missing") or "unavailable"),
            "use Linux 5.13+ (6.12+ for every default) with 'landlock' in the lsm= boot parameter",
        )
    checks = [
        landlock,
        _check(
            "seccomp",
            bool(caps["seccomp"]),
            "filter mode available" if caps["seccomp"] else "filter mode unavailable",
            "use a kernel with CONFIG_SECCOMP_FILTER; in a container, allow seccomp(2)",
        ),
        _check(
            "user namespaces",
            bool(caps["user_namespaces"]),
            "can be created" if caps["user_namespaces"] else "cannot be created",
            "sysctl -w user.max_user_namespaces=15000 kernel.unprivileged_userns_clone=1",
        ),
        _check(
            "private_mounts",
            caps.get("metadata") in ("mount_namespace", "user_mount_namespace"),
            str(caps.get("metadata")),
            "run as root with run_as=(uid, gid), or allow unprivileged user namespaces "
            "(sysctl -w user.max_user_namespaces=15000 kernel.unprivileged_userns_clone=1); "
            "without it metadata calls and existence probes outside the workspace are not "
            "contained",
        ),
        _egress(caps),
        _check(
            "cgroup v2 delegation",
            caps["cgroup_delegated"] is not None,
            str(
                caps["cgroup_delegated"]
                or ("not delegated" if caps["cgroup_v2"] else "no cgroup v2 hierarchy")
            ),
            "run under `systemd-run --user --scope -p Delegate=yes` (or a container with a "
            "delegated cgroup)",
        ),
        _check(
            "memory ceiling",
            caps["memory"] != "none",
            str(caps["memory"]),
            "the memory ceiling (ResourceLimits.memory_bytes) is enforced on Linux only",
        ),
        _os_backend(),
    ]
    return {"platform": f"Linux {caps['kernel_release']}", "checks": checks}


# ----------------------------------------------------------------------------- services


def _address(env: str, default: str, default_port: int) -> tuple[str, str, int]:
    raw = os.environ.get(env) or default
    parts = urlsplit(raw if "://" in raw else f"tcp://{raw}")
    return raw, parts.hostname or "127.0.0.1", parts.port or default_port


def _talk(host: str, port: int, hello: bytes) -> bytes:
    with socket.create_connection((host, port), timeout=_TIMEOUT_S) as conn:
        conn.sendall(hello)
        return conn.recv(64)


# (name, variable, default, port, what to send, how to start one)
_REDIS = ("redis", "REDIS_URL", "redis://127.0.0.1:6379", 6379, b"PING\r\n", "redis-server")
_POSTGRES = (
    "postgresql",
    "DATABASE_URL",
    "postgresql://127.0.0.1:5432",
    5432,
    struct.pack("!ii", 8, 80877103),  # SSLRequest: answered with one byte, S or N
    "pg_ctl start",
)
_TEMPORAL = (
    "temporal",
    "TEMPORAL_ADDRESS",
    "127.0.0.1:7233",
    7233,
    b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]),
    "temporal server start-dev",
)


def _answered(name: str, reply: bytes) -> bool:
    if name == "redis":
        return reply.startswith((b"+PONG", b"-NOAUTH", b"-ERR"))
    if name == "postgresql":
        return reply[:1] in (b"S", b"N")
    return len(reply) >= 9 and reply[3] == 4  # an HTTP/2 SETTINGS frame: a gRPC server


def services() -> list[Check]:
    """Reach Redis (``REDIS_URL``), PostgreSQL (``DATABASE_URL``) and Temporal
    (``TEMPORAL_ADDRESS``), each at its local default when the variable is unset."""
    checks: list[Check] = []
    for name, env, default, port, hello, start in (_REDIS, _POSTGRES, _TEMPORAL):
        raw, host, real_port = _address(env, default, port)
        where = f"{raw} (from {env})" if os.environ.get(env) else f"{raw} (default; set {env})"
        try:
            reply = _talk(host, real_port, hello)
        except OSError as exc:
            checks.append(
                _check(
                    name,
                    False,
                    f"{where}: {exc}",
                    f"start {name} there ({start}), or set {env} to where it runs",
                )
            )
            continue
        ok = _answered(name, reply)
        checks.append(
            _check(
                name,
                ok,
                f"{where}: {'answers' if ok else 'not ' + name}",
                f"point {env} at a {name} server",
            )
        )
    return checks


# ------------------------------------------------------------------------------ command


_SANDBOX_ROWS = frozenset({"OsSandboxBackend", "Seatbelt (sandbox-exec)", "OS sandbox"})
"""The sandbox rows ``--require sandbox`` needs: the OS backend can be built here."""


def collect(*, check_services: bool = False, require: tuple[str, ...] = ()) -> dict[str, Any]:
    """The whole report as plain values (what ``--json`` prints).

    Args:
        check_services: also probe Redis, PostgreSQL and Temporal.
        require: extras (``"openai"``, ...) and ``"sandbox"`` that must be available; the
            report's ``required`` lists them with their state.

    Returns:
        ``{"version", "python", "platform", "native", "core", "extras", "sandbox",
        "services", "required", "exit_code"}``; ``required`` is ``[check, ...]`` for each
        name in ``require``, ``exit_code`` what the command exits with (see the module doc).

    Raises:
        ValueError: a name in ``require`` is neither an extra nor ``"sandbox"``.
    """
    from helikon._version import __version__

    extra_checks = extras()
    box = sandbox()
    by_extra = {c["name"]: c for c in extra_checks}
    required: list[Check] = []
    for name in require:
        if name == "sandbox":
            rows = [c for c in box["checks"] if c["name"] in _SANDBOX_ROWS]
            bad = [c for c in rows if not c["ok"]]
            if not rows:  # pragma: no cover - every platform reports one of the rows
                required.append(_check("sandbox", False, "no OS sandbox", "run on Linux or macOS"))
            else:
                required.append(
                    _check("sandbox", not bad, rows[0]["detail"], bad[0]["fix"] if bad else None)
                )
        elif name in by_extra:
            required.append(by_extra[name])
        else:
            known = ", ".join(["sandbox", *sorted(by_extra)])
            raise ValueError(f"{name!r} is not an extra or 'sandbox'; choose from {known}")
    report: dict[str, Any] = {
        "version": __version__,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": f"{sys.platform} {platform.machine()}",
        "native": native_build(),
        "core": core(),
        "extras": extra_checks,
        "sandbox": box,
        "services": services() if check_services else None,
        "required": required,
    }
    report["exit_code"] = exit_code(report)
    return report


def exit_code(report: dict[str, Any]) -> int:
    """The command's exit status for ``report`` (see the module doc for the codes)."""
    if any(not c["ok"] for c in [*report["core"], *report["required"]]):
        return EXIT_REQUIRED_MISSING
    if report["services"] is not None and any(not c["ok"] for c in report["services"]):
        return EXIT_SERVICE_UNREACHABLE
    return EXIT_OK


def failures(report: dict[str, Any]) -> str | None:
    """One line naming what made the status non-zero, or ``None`` when it is ``0``."""
    code = report["exit_code"]
    if code == EXIT_REQUIRED_MISSING:
        missing = [c["name"] for c in [*report["core"], *report["required"]] if not c["ok"]]
        return f"helikon doctor: required but missing: {', '.join(missing)} (exit 1)"
    if code == EXIT_SERVICE_UNREACHABLE:
        down = [c["name"] for c in report["services"] if not c["ok"]]
        return f"helikon doctor: not reachable: {', '.join(down)} (exit 3)"
    return None


def _lines(title: str, checks: list[Check]) -> list[str]:
    out = [title]
    for check in checks:
        mark = "ok  " if check["ok"] else "MISS"
        out.append(f"  {mark} {check['name']:<24} {check['detail']}")
        if check["fix"]:
            out.append(f"       {'':<24} fix: {check['fix']}")
    return out


def render(report: dict[str, Any]) -> str:
    """The report as text, one check a line, fixes under what they fix."""
    native = report["native"]
    lines = [
        f"helikon {report['version']}",
        f"  python        {report['python']} ({report['platform']})",
        f"  native core   {native['version']}, {native['profile']} build, {native['target']}",
    ]
    lines += _lines("core (required)", report["core"])
    if report["required"]:
        lines += _lines("required (--require)", report["required"])
    lines += _lines("extras", report["extras"])
    lines += _lines(f"sandbox ({report['sandbox']['platform']})", report["sandbox"]["checks"])
    if report["services"] is not None:
        lines += _lines("services", report["services"])
    else:
        lines.append("services: not checked (--check-services)")
    return "\n".join(lines)


def doctor(
    check_services: Annotated[
        bool,
        typer.Option(
            "--check-services",
            help="Also connect to Redis (REDIS_URL), PostgreSQL (DATABASE_URL) and Temporal "
            "(TEMPORAL_ADDRESS).",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    require: Annotated[
        list[str] | None,
        typer.Option(
            "--require",
            help="An extra (openai, server, ...) or 'sandbox' that must be available; "
            "repeatable. Missing: exit 1.",
        ),
    ] = None,
) -> None:
    """Show the version, native build, extras, what the sandbox enforces here, services.

    Exits 0 when everything required is there, 1 when something required is missing (a core
    check, or a --require name), 3 when a --check-services service did not answer.
    """
    try:
        report = collect(check_services=check_services, require=tuple(require or ()))
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--require") from None
    typer.echo(json.dumps(report, indent=2) if as_json else render(report))
    reason = failures(report)
    if reason is not None:
        typer.echo(reason, err=True)
        raise typer.Exit(report["exit_code"])
