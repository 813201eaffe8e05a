"""Rewinding for real: back to each turn, undone, others' changes left alone, `.git` untouched,
a damaged store changing nothing, and hypothesis over random file operations."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.workspaces import git, git_repo, git_status, plain_folder, state_of, tree_hash

from engine_adapter.checkpoints import (
    CheckpointStore,
    Entry,
    Manifest,
    Snapshotter,
    StoreDamaged,
    plan_rewind,
    rewind,
)

F = Entry("f", 0o644, 1, "a" * 64, True)
G = Entry("f", 0o644, 1, "b" * 64, True)
H = Entry("f", 0o644, 1, "c" * 64, True)
X = Entry("f", 0o755, 1, "a" * 64, True)  # F made executable
L = Entry("l", 0o777, 3, "../x", True)


@pytest.mark.parametrize(
    ("target", "baseline", "current", "verdict"),
    [
        (F, G, G, "restore"),  # the run rewrote it
        (F, None, None, "restore"),  # the run deleted it
        (None, G, G, "remove"),  # the run created it
        (F, X, X, "restore"),  # the run made it executable
        (F, L, L, "restore"),  # the run replaced it with a link
        (L, F, F, "restore"),  # the run replaced a link with a file
        (F, F, F, None),  # untouched
        (F, G, F, None),  # someone already put it back
        (F, F, G, "left"),  # someone else changed it, the run never did
        (F, G, H, "left"),  # the run changed it, then someone else did
        (None, None, G, "left"),  # someone else created it after the run
        (F, F, None, "left"),  # someone else deleted it after the run
        (None, G, None, None),  # the run created it, someone removed it: as at the turn
        (Entry("f", 0o644, 9, "d" * 64, False), G, G, "left"),  # over the cap: hash only
    ],
)
def test_the_plan_for_each_path(target, baseline, current, verdict) -> None:
    def one(entry: Entry | None) -> dict[str, Entry]:
        return {"p": entry} if entry is not None else {}

    plan = plan_rewind(one(target), one(baseline), one(current))
    got = ("restore" if plan.restore else "remove" if plan.remove else
           "left" if plan.left_alone else None)
    assert got == verdict


def sh(ws: Path, script: str) -> None:
    """A turn's shell command, run for real in the workspace."""
    subprocess.run(["sh", "-c", script], cwd=ws, check=True)


TURNS = [
    # turn 1: rewrite a tracked file, create an untracked one and an ignored one
    "echo changed > README.md && echo new > notes.txt && echo log > run.log",
    # turn 2: delete a tracked file, make a folder, a link and an executable script
    "rm src/app.py && mkdir -p gen/deep && echo g > gen/deep/g.txt && ln -s README.md link "
    "&& printf '#!/bin/sh\\n' > tool.sh && chmod +x tool.sh",
    # turn 3: replace a file with a folder, rewrite through sed -i, move a file
    "rm notes.txt && mkdir notes.txt && echo inside > notes.txt/x && sed -i s/changed/again/ "
    "README.md && mv tool.sh bin.sh",
]


def _run(ws: Path, store: CheckpointStore) -> tuple[Snapshotter, list[Manifest], list]:
    taker = Snapshotter(store, str(ws), run="run")
    manifests, states = [], []
    for script in TURNS:
        states.append(state_of(ws))
        manifests.append(taker.take(turn=len(manifests) + 1).manifest)
        sh(ws, script)
    states.append(state_of(ws))
    manifests.append(taker.take(kind="end").manifest)
    return taker, manifests, states


def _recorded(state: dict, ignored: tuple[str, ...] = ("run.log",)) -> dict:
    return {p: v for p, v in state.items() if p not in ignored}


@pytest.mark.parametrize("kind", ["git", "folder"])
def test_rewind_to_each_turn_and_undo_in_a_git_repo_and_a_plain_folder(tmp_path, kind) -> None:
    ws = git_repo(tmp_path / "ws") if kind == "git" else plain_folder(tmp_path / "ws")
    git_before = tree_hash(ws / ".git") if kind == "git" else None
    status_before = git_status(ws) if kind == "git" else None
    store = CheckpointStore(tmp_path / "store")
    _, manifests, states = _run(ws, store)
    baseline = manifests[-1]
    for turn in (3, 1, 2, 1):
        prior = state_of(ws)
        outcome = rewind(store, manifests[turn - 1], baseline)
        assert not outcome.failed
        assert outcome.after is not None and outcome.before is not None
        # In a git repo the ignored run.log is not the run's to take back; in a plain
        # folder there is no .gitignore, so it is recorded (and removed) like any file.
        ignored = ("run.log",) if kind == "git" else ()
        assert _recorded(state_of(ws), ignored) == _recorded(states[turn - 1], ignored)
        if git_before is not None:
            assert tree_hash(ws / ".git") == git_before
        undone = rewind(store, outcome.before, outcome.after)  # --undo
        assert state_of(ws) == prior  # exactly what the rewind replaced, ignored files too
        baseline = undone.after
        assert baseline is not None
    rewind(store, manifests[0], baseline)
    if kind == "git":
        assert tree_hash(ws / ".git") == git_before
        # the ignored file is the only difference git does not show anyway
        assert git_status(ws) == status_before


