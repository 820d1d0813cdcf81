"""Secret redaction: scrub secrets from text before it reaches a model, an event or a log.

The scanner is Rust (``helikon._native.Redactor``); this module is its typed surface. A
:class:`Redactor` is compiled once from the known secrets and a mask, then applied to any
number of texts. It finds:

* values of secret-named keys in every common form, every occurrence on a line:
  ``KEY=v``, ``KEY: v``, ``export KEY=v``, JSON/YAML/TOML/INI keys, ``X-API-KEY``,
  ``api.key``, ``clientSecret``, ``--password=v`` and ``--password v`` (a key is
  secret-named when it is or ends in ``SECRET``, ``TOKEN``, ``PASSWORD``, ``PASSWD``,
  ``API_KEY``, ``APIKEY``, ``PRIVATE_KEY``, ``CREDENTIAL(S)``, ``ACCESS_KEY`` and a few
  more, any case, ``-``/``_``/``.`` separated). An unquoted value ends where the value
  ends (a shell word, or a phrase up to the next key, flag or comment), never blindly at
  the end of the line: ``A_TOKEN=*** B=1`` keeps ``B=1``. References are left alone in
  every form: ``${VAR}``, ``$VAR``, ``$(cmd)``, ``{{ secrets.X }}``, empty values,
  placeholders (``<your-key>``, ``xxxx``, ``changeme``) and file paths
  (``GOOGLE_APPLICATION_CREDENTIALS=/home/u/sa.json``, which is not a known value either);
* ``Authorization`` / ``Proxy-Authorization`` credentials (a known scheme word such as
  ``Bearer``, ``Basic`` or ``token`` stays);
* passwords in URLs (``https://user:***@host``);
* credential files: kubeconfig (``client-key-data``, ``client-certificate-data``,
  ``token``), docker ``config.json`` (``auth``, ``identitytoken``), Azure connection
  strings (``AccountKey``, ``SharedAccessKey``), AWS secret access keys (by key name, or
  40 characters next to an access key id), ``.npmrc`` (``_authToken``, ``_auth``),
  ``.pypirc`` and netrc passwords, PEM and OpenSSH private keys, Google service-account
  JSON;
* known token formats: AWS access key ids, GitHub (``ghp_``/``gho_``/``ghu_``/``ghs_``/
  ``ghr_``, ``github_pat_``), GitLab, Slack (``xox*``, webhook URLs), OpenAI, Anthropic,
  Stripe (``sk``/``rk``, live and test), SendGrid, Twilio, Mailgun, Google API keys,
  Hugging Face, npm and PyPI tokens, JWTs;
* cookie header values, signed-URL signatures and credentials (AWS, GCS, Azure SAS,
  CloudFront), tokens given as a URL's user (a Sentry DSN's key), and a table of vendor
  prefixes (Google OAuth ``GOCSPX-``/``ya29.``, Shopify, Vault, DigitalOcean, Linear,
  Doppler, Grafana, Databricks, Postman, New Relic, Atlassian, Square, Telegram and Discord
  bot tokens);
* known values: secret-named environment variables and ``extra_secrets``, at least 8 bytes,
  not all digits, not a common word, matched ASCII case-insensitively, also JSON-escaped,
  URL-encoded, in base64 and in hex.

Text shown cut (a capped Bash output, a WebFetch page, an MCP result) is redacted *before*
the cut, with the text around it (:meth:`Redactor.redact_head`, :meth:`Redactor.redact_tail`).

Git SHAs, UUIDs and ordinary text are left alone. Scanning is linear in the text, reads the
``str`` in place, returns the very same object when there is nothing to redact, and
releases the GIL for long texts (16 KiB and more; shorter scans take less time than a thread
switch). Offsets reported by :meth:`Redactor.findings` are ``str`` indices (code points), so
``text[f.start:f.end]`` is the secret. No error message ever contains a secret.

Example:
    >>> from helikon.redaction import Redactor
    >>> r = Redactor(["hunter2hunter2"], env={})
    >>> r.redact("DB_PASSWORD=x\\nlogin with hunter2hunter2")
    'DB_PASSWORD=***\\nlogin with ***'
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from helikon import _native
from helikon.errors import ConfigError

__all__ = [
    "CUT_GUARD",
    "DEFAULT_MASK",
    "Finding",
    "Redactor",
    "process_redactor",
    "redact",
    "unusable_secret_reason",
]

DEFAULT_MASK: Final = "***"
"""The spec's replacement marker."""

CUT_GUARD: Final[int] = _native.REDACT_CUT_GUARD
"""Context a capture keeps beyond each cut it shows (16 KiB): what :meth:`Redactor.redact_head`
and :meth:`Redactor.redact_tail` need on the dropped side to know a secret at the cut."""

