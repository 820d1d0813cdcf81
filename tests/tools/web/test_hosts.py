"""Host allow/deny lists: exact names, *.suffix patterns, IDNA, precedence."""

from __future__ import annotations

import pytest

from helikon.errors import ConfigError
from helikon.tools.web.hosts import HostRules, normalize_host


def test_no_lists_allow_everything() -> None:
    assert HostRules().denial("anything.example") is None


def test_exact_and_suffix_patterns() -> None:
    rules = HostRules(allow=["docs.python.org", "*.example.com"])
    assert rules.denial("docs.python.org") is None
    assert rules.denial("DOCS.Python.org.") is None
    assert rules.denial("a.example.com") is None
    assert rules.denial("a.b.example.com") is None
    # *.suffix does not match the bare domain nor look-alikes
    for host in ("example.com", "badexample.com", "example.com.evil.net", "python.org"):
        denial = rules.denial(host)
        assert denial is not None and "not on the allow list" in denial, host


def test_deny_wins_over_allow() -> None:
    rules = HostRules(allow=["*.example.com"], deny=["admin.example.com", "*.corp.example.com"])
    assert rules.denial("www.example.com") is None
    assert "deny list" in (rules.denial("admin.example.com") or "")
    assert "matches '*.corp.example.com'" in (rules.denial("x.corp.example.com") or "")


def test_idna_names_compare_in_ascii_form() -> None:
    rules = HostRules(deny=["bücher.de"])
    assert rules.denial("xn--bcher-kva.de") is not None
    assert normalize_host("Bücher.DE.") == "xn--bcher-kva.de"


def test_ip_literals_as_patterns() -> None:
    rules = HostRules(deny=["127.0.0.1", "[::1]"])
    assert rules.denial("127.0.0.1") is not None
    assert rules.denial("::1") is not None
    assert rules.denial("127.0.0.2") is None


@pytest.mark.parametrize("bad", ["ex*mple.com", "*example.com", "a.*.com", "", "exa mple.com"])
def test_malformed_patterns_are_config_errors(bad: str) -> None:
    with pytest.raises(ConfigError):
        HostRules(allow=[bad])


def test_a_single_string_is_not_a_list() -> None:
    with pytest.raises(ConfigError, match="deny_hosts must be a list"):
        HostRules(deny="example.com")
