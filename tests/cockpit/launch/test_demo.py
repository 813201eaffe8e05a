"""The demo end to end through a Session (no UI): approve, deny, timeout and cancel paths,
asserted on the journal; the sample project's tests really fail before the edit and pass after."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from support.event_loop import run
from support.event_samples import (
    AGENT_DIALOGUE,
    AGENT_SESSION_TYPES,
    CHECKPOINT_TYPES,
    MODE_TYPES,
)

from cockpit.launch.demo import demo_factory, start_demo
from cockpit.launch.factory import RunOptions
from engine_adapter import Session, read_journal
from engine_adapter.engines.builtin import make_workspace
from engine_adapter.events import EVENT_TYPES

# What a human answers: "y" (once), "a" (always), "n" (deny), "cancel", or None (nothing).
Answer = Callable[[object], str | None]


@pytest.fixture(autouse=True)
def cockpit_home(tmp_path, monkeypatch):
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # demo workspaces go here too


def unittest_in(workspace: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "unittest"], cwd=workspace, capture_output=True,
                          text=True, timeout=60)


def play(session: Session, answer: Answer | None = None) -> Session:
    """Run the session; a stand-in human answers each ask as `answer` says."""
    async def main() -> None:
        async def human() -> None:
            async for event in session.events():
                if event.type != "approval_requested" or answer is None:
                    continue
                choice = answer(event)
                if choice == "cancel":
                    session.cancel("the human pressed escape")
                elif choice is not None:
                    session.resolve_approval(event.approval_id, allow=choice in "ya",
                                             remember=choice == "a")

        watcher = asyncio.create_task(human())
        await asyncio.wait_for(session.run(), 60)
        await asyncio.wait_for(watcher, 10)

    run(main())
    return session


def journal_of(session: Session) -> list:
    return list(read_journal(session.journal.path))


def types(events) -> list[str]:
    return [e.type for e in events]


def key(event) -> str:
    """Which of the demo's asks an `approval_requested` is."""
    command = event.tool_input.get("command", "")
    if "unittest" in command:
        return "tests"
    if command.startswith(("ls", "rm")):
        return command
    return event.tool


ASKS = ["tests", "switch_to_editing", "declare_verification", "ls -l stats", "ls -l tests",
        "rm -rf stats/__pycache__ tests/__pycache__", "alter_verification"]


def demo(tmp_path: Path, **options) -> Session:
    options.setdefault("journal", tmp_path / "demo.jsonl")
    _, session = start_demo(speed=0, options=RunOptions(**options))
    return session


def test_auto_approve_completes_with_every_event_type_but_cancellation(tmp_path) -> None:
    session = play(demo(tmp_path, unattended=True, auto_approve=True))
    events = journal_of(session)
    assert events[-1].type == "agent_end" and events[-1].status == "completed"
    # RunOptions() takes no checkpoints (the command line turns them on)
    assert set(types(events)) == set(EVENT_TYPES) - {"cancellation_observed", "model_retry",
                                                     *AGENT_DIALOGUE, *AGENT_SESSION_TYPES,
                                                     *CHECKPOINT_TYPES, *MODE_TYPES}
    assert types(events).count("decision_error") == 1
    assert types(events).count("verification_plan_frozen") == 2
    asks = [e for e in events if e.type == "approval_requested"]
    assert [key(e) for e in asks] == ASKS
    resolved = {e.approval_id: e for e in events if e.type == "approval_resolved"}
    assert [(resolved[a.approval_id].allowed, a.tier) for a in asks] == [
        (True, 3), (True, 3), (True, 3), (True, 3), (True, 3), (False, 4), (True, 3)]
    assert {e.via for e in resolved.values()} == {"auto"}
    checks = [e for e in events if e.type == "verification_end"]
    assert [(c.check_id, c.passed) for c in checks] == [
        ("unit-tests", True), ("doctests", True), ("compile", True)]
    assert unittest_in(Path(session.state.cwd)).returncode == 0


def test_a_human_approves_and_always_allows_the_listing(tmp_path) -> None:
    answers = {"ls -l stats": "a", "rm -rf stats/__pycache__ tests/__pycache__": "n"}
    session = play(demo(tmp_path), lambda e: answers.get(key(e), "y"))
    events = journal_of(session)
    assert events[-1].status == "completed"
    asks = [key(e) for e in events if e.type == "approval_requested"]
    assert "ls -l tests" not in asks  # the `[a] always` on `ls` covered it
    by_grant = [e for e in events if e.type == "approval_resolved" and e.via == "grant"]
    assert len(by_grant) == 1 and by_grant[0].allowed
    second_ls = next(e for e in events if e.type == "tool_start" and e.title == "ls -l tests")
    assert second_ls.call_id == by_grant[0].approval_id
    assert [(g.tool, g.prefix, g.tier) for g in session.grants] == [("shell", "ls", 3)]
    denied = [e for e in events if e.type == "approval_resolved" and not e.allowed]
    assert [(e.tool, e.via) for e in denied] == [("shell", "human")]


@pytest.mark.parametrize("denied", ASKS)
def test_denying_any_one_ask_ends_cleanly(tmp_path, denied) -> None:
    session = play(demo(tmp_path), lambda e: "n" if key(e) == denied else "y")
    events = journal_of(session)
    assert events[-1].type == "agent_end"
    assert types(events).count("agent_end") == 1
    expected = "failed" if denied in ("switch_to_editing", "declare_verification") else "completed"
    assert events[-1].status == expected
    if expected == "failed":
        assert events[-1].error  # the model says why it stopped
        assert unittest_in(Path(session.state.cwd)).returncode != 0  # nothing was edited


