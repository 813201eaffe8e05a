"""The fast path: in a git repository, tracked files git vouches for (unchanged against the
same index record at the last checkpoint and now) are not even `lstat`ed; every change that
matters is still recorded: content rewritten with its size and mtime put back, a chmod +x, a
file deleted and added again, a tracked file changed without `git add`, one changed and
staged, an untracked one added; and attributes (line endings) turn the fast path off.

The checkpoints are aged (`previous_start_ns` moved back, as the bench does) so that the
files just written count as old: only then may git's word be taken."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.workspaces import git, git_repo, plain_folder, state_of

from engine_adapter.checkpoints import CheckpointStore, Manifest, Snapshotter, Taken, rewind

FILES = {f"src/m{i}.py": f"print({i})\n" for i in range(20)} | {"README.md": "hello\n"}


def _aged(taker: Snapshotter, **kw: object) -> Taken:
    taken = taker.take(**kw)  # type: ignore[arg-type]
    taker.previous_start_ns += 10**12  # as if taken long after the files' last change
    return taken


def _warm(tmp_path: Path, kind: str = "git") -> tuple[Path, Snapshotter, Taken]:
    """A workspace, and a snapshotter that has taken two checkpoints (git vouched at both)."""
    ws = git_repo(tmp_path / "ws", FILES) if kind == "git" else plain_folder(tmp_path / "ws",
                                                                              FILES)
    taker = Snapshotter(CheckpointStore(tmp_path / "store"), str(ws), run="r")
    _aged(taker, turn=1)
    return ws, taker, _aged(taker, turn=2)


def test_tracked_files_git_vouches_for_are_not_looked_at(tmp_path) -> None:
    ws, taker, second = _warm(tmp_path)
    assert second.looked == 0 and second.read == 0 and len(second.entries) == 22
    (ws / "new.txt").write_text("untracked: always looked at")
    third = _aged(taker, turn=3)
    assert third.looked == 1 and third.changed == (1, 0, 0)


def test_a_plain_folder_looks_at_every_file(tmp_path) -> None:
    _, _, second = _warm(tmp_path, "folder")
    assert second.looked == 21 and second.read == 0


@pytest.mark.parametrize("kind", ["git", "folder"])
def test_content_rewritten_with_size_and_mtime_put_back_is_recorded(tmp_path, kind) -> None:
    ws, taker, second = _warm(tmp_path, kind)
    path = ws / "src" / "m3.py"
    before = os.stat(path)
    path.write_text("print(9)\n")  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    taken = _aged(taker, turn=3)
    assert taken.changed == (0, 1, 0) and taken.read == 1
    assert taken.entries["src/m3.py"].digest != second.entries["src/m3.py"].digest


@pytest.mark.parametrize("kind", ["git", "folder"])
def test_a_chmod_x_is_recorded(tmp_path, kind) -> None:
    ws, taker, second = _warm(tmp_path, kind)
    (ws / "src" / "m4.py").chmod(0o755)
    taken = _aged(taker, turn=3)
    assert taken.changed == (0, 1, 0)
    assert taken.entries["src/m4.py"].mode & 0o111
    assert not second.entries["src/m4.py"].mode & 0o111


@pytest.mark.parametrize("kind", ["git", "folder"])
def test_a_file_deleted_then_added_again_is_recorded(tmp_path, kind) -> None:
    ws, taker, _ = _warm(tmp_path, kind)
    path = ws / "src" / "m5.py"
    before = os.stat(path)
    path.unlink()
    gone = _aged(taker, turn=3)
    assert gone.changed == (0, 0, 1) and "src/m5.py" not in gone.entries
    path.write_text("print(8)\n")  # same size, old times: a new file all the same
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    back = _aged(taker, turn=4)
    assert back.changed == (1, 0, 0) and back.read == 1


def test_a_tracked_file_changed_without_git_add_then_staged(tmp_path) -> None:
    ws, taker, _ = _warm(tmp_path)
    (ws / "README.md").write_text("changed, not staged\n")
    changed = _aged(taker, turn=3)
    assert changed.changed == (0, 1, 0)
    again = _aged(taker, turn=4)  # still modified against the index: looked at every time
    assert again.looked == 1 and again.changed == (0, 0, 0)
    git(ws, "add", "README.md")  # now git vouches for it, against a new index record
    (ws / "README.md").write_text("changed again, then staged\n")
    git(ws, "add", "README.md")
    staged = _aged(taker, turn=5)
    assert staged.changed == (0, 1, 0) and staged.read == 1


def test_attributes_turn_the_fast_path_off(tmp_path) -> None:
    ws = git_repo(tmp_path / "ws", {**FILES, ".gitattributes": "* text=auto\n"})
    taker = Snapshotter(CheckpointStore(tmp_path / "store"), str(ws), run="r")
    _aged(taker, turn=1)
    second = _aged(taker, turn=2)
    assert second.looked == 23  # 21 files, .gitignore, .gitattributes
    # CRLF line endings clean to the same blob: git says unchanged, the bytes are not
    (ws / "README.md").write_bytes(b"hello\r\n")
    assert _aged(taker, turn=3).changed == (0, 1, 0)


def test_an_info_attributes_file_turns_it_off_too(tmp_path) -> None:
    ws = git_repo(tmp_path / "ws", FILES)
    (ws / ".git" / "info").mkdir(exist_ok=True)
    (ws / ".git" / "info" / "attributes").write_text("*.md text eol=crlf\n")
    taker = Snapshotter(CheckpointStore(tmp_path / "store"), str(ws), run="r")
    _aged(taker, turn=1)
    assert _aged(taker, turn=2).looked == 22


def test_a_folder_turned_into_a_link_is_seen_once_its_files_are_settled(tmp_path) -> None:
    # git vouches for `src/*` through a link to the same files (its lstat follows the link);
    # from the third checkpoint on they are kept without a step each, so the folders are
    # checked first: the link is recorded, no file through it.
    ws, taker, _ = _warm(tmp_path)
    third = _aged(taker, turn=3)
    assert third.looked == 0 and "src/m3.py" in third.entries
    (ws / "src").rename(ws / "real")
    (ws / "src").symlink_to("real")
    fourth = _aged(taker, turn=4)
    assert fourth.entries["src"].kind == "l"
    assert not [p for p in fourth.entries if p.startswith("src/")]
    assert "real/m3.py" in fourth.entries


def test_a_change_to_the_index_between_settled_checkpoints_is_recorded(tmp_path) -> None:
    ws, taker, _ = _warm(tmp_path)
    _aged(taker, turn=3)
    (ws / "src" / "m4.py").write_text("print('staged')\n")
    git(ws, "add", "src/m4.py")
    taken = _aged(taker, turn=4)
    assert taken.changed == (0, 1, 0) and taken.read == 1
    assert _aged(taker, turn=5).looked == 0


# Hypothesis: random file and git operations, aged checkpoints (the fast path in use) -------

NAMES = ["a.txt", "b.txt", "d/c.txt", "d/e/f.txt", "run.sh"]
OPS = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(NAMES), st.binary(max_size=12)),
    st.tuples(st.just("same-size"), st.sampled_from(NAMES), st.binary(min_size=1, max_size=1)),
    st.tuples(st.just("delete"), st.sampled_from(NAMES), st.just(b"")),
    st.tuples(st.just("chmod"), st.sampled_from(NAMES), st.just(b"")),
    st.tuples(st.just("git add"), st.sampled_from(NAMES), st.just(b"")),
    st.tuples(st.just("git commit"), st.just(""), st.just(b"")),
    st.tuples(st.just("folder to link"), st.just("d"), st.just(b"")),
)


def _through_a_link(ws: Path, name: str) -> bool:
    parts = name.split("/")[:-1]
    return any((ws / "/".join(parts[:i + 1])).is_symlink() for i in range(len(parts)))


def _apply(ws: Path, op: tuple[str, str, bytes]) -> None:
    kind, name, data = op
    path = ws / name
    if kind == "write":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    elif kind == "same-size" and path.exists():
        # one byte changed, size and times put back: only the ctime tells
        before = os.stat(path)
        old = path.read_bytes()
        path.write_bytes(data + old[1:] if old else data)
        if old:
            os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    elif kind == "delete" and path.exists():
        path.unlink()
    elif kind == "chmod" and path.exists():
        path.chmod(path.stat().st_mode ^ 0o100)
    elif kind == "git add" and path.exists() and not _through_a_link(ws, name):
        git(ws, "add", name)
    elif kind == "git commit":
        git(ws, "commit", "-qam", "turn", "--allow-empty")
    elif (kind == "folder to link" and path.is_dir() and not path.is_symlink()
          and not (ws / f"{name}-real").exists()):
        # the same files, reached through a link now (git still vouches for them)
        path.rename(ws / f"{name}-real")
        path.symlink_to(f"{name}-real")


@settings(max_examples=25, deadline=None)
@given(turns=st.lists(st.lists(OPS, max_size=6), min_size=1, max_size=5), data=st.data())
def test_rewind_to_turn_n_gives_exactly_the_state_at_turn_n_in_git(turns, data) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        ws = git_repo(Path(tmp) / "ws", {"a.txt": "start", "d/c.txt": "start", "run.sh": "x"})
        store = CheckpointStore(Path(tmp) / "store")
        taker = Snapshotter(store, str(ws), run="r")
        manifests: list[Manifest] = []
        states: list[dict] = []
        for ops in turns:
            states.append(state_of(ws))
            manifests.append(_aged(taker, turn=len(manifests) + 1).manifest)
            for op in ops:
                _apply(ws, op)
        baseline = _aged(taker, kind="end").manifest
        n = data.draw(st.integers(0, len(manifests) - 1), label="turn index")
        outcome = rewind(store, manifests[n], baseline)
        assert not outcome.failed and not outcome.plan.left_alone
        assert state_of(ws) == states[n]
