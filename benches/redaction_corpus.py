"""Deterministic corpora for redaction benches and tests, generated (nothing downloaded).

Two corpora, each a list of :class:`Doc`; the same seed always yields the same corpus:

* **planted** (:func:`generate`): realistic tool output (``git log``, ``env``, ``curl -v``,
  JSON API bodies, YAML and INI config, kubeconfig, docker ``config.json``, netrc,
  tracebacks, build logs, CLI invocations) with planted secrets of every kind the
  redactor claims (:data:`KINDS`), each labelled with its kind, plus decoys that must
  survive (git SHAs, UUIDs, digests). Tokens are synthetic: drawn from each vendor's
  published shape (prefix, length, alphabet) with this module's seeded generator; none is
  a real credential.
* **benign** (:func:`benign`): tool output with no secret at all (build logs, ``git log``
  with secret-ish words in messages, JSON API responses, minified JS, base64 blobs, UUID
  and hash listings, lock files, pytest output). Anything masked there is a false
  positive.

Usage::

    python benches/redaction_corpus.py --seed 7 --docs 2000 --out /tmp/corpus.jsonl
    python benches/redaction_corpus.py --seed 7 --docs 2000 --check   # needs helikon built

``--check`` redacts both corpora and reports planted secrets that survived (per kind),
decoys that were altered, and false positives on the benign corpus.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import string
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"
B64 = ALNUM + "+/"
HEX = "0123456789abcdef"
UPPER32 = string.ascii_uppercase + "234567"


@dataclass
class Doc:
    """One generated tool output.

    Attributes:
        kind: the document template (``"env"``, ``"benign_js"``, ...).
        text: the output itself.
        secrets: planted secret values; each must be gone after redaction.
        decoys: values that must survive redaction.
        env: the environment of the run that printed it (its known secrets).
        kinds: the secret kind of each entry of ``secrets`` (same order).
    """

    kind: str
    text: str
    secrets: list[str] = field(default_factory=list)
    decoys: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    kinds: list[str] = field(default_factory=list)


class Gen:
    """Seeded generators for secrets, decoys and documents."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def chars(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def pick(self, options: list[str]) -> str:
        return self.rng.choice(options)

    # ---------------------------------------------------------------- decoys
    def sha(self) -> str:
        return self.chars(HEX, 40)

    def uuid(self) -> str:
        h = self.chars(HEX, 32)
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def digest(self) -> str:
        return "sha256:" + self.chars(HEX, 64)

    def word(self) -> str:
        return self.pick(
            ["build", "deploy", "cache", "worker", "billing", "auth", "api", "web", "queue"]
        )

    # ---------------------------------------------------------------- secrets
    def password(self) -> str:
        return self.chars(ALNUM + "!#%+@^", self.rng.randint(10, 20))

    def github(self) -> str:
        return self.pick(["ghp", "gho", "ghu", "ghs", "ghr"]) + "_" + self.chars(ALNUM, 36)

    def github_pat(self) -> str:
        return f"github_pat_{self.chars(ALNUM, 22)}_{self.chars(ALNUM, 59)}"

    def gitlab(self) -> str:
        return self.pick(["glpat", "gldt", "glrt", "glptt"]) + "-" + self.chars(B64URL, 20)

    def aws_key_id(self) -> str:
        return self.pick(["AKIA", "ASIA"]) + self.chars(UPPER32, 16)

    def aws_secret(self) -> str:
        while True:
            s = self.chars(B64, 40)
            if any(c.isupper() for c in s) and any(c.islower() for c in s):
                return s

    def slack(self) -> str:
        prefix = self.pick(["xoxb", "xoxp", "xoxa", "xoxs"])
        digits = f"{self.chars(string.digits, 12)}-{self.chars(string.digits, 13)}"
        return f"{prefix}-{digits}-{self.chars(ALNUM, 24)}"

    def slack_hook_secret(self) -> str:
        return f"B{self.chars(UPPER32, 10)}/{self.chars(ALNUM, 24)}"

    def openai(self) -> str:
        if self.rng.random() < 0.3:
            return f"sk-{self.chars(ALNUM, 20)}T3BlbkFJ{self.chars(ALNUM, 20)}"
        return f"sk-{self.pick(['proj', 'svcacct', 'admin'])}-" + self.chars(B64URL, 64)

    def anthropic(self) -> str:
        return "sk-ant-api03-" + self.chars(B64URL, 93) + "AA"

    def stripe(self) -> str:
        return f"{self.pick(['sk', 'rk'])}_{self.pick(['live', 'test'])}_" + self.chars(ALNUM, 40)

    def sendgrid(self) -> str:
        return f"SG.{self.chars(B64URL, 22)}.{self.chars(B64URL, 43)}"

    def twilio(self) -> str:
        return "SK" + self.chars(HEX, 32)

    def mailgun(self) -> str:
        return "key-" + self.chars(HEX, 32)

    def datadog(self) -> str:
        return self.chars(HEX, self.pick_len([32, 40]))

    def pick_len(self, options: list[int]) -> int:
        return self.rng.choice(options)

    def google_api_key(self) -> str:
        return "AIza" + self.chars(B64URL, 35)

    def huggingface(self) -> str:
        return "hf_" + self.chars(ALNUM, 34)

    def npm(self) -> str:
        return "npm_" + self.chars(ALNUM, 36)

    def pypi(self) -> str:
        return "pypi-AgEIcHlwaS5vcmc" + self.chars(B64URL, 120)

    def jwt(self) -> str:
        header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').rstrip(b"=").decode()
        return f"{header}.eyJ{self.chars(B64URL, 60)}.{self.chars(B64URL, 43)}"

    def pem_body(self, lines: int) -> str:
        return "\n".join(self.chars(B64, 64) for _ in range(lines))

    def b64_blob(self, n: int) -> str:
        return base64.b64encode(self.rng.randbytes(n)).decode()

    # ---------------------------------------------------------------- wrappers
    def log_lines(self, n: int) -> list[str]:
        """Ordinary build/run log lines around a planted line."""
        out = []
        for _ in range(n):
            out.append(
                self.pick(
                    [
                        f"[{self.rng.randint(10, 23)}:{self.rng.randint(10, 59)}:"
                        f"{self.rng.randint(10, 59)}] INFO {self.word()}: started in "
                        f"{self.rng.randint(1, 900)} ms",
                        f"   Compiling {self.word()}-core v0.{self.rng.randint(1, 9)}.0",
                        f"commit {self.sha()}",
                        f"request-id: {self.uuid()}",
                        f"Step {self.rng.randint(1, 20)}/20 : RUN make {self.word()}",
                        f" ---> {self.chars(HEX, 12)}",
                    ]
                )
            )
        return out

    def wrap(self, kind: str, line: str, secrets: list[str], **kw: object) -> Doc:
        before, after = (
            self.log_lines(self.rng.randint(1, 4)),
            self.log_lines(self.rng.randint(0, 3)),
        )
        decoys = [w for w in before + after if w.startswith("commit ")]
        text = "\n".join([*before, line, *after]) + "\n"
        env = kw.get("env")
        return Doc(
            kind,
            text,
            secrets,
            [d.removeprefix("commit ") for d in decoys],
            dict(env) if isinstance(env, dict) else {},
            [kind] * len(secrets),
        )

    # ---------------------------------------------------------------- planted kinds
    def k_env_assignment(self) -> Doc:
        pw = self.password()
        name = self.pick(
            [
                "DB_PASSWORD",
                "API_TOKEN",
                "APP_SECRET",
                "SMTP_PASSWD",
                "X_API_KEY",
                "CREDENTIALS",
                "DB_PASS",
                "PGPASSWORD",
                "MYSQL_PWD",
            ]
        )
        line = self.pick(
            [
                f"{name}={pw}",
                f"export {name}={pw}",
                f"{name}={pw} LOG_LEVEL=debug ./run.sh",
                f"docker run -e {name}={pw} -e MODE=prod app:1",
                f'declare -x {name}="{pw}"',
            ]
        )
        return self.wrap("env_assignment", line, [pw])

    def k_config_file(self) -> Doc:
        pw = self.password()
        key = self.pick(["password", "secret", "token", "api_key", "private-key", "access.key"])
        line = self.pick(
            [
                f"  {key}: {pw}",
                f'  {key}: "{pw}"',
                f'{key} = "{pw}"',
                f"{key} = {pw}",
                f'{{"user": "app", "{key}": "{pw}", "port": 5432}}',
            ]
        )
        return self.wrap("config_file", line, [pw])

    def k_cli_flag(self) -> Doc:
        pw = self.password()
        flag = self.pick(["--password", "--token", "--api-key", "--client-secret", "--db-password"])
        line = self.pick(
            [
                f"$ mytool {flag} {pw} --region eu-west-1",
                f"$ mytool {flag}={pw} --verbose",
                f"+ deploy.sh {flag} '{pw}' --dry-run",
                f"$ curl -sS -u deploy:{pw} https://api.example.com/v1/items",
                f"+ curl --user ci:'{pw}' -X POST https://ci.example.com/hook",
                f"$ mysql -h db -u root -p{pw} app < schema.sql",
                f"+ sshpass -p '{pw}' ssh ci@build-3 make",
                f"$ openssl pkcs12 -export -passout pass:{pw} -in cert.pem",
            ]
        )
        return self.wrap("cli_flag", line, [pw])

    def k_url_password(self) -> Doc:
        pw = self.chars(ALNUM + "!*", 16)
        line = self.pick(
            [
                f"DATABASE_URL_RO=postgres://ro:{pw}@db.internal:5432/app",
                f"Cloning into 'app'... https://deploy:{pw}@git.example.com/o/app.git",
                f"  url: redis://default:{pw}@cache:6379/0",
            ]
        )
        return self.wrap("url_password", line, [pw])

    def k_kubeconfig(self) -> Doc:
        key_data, tok = self.b64_blob(90), self.jwt()
        text = (
            "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n"
            f"    certificate-authority-data: {self.b64_blob(60)}\n"
            "    server: https://10.0.0.1:6443\n  name: prod\nusers:\n- name: admin\n  user:\n"
            f"    client-key-data: {key_data}\n- name: ci\n  user:\n    token: {tok}\n"
        )
        return Doc("kubeconfig", text, [key_data, tok], [], {}, ["kubeconfig"] * 2)

    def k_docker_config(self) -> Doc:
        auth = base64.b64encode(f"ci:{self.password()}".encode()).decode()
        ident = self.chars(B64URL, 48)
        text = json.dumps(
            {
                "auths": {
                    "ghcr.io": {"auth": auth},
                    "acr.azurecr.io": {"auth": "", "identitytoken": ident},
                },
                "credsStore": "desktop",
            },
            indent=self.rng.choice([None, 2, 4]),
        )
        return Doc("docker_config", text, [auth, ident], [], {}, ["docker_config"] * 2)

    def k_azure(self) -> Doc:
        key = self.b64_blob(64)
        line = self.pick(
            [
                f"DefaultEndpointsProtocol=https;AccountName=st{self.word()};AccountKey={key};"
                "EndpointSuffix=core.windows.net",
                f'SB="Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;'
                f'SharedAccessKey={key}"',
            ]
        )
        return self.wrap("azure", line, [key])

    def k_aws(self) -> Doc:
        kid, secret = self.aws_key_id(), self.aws_secret()
        form = self.rng.randrange(4)
        if form == 0:
            text = (
                f"[default]\naws_access_key_id = {kid}\n"
                f"aws_secret_access_key = {secret}\nregion = eu-west-1\n"
            )
            return Doc("aws", text, [kid, secret], [], {}, ["aws", "aws"])
        line = [
            f"aws configure set default {kid} {secret}",
            f"Access key ID,Secret access key\n{kid},{secret}",
            f'{{"AccessKeyId": "{kid}", "SecretAccessKey": "{secret}"}}',
        ][form - 1]
        return self.wrap("aws", line, [kid, secret])

    def k_npmrc(self) -> Doc:
        tok = self.npm()
        text = (
            f"registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={tok}\n"
            "always-auth=true\n"
        )
        return Doc("npmrc", text, [tok], [], {}, ["npmrc"])

    def k_pypirc(self) -> Doc:
        tok = self.pypi()
        text = (
            f"[distutils]\nindex-servers = pypi\n\n[pypi]\nusername = __token__\npassword = {tok}\n"
        )
        return Doc("pypirc", text, [tok], [], {}, ["pypirc"])

    def k_netrc(self) -> Doc:
        pw = self.password()
        text = self.pick(
            [
                f"machine api.heroku.com login dev@example.com password {pw}\n",
                f"machine git.example.com\n  login ci\n  password {pw}\n",
            ]
        )
        return Doc("netrc", text, [pw], [], {}, ["netrc"])

    def k_private_key(self) -> Doc:
        body = self.pem_body(self.rng.randint(3, 12))
        label = self.pick(
            ["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY"]
        )
        text = f"$ cat id\n-----BEGIN {label}-----\n{body}\n-----END {label}-----\n"
        return Doc(
            "private_key", text, body.split("\n"), [], {}, ["private_key"] * len(body.split("\n"))
        )

    def k_gcp_service_account(self) -> Doc:
        kid, body = self.chars(HEX, 40), self.pem_body(4)
        doc = {
            "type": "service_account",
            "project_id": f"{self.word()}-{self.rng.randint(100, 999)}",
            "private_key_id": kid,
            "private_key": f"-----BEGIN PRIVATE KEY-----\n{body}\n-----END PRIVATE KEY-----\n",
            "client_email": "sa@proj.iam.gserviceaccount.com",
        }
        text = json.dumps(doc, indent=2)
        parts = body.split("\n")
        kinds = ["gcp_service_account"] * (1 + len(parts))
        return Doc("gcp_service_account", text, [kid, *parts], [], {}, kinds)

    def k_vendor(self) -> Doc:
        kind, make = self.rng.choice(
            [
                ("sendgrid", self.sendgrid),
                ("stripe", self.stripe),
                ("slack", self.slack),
                ("github", self.github),
                ("github_pat", self.github_pat),
                ("gitlab", self.gitlab),
                ("npm", self.npm),
                ("pypi", self.pypi),
                ("huggingface", self.huggingface),
                ("twilio", self.twilio),
                ("mailgun", self.mailgun),
                ("google_api_key", self.google_api_key),
                ("openai", self.openai),
                ("anthropic", self.anthropic),
                ("jwt", self.jwt),
            ]
        )
        tok = make()
        line = self.pick(
            [
                f"using {tok} to authenticate",
                f"error: credential '{tok}' was rejected (401)",
                f'{{"data": {{"value": "{tok}"}}, "ok": false}}',
                f"> Authorization: Bearer {tok}",
                f"GET https://api.example.com/v1/items?key={tok}&page=2",
                f"RuntimeError: POST /repos failed; headers={{'X-Key': '{tok}'}}",
            ]
        )
        doc = self.wrap(kind, line, [tok])
        return doc

    def k_slack_webhook(self) -> Doc:
        secret = self.slack_hook_secret()
        url = f"https://hooks.slack.com/services/T{self.chars(UPPER32, 8)}/{secret}"
        return self.wrap("slack_webhook", f"posting alert to {url}", [secret])

    def k_datadog(self) -> Doc:
        key = self.datadog()
        line = self.pick(
            [
                f"DD_API_KEY={key}",
                f"  dd_app_key: {key}",
                f"> DD-API-KEY: {key}",
                f"> DD-APPLICATION-KEY: {key}",
                f'initialize(api_key="{key}", statsd_host="127.0.0.1")',
                f'configuration.api_key["appKeyAuth"] = "{key}"',
                f"  app_key: {key}",
            ]
        )
        return self.wrap("datadog", line, [key])

    def k_twilio_auth_token(self) -> Doc:
        token = self.chars(HEX, 32)
        sid = "AC" + self.chars(HEX, 32)
        line = self.pick(
            [
                f"TWILIO_AUTH_TOKEN={token}",
                f'client = Client("{sid}", "{token}")',
                f"$ curl -X POST https://api.twilio.com/2010-04-01/Accounts/{sid}/Messages.json"
                f" -u {sid}:{token}",
                f"  authToken: '{token}',",
            ]
        )
        return self.wrap("twilio_auth_token", line, [token])

    def k_known_value(self) -> Doc:
        value = self.password()
        line = f"connecting with {value} as the session key"
        return self.wrap("known_value", line, [value], env={"SESSION_TOKEN": value})

    def doc(self) -> Doc:
        makers: list[Callable[[], Doc]] = [
            self.k_env_assignment,
            self.k_config_file,
            self.k_cli_flag,
            self.k_url_password,
            self.k_kubeconfig,
            self.k_docker_config,
            self.k_azure,
            self.k_aws,
            self.k_npmrc,
            self.k_pypirc,
            self.k_netrc,
            self.k_private_key,
            self.k_gcp_service_account,
            self.k_vendor,
            self.k_vendor,
            self.k_vendor,
            self.k_slack_webhook,
            self.k_datadog,
            self.k_twilio_auth_token,
            self.k_known_value,
        ]
        return self.rng.choice(makers)()

    # ---------------------------------------------------------------- benign
    def b_build_log(self) -> str:
        lines = []
        for _ in range(self.rng.randint(5, 25)):
            lines.append(
                self.pick(
                    [
                        f"   Compiling {self.word()}-{self.word()} v{self.rng.randint(0, 3)}."
                        f"{self.rng.randint(0, 40)}.{self.rng.randint(0, 9)}",
                        f"    Finished `release` profile [optimized] target(s) in "
                        f"{self.rng.randint(1, 300)}.{self.rng.randint(10, 99)}s",
                        f"npm WARN deprecated {self.word()}@{self.rng.randint(1, 9)}.0.0: use "
                        f"{self.word()} instead",
                        f"added {self.rng.randint(1, 900)} packages, and audited "
                        f"{self.rng.randint(900, 2000)} packages in {self.rng.randint(1, 60)}s",
                        f"tests/test_{self.word()}.py::test_token_refresh PASSED "
                        f"[{self.rng.randint(1, 99)}%]",
                        f"tests/test_auth.py::test_password_reset_{self.word()} FAILED",
                        f"#{self.rng.randint(1, 30)} [{self.word()} {self.rng.randint(1, 9)}/9] "
                        f"RUN pip install -r requirements.txt",
                        f"#{self.rng.randint(1, 30)} writing image {self.digest()} done",
                        f"Successfully built {self.chars(HEX, 12)}",
                        f"warning: unused variable: `token` --> src/{self.word()}.rs:"
                        f"{self.rng.randint(1, 400)}:{self.rng.randint(1, 40)}",
                        f"Downloading {self.word()}-{self.rng.randint(1, 9)}.0-py3-none-any.whl "
                        f"({self.rng.randint(10, 900)} kB)",
                        f"max_tokens={self.pick(['256', '1024', '4096'])} "
                        f"temperature=0.{self.rng.randint(0, 9)}",
                    ]
                )
            )
        return "\n".join(lines) + "\n"

    def b_git_log(self) -> str:
        out = []
        for _ in range(self.rng.randint(2, 8)):
            msg = self.pick(
                [
                    "auth: refresh the access token before it expires",
                    "fix: password reset emails were sent twice",
                    "docs: explain how to rotate the API key",
                    "chore: bump tokenizer to 0.15",
                    "feat: secret scanning in CI",
                    "refactor: move credentials loading into config.py",
                ]
            )
            out.append(
                f"commit {self.sha()}\nAuthor: Dev {self.word().title()} <dev@example.com>\n"
                f"Date:   Mon Jan {self.rng.randint(1, 28)} 10:00:00 2026 +0000\n\n    {msg}\n"
            )
        return "\n".join(out)

    def b_json_api(self) -> str:
        items = []
        for _ in range(self.rng.randint(1, 6)):
            items.append(
                {
                    "id": self.rng.randint(1, 10**9),
                    "node_id": "MDQ6VXNlcj" + self.chars(ALNUM, 10),
                    "sha": self.sha(),
                    "url": f"https://api.example.com/repos/o/{self.word()}/commits/{self.sha()}",
                    "token_type": "bearer",
                    "expires_in": 3600,
                    "scope": "repo read:org",
                    "password_changed_at": "2026-01-02T03:04:05Z",
                    "has_secret": self.rng.random() < 0.5,
                    "etag": f'W/"{self.chars(HEX, 32)}"',
                    "request_id": self.uuid(),
                    "max_tokens": 4096,
                    "usage": {"prompt_tokens": self.rng.randint(1, 999), "total_tokens": 1000},
                }
            )
        return json.dumps(
            {"items": items, "next_page_token": None}, indent=self.rng.choice([None, 2])
        )

    def b_minified_js(self) -> str:
        v = [self.chars(string.ascii_lowercase, 1) for _ in range(8)]
        parts = [
            f"function {v[0]}({v[1]},{v[2]}){{return {v[1]}.token={v[2]}.token,{v[1]}}}",
            f'var {v[3]}={{credentials:"include",mode:"cors",cache:"no-store"}};',
            f'{v[4]}.headers.Authorization="Bearer "+{v[5]};',
            f"const {v[6]}={{password:{v[1]}.password,remember:!0}};",
            f'if(!{v[7]}.secret)throw new Error("missing secret");',
            f"{v[0]}.prototype.setToken=function({v[1]}){{this.token={v[1]}}};",
            f'fetch("/api/{self.word()}",{{method:"POST",credentials:"same-origin"}});',
            f"({v[2]}=window.__CONFIG__)&&({v[3]}={v[2]}.apiKey);",
            f'var {v[5]}="{self.chars(HEX, 32)}";',
            f'{v[4]}=function(t){{return t.replace(/[A-Z]/g,"_")}};',
            f"sourceMappingURL=data:application/json;base64,{self.b64_blob(120)}",
            f"return{{token:{v[1]},user:{v[2]},expiresAt:Date.now()+{v[3]}}}",
            f'{v[0]}({{apiKey:{v[4]}.apiKey,secret:{v[5]}||"",retries:3}});',
            f"{v[6]}.password={v[7]}.value;{v[6]}.accessToken={v[1]}.access_token;",
            f'headers:{{"X-Api-Key":{v[2]},"Content-Type":"application/json"}}',
        ]
        self.rng.shuffle(parts)
        return "".join(parts) + "\n"

    def b_base64(self) -> str:
        blob = self.b64_blob(self.rng.randint(200, 1500))
        lines = [blob[i : i + 76] for i in range(0, len(blob), 76)]
        head = self.pick(["Content-Transfer-Encoding: base64\n\n", "data: ", "  tls.crt: "])
        return head + "\n".join(lines) + "\n"

    def b_hashes(self) -> str:
        out = []
        for _ in range(self.rng.randint(5, 20)):
            out.append(
                self.pick(
                    [
                        f"{self.chars(HEX, 64)}  dist/{self.word()}.tar.gz",
                        f"{self.chars(HEX, 32)}  {self.word()}.bin",
                        f"{self.uuid()}  {self.word()}",
                        f'"integrity": "sha512-{self.b64_blob(64)}",',
                        f"{self.word()}=={self.rng.randint(1, 9)}.0 --hash=sha256:"
                        f"{self.chars(HEX, 64)}",
                        f"{self.chars(HEX, 7)} Merge pull request #{self.rng.randint(1, 999)}",
                        f"sha1-{self.b64_blob(20)}",
                    ]
                )
            )
        return "\n".join(out) + "\n"

    def b_config(self) -> str:
        return (
            "env:\n  API_TOKEN: ${{ secrets.API_TOKEN }}\n  DB_PASSWORD: ${DB_PASSWORD}\n"
            f"  REPLICAS: {self.rng.randint(1, 5)}\n  TOKEN_TTL: 3600\n"
            "  OPENAI_API_KEY: <your-key>\n  password_file: /run/secrets/db\n"
            f"request_id={self.uuid()} token_count={self.rng.randint(1, 9999)} "
            "auth=required\n"
        )

    def benign_doc(self) -> str:
        makers: list[Callable[[], str]] = [
            self.b_build_log,
            self.b_git_log,
            self.b_json_api,
            self.b_minified_js,
            self.b_base64,
            self.b_hashes,
            self.b_config,
        ]
        return self.rng.choice(makers)()


