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

What a sandboxed command meets, beyond "read-only but the workspace and its temp dir":

- no unix socket at all (`seccomp`), the socket directories masked and the variables that name
  sockets (`TMUX`, `SSH_AUTH_SOCK`, …) left out of its environment (`hidden`);
- the whole git dir read-only, and a `.git` it cannot create at the workspace's top (`gitdirs`);
- credential places unreadable (`hidden.credential_paths`, adjusted by `read_deny`/`read_allow`);
- the cockpit's own install read-only, and `bwrap` and the scope holder's interpreter resolved
  once, at `check()`, to real paths outside the workspace (`install`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import tempfile
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine_adapter.files.startup import covered, startup_locations
from engine_adapter.processes import command_env, keep_holder_outside, resolve_program
from engine_adapter.sandbox.blocked import blocked_by_sandbox
from engine_adapter.sandbox.bwrap import INSTALL_HINT, bwrap_argv, probe_bwrap
from engine_adapter.sandbox.gitdirs import git_entries
from engine_adapter.sandbox.guards import mount_plan
from engine_adapter.sandbox.hidden import (
    credential_paths,
    expand_setting,
    socket_dirs,
    socket_variable,
)
from engine_adapter.sandbox.install import below, own_install, pick_bwrap
from engine_adapter.sandbox.seatbelt import find_sandbox_exec, seatbelt_argv
from engine_adapter.sandbox.seccomp import filter_fd, filter_program
from engine_adapter.sandbox.settings import (
    BYPASSED,
    OFF,
    UNAVAILABLE,
    WORKSPACE_WRITE,
    SandboxSettings,
    default_settings,
    is_sandboxed,
)

__all__ = ["Sandbox", "Wrapped"]

_AROUND_ENTRIES = 200  # a folder with more entries around the cockpit's install is left as is
_probes: dict[tuple[str, bool], str | None] = {}  # (program, filter) -> None or the problem
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
    masked: tuple[str, ...] = ()  # what reads fail on (credential places, socket folders)
    pass_fds: tuple[int, ...] = ()  # give these to the child (the seccomp filter)
    closed: bool = field(default=False, repr=False)
    on_close: list[Callable[[], None]] = field(default_factory=list, repr=False)

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
                                  network=self.network, masked=self.masked)

    def close(self) -> None:
        """Remove the private temp dir (once the command and all it started are gone) and
        close the filter's descriptor."""
        if self.closed:
            return
        self.closed = True
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        if self.tmpdir is not None:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
        for done in self.on_close:
            done()


