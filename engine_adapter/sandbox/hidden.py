"""What a sandboxed command cannot see: credential files, the directories that hold the
sockets of other programs, and the variables that point at those sockets.

- `credential_paths(home, workspace)` — the files and folders masked by default: a read fails
  with "Permission denied" (`[sandbox] read_deny` / `read_allow` adjust the list);
- `socket_dirs(env)` — the socket directories masked as defence in depth (the seccomp filter,
  `engine_adapter.sandbox.seccomp`, is what stops unix sockets; this is the second wall, and the
  only one on an architecture the filter does not know);
- `socket_variable(name)` — whether a variable points at a socket (never passed to commands).

A mask never covers a place a command must reach: the workspace, its private temp dir, the
working directory, or the cockpit's own install (`core.Sandbox` drops such a mask).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import stat
from collections.abc import Iterable, Mapping

__all__ = ["CREDENTIAL_NAMES", "SOCKET_VARIABLES", "credential_paths", "expand_setting",
           "socket_dirs", "socket_variable"]

CREDENTIAL_NAMES = (
    ".ssh", ".aws", ".gnupg", ".netrc", ".git-credentials", ".docker/config.json", ".kube",
    ".config/gcloud", ".npmrc", ".pypirc", ".config/gh", ".azure", ".config/hub",
    ".password-store", ".local/share/keyrings", ".cargo/credentials.toml",
    ".cargo/credentials", ".config/git/credentials", ".terraform.d/credentials.tfrc.json",
    ".vault-token", ".pgpass", ".my.cnf", ".config/op",
)
"""Below the home directory: where keys, tokens and passwords live."""

SOCKET_VARIABLES = frozenset({
    "TMUX", "TMUX_PANE", "STY", "ZELLIJ", "ZELLIJ_SESSION_NAME", "ZELLIJ_PANE_ID",
    "DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS", "SSH_AUTH_SOCK", "SSH_AGENT_PID",
    "GPG_AGENT_INFO", "DOCKER_HOST", "CONTAINER_HOST", "PODMAN_HOST", "XDG_RUNTIME_DIR",
    "WAYLAND_DISPLAY", "DISPLAY", "XAUTHORITY", "NVIM", "NVIM_LISTEN_ADDRESS",
    "VSCODE_IPC_HOOK", "VSCODE_IPC_HOOK_CLI", "VSCODE_GIT_IPC_HANDLE", "VSCODE_GIT_ASKPASS_MAIN",
    "VSCODE_GIT_ASKPASS_NODE", "GIT_ASKPASS", "SSH_ASKPASS", "KITTY_LISTEN_ON",
    "WEZTERM_UNIX_SOCKET", "ALACRITTY_SOCKET", "SWAYSOCK", "I3SOCK",
    "HYPRLAND_INSTANCE_SIGNATURE", "NIRI_SOCKET", "PULSE_SERVER", "PIPEWIRE_REMOTE",
    "EMACS_SOCKET_NAME", "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES",
    "SYSTEMD_EXEC_PID", "KRB5CCNAME", "GNOME_KEYRING_CONTROL", "ATUIN_SESSION",
})
"""Variables that name a socket (or a program that talks to one) of a process outside."""
_SOCKET_SUFFIXES = ("_SOCK", "_SOCKET", "_IPC_HOOK", "_IPC_HANDLE", "_LISTEN_ADDRESS",
                    "_LISTEN_ON", "_BUS_ADDRESS")
_SOCKET_PREFIXES = ("VSCODE_IPC", "VSCODE_GIT_", "TMUX_", "DBUS_")

_SOCKET_DIRS = ("/run/user", "/var/run/user", "/run/dbus", "/var/run/dbus", "/run/docker",
                "/run/containerd", "/run/podman", "/run/snapd.socket", "/run/docker.sock",
                "/var/run/docker.sock", "/run/systemd/private", "/run/systemd/userdb",
                "/run/systemd/io.system.ManagedOOM", "/run/libvirt", "/run/user-runtime",
                "/tmp/.X11-unix", "/tmp/.ICE-unix", "/tmp/.XIM-unix", "/tmp/.font-unix")
_SOCKET_GLOBS = ("/tmp/tmux-[0-9]*", "/tmp/screens", "/tmp/uscreens", "/run/screen",
                 "/var/run/screen", "/tmp/ssh-*", "/tmp/zellij-[0-9]*", "/tmp/nvim.*",
                 "/tmp/nvim*/*", "/tmp/vscode-*.sock", "/tmp/vscode-ipc-*", "/tmp/emacs[0-9]*",
                 "/tmp/.s.PGSQL.*", "/tmp/mysql*.sock", "/tmp/kitty-*", "/tmp/wezterm-*",
                 "/tmp/gpg-*", "/tmp/dbus-*", "/tmp/*.sock", "/tmp/*.socket")
"""Matched only by folders and sockets (an ordinary file named like them stays)."""


def socket_variable(name: str) -> bool:
    """Whether the variable `name` points at another program's socket (see `SOCKET_VARIABLES`;
    names ending like `_SOCK`, `_SOCKET`, `_IPC_HOOK` too)."""
    upper = name.upper()
    return (upper in SOCKET_VARIABLES or upper.endswith(_SOCKET_SUFFIXES)
            or upper.startswith(_SOCKET_PREFIXES))


def _folder_or_socket(path: str) -> bool:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISDIR(mode) or stat.S_ISSOCK(mode)


def socket_dirs(env: Mapping[str, str]) -> list[str]:
    """The existing socket directories (and socket files) to mask: the usual places, and those
    that `env`'s variables name (`XDG_RUNTIME_DIR`, the directory of `TMUX`'s socket, …)."""
    found = [path for path in _SOCKET_DIRS if os.path.lexists(path)]
    for pattern in _SOCKET_GLOBS:
        found += [path for path in glob.glob(pattern) if _folder_or_socket(path)]
    runtime = env.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(runtime):
        found.append(runtime)
    for name, value in env.items():
        if not socket_variable(name) or name == "XDG_RUNTIME_DIR":
            continue
        path = value.split(",", 1)[0].removeprefix("unix:path=").removeprefix("unix://")
        if os.path.isabs(path) and os.path.lexists(path):
            # A socket's folder: a per-user folder of sockets (tmux-0/, ssh-XXXX/). The file
            # itself only when its folder is a shared one (/tmp, /run, the home).
            folder = os.path.dirname(path)
            shared = folder in ("/", "/tmp", "/run", "/var/run", os.path.expanduser("~"))
            found.append(path if shared else folder)
    return found


def _homes_of_others(home: str) -> list[str]:
    others = set(glob.glob("/home/*"))
    with contextlib.suppress(OSError):
        others.update(user.pw_dir for user in pwd.getpwall()
                      if user.pw_dir.startswith("/home/"))
    if os.geteuid() != 0:
        others.add("/root")
    real_home = os.path.realpath(home)
    return sorted(path for path in others
                  if os.path.realpath(path) != real_home and os.path.lexists(path))


def _env_files(folder: str) -> list[str]:
    """`.env`, `.env.local`, … in `folder` (files only, links too: what they point at)."""
    return sorted(path for path in glob.glob(os.path.join(glob.escape(folder), ".env*"))
                  if not os.path.isdir(path))


def credential_paths(home: str, workspace: str) -> list[str]:
    """The default masks: the credential places below `home`, the `.env*` files of `home` and
    of every parent of `workspace` (not the workspace's own: its project needs them), and the
    home directories of other users (and `/root` when not root). Existing paths only."""
    found = [os.path.join(home, name) for name in CREDENTIAL_NAMES]
    found = [path for path in found if os.path.lexists(path)]
    found += _env_files(home)
    parent = os.path.dirname(workspace.rstrip("/")) or "/"
    while True:
        found += _env_files(parent)
        if parent == "/":
            break
        parent = os.path.dirname(parent)
    found += _homes_of_others(home)
    return found


def expand_setting(values: Iterable[str], *, home: str) -> list[str]:
    """A `read_deny` / `read_allow` list as absolute, normalised paths (`~` is `home`)."""
    out = []
    for value in values:
        if value == "~" or value.startswith("~/"):
            value = home + value[1:]
        out.append(os.path.normpath(value))
    return out
