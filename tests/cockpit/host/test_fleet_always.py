"""`a` in the fleet's inbox: on a call that can be granted it allows it and grants its prefix
for the run's session, exactly what the line under the inbox said; on one that cannot, it
answers nothing and says why (the ask stays)."""

from __future__ import annotations

import subprocess
import sys

from support.event_loop import run as run_loop
from support.fleet import screen_text, select_ask
from support.host import WAIT, detach_demo, follow, until
from support.pilot import until_shown

from cockpit.host import HostClient
from cockpit.host.fleet.fleet_app import FleetApp
from cockpit.host.fleet.watch import HostWatch
from engine_adapter import read_journal

ENGINE = '''
from engine_adapter import AgentEnd, AgentStart


class Asks:
    event_sink = approval_controller = cancel_token = None

    async def run(self, state):
        self.event_sink.emit(AgentStart(task=state.task, engine="asks", model=None, cwd=None))
        allowed = await self.approval_controller.request_approval(
            "ask-1", "shell", "see what changed", {"command": "git status"}, tier=3)
        state.status = "completed" if allowed else "failed"
        self.event_sink.emit(AgentEnd(status=state.status, result=None, error=None))
        return state


def make(*, cwd, task):
    return Asks()
'''


def _detach_asker(home, folder) -> str:
    (folder / "asks_engine.py").write_text(ENGINE, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "cockpit", "run", "look", "--engine",
                           "asks_engine:make", "--cwd", str(folder), "--detach"],
                          env=home.env, cwd=folder, capture_output=True, text=True,
                          timeout=WAIT)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _resolved(home, run: str) -> dict:
    with HostClient.connect(home.socket) as client:
        return until(follow(client, run), lambda e: e["type"] == "approval_resolved")


async def _test_always_grants_what_it_says_or_says_why_not(host_home, folder) -> None:
    host_home.start()
    demo = detach_demo(host_home)
    asker = _detach_asker(host_home, folder)
    app = FleetApp([HostWatch("local", path=host_home.socket)], arm_seconds=0,
                   remember_theme=False)
    async with app.run_test(size=(160, 40)) as pilot:
        await until_shown(pilot, lambda: {a.run for a in app.board.inbox} == {demo, asker})
        # The demo's python call cannot be granted: a says so, answers nothing.
        python = next(a for a in app.board.inbox if a.run == demo)
        await select_ask(pilot, app, python.key)
        await until_shown(pilot, lambda: "cannot be granted" in screen_text(app))
        await pilot.press("a")
        await pilot.pause()
        assert python in app.board.inbox
        # git status can: the line says what a grants, and a grants exactly that.
        git = next(a for a in app.board.inbox if a.run == asker)
        await select_ask(pilot, app, git.key)
        await until_shown(pilot, lambda: "always allows git status (this session)"
                          in screen_text(app))
        await pilot.press("a")
        await until_shown(pilot, lambda: git.key not in {a.key for a in app.board.inbox})
    resolved = _resolved(host_home, asker)
    assert (resolved["allowed"], resolved["remember"], resolved["scope"]) == \
        (True, True, "session")
    with HostClient.connect(host_home.socket) as client:
        rows = {row["id"]: row for row in client.request("ps")["runs"]}
    # The ask `a` could not answer still waits: nothing answered it.
    assert rows[demo]["waiting"]["approvals"] == 1
    assert not [e for e in read_journal(rows[demo]["journal"], strict=False)
                if e.type == "approval_resolved" and e.approval_id == python.id]


def test_always_grants_what_it_says_or_says_why_not(host_home, tmp_path) -> None:
    run_loop(_test_always_grants_what_it_says_or_says_why_not(host_home, tmp_path))
