"""Linux: bubblewrap (`bwrap`) — finding it, checking that it works here, and the command line
that runs one command in it.

The flags, and why (each trap below was measured with bubblewrap 0.8, as root):

- `--ro-bind / /` first, then the writable binds (the workspace, the call's private temp dir),
  then read-only binds over what inside the workspace must stay read-only: a later mount covers
  an earlier one, so the order is the policy.
- No tmpfs over `/tmp`: it would hide a workspace (or a venv) that lives under `/tmp`, and
  writes there would "succeed" into a throw-away tmpfs. `/tmp` stays read-only; `TMPDIR` points
  at a private directory made for the call.
- `--dev /dev` (a fresh /dev with a writable /dev/shm: Python's `multiprocessing.Lock()` needs
  it) and `--proc /proc` (the PID namespace's own).
- `--cap-drop ALL`: as root bwrap keeps every capability, and `mount -o remount,rw /` would
  write to the host. Unprivileged, a user namespace already holds none.
- `--unshare-pid --die-with-parent`: nothing started inside can outlive the sandbox, and it
  dies with the scope holder that runs it (`engine_adapter.processes.scopes`). Never
  `--new-session`: it moves the command out of the process group the runner kills.
- `--unshare-net` unless the network is allowed; `--unshare-ipc`.
- `--seccomp FD`: the filter of `engine_adapter.sandbox.seccomp` (no unix socket can be made).
- Masks last: an empty folder or file that nobody may read (mode 000; with every capability
  dropped, root cannot read it either) bound read-only over each credential place and socket
  directory, so a read fails with "Permission denied" and a rename of the place with "Device or
  resource busy". Binds, not tmpfs: a tmpfs would be writable and read as empty.
- `bwrap` itself is resolved once to a real path outside every writable root
  (`engine_adapter.sandbox.install.pick_bwrap`), never looked up on `$PATH` per command.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence

from engine_adapter.sandbox.settings import WORKSPACE_WRITE

__all__ = ["INSTALL_HINT", "bwrap_argv", "find_bwrap", "probe_bwrap"]

INSTALL_HINT = ("install bubblewrap: sudo apt-get install bubblewrap (Debian, Ubuntu), "
                "sudo dnf install bubblewrap (Fedora), sudo pacman -S bubblewrap (Arch)")
USERNS_HINT = ("allow unprivileged user namespaces: on Ubuntu 23.10 and later "
               "`sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0` (or an AppArmor "
               "profile for bwrap); elsewhere `sudo sysctl kernel.unprivileged_userns_clone=1` "
               "or a non-zero `user.max_user_namespaces`; in a container, allow them there")
_PROBE_TIMEOUT = 15.0
_USERNS_WORDS = ("uid map", "namespace", "Operation not permitted", "Permission denied")


def find_bwrap(path: str | None = None) -> str | None:
    """The `bwrap` program on `path` (default: `$PATH`), or None (see `install.pick_bwrap`
    for the one the sandbox runs)."""
    return shutil.which("bwrap", path=path if path is not None else os.environ.get("PATH"))


def _base_flags(bwrap: str, *, network: bool) -> list[str]:
    flags = [bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--cap-drop", "ALL"]
    if not network:
        flags.append("--unshare-net")
    return [*flags, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]


def bwrap_argv(bwrap: str, argv: Sequence[str], *, mode: str, network: bool, workspace: str,
               cwd: str, tmpdir: str, read_only: Sequence[str] = (),
               mask_dirs: Sequence[str] = (), mask_files: Sequence[str] = (),
               mask_dir: str = "", mask_file: str = "",
               seccomp_fd: int | None = None, state: Sequence[str] = (),
               mounts: Sequence[tuple[str, str]] = ()) -> list[str]:
    """The command line that runs `argv` in `cwd` inside the sandbox: everything read-only but
    `tmpdir` and, in `workspace-write` mode, `workspace` (minus the `read_only` paths in it, and
    what `mounts` keeps: `(flag, path)` pairs of `guards.mount_plan`, each bound onto itself);
    the empty, unreadable `mask_dir` / `mask_file` bound over each of `mask_dirs` /
    `mask_files`; under the seccomp filter in `seccomp_fd` when given. `state`: paths made
    writable after the workspace's read-only binds (an agent's own state folders; the masks
    that cover them were left out by the caller, those inside them still apply)."""
    args = _base_flags(bwrap, network=network)
    if mode == WORKSPACE_WRITE:
        args += ["--bind", workspace, workspace]
        for flag, path in mounts:
            args += [flag, path, path]
        for path in read_only:
            args += ["--ro-bind", path, path]
    args += ["--bind", tmpdir, tmpdir]
    for path in state:  # before the masks: one inside a state folder still hides its place
        args += ["--bind", path, path]
    for path in mask_dirs:
        args += ["--ro-bind", mask_dir, path]
    for path in mask_files:
        args += ["--ro-bind", mask_file, path]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += ["--chdir", cwd, "--", *argv]
    return args


def probe_bwrap(bwrap: str, seccomp_fd: int | None = None) -> str | None:
    """Run `true` in the sandbox once (under the seccomp filter in `seccomp_fd`, if given):
    None if it works here, else why not and the fix (one line). A kernel or container without
    user namespaces fails here, not at the first call."""
    true = shutil.which("true") or "/bin/true"
    filter_args = ["--seccomp", str(seccomp_fd)] if seccomp_fd is not None else []
    try:
        done = subprocess.run([*_base_flags(bwrap, network=False), *filter_args, "--", true],
                              stdin=subprocess.DEVNULL, capture_output=True,
                              pass_fds=(seccomp_fd,) if seccomp_fd is not None else (),
                              timeout=_PROBE_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{bwrap} cannot be run ({exc}); {INSTALL_HINT}"
    if done.returncode == 0:
        return None
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    first = said[0][:300] if said else f"exit code {done.returncode}"
    if any(word in first for word in _USERNS_WORDS):
        return f"bwrap cannot create its namespaces here ({first}); {USERNS_HINT}"
    return f"bwrap does not work here ({first})"
