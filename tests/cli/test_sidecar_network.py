"""``[sandbox.network]`` in agents.toml: a sidecar agent's Bash reaches an allowed name
(pinned to 127.0.0.1 by the table's ``hosts``) through the egress proxy, on a real local
server, and is refused another name; bad values are one error naming the field."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from helikon.cli.sidecar import SidecarError, load_sidecar
from tests.cli.clihelp import helikon
from tests.tools.conftest import IS_ROOT, needs_os_sandbox
from tests.tools.egress.servers import ORIGIN_BODY, origin

CURL = shutil.which("curl")


@pytest.fixture
def folder() -> Iterator[Path]:
    # Outside pytest's 0700 base, so that nobody (run_as, as root) can reach the workspace.
    path = Path(tempfile.mkdtemp(prefix="helikon-sidecar-net-"))
    path.chmod(0o755)
    (path / "ws").mkdir()
    (path / "ws").chmod(0o777)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _sidecar(folder: Path, network: str, command: str = "true", extra: str = "") -> Path:
    call = {"tool_call": {"call_id": "b", "name": "Bash", "args": {"command": command}}}
    (folder / "s.json").write_text(json.dumps([[call], [{"token": "done"}]]))
    run_as = "run_as = [65534, 65534]\n" if IS_ROOT else ""
    sidecar = folder / "agents.toml"
    sidecar.write_text(
        '[agents.a]\nmodel = { provider = "mock", script = "s.json" }\ntools = ["Bash"]\n'
        f'[sandbox]\nroot = "ws"\n{run_as}{extra}[sandbox.network]\n{network}'
    )
    return sidecar


NETWORK = (
    'allow_domains = ["pkg.test"]\n'
    'allow_addresses = ["127.0.0.1/32"]\n'
    'hosts = { "pkg.test" = "127.0.0.1", "other.test" = "127.0.0.1" }\n'
)


@needs_os_sandbox
@pytest.mark.skipif(CURL is None, reason="curl is not installed (scripts/test installs it)")
def test_bash_reaches_the_allowed_name_through_the_proxy_and_not_another(folder: Path) -> None:
    with origin() as (port, seen):
        command = (
            f"curl -sS http://pkg.test:{port}/; echo rc=$?; "
            f"curl -sS -f http://other.test:{port}/; echo rc=$?; "
            f"curl -sS --noproxy '*' --max-time 3 http://127.0.0.1:{port}/; echo rc=$?"
        )
        sidecar = _sidecar(folder, NETWORK, command)
        proc = helikon("run", "--agents", str(sidecar), "fetch")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    bash = out.split("← Bash: ", 1)[1].split("\n→ ", 1)[0]
    assert seen == ["/"]  # only the allowed name's request reached the server
    assert ORIGIN_BODY.decode().strip() in bash
    rcs = [line for line in bash.replace("\\n", "\n").splitlines() if line.startswith("rc=")]
    assert rcs == ["rc=0", "rc=22", "rc=7"], bash  # 22: curl -f on the proxy's 403


@needs_os_sandbox
@pytest.mark.skipif(CURL is None, reason="curl is not installed (scripts/test installs it)")
def test_the_sidecar_agent_streams_the_network_events_and_the_model_reads_the_refusal(
    folder: Path,
) -> None:
    with origin() as (port, seen):
        command = f"curl -sS http://pkg.test:{port}/; curl -sS -f http://other.test:{port}/"
        agent = load_sidecar(_sidecar(folder, NETWORK, command)).build()
        result = agent.run_sync("fetch")
    assert seen == ["/"]
    events = [e for e in result.events if e.type == "network_access"]
    assert [(e.host, e.port, e.verdict, e.rule, e.call_id) for e in events] == [
        ("pkg.test", port, "allow", "allow_domains:pkg.test", "b"),
        ("other.test", port, "deny", "not_allowed", "b"),
    ]
    text = next(e.item.content[0].text for e in result.events if e.type == "tool_output_item")
    assert text.startswith("exit code: 22\nstdout:\nhello from the origin\n"), text
    assert (
        f"network: other.test:{port} refused by the egress proxy (not_allowed: other.test is "
        "not in allow_domains ['pkg.test'])"
    ) in text


def test_the_policy_is_built_from_the_table(folder: Path) -> None:
    sidecar = _sidecar(
        folder, NETWORK + "allow_ports = [80, 443]\nmax_connections_per_command = 8\n"
    )
    toolbox_options = load_sidecar(sidecar)
    from helikon.cli.sidecar_network import network_options

    table = toolbox_options.sandbox
    assert table is not None
    options = network_options(toolbox_options, table, "os")
    policy = options["network"]
    assert policy.to_dict() == {
        "allow_domains": ["pkg.test"],
        "deny_domains": [],
        "allow_unix_sockets": [],
        "allow_addresses": ["127.0.0.1/32"],
        "allow_ports": [80, 443],
        "max_connections_per_command": 8,
    }
    assert policy.check_target("pkg.test", 443).rule == "allow_domains:pkg.test"
    assert policy.check_target("pkg.test", 8080).rule == "port"


@pytest.mark.parametrize(
    ("network", "extra", "problem"),
    [
        (
            'allow_domain = ["x.test"]\n',
            "",
            "sandbox.network: unknown key 'allow_domain'. Fix: did you mean 'allow_domains'?",
        ),
        (
            'allow_domains = "pypi.org"\n',
            "",
            "sandbox.network.allow_domains: must be a list, not the string 'pypi.org'. Fix: ",
        ),
        ("allow_domains = [1]\n", "", "sandbox.network.allow_domains: 1 is not a string. Fix: "),
        (
            'allow_domains = ["pypi.*"]\n',
            "",
            "sandbox.network.allow_domains: 'pypi.*': '*' is "
            "only allowed alone or as a leading '*.'",
        ),
        (
            'allow_domains = ["10.0.0.1"]\n',
            "",
            "sandbox.network.allow_domains: '10.0.0.1' is "
            "an IP address; list addresses in allow_addresses",
        ),
        ("allow_ports = [0]\n", "", "sandbox.network.allow_ports: 0 is not a port (1-65535)"),
        ("allow_ports = 443\n", "", "sandbox.network.allow_ports: must be a list of ports"),
        ('allow_addresses = ["nope"]\n', "", "sandbox.network.allow_addresses: "),
        (
            'allow_unix_sockets = ["rel.sock"]\n',
            "",
            "sandbox.network.allow_unix_sockets: 'rel.sock' is not an absolute path",
        ),
        (
            'hosts = { "a.test" = "not-an-ip" }\n',
            "",
            "sandbox.network.hosts: 'not-an-ip' for 'a.test' is not an IP",
        ),
        ('hosts = ["a.test"]\n', "", "sandbox.network.hosts: must be a table"),
        (
            'allow_domains = ["x.test"]\n',
            'backend = "host"\n',
            "sandbox.network: the host backend cannot enforce a network policy",
        ),
        (
            'allow_domains = ["x.test"]\n',
            "allow_network = true\n",
            "sandbox.network: allow_network = true opens every address",
        ),
    ],
)
def test_a_bad_network_table_is_one_error_naming_the_field(
    folder: Path, network: str, extra: str, problem: str
) -> None:
    sidecar = _sidecar(folder, network, extra=extra)
    with pytest.raises(SidecarError) as info:
        load_sidecar(sidecar).build()
    assert str(info.value).startswith(f"{sidecar}: {problem}"), str(info.value)


def test_network_not_a_table_is_refused(folder: Path) -> None:
    sidecar = folder / "agents.toml"
    (folder / "s.json").write_text("[]")
    sidecar.write_text(
        '[agents.a]\nmodel = { provider = "mock", script = "s.json" }\ntools = ["Bash"]\n'
        '[sandbox]\nroot = "ws"\nnetwork = "pypi.org"\n'
    )
    with pytest.raises(SidecarError) as info:
        load_sidecar(sidecar).build()
    assert str(info.value).startswith(f"{sidecar}: sandbox.network: must be a table. Fix: ")