#: The planted secret kinds, as :attr:`Doc.kinds` names them.
KINDS: tuple[str, ...] = (
    "env_assignment",
    "config_file",
    "cli_flag",
    "url_password",
    "kubeconfig",
    "docker_config",
    "azure",
    "aws",
    "npmrc",
    "pypirc",
    "netrc",
    "private_key",
    "gcp_service_account",
    "sendgrid",
    "stripe",
    "slack",
    "slack_webhook",
    "github",
    "github_pat",
    "gitlab",
    "npm",
    "pypi",
    "huggingface",
    "twilio",
    "mailgun",
    "datadog",
    "twilio_auth_token",
    "google_api_key",
    "openai",
    "anthropic",
    "jwt",
    "known_value",
)


def generate(seed: int, docs: int) -> list[Doc]:
    """``docs`` planted documents from ``seed`` (same arguments, same corpus)."""
    gen = Gen(seed)
    return [gen.doc() for _ in range(docs)]


def benign(seed: int, docs: int) -> list[Doc]:
    """``docs`` secret-free documents from ``seed`` (same arguments, same corpus)."""
    gen = Gen(seed ^ 0xBE5165)
    return [Doc("benign", gen.benign_doc()) for _ in range(docs)]


def check(corpus: list[Doc], clean: list[Doc]) -> int:
    """Redact both corpora with helikon; print leaks per kind and false positives."""
    from helikon.redaction import Redactor

    leaks: dict[str, int] = {}
    damaged = 0
    for doc in corpus:
        out = Redactor(env=doc.env).redact(doc.text)
        for s, k in zip(doc.secrets, doc.kinds, strict=True):
            if s in out:
                leaks[k] = leaks.get(k, 0) + 1
        damaged += sum(1 for d in doc.decoys if d not in out)
    r = Redactor(env={})
    fps = sum(len(r.findings(d.text)) for d in clean)
    mb = sum(len(d.text.encode()) for d in clean) / 1e6
    print(f"leaked secrets by kind: {leaks or 'none'}; damaged decoys: {damaged}")
    print(f"benign corpus: {mb:.2f} MB, {fps} false positives")
    return 1 if leaks or damaged or fps else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--out", help="write JSON lines here")
    parser.add_argument("--check", action="store_true", help="redact and report")
    args = parser.parse_args(argv)
    corpus = generate(args.seed, args.docs)
    clean = benign(args.seed, args.docs)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            for d in corpus + clean:
                row = {"kind": d.kind, "text": d.text, "secrets": d.secrets, "kinds": d.kinds}
                fh.write(json.dumps({**row, "decoys": d.decoys, "env": d.env}) + "\n")
    return check(corpus, clean) if args.check else 0


if __name__ == "__main__":
    sys.exit(main())
