"""Files that run later: a write into one is a command the human never typed.

`runs_later(root, given, real)` says why a write to a workspace path lands in a file that git,
the shell or another tool the human uses runs by itself, later and outside any sandbox — or
`None`. Such a write asks every time (tier 4) and is never granted, whoever makes it (the
built-in `write_file`/`edit`, an ACP agent's `fs/write_text_file` or its edit permission).

The list is of what runs *without the human typing that program*:

- the git dir, whole: `.git` anywhere (a nested repository too), a dir a `.git` file names
  (`gitdir: …`, worktrees and submodules) and its `commondir`, anything that looks like a git
  dir (`HEAD` with `objects`, `refs`, `config` or `commondir`: git uses a bare repository it is
  run in), and the hooks dir `core.hooksPath` names. Git runs its `config` (`core.fsmonitor`,
  `core.pager`, filters, aliases) and hooks at the next `git status` or `git commit`;
- hook managers: `.husky/` (husky points `core.hooksPath` there), `.pre-commit-config.yaml`;
- start-up files, wherever they lie (a tool's `ZDOTDIR` may point in): `.bashrc`, `.profile`,
  `.zshrc`, `.zshenv`, … `.vimrc`, `.tmux.conf`, `.config/fish/`, `.config/autostart/`,
  `.config/systemd/`, `.config/environment.d/`, `.local/bin/` (on PATH), `.ssh/` (`rc`,
  `config`'s `ProxyCommand`, `authorized_keys`' `command=`), `.gitconfig`;
- and when the workspace is or holds a home folder, all of that home's `HOME_STARTUP`
  (`files.startup`, the list the sandbox keeps read-only): `bin/`, `.local/lib/` (Python's
  `usercustomize`), `.cargo/env`, `.config/nvim/`, `.emacs.d/`, `.git-credentials`, …, and
  the system's folders when the workspace is `/`;
- what a shell hook or an editor runs on entering the folder: `.envrc` (direnv), mise's
  `mise.toml` hooks, `.vscode/tasks.json` (`runOn: folderOpen`) and `.vscode/settings.json`
  (terminal and interpreter paths), `*.code-workspace`.

Left out, on purpose: `Makefile`, `package.json`, `pyproject.toml`, `.npmrc`, `conftest.py` run
only when the human types `make`, `npm`, `pytest` — a grant of those trusts the workspace already.
`.gitattributes` and `.gitmodules` name drivers and URLs that only the config makes run (and
git ignores `update = !cmd` from `.gitmodules`): the config is what is protected.

Names are compared folded, as case-insensitive file systems do (`.GIT`, `.Git`), with what
Windows drops (`.git.`, `.git `, `git~1`, `.git::$INDEX_ALLOCATION`) and the invisible characters
HFS+ ignores (`.g\\u200cit`) removed; both the path as given and its real path (symlinks
followed) are judged. Does a little file I/O (a few `stat`s, small config files): call it off
the event loop.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterator

from engine_adapter.files.startup import covered, startup_locations

__all__ = ["runs_later", "runs_later_by_name"]

_START_UP = frozenset({
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
    ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".cshrc", ".tcshrc",
    ".login", ".logout", ".xprofile", ".xinitrc", ".xsession", ".xsessionrc", ".inputrc",
    ".gitconfig", ".envrc", ".pre-commit-config.yaml", "mise.toml", ".mise.toml",
    "mise.local.toml", ".mise.local.toml", ".pam_environment",
    # what an editor or a terminal multiplexer runs from its start-up file
    ".bash_aliases", ".shrc", ".vimrc", ".exrc", ".emacs", ".tmux.conf", ".screenrc",
})
_CONFIG_DIRS = frozenset({"fish", "autostart", "systemd", "environment.d", "mise", "git"})
_VSCODE = frozenset({"tasks.json", "settings.json"})
_MAX_CONFIG = 1 << 20  # a git config bigger than this is not read for core.hooksPath
_HOOKS_PATH = re.compile(r"^\s*hookspath\s*=\s*(.*?)\s*$", re.IGNORECASE | re.MULTILINE)


def _fold(name: str) -> str:
    """A path part as a case-insensitive, Windows or HFS+ file system may take it."""
    name = "".join(ch for ch in unicodedata.normalize("NFC", name)
                   if unicodedata.category(ch) != "Cf")  # zero-width and bidi marks
    name = name.split(":", 1)[0].rstrip(". ").lower()  # `.git::$INDEX_ALLOCATION`, `.git.`
    return ".git" if name == "git~1" else name


def _parts(root: str, path: str) -> list[str] | None:
    """`path`'s folded parts below `root`, or None if it is not inside it."""
    rel = os.path.relpath(path, root)
    if rel == "." or rel.startswith(".." + os.sep) or rel == "..":
        return None
    return [_fold(part) for part in rel.split(os.sep)]


