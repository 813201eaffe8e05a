"""`cockpit checkpoints` and `cockpit rewind` on real runs: each turn and its undo, from any
folder, a user's change left alone, `.git` byte-identical, and every refusal one line, exit 2,
nothing changed."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from support.event_loop import run
from support.steps import StepRunner
from support.workspaces import git_repo, git_status, plain_folder, shell_turn, state_of, tree_hash
from typer.testing import CliRunner

from cockpit.cli.main import app
from cockpit.launch import RunOptions, SessionFactory
from cockpit.paths import checkpoint_dir
from engine_adapter import read_journal
from engine_adapter.checkpoints import CheckpointSettings

SCRIPTS = [
    "echo changed > README.md && echo new > notes.txt && echo log > run.log",
    "rm src/app.py && mkdir -p gen && echo g > gen/g.txt && ln -s README.md link",
    "sed -i s/changed/again/ README.md && chmod +x notes.txt",
]


def _a_run(ws: Path, tmp_path: Path) -> tuple[Path, list[dict]]:
    """A real run of three shell turns through the cockpit's SessionFactory; its journal and
    the workspace's state before each turn (and at the end)."""
    states: list[dict] = []

    def remember(turn: int, script: str):
        inner = shell_turn(turn, script)

        async def step(r: StepRunner) -> None:
            states.append(state_of(ws))
            await inner(r)
        return step

    steps = [remember(i + 1, s) for i, s in enumerate(SCRIPTS)]
    factory = SessionFactory(lambda task, index: StepRunner(*steps, cwd=str(ws)), cwd=ws,
                             options=RunOptions(journal=tmp_path / "run.jsonl",
                                                unattended=True, saved_grants=False,
                                                checkpoints=CheckpointSettings()))
    run(factory("edit things").run())
    states.append(state_of(ws))
    return tmp_path / "run.jsonl", states


def cli(*args: object, cwd: Path | None = None):
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return CliRunner().invoke(app, [str(a) for a in args])
    finally:
        os.chdir(old)


def _recorded(state: dict) -> dict:
    return {p: v for p, v in state.items() if p != "run.log"}  # ignored: not the run's


