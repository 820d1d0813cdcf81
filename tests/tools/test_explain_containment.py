"""``explain(..., sandbox=backend)`` says what the kernel and the egress proxy refuse for a
Bash call whatever the permission decision, and each sentence is checked against what
running the command on that backend actually does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helikon import DenyRule, RunContext
from helikon.permissions import explain
from helikon.tools import BashTool, HostBackend, OsSandboxBackend, Sandbox
from helikon.tools._containment import urls_in
from helikon.tools.egress import NetworkPolicy, StaticResolver

from .conftest import needs_os_sandbox, run_as

DELETE_NOTE = (
    "deletion is also refused by the kernel in this workspace (deny_delete: Landlock "
    "without REMOVE_FILE/REMOVE_DIR/TRUNCATE), so a renamed or copied rm cannot delete either"
)
DENIED_NET = (
    "network: denied by the kernel (Landlock TCP rules and a seccomp socket-family filter): "
    "the command reaches no address"
)


def _os(ws: dict[str, Path], **kw: Any) -> OsSandboxBackend:
    return OsSandboxBackend(Sandbox.open(ws["root"]), run_as=run_as(), timeout=20, **kw)


@needs_os_sandbox
async def test_a_deny_rule_on_rm_says_the_kernel_refuses_deletion_too(
    ws: dict[str, Path],
) -> None:
    backend = _os(ws, deny_delete=True)
    ctx = RunContext.ephemeral().with_deny_rules([DenyRule.bash_command("rm")])
    for command in ("rm hello.txt", "/bin/rm -f hello.txt", "echo x && \\rm hello.txt"):
        e = await explain(ctx, "Bash", {"command": command}, sandbox=backend)
        assert (e.decision, e.rule) == ("deny", "DenyRule.bash_command('rm')")
        assert e.containment == (DENIED_NET, DELETE_NOTE)
    # The same through the Bash tool, and the note is true: a copied rm cannot delete.
    e = await explain(ctx, "Bash", {"command": "rm hello.txt"}, sandbox=BashTool(backend))
    assert e.containment == (DENIED_NET, DELETE_NOTE)
    r = await backend.run("cp /bin/rm ./x && ./x hello.txt; cat hello.txt")
    assert "Permission denied" in r.stderr and r.stdout == "hello\nworld\n"
    # A command that deletes nothing by name still learns the kernel's rule.
    e = await explain(ctx, "Bash", {"command": "python3 tidy.py"}, sandbox=backend)
    assert e.decision == "allow"
    assert e.containment[1].startswith(
        "deletion in the workspace is refused by the kernel (deny_delete: Landlock without "
        "REMOVE_FILE/REMOVE_DIR/TRUNCATE): unlink, rmdir"
    )


@needs_os_sandbox
async def test_no_exec_in_workspace_names_the_local_programs(ws: dict[str, Path]) -> None:
    backend = _os(ws, no_exec_in_workspace=True)
    ctx = RunContext.ephemeral()
    e = await explain(
        ctx, "Bash", {"command": "cp /bin/true ./t && ./t; bin/tool x; ls"}, sandbox=backend
    )
    assert e.containment == (
        DENIED_NET,
        "executing a program from the workspace or the temp dir is refused by the kernel "
        "(no_exec_in_workspace: Landlock without EXECUTE there) (./t, bin/tool would fail "
        "with EACCES, exit 126); without private_mounts the dynamic loader can still run one "
        "(ld.so ./x); interpreters from the system directories still run scripts "
        "(sh x.sh, python3 x.py)",
    )
    r = await backend.run("cp /bin/true ./t && ./t")
    assert r.exit_code == 126 and "Permission denied" in r.stderr


@needs_os_sandbox
async def test_the_network_policy_gives_a_verdict_per_url(ws: dict[str, Path]) -> None:
    policy = NetworkPolicy(
        allow_domains=["pypi.test", "*.hosted.test"],
        deny_domains=["bad.hosted.test"],
        allow_addresses=["127.0.0.1/32"],
    )
    backend = _os(ws, network=policy, network_resolver=StaticResolver({"pypi.test": "127.0.0.1"}))
    try:
        command = (
            "curl https://pypi.test/simple/ http://files.hosted.test:8080/x "
            "https://bad.hosted.test/ https://evil.example/ http://169.254.169.254/latest"
        )
        e = await explain(RunContext.ephemeral(), "Bash", {"command": command}, sandbox=backend)
    finally:
        backend.close()
    assert backend.egress is not None
    assert e.containment == (
        f"network: only helikon's egress proxy is reachable ({backend.egress.mechanism}); it "
        "allows allow_domains ['pypi.test', '*.hosted.test'] minus deny_domains "
        "['bad.hosted.test'], and checks every resolved address (private, loopback, "
        "link-local and metadata ranges refused unless in allow_addresses ['127.0.0.1/32'])",
        "network: pypi.test:443 would be allowed by the egress proxy (allow_domains:pypi.test), "
        "if its addresses pass the address check",
        "network: files.hosted.test:8080 would be allowed by the egress proxy "
        "(allow_domains:*.hosted.test), if its addresses pass the address check",
        "network: bad.hosted.test:443 would be refused by the egress proxy "
        "(deny_domains:bad.hosted.test: bad.hosted.test matches deny_domains entry "
        "'bad.hosted.test')",
        "network: evil.example:443 would be refused by the egress proxy (not_allowed: "
        "evil.example is not in allow_domains ['pypi.test', '*.hosted.test'])",
        "network: 169.254.169.254:80 would be refused by the egress proxy (ip_literal: "
        "169.254.169.254 is a literal IP address (link-local address 169.254.0.0/16 (the cloud "
        "metadata endpoint)); only names are "
        "resolved through the proxy unless the address is in allow_addresses)",
    )


@needs_os_sandbox
async def test_open_network_other_tools_and_no_sandbox(ws: dict[str, Path]) -> None:
    backend = _os(ws, allow_network=True)
    ctx = RunContext.ephemeral()
    e = await explain(ctx, "Bash", {"command": "curl https://x.test/"}, sandbox=backend)
    assert e.containment == (
        "network: not contained (allow_network=True): TCP and UDP to every address",
    )
    assert (await explain(ctx, "Read", {"path": "a"}, sandbox=backend)).containment == ()
    assert (await explain(ctx, "Bash", {"command": "ls"})).containment == ()


async def test_the_host_backend_says_it_contains_nothing(ws: dict[str, Path]) -> None:
    bash = BashTool(HostBackend(Sandbox.open(ws["root"])))
    e = await explain(RunContext.ephemeral(), "Bash", {"command": "ls"}, sandbox=bash)
    assert e.containment == (
        "not contained (HostBackend): the command can read, write and reach whatever this "
        "process can; only the permission rules stand in its way",
    )


@pytest.mark.parametrize(
    ("command", "found"),
    [
        ("curl https://pypi.org/simple/", [("pypi.org", 443)]),
        ("wget 'http://user:pw@x.test:8080/a'", [("x.test", 8080)]),
        ('git clone "https://github.com/a/b.git"', [("github.com", 443)]),
        ("curl http://[::1]:9/ ws://w.test", [("[::1]", 9), ("w.test", 80)]),
        ("echo no urls here", []),
    ],
)
def test_urls_in_commands(command: str, found: list[tuple[str, int]]) -> None:
    assert urls_in(command) == found