def _by_name(parts: list[str]) -> str | None:
    if any(part == ".git" for part in parts):
        return "writes into a git directory, whose config and hooks git runs later"
    if ".husky" in parts[:-1]:
        return "writes a git hook (.husky), which git runs at the next commit"
    name = parts[-1]
    if name in _START_UP:
        return f"writes {name}, which a shell, git or a hook manager runs by itself later"
    if name.endswith(".code-workspace"):
        return f"writes {name}, whose tasks and settings an editor runs on opening the folder"
    for j, part in enumerate(parts[:-1]):
        below = parts[j + 1]
        if part == ".config" and below in _CONFIG_DIRS:
            return f"writes into .config/{below}, which runs at log-in or on entering a folder"
        if part == ".local" and below == "bin":
            return "writes a program into .local/bin, which the shell finds on PATH"
        if part == ".ssh":
            return "writes into .ssh, whose config, rc and keys run commands at log-in"
        if part == ".mise":
            return "writes mise's settings, whose hooks run on entering the folder"
        if part == ".vscode" and below in _VSCODE and j + 2 == len(parts):
            return f"writes .vscode/{below}, which the editor runs on opening the folder"
    return None


def _ancestors(root: str, path: str) -> Iterator[str]:
    """The directories from `path`'s parent up to `root` (inclusive)."""
    current = os.path.dirname(path)
    while True:
        yield current
        if current == root or len(current) <= len(root):
            return
        current = os.path.dirname(current)


def _looks_like_git_dir(directory: str, writing: str) -> bool:
    """Whether git would take `directory` for a git dir (counting the file about to be
    written as present): `HEAD` with `objects`, `refs`, `config` or `commondir`."""
    def has(name: str) -> bool:
        return os.path.join(directory, name) == writing or os.path.lexists(
            os.path.join(directory, name))
    return has("HEAD") and any(has(name) for name in ("objects", "refs", "config",
                                                      "commondir"))


def _read_small(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            return handle.read(_MAX_CONFIG).decode("utf-8", "replace")
    except OSError:
        return ""


def _named_git_dirs(directory: str) -> list[str]:
    """The git dirs a `.git` file in `directory` names (`gitdir: …`) and their commondir."""
    dot_git = os.path.join(directory, ".git")
    if not os.path.isfile(dot_git):
        return []
    found = []
    for line in _read_small(dot_git).splitlines():
        if line.lower().startswith("gitdir:"):
            git_dir = os.path.realpath(os.path.join(directory, line.split(":", 1)[1].strip()))
            found.append(git_dir)
            common = _read_small(os.path.join(git_dir, "commondir")).strip()
            if common:
                found.append(os.path.realpath(os.path.join(git_dir, common)))
    return found


def _hooks_dirs(work_tree: str, git_dirs: list[str]) -> list[str]:
    """The hooks dirs `core.hooksPath` names in the repository's config and the user's."""
    configs = [os.path.join(d, "config") for d in git_dirs]
    configs.append(os.path.expanduser("~/.gitconfig"))
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    configs.append(os.path.join(xdg, "git", "config"))
    found = []
    for config in configs:
        for match in _HOOKS_PATH.finditer(_read_small(config)):
            value = match.group(1).strip().strip('"')
            if value:
                found.append(os.path.realpath(os.path.join(work_tree,
                                                           os.path.expanduser(value))))
    return found


def runs_later_by_name(root: str | os.PathLike[str], *paths: str) -> str | None:
    """`runs_later`'s rules that need no file I/O: the names (the git dir's, start-up files',
    hook managers') of absolute `paths` below `root`. The shell classifier uses it for the
    files a command writes (a redirection, `cp`, `tee`, `sed -i`)."""
    root = os.path.realpath(root)
    for path in paths:
        parts = _parts(root, os.path.normpath(path))
        if parts:
            reason = _by_name(parts)
            if reason is not None:
                return reason
    return None


def runs_later(root: str | os.PathLike[str], given: str, real: str | os.PathLike[str]
               ) -> str | None:
    """Why writing `real` (the resolved path; `given` as the caller wrote it, relative to
    `root`) writes a file that runs later by itself, or None. See the module for the list."""
    root = os.path.realpath(root)
    real = os.fspath(real)
    reason = runs_later_by_name(root, real, os.path.join(root, given))
    if reason is not None:
        return reason
    # Folded as the names are (`.LOCAL/Bin` is `.local/bin` where case is ignored).
    locations = [(location, _parts(root, location)) for location in startup_locations(root)]
    for written in (real, os.path.normpath(os.path.join(root, given))):
        parts = _parts(root, written)
        for location, inner in locations:
            if parts and inner and parts[:len(inner)] == inner:
                return (f"writes {os.path.relpath(location, root)}, which a shell, a log-in "
                        "or an editor of the home folder it lies in runs by itself later")
    git_dirs = [os.path.join(root, ".git")]
    for directory in _ancestors(root, real):
        if _looks_like_git_dir(directory, real):
            return "writes into what git takes for a git directory (HEAD, objects, config)"
        git_dirs += _named_git_dirs(directory)
    if covered(real, git_dirs[1:]) is not None:
        return "writes into the git directory a .git file names (gitdir: …)"
    if covered(real, _hooks_dirs(root, git_dirs)) is not None:
        return "writes a git hook (the dir core.hooksPath names), which git runs later"
    return None
