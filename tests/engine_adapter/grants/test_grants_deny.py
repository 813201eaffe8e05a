"""Deny rules: read broadly (any command a call may run), checked first, win over everything.

Every command here is data handed to the matcher or to a Session whose engine runs nothing.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.event_loop import run
from support.steps import StepRunner

from engine_adapter import ApprovalGrant, Session, TaskState
from engine_adapter.grants import GrantStore
from engine_adapter.grants.deny import runs_prefix

PUSH = ("git", "push")

RUNS_IT = [
    "git push", "git push --force origin main", "git  push", "/usr/bin/git push",
    "/usr/bin/Git push", "./git push", "GIT push", "git -C sub push", "git --no-pager push",
    "sudo git push", "sudo -u root git push", "env GIT_TRACE=1 git push", "FOO=1 git push",
    "nice -n 5 git push", "timeout 5 git push", "xargs git push", "nohup git push &",
    "time git push", "command git push", "exec git push", "find . -exec git push ;",
    "ls; git push", "ls && git push", "ls || git push", "ls | git push", "ls\ngit push",
    "(git push)", "{ git push; }", "if true; then git push; fi",
    'bash -c "git push"', "sh -c 'cd x && git push'", "eval 'git push'",
    "ssh host 'git push'", 'echo "$(git push)"', "echo `git push`", "cat <(git push)",
    "git${IFS}push", "g'i't push", 'g"it" push', "gi\\t push", "git pu''sh",
    'bash -c "bash -c \'git push\'"', "git status; git push origin",
    "bash -c 'git push", "git log --grep push",
    # wrappers with options of their own, package runners, git's own helper, a shell's stdin
    "exec -a foo git push", "command -p git push", "time -p git push", "coproc git push",
    "coproc pusher { git push; }", "uv run git push", "pipx run git push",
    "bundle exec git push", "npm exec -- git push", "/usr/lib/git-core/git-push", "git-push",
    "bash <<< 'git push'", "echo git push | sh", "printf 'git push' | bash -s",
    "echo git push | bash -", "sh <<EOF\ngit push\nEOF",
]
DOES_NOT = [
    "git status", "git pull", "git pushd", "gitpush", "echo git", "push git",
    "ls -la", "legit push", "git stash", "pushd /tmp",
]


@pytest.mark.parametrize("command", RUNS_IT)
def test_a_deny_rule_catches_the_program_however_it_is_dressed(command: str) -> None:
    assert runs_prefix({"command": command}, PUSH), command


@pytest.mark.parametrize("command", DOES_NOT)
def test_a_deny_rule_leaves_other_programs_alone(command: str) -> None:
    assert not runs_prefix({"command": command}, PUSH), command


@pytest.mark.parametrize("tool_input", [
    {"argv": ["git", "push"]}, {"argv": ["/usr/bin/git", "-C", "x", "push"]},
    {"argv": ["bash", "-c", "git push"]}, {"argv": ["sudo", "git", "push"]},
    {"cmd": "git push"}, {"script": "ls\ngit push"}, {"args": ["git", "push"]},
    {"command": "ls", "argv": ["git", "push"]},
])
def test_every_command_key_is_read(tool_input: dict[str, Any]) -> None:
    assert runs_prefix(tool_input, PUSH)


@pytest.mark.parametrize("tool_input", [{}, {"path": "git push"}, {"command": 3},
                                        {"argv": [1, 2]}, {"command": ""}])
def test_no_command_no_match(tool_input: dict[str, Any]) -> None:
    assert not runs_prefix(tool_input, PUSH)


def test_a_hostile_line_is_cheap_and_still_caught() -> None:
    deep = "$(" * 300 + "git push" + ")" * 300
    assert runs_prefix({"command": deep}, PUSH)
    long = "echo x; " * 3_000 + "git push"
    assert runs_prefix({"command": long}, PUSH)
    assert not runs_prefix({"command": "echo x; " * 3_000}, PUSH)


PROGRAMS = st.sampled_from(["ls", "git status", "npm test", "echo hi", "cat a"])
JOIN = st.sampled_from([";", "&&", "||", "|", "&", "\n"])


@settings(max_examples=300, deadline=None)
@given(PROGRAMS, JOIN, st.sampled_from(["git push", "/bin/git push -f", "sudo git push"]),
       st.booleans())
def test_the_denied_command_anywhere_in_a_line_is_caught(before, op, denied, first) -> None:
    line = f"{denied} {op} {before}" if first else f"{before} {op} {denied}"
    assert runs_prefix({"command": line}, PUSH)


# -- in a Session: deny wins over every allow ---------------------------------------------------

def _session(tmp_path, *calls: tuple[str, dict[str, Any], int], **options: Any) -> Session:
    async def ask_all(r: StepRunner) -> None:
        for call_id, tool_input, tier in calls:
            await r.ask(call_id, "shell", tool_input, tier=tier)

    return Session(StepRunner(ask_all), TaskState(task="t", cwd=str(tmp_path)), **options)


def _resolved(session: Session) -> dict[str, Any]:
    return {e.approval_id: e for e in session.history if e.type == "approval_resolved"}


def test_deny_wins_over_session_and_saved_grants_policy_and_auto_approve(tmp_path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    store = GrantStore(tmp_path / "cfg", project=work)
    store.add_grant("user", "shell", "git push", 3)
    rule = store.add_deny("user", "shell", "git push")
    session = _session(work, ("c1", {"command": "git push origin"}, 3),
                       ("c2", {"command": "git status"}, 3),
                       grants=[ApprovalGrant(tool="shell", prefix="git push", tier=3)],
                       grant_store=store, approval_policy=lambda request: "allow",
                       unattended=True, auto_approve=True)
    run(session.run())
    c1, c2 = _resolved(session)["c1"], _resolved(session)["c2"]
    assert (c1.allowed, c1.via, c1.scope, c1.grant_id) == (False, "deny-rule", "user", rule.id)
    assert c1.rule == "shell `git push`" and c1.tool_input == {"command": "git push origin"}
    assert c2.allowed and c2.via == "policy"
    assert not [e for e in session.history if e.type == "approval_requested"
                and e.approval_id == "c1"]  # denied at once: nobody was asked
    assert not session.is_granted("shell", {"command": "git push origin"}, 3)


ALLOWS = ["session", "project", "user", "policy", "auto-approve", "human"]
DRESSED = ["git push origin main", "ls && git push", "sudo /usr/bin/git push -f",
           "bash -c 'git push'", "git${IFS}push"]


@pytest.mark.parametrize("deny_scope", ["project", "user"])
@pytest.mark.parametrize("allow", ALLOWS)
def test_deny_beats_every_allow_in_every_scope(tmp_path, deny_scope, allow) -> None:
    """A deny rule in either saved scope wins over an allow from each source: a session grant,
    a project or user grant, a policy, --auto-approve, a human present (never even asked)."""
    work = tmp_path / "w"
    work.mkdir()
    store = GrantStore(tmp_path / "cfg", project=work)
    options: dict[str, Any] = {"grant_store": store, "unattended": allow != "human"}
    if allow in ("project", "user"):
        store.add_grant(allow, "shell", "git push", 3)
    elif allow == "session":
        options["grants"] = [ApprovalGrant(tool="shell", prefix="git push", tier=3)]
    elif allow == "policy":
        options["approval_policy"] = lambda request: "allow"
    elif allow == "auto-approve":
        options["auto_approve"] = True
    else:
        options["approval_timeout"] = 30  # a guard only: were it asked, nobody would answer
    rule = store.add_deny(deny_scope, "shell", "git push")
    calls = [(f"c{n}", {"command": c}, 3) for n, c in enumerate(DRESSED)]
    session = _session(work, *calls, **options)
    run(session.run())
    resolved = _resolved(session)
    for call_id, tool_input, _ in calls:
        event = resolved[call_id]
        assert (event.allowed, event.via, event.scope, event.grant_id) == (
            False, "deny-rule", deny_scope, rule.id), tool_input
        assert not session.is_granted("shell", tool_input, 3)
    assert not [e for e in session.history if e.type == "approval_requested"]


def test_a_deny_another_cockpit_writes_mid_run_applies_at_the_next_call(tmp_path) -> None:
    """`cockpit grants deny` while a run goes on: the next call is denied, no restart."""
    work = tmp_path / "w"
    work.mkdir()
    store = GrantStore(tmp_path / "cfg", project=work)
    store.add_grant("project", "shell", "git push", 3)

    async def steps(r: StepRunner) -> None:
        await r.ask("before", "shell", {"command": "git push"})
        # another process's store: the CLI writing the user file
        GrantStore(tmp_path / "cfg", project=None).add_deny("user", "shell", "git push")
        await r.ask("after", "shell", {"command": "git push"})

    session = Session(StepRunner(steps), TaskState(task="t", cwd=str(work)), unattended=True,
                      grant_store=store)
    run(session.run())
    resolved = _resolved(session)
    assert (resolved["before"].allowed, resolved["before"].via) == (True, "grant")
    assert (resolved["after"].allowed, resolved["after"].via) == (False, "deny-rule")


def test_a_deny_for_every_tool(tmp_path) -> None:
    store = GrantStore(tmp_path / "cfg", project=None)
    store.add_deny("user", "*", "rm")
    assert store.deny_for("execute", {"command": "rm -rf build"}) is not None
    assert store.deny_for("shell", {"argv": ["rm", "x"]}) is not None
    assert store.deny_for("shell", {"command": "ls"}) is None


def test_a_deny_names_its_tool(tmp_path) -> None:
    store = GrantStore(tmp_path / "cfg", project=None)
    store.add_deny("user", "shell", "git push")
    assert store.deny_for("execute", {"command": "git push"}) is None
    assert store.deny_for("shell", {"command": "git push"}) is not None


def test_a_deny_rule_is_recorded_as_used(tmp_path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    store = GrantStore(tmp_path / "cfg", project=work)
    rule = store.add_deny("project", "shell", "git push")
    session = _session(work, ("c1", {"command": "git push"}, 3), grant_store=store)
    run(session.run())
    (again,) = GrantStore(tmp_path / "cfg", project=work).denies()
    assert again.id == rule.id and again.last_used is not None
