"""macOS: `sandbox-exec` with a profile generated for each command (Seatbelt, the mechanism
Codex and others use there).

The profile allows everything, then denies every file write, then allows writes again below the
writable places (the workspace in `workspace-write` mode, the call's private temp dir, the
terminal devices), then denies again the read-only places inside the workspace, denies reads
and writes of the masked places (credentials, socket folders), denies every unix socket, and
denies the network unless it is allowed. In Seatbelt's language a later rule wins over an
earlier one, so the order is the policy, as with bubblewrap's mounts.

Written from Apple's and Codex's published profiles and checked here only as text: this machine
runs Linux, so no test has run a command under it (see README, "Sandbox").
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence

from engine_adapter.sandbox.settings import WORKSPACE_WRITE

__all__ = ["find_sandbox_exec", "seatbelt_argv", "seatbelt_profile"]

_DEVICES = ("/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper")


def find_sandbox_exec() -> str | None:
    """`/usr/bin/sandbox-exec` (deprecated by Apple, still shipped), or None."""
    return shutil.which("sandbox-exec", path="/usr/bin")


def _literal(path: str) -> str:
    """`path` as an SBPL string: backslashes and quotes escaped, nothing else special."""
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def seatbelt_profile(*, mode: str, network: bool, workspace: str, tmpdir: str,
                     read_only: Sequence[str] = (), masked: Sequence[str] = ()) -> str:
    """The Seatbelt profile for one command (see the module docstring)."""
    writable = [tmpdir, *([workspace] if mode == WORKSPACE_WRITE else [])]
    lines = ["(version 1)", "(allow default)", "(deny file-write*)",
             "(allow file-write*",
             *(f"  (subpath {_literal(path)})" for path in writable),
             *(f"  (literal {_literal(device)})" for device in _DEVICES),
             '  (regex #"^/dev/ttys[0-9]+$") (regex #"^/dev/fd/"))']
    if mode == WORKSPACE_WRITE and read_only:
        lines += ["(deny file-write*",
                  *(f"  (subpath {_literal(path)})" for path in read_only), ")"]
    if masked:
        lines += ["(deny file-read* file-write*",
                  *(f"  (subpath {_literal(path)})" for path in masked), ")"]
    # No unix socket, wherever it lies (what seccomp does on Linux): tmux, docker, ssh-agent.
    lines.append("(deny network* (remote unix-socket))")
    lines.append("(deny network-bind (local unix-socket))")
    if not network:
        lines.append("(deny network*)")
    return "\n".join(lines) + "\n"


def seatbelt_argv(sandbox_exec: str, argv: Sequence[str], *, mode: str, network: bool,
                  workspace: str, tmpdir: str, read_only: Sequence[str] = (),
                  masked: Sequence[str] = ()) -> list[str]:
    """The command line that runs `argv` under the generated profile."""
    profile = seatbelt_profile(mode=mode, network=network, workspace=workspace, tmpdir=tmpdir,
                               read_only=read_only, masked=masked)
    return [sandbox_exec, "-p", profile, *argv]
