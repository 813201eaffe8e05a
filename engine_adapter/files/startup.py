"""What a home folder (or `/`) holds that runs later, outside any sandbox: one list, read by the
sandbox (which keeps it read-only, `sandbox.guards`) and by `runs_later` (which makes a write
into it ask every time, whoever writes).

`homes_in(workspace)` says which real home folders a workspace is or holds;
`startup_locations(workspace)` lists each of their start-up locations (existing or not) and
the system's own when the workspace is `/`.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Sequence

__all__ = ["HOME_STARTUP", "SYSTEM_STARTUP", "covered", "homes_in", "inside",
           "startup_locations", "system_locations"]

HOME_STARTUP = (
    # shells: bash, sh, zsh, ksh, csh/tcsh, fish — what a login or interactive shell reads
    ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".bashrc.d",
    ".profile", ".shrc", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".zlogout", ".zsh",
    ".oh-my-zsh", ".kshrc", ".mkshrc", ".cshrc", ".tcshrc", ".login", ".logout", ".inputrc",
    ".config/fish", ".config/zsh",
    # programs on PATH, and code Python runs at every start (usercustomize, .pth files)
    ".local/bin", "bin", ".local/lib", ".cargo/bin", ".cargo/env", "go/bin",
    # git, ssh, and the credentials the sandbox must never let a command rewrite
    ".gitconfig", ".config/git", ".git-credentials", ".ssh", ".gnupg", ".aws", ".netrc",
    ".docker", ".kube", ".npmrc", ".pypirc", ".config/gcloud",
    # the session: systemd user units, autostart, environment, X start-up
    ".config/systemd", ".config/autostart", ".config/environment.d", ".pam_environment",
    ".xprofile", ".xinitrc", ".xsession", ".xsessionrc",
    # editors and terminal multiplexers that run commands from their start-up files
    ".vimrc", ".vim", ".exrc", ".config/nvim", ".emacs", ".emacs.d", ".tmux.conf",
    ".config/tmux", ".screenrc",
)
"""Inside a home folder, relative: what a shell, a login, git, ssh, an editor or the desktop
reads or runs later, outside any sandbox."""

SYSTEM_STARTUP = ("/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
                  "/boot", "/opt", "/var/spool")
"""Kept read-only when the workspace is `/`: the system's programs, libraries and settings."""


def inside(path: str, root: str) -> bool:
    """Whether `path` lies strictly inside `root` (both absolute and normalised)."""
    return path != root and path.startswith(root.rstrip("/") + "/")


def homes_in(workspace: str, home: str | None = None) -> list[str]:
    """The real home folders the workspace is or holds: the user's (`home`, else `$HOME`, and
    the account's own), and every account's whose home lies inside it (`/home`, `/`)."""
    found: set[str] = set()
    candidates = [home if home is not None else os.path.expanduser("~")]
    try:
        candidates.append(pwd.getpwuid(os.getuid()).pw_dir)
        candidates += [entry.pw_dir for entry in pwd.getpwall()
                       if entry.pw_dir.startswith("/") and entry.pw_dir != "/"]
    except (KeyError, OSError):
        pass
    for candidate in candidates:
        if not candidate or not os.path.isabs(candidate):
            continue
        real = os.path.realpath(candidate)
        if os.path.isdir(real) and (real == workspace or inside(real, workspace)):
            found.add(real)
    return sorted(found)


def startup_locations(workspace: str, home: str | None = None) -> list[str]:
    """Every start-up location (existing or not) of every home the workspace holds, and the
    system's own when the workspace holds them (`/`)."""
    paths = [os.path.join(root, name) for root in homes_in(workspace, home)
             for name in HOME_STARTUP]
    return paths + system_locations(workspace)


def system_locations(workspace: str) -> list[str]:
    """The system folders (`SYSTEM_STARTUP`) that lie in the workspace."""
    return [path for path in SYSTEM_STARTUP if inside(path, workspace)]


def covered(path: str, locations: Sequence[str]) -> str | None:
    """The location among `locations` that `path` is or lies in, or None."""
    for location in locations:
        if path == location or inside(path, location):
            return location
    return None
