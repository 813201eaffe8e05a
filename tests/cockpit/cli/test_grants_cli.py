"""`cockpit grants list / revoke / deny / clear`, and what replay and export say about a call a
saved grant, a deny rule or a policy decided."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from cockpit.cli.main import app as cli
from cockpit.export import export_journal
from cockpit.paths import grants_dir
from engine_adapter import ApprovalRequested, ApprovalResolved, JsonlEventJournal
from engine_adapter.grants import GrantStore
from engine_adapter.view import fold_events


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    work = tmp_path / "src" / "app"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    return work


def cockpit(*args: str):
    return CliRunner().invoke(cli, ["grants", *args])


def test_deny_list_revoke_and_clear(project) -> None:
    store = GrantStore(grants_dir(), project=project)
    kept = store.add_grant("project", "shell", "git status", 3)
    store.add_grant("user", "shell", "npm test", 2)
    denied = cockpit("deny", "shell", "git push", "--note", "CI pushes, not agents")
    assert denied.exit_code == 0, denied.output
    assert "denied shell `git push` in every project" in denied.output
    listed = cockpit("list")
    assert listed.exit_code == 0
    header, *rows = listed.output.strip().splitlines()
    assert header.split()[:4] == ["ID", "SCOPE", "KIND", "TOOL"]
    assert [row.split()[1:3] for row in rows] == [["user", "deny"], ["project", "allow"],
                                                  ["user", "allow"]]
    assert "CI pushes, not agents" in rows[0] and kept.id in rows[1]
    only = cockpit("list", "--scope", "project")
    assert only.output.count("\n") == 2 and "git status" in only.output
    assert "running cockpit" in cockpit("list", "--scope", "session").output
    gone = cockpit("revoke", kept.id)
    assert gone.exit_code == 0 and f"revoked project grant {kept.id}" in gone.output
    assert cockpit("revoke", kept.id).exit_code == 2
    cleared = cockpit("clear", "--scope", "user")
    assert cleared.exit_code == 0 and "removed 1 user grant" in cleared.output
    left = GrantStore(grants_dir(), project=project)
    assert left.grants() == [] and [d.prefix for d in left.denies()] == ["git push"]


@pytest.mark.parametrize(("args", "says"), [
    (("list", "--scope", "galaxy"), "--scope 'galaxy': one of session, project, user"),
    (("deny", "shell", "git push; ls"), "plain words"),
    (("deny", "shell", "git push", "--scope", "session"), "one of project, user"),
    (("clear", "--scope", "session"), "one of project, user"),
    (("revoke", "g-nope"), "no saved grant or deny rule has the id 'g-nope'"),
])
def test_mistakes_are_one_line_and_exit_2(project, args, says) -> None:
    result = cockpit(*args)
    assert result.exit_code == 2 and says in result.output
    assert "Traceback" not in result.output


def test_a_broken_file_is_reported_not_fatal(project) -> None:
    folder = grants_dir()
    folder.mkdir(parents=True)
    (folder / "user.toml").write_text("[grant.g-1\n")
    (folder / "user.toml").chmod(0o600)
    result = cockpit("list")
    assert result.exit_code == 0
    assert "warning:" in result.output and "user.toml: line 1" in result.output
    assert cockpit("deny", "shell", "rm").exit_code == 2  # never overwrites the broken file


def test_a_project_through_a_symbolic_link_has_no_project_grants(project, tmp_path) -> None:
    link = tmp_path / "link"
    link.symlink_to(project)
    GrantStore(grants_dir(), project=project).add_grant("project", "shell", "ls", 3)
    result = cockpit("list", "--cwd", str(link))
    assert "symbolic link" in result.output and " ls " not in result.output
    assert " ls " in cockpit("list", "--cwd", str(project)).output


def test_replay_and_export_name_the_grant_rule_and_policy(tmp_path) -> None:
    path = tmp_path / "run.jsonl"
    journal = JsonlEventJournal(path)
    events = [
        ApprovalResolved(approval_id="c1", tool="shell", allowed=True, via="grant",
                         scope="project", grant_id="g-0000c0de", rule="shell `git status`",
                         tool_input={"command": "git status"}, tier=3),
        ApprovalResolved(approval_id="c2", tool="shell", allowed=False, via="deny-rule",
                         scope="user", grant_id="d-0000a11f", rule="shell `git push`",
                         tool_input={"command": "git push origin"}, tier=3),
        ApprovalResolved(approval_id="c3", tool="shell", allowed=True, via="policy",
                         rule="ci.toml rule 2: shell `pytest` → allow",
                         tool_input={"command": "pytest -q"}, tier=3),
        ApprovalResolved(approval_id="c4", tool="shell", allowed=False, via="policy",
                         error="ValueError: no idea", tool_input={"command": "ls"}, tier=3),
        ApprovalRequested(approval_id="c5", tool="shell", reason="r",
                          tool_input={"command": "npm test"}, prefix="npm test",
                          grantable=True),
        ApprovalResolved(approval_id="c5", tool="shell", allowed=True, via="human",
                         remember=True, scope="user", grant_id="g-00000b0b"),
    ]
    for n, event in enumerate(events):
        journal.write(event.model_copy(update={"seq": n, "session_id": "s", "ts": 1.0 + n}))
    journal.close()
    view = fold_events(events)
    row = view.tool_calls["c2"]
    assert row.tool_input == {"command": "git push origin"} and row.approval.scope == "user"
    assert view.grants[-1].scope == "user" and view.grants[-1].grant_id == "g-00000b0b"
    result = export_journal(str(path), "markdown")
    text = result.text
    assert "allowed by a project grant g-0000c0de (shell `git status`)" in text
    assert "denied by a deny rule d-0000a11f (user): shell `git push`" in text
    assert "allowed by the policy (ci.toml rule 2: shell `pytest` → allow)" in text
    assert "denied: the approval policy failed (ValueError: no idea)" in text
    assert "always allowed by a human (user g-00000b0b)" in text


def test_grants_off_in_a_workspace_that_holds_them_is_said_once(project) -> None:
    holder = grants_dir().parent  # a workspace around the grants folder: the agent could write
    holder.mkdir(parents=True, exist_ok=True)
    result = cockpit("list", "--cwd", str(holder))
    assert result.exit_code == 0
    assert result.output.count("saved grants are off") == 1
