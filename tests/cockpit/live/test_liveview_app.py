"""The live cockpit and the replay viewer as a user reads them (issue 13, Pilot and snapshots):
the end panel says the error first and the files the task changed, an edit's diff shows in its
row and expands with line numbers, a journal write failure says so, replay shows the same
diffs."""

from __future__ import annotations

import pytest
from support.journals import write
from support.live_app import make_app, pending, settle, turn
from textual.widgets import Input, Static, TextArea

from cockpit.replay import ReplayApp
from cockpit.widgets import Transcript
from engine_adapter import (
    AgentEnd,
    AgentStart,
    Session,
    TaskState,
    ToolEnd,
    ToolStart,
    TurnStart,
)
from engine_adapter.files import unified_diff

SIZE = (120, 34)
DIFF = unified_diff("def greet(name):\n    return 'hello ' + name\n\nprint(greet('x'))\n",
                    "def greet(name):\n    return f'hello {name}'\n\nprint(greet('x'))\n",
                    "app.py")
SOURCE = "".join(f"def f{i}(x):\n    return x + {i}\n\n" for i in range(1, 5))


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))


def emit(*events):
    async def step(r) -> None:
        for event in events:
            r.emit(event)
    return step


def edit(call_id: str, path: str, diff: str, *, ok: bool = True):
    return emit(ToolStart(call_id=call_id, tool="edit", tier=2,
                          tool_input={"path": path, "diff": diff}),
                ToolEnd(call_id=call_id, tool="edit", ok=ok, output=f"edited {path}",
                        error=None if ok else "refused", duration_ms=3.0))


def read(call_id: str, path: str, text: str):
    return emit(ToolStart(call_id=call_id, tool="read_file", tier=1, tool_input={"path": path}),
                ToolEnd(call_id=call_id, tool="read_file", ok=True, output=text,
                        duration_ms=1.0))


CRASH = AgentEnd(status="failed", result="Looking at app.py: the greeting is built with +",
                 error="the agent exited with code 3 during session/prompt",
                 stderr=["agent: model backend unreachable", "agent: giving up"])


def end_text(app) -> str:
    return str(app.query_one("#end-text", Static).render())


def row_text(app, index: int) -> str:
    return "\n".join(strip.text for strip in app.query_one(Transcript)._strips(index))


def _app(*steps, **kwargs):
    return make_app(*steps, end=False, clock=None, **kwargs)


def test_a_failed_run_shows_its_error_first_in_the_end_panel_and_its_row() -> None:
    async def main() -> None:
        app = _app(turn(1, "Looking at app.py: the greeting is built with +"), emit(CRASH))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done)
            panel = end_text(app).split("\n")
            assert panel[:5] == ["failed: the agent exited with code 3 during session/prompt",
                                 "last lines the agent wrote to stderr:",
                                 "  agent: model backend unreachable", "  agent: giving up",
                                 "↑ the partial reply is above (in the transcript)"]
            assert "the greeting" not in end_text(app)  # the reply once: in its message
            end = row_text(app, len(app.view.items) - 1)
            assert end.startswith("  ■ failed: the agent exited with code 3")
    import asyncio
    asyncio.run(main())


def test_a_finished_run_lists_the_files_it_changed() -> None:
    async def main() -> None:
        app = _app(turn(1, "Two edits."), edit("e1", "app.py", DIFF),
                   edit("e2", "README.md", unified_diff(None, "# greet\n", "README.md")),
                   edit("e3", "skip.py", unified_diff("a\n", "b\n", "skip.py"), ok=False),
                   emit(AgentEnd(status="completed", result="Both files are done.")))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done)
            text = end_text(app)
            assert ("changed:\n  app.py     +1 −1\n  README.md  +1 −0\n"
                    "  2 files changed  +2 −1") in text
            assert "skip.py" not in text  # a refused edit changed nothing
            assert "↑ the reply (1 line) is the transcript's ■ row" in text
    import asyncio
    asyncio.run(main())


def test_enter_expands_an_edit_to_its_numbered_diff_and_a_read_to_numbered_lines() -> None:
    async def main() -> None:
        app = _app(turn(1, "Reading, then editing."), read("r1", "lib.py", SOURCE),
                   edit("e1", "app.py", DIFF), emit(AgentEnd(status="completed")))
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: app.session.done)
            rows = app.view.tool_calls
            collapsed = row_text(app, rows["e1"].index)
            assert "    -    return 'hello ' + name" in collapsed
            assert "--- a/app.py" not in collapsed  # changed lines first, no headers
            transcript = app.query_one(Transcript)
            transcript.focus()
            transcript.select(rows["e1"].index)
            await pilot.press("enter")
            expanded = row_text(app, rows["e1"].index)
            assert "--- a/app.py" in expanded
            assert "  2 -     return 'hello ' + name" in expanded
            assert "  2 +     return f'hello {name}'" in expanded
            transcript.select(rows["r1"].index)
            await pilot.press("enter")
            numbered = row_text(app, rows["r1"].index)
            assert "   1 │ def f1(x):" in numbered and "  11 │     return x + 4" in numbered
    import asyncio
    asyncio.run(main())


