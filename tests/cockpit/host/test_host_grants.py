"""A client's grants: the host lists the grants and deny rules its run's gate holds (the same
lines the embedded grants screen shows) and removes one by id, only if the id still names what
the client was shown; another client sees the change when it next lists; a deny rule goes
only on a second `delete` in an attached client's screen; a host older than these requests is
reported as "update the cockpit on the host"; a bad request is a one-line refusal, never a
crash of the host, and never adds a grant."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.event_loop import run as run_loop
from support.fleet import screen_text
from support.host import WAIT, follow, until
from support.pilot import until_shown

from cockpit.cli.attach import attached_app
from cockpit.host import HostClient
from cockpit.host import grants as wire_grants
from cockpit.host.remote import RemoteGate
from cockpit.screens import GrantsScreen
from engine_adapter.grants import GrantFileError

# Asks for `git status` (the test grants it for the session), then for `git log`, which waits
# for an answer until the run is cancelled: the run stays live with its grant.
ENGINE = '''
from engine_adapter import AgentEnd, AgentStart


class Asks:
    event_sink = approval_controller = cancel_token = None

    async def run(self, state):
        self.event_sink.emit(AgentStart(task=state.task, engine="asks", model=None, cwd=None))
        await self.approval_controller.request_approval(
            "ask-1", "shell", "see what changed", {"command": "git status"}, tier=3)
        allowed = await self.approval_controller.request_approval(
            "ask-2", "shell", "read the log", {"command": "git log"}, tier=3)
        state.status = "completed" if allowed else "failed"
        self.event_sink.emit(AgentEnd(status=state.status, result=None, error=None))
        return state


def make(*, cwd, task):
    return Asks()
'''


def _granted_run(home, folder) -> str:
    """A detached run holding a session grant (`git status`, `a` answered over the wire)
    and a user deny rule (`git push`, saved by `cockpit grants deny`), waiting on its next
    ask."""
    (folder / "asks_engine.py").write_text(ENGINE, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "cockpit", "run", "look", "--engine",
                           "asks_engine:make", "--cwd", str(folder), "--detach"],
                          env=home.env, cwd=folder, capture_output=True, text=True,
                          timeout=WAIT)
    assert done.returncode == 0, done.stderr
    run = done.stdout.strip()
    with HostClient.connect(home.socket) as client:
        events = follow(client, run)
        ask = until(events, lambda e: e["type"] == "approval_requested")
        client.send({"op": "resolve_approval", "run": run, "approval_id": ask["approval_id"],
                     "allow": True, "remember": True, "scope": "session"})
        until(events, lambda e: e["type"] == "approval_requested"
              and e["approval_id"] != ask["approval_id"])
    denied = home.cockpit("grants", "deny", "shell", "git push", "--cwd", str(folder))
    assert denied.returncode == 0, denied.stderr
    return run


def _keys(client: HostClient, run: str) -> list[tuple[str, str, str]]:
    entries = client.request("grants", run=run)["entries"]
    return [(e["kind"], e["scope"], e["prefix"]) for e in entries]


def _revoke(client: HostClient, run: str, entry: dict) -> dict:
    return client.request("revoke_grant", run=run, grant_id=entry["key"], kind=entry["kind"],
                          tool=entry["tool"], prefix=entry["prefix"])


def test_a_client_lists_and_revokes_and_another_sees_it(host_home, tmp_path) -> None:
    host_home.start()
    run = _granted_run(host_home, tmp_path)
    with HostClient.connect(host_home.socket) as one, \
            HostClient.connect(host_home.socket) as two:
        listed = one.request("grants", run=run)
        assert _keys(two, run) == [("deny", "user", "git push"),
                                   ("allow", "session", "git status")]
        assert listed["store"]["project"] == str(tmp_path.resolve())
        grant = next(e for e in listed["entries"] if e["scope"] == "session")
        assert grant["key"] == "session-1" and grant["created"] is not None
        gone = _revoke(one, run, grant)["revoked"]
        assert (gone["key"], gone["prefix"]) == ("session-1", "git status")
        assert _keys(two, run) == [("deny", "user", "git push")]  # the other client sees it
        with pytest.raises(Exception, match="no grant 'session-1' is in force"):
            _revoke(two, run, grant)  # already gone: said so, nothing else removed
        deny = one.request("grants", run=run)["entries"][0]
        _revoke(two, run, deny)
        assert _keys(one, run) == []
    listed_by_cli = host_home.cockpit("grants", "list", "--cwd", str(tmp_path))
    assert "git push" not in listed_by_cli.stdout  # the saved rule left its file


def test_a_stale_id_never_removes_another_grant(host_home, tmp_path) -> None:
    host_home.start()
    run = _granted_run(host_home, tmp_path)
    with HostClient.connect(host_home.socket) as client:
        grant = next(e for e in client.request("grants", run=run)["entries"]
                     if e["scope"] == "session")
        for field, value in (("kind", "deny"), ("tool", "edit"), ("prefix", "git")):
            with pytest.raises(Exception, match="no longer the one listed"):
                _revoke(client, run, {**grant, field: value})
        assert len(_keys(client, run)) == 2  # nothing went


BAD_REQUESTS = [
    ({}, "needs 'grant_id'"),
    ({"grant_id": 7}, "needs 'grant_id'"),
    ({"grant_id": ["session-1"]}, "needs 'grant_id'"),
    ({"grant_id": ""}, "needs 'grant_id'"),
    ({"grant_id": "x" * 129}, "needs 'grant_id'"),
    ({"grant_id": "session-1\x1b[2J"}, "needs 'grant_id'"),
    ({"grant_id": "session-1", "tool": "shell", "prefix": "git status"}, "needs 'kind'"),
    ({"grant_id": "session-1", "kind": "allow", "prefix": "git status"}, "needs 'tool'"),
    ({"grant_id": "session-1", "kind": "allow", "tool": "shell"}, "needs 'prefix'"),
    ({"grant_id": "session-9", "kind": "allow", "tool": "shell", "prefix": "git status"},
     "no grant 'session-9'"),
    ({"grant_id": "../../user", "kind": "deny", "tool": "shell", "prefix": "git push"},
     "no grant '../../user'"),
]


def test_bad_requests_are_refused_in_one_line_and_the_host_goes_on(host_home,
                                                                    tmp_path) -> None:
    host_home.start()
    run = _granted_run(host_home, tmp_path)
    with HostClient.connect(host_home.socket) as client:
        for fields, said in BAD_REQUESTS:
            client.send({"op": "revoke_grant", "id": 1, "run": run, **fields})
            reply = client.read()
            assert reply["ok"] is False and said in reply["error"], (fields, reply)
            assert "\n" not in reply["error"]
        for op in ("grants", "revoke_grant"):
            client.send({"op": op, "id": 2, "run": "nosuchrun"})
            assert "no run 'nosuchrun'" in client.read()["error"]
        # No request adds a grant: there is none to call, and revoking never does.
        client.send({"op": "grant", "id": 3, "run": run, "tool": "shell", "prefix": "rm"})
        assert client.read()["error"] == "unknown request 'grant'"
        assert len(_keys(client, run)) == 2
        assert client.request("status")["pid"] == host_home.host_pid()


@settings(max_examples=60, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture])
@given(fields=st.dictionaries(
    st.sampled_from(["grant_id", "kind", "tool", "prefix", "run"]),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=300),
                 lambda inner: st.lists(inner, max_size=3)
                 | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=6)))
def test_any_revoke_request_is_answered_and_removes_at_most_what_it_names(
        granted_host, fields) -> None:
    _home, run, client = granted_host
    before = client.request("grants", run=run)["entries"]
    client.send({"op": "revoke_grant", "id": 1, "run": run, **fields})
    reply = client.read()
    after = client.request("grants", run=run)["entries"]
    if reply["ok"]:  # only the very entry it named, as listed
        [gone] = [e for e in before if e not in after]
        assert (gone["key"], gone["kind"], gone["tool"], gone["prefix"]) == tuple(
            fields.get(name) for name in ("grant_id", "kind", "tool", "prefix"))
    else:
        assert isinstance(reply["error"], str) and after == before


@pytest.fixture(scope="module")
def granted_host(tmp_path_factory):
    from support.host import HostHome

    home = HostHome()
    folder = tmp_path_factory.mktemp("grants")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COCKPIT_HOME", str(home.home))
        patch.delenv("XDG_RUNTIME_DIR", raising=False)
        try:
            home.start()
            run = _granted_run(home, folder)
            with HostClient.connect(home.socket) as client:
                yield home, run, client
        finally:
            home.cleanup()


def test_an_older_host_is_reported_as_such(host_home, tmp_path, monkeypatch) -> None:
    host_home.start()
    run = _granted_run(host_home, tmp_path)
    gate = RemoteGate(run, host_home.socket, None)
    assert [e.prefix for e in gate.fetch()] == ["git push", "git status"]
    # A host that predates the requests answers `unknown request` to a name it lacks.
    monkeypatch.setattr(wire_grants, "LIST_OP", "grants_of_a_newer_cockpit")
    monkeypatch.setattr(wire_grants, "REVOKE_OP", "revoke_of_a_newer_cockpit")
    with pytest.raises(GrantFileError, match="update the cockpit on the host"):
        gate.fetch()
    with pytest.raises(GrantFileError, match="update the cockpit on the host"):
        gate.revoke(gate.entries()[1])
    assert len(gate.entries()) == 2  # what was listed stays shown


async def _test_the_attached_grants_screen(host_home, folder) -> None:
    host_home.start()
    run = _granted_run(host_home, folder)
    app = attached_app(run, arm_seconds=0)
    async with app.run_test(size=(140, 40)) as pilot:
        await until_shown(pilot, lambda: any(e.type == "approval_requested"
                                             for e in app.session.history))
        await pilot.press("g")
        screen = app.screen
        assert isinstance(screen, GrantsScreen)
        await until_shown(pilot, lambda: len(screen.entries) == 2)
        await until_shown(pilot, lambda: "git push" in screen_text(app)
                          and "git status" in screen_text(app))  # whole, not cut to a header
        assert screen.remote is None and screen.selected().kind == "deny"
        await pilot.press("delete")  # a deny rule: first it asks
        await until_shown(pilot, lambda: screen.confirming is not None)
        with HostClient.connect(host_home.socket) as client:
            assert len(_keys(client, run)) == 2
        await pilot.press("delete")  # and now it goes, in the host
        await until_shown(pilot, lambda: len(screen.entries) == 1)
        assert screen.entries[0].prefix == "git status"
        await pilot.press("delete")  # a grant goes at once
        await until_shown(pilot, lambda: not screen.entries)
        with HostClient.connect(host_home.socket) as client:
            assert _keys(client, run) == []
        await pilot.press("escape")


def test_the_attached_grants_screen_revokes_in_the_host(host_home, tmp_path) -> None:
    run_loop(_test_the_attached_grants_screen(host_home, tmp_path))


async def _test_attach_fetches_and_shows_the_hosts_grants(host_home, folder) -> None:
    host_home.start()
    run = _granted_run(host_home, folder)
    app = attached_app(run, arm_seconds=0)
    async with app.run_test(size=(140, 40)) as pilot:
        # Without opening the grants screen: the deny rule (saved by the command line, in no
        # event of the run) and the session grant are in the panel once the host listed them.
        await until_shown(pilot, lambda: {g.prefix for g in app.view.grants}
                          == {"git push", "git status"})
        await until_shown(pilot, lambda: "git push" in screen_text(app))
        assert not isinstance(app.screen, GrantsScreen)
        app.session.detach()


def test_attach_fetches_and_shows_the_hosts_grants(host_home, tmp_path) -> None:
    run_loop(_test_attach_fetches_and_shows_the_hosts_grants(host_home, tmp_path))
