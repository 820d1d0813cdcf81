"""NetworkPolicy: name patterns, literals in every spelling, resolved-address ranges."""

from __future__ import annotations

import pytest

from helikon.errors import ConfigError
from helikon.tools.egress import NetworkPolicy

POLICY = NetworkPolicy(
    allow_domains=["pypi.org", "*.pythonhosted.org", "github.com"],
    deny_domains=["evil.pythonhosted.org"],
)


@pytest.mark.parametrize(
    ("host", "rule"),
    [
        ("pypi.org", "allow_domains:pypi.org"),
        ("PyPI.ORG.", "allow_domains:pypi.org"),
        ("files.pythonhosted.org", "allow_domains:*.pythonhosted.org"),
        ("a.b.pythonhosted.org", "allow_domains:*.pythonhosted.org"),
    ],
)
def test_allowed_names_name_their_rule(host: str, rule: str) -> None:
    d = POLICY.check_target(host, 443)
    assert (d.verdict, d.rule) == ("allow", rule)


@pytest.mark.parametrize(
    ("host", "rule"),
    [
        ("pythonhosted.org", "not_allowed"),  # '*.' does not match the apex
        ("pypi.org.evil.com", "not_allowed"),
        ("xpypi.org", "not_allowed"),
        ("api.github.com", "not_allowed"),
        ("evil.pythonhosted.org", "deny_domains:evil.pythonhosted.org"),
        ("EVIL.pythonhosted.org.", "deny_domains:evil.pythonhosted.org"),
        ("bad name", "invalid_name"),
        ("", "invalid_name"),
    ],
)
def test_refused_names_name_their_rule(host: str, rule: str) -> None:
    d = POLICY.check_target(host, 443)
    assert (d.verdict, d.rule) == ("deny", rule)


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "127.1",
        "2130706433",
        "0x7f.0.0.1",
        "0177.0.0.1",
        "169.254.169.254",
        "[::1]",
        "::1",
        "fd00:ec2::254",
        "[fd00:ec2::254]",
        "::ffff:127.0.0.1",
        "93.184.216.34",
    ],
)
def test_literal_addresses_are_refused_in_every_spelling(host: str) -> None:
    d = NetworkPolicy(allow_domains=["*"]).check_target(host, 80)
    assert (d.verdict, d.rule) == ("deny", "ip_literal")


def test_literal_metadata_reason_names_the_endpoint() -> None:
    d = NetworkPolicy(allow_domains=["*"]).check_target("169.254.169.254", 80)
    assert "the cloud metadata endpoint" in d.reason
    d6 = NetworkPolicy(allow_domains=["*"]).check_target("fd00:ec2::254", 80)
    assert "AWS IPv6 metadata endpoint" in d6.reason


def test_literal_allowed_by_address_only_in_its_range() -> None:
    p = NetworkPolicy(allow_addresses=["127.0.0.1/32"])
    d = p.check_target("127.0.0.1", 8080)
    assert (d.verdict, d.rule) == ("allow", "allow_addresses:127.0.0.1/32")
    assert p.check_target("127.0.0.2", 8080).rule == "ip_literal"
    assert p.check_target("::ffff:127.0.0.1", 8080).rule == "ip_literal"


@pytest.mark.parametrize(
    ("ip", "fragment"),
    [
        ("127.0.0.1", "loopback"),
        ("10.1.2.3", "RFC 1918"),
        ("192.168.1.1", "RFC 1918"),
        ("172.20.0.1", "RFC 1918"),
        ("169.254.169.254", "cloud metadata endpoint"),
        ("fd00:ec2::254", "AWS IPv6 metadata endpoint"),
        ("fe80::1", "link-local"),
        ("::1", "loopback"),
        ("100.100.100.200", "Alibaba"),
    ],
)
def test_resolved_internal_addresses_are_refused(ip: str, fragment: str) -> None:
    d = POLICY.check_address("pypi.org", ip)
    assert (d.verdict, d.rule) == ("deny", "address")
    assert fragment in d.reason and d.reason.startswith(f"pypi.org resolved to {ip}")