_SURROGATE = re.compile("[\ud800-\udfff]")


def _clean(text: str) -> str:
    """Replace lone surrogates (from ``surrogateescape`` decoding) with U+FFFD, 1:1."""
    return _SURROGATE.sub("\ufffd", text)


@dataclass(frozen=True, slots=True)
class Finding:
    """One redacted region of a text.

    Attributes:
        kind: why it was redacted, e.g. ``"github_token"``, ``"secret_key_value"``,
            ``"authorization"``, ``"url_password"``, ``"known_value"``, ``"private_key"``,
            ``"aws_secret_key"``, ``"sendgrid_key"``.
        start: index of the first character (a ``str`` index, not a byte offset).
        end: index one past the last character; ``text[start:end]`` is what is masked.
    """

    kind: str
    start: int
    end: int


class Redactor:
    """A compiled secret redactor: build once, call :meth:`redact` for every output.

    Args:
        extra_secrets: literal secret values to find anywhere (the spec's
            ``with_extra_secrets``). Values shorter than 8 bytes, all-digit values and
            common words are ignored.
        env: environment whose secret-named variables (``*_TOKEN``, ``*_API_KEY``,
            ``*_PASSWORD``, ...) become known secrets. ``None`` reads ``os.environ`` now,
            at construction; pass ``{}`` to ignore the environment.
        mask: the replacement text (default ``***``), at most 256 bytes.

    Raises:
        helikon.errors.ConfigError: ``extra_secrets`` is a ``str`` or holds a non-``str``,
            ``env`` holds a non-``str`` key or value, or ``mask`` is too long or not valid
            text. The message names the field, never a secret value.

    Example:
        >>> token = "ghp_" + "A1b2C3d4E5" * 4
        >>> r = Redactor(env={"GH_TOKEN": token})
        >>> r.redact(f"POST /repos failed; headers={{'Authorization': 'token {token}'}}")
        "POST /repos failed; headers={'Authorization': 'token ***'}"
        >>> r.redact(f"{token}\\n")
        '***\\n'
        >>> r.findings("key AKIAIOSFODNN7EXAMPLE")
        [Finding(kind='aws_access_key', start=4, end=24)]
    """

    __slots__ = ("_native",)

    def __init__(
        self,
        extra_secrets: Iterable[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        mask: str = DEFAULT_MASK,
    ) -> None:
        if isinstance(extra_secrets, str | bytes):
            raise ConfigError("extra_secrets must be a list of strings, not a single string")
        extras: list[str] = []
        for i, value in enumerate(extra_secrets):
            if not isinstance(value, str):
                raise ConfigError(f"extra_secrets[{i}] must be a str, got {type(value).__name__}")
            extras.append(_clean(value))
        source = os.environ if env is None else env
        variables: dict[str, str] = {}
        for key, value in source.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise ConfigError("env keys and values must be str")
            variables[_clean(key)] = _clean(value)
        if not isinstance(mask, str) or _SURROGATE.search(mask):
            raise ConfigError("mask must be a str of valid Unicode text")
        self._native = _native.Redactor(json.dumps(extras), json.dumps(variables), mask)

    @property
    def mask(self) -> str:
        """The replacement text."""
        return self._native.mask

    @property
    def known_secret_count(self) -> int:
        """How many distinct known secret values are scanned for (after filtering)."""
        return self._native.known_secret_count

    def redact(self, text: str) -> str:
        """Return ``text`` with every secret replaced by the mask.

        Idempotent: redacting the result again returns it unchanged.

        Args:
            text: any text: tool output, an exception message, a log line.

        Returns:
            The redacted text; ``text`` itself (the same object) when nothing was found.

        Example:
            >>> Redactor(env={}).redact("export OPENAI_API_KEY=sk-abc\\nok")
            'export OPENAI_API_KEY=***\\nok'
        """
        try:
            return self._native.redact(text)
        except UnicodeEncodeError:
            pass  # lone surrogates: scan a cleaned copy, splice the original
        mask = self._native.mask
        out: list[str] = []
        at = 0
        for f in self.findings(text):
            out.append(text[at : f.start])
            out.append(mask)
            at = f.end
        out.append(text[at:])
        return "".join(out)

    def redact_head(self, text: str, keep: int) -> str:
        """The start of a longer text, redacted *before* it is cut to ``keep`` characters.

        A cut made before redaction leaks what straddles it (a token cut short no longer
        matches its shape). ``text`` should run :data:`CUT_GUARD` bytes past ``keep``: that
        context tells whether the characters before the cut belong to a secret. The result
        is a prefix of ``self.redact(text)`` of at most ``keep`` characters, ending after a
        newline when one is near the limit (else after a blank).

        Args:
            text: the first ``keep`` characters of the shown text and the context after.
            keep: characters shown at most (>= 0).

        Returns:
            The redacted, cut text.

        Example:
            >>> Redactor(env={}).redact_head("ok\\nAPI_KEY=abcdefghijklmnop more", 14)
            'ok\\n'
        """
        return self._native.redact_head(_clean(text), max(0, keep))

    def redact_tail(self, text: str, keep: int) -> str:
        """The end of a longer text, redacted *before* its start is cut away.

        ``text`` should hold :data:`CUT_GUARD` bytes before the last ``keep`` characters:
        a key in that context still marks the value shown after the cut. The result is a
        suffix of ``self.redact(text)`` of at most ``keep`` characters, starting after a
        newline when one is near the limit (else after a blank), and never inside a private
        key block whose BEGIN line is not in ``text``.

        Args:
            text: context, then the last ``keep`` characters of the shown text.
            keep: characters shown at most (>= 0).

        Returns:
            The redacted, cut text.

        Example:
            >>> Redactor(env={}).redact_tail("x API_KEY=abcdefghijklmnop\\nrest\\n", 12)
            'rest\\n'
        """
        return self._native.redact_tail(_clean(text), max(0, keep))

    def findings(self, text: str) -> list[Finding]:
        """The regions :meth:`redact` masks: sorted, disjoint, ``str`` indices.

        Args:
            text: the text to scan.

        Returns:
            One :class:`Finding` per masked region; overlapping matches are merged and
            named by the most specific kind.

        Example:
            >>> text = "url https://bob:pw123@db:5432"
            >>> [(f.kind, text[f.start:f.end]) for f in Redactor(env={}).findings(text)]
            [('url_password', 'pw123')]
        """
        try:
            raw = self._native.findings(text)
        except UnicodeEncodeError:
            raw = self._native.findings(_clean(text))
        return [Finding(d["kind"], d["start"], d["end"]) for d in json.loads(raw)]

    def redact_value(self, value: Any) -> Any:
        """Redact a JSON-compatible value (dicts, lists, strings, numbers, bools, None).

        Strings are redacted; a string directly under a secret-named key is masked whole
        (an ``Authorization`` value keeps its scheme word). Keys and non-string scalars are
        returned unchanged.

        Args:
            value: anything ``json.dumps`` accepts.

        Returns:
            A redacted copy.

        Raises:
            TypeError: ``value`` is not JSON-serializable.
            ValueError: ``value`` holds a NaN or infinite float.

        Example:
            >>> Redactor(env={}).redact_value({"headers": {"X-Api-Key": "k1"}, "n": 1})
            {'headers': {'X-Api-Key': '***'}, 'n': 1}
        """
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        try:
            return json.loads(self._native.redact_json(text))
        except UnicodeEncodeError:  # lone surrogates in a string: redact a cleaned copy
            return json.loads(self._native.redact_json(_clean(text)))

    def __repr__(self) -> str:
        return f"Redactor(mask={self.mask!r}, known_secrets={self.known_secret_count})"


_process: tuple[tuple[tuple[str, str], ...], Redactor] | None = None


def process_redactor() -> Redactor:
    """A redactor of every pattern plus this process's secret-named environment values,
    rebuilt only when the environment changed.

    This is the redactor of the places that cut output before the agent loop sees it (the
    Bash capture, WebFetch pages, MCP results, Read pages): they redact with it before the
    cut, and the loop's own redactor (with the run's ``extra_secrets``) redacts the result.

    Returns:
        The shared :class:`Redactor`.
    """
    global _process
    env = tuple(os.environ.items())
    cached = _process
    if cached is not None and cached[0] == env:
        return cached[1]
    built = Redactor(env=dict(env))
    _process = (env, built)
    return built


def redact(text: str, extra_secrets: Iterable[str] = ()) -> str:
    """Redact ``text`` with a one-off :class:`Redactor` (known secrets: ``extra_secrets``
    plus the secret-named variables of ``os.environ``, read now).

    Build a :class:`Redactor` once instead when redacting repeatedly.

    Args:
        text: the text to scrub.
        extra_secrets: literal secret values to remove as well.

    Returns:
        The redacted text.

    Raises:
        helikon.errors.ConfigError: ``extra_secrets`` is not a collection of ``str``.

    Example:
        >>> redact("using sk-abc123xyz to auth", ["sk-abc123xyz"])
        'using *** to auth'
    """
    return Redactor(extra_secrets).redact(text)


def unusable_secret_reason(value: str) -> str | None:
    """Why the scanner ignores ``value`` as a known secret (``"shorter than 8 bytes"``,
    ``"all digits"``, ``"blank"``, ``"a common word"``), or ``None`` when it keeps it.

    The reason never quotes the value.
    """
    return _native.unusable_secret_reason(value)
