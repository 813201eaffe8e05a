"""A run whose workspace holds the cockpit's home (its journals, the checkpoint store, the
host's state): a real run through the SessionFactory records none of it, and `cockpit rewind`
leaves it alone (the journal keeps every line and gains the rewind's)."""

from __future__ import annotations

import json

import pytest
from support.event_loop import run
from support.steps import StepRunner
from support.workspaces import git_repo, plain_folder, shell_turn
from typer.testing import CliRunner

from cockpit.cli.main import app
from cockpit.launch import RunOptions, SessionFactory
from cockpit.paths import checkpoint_dir, journal_dir
from cockpit.rewinds import checkpoint_store
from engine_adapter.checkpoints import CheckpointSettings


@pytest.mark.parametrize("kind", ["git", "folder"])
@pytest.mark.parametrize("journal_in", ["home", "workspace"])
def test_a_workspace_holding_the_home_never_records_nor_rewinds_it(
        tmp_path, monkeypatch, kind, journal_in) -> None:
    ws = git_repo(tmp_path / "ws") if kind == "git" else plain_folder(tmp_path / "ws")
    monkeypatch.setenv("COCKPIT_HOME", str(ws / ".cockpit"))
    journal = journal_dir() / "run.jsonl" if journal_in == "home" else ws / "run.jsonl"
    journal.parent.mkdir(parents=True, exist_ok=True)
    steps = [shell_turn(1, "echo one > README.md"), shell_turn(2, "echo two > README.md")]
    factory = SessionFactory(lambda task, index: StepRunner(*steps, cwd=str(ws)), cwd=ws,
                             options=RunOptions(journal=journal, unattended=True,
                                                saved_grants=False,
                                                checkpoints=CheckpointSettings()))
    run(factory("edit things").run())
    store = checkpoint_store(journal)
    manifests = store.all_manifests()
    assert len(manifests) == 3  # turns 1 and 2, and the run's end
    for manifest in manifests:
        paths = store.entries(manifest)
        assert not any(p.startswith(".cockpit") or p == "run.jsonl" for p in paths), paths
    lines = journal.read_bytes().splitlines()
    done = CliRunner().invoke(app, ["rewind", str(journal), "--to", "1"])
    assert done.exit_code == 0, done.output
    assert (ws / "README.md").read_text() == "hello\n"
    after = journal.read_bytes().splitlines()
    assert after[:len(lines)] == lines  # every line kept, not an older journal brought back
    assert json.loads(after[-1])["type"] == "workspace_rewound"
    assert all(m.id in {n.id for n in store.all_manifests()} for m in manifests)
    assert (checkpoint_dir() / "manifests").is_dir()
