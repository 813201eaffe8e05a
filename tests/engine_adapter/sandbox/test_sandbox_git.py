"""The whole git dir is read-only in the sandbox (issue 24, B): whatever a command does, the
human's next `git status` reads the config and hooks it read before. Real git, real bwrap: a
plain repository, a `.git` file (separate git dir, a worktree), a submodule, a nested repository,
and a workspace without a `.git` (where the command must not make one)."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest
from support.event_loop import run
from support.sandboxed import needs_sandbox, sandboxed

from engine_adapter.engines.builtin.process import run_process, shell_argv
from engine_adapter.sandbox import Sandbox, SandboxSettings
from engine_adapter.sandbox.gitdirs import git_entries, gitdir_of

pytestmark = needs_sandbox
GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True,
                          capture_output=True, text=True).stdout


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file below `folder`, by relative path (links as their target)."""
    found: dict[str, bytes] = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            found[str(path.relative_to(folder))] = os.readlink(path).encode()
        elif path.is_file():
            found[str(path.relative_to(folder))] = path.read_bytes()
    return found


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    git("init", "-q", ".", cwd=ws)
    git("add", ".", cwd=ws)
    git("commit", "-qm", "one", cwd=ws)
    return ws


PWN = "touch ../pwned"
ATTACKS = [
    "mv .git .git2 && cp -r .git2 .git",
    "mv .git .git2",
    "rm -rf .git",
    "rm -rf .git/*",
    "echo /tmp > .git/commondir",
    f"git config core.fsmonitor '{PWN}'",
    f"printf '[core]\\n\\tfsmonitor = {PWN}\\n' >> .git/config",
    "ln -sf /tmp/evil-config .git/config",
    f"printf '#!/bin/sh\\n{PWN}\\n' > .git/hooks/post-checkout",
    "mkdir -p .git/hooks2 && git config core.hooksPath .git/hooks2",
    "echo '* filter=x' > .git/info/attributes",
    "echo 0000000000000000000000000000000000000000 > .git/HEAD",
    "rm .git/index",
    "cp -r .git ../copy && rm -rf .git && mv ../copy .git",
    "mv .git/config .git/config.old",
    "git add a.txt",
    "git commit --allow-empty -qm two",
    "git update-ref -d HEAD",
    "git gc -q",
    "git worktree add -q ../wt2",
    "find .git -name config -exec sh -c 'echo x >> \"$1\"' sh {} +",
    "python3 -c \"open('.git/config', 'a').write('[alias]\\\\n\\\\tst = !touch ../pwned\\\\n')\"",
]


@pytest.mark.parametrize("command", ATTACKS)
def test_nothing_in_the_git_dir_changes(repo, command) -> None:
    before = snapshot(repo / ".git")
    done = sandboxed(command, repo)
    assert done.exit_code != 0, (command, done.output)
    assert done.blocked, (command, done.output)
    assert snapshot(repo / ".git") == before, command
    git("status", "--short", cwd=repo)
    assert not (repo.parent / "pwned").exists()


def test_reading_the_repository_still_works(repo) -> None:
    (repo / "a.txt").write_text("changed\n")
    done = sandboxed("git status --short && git log --oneline | wc -l && git diff --stat", repo)
    assert done.exit_code == 0 and " M a.txt" in done.output, done.output