def test_a_file_someone_else_changed_after_the_run_is_left_alone_and_listed(tmp_path) -> None:
    ws = git_repo(tmp_path / "ws")
    store = CheckpointStore(tmp_path / "store")
    _, manifests, _ = _run(ws, store)
    (ws / "src").mkdir(exist_ok=True)
    (ws / "src" / "app.py").write_text("the user's own rewrite")  # the run had deleted it
    (ws / "gen" / "deep" / "g.txt").write_text("the user edited the run's file")
    (ws / "mine.txt").write_text("the user's new file")
    outcome = rewind(store, manifests[0], manifests[-1])
    left = dict(outcome.plan.left_alone)
    assert set(left) == {"src/app.py", "gen/deep/g.txt", "mine.txt"}
    assert (ws / "src" / "app.py").read_text() == "the user's own rewrite"
    assert (ws / "gen" / "deep" / "g.txt").read_text() == "the user edited the run's file"
    assert (ws / "mine.txt").exists()
    assert (ws / "README.md").read_text() == "hello\n"  # the run's change went back


def test_a_damaged_store_changes_nothing(tmp_path) -> None:
    ws = plain_folder(tmp_path / "ws")
    store = CheckpointStore(tmp_path / "store")
    _, manifests, _ = _run(ws, store)
    before = state_of(ws)
    first_pack = sorted((tmp_path / "store" / "packs").glob("*.pack"))[0]  # turn 1's files
    data = first_pack.read_bytes()
    first_pack.write_bytes(data.replace(b"print(1)", b"print(0)"))  # same length, other bytes
    with pytest.raises(StoreDamaged, match="changed"):
        rewind(CheckpointStore(tmp_path / "store"), manifests[0], manifests[-1])
    first_pack.unlink()
    with pytest.raises(StoreDamaged, match="lacks"):
        rewind(CheckpointStore(tmp_path / "store"), manifests[0], manifests[-1])
    assert _recorded(state_of(ws)) == _recorded(before)


@pytest.mark.parametrize("bad", ["../escape", ".git/hooks/pre-commit", "a/../../x", "/abs",
                                 "a//b", "./a", "sub/.git/config"])
def test_a_manifest_naming_a_path_outside_or_in_git_is_damage(tmp_path, bad) -> None:
    store = CheckpointStore(tmp_path / "store")
    ws = plain_folder(tmp_path / "ws")
    root, _ = store.put_tree({bad: ["f", 0o644, 1, "a" * 64, 1]})
    manifest = Manifest(id="0000000000a-00000000", run="r", workspace=str(ws), root=root,
                        created=0.0)
    store.write_manifest(manifest)
    with pytest.raises(StoreDamaged):
        store.entries(store.read_manifest(manifest.id))


def test_a_folder_swapped_for_a_link_is_never_written_through(tmp_path) -> None:
    ws = plain_folder(tmp_path / "ws")
    outside = tmp_path / "outside"
    outside.mkdir()
    store = CheckpointStore(tmp_path / "store")
    taker = Snapshotter(store, str(ws), run="r")
    first = taker.take(turn=1).manifest
    sh(ws, f"rm -r src && ln -s {outside} src")
    end = taker.take(kind="end").manifest
    outcome = rewind(store, first, end)
    assert not outcome.failed
    assert list(outside.iterdir()) == []
    assert not (ws / "src").is_symlink() and (ws / "src" / "app.py").read_text() == "print(1)\n"


# Hypothesis: random file operations turn after turn; rewind to any turn gives its state ----

NAMES = ["a.txt", "b.txt", "d/c.txt", "d/e/f.txt", "run.sh"]
OPS = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(NAMES), st.binary(max_size=40)),
    st.tuples(st.just("delete"), st.sampled_from(NAMES), st.just(b"")),
    st.tuples(st.just("chmod"), st.sampled_from(NAMES), st.just(b"")),
    st.tuples(st.just("link"), st.sampled_from(["l1", "l2"]), st.sampled_from([b"a.txt", b"../x",
                                                                               b"d"])),
    st.tuples(st.just("unlink"), st.sampled_from(["l1", "l2"]), st.just(b"")),
)


def _apply(ws: Path, op: tuple[str, str, bytes]) -> None:
    kind, name, data = op
    path = ws / name
    if kind == "write":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    elif kind in ("delete", "unlink") and (path.exists() or path.is_symlink()):
        path.unlink()
    elif kind == "chmod" and path.exists():
        path.chmod(path.stat().st_mode ^ 0o100)
    elif kind == "link" and not path.exists() and not path.is_symlink():
        os.symlink(data.decode(), path)


