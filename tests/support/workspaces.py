"""Workspaces for checkpoint tests: a real git repository or a plain folder, what a workspace
holds (files and links, the way a rewind must restore them), and a hash of a `.git` folder."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
from pathlib import Path
from typing import Any

from engine_adapter import ToolEnd, ToolStart, TurnStart

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}


def git(root: Path, *args: str) -> str:
    """Run git in `root` (our own writes to the test repository, never the cockpit's)."""
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")}, **GIT_ENV}
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          env=env, check=True)
    return done.stdout


def git_status(root: Path) -> str:
    """`git status --porcelain`, read without refreshing the index (the test's own look must
    not change the `.git` it checks)."""
    return git(root, "--no-optional-locks", "status", "--porcelain")


def git_repo(root: Path, files: dict[str, str] | None = None,
             ignore: str = "*.log\nbuild/\n") -> Path:
    """A git repository at `root` with `files` committed and a `.gitignore`."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text(ignore)
    for path, text in (files or {"README.md": "hello\n", "src/app.py": "print(1)\n"}).items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    return root


def plain_folder(root: Path, files: dict[str, str] | None = None) -> Path:
    """A folder that is not a git repository, with `files`."""
    root.mkdir(parents=True, exist_ok=True)
    for path, text in (files or {"README.md": "hello\n", "src/app.py": "print(1)\n"}).items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


State = dict[str, tuple[str, bytes, bool]]


def state_of(root: Path, *, skip: tuple[str, ...] = (".git",)) -> State:
    """Every file and link under `root` (not inside `skip` names): kind, bytes (a link: its
    target), and whether it is executable."""
    found: State = {}
    for dirpath, dirs, names in os.walk(root):
        links = [d for d in dirs if os.path.islink(os.path.join(dirpath, d))]
        dirs[:] = [d for d in dirs if d not in skip and d not in links]
        for name in names + links:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            if os.path.islink(full):
                found[rel] = ("l", os.readlink(full).encode(), False)
            elif os.path.isfile(full):
                found[rel] = ("f", Path(full).read_bytes(), os.access(full, os.X_OK))
    return found


def tree_hash(folder: Path) -> str:
    """A hash of everything under `folder` (names, kinds, modes, bytes, link targets): equal
    hashes mean byte-identical trees (the index file included)."""
    digest = hashlib.sha256()
    for dirpath, dirs, names in sorted(os.walk(folder)):
        dirs.sort()
        for name in sorted(names + dirs):
            full = os.path.join(dirpath, name)
            st = os.lstat(full)
            digest.update(f"{os.path.relpath(full, folder)}\0{st.st_mode}\0".encode())
            if os.path.islink(full):
                digest.update(os.readlink(full).encode())
            elif os.path.isfile(full):
                digest.update(Path(full).read_bytes())
    return digest.hexdigest()


def shell_turn(turn: int, script: str) -> Any:
    """A `StepRunner` step: turn `turn` runs `script` for real in the runner's `cwd`, between
    its `tool_start` and `tool_end`."""
    async def step(r: Any) -> None:
        r.emit(TurnStart(turn=turn))
        r.emit(ToolStart(call_id=f"c{turn}", tool="shell", tool_input={"command": script}))
        proc = await asyncio.create_subprocess_exec("sh", "-c", script, cwd=r.cwd)
        await proc.wait()
        r.emit(ToolEnd(call_id=f"c{turn}", tool="shell", ok=proc.returncode == 0))
    return step