def test_a_separate_git_dir_named_by_a_git_file_is_read_only_too(tmp_path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    git("init", "-q", "--separate-git-dir", str(ws / ".repo"), str(ws), cwd=tmp_path)
    assert gitdir_of(str(ws / ".git")) == str(ws / ".repo")
    before = snapshot(ws)
    for command in (f"git config core.fsmonitor '{PWN}'", "echo x >> .repo/config",
                    "echo 'gitdir: /tmp' > .git", "rm .git", "mv .repo .repo2",
                    "echo /tmp > .repo/commondir"):
        done = sandboxed(command, ws)
        assert done.exit_code != 0 and done.blocked, (command, done.output)
    assert snapshot(ws) == before


def test_a_worktree_and_its_common_dir_inside_the_workspace(tmp_path) -> None:
    ws = tmp_path / "ws"
    main = ws / "main"
    main.mkdir(parents=True)
    (main / "f").write_text("f\n")
    git("init", "-q", ".", cwd=main)
    git("add", ".", cwd=main)
    git("commit", "-qm", "one", cwd=main)
    git("worktree", "add", "-q", "../wt", cwd=main)
    before = snapshot(ws / "main" / ".git")
    sandbox = Sandbox(SandboxSettings(), workspace=ws)
    for command in ("echo 'gitdir: /tmp' > wt/.git", "echo /tmp > main/.git/worktrees/wt/commondir",
                    f"git -C wt config core.fsmonitor '{PWN}'", "rm -rf main/.git",
                    "mv wt/.git wt/.git.old"):
        done = sandboxed(command, ws, sandbox=sandbox)
        assert done.exit_code != 0 and done.blocked, (command, done.output)
    assert snapshot(ws / "main" / ".git") == before
    assert gitdir_of(str(ws / "wt" / ".git")) == str(main / ".git" / "worktrees" / "wt")


def test_a_submodule_and_a_nested_repository(repo, tmp_path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "l").write_text("l\n")
    git("init", "-q", ".", cwd=lib)
    git("add", ".", cwd=lib)
    git("commit", "-qm", "lib", cwd=lib)
    git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "sub", cwd=repo)
    vendored = repo / "vendor" / "x"
    vendored.mkdir(parents=True)
    git("init", "-q", ".", cwd=vendored)
    entries = git_entries(str(repo))
    assert str(repo / "sub" / ".git") in entries and str(vendored / ".git") in entries
    before = {name: snapshot(repo / name) for name in (".git", "vendor")}
    sub_before = (repo / "sub" / ".git").read_text()
    for command in ("echo 'gitdir: ../../evil' > sub/.git", "echo x >> .git/modules/sub/config",
                    f"git -C sub config core.fsmonitor '{PWN}'", "rm -rf vendor/x/.git",
                    "echo x >> vendor/x/.git/config", "mv vendor/x/.git vendor/x/g"):
        done = sandboxed(command, repo)
        assert done.exit_code != 0 and done.blocked, (command, done.output)
    assert {name: snapshot(repo / name) for name in (".git", "vendor")} == before
    assert (repo / "sub" / ".git").read_text() == sub_before


NEW_GIT = [
    "git init -q .",
    "mkdir .git",
    "echo 'gitdir: ../evil' > .git",
    "mkdir ../evil && git init -q --separate-git-dir ../evil .",
    "ln -s ../evil .git",
    "cp -r ../other/.git .git",
    "python3 -c \"import os; os.mkdir('.git')\"",
]


@pytest.mark.parametrize("command", NEW_GIT)
def test_without_a_git_dir_the_command_cannot_make_one(tmp_path, command) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "other").mkdir()
    git("init", "-q", ".", cwd=tmp_path / "other")
    done = sandboxed(command, ws)
    assert done.exit_code != 0 and done.blocked, (command, done.output)
    assert not os.path.lexists(ws / ".git")  # and the mount point bwrap made is gone


def test_the_top_git_stays_shut_while_another_command_runs(tmp_path) -> None:
    """Two commands at once: the first one's end must not remove the mount point under the
    second (removing it in the host would unmount it there)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    sandbox = Sandbox(SandboxSettings(), workspace=ws)

    async def both() -> tuple[str, str]:
        slow = asyncio.ensure_future(run_process(shell_argv(
            "while [ ! -e go ]; do sleep 0.01; done; echo 'gitdir: /tmp' > .git || echo shut"),
            cwd=ws, timeout=30, output_cap=1000, sandbox=sandbox))
        quick = await run_process(shell_argv("touch go"), cwd=ws, timeout=30,
                                  output_cap=1000, sandbox=sandbox)
        return quick.output, (await slow).output

    _quick, slow = run(both())
    assert "shut" in slow and not os.path.lexists(ws / ".git")


def test_a_new_repository_in_a_subfolder_is_what_remains(tmp_path) -> None:
    """Documented: a command can still make `sub/.git`; only a git run inside `sub/` follows
    it (the workspace's own git runs are safe)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    done = sandboxed("mkdir sub && git init -q sub && echo made", ws)
    assert done.output.strip() == "made" and (ws / "sub" / ".git").is_dir()
