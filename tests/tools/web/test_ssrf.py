"""The address policy: every blocked range, the named metadata endpoints, exemptions."""

from __future__ import annotations

import ipaddress

import pytest

from helikon.errors import ConfigError
from helikon.tools.web.ssrf import AddressPolicy, parse_ip

# (address, words the reason must contain)
BLOCKED: list[tuple[str, str]] = [
    ("0.0.0.0", "the unspecified address"),
    ("0.1.2.3", "this network"),
    ("10.0.0.1", "RFC 1918"),
    ("10.255.255.255", "RFC 1918"),
    ("172.16.0.1", "RFC 1918"),
    ("172.31.255.254", "RFC 1918"),
    ("192.168.1.1", "RFC 1918"),
    ("100.64.0.1", "carrier-grade NAT"),
    ("100.127.255.254", "carrier-grade NAT"),
    ("127.0.0.1", "loopback"),
    ("127.255.0.9", "loopback"),
    ("169.254.169.254", "cloud metadata endpoint"),
    ("169.254.1.1", "link-local"),
    ("192.0.0.192", "Oracle Cloud metadata"),
    ("100.100.100.200", "Alibaba Cloud metadata"),
    ("192.0.2.10", "documentation"),
    ("198.51.100.7", "documentation"),
    ("203.0.113.9", "documentation"),
    ("198.18.0.1", "benchmarking"),
    ("192.88.99.1", "6to4 relay"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "broadcast"),
    ("::", "unspecified"),
    ("::1", "loopback"),
    ("::ffff:127.0.0.1", "IPv4-mapped"),
    ("::ffff:8.8.8.8", "IPv4-mapped"),
    ("::127.0.0.1", "IPv4-compatible"),
    ("::10.0.0.1", "IPv4-compatible"),
    ("fd00:ec2::254", "AWS IPv6 metadata"),
    ("fc00::1", "unique local"),
    ("fdff:ffff::1", "unique local"),
    ("fe80::1", "link-local"),
    ("fe80::1%eth0", "link-local"),
    ("febf::1", "link-local"),
    ("fec0::1", "site-local"),
    ("ff02::1", "multicast"),
    ("2001:db8::1", "documentation"),
    ("2001:0:4136:e378::1", "Teredo"),
    ("100::1", "discard"),
    ("64:ff9b:1::1", "local-use NAT64"),
    ("64:ff9b::7f00:1", "NAT64 address embedding 127.0.0.1"),
    ("64:ff9b::a9fe:a9fe", "cloud metadata endpoint"),
    ("2002:a9fe:a9fe::1", "6to4 address embedding 169.254.169.254"),
    ("2002:c0a8:101::1", "RFC 1918"),
]

ALLOWED = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.216.34",
    "100.63.255.255",  # just below CGNAT
    "100.128.0.0",  # just above CGNAT
    "172.15.255.255",
    "172.32.0.0",
    "169.253.255.255",
    "2606:4700:4700::1111",
    "2a00:1450:4001:80b::200e",
    "64:ff9b::808:808",  # NAT64 of a public address (DNS64 networks)
    "2002:808:808::1",  # 6to4 of a public address
]


@pytest.mark.parametrize(("ip", "words"), BLOCKED)
def test_blocked_ranges_say_why(ip: str, words: str) -> None:
    reason = AddressPolicy().blocked_reason(ip)
    assert reason is not None, ip
    assert words in reason


@pytest.mark.parametrize("ip", ALLOWED)
def test_public_addresses_pass(ip: str) -> None:
    assert AddressPolicy().blocked_reason(ip) is None


def test_exemption_matches_only_the_listed_range() -> None:
    policy = AddressPolicy(["127.0.0.1/32", ipaddress.ip_network("10.20.0.0/16")])
    assert policy.blocked_reason("127.0.0.1") is None
    assert policy.blocked_reason("10.20.3.4") is None
    assert policy.blocked_reason("127.0.0.2") is not None
    assert policy.blocked_reason("10.21.0.1") is not None
    # the mapped form of an exempt address is a different address
    assert policy.blocked_reason("::ffff:127.0.0.1") is not None
    assert policy.blocked_reason("::1") is not None


def test_exempt_ipv6_with_zone() -> None:
    policy = AddressPolicy(["fe80::/10"])
    assert policy.blocked_reason("fe80::1%eth0") is None


@pytest.mark.parametrize("bad", ["127.0.0.1/33", "10.0.0.1/8", "not-a-net", ""])
def test_bad_exemptions_are_config_errors(bad: str) -> None:
    with pytest.raises(ConfigError, match="CIDR"):
        AddressPolicy([bad])


def test_exemptions_as_a_single_string_are_refused() -> None:
    with pytest.raises(ConfigError, match="list of CIDR"):
        AddressPolicy("127.0.0.1/32")


def test_non_ip_string_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not an IP"):
        AddressPolicy().blocked_reason("example.com")


def test_parse_ip_accepts_only_canonical_literals() -> None:
    assert parse_ip("[::1]") == ipaddress.ip_address("::1")
    assert parse_ip(" 10.0.0.1 ") == ipaddress.ip_address("10.0.0.1")
    for text in ("127.1", "2130706433", "0x7f.1", "localhost", ""):
        assert parse_ip(text) is None
