"""Deterministic corpus of realistic tool output with planted secrets, for redaction benches.

Every document imitates something an agent's tools print (``git log``, ``env``, ``curl -v``,
JSON API bodies, YAML config, Python tracebacks, ``pip install`` logs, ``docker ps``) and
carries planted secrets of known kinds plus decoys that must survive (git SHAs, UUIDs,
sha256 digests, ordinary words). The same seed always yields the same corpus.

Usage::

    python benches/redaction_corpus.py --seed 7 --docs 2000 --out /tmp/corpus.jsonl
    python benches/redaction_corpus.py --seed 7 --docs 2000 --check   # needs helikon built

``--check`` redacts every document and reports planted secrets that survived, decoys that
were altered, and throughput.
"""

from __future__ import annotations

import argparse
import json
import random
import string
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

ALNUM = string.ascii_letters + string.digits
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"


@dataclass
class Doc:
    """One generated tool output."""

    kind: str
    text: str
    secrets: list[str] = field(default_factory=list)
    decoys: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)


class Gen:
    """Seeded generators for secrets, decoys and documents."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def chars(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    # ---------------------------------------------------------------- secrets
    def github(self) -> str:
        return "ghp_" + self.chars(ALNUM, 36)

    def aws_key_id(self) -> str:
        return "AKIA" + self.chars(string.ascii_uppercase + "234567", 16)

    def slack(self) -> str:
        return f"xoxb-{self.chars(string.digits, 12)}-{self.chars(string.digits, 13)}-" + (
            self.chars(ALNUM, 24)
        )

    def openai(self) -> str:
        return "sk-proj-" + self.chars(B64URL, 48)

    def jwt(self) -> str:
        return (
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
            + "eyJ"
            + self.chars(B64URL, 40)
            + "."
            + self.chars(B64URL, 43)
        )

    def password(self) -> str:
        return self.chars(ALNUM + "!#%+", self.rng.randint(10, 20))

    # ---------------------------------------------------------------- decoys
    def sha(self) -> str:
        return self.chars(HEX, 40)

    def uuid(self) -> str:
        h = self.chars(HEX, 32)
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def digest(self) -> str:
        return "sha256:" + self.chars(HEX, 64)

    # ---------------------------------------------------------------- documents
    def git_log(self) -> Doc:
        shas = [self.sha() for _ in range(self.rng.randint(3, 8))]
        lines = []
        for sha in shas:
            lines += [f"commit {sha}", "Author: Dev <dev@example.com>", "", "    fix things", ""]
        token = self.github()
        lines.append(f"remote: https://x-access-token:{token}@github.com/acme/app.git")
        return Doc("git_log", "\n".join(lines) + "\n", [token], shas)

    def env_dump(self) -> Doc:
        pw, key = self.password(), self.openai()
        path = "/usr/local/bin:/usr/bin:/bin"
        text = (
            f"HOME=/home/dev\nPATH={path}\nDB_PASSWORD={pw}\nOPENAI_API_KEY={key}\n"
            f"LANG=en_US.UTF-8\nBUILD_ID={self.uuid()}\n"
        )
        return Doc("env", text, [pw, key], [path], env={"DB_PASSWORD": pw})

    def curl_verbose(self) -> Doc:
        jwt, rid = self.jwt(), self.uuid()
        text = (
            "> GET /v1/items HTTP/1.1\n> Host: api.example.com\n"
            f"> Authorization: Bearer {jwt}\n> Accept: */*\n>\n< HTTP/1.1 200 OK\n"
            f"< x-request-id: {rid}\n<\n"
        )
        return Doc("curl", text, [jwt], [rid])

    def json_body(self) -> Doc:
        pw, secret, uid = self.password(), self.chars(ALNUM, 32), self.uuid()
        body = {
            "id": uid,
            "user": {"name": "dana", "password": pw},
            "client": {"clientId": "web", "clientSecret": secret},
            "items": [{"sku": self.chars(string.ascii_uppercase, 6), "n": 3}],
        }
        return Doc("json", json.dumps(body, indent=self.rng.choice([None, 2])), [pw, secret], [uid])

    def yaml_config(self) -> Doc:
        pw, hook = self.password(), self.slack()
        text = (
            "service:\n  name: billing\n  replicas: 3\ndatabase:\n"
            f"  url: postgres://billing:{pw}@db.internal:5432/billing\n"
            f"notifications:\n  slack_token: {hook}\n"
        )
        return Doc("yaml", text, [pw, hook], ["billing"])

    def traceback(self) -> Doc:
        token = self.github()
        text = (
            "Traceback (most recent call last):\n"
            '  File "/app/push.py", line 12, in push\n'
            "    raise RuntimeError(msg)\n"
            f"RuntimeError: POST /repos failed; headers={{'Authorization': 'token {token}'}}\n"
        )
        return Doc("traceback", text, [token], ["POST /repos failed"])

    def pip_log(self) -> Doc:
        digests = [self.digest() for _ in range(self.rng.randint(2, 6))]
        lines = [
            f"Collecting pkg{i}==1.{i}.0\n  Downloading ... ({d})" for i, d in enumerate(digests)
        ]
        key = self.aws_key_id()
        lines.append(f"Uploading to s3 with key id {key}")
        return Doc("pip", "\n".join(lines) + "\n", [key], digests)

    def docker_ps(self) -> Doc:
        ids = [self.chars(HEX, 12) for _ in range(self.rng.randint(2, 5))]
        lines = ["CONTAINER ID   IMAGE          STATUS"]
        lines += [f"{i}   redis:7        Up 3 hours" for i in ids]
        return Doc("docker", "\n".join(lines) + "\n", [], ids)

    def doc(self) -> Doc:
        makers: list[Callable[[], Doc]] = [
            self.git_log,
            self.env_dump,
            self.curl_verbose,
            self.json_body,
            self.yaml_config,
            self.traceback,
            self.pip_log,
            self.docker_ps,
        ]
        return self.rng.choice(makers)()


def generate(seed: int, docs: int) -> list[Doc]:
    """``docs`` documents from ``seed`` (same arguments, same corpus)."""
    gen = Gen(seed)
    return [gen.doc() for _ in range(docs)]


def check(corpus: list[Doc]) -> int:
    """Redact the corpus with helikon; print leaks, damaged decoys and throughput."""
    from helikon.redaction import Redactor

    leaks = damaged = 0
    total_bytes = 0
    elapsed = 0.0
    for doc in corpus:
        redactor = Redactor(env=doc.env)
        start = time.perf_counter()
        out = redactor.redact(doc.text)
        elapsed += time.perf_counter() - start
        total_bytes += len(doc.text.encode())
        leaks += sum(1 for s in doc.secrets if s in out)
        damaged += sum(1 for d in doc.decoys if d not in out)
    mb_s = total_bytes / max(elapsed, 1e-9) / 1e6
    print(f"{len(corpus)} docs, {total_bytes} bytes, {mb_s:.1f} MB/s")
    print(f"leaked secrets: {leaks}, damaged decoys: {damaged}")
    return 1 if leaks or damaged else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--out", help="write JSON lines here")
    parser.add_argument("--check", action="store_true", help="redact and report")
    args = parser.parse_args(argv)
    corpus = generate(args.seed, args.docs)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            for d in corpus:
                row = {"kind": d.kind, "text": d.text, "secrets": d.secrets, "decoys": d.decoys}
                fh.write(json.dumps({**row, "env": d.env}) + "\n")
    return check(corpus) if args.check else 0


if __name__ == "__main__":
    sys.exit(main())