@settings(max_examples=30, deadline=None)
@given(turns=st.lists(st.lists(OPS, max_size=6), min_size=1, max_size=5), data=st.data())
def test_rewind_to_turn_n_gives_exactly_the_state_at_turn_n(turns, data) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = plain_folder(Path(tmp) / "ws", {"a.txt": "start", "d/c.txt": "start"})
        store = CheckpointStore(Path(tmp) / "store")
        taker = Snapshotter(store, str(ws), run="r")
        manifests, states = [], []
        for ops in turns:
            states.append(state_of(ws))
            manifests.append(taker.take(turn=len(manifests) + 1).manifest)
            for op in ops:
                _apply(ws, op)
        baseline = taker.take(kind="end").manifest
        picks = [data.draw(st.integers(0, len(manifests) - 1), label="turn index")
                 for _ in range(2)]
        rewinds = []
        for n in picks:
            outcome = rewind(store, manifests[n], baseline)
            assert not outcome.failed and not outcome.plan.left_alone
            assert state_of(ws) == states[n]
            assert outcome.before is not None and outcome.after is not None
            rewinds.append(outcome)
            baseline = outcome.after
        # --undo puts back what the latest rewind replaced: the first rewind's result
        last = rewinds[-1]
        undone = rewind(store, last.before, last.after)
        assert not undone.failed and state_of(ws) == states[picks[0]]
        # and an undo of that undo is the second rewind again
        assert undone.before is not None and undone.after is not None
        rewind(store, undone.before, undone.after)
        assert state_of(ws) == states[picks[1]]


# Attacks on the rewind's writes: links and hard links planted by the run, hostile names ----

def _one_turn(tmp_path: Path, script: str, files: dict[str, str] | None = None):
    ws = plain_folder(tmp_path / "ws", files)
    store = CheckpointStore(tmp_path / "store")
    taker = Snapshotter(store, str(ws), run="r")
    first = taker.take(turn=1)
    sh(ws, script)
    end = taker.take(kind="end").manifest
    return ws, store, first, end


@pytest.mark.parametrize("plant", [
    "rm README.md && ln -s {out}/victim README.md",  # a file swapped for a link out
    "rm README.md && ln {out}/victim README.md",  # ... for a hard link to a file outside
    "rm -r src && ln -s {out} src",  # a folder swapped for a link out
    "mkdir -p deep && rm -r src && ln -s {out} deep/src && ln -s deep/src src",  # two hops
    "rm -r src && mkdir src && ln -s {out}/victim src/app.py",  # the file itself a link out
])
def test_nothing_outside_the_workspace_is_written_through_what_the_run_planted(
        tmp_path, plant) -> None:
    out = tmp_path / "outside"
    out.mkdir()
    (out / "victim").write_text("outside: must stay")
    ws, store, first, end = _one_turn(tmp_path, plant.format(out=out))
    outcome = rewind(store, first.manifest, end)
    assert not outcome.failed
    assert (out / "victim").read_text() == "outside: must stay"
    assert sorted(p.name for p in out.iterdir()) == ["victim"]
    assert state_of(ws) == {"README.md": ("f", b"hello\n", False),
                            "src/app.py": ("f", b"print(1)\n", False)}


@pytest.mark.parametrize("name", ["new\nline.txt", "tab\there", "-rf", "quote\"'.txt",
                                  " lead space", "é-ünïcode", "\u202eevil.txt", "x" * 200])
def test_hostile_file_names_are_recorded_and_restored(tmp_path, name) -> None:
    ws = plain_folder(tmp_path / "ws", {name: "theirs", "ok.txt": "ok"})
    store = CheckpointStore(tmp_path / "store")
    taker = Snapshotter(store, str(ws), run="r")
    first = taker.take(turn=1)
    (ws / name).unlink()
    end = taker.take(kind="end").manifest
    rewind(store, first.manifest, end)
    assert (ws / name).read_text() == "theirs"


def test_a_name_that_is_not_utf8_is_recorded_and_restored(tmp_path) -> None:
    ws = plain_folder(tmp_path / "ws")
    raw = os.fsencode(str(ws)) + b"/bad\xff\xfename"
    with open(raw, "wb") as handle:
        handle.write(b"bytes")
    store = CheckpointStore(tmp_path / "store")
    taker = Snapshotter(store, str(ws), run="r")
    first = taker.take(turn=1)
    os.unlink(raw)
    end = taker.take(kind="end").manifest
    rewind(store, first.manifest, end)
    with open(raw, "rb") as handle:
        assert handle.read() == b"bytes"


def test_a_run_that_commits_keeps_its_commit_the_files_go_back(tmp_path) -> None:
    ws = git_repo(tmp_path / "ws")
    store = CheckpointStore(tmp_path / "store")
    taker = Snapshotter(store, str(ws), run="r")
    first = taker.take(turn=1)
    (ws / "README.md").write_text("committed by the agent\n")
    git(ws, "commit", "-qam", "agent")
    after_commit = tree_hash(ws / ".git")
    end = taker.take(kind="end").manifest
    rewind(store, first.manifest, end)
    assert (ws / "README.md").read_text() == "hello\n"
    assert tree_hash(ws / ".git") == after_commit  # git's history is the user's: not rewound
    assert "README.md" in git_status(ws)
