"""Running git for a listing: its output read whole (from memory on Linux, else a pipe), a git
that fails or outlasts `GIT_SECONDS` is killed and the walk lists the workspace instead, and
nothing of git's is left running."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.workspaces import git_repo

from engine_adapter.checkpoints import listing
from engine_adapter.checkpoints.listing import list_paths, scan

FILES = {f"src/m{i}.py": f"print({i})\n" for i in range(300)} | {"README.md": "hello\n"}


@pytest.fixture(params=["memory", "pipe"])
def how(request, monkeypatch) -> str:
    if request.param == "pipe":
        monkeypatch.delattr(os, "memfd_create", raising=False)
    elif not hasattr(os, "memfd_create"):
        pytest.skip("no memfd_create here")
    return str(request.param)


def _fake_git(tmp_path: Path, monkeypatch, script: str) -> Path:
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "git").write_text(f"#!/bin/sh\n{script}\n")
    (bin_ / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_}{os.pathsep}{os.environ['PATH']}")
    return bin_


def test_a_listing_is_git_s_whole_output(tmp_path, how) -> None:
    ws = git_repo(tmp_path / "ws", FILES)
    (ws / "new.txt").write_text("untracked")
    found = scan(str(ws), clean=True)
    assert found.source == "git"
    assert sorted(found.paths) == sorted([*FILES, ".gitignore", "new.txt"])
    assert set(found.clean) == {*FILES, ".gitignore"}


def test_a_git_that_fails_leaves_the_walk(tmp_path, monkeypatch, how) -> None:
    ws = git_repo(tmp_path / "ws", FILES)
    _fake_git(tmp_path, monkeypatch, "echo broken >&2; exit 3")
    assert list_paths(str(ws)).source == "folder"


def test_a_git_that_hangs_is_killed_and_the_walk_lists(tmp_path, monkeypatch, how) -> None:
    ws = git_repo(tmp_path / "ws", FILES)
    pid_file = tmp_path / "git.pid"
    _fake_git(tmp_path, monkeypatch, f"echo $$ > {pid_file}; exec sleep 60")
    monkeypatch.setattr(listing, "GIT_SECONDS", 0.3)
    found = list_paths(str(ws))
    assert found.source == "folder" and found.paths == sorted([*FILES, ".gitignore"])
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # killed and reaped: gone