def test_a_journal_write_failure_says_so_in_every_place() -> None:
    class FullDisk:  # a journal whose disk fills up after three events
        def __init__(self) -> None:
            self.events: list = []

        def write(self, event) -> None:
            if len(self.events) == 3:
                raise OSError(28, "No space left on device")
            self.events.append(event)

        def close(self) -> None:
            pass

    async def main() -> None:
        from support.steps import StepRunner

        async def keep_going(r) -> None:
            for n in range(1, 20):
                if r.cancel_token.cancelled:
                    return
                r.emit(TurnStart(turn=n))
                await __import__("asyncio").sleep(0)

        session = Session(StepRunner(keep_going), TaskState(task="t"), session_id="s1",
                          journal=FullDisk())
        from cockpit.live import CockpitApp
        app = CockpitApp(session, remember_theme=False, theme="cockpit-dark", clock=None,
                         arm_seconds=0.0)
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot, lambda: session.done)
            text = end_text(app)
            assert ": journal write failed: [Errno 28] No space left on device" in \
                text.split("\n")[0]
            end = row_text(app, len(app.view.items) - 1)
            assert "journal write failed: [Errno 28] No space left on device" in end

    import asyncio
    asyncio.run(main())


def test_replay_shows_the_same_diff(tmp_path) -> None:
    events = [AgentStart(task="edit", engine="e"), TurnStart(turn=1),
              ToolStart(call_id="e1", tool="edit", tier=2,
                        tool_input={"path": "app.py", "diff": DIFF}),
              ToolEnd(call_id="e1", tool="edit", ok=True, output="edited app.py"),
              AgentEnd(status="completed")]
    path = tmp_path / "r.jsonl"
    write(path, [e.model_copy(update={"seq": i, "ts": 10.0 + i, "session_id": "s"})
                 for i, e in enumerate(events)])

    async def main() -> None:
        app = ReplayApp(path, remember_theme=False)
        async with app.run_test(size=SIZE) as pilot:
            for _ in range(2_000):
                screen = app.replay_screen
                if screen is not None and screen.complete and app.position_shown >= 0:
                    break
                await pilot.pause()
            await pilot.press("end")
            await pilot.pause()
            transcript = app.replay_screen.query_one(Transcript)
            text = "\n".join(s.text for i in range(transcript.item_count)
                             for s in transcript._strips(i))
            assert "-    return 'hello ' + name" in text
            assert "+    return f'hello {name}'" in text
            assert "changed: app.py +1 −1" in text
    import asyncio
    asyncio.run(main())


# -- snapshots (update with --snapshot-update after looking at them) ------------------------------

async def _quiet(pilot) -> None:
    for widget in [*pilot.app.query(Input), *pilot.app.query(TextArea)]:  # (the box too)
        widget.cursor_blink = False
    await pilot.pause()


def _until_done(app):
    async def run_before(pilot) -> None:
        await settle(pilot, lambda: app.session.done)
        await _quiet(pilot)
    return run_before


def test_snapshot_failed_run_shows_its_error(snap_compare, steady_stamps) -> None:
    app = _app(turn(1, "Looking at app.py: the greeting is built with +"), emit(CRASH))
    assert snap_compare(app, terminal_size=SIZE, run_before=_until_done(app))


def test_snapshot_finished_run_with_its_changed_files(snap_compare, steady_stamps) -> None:
    app = _app(turn(1, "Switching to an f-string."), edit("e1", "app.py", DIFF),
               edit("e2", "README.md", unified_diff(None, "# greet\n", "README.md")),
               emit(AgentEnd(status="completed", result="greet() uses an f-string now.")))
    assert snap_compare(app, terminal_size=SIZE, run_before=_until_done(app))


def test_snapshot_pending_write_with_its_diff_at_80x24(snap_compare, steady_stamps) -> None:
    async def ask(r) -> None:
        await r.ask("w1", "edit", {"path": "app.py", "diff": DIFF})

    app = _app(turn(1, "Switching to an f-string."), ask)

    async def run_before(pilot) -> None:
        await settle(pilot, lambda: pending(app) == ["w1"])
        await _quiet(pilot)
    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)