def test_denying_every_ask_fails_cleanly(tmp_path) -> None:
    session = play(demo(tmp_path), lambda e: "n")
    events = journal_of(session)
    assert events[-1].status == "failed"
    assert [key(e) for e in events if e.type == "approval_requested"] == [
        "tests", "switch_to_editing"]
    assert "tool_start" not in [e.type for e in events if getattr(e, "tool", "") == "shell"]


def test_unattended_without_auto_approve_fails_cleanly(tmp_path) -> None:
    session = play(demo(tmp_path, unattended=True))
    events = journal_of(session)
    assert events[-1].status == "failed"
    assert {e.via for e in events if e.type == "approval_resolved"} == {"auto"}


def test_an_approval_timeout_denies_and_the_run_fails(tmp_path) -> None:
    session = play(demo(tmp_path, approval_timeout=0.01))  # nobody answers
    events = journal_of(session)
    assert events[-1].status == "failed"
    resolved = [e for e in events if e.type == "approval_resolved"]
    assert resolved and all(not e.allowed and e.via == "auto" for e in resolved)


def test_cancel_at_an_ask_ends_cancelled(tmp_path) -> None:
    session = play(demo(tmp_path), lambda e: "cancel")
    events = journal_of(session)
    assert types(events)[-2:] == ["cancellation_observed", "agent_end"]
    assert events[-1].status == "cancelled"
    assert events[-2].reason == "the human pressed escape"
    (resolved,) = [e for e in events if e.type == "approval_resolved"]
    assert not resolved.allowed


def test_the_sample_tests_fail_before_the_edit_and_pass_after(tmp_path) -> None:
    workspace = make_workspace(tmp_path)
    before = unittest_in(workspace)
    assert before.returncode != 0
    assert "FAILED (failures=1)" in before.stderr and "test_even_count" in before.stderr
    factory = demo_factory(speed=0, workspace=workspace, options=RunOptions(
        journal=tmp_path / "run.jsonl", unattended=True, auto_approve=True))
    play(factory("Fix the failing test in this project."))
    after = unittest_in(workspace)
    assert after.returncode == 0, after.stderr
    assert "OK" in after.stderr


def test_a_next_task_shares_the_session_id_grants_and_journal_policy(tmp_path) -> None:
    factory, first = start_demo(speed=0, options=RunOptions(journal=tmp_path / "run.jsonl"))
    play(first, lambda e: "a" if key(e).startswith("ls") else "y")
    second = factory("Anything else?")
    assert second.session_id == first.session_id
    assert second.grants is first.grants is factory.conversation.grants
    play(second, lambda e: "n")  # nobody needs to answer: the `ls` grant covers the listing
    events = journal_of(second)
    assert events[-1].status == "completed"
    assert events[0].type == "agent_start" and events[0].task == "Anything else?"
    assert not [e for e in events if e.type == "approval_requested"]
    assert [e.via for e in events if e.type == "approval_resolved"] == ["grant"]
    assert factory.journals == [tmp_path / "run.jsonl", tmp_path / "run-2.jsonl"]
    assert [t.task for t in factory.conversation.tasks] == [
        "Fix the failing test in this project.", "Anything else?"]


def test_the_default_journal_goes_under_cockpit_home(tmp_path) -> None:
    factory, session = start_demo(speed=0, options=RunOptions(unattended=True,
                                                              auto_approve=True))
    play(session)
    (path,) = factory.journals
    assert path.is_relative_to(tmp_path / "home" / "data" / "journals")
    assert session.session_id in path.name
    assert journal_of(session)[-1].status == "completed"


def test_a_removed_demo_workspace_takes_its_project_grants_along(tmp_path) -> None:
    """Issue 26 §4: every demo is a new folder, so the project grants saved in one (`a` `p`)
    piled up in `projects/` for folders that no longer exist. Removing the workspace removes
    its project's file; grants for every project stay; a kept workspace keeps its grants."""
    import shutil

    from cockpit.launch.demo import forget_demo_grants
    from cockpit.paths import grants_dir

    def demo_with_grants():
        factory, _session = start_demo(speed=0, options=RunOptions())
        store = factory.grant_store
        assert store is not None and store.project == str(Path(factory.cwd).resolve())
        store.add_grant("project", "shell", "ls", 3)
        store.add_grant("user", "shell", "git status", 3)
        project_file = store.path("project")
        assert project_file is not None and project_file.is_file()
        return factory, project_file

    factory, project_file = demo_with_grants()
    shutil.rmtree(factory.cwd)
    assert forget_demo_grants(factory)
    assert not project_file.exists()
    assert (grants_dir() / "user.toml").is_file()  # every project's grants stay
    assert not forget_demo_grants(factory)  # once
    kept, kept_file = demo_with_grants()  # --keep: nothing is forgotten
    assert kept_file.is_file()
    shutil.rmtree(kept.cwd)
    # A demo in a folder the human named (`options.project`) is not the store's to forget.
    other = tmp_path / "named"
    other.mkdir()
    named, _ = start_demo(speed=0, options=RunOptions(project=other))
    assert not forget_demo_grants(named)
    shutil.rmtree(named.cwd)


def test_after_clear_the_demo_follows_up_instead_of_replaying_its_fix(tmp_path) -> None:
    factory = demo_factory(speed=0, workspace=make_workspace(tmp_path), options=RunOptions(
        journal=tmp_path / "run.jsonl", saved_grants=False))
    first = factory("Fix the failing test in this project.")
    factory.fresh()  # `/clear`: a new conversation in the same (fixed) workspace
    later = factory("what now?")
    names = [s.runner.model.scenario.name for s in (first, later)]
    assert names == ["fix_failing_test", "followup"]
    assert later.session_id != first.session_id