@pytest.mark.parametrize("kind", ["git", "folder"])
def test_checkpoints_lists_each_turn_and_rewind_restores_each_and_undoes(tmp_path,
                                                                        kind) -> None:
    ws = git_repo(tmp_path / "ws") if kind == "git" else plain_folder(tmp_path / "ws")
    (ws / "run.log").write_text("") if kind == "folder" else None
    git_before = tree_hash(ws / ".git") if kind == "git" else None
    status_before = git_status(ws) if kind == "git" else None
    journal, states = _a_run(ws, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    listed = cli("checkpoints", journal, cwd=elsewhere)
    assert listed.exit_code == 0, listed.output
    rows = [line for line in listed.stdout.splitlines() if line.startswith("turn ")]
    assert [r.split()[1] for r in rows] == ["1", "2", "3"]
    # notes.txt, gen/g.txt and link made, README.md changed (and run.log, not ignored in a
    # plain folder), src/app.py deleted
    assert rows[0].endswith("+3 ~1 -1" if kind == "git" else "+3 ~2 -1")
    for turn in (2, 1, 3):
        before = state_of(ws)
        dry = cli("rewind", journal, "--to", turn, "--dry-run", cwd=elsewhere)
        assert dry.exit_code == 0 and state_of(ws) == before, dry.output
        done = cli("rewind", journal, "--to", turn, cwd=elsewhere)
        assert done.exit_code == 0, done.output
        wanted = states[turn - 1]
        if kind == "git":
            assert _recorded(state_of(ws)) == _recorded(wanted)
        else:
            assert state_of(ws) == wanted
        if git_before is not None:
            assert tree_hash(ws / ".git") == git_before
        undone = cli("rewind", journal, "--undo", cwd=elsewhere)
        assert undone.exit_code == 0, undone.output
        assert state_of(ws) == before
    cli("rewind", journal, "--to", 1)
    if kind == "git":
        assert git_status(ws) == status_before
        assert tree_hash(ws / ".git") == git_before
    rewound = [e for e in read_journal(journal) if e.type == "workspace_rewound"]
    assert [(e.to_turn, e.undo) for e in rewound] == [
        (2, False), (None, True), (1, False), (None, True), (3, False), (None, True),
        (1, False)]
    verify = cli("verify", journal)  # the journal's chain goes on through the rewinds
    assert verify.exit_code == 0, verify.output


def test_rewind_prints_one_path_a_line_and_leaves_a_users_change_alone(tmp_path) -> None:
    ws = git_repo(tmp_path / "ws")
    journal, _ = _a_run(ws, tmp_path)
    (ws / "gen" / "g.txt").write_text("the user's edit, after the run")
    done = cli("rewind", journal, "--to", 1)
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    # src/app.py was deleted by the run: it is brought back (written back too, not "restored")
    assert "restored README.md" in lines and "brought back src/app.py" in lines
    assert "restored src/app.py" not in lines
    assert "removed notes.txt" in lines and "removed link" in lines
    assert any(line.startswith("left alone gen/g.txt") for line in lines)
    assert (ws / "gen" / "g.txt").read_text() == "the user's edit, after the run"


def test_without_a_journal_the_most_recent_run_is_used(tmp_path, monkeypatch) -> None:
    ws = plain_folder(tmp_path / "ws")
    states: list = []
    factory = SessionFactory(lambda t, i: StepRunner(shell_turn(1, "echo x > a"), cwd=str(ws)),
                             cwd=ws, options=RunOptions(unattended=True, saved_grants=False,
                                                        checkpoints=CheckpointSettings()))
    states.append(state_of(ws))
    run(factory("t").run())
    assert cli("checkpoints").stdout.startswith("turn 1")
    assert cli("rewind", "--to", 1).exit_code == 0
    assert state_of(ws) == states[0]


def _damage_a_blob(store: Path) -> None:
    for path in sorted((store / "packs").glob("*.pack")):
        path.write_bytes(b"d" * path.stat().st_size)


@pytest.mark.parametrize("case", ["unknown turn", "no journal", "a directory", "both flags",
                                  "neither flag", "workspace gone", "store damaged",
                                  "manifest gone", "no checkpoints", "nothing to undo",
                                  "turn zero", "still running"])
def test_each_failure_is_one_line_exit_2_and_nothing_changed(tmp_path, case) -> None:
    ws = git_repo(tmp_path / "ws")
    journal, _ = _a_run(ws, tmp_path)
    args: list[object] = [journal, "--to", 1]
    if case == "unknown turn":
        args = [journal, "--to", 9]
    elif case == "turn zero":
        args = [journal, "--to", 0]
    elif case == "no journal":
        args = [tmp_path / "missing.jsonl", "--to", 1]
    elif case == "a directory":
        args = [tmp_path, "--to", 1]
    elif case == "both flags":
        args = [journal, "--to", 1, "--undo"]
    elif case == "neither flag":
        args = [journal]
    elif case == "workspace gone":
        shutil.move(ws, tmp_path / "moved")
        ws = tmp_path / "moved"
    elif case == "store damaged":
        _damage_a_blob(checkpoint_dir())
    elif case == "manifest gone":
        shutil.rmtree(checkpoint_dir() / "manifests")
    elif case == "no checkpoints":
        lines = [line for line in journal.read_text().splitlines()
                 if json.loads(line)["type"] != "checkpoint_taken"]
        journal.write_text("\n".join(lines) + "\n")
    elif case == "nothing to undo":
        args = [journal, "--undo"]
    before, git_before = state_of(ws), tree_hash(ws / ".git")
    if case == "still running":
        from engine_adapter import JsonlEventJournal
        holder = JsonlEventJournal(journal)  # a run still writing it holds its lock
        try:
            got = cli("rewind", *args)
        finally:
            holder.close()
    else:
        got = cli("rewind", *args)
    assert got.exit_code == 2, got.output
    message = got.stderr.strip().splitlines()
    assert len(message) == 1 and message[0].startswith("cockpit: "), got.stderr
    assert "Traceback" not in got.output
    assert state_of(ws) == before and tree_hash(ws / ".git") == git_before
    listed = cli("checkpoints", args[0])
    if case in ("no journal", "a directory", "no checkpoints", "store damaged",
                "manifest gone"):
        assert listed.exit_code == 2 and len(listed.stderr.strip().splitlines()) == 1


def test_the_help_of_both_commands_says_what_each_option_does() -> None:
    for command in ("checkpoints", "rewind"):
        shown = cli(command, "--help")
        assert shown.exit_code == 0
    text = cli("rewind", "--help").stdout
    for option in ("--to", "--undo", "--dry-run", "--yes"):
        assert option in text


@pytest.mark.parametrize("enabled", [True, False])
def test_cockpit_demo_checkpoints_unless_the_config_turns_it_off(tmp_path, enabled) -> None:
    from cockpit.config import config_path

    if not enabled:
        config_path().parent.mkdir(parents=True, exist_ok=True)
        config_path().write_text("[checkpoints]\nenabled = false\n")
    journal = tmp_path / "demo.jsonl"
    got = cli("demo", "--headless", "--auto-approve", "--speed", "0", "--journal", journal)
    assert got.exit_code == 0, got.output
    types = [e.type for e in read_journal(journal)]
    assert ("checkpoint_taken" in types) is enabled
    if enabled:
        assert types.count("checkpoint_taken") == types.count("turn_start") + 1


def test_a_journal_naming_another_workspaces_checkpoint_is_refused(tmp_path) -> None:
    ws = git_repo(tmp_path / "ws")
    journal, _ = _a_run(ws, tmp_path)
    other = plain_folder(tmp_path / "other", {"keep.txt": "not the run's"})
    lines = []
    for line in journal.read_text().splitlines():
        event = json.loads(line)
        if event["type"] == "agent_start":
            event["cwd"] = str(other)  # an edited journal: the rewind must not touch `other`
        lines.append(json.dumps(event))
    journal.write_text("\n".join(lines) + "\n")
    before = state_of(other)
    got = cli("rewind", journal, "--to", 1)
    assert got.exit_code == 2 and "not of the run's workspace" in got.stderr
    assert state_of(other) == before
