"""Field cases BR-17, BR-18 and BR-20 through the real pipeline and BashTool.

The Bash backend here only RECORDS commands, so a pipeline bug can never run `rm -rf /`.
"""

from __future__ import annotations

from typing import Any

import pytest

from helikon import Agent, CancellationToken, RunContext
from helikon.permissions import DenyRule, explain
from helikon.testing import Call, MockModel, Text
from helikon.tools import BashTool, ExecResult, Isolation, SandboxGuarantees


class RecordingBackend:
    def __init__(self) -> None:
        self.commands: list[str] = []

    def guarantees(self) -> SandboxGuarantees:
        return SandboxGuarantees(
            filesystem=Isolation("none"),
            network=Isolation("none"),
            syscalls=Isolation("none"),
            label="recording (test)",
        )

    async def run(
        self, command: str, *, timeout: float | None = None, cancel: CancellationToken | None = None
    ) -> ExecResult:
        self.commands.append(command)
        return ExecResult(exit_code=0, signal=None, stdout="ran\n", stderr="")


async def _run_bash(ctx: RunContext[Any], command: str) -> tuple[RecordingBackend, Any]:
    backend = RecordingBackend()
    model = MockModel([[Call("c1", "Bash", {"command": command})], [Text("done")]])
    result = await Agent(name="a", model=model, tools=[BashTool(backend)]).run("go", ctx)
    out = next(e for e in result.events if e.type == "tool_output_item")
    return backend, out.item


DANGEROUS = [
    "rm -rf /",
    "rm -fr /",
    "rm -r -f /",
    "rm -Rf --no-preserve-root /",
    "rm --force --recursive /",
    "rm -rfv -- /",
    "rm -rf ~/",
]


@pytest.mark.parametrize("command", DANGEROUS)
async def test_br17_every_spelling_of_a_destructive_remove_is_denied(command: str) -> None:
    ctx: RunContext[Any] = RunContext.ephemeral(None)
    backend, out = await _run_bash(ctx, command)
    assert backend.commands == []
    assert out.is_error
    assert out.content[0].text.startswith("permission denied: guard rm_recursive_root_or_home")
    e = await explain(ctx, "Bash", {"command": command})
    assert (e.decision, e.stage, e.rule) == ("ask", "guard", "rm_recursive_root_or_home")


async def test_br17_control_runs() -> None:
    backend, out = await _run_bash(RunContext.ephemeral(None), "rm -rf ./build")
    assert backend.commands == ["rm -rf ./build"]
    assert not out.is_error


async def test_br18_comment_lines_before_a_denied_command() -> None:
    ctx: RunContext[Any] = RunContext.ephemeral(None).with_deny_rules([DenyRule.bash_command("rm")])
    script = "# tidy\n# temp files\necho start\nrm -rf ./build\necho end"
    backend, out = await _run_bash(ctx, script)
    assert backend.commands == []
    assert out.content[0].text == "permission denied: DenyRule.bash_command('rm') matched"
    e = await explain(ctx, "Bash", {"command": script})
    assert e.decision == "deny" and e.stage == "deny_rule"
    detail = await explain(
        RunContext.ephemeral(None).without_default_guards(), "Bash", {"command": script}
    )
    assert detail.decision == "allow"
    from helikon.shell import analyze

    rm = next(c for c in analyze(script).commands if c.program == "rm")
    assert rm.line == 4
    control = "# rm -rf / is dangerous\necho hi"
    backend, out = await _run_bash(ctx, control)
    assert backend.commands == [control]


READS = [
    'API_KEY="$(cat ./secrets/key.txt)" ./deploy.sh',
    "echo `cat notes.txt`",
    "{ cat notes.txt; } | wc -c",
    "wc -c <(cat notes.txt)",
    "( cat notes.txt )",
]


@pytest.mark.parametrize("command", READS)
async def test_br20_reads_through_substitutions_and_groups(command: str) -> None:
    ctx: RunContext[Any] = RunContext.ephemeral(None).with_deny_rules(
        [DenyRule.bash_command("cat")]
    )
    backend, out = await _run_bash(ctx, command)
    assert backend.commands == []
    assert out.content[0].text == "permission denied: DenyRule.bash_command('cat') matched"


async def test_br20_single_quoted_control_is_data() -> None:
    ctx: RunContext[Any] = RunContext.ephemeral(None).with_deny_rules(
        [DenyRule.bash_command("cat")]
    )
    backend, _ = await _run_bash(ctx, "echo '$(cat x)'")
    assert backend.commands == ["echo '$(cat x)'"]


class Approver:
    def __init__(self, allow: bool) -> None:
        self.allow = allow
        self.prompts: list[str] = []

    async def decide(self, tool: str, prompt: str, args: Any) -> Any:
        from helikon.permissions import ApprovalAllow, ApprovalDeny

        self.prompts.append(prompt)
        return ApprovalAllow() if self.allow else ApprovalDeny("operator said no")


@pytest.mark.parametrize("allow", [True, False])
async def test_ask_guard_goes_to_the_approval_handler(allow: bool) -> None:
    approver = Approver(allow)
    ctx: RunContext[Any] = RunContext.ephemeral(None).with_approval_handler(approver)
    backend = RecordingBackend()
    model = MockModel([[Call("c1", "Bash", {"command": "echo x > /etc/motd"})], [Text("ok")]])
    result = await Agent(name="a", model=model, tools=[BashTool(backend)]).run("go", ctx)
    kinds = [e.type for e in result.events]
    assert "approval_requested" in kinds
    assert approver.prompts == [
        "guard protected_path_write: write to a protected system path (echo x > /etc/motd)"
    ]
    if allow:
        assert backend.commands == ["echo x > /etc/motd"]
        assert "permission_denied" not in kinds
    else:
        assert backend.commands == []
        denied = next(e for e in result.events if e.type == "permission_denied")
        assert denied.tool == "Bash"
        assert denied.reason.endswith("operator said no")
        assert kinds.index("permission_denied") < kinds.index("tool_output_item")


async def test_without_default_guards_runs_the_command() -> None:
    ctx: RunContext[Any] = RunContext.ephemeral(None).without_default_guards()
    backend, out = await _run_bash(ctx, "echo x > /etc/motd")
    assert backend.commands == ["echo x > /etc/motd"]
    assert not out.is_error


async def test_a_deny_guard_cannot_be_approved() -> None:
    from helikon.permissions import GuardRule

    guard = GuardRule(
        name="no-force-push", action="deny", program="git", args_contain=("push", "--force*")
    )
    approver = Approver(True)
    ctx: RunContext[Any] = (
        RunContext.ephemeral(None).with_guard_rules([guard]).with_approval_handler(approver)
    )
    backend, out = await _run_bash(ctx, "git push --force origin main")
    assert backend.commands == []
    assert out.content[0].text.startswith("permission denied: guard no-force-push")
    assert approver.prompts == []
    e = await explain(ctx, "Bash", {"command": "git push --force origin main"})
    assert (e.decision, e.rule) == ("deny", "no-force-push")
    backend, out = await _run_bash(ctx, "git push origin main")
    assert backend.commands == ["git push origin main"]
