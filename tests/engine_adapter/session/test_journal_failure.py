"""A journal that cannot be written stops the run, which ends `failed` with "journal write failed:
…" (not cancelled) and exit code 74; no action goes ahead once it cannot be recorded."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from support.event_loop import run
from support.event_samples import (
    AGENT_DIALOGUE,
    AGENT_SESSION_TYPES,
    CHECKPOINT_TYPES,
    MODE_TYPES,
)
from support.journal_faults import ENOSPC, DiskFillsUp, first_of
from support.steps import StepRunner
from typer.testing import CliRunner

from cockpit.cli.main import app
from cockpit.cli.run import EXIT_CANCELLED, EXIT_FAILED, EXIT_JOURNAL_FAILED, exit_code
from engine_adapter import (
    JournalError,
    JsonlEventJournal,
    ModelUpdate,
    Session,
    TaskState,
    read_journal,
)
from engine_adapter.engines.builtin import demo_runner, demo_task, make_workspace
from engine_adapter.events import EVENT_TYPES

# the demo never emits these (the dialogue kinds come from ACP agents: test_session_questions
# covers a journal that fails at a question; test_acp_sessions fills the disk at each session kind)
NOT_IN_DEMO = {"cancellation_observed", "model_retry", *AGENT_DIALOGUE, *AGENT_SESSION_TYPES,
               *CHECKPOINT_TYPES, *MODE_TYPES}
DEMO_KINDS = sorted(set(EVENT_TYPES) - NOT_IN_DEMO)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under `root` (caches included: a command that ran would leave some)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def demo_session(tmp_path: Path, fails_at) -> tuple[Session, DiskFillsUp, dict]:
    workspace = make_workspace(tmp_path)
    seen: dict[str, dict[str, bytes]] = {}
    journal = DiskFillsUp(tmp_path / "run.jsonl", fails_at,
                          on_full=lambda: seen.setdefault("at failure", snapshot(workspace)))
    session = Session(demo_runner(workspace, speed=0), TaskState(task=demo_task()),
                      journal=journal, unattended=True, auto_approve=True,
                      escalation_policy="approve", amendment_policy="approve")
    seen["workspace"] = workspace  # type: ignore[assignment]
    return session, journal, seen


def test_the_demo_emits_every_kind_this_file_fails_at(tmp_path) -> None:
    session, _, _ = demo_session(tmp_path, lambda event: False)
    run(session.run())
    assert {e.type for e in session.history} == set(DEMO_KINDS)


@pytest.mark.parametrize("kind", DEMO_KINDS)
def test_a_disk_that_fills_up_at_any_event_fails_the_run_and_stops_it(tmp_path, kind) -> None:
    session, journal, seen = demo_session(tmp_path, first_of(kind))
    state = run(session.run())
    failed = journal.failed_event
    assert failed is not None
    assert session.journal_error == (f"journal write failed: cannot write journal "
                                     f"{str(tmp_path / 'run.jsonl')!r}: {ENOSPC}")
    end = session.history[-1]
    assert end.type == "agent_end"
    if kind == "agent_end":  # the run was over; only its record is short of the last line
        assert state.status == "completed"
    else:
        assert (state.status, end.status) == ("failed", "failed")
        assert state.error == end.error and end.error.startswith(session.journal_error)
    # The file holds every event before the failed one, whole; nothing after it.
    on_disk = list(read_journal(tmp_path / "run.jsonl"))
    assert [e.seq for e in on_disk] == list(range(failed.seq))
    # Nothing the engine did after the failure changed the workspace: no edit, no command.
    assert snapshot(seen["workspace"]) == seen["at failure"]
    later = [e for e in session.history if e.seq > failed.seq]
    assert not any(e.type == "tool_start" for e in later)
    assert not any(e.type == "cancellation_observed" for e in session.history)  # not cancelled
    assert not any(e.type == "approval_resolved" and e.allowed for e in later)


def test_a_tool_whose_start_cannot_be_recorded_does_not_run(tmp_path) -> None:
    def edits(event) -> bool:
        return event.type == "tool_start" and event.tool in ("write_file", "edit")

    session, journal, seen = demo_session(tmp_path, edits)
    state = run(session.run())
    assert journal.failed_event is not None and state.status == "failed"
    assert snapshot(seen["workspace"]) == seen["at failure"]
    (end,) = [e for e in session.history if e.type == "tool_end"
              and e.call_id == journal.failed_event.call_id]
    assert not end.ok and "before it started" in (end.error or "")


def test_a_user_cancel_before_the_failure_still_shows_as_seen() -> None:
    class Broken:
        def write(self, event) -> None:
            if event.type == "cancellation_observed":
                raise OSError(ENOSPC)

        def close(self) -> None:
            pass

    async def cancelled_by_the_user(runner: StepRunner) -> None:
        session.cancel("the user pressed escape")

    session = Session(StepRunner(cancelled_by_the_user), TaskState(task="t"), journal=Broken())
    state = run(session.run())
    assert state.status == "failed"  # its record is short: that matters more (exit 74)
    assert state.error == f"journal write failed: {ENOSPC}"
    (seen,) = [e for e in session.history if e.type == "cancellation_observed"]
    assert seen.reason == "the user pressed escape"


def test_a_journal_on_a_full_device_fails_at_the_first_event(tmp_path) -> None:
    workspace = make_workspace(tmp_path)
    before = snapshot(workspace)
    session = Session(demo_runner(workspace, speed=0), TaskState(task=demo_task()),
                      journal=JsonlEventJournal("/dev/full"), unattended=True, auto_approve=True)
    state = run(session.run())
    assert state.status == "failed"
    assert state.error == f"journal write failed: cannot write journal '/dev/full': {ENOSPC}"
    assert snapshot(workspace) == before
    assert not any(e.type == "tool_start" for e in session.history)


@pytest.mark.parametrize("error", [OSError(28, ENOSPC), OSError(5, "Input/output error"),
                                   OSError(30, "Read-only file system"), JournalError("gone"),
                                   RuntimeError("bug in a custom journal"), OSError()])
def test_any_journal_error_fails_the_run_with_its_message(error) -> None:
    class Broken:
        def write(self, event) -> None:
            if event.type == "model_update":
                raise error

        def close(self) -> None:
            pass

    async def talk(runner: StepRunner) -> None:
        runner.emit(ModelUpdate(text="one"))
        assert runner.cancel_token.cancelled  # stopped at once: the next step never runs
        runner.emit(ModelUpdate(text="two"))

    session = Session(StepRunner(talk, talk), TaskState(task="t"), journal=Broken())
    state = run(session.run())
    assert state.status == "failed"
    assert state.error == f"journal write failed: {str(error) or type(error).__name__}"
    assert not state.error.endswith(": ")
    types = [e.type for e in session.history]
    assert "cancellation_observed" not in types  # the Session does not call it a cancellation
    assert types.count("model_update") == 2  # the first step ended; the second never ran


def test_an_engine_that_ends_cancelled_or_failed_is_still_failed_by_the_journal() -> None:
    from engine_adapter import AgentEnd

    class Broken:
        def write(self, event) -> None:
            if event.type == "model_update":
                raise OSError(ENOSPC)

        def close(self) -> None:
            pass

    for own in (AgentEnd(status="cancelled", result="partial reply", stderr=["tail"]),
                AgentEnd(status="failed", error="the model failed"),
                AgentEnd(status="completed", result="done")):
        async def step(runner: StepRunner, own=own) -> None:
            runner.emit(ModelUpdate(text="x"))
            runner.emit(own)

        session = Session(StepRunner(step, end=False), TaskState(task="t"), journal=Broken())
        run(session.run())
        end = session.history[-1]
        assert end.status == "failed"
        assert end.error.startswith(f"journal write failed: {ENOSPC}")
        if own.error:
            assert end.error.endswith(f"; {own.error}")
        assert end.result == own.result  # a partial reply is kept
        assert getattr(end, "stderr", None) == getattr(own, "stderr", None)


def test_closing_a_journal_that_cannot_flush_is_reported(tmp_path) -> None:
    class FlushFails(JsonlEventJournal):
        def close(self) -> None:
            super().close()
            raise OSError(5, "Input/output error")

    session = Session(StepRunner(), TaskState(task="t"),
                      journal=FlushFails(tmp_path / "run.jsonl"))
    state = run(session.run())
    assert state.status == "completed"  # every event was written; the last flush was not
    assert session.journal_error and "closing the journal failed" in session.journal_error


@pytest.mark.parametrize(("status", "journal_failed", "code"), [
    ("completed", False, 0), ("failed", False, EXIT_FAILED),
    ("cancelled", False, EXIT_CANCELLED), ("failed", True, EXIT_JOURNAL_FAILED),
    ("completed", True, EXIT_JOURNAL_FAILED), ("cancelled", True, EXIT_JOURNAL_FAILED),
    ("running", False, EXIT_FAILED),
])
def test_exit_codes(status, journal_failed, code) -> None:
    assert exit_code(status, journal_failed=journal_failed) == code


def test_exit_codes_are_distinct() -> None:
    assert len({0, EXIT_FAILED, 2, EXIT_JOURNAL_FAILED, EXIT_CANCELLED}) == 5


@pytest.mark.parametrize("command", [["demo", "--speed", "0", "--auto-approve"],
                                     ["demo", "--speed", "0"]])
def test_the_cli_exits_74_and_says_the_journal_failed(tmp_path, monkeypatch, command) -> None:
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(app, [*command, "--headless", "--journal", "/dev/full"])
    assert result.exit_code == EXIT_JOURNAL_FAILED, result.output
    assert "Traceback" not in result.output
    assert "end       failed" in result.output
    assert f"cockpit: journal write failed: cannot write journal '/dev/full': {ENOSPC}; " \
           "the run was stopped (exit 74)" in result.output


def test_the_live_cockpit_shows_the_failed_end_and_exits_74(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    from cockpit.live import CockpitApp

    workspace = make_workspace(tmp_path)
    session = Session(demo_runner(workspace, speed=0), TaskState(task=demo_task()),
                      journal=JsonlEventJournal("/dev/full"))

    async def main() -> None:
        cockpit = CockpitApp(session)
        async with cockpit.run_test(size=(120, 36)) as pilot:
            for _ in range(2_000):
                if session.done and cockpit.view.status == "failed":
                    break
                await pilot.pause()
            assert cockpit.view.status == "failed"
            assert (cockpit.view.error or "").startswith("journal write failed")

    asyncio.run(main())
    assert exit_code(session.state.status, journal_failed=bool(session.journal_error)) == 74


def test_a_line_the_disk_took_only_part_of_is_taken_back(tmp_path, monkeypatch) -> None:
    """A full disk accepts the first bytes of a line, then refuses the rest: the journal cuts
    them again, so it ends with a whole event, not a torn line."""
    from engine_adapter import AgentStart
    from engine_adapter.journal import jsonl as journal_module

    path = tmp_path / "run.jsonl"
    journal = JsonlEventJournal(path)
    journal.write(AgentStart(task="t", engine="e"))
    real_write = os.write

    def disk_fills(fd, data):
        if fd != journal._fd:
            return real_write(fd, data)
        if len(data) > 10:
            return real_write(fd, data[:10])  # part of the line fits
        raise OSError(28, ENOSPC)

    monkeypatch.setattr(journal_module.os, "write", disk_fills)
    with pytest.raises(JournalError, match=ENOSPC):
        journal.write(ModelUpdate(text="x" * 100))
    monkeypatch.undo()
    journal.close()
    reader = read_journal(path)
    assert [e.type for e in reader] == ["agent_start"] and not reader.torn_tail
    assert path.read_bytes().endswith(b"}\n")


def _small_disk(tmp_path) -> Path:
    """A 12 KiB tmpfs at tmp_path/small, or a skip where this test may not mount one."""
    import shutil
    import subprocess

    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=12k", "tmpfs", str(mount)],
                          capture_output=True, check=False)
    if done.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    return mount


def test_a_real_disk_filling_up_mid_run(tmp_path) -> None:
    import subprocess

    mount = _small_disk(tmp_path)
    try:
        journal = JsonlEventJournal(mount / "run.jsonl")
        session = Session(demo_runner(make_workspace(tmp_path), speed=0),
                          TaskState(task=demo_task()), journal=journal, unattended=True,
                          auto_approve=True, escalation_policy="approve")
        state = run(session.run())
        assert state.status == "failed"
        assert state.error == (f"journal write failed: cannot write journal "
                               f"{str(mount / 'run.jsonl')!r}: {ENOSPC}")
        reader = read_journal(mount / "run.jsonl")
        on_disk = list(reader)
        assert not reader.torn_tail and len(on_disk) > 10  # whole events, up to the full disk
        assert [e.seq for e in on_disk] == list(range(len(on_disk)))
    finally:
        subprocess.run(["umount", str(mount)], check=False)
