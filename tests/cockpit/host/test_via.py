"""A host reached through a command's stdio (`--via "COMMAND"`, here a local `cockpit host
--stdio`, as ssh would run it on another machine): runs started, listed and answered as on the
socket; a command that is not a host is refused with one line."""

from __future__ import annotations

import json
import shlex
import sys

import pytest
from support.event_loop import run as run_loop
from support.live_app import answerable, pending
from support.pilot import until_shown

from cockpit.cli.attach import attached_app

STDIO = shlex.join([sys.executable, "-m", "cockpit", "host", "--stdio"])


def test_a_run_started_listed_and_answered_through_a_commands_stdio(host_home) -> None:
    # The stdio command starts the host itself when none runs.
    listed = host_home.cockpit("ps", "--json", "--via", STDIO)
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == []
    started = host_home.cockpit("demo", "--detach", "--speed", "0", "--via", STDIO)
    assert started.returncode == 0, started.stderr
    run = started.stdout.strip()
    [row] = json.loads(host_home.cockpit("ps", "--json", "--via", STDIO).stdout)
    assert row["id"] == run

    async def answer() -> None:
        app = attached_app(run, via=STDIO, arm_seconds=0)
        async with app.run_test() as pilot:
            await until_shown(pilot, lambda: answerable(app))
            [asked] = pending(app)
            await pilot.press("y")
            await until_shown(pilot, lambda: any(
                e.type == "approval_resolved" and e.approval_id == asked
                for e in app.session.history))
            await pilot.press("ctrl+q")
            await until_shown(pilot, lambda: type(app.screen).__name__ == "DetachScreen")
            await pilot.press("d")
        assert not app.session.done

    run_loop(answer())
    # The same run, on the host's own socket.
    [row] = json.loads(host_home.cockpit("ps", "--json").stdout)
    assert row["id"] == run and row["status"] == "running"


@pytest.mark.parametrize(("via", "said"), [
    ("cat", "not a cockpit host (it answered as 'client')"),  # echoes our greeting back
    ("true", "the host"),  # (closed the connection, or went away: it exited at once)
    ("echo hello", "not a JSON line"),
    ("no-such-program-xyz", "cannot start it"),
    ("", "--via needs a command"),
    ('"unclosed', "No closing quotation"),
])
def test_a_command_that_is_not_a_host_is_one_clear_line(host_home, via, said) -> None:
    done = host_home.cockpit("ps", "--via", via)
    assert done.returncode != 0
    assert said in done.stderr and "Traceback" not in done.stderr


def test_via_goes_with_detach(host_home) -> None:
    done = host_home.cockpit("demo", "--via", STDIO)
    assert done.returncode == 2 and "goes with --detach" in done.stderr
