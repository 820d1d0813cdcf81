"""Run the OS sandbox from the uid this script runs as and print what happened, as JSON.

``tests/tools/test_sandbox_unprivileged.py`` starts it under ``setpriv`` as ``nobody`` (a host
that is not root). Argument: a JSON object ``{"root": PATH, "outside": PATH, "commands":
[...], "private_mounts": bool, "read_only_paths": [...], "network": bool | {"hosts": {NAME:
ADDRESS}, "allow_addresses": [...], "mechanism": ...}}``. Output: one JSON object with
``euid``, ``capabilities`` (``sandbox_capabilities()`` as a dict), and either ``refused``
(the ``SandboxUnavailable`` text) or ``results`` (per command: exit code, stdout, stderr and
the ``network_access`` events as ``[host, verdict, rule, protocol]``), ``notes`` (the
guarantees' notes) and ``egress_mechanism``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
from typing import Any


async def main(spec: dict[str, Any]) -> dict[str, Any]:
    from helikon.errors import SandboxUnavailable
    from helikon.tools import OsSandboxBackend, Sandbox, sandbox_capabilities
    from helikon.tools.egress import NetworkPolicy, StaticResolver

    out: dict[str, Any] = {
        "euid": os.geteuid(),
        "capabilities": dataclasses.asdict(sandbox_capabilities()),
    }
    options: dict[str, Any] = {
        "private_mounts": spec.get("private_mounts", False),
        "read_only_paths": spec.get("read_only_paths", []),
    }
    network = spec.get("network")
    if network:
        extra = network if isinstance(network, dict) else {}
        options["network"] = NetworkPolicy(
            allow_domains=["pypi.test"], allow_addresses=extra.get("allow_addresses", [])
        )
        if extra.get("hosts"):
            options["network_resolver"] = StaticResolver(extra["hosts"])
        if extra.get("mechanism"):
            options["egress_mechanism"] = extra["mechanism"]
    try:
        backend = OsSandboxBackend(Sandbox.open(spec["root"]), timeout=20, **options)
    except SandboxUnavailable as exc:
        out["refused"] = str(exc)
        return out
    try:
        results = []
        for command in spec["commands"]:
            r = await backend.run(command)
            results.append(
                {
                    "exit_code": r.exit_code,
                    "stdout": r.stdout,
                    "stderr": r.stderr,
                    "network": [[e.host, e.verdict, e.rule, e.protocol] for e in r.network],
                }
            )
        out["results"] = results
        out["notes"] = list(backend.guarantees().notes)
        out["egress_mechanism"] = backend.egress.mechanism if backend.egress else None
    finally:
        backend.close()
    return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(json.loads(sys.argv[1])))))
