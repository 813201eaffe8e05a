"""`Sandbox`: where the commands of one workspace run — the user's settings, what this machine
offers, and the wrapping of each command (`wrap`) in bubblewrap (Linux) or Seatbelt (macOS).

A command is wrapped, then started in its scope as before (`engine_adapter.processes.scopes`): the
scope holder → bwrap → the command. The holder stays outside, so cancel, timeout and "nothing
outlives the call" work as without a sandbox; bwrap's PID namespace (`--unshare-pid
--die-with-parent`) also closes the one way out of a scope (kill the holder, leave the session,
clear the environment): inside, the holder cannot even be seen.

When a sandbox is wanted but missing (`state == "unavailable"`), commands run as before, but
the approval policy learns it (`approval_flag()` is False): grants and `--auto-approve` then do
not cover them, so every command asks — never a silent downgrade.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine_adapter.processes import command_env, resolve_program
from engine_adapter.sandbox.blocked import blocked_by_sandbox
from engine_adapter.sandbox.bwrap import INSTALL_HINT, bwrap_argv, find_bwrap, probe_bwrap
from engine_adapter.sandbox.guards import covered, mount_plan, startup_locations
from engine_adapter.sandbox.seatbelt import find_sandbox_exec, seatbelt_argv
from engine_adapter.sandbox.settings import (
    BYPASSED,
    OFF,
    UNAVAILABLE,
    WORKSPACE_WRITE,
    SandboxSettings,
    default_settings,
    is_sandboxed,
)

__all__ = ["PROTECTED_NAMES", "Sandbox", "Wrapped"]

PROTECTED_NAMES = (".git/hooks", ".git/config")
"""Inside the workspace, kept read-only: what git runs later, outside any sandbox."""

_probes: dict[str, str | None] = {}  # backend program -> None (works) or the problem
_probe_lock = threading.Lock()


@dataclass
class Wrapped:
    """One command, ready to start: `argv` and `env` to give `start_in_scope`, the state it runs
    in (`sandbox` of its events), and its private temp dir (`close()` removes it)."""

    argv: list[str]
    env: dict[str, str]
    state: str
    network: bool
    cwd: str
    writable: tuple[str, ...] = ()
    tmpdir: str | None = None
    closed: bool = field(default=False, repr=False)

    @property
    def sandboxed(self) -> bool:
        """Whether the command runs in a sandbox."""
        return is_sandboxed(self.state)

    def blocked(self, output: str) -> str | None:
        """What the sandbox stopped, judging by the output of this command, which failed
        ("write to /etc/x", "network"); None when not sandboxed or nothing points to it."""
        if not self.sandboxed:
            return None
        return blocked_by_sandbox(output, cwd=self.cwd, writable=self.writable,
                                  network=self.network)

    def close(self) -> None:
        """Remove the private temp dir (once the command and all it started are gone)."""
        if self.tmpdir is not None and not self.closed:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
        self.closed = True


class Sandbox:
    """The sandbox of one workspace.

    Args:
        settings: The user's choice (default: `default_settings()`: `$COCKPIT_SANDBOX`, else
            `workspace-write`; no network).
        workspace: The directory that is writable in `workspace-write` mode.
        read_only: More paths kept read-only when they lie in the workspace (the cockpit's
            own journal and settings, say); `protect()` adds to them later.
        path: Where to look for `bwrap` (default: `$PATH` when first checked).
    """

    def __init__(self, settings: SandboxSettings | None = None, *, workspace: str | Path,
                 read_only: Iterable[str | Path] = (), path: str | None = None) -> None:
        self.settings = settings or default_settings()
        self.workspace = os.path.realpath(workspace)
        self.read_only: list[str] = [os.fspath(p) for p in read_only]
        self._startup: list[str] | None = None
        self._path = path
        self._checked = False
        self.backend: str | None = None  # the program: bwrap or sandbox-exec
        self.problem: str | None = None  # why there is no sandbox, and the fix

    # -- what this machine offers ---------------------------------------------------------------
    def check(self) -> Sandbox:
        """Find the backend and run one command in it (once per program and process; blocks
        for a few milliseconds the first time: call `acheck` on an event loop)."""
        if self._checked or self.settings.mode == OFF:
            self._checked = True
            return self
        if sys.platform == "darwin":
            self.backend = find_sandbox_exec()
            self.problem = None if self.backend else "sandbox-exec not found in /usr/bin"
        else:
            self.backend = find_bwrap(self._path)
            if self.backend is None:
                self.problem = f"bwrap (bubblewrap) not found on PATH; {INSTALL_HINT}"
            elif not sys.platform.startswith("linux"):
                self.problem = f"no sandbox for {sys.platform}"
            else:
                with _probe_lock:
                    if self.backend not in _probes:
                        _probes[self.backend] = probe_bwrap(self.backend)
                    self.problem = _probes[self.backend]
        self._checked = True
        return self

    async def acheck(self) -> Sandbox:
        """`check`, off the event loop."""
        if not self._checked:
            await asyncio.to_thread(self.check)
        return self

    @property
    def state(self) -> str:
        """What commands run in: the mode (`workspace-write`, `read-only`), `off` (chosen), or
        `unavailable` (wanted, missing: see `problem`)."""
        if self.settings.mode == OFF:
            return OFF
        self.check()
        return UNAVAILABLE if self.problem else self.settings.mode

    def state_of(self, bypass: bool = False) -> str:
        """The state a command runs in: `state`, or `bypassed` for an approved run outside."""
        return BYPASSED if bypass and self.active else self.state

    @property
    def active(self) -> bool:
        """Whether commands run in a sandbox."""
        return is_sandboxed(self.state)

    @property
    def network(self) -> bool:
        """Whether sandboxed commands may use the network."""
        return self.settings.network

    def approval_flag(self, *, bypass: bool = False) -> bool | None:
        """What to tell the approval policy about a command (`request_approval(sandboxed=…)`):
        True it runs sandboxed; False it would have been but will not (no sandbox here, or
        `bypass`: the human is asked to run it outside); None the user turned the sandbox off."""
        if self.settings.mode == OFF:
            return None
        return self.active and not bypass

    def start_fields(self) -> dict[str, Any]:
        """The sandbox fields of a run's `agent_start` event."""
        return {"sandbox": self.state, "sandbox_network": self.network,
                "sandbox_note": self.problem}

    def warning(self) -> str | None:
        """What to tell the user at start when the sandbox is wanted but missing, with the fix
        and what happens meanwhile; None otherwise."""
        if self.state != UNAVAILABLE:
            return None
        return (f"no sandbox: {self.problem}. Until then every command asks before it runs "
                "(--auto-approve covers tiers 1-2 only, grants do not cover commands); "
                "--sandbox off runs commands without one on purpose.")

    def command_env(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The environment a command gets from `environ`: secrets left out
        (`engine_adapter.processes.environment`), but the ones the user passes on purpose."""
        return command_env(environ, passed=self.settings.pass_env,
                           withheld=self.settings.withhold_env)

    def protect(self, path: str | Path) -> None:
        """Keep `path` read-only for sandboxed commands too (e.g. a journal in the workspace)."""
        self.read_only.append(os.fspath(path))

    # -- one command ----------------------------------------------------------------------------
    def wrap(self, argv: Sequence[str], *, cwd: str | Path, env: Mapping[str, str],
             bypass: bool = False) -> Wrapped:
        """`argv` ready to run in `cwd`: inside the sandbox unless it is off, missing, or
        `bypass` (one approved run outside). Raises `OSError` as exec would when the program
        cannot be run (checked here: inside the sandbox the error would be only words)."""
        if not self.active or bypass:
            return Wrapped(list(argv), dict(env), self.state_of(bypass), network=True,
                           cwd=os.fspath(cwd))
        real_cwd = os.path.realpath(cwd)
        resolve_program(argv[0], env, real_cwd)
        assert self.backend is not None  # active: checked, found
        mode, network = self.settings.mode, self.settings.network
        read_only = self._read_only() if mode == WORKSPACE_WRITE else []
        tmpdir = tempfile.mkdtemp(prefix="cockpit-sandbox-")
        if sys.platform == "darwin":
            # Seatbelt denies writes by path, existing or not: every guarded path is listed.
            guarded = self.guarded() if mode == WORKSPACE_WRITE else []
            wrapped = seatbelt_argv(self.backend, argv, mode=mode, network=network,
                                    workspace=self.workspace, tmpdir=tmpdir,
                                    read_only=sorted({*read_only, *guarded}))
        else:
            mounts = mount_plan(self.workspace, self.guarded()) if mode == WORKSPACE_WRITE else []
            wrapped = bwrap_argv(self.backend, argv, mode=mode, network=network,
                                 workspace=self.workspace, cwd=real_cwd, tmpdir=tmpdir,
                                 read_only=read_only, mounts=mounts)
        writable = (tmpdir, *([self.workspace] if mode == WORKSPACE_WRITE else []))
        run_env = {**env, "TMPDIR": tmpdir, "TMP": tmpdir, "TEMP": tmpdir}
        return Wrapped(wrapped, run_env, mode, network=network, cwd=real_cwd,
                       writable=writable, tmpdir=tmpdir)

    def guarded(self) -> list[str]:
        """What stays read-only with its folders (`engine_adapter.sandbox.guards`), existing or
        not: the start-up locations of every home the workspace holds (and the system's, for
        `/`), and the paths given to `read_only`/`protect` (the cockpit's settings, grants and
        journals). Absolute paths, as named (`mount_plan` resolves them)."""
        if self._startup is None:
            self._startup = startup_locations(self.workspace)
        return [*self._startup, *(os.path.abspath(p) for p in self.read_only)]

    def write_refusal(self, path: str | Path) -> str | None:
        """Why a write to `path` by a tool running outside the sandbox (the built-in
        `write_file`/`edit`, an ACP agent's `fs/write_text_file`) is refused, or None: it is or
        lies in a guarded location, read-only for sandboxed commands too."""
        real = os.path.realpath(path)
        for location in self.guarded():
            found = covered(real, [os.path.abspath(location), os.path.realpath(location)])
            if found is not None:
                return (f"{found} is kept read-only (a start-up file, the cockpit's own settings "
                        "or journal): no tool may write there")
        return None

    def _read_only(self) -> list[str]:
        """The existing paths inside the workspace to keep read-only (real paths, parents
        first, so a later bind never undoes an earlier one)."""
        root = self.workspace
        wanted = [os.path.join(root, name) for name in PROTECTED_NAMES]
        wanted += self.read_only
        found: set[str] = set()
        for path in wanted:
            real = os.path.realpath(path)
            if real != root and real.startswith(root.rstrip("/") + "/") and os.path.exists(real):
                found.add(real)
        return sorted(found)
