"""Scopes: a saved grant (project, user) never allows more than its session twin would, and
`[a] always` keeps a grant where the human chose.

The adversarial tables of the shell grant tests are replayed against grants in every scope,
saved to disk and read back: each call must be answered without asking exactly when the session
twin of the grant would answer it. Commands are data handed to a Session whose engine runs
nothing.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.event_loop import run, until
from support.shell_tables import FRAGMENTS, NEGATIVE, PAIRS, POSITIVE, plain_commands
from support.steps import StepRunner

from engine_adapter import ApprovalGrant, Session, TaskState
from engine_adapter.grants import SCOPES, GrantFileError, GrantStore, SavedGrant
from engine_adapter.grants.grant_file import GrantFile, update_grant_file
from engine_adapter.grants.records import now
from engine_adapter.shell import grant_prefix

FIRSTS = sorted({cmd for cmd, _ in POSITIVE} | {first for first, _ in PAIRS})
SECONDS = sorted({cmd for cmd, _ in POSITIVE} | set(NEGATIVE.values())
                 | {second for _, seconds in PAIRS for second in seconds}
                 | {f"{cmd} && rm -rf build" for cmd, _ in POSITIVE})


class Nothing:
    """An engine that is never run: the test calls `request_approval` itself."""

    event_sink = approval_controller = cancel_token = None

    async def run(self, state: TaskState) -> TaskState:
        return state


def _grants(max_tier: int) -> list[tuple[str, int]]:
    found = []
    for cmd in FIRSTS:
        prefix = grant_prefix("shell", {"command": cmd})
        if prefix:
            found.append((prefix, max_tier))
    return found


def _session(scope: str, tmp_path: Path, granted: list[tuple[str, int]]) -> Session:
    """A session whose only grants are `granted`, in `scope` (saved ones written to disk and
    read back by a fresh store)."""
    work = tmp_path / "work"
    work.mkdir(parents=True, exist_ok=True)
    folder = tmp_path / f"cfg-{scope}"
    session_grants: list[ApprovalGrant] = []
    store = None
    if scope == "session":
        session_grants = [ApprovalGrant(tool="shell", prefix=p, tier=t) for p, t in granted]
    else:
        writer = GrantStore(folder, project=work)
        path = writer.path(scope)  # type: ignore[arg-type]
        assert path is not None

        def add_all(found: GrantFile) -> None:  # one write for the lot: setup stays quick
            for n, (prefix, tier) in enumerate(granted):
                found.grants[f"g-{n}"] = SavedGrant(id=f"g-{n}", scope=scope, tool="shell",
                                                    prefix=prefix, max_tier=tier, created=now())

        update_grant_file(path, scope, writer.project if scope == "project" else None, add_all)
        store = GrantStore(folder, project=work)  # read back from disk
        assert store.problems == []
    return Session(Nothing(), TaskState(task="t", cwd=str(work)), unattended=True,
                   grants=session_grants, grant_store=store)


async def _unasked(session: Session, tool: str, tool_input: dict[str, Any], tier: int) -> bool:
    """Whether the call was allowed without asking (a grant answered)."""
    before = len(session.history)
    allowed = await session.request_approval(f"c{before}", tool, "r", tool_input, tier=tier)
    new = session.history[before:]
    unasked = bool(new) and new[0].type == "approval_resolved" and new[0].via == "grant"
    assert allowed == unasked  # unattended: whatever is asked is denied
    return unasked


@pytest.mark.parametrize("max_tier", [1, 3])
def test_every_table_command_is_answered_alike_in_every_scope(tmp_path, max_tier) -> None:
    granted = _grants(max_tier)
    sessions = {scope: _session(scope, tmp_path / scope, granted) for scope in SCOPES}

    async def main() -> None:
        for command in SECONDS:
            for tier in (max_tier, max_tier + 1):  # the grant's tier, and one above it
                for tool_input in ({"command": command}, {"argv": command.split(" ")}):
                    answers = {scope: await _unasked(s, "shell", tool_input, tier)
                               for scope, s in sessions.items()}
                    assert len(set(answers.values())) == 1, (command, tier, answers)

    run(main())
    # The tables hold both kinds: some answered by the grants, most asked.
    vias = [e.via for e in sessions["user"].history if e.type == "approval_resolved"]
    assert "grant" in vias and "auto" in vias


@pytest.mark.parametrize("scope", ["project", "user"])
@pytest.mark.parametrize(("first", "second"), [(f, s) for f, ss in PAIRS for s in ss][:60])
def test_a_saved_grant_for_the_first_never_covers_the_second(tmp_path, scope, first,
                                                             second) -> None:
    prefix = grant_prefix("shell", {"command": first})
    if not prefix:
        pytest.skip("not grantable")
    session = _session(scope, tmp_path, [(prefix, 3)])
    assert run(_unasked(session, "shell", {"command": first}, 3))
    assert not run(_unasked(session, "shell", {"command": second}, 3))


CHAINED = [
    "git status; touch $HOME/pwned", "git status && touch ~/pwned", "git status || touch x",
    "git status | sh", "git status & touch x", "git status\ntouch x", "git status\rtouch x",
    "git status $(touch x)", "git status `touch x`", "git status > ~/.bashrc",
    "git status >> .git/hooks/pre-commit", "git status <(touch x)", "git status; ",
    "(git status); touch x", "{ git status; touch x; }",
    "git -c core.pager='touch x' status", "GIT_PAGER='touch x' git status",
    "git status --output=~/.profile", "git status\\\n; touch x", "git status #\ntouch x",
    "git status\u2028touch x", "git status;touch x", "git status&&touch x",
]


@pytest.mark.parametrize("scope", ["session", "project", "user"])
def test_chained_or_dressed_commands_never_ride_a_saved_prefix(tmp_path, scope) -> None:
    """A grant for `git status` in any scope answers `git status` itself and nothing chained to
    it, redirected, substituted or given a pager: those are asked (here, unattended: denied)."""
    session = _session(scope, tmp_path, [("git status", 3)])

    async def main() -> None:
        assert await _unasked(session, "shell", {"command": "git status"}, 3)
        assert await _unasked(session, "shell", {"argv": ["git", "status"]}, 3)
        rode = [c for c in CHAINED if await _unasked(session, "shell", {"command": c}, 3)]
        assert rode == []
        for argv in (["git", "status", ";", "touch", "x"], ["sh", "-c", "git status; touch x"],
                     ["git", "status", "&&", "touch", "x"]):
            assert not await _unasked(session, "shell", {"argv": argv}, 3), argv

    run(main())


@pytest.fixture(scope="module")
def all_scopes(tmp_path_factory):
    base = tmp_path_factory.mktemp("scopes")
    granted = [(p, 3) for p in ("git status", "ls", "npm test", "git log", "cat", "echo")]
    return {scope: _session(scope, base / scope, granted) for scope in SCOPES}


TEXTS = st.one_of(plain_commands(), st.lists(st.sampled_from(FRAGMENTS), max_size=10)
                  .map("".join), st.text(max_size=40))


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(TEXTS, st.integers(1, 4), st.sampled_from(["shell", "execute", "alter_verification"]))
def test_any_call_is_answered_alike_in_every_scope(all_scopes, command, tier, tool) -> None:
    async def main() -> dict[str, bool]:
        return {scope: await _unasked(s, tool, {"command": command}, tier)
                for scope, s in all_scopes.items()}

    answers = asyncio.run(main())
    assert len(set(answers.values())) == 1, (command, tier, answers)


# -- `[a] always` in a scope ----------------------------------------------------------------------

def _asker(*calls: str):
    async def ask_all(r: StepRunner) -> None:
        for n, command in enumerate(calls, 1):
            await r.ask(f"c{n}", "shell", {"command": command})
    return ask_all


def _resolved(session: Session) -> dict[str, Any]:
    return {e.approval_id: e for e in session.history if e.type == "approval_resolved"}


@pytest.mark.parametrize("scope", ["project", "user"])
def test_always_in_a_saved_scope_is_written_then_journaled_with_its_id(tmp_path, scope) -> None:
    work = tmp_path / "work"
    work.mkdir()
    store = GrantStore(tmp_path / "cfg", project=work)
    session = Session(StepRunner(_asker("git status", "git status --short")),
                      TaskState(task="t", cwd=str(work)), grant_store=store)

    async def main() -> None:
        task = asyncio.ensure_future(session.run())
        await until(lambda: bool(session.pending_approvals))
        session.resolve_approval("c1", allow=True, remember=True, scope=scope)
        session.resolve_approval("c1", allow=False)  # a stale second press: nothing
        await task

    run(main())
    found = _resolved(session)
    first, second = found["c1"], found["c2"]
    assert (first.allowed, first.via, first.remember, first.scope) == (True, "human", True, scope)
    assert first.grant_id and first.grant_id.startswith("g-")
    assert (second.via, second.scope, second.grant_id) == ("grant", scope, first.grant_id)
    assert session.grants == []  # nothing kept for the session: it is saved
    (saved,) = GrantStore(tmp_path / "cfg", project=work).grants()
    assert (saved.id, saved.scope, saved.prefix, saved.last_used is not None) == (
        first.grant_id, scope, "git status", True)
    assert "approval bar" in saved.note


def test_a_scope_that_cannot_be_saved_keeps_the_grant_for_the_session(tmp_path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    link = tmp_path / "link"
    link.symlink_to(work)
    store = GrantStore(tmp_path / "cfg", project=link, workspace=work)
    session = Session(StepRunner(_asker("ls", "ls -la")), TaskState(task="t", cwd=str(work)),
                      grant_store=store)

    async def main() -> None:
        task = asyncio.ensure_future(session.run())
        await until(lambda: bool(session.pending_approvals))
        session.resolve_approval("c1", allow=True, remember=True, scope="project")
        await task

    run(main())
    found = _resolved(session)
    assert (found["c1"].scope, found["c1"].grant_id) == ("session", None)
    assert found["c2"].via == "grant" and found["c2"].scope == "session"
    assert [g.prefix for g in session.grants] == ["ls"]
    assert any("symbolic link" in p for p in session.gate.problems)
    assert store.grants() == []


def test_always_on_an_ungrantable_call_keeps_nothing_in_any_scope(tmp_path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    store = GrantStore(tmp_path / "cfg", project=work)
    session = Session(StepRunner(_asker("ls && rm -rf build")),
                      TaskState(task="t", cwd=str(work)), grant_store=store)

    async def main() -> None:
        task = asyncio.ensure_future(session.run())
        await until(lambda: bool(session.pending_approvals))
        session.resolve_approval("c1", allow=True, remember=True, scope="user")
        await task

    run(main())
    found = _resolved(session)["c1"]
    assert found.allowed and not found.remember and found.scope is None
    assert store.grants() == [] and session.grants == []


def test_a_saved_grant_the_file_cannot_take_is_kept_for_the_session(tmp_path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    folder = tmp_path / "cfg"
    folder.mkdir()
    (folder / "user.toml").write_text("[grant.g-1\n")  # broken: never overwritten
    (folder / "user.toml").chmod(0o600)
    store = GrantStore(folder, project=work)
    with pytest.raises(GrantFileError):
        store.add_grant("user", "shell", "ls", 3)
    kept = session_scope = store.unavailable("user")
    assert kept is None and session_scope is None  # available, but the file is broken
    session = Session(StepRunner(_asker("ls")), TaskState(task="t", cwd=str(work)),
                      grant_store=store)

    async def main() -> None:
        task = asyncio.ensure_future(session.run())
        await until(lambda: bool(session.pending_approvals))
        session.resolve_approval("c1", allow=True, remember=True, scope="user")
        await task

    run(main())
    assert _resolved(session)["c1"].scope == "session"
    assert any("fix or remove it" in p for p in session.gate.problems)
    assert (folder / "user.toml").read_text() == "[grant.g-1\n"
