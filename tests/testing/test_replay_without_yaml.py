"""ReplayServer without PyYAML: hand-written responses work, a YAML cassette says what to
install (a new user with only ``helikon[openai]`` hit a bare ModuleNotFoundError)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path


def test_from_responses_needs_no_yaml_and_a_cassette_names_the_extra(tmp_path: Path) -> None:
    cassette = tmp_path / "c.yaml"
    cassette.write_text("interactions: []\n")
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["yaml"] = None  # as if PyYAML were not installed
        import urllib.request
        from helikon.testing.replay import ReplayServer

        with ReplayServer.from_responses([(200, {{}}, {{"ok": True}})], path="/x") as server:
            req = urllib.request.Request(server.base_url + "/x", data=b"{{}}", method="POST")
            print(urllib.request.urlopen(req).read().decode())
        try:
            ReplayServer({str(cassette)!r})
        except ImportError as exc:
            print("ImportError:", exc)
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        '{"ok": true}',
        "ImportError: reading a YAML cassette needs PyYAML: pip install 'helikon[replay]' "
        "(ReplayServer.from_responses works without it)",
    ]
