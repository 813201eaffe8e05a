"""The cockpit's own files in a workspace: a workspace that holds `COCKPIT_HOME` (its journals
and the checkpoint store) never records them, and a rewind leaves them alone; compared as real
paths, so a link to the workspace or to the cockpit's folder hides nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.workspaces import git_repo, plain_folder

from engine_adapter.checkpoints import (
    Checkpointer,
    CheckpointStore,
    Snapshotter,
    kept_out,
    list_paths,
    rewind,
)


def _home_in(ws: Path) -> tuple[Path, CheckpointStore]:
    """A cockpit home inside `ws` with a journal, and its store (data/checkpoints)."""
    home = ws / ".cockpit"
    journals = home / "data" / "journals"
    journals.mkdir(parents=True)
    (journals / "run.jsonl").write_text('{"type": "agent_start"}\n')
    (home / "state").mkdir()
    (home / "state" / "host.log").write_text("log\n")
    store = CheckpointStore(home / "data" / "checkpoints",
                            keep_out=(home, home / "data", journals, home / "state"))
    return home, store


@pytest.mark.parametrize("kind", ["git", "folder"])
def test_a_workspace_holding_the_cockpit_home_records_none_of_it(tmp_path, kind) -> None:
    ws = git_repo(tmp_path / "ws") if kind == "git" else plain_folder(tmp_path / "ws")
    home, store = _home_in(ws)
    taker = Snapshotter(store, str(ws), run="r")
    first = taker.take(turn=1)
    (home / "data" / "journals" / "run.jsonl").write_text("grown\n" * 100)
    second = taker.take(turn=2)  # the store now holds a pack, an index and a manifest
    assert (home / "data" / "checkpoints" / "manifests").is_dir()
    for taken in (first, second):
        assert sorted(taken.entries) == sorted(
            [".gitignore", "README.md", "src/app.py"] if kind == "git"
            else ["README.md", "src/app.py"])
    assert second.changed == (0, 0, 0)  # the journal grew and the store grew: nothing recorded


@pytest.mark.parametrize("kind", ["git", "folder"])
def test_a_rewind_leaves_the_cockpit_home_alone(tmp_path, kind) -> None:
    ws = git_repo(tmp_path / "ws") if kind == "git" else plain_folder(tmp_path / "ws")
    home, store = _home_in(ws)
    # Recorded as an older cockpit did, with its home in it: a rewind must not restore that.
    older = CheckpointStore(store.root)
    old = Snapshotter(older, str(ws), run="r").take(turn=1).manifest
    assert "run.jsonl" in str(sorted(older.entries(old)))
    taker = Snapshotter(store, str(ws), run="r")
    first = taker.take(turn=1).manifest
    journal = home / "data" / "journals" / "run.jsonl"
    journal.write_text("the run went on\n")
    (home / "data" / "journals" / "later.jsonl").write_text("a journal made after turn 1\n")
    (ws / "README.md").write_text("changed by the run\n")
    end = taker.take(kind="end").manifest
    packs = sorted(p.name for p in (store.root / "packs").iterdir())
    for target in (first, old):
        outcome = rewind(store, target, end)
        assert outcome.failed == []
        assert all(not p.startswith(".cockpit") for p in
                   outcome.plan.restore + outcome.plan.remove + [p for p, _ in
                                                                 outcome.plan.left_alone])
        assert (ws / "README.md").read_text() == "hello\n"
        assert journal.read_text() == "the run went on\n"
        assert (home / "data" / "journals" / "later.jsonl").exists()
        assert (home / "state" / "host.log").read_text() == "log\n"
        assert set(packs) <= {p.name for p in (store.root / "packs").iterdir()}
        (ws / "README.md").write_text("changed by the run\n")
        end = taker.take(kind="end").manifest


@pytest.mark.parametrize("linked", ["workspace", "home"])
def test_a_workspace_that_is_the_home_s_parent_through_a_link(tmp_path, linked) -> None:
    real = plain_folder(tmp_path / "real")
    (real / "home" / "data" / "journals").mkdir(parents=True)
    (real / "home" / "data" / "journals" / "run.jsonl").write_text("{}\n")
    os.symlink(real, tmp_path / "link")
    ws = tmp_path / ("link" if linked == "workspace" else "real")
    home = tmp_path / ("real" if linked == "workspace" else "link") / "home"
    store = CheckpointStore(home / "data" / "checkpoints", keep_out=(home,))
    assert kept_out(str(ws), store.keep_out) == ("home/data/checkpoints", "home")
    checkpointer = Checkpointer(store, ws, run="r")  # as a run takes them (the real workspace)
    try:
        taken = checkpointer.begin(1).result()
    finally:
        checkpointer.close()
    assert taken.error is None and taken.checkpoint is not None
    assert sorted(store.entries(store.read_manifest(taken.checkpoint))) == [
        "README.md", "src/app.py"]
    assert (home / "data" / "checkpoints" / "manifests").is_dir()


def test_only_paths_strictly_inside_the_workspace_are_kept_out(tmp_path) -> None:
    ws = plain_folder(tmp_path / "ws")
    (ws / "sock").write_text("a file kept out by its own name")
    (ws / "sockets").write_text("a name that only starts like it")
    out = kept_out(str(ws), [ws, tmp_path, tmp_path / "elsewhere", ws / "sock"])
    assert out == ("sock",)  # the workspace itself and what holds it keep nothing out
    assert list_paths(str(ws), out=out).paths == ["README.md", "sockets", "src/app.py"]
