"""A workspace holding every kind of file that runs later by itself (issue 24 §B), and the
paths a write must never reach unasked: shared by the tests of `engine_adapter.files.runs_later`,
the built-in engine's file tools and the ACP client's `fs/write_text_file`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

# Paths (relative to the workspace `plant` makes) that run later by itself.
RUNS_LATER = [
    ".git/config",
    ".git/hooks/pre-commit",
    ".git/HEAD",
    ".git/commondir",
    ".git/info/attributes",
    ".GIT/config",
    ".Git/hooks/post-checkout",
    ".git./config",
    ".git /config",
    "git~1/config",
    ".git::$INDEX_ALLOCATION/config",
    ".g\u200cit/config",
    "sub/../.git/config",
    "gitlink/config",
    "hooklink",
    "vendor/lib/.git/config",
    "newrepo/.git/hooks/post-merge",
    "sub/.git",
    "store/config",
    "store/hooks/pre-push",
    "bare.git/config",
    "bare.git/hooks/update",
    "tools/hooks/pre-commit",
    ".husky/pre-commit",
    ".pre-commit-config.yaml",
    ".envrc",
    "sub/.envrc",
    ".bashrc",
    ".zshenv",
    ".profile",
    ".config/fish/config.fish",
    ".config/autostart/x.desktop",
    ".config/systemd/user/x.service",
    ".local/bin/git",
    ".ssh/config",
    ".vscode/tasks.json",
    ".vscode/settings.json",
    "team.code-workspace",
    "mise.toml",
    ".gitconfig",
]

# Close neighbours that a write may reach as any other file.
ORDINARY = ["README.md", "src/git.py", ".gitignore", ".gitattributes", ".gitmodules", "Makefile",
            "package.json", ".vscode/extensions.json", "notes/.github.txt", "my.git.txt",
            "tools/hooks.md", "config", "sub/HEAD", "docs/hooks/pre-commit.md", "envrc.md"]


def _git(*args: str | os.PathLike[str]) -> None:
    subprocess.run(["git", *map(str, args)], check=True, capture_output=True,
                   env={**os.environ, "GIT_CONFIG_GLOBAL": os.devnull,
                        "GIT_CONFIG_NOSYSTEM": "1"})


def plant(workspace: Path) -> Path:
    """Fill `workspace` (made if missing) with real repositories: its own (with
    `core.hooksPath = tools/hooks`), one whose git dir lives elsewhere (`sub/.git` is a file
    naming `store`), a bare one, a nested one, and a symlink to the git dir and to a hook."""
    workspace.mkdir(parents=True, exist_ok=True)
    _git("init", "-q", workspace)
    _git("-C", workspace, "config", "core.hooksPath", "tools/hooks")
    (workspace / "tools" / "hooks").mkdir(parents=True)
    (workspace / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (workspace / "sub").mkdir()
    _git("init", "-q", f"--separate-git-dir={workspace / 'store'}", workspace / "sub" / "repo")
    os.replace(workspace / "sub" / "repo" / ".git", workspace / "sub" / ".git")
    _git("init", "-q", "--bare", workspace / "bare.git")
    _git("init", "-q", workspace / "vendor" / "lib")
    (workspace / "gitlink").symlink_to(".git")
    (workspace / "hooklink").symlink_to(".git/hooks/pre-commit")
    (workspace / "README.md").write_text("read me\n")
    return workspace
