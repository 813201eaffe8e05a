"""Taking checkpoints for real: a git repository and a plain folder, tracked, untracked and
ignored files, links never followed, the size cap, the stat cache, and `.git` untouched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.workspaces import git_repo, git_status, plain_folder, tree_hash

from engine_adapter.checkpoints import CheckpointStore, Snapshotter, list_paths


def _take(store: CheckpointStore, ws: Path, **kw) -> tuple[Snapshotter, object]:
    taker = Snapshotter(store, str(ws), run="r", **kw)
    return taker, taker.take(turn=1)


def test_a_git_repository_records_tracked_and_untracked_never_ignored(tmp_path) -> None:
    ws = git_repo(tmp_path / "ws")
    (ws / "new.txt").write_text("untracked")
    (ws / "debug.log").write_text("ignored by *.log")
    (ws / "build").mkdir()
    (ws / "build" / "out.bin").write_text("ignored by build/")
    (ws / ".git" / "info").mkdir(exist_ok=True)
    (ws / ".git" / "info" / "exclude").write_text("secret.txt\n")
    (ws / "secret.txt").write_text("excluded in .git/info/exclude")
    (ws / "__pycache__").mkdir()
    (ws / "__pycache__" / "x.pyc").write_bytes(b"cache: the cockpit's ignore list")
    listing = list_paths(str(ws))
    assert listing.source == "git"
    assert listing.paths == [".gitignore", "README.md", "new.txt", "src/app.py"]


def test_a_plain_folder_is_walked_with_the_cockpit_ignore_list(tmp_path) -> None:
    ws = plain_folder(tmp_path / "ws")
    for cache in ("node_modules/x.js", ".venv/bin/python", "a/__pycache__/m.pyc", "m.pyc"):
        (ws / cache).parent.mkdir(parents=True, exist_ok=True)
        (ws / cache).write_text("cache")
    (ws / "logs").mkdir()
    (ws / "logs" / "today.log").write_text("mine")
    listing = list_paths(str(ws), ignore=("*.log",))
    assert listing.source == "folder"
    assert listing.paths == ["README.md", "src/app.py"]


@pytest.mark.parametrize("inside", [".git", "sub/.git"])
def test_nothing_inside_any_git_dir_is_recorded_in_a_plain_walk(tmp_path, inside) -> None:
    ws = plain_folder(tmp_path / "ws")
    (ws / inside).mkdir(parents=True)
    (ws / inside / "config").write_text("[core]\n")
    assert all(".git" not in p.split("/") for p in list_paths(str(ws)).paths)


def test_links_are_recorded_as_links_and_never_followed(tmp_path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("must never be copied")
    ws = plain_folder(tmp_path / "ws")
    os.symlink(outside / "secret", ws / "to-file")
    os.symlink(outside, ws / "to-folder")
    os.symlink("missing", ws / "dangling")
    store = CheckpointStore(tmp_path / "store")
    _, taken = _take(store, ws)
    entries = taken.entries
    assert entries["to-file"].kind == "l" and entries["to-file"].digest == str(outside / "secret")
    assert entries["to-folder"].kind == "l" and entries["dangling"].digest == "missing"
    assert not any(p.startswith("to-folder/") for p in entries)
    stored = b"".join(p.read_bytes() for p in (tmp_path / "store").rglob("*") if p.is_file())
    assert b"must never be copied" not in stored


def test_fifos_sockets_and_devices_are_skipped(tmp_path) -> None:
    ws = plain_folder(tmp_path / "ws")
    os.mkfifo(ws / "pipe")  # opening it for reading would block a naive reader
    store = CheckpointStore(tmp_path / "store")
    _, taken = _take(store, ws)
    assert "pipe" not in taken.entries


def test_a_file_over_the_cap_is_recorded_by_size_and_hash_only(tmp_path) -> None:
    ws = plain_folder(tmp_path / "ws")
    (ws / "big.bin").write_bytes(b"x" * 5000)
    store = CheckpointStore(tmp_path / "store")
    _, taken = _take(store, ws, large_bytes=4096)
    entry = taken.entries["big.bin"]
    assert (entry.size, entry.stored) == (5000, False)
    assert taken.manifest.large == ["big.bin"]
    assert not store.has(entry.digest)


def test_unchanged_files_are_not_read_again_and_cost_nothing(tmp_path) -> None:
    ws = plain_folder(tmp_path / "ws", {f"f{i}.txt": f"file {i}" for i in range(50)})
    store = CheckpointStore(tmp_path / "store")
    taker = Snapshotter(store, str(ws), run="r", previous_start_ns=0)
    first = taker.take(turn=1)
    assert first.read == 50
    taker.previous_start_ns += 10**12  # as if that checkpoint were long ago (no racy files)
    packs = set((tmp_path / "store" / "packs").glob("*.idx"))
    (ws / "f3.txt").write_text("changed")
    second = taker.take(turn=2)
    assert second.read == 1 and second.changed == (0, 1, 0)
    # One new blob and one new tree (the folder that changed), not fifty files again.
    (new,) = set((tmp_path / "store" / "packs").glob("*.idx")) - packs
    assert new.stat().st_size == 2 * 44  # two index records


def test_a_file_rewritten_in_the_same_tick_is_read_again(tmp_path) -> None:
    ws = plain_folder(tmp_path / "ws", {"a.txt": "one"})
    store = CheckpointStore(tmp_path / "store")
    taker = Snapshotter(store, str(ws), run="r")
    taker.take(turn=1)
    st = os.stat(ws / "a.txt")
    (ws / "a.txt").write_text("two")  # same size; put its times back as they were
    os.utime(ws / "a.txt", ns=(st.st_atime_ns, st.st_mtime_ns))
    second = taker.take(turn=2)
    assert second.changed == (0, 1, 0)


def test_git_is_only_read_the_git_dir_stays_byte_identical(tmp_path) -> None:
    ws = git_repo(tmp_path / "ws")
    (ws / "README.md").write_text("changed, unstaged")  # git status would refresh the index
    (ws / "new.txt").write_text("untracked")
    before = tree_hash(ws / ".git")
    store = CheckpointStore(tmp_path / "store")
    taker, _ = _take(store, ws)
    taker.take(turn=2)
    assert tree_hash(ws / ".git") == before
    assert "new.txt" in git_status(ws)


def test_the_store_is_outside_the_workspace_and_nothing_is_written_in_it(tmp_path) -> None:
    ws = git_repo(tmp_path / "ws")
    before = tree_hash(ws)
    store = CheckpointStore(tmp_path / "store")
    _take(store, ws)
    assert tree_hash(ws) == before


def test_git_environment_variables_cannot_point_the_listing_elsewhere(tmp_path,
                                                                        monkeypatch) -> None:
    other = git_repo(tmp_path / "other", {"elsewhere.txt": "x"})
    ws = git_repo(tmp_path / "ws")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    assert "elsewhere.txt" not in list_paths(str(ws)).paths


@pytest.mark.parametrize("kind", ["git", "folder"])
def test_a_first_checkpoint_records_links_and_skips_fifos_and_sockets(tmp_path, kind) -> None:
    """The first checkpoint of a git workspace takes each path's kind from its folder's listing
    (no lstat): links stay links, a FIFO or a socket is not opened."""
    import socket

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("must never be copied")
    make = git_repo if kind == "git" else plain_folder
    ws = make(tmp_path / "ws")
    os.symlink(outside / "secret", ws / "to-file")
    os.symlink(outside, ws / "src" / "to-folder")
    os.mkfifo(ws / "pipe")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(ws / "src" / "sock"))
    try:
        store = CheckpointStore(tmp_path / "store")
        _, taken = _take(store, ws)
    finally:
        listener.close()
    entries = taken.entries
    assert entries["to-file"].kind == "l" and entries["src/to-folder"].kind == "l"
    assert entries["README.md"].kind == "f" and entries["src/app.py"].kind == "f"
    assert "pipe" not in entries and "src/sock" not in entries
    stored = b"".join(p.read_bytes() for p in (tmp_path / "store").rglob("*") if p.is_file())
    assert b"must never be copied" not in stored


@pytest.mark.parametrize("swap", ["fifo", "link"])
def test_a_file_swapped_after_its_folder_was_listed_is_not_recorded(tmp_path, monkeypatch,
                                                                    swap) -> None:
    """The kind a listing gave can be stale by the time the file is opened: what is opened is
    checked (fstat), and a link is never followed (O_NOFOLLOW)."""
    from engine_adapter.checkpoints import snapshot

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("must never be copied")
    ws = git_repo(tmp_path / "ws")
    real = snapshot._kinds

    def stale(folder: int) -> dict[str, int]:
        kinds = real(folder)
        if "README.md" in kinds:  # listed as a file, then swapped before it is opened
            (ws / "README.md").unlink()
            if swap == "fifo":
                os.mkfifo(ws / "README.md")
            else:
                os.symlink(outside / "secret", ws / "README.md")
        return kinds

    monkeypatch.setattr(snapshot, "_kinds", stale)
    store = CheckpointStore(tmp_path / "store")
    _, taken = _take(store, ws)
    assert "README.md" not in taken.entries and "src/app.py" in taken.entries
    stored = b"".join(p.read_bytes() for p in (tmp_path / "store").rglob("*") if p.is_file())
    assert b"must never be copied" not in stored


def test_a_first_checkpoint_in_git_lstats_no_file(tmp_path, monkeypatch) -> None:
    """Every file is read at a first checkpoint anyway: its kind comes from its folder's
    listing (one per folder) rather than an lstat a file; later ones stat what git does not
    vouch for."""
    ws = git_repo(tmp_path / "ws", {f"pkg{i}/m{j}.py": f"{i}{j}" for i in range(3)
                                    for j in range(20)})
    calls: list[str] = []
    real = os.stat

    def counted(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if kwargs.get("dir_fd") is not None:
            calls.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", counted)
    store = CheckpointStore(tmp_path / "store")
    taker, taken = _take(store, ws)
    assert taken.read == 61 and calls == []
    (ws / "untracked.txt").write_text("new")
    taker.take(turn=2)
    assert "untracked.txt" in calls