def _around(path: str, keep: Sequence[str], install: Sequence[str]) -> list[str]:
    """`path` to mask, or, when it holds a place a command must reach (`keep`: the workspace,
    the cockpit's own install: another user's home holding the interpreter, say), the entries
    around that place, down to it; nothing when `path` is such a place or lies inside the
    `install` (a credential place inside the workspace is masked all the same)."""
    if path in keep or below(path, install):
        return []
    inner = [root for root in keep if below(root, [path])]
    if not inner:
        return [path]
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return []  # cannot look inside: leave it (it is read-only all the same)
    if len(names) > _AROUND_ENTRIES:
        return []
    out: list[str] = []
    for name in names:
        out += _around(os.path.join(path, name), keep, install)
    return out


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
        self.notes: list[str] = []  # what is weaker than it should be here, and why
        self.seccomp: bytes | None = None  # the filter commands run under (Linux)
        self._masks: list[str] = []  # resolved at check(): credential places, socket dirs
        self._nested_git: list[str] = []  # nested repositories' .git, found at check()
        self._install: list[str] = []  # the cockpit's own install, found at check()
        self._mask_root: str | None = None
        self._live = 0  # commands wrapped and not yet closed
        self._made_git: str | None = None  # the empty top .git made as a mount point, if any
        self._live_lock = threading.Lock()

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
            self.backend, refused = pick_bwrap(self._path, [self.workspace])
            if refused:
                self.notes.append("bwrap not run from the workspace, where a command could "
                                  "replace it: " + "; ".join(refused))
            if self.backend is None and refused:
                self.problem = ("bwrap (bubblewrap) found only in the workspace, where a "
                                f"command could replace it ({'; '.join(refused)}); "
                                f"{INSTALL_HINT}")
            elif self.backend is None:
                self.problem = f"bwrap (bubblewrap) not found on PATH; {INSTALL_HINT}"
            elif not sys.platform.startswith("linux"):
                self.problem = f"no sandbox for {sys.platform}"
            else:
                self._probe(self.backend)
        if self.problem is None:
            if keep_holder_outside([self.workspace]) is None and sys.platform != "darwin":
                self.notes.append("every Python interpreter found lies in the workspace: "
                                  "commands start without a scope holder")
            self._resolve_masks()
        self._checked = True
        return self

    def _probe(self, backend: str) -> None:
        program = filter_program()
        if program is None:
            self.notes.append("no seccomp filter for this architecture: unix sockets outside "
                              "the masked socket folders stay reachable from commands")
        with _probe_lock:
            for wanted in ((program,) if program is None else (program, None)):
                key = (backend, wanted is not None)
                if key not in _probes:
                    fd = filter_fd(wanted) if wanted is not None else None
                    try:
                        _probes[key] = probe_bwrap(backend, fd)
                    finally:
                        if fd is not None:
                            os.close(fd)
                if _probes[key] is None or wanted is None:
                    break
            self.problem = _probes[key]
        if program is not None and key[1]:
            self.seccomp = program
        elif program is not None and self.problem is None:
            self.notes.append(f"bwrap refused the seccomp filter ({_probes[(backend, True)]}):"
                              " unix sockets outside the masked socket folders stay reachable")

    def _resolve_masks(self) -> None:
        """The places to hide, once (a walk and a few globs: kept off the event loop by
        `acheck`); each command binds those that still exist."""
        home = os.path.expanduser("~")
        settings = self.settings
        masks = credential_paths(home, self.workspace)
        masks += expand_setting(settings.read_deny, home=home)
        allowed = expand_setting(settings.read_allow, home=home)
        masks = [path for path in masks if not below(os.path.normpath(path), allowed)]
        masks += socket_dirs(os.environ)
        self._install = own_install()
        keep = [self.workspace, *self._install]
        found: list[str] = []
        for real in sorted({os.path.realpath(path) for path in masks}):
            # Not inside another mask (its folder is unreadable: bwrap could not get there).
            if not below(real, found):
                found += _around(real, keep, self._install)
        self._masks = found
        self._nested_git = git_entries(self.workspace)

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
        and what happens meanwhile, or when it is weaker than it should be here (see
        `notes`); None otherwise."""
        if self.state != UNAVAILABLE:
            return ("sandbox: " + "; ".join(self.notes)) if self.notes and self.active \
                else None
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
             bypass: bool = False, network: bool | None = None,
             state: Sequence[str] = ()) -> Wrapped:
        """`argv` ready to run in `cwd`: inside the sandbox unless it is off, missing, or
        `bypass` (one approved run outside). Raises `OSError` as exec would when the program
        cannot be run (checked here: inside the sandbox the error would be only words).

        `network` overrides the settings' (an agent process needs its model's API); `state`
        are existing paths made writable (an agent's own state folder: `~/.claude`, say),
        winning over a mask on them: such a mask is dropped, one holding a state path is
        replaced by the entries around it (see `_around`); a mask inside one stays. Only the
        agent gets those."""
        if not self.active or bypass:
            return Wrapped(list(argv), dict(env), self.state_of(bypass), network=True,
                           cwd=os.fspath(cwd))
        real_cwd = os.path.realpath(cwd)
        resolve_program(argv[0], env, real_cwd)
        assert self.backend is not None  # active: checked, found
        mode = self.settings.mode
        network = self.settings.network if network is None else network
        read_only = self._read_only() if mode == WORKSPACE_WRITE else []
        state = sorted({os.path.realpath(path) for path in state if os.path.lexists(path)})
        tmpdir = tempfile.mkdtemp(prefix="cockpit-sandbox-")
        reach = [self.workspace, tmpdir, real_cwd]
        masked = [path for path in self._state_masks(state)
                  if os.path.lexists(path) and not any(below(root, [path]) for root in reach)]
        # No .git at the top: an empty, unreadable folder on the name, so that the command
        # cannot make one that a later git run in the workspace would follow.
        top_git = os.path.join(self.workspace, ".git")
        with self._live_lock:  # counted from here: a command closing now keeps the mount point
            self._live += 1
            shut_git = mode == WORKSPACE_WRITE and (top_git == self._made_git
                                                    or not os.path.lexists(top_git))
            if shut_git and sys.platform != "darwin" and not os.path.lexists(top_git):
                # Made here, not by bwrap: a sealed workspace (a home, see guards) is read-only
                # by the time bwrap would make the mount point. Removed once no command runs.
                with contextlib.suppress(FileExistsError):
                    os.mkdir(top_git, 0)
                self._made_git = top_git
        if shut_git:
            masked.append(top_git)
        fd: int | None = None
        try:  # from here on a failure gives back the count, the temp dir and the filter's fd
            if self.seccomp is not None and sys.platform != "darwin":
                fd = filter_fd(self.seccomp)
            if sys.platform == "darwin":
                # Seatbelt denies writes by path, existing or not: every guarded path is listed.
                guarded = self.guarded() if mode == WORKSPACE_WRITE else []
                wrapped = seatbelt_argv(self.backend, argv, mode=mode, network=network,
                                        workspace=self.workspace, tmpdir=tmpdir,
                                        read_only=sorted({*read_only, *guarded}), masked=masked)
            else:
                mask_dir, mask_file = self._mask_sources()
                mounts = mount_plan(self.workspace, self.guarded()) \
                    if mode == WORKSPACE_WRITE else []
                dirs = [path for path in masked if path == top_git or os.path.isdir(path)]
                files = [path for path in masked if path not in dirs]
                wrapped = bwrap_argv(self.backend, argv, mode=mode, network=network,
                                     workspace=self.workspace, cwd=real_cwd, tmpdir=tmpdir,
                                     read_only=read_only, mounts=mounts, mask_dirs=dirs,
                                     mask_files=files, mask_dir=mask_dir, mask_file=mask_file,
                                     seccomp_fd=fd, state=state)
        except BaseException:
            if fd is not None:
                os.close(fd)
            shutil.rmtree(tmpdir, ignore_errors=True)
            self._closed()
            raise
        writable = (tmpdir, *([self.workspace] if mode == WORKSPACE_WRITE else []), *state)
        run_env = {name: value for name, value in env.items() if not socket_variable(name)}
        run_env.update(TMPDIR=tmpdir, TMP=tmpdir, TEMP=tmpdir)
        return Wrapped(wrapped, run_env, mode, network=network, cwd=real_cwd,
                       writable=writable, tmpdir=tmpdir, masked=tuple(masked),
                       pass_fds=() if fd is None else (fd,),
                       on_close=[self._closed])

    def _state_masks(self, state: Sequence[str]) -> list[str]:
        """The masks with `state` reachable: none on a state path, one that holds a state path
        replaced by the entries around it, those inside one kept."""
        if not state:
            return list(self._masks)
        out: list[str] = []
        for path in self._masks:
            if path in state:
                continue  # the agent's own state: it must read and write it
            # (a mask inside a state folder stays: bound after it, it hides what it hid)
            if any(below(root, [path]) for root in state):
                out += _around(path, [*state, self.workspace], self._install)
            else:
                out.append(path)
        return out

    def _mask_sources(self) -> tuple[str, str]:
        """The empty folder and file that nobody may read (mode 000), bound over what is
        masked: made once per sandbox, outside every writable root, removed at exit."""
        if self._mask_root is None:
            root = tempfile.mkdtemp(prefix="cockpit-masks-")
            os.mkdir(os.path.join(root, "dir"), 0)
            os.close(os.open(os.path.join(root, "file"), os.O_CREAT | os.O_WRONLY, 0))
            weakref.finalize(self, shutil.rmtree, root, True)
            self._mask_root = root
        return os.path.join(self._mask_root, "dir"), os.path.join(self._mask_root, "file")

    def _closed(self) -> None:
        """One wrapped command is done; once none runs, remove the empty `.git` mount point
        made for them (never earlier: removing it would unmount it under a running command)."""
        with self._live_lock:
            self._live -= 1
            if self._live or self._made_git is None:
                return
            with contextlib.suppress(OSError):
                os.rmdir(self._made_git)  # only while empty: whatever else is there stays
            self._made_git = None

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
        wanted = [*self.read_only, *git_entries(root, walk=False), *self._nested_git]
        wanted += self._install
        found: set[str] = set()
        for path in wanted:
            real = os.path.realpath(path)
            if real != root and real.startswith(root.rstrip("/") + "/") and os.path.exists(real):
                found.add(real)
        return sorted(found)
