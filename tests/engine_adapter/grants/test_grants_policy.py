"""Approval policies: a callable or a TOML file answers before anyone is asked; tier 4 is never
allowed by one; a failing policy denies and says why; `cockpit run --headless --policy`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from support.event_loop import run
from support.steps import StepRunner
from typer.testing import CliRunner

from cockpit.cli.main import app as cli
from engine_adapter import ApprovalGrant, ApprovalRequest, PolicyDecision, Session, TaskState
from engine_adapter.grants import PolicyError, load_policy

CI = """# what CI may do
[[rule]]
tool = "shell"
prefix = "git push"
decision = "deny"

[[rule]]
tool = "shell"
prefix = "pytest"
decision = "allow"
note = "the tests"

[[rule]]
tool = "shell"
prefix = "npm test"
decision = "ask"

[[rule]]
tool = "read_file"
max_tier = 2
decision = "allow"
"""


def policy_file(tmp_path: Path, text: str = CI) -> Path:
    path = tmp_path / "ci.toml"
    path.write_text(text, encoding="utf-8")
    return path


def request(command: str | None = None, *, tool: str = "shell", tier: int = 3,
            prefix: str = "", grantable: bool = True, **extra: Any) -> ApprovalRequest:
    tool_input = {"command": command} if command is not None else dict(extra)
    return ApprovalRequest(tool, tool_input, tier, prefix, grantable)


def test_the_first_matching_rule_decides(tmp_path) -> None:
    policy = load_policy(policy_file(tmp_path))
    assert policy(request("git push -f", prefix="")).decision == "deny"
    assert policy(request("sudo git push", prefix="")).decision == "deny"
    allowed = policy(request("pytest -q", prefix="pytest"))
    assert allowed.decision == "allow" and allowed.rule == "ci.toml rule 2: shell `pytest` → allow"
    assert policy(request("npm test", prefix="npm test")).decision == "ask"
    assert policy(request(tool="read_file", tier=1, path="a")).decision == "allow"
    assert policy(request(tool="read_file", tier=3, path="a")) is None
    assert policy(request("ls", prefix="ls")) is None


@pytest.mark.parametrize("command", ["pytest -q; curl x | sh", "pytest $(id)",
                                     "pytest --rootdir=/", "./pytest", "pytest\nrm x"])
def test_an_allow_rule_matches_only_the_exact_grant_prefix(tmp_path, command) -> None:
    """What a grant would not allow, an allow rule does not either: the Session's verdict
    (prefix and grantable) decides."""
    from engine_adapter.shell import grantability

    verdict = grantability("shell", {"command": command}, 3)
    policy = load_policy(policy_file(tmp_path))
    found = policy(request(command, prefix=verdict.prefix, grantable=verdict.grantable))
    assert found is None or found.decision != "allow", command


@pytest.mark.parametrize(("text", "says"), [
    ("[[rule]]\ndecision = \"maybe\"\n", "line 1: rule 1: decision must be allow, deny or ask"),
    ("[[rule]]\ntool = \"shell\"\ndecision = \"deny\"\n\n[[rule]]\ntool = \"shell\"\n"
     "decision = \"allow\"\nmax_tier = 4\n", "line 5: rule 2: a policy never allows tier 4"),
    ("[[rule]]\ndecision = \"allow\"\n", "an allow rule names its tool"),
    ("[[rule]]\ntool = \"shell\"\ndecision = \"deny\"\nprefix = \"git push; ls\"\n",
     "plain words"),
    ("[[rule]]\ntool = \"shell\"\ndecision = \"deny\"\ncolour = 1\n", "unknown key 'colour'"),
    ("[[rule]]\ntool = \"shell\"\ndecision = \"deny\"\nmin_tier = 3\nmax_tier = 2\n",
     "min_tier <= max_tier"),
    ("[rule]\ndecision = \"deny\"\n", "[[rule]] tables"),
    ("rules = 1\n", "unknown setting 'rules'"),
    ("[[rule]\n", "Expected"),
])
def test_a_bad_policy_file_names_the_rule_and_the_line(tmp_path, text, says) -> None:
    with pytest.raises(PolicyError) as caught:
        load_policy(policy_file(tmp_path, text))
    assert says in str(caught.value) and "ci.toml" in str(caught.value)


def test_a_missing_policy_file(tmp_path) -> None:
    with pytest.raises(PolicyError, match="cannot be read"):
        load_policy(tmp_path / "nope.toml")


# -- the callable, in a Session ------------------------------------------------------------------

def _run(policy: Any, *calls: tuple[str, str, int], **options: Any) -> dict[str, Any]:
    async def ask_all(r: StepRunner) -> None:
        for call_id, command, tier in calls:
            await r.ask(call_id, "shell", {"command": command}, tier=tier)

    session = Session(StepRunner(ask_all), TaskState(task="t"), approval_policy=policy,
                      unattended=options.pop("unattended", True), **options)
    run(session.run())
    return {e.approval_id: e for e in session.history if e.type == "approval_resolved"}


def test_a_policy_exception_is_a_deny_journaled_with_the_error() -> None:
    def broken(request: ApprovalRequest) -> str:
        raise ValueError("no idea")

    found = _run(broken, ("c1", "ls", 3), auto_approve=True)["c1"]
    assert (found.allowed, found.via, found.error) == (False, "policy", "ValueError: no idea")


@pytest.mark.parametrize("answer", ["yes", 1, True, object()])
def test_a_policy_answer_it_cannot_read_is_a_deny(answer) -> None:
    found = _run(lambda request: answer, ("c1", "ls", 3))["c1"]
    assert not found.allowed and found.via == "policy" and "answered" in found.error


def test_tier_4_is_never_allowed_by_a_policy() -> None:
    found = _run(lambda request: "allow", ("c1", "rm -rf build", 4), ("c2", "ls", 3),
                 auto_approve=True)
    assert not found["c1"].allowed and found["c1"].via == "auto"  # asked: nobody, so denied
    assert found["c2"].allowed and found["c2"].via == "policy"


def test_an_async_policy_and_a_decision_with_its_rule() -> None:
    async def policy(request: ApprovalRequest) -> PolicyDecision:
        await asyncio.sleep(0)
        return PolicyDecision("allow" if request.prefix == "ls" else "deny", "mine")

    found = _run(policy, ("c1", "ls -la", 3), ("c2", "cat x", 3))
    assert (found["c1"].allowed, found["c1"].rule) == (True, "mine")
    assert (found["c2"].allowed, found["c2"].rule) == (False, "mine")


def test_the_policy_sees_the_request() -> None:
    seen: list[ApprovalRequest] = []
    _run(lambda request: seen.append(request), ("c1", "git status --short", 3))
    (got,) = seen
    assert (got.tool, got.tool_input, got.tier, got.prefix, got.grantable) == (
        "shell", {"command": "git status --short"}, 3, "git status", True)


def test_ask_beats_a_grant_and_none_lets_it_answer() -> None:
    grant = [ApprovalGrant(tool="shell", prefix="ls", tier=3)]
    asked = _run(lambda request: "ask", ("c1", "ls", 3), grants=list(grant))["c1"]
    assert asked.via == "auto" and not asked.allowed
    granted = _run(lambda request: None, ("c1", "ls", 3), grants=list(grant))["c1"]
    assert granted.via == "grant" and granted.allowed


# -- the documented CI way ----------------------------------------------------------------------

ENGINE = '''
from engine_adapter import AgentEnd, AgentStart

class Asker:
    event_sink = approval_controller = cancel_token = None

    async def run(self, state):
        self.event_sink.emit(AgentStart(task=state.task, engine="asker"))
        answers = []
        for command in ("pytest -q", "git push origin main", "npm test", "ls"):
            ok = await self.approval_controller.request_approval(
                command, "shell", "runs it", {"command": command})
            answers.append(ok)
        self.event_sink.emit(AgentEnd(status="completed", result=repr(answers)))
        return state

def make(cwd, task):
    return Asker()
'''


def test_cockpit_run_headless_with_a_policy(tmp_path, monkeypatch) -> None:
    (tmp_path / "ci_engine.py").write_text(ENGINE, encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    journal = tmp_path / "run.jsonl"
    result = CliRunner().invoke(cli, ["run", "--headless", "--policy", str(policy_file(
        tmp_path)), "--engine", "ci_engine:make", "--cwd", str(work), "--journal",
        str(journal), "check"])
    assert result.exit_code == 0, result.output
    assert "approvals: the policy ci.toml, then no human present" in result.output
    assert "allowed by the policy (ci.toml rule 2: shell `pytest` → allow)" in result.output
    assert "denied by the policy (ci.toml rule 1: shell `git push` → deny)" in result.output
    events = [json.loads(line) for line in journal.read_text().splitlines()]
    vias = [(e["approval_id"], e["via"]) for e in events if e["type"] == "approval_resolved"]
    assert vias == [("pytest -q", "policy"), ("git push origin main", "policy"),
                    ("npm test", "auto"), ("ls", "auto")]
    assert events[-1]["result"] == "[True, False, False, False]"


def test_a_bad_policy_is_a_clear_error_before_anything_runs(tmp_path) -> None:
    result = CliRunner().invoke(cli, ["run", "--headless", "--policy",
                                      str(policy_file(tmp_path, "[[rule]]\n")),
                                      "--engine", "x:y", "t"])
    assert result.exit_code == 2
    assert "ci.toml: line 1: rule 1: decision must be" in result.output


def test_headless_says_what_in_the_saved_grants_is_not_trusted(tmp_path, monkeypatch) -> None:
    """A run nobody watches still says, at its start, that a grants file is broken (with its
    line) and that an ignored grant was ignored; the run goes on."""
    from cockpit.paths import grants_dir

    (tmp_path / "ci_engine.py").write_text(ENGINE, encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    folder = grants_dir()
    folder.mkdir(parents=True)
    (folder / "user.toml").write_text('version = 1\n\n[grant.g-1]\ntool = "shell"\n'
                                      'prefix = "ls; curl x | sh"\nmax_tier = 3\n'
                                      'created = 2025-06-01T10:00:00Z\n')
    (folder / "user.toml").chmod(0o600)
    result = CliRunner().invoke(cli, ["run", "--headless", "--engine", "ci_engine:make",
                                      "--cwd", str(work), "--journal",
                                      str(tmp_path / "run.jsonl"), "check"])
    assert result.exit_code == 0, result.output
    assert "saved grants: " in result.output
    assert "user.toml: line 3: grant g-1" in result.output and "ignored" in result.output
    (folder / "user.toml").write_text("[grant.g-1\n")
    result = CliRunner().invoke(cli, ["run", "--headless", "--engine", "ci_engine:make",
                                      "--cwd", str(work), "--journal",
                                      str(tmp_path / "run2.jsonl"), "check"])
    assert result.exit_code == 0, result.output
    assert "user.toml: line 1:" in result.output and "its grants are not used" in result.output


def test_with_a_policy_no_call_counts_as_covered_by_a_grant(tmp_path) -> None:
    """`is_granted` (what an ACP engine asks before telling its agent "allow always") is False
    under a policy: the policy may say ask or deny, so every call comes back through the gate."""
    grants = [ApprovalGrant(tool="shell", prefix="git status", tier=3)]
    plain = Session(StepRunner(), TaskState(task="t", cwd=str(tmp_path)), grants=grants)
    assert plain.is_granted("shell", {"command": "git status"}, 3)
    ruled = Session(StepRunner(), TaskState(task="t", cwd=str(tmp_path)), grants=grants,
                    approval_policy=lambda request: "ask")
    assert not ruled.is_granted("shell", {"command": "git status"}, 3)


def test_the_policy_is_read_once_an_agent_editing_it_changes_nothing(tmp_path) -> None:
    path = policy_file(tmp_path)
    policy = load_policy(path)

    async def steps(r: StepRunner) -> None:
        await r.ask("before", "shell", {"command": "pytest -q"})
        path.write_text('[[rule]]\ntool = "shell"\ndecision = "allow"\n', encoding="utf-8")
        await r.ask("after", "shell", {"command": "pytest -q"})
        await r.ask("other", "shell", {"command": "npm test"})

    session = Session(StepRunner(steps), TaskState(task="t", cwd=str(tmp_path)),
                      unattended=True, approval_policy=policy)
    run(session.run())
    found = {e.approval_id: (e.allowed, e.via) for e in session.history
             if e.type == "approval_resolved"}
    assert found == {"before": (True, "policy"), "after": (True, "policy"),
                     "other": (False, "auto")}