def test_resolved_public_and_allowed_addresses() -> None:
    assert POLICY.check_address("pypi.org", "151.101.0.223").verdict == "allow"
    p = NetworkPolicy(allow_domains=["pypi.test"], allow_addresses=["127.0.0.0/8"])
    d = p.check_address("pypi.test", "127.0.0.5")
    assert (d.verdict, d.rule) == ("allow", "allow_addresses:127.0.0.0/8")


def test_empty_policy_refuses_every_name() -> None:
    d = NetworkPolicy().check_target("pypi.org", 443)
    assert (d.verdict, d.rule) == ("deny", "not_allowed")


def test_ports() -> None:
    p = NetworkPolicy(allow_domains=["pypi.org"], allow_ports=[443])
    assert p.check_target("pypi.org", 443).allowed
    d = p.check_target("pypi.org", 22)
    assert (d.verdict, d.rule, d.reason) == ("deny", "port", "port 22 is not in allow_ports")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"allow_domains": "pypi.org"}, "NetworkPolicy.allow_domains must be a list"),
        ({"allow_domains": ["py*.org"]}, "'*' is only allowed alone or as a leading '*.'"),
        ({"deny_domains": ["*.*.org"]}, "NetworkPolicy.deny_domains"),
        ({"allow_domains": ["10.0.0.1"]}, "is an IP address; list addresses in allow_addresses"),
        ({"allow_domains": ["bad name"]}, "not a valid host name"),
        ({"allow_addresses": ["10.0.0.1/8"]}, "NetworkPolicy.allow_addresses"),
        ({"allow_addresses": "127.0.0.1/32"}, "must be a list"),
        ({"allow_unix_sockets": ["run/x.sock"]}, "is not an absolute path"),
        ({"allow_ports": [0]}, "is not a port"),
        ({"allow_ports": [True]}, "is not a port"),
    ],
)
def test_bad_settings_name_the_field(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        NetworkPolicy(**kwargs)  # type: ignore[arg-type]
    assert message in str(info.value)


def test_from_dict_names_unknown_keys() -> None:
    with pytest.raises(ConfigError) as info:
        NetworkPolicy.from_dict({"allow_domain": ["pypi.org"]}, "bash.network")
    assert str(info.value) == (
        "bash.network: unknown key(s) ['allow_domain']; valid keys are ['allow_domains', "
        "'deny_domains', 'allow_unix_sockets', 'allow_addresses', 'allow_ports', "
            "'max_connections_per_command']"
    )
    with pytest.raises(ConfigError, match=r"bash\.network must be a table, got list"):
        NetworkPolicy.from_dict(["pypi.org"], "bash.network")  # type: ignore[arg-type]


def test_to_dict_round_trips() -> None:
    p = NetworkPolicy(allow_domains=["a.org"], allow_ports=[443], allow_unix_sockets=["/x.sock"])
    assert NetworkPolicy.from_dict(p.to_dict()).to_dict() == p.to_dict()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"allow_domains": "pypi.org"}, "bash.network.allow_domains must be a list, not the "
         "string 'pypi.org'"),
        ({"allow_domains": 7}, "bash.network.allow_domains must be a list of strings, got int"),
        ({"deny_domains": [None]}, "bash.network.deny_domains: None is not a string"),
        ({"allow_ports": "443"}, "bash.network.allow_ports must be a list of ports (1-65535), "
         "got str"),
        ({"allow_ports": [70000]}, "bash.network.allow_ports: 70000 is not a port (1-65535)"),
    ],
)
def test_from_dict_names_the_field_with_where(data: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        NetworkPolicy.from_dict(data, "bash.network")
    assert str(info.value) == message


async def test_a_static_table_falls_back_to_another_resolver_for_other_names() -> None:
    from helikon.tools.egress import StaticResolver

    fallback = StaticResolver({"b.test": ["127.0.0.3", "::1"]})
    r = StaticResolver({"a.test": "127.0.0.2"}, fallback=fallback)
    assert [str(ip) for ip in await r.resolve("A.test.", 80)] == ["127.0.0.2"]
    assert [str(ip) for ip in await r.resolve("b.test", 80)] == ["127.0.0.3", "::1"]
    with pytest.raises(OSError, match=r"'c\.test' is not in the static table"):
        await r.resolve("c.test", 80)
    with pytest.raises(ConfigError, match="must be an IP or a list of IPs"):
        StaticResolver({"a.test": 5})  # type: ignore[dict-item]
