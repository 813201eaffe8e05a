"""Process scopes: every command the cockpit starts is ended whole, and nothing outlives its run.

A built-in shell call or check, an ACP agent, an ACP terminal: each is started in a `Scope`.
On Linux the command runs under a holder (`holder.py`, a tiny interpreter made a child
subreaper between fork and exec), so every process the command starts stays below the holder
whatever it does — `&`, `nohup`, `disown`, `( … & )`, a double fork, `setsid` — and when the
command exits the holder kills all of them. Attribution is exact: a process belongs to a scope
because it descends from that scope's holder, not because of a name, a group or a guess; two
scopes running at once, or other code in the same process (pytest), are never confused.

Backstop: the cockpit process becomes a child subreaper too (`become_subreaper`), so should a
command kill its own holder, its orphans come to the cockpit rather than to init; `Scope.sweep`
then kills the ones that belong to the scope — below the cockpit and carrying the scope's
marker (the `COCKPIT_SCOPE` environment variable), or in its session or process group — and
reaps them. A process that kills its holder, leaves the session and clears its environment is
the one case left (the sandbox's PID namespace closes it). Elsewhere than Linux there is no
holder: the command leads its own process group and is ended with `killpg`, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import secrets
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from engine_adapter.processes.holder import below, process_table

__all__ = ["MARKER", "Scope", "become_subreaper", "end_scope", "keep_holder_outside",
           "resolve_program", "start_in_scope"]

MARKER = "COCKPIT_SCOPE"
"""The environment variable that names a command's scope (inherited by what it starts)."""

HOLDER = Path(__file__).with_name("holder.py")
_HELD = "COCKPIT_HELD_"  # holder.py gives these back their names, for the command only
_LOADER_VARIABLES = ("LD_", "GCONV_PATH", "GLIBC_TUNABLES", "MALLOC_", "LOCPATH", "NLSPATH")
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


@functools.cache
def _prctl() -> Any:
    # Resolved in the parent, the first time a scope is made (never at import: ctypes costs
    # ~15 ms of a viewer's start that starts no command): loading anything between fork and exec
    # could deadlock on a lock another thread held at the fork.
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_avoid: list[str] = []  # writable roots (real paths): no holder interpreter may lie below one
_holder_lock = threading.Lock()
_chosen: list[tuple[str, str] | None] = []  # the interpreter and source, once resolved


def _outside(path: str) -> bool:
    return not any(path == root or path.startswith(root.rstrip("/") + "/") for root in _avoid)


def _interpreters() -> list[str]:
    """Where a holder interpreter may come from, best first (real paths: a link in a venv is
    followed to the interpreter it names)."""
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    names = [sys.executable, os.path.join(sys.base_exec_prefix, "bin", version),
             *(shutil.which(name, path="/usr/bin:/bin:/usr/local/bin") or ""
               for name in (version, "python3"))]
    return [os.path.realpath(name) for name in names if name and os.path.isfile(name)]


def keep_holder_outside(roots: Sequence[str | os.PathLike[str]]) -> str | None:
    """Never run a scope holder from below `roots` (the sandbox's writable roots: a command
    there could replace the interpreter, which the next scope starts outside the sandbox).
    Returns the holder's interpreter, or None when every candidate lies below a root (then
    commands start without a holder: the sandbox's PID namespace still ends them whole)."""
    with _holder_lock:
        _avoid.extend(real for root in roots if (real := os.path.realpath(root)) not in _avoid)
        if _chosen and _chosen[0] is not None and not _outside(_chosen[0][0]):
            _chosen.clear()
    chosen = _holder()
    return chosen[0] if chosen else None


def _holder() -> tuple[str, str] | None:
    """The holder's interpreter and source, resolved at the first start and kept: the source is
    read once and passed with `-c`, so a command that rewrites holder.py (an editable install
    in the workspace) changes nothing the cockpit runs."""
    with _holder_lock:
        if not _chosen:
            picked: tuple[str, str] | None = None
            if _prctl() is not None and os.path.isdir("/proc/self"):
                try:
                    source = HOLDER.read_text(encoding="utf-8")
                except OSError:
                    source = ""
                interpreter = next((path for path in _interpreters() if _outside(path)), None)
                if source and interpreter:
                    picked = (interpreter, source)
            _chosen.append(picked)
        return _chosen[0]


_subreaper = False


def become_subreaper() -> bool:
    """Make this process a child subreaper (Linux), once: orphans of the commands it starts
    come to it, not to init. True if it is one."""
    global _subreaper
    prctl = _prctl()
    if not _subreaper and prctl is not None:
        _subreaper = prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    return _subreaper


def _holder_preexec() -> None:  # pragma: no cover - runs in the child, between fork and exec
    prctl = _prctl()  # (cached in the parent by `Scope.preexec`: nothing is loaded here)
    prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    prctl(_PR_SET_PDEATHSIG, signal.SIGUSR1, 0, 0, 0)


def _plain_preexec() -> None:  # pragma: no cover - runs in the child, between fork and exec
    _prctl()(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def resolve_program(program: str, env: Mapping[str, str], cwd: str | os.PathLike[str]) -> None:
    """Raise as exec would (`FileNotFoundError`, `PermissionError`) if `program` cannot run:
    under a holder the exec happens in another process, where the error would be only words."""
    if os.sep in program:
        path = os.path.join(os.fspath(cwd), program)
        if not os.path.exists(path):
            raise FileNotFoundError(2, "No such file or directory", program)
        if os.path.isdir(path) or not os.access(path, os.X_OK):
            raise PermissionError(13, "Permission denied", program)
        return
    if shutil.which(program, path=env.get("PATH", os.defpath)) is None:
        raise FileNotFoundError(2, "No such file or directory", program)


class Scope:
    """The processes of one command (see the module docstring). `pid` is the process the
    cockpit started (the holder, or the command itself without one): it leads its own session
    and process group."""

    def __init__(self) -> None:
        self.marker = secrets.token_hex(8)
        self.holder = _holder()  # (interpreter, source), or None: no holder
        self.held = self.holder is not None
        self.pid: int | None = None
        self.proc: asyncio.subprocess.Process | None = None

    def argv(self, argv: Sequence[str]) -> list[str]:
        """What to start for `argv` in this scope."""
        if self.holder is None:
            return list(argv)
        interpreter, source = self.holder
        return [interpreter, "-I", "-S", "-c", source, "--", *argv]

    def env(self, env: Mapping[str, str]) -> dict[str, str]:
        """`env` with the scope's marker (and, under a holder, the variables that would change
        how the holder itself is loaded passed under another name: the command gets them)."""
        if not self.held:
            return {**env, MARKER: self.marker}
        return {**{(_HELD + name if name.startswith(_LOADER_VARIABLES) else name): value
                   for name, value in env.items()}, MARKER: self.marker}

    def preexec(self) -> Callable[[], None] | None:
        """What the child runs between fork and exec (Linux): the holder becomes a subreaper
        and dies with the cockpit; a command without a holder just dies with it."""
        if _prctl() is None:
            return None
        return _holder_preexec if self.held else _plain_preexec

    def _signal(self, sig: int, *, group: bool) -> bool:
        if self.pid is None or self.proc is None or self.proc.returncode is not None:
            return False  # reaped: its pid may be another process's by now (`sweep` is safe)
        try:
            if group:
                os.killpg(self.pid, sig)
            else:
                os.kill(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def terminate(self) -> None:
        """Ask every process of the scope to stop (SIGTERM; the command decides)."""
        if not self._signal(signal.SIGTERM, group=not self.held):
            self._signal(signal.SIGTERM, group=True)

    def kill(self) -> None:
        """Kill every process of the scope now. Never waits: the holder does the work (or,
        without one or if it is gone, the process group is killed and `sweep` does the rest)."""
        if self.held and self._signal(signal.SIGUSR1, group=False):
            return
        self._signal(signal.SIGKILL, group=True)

    def kill_group(self) -> None:
        """Kill the scope's process group now (its holder did not end the scope in time)."""
        self._signal(signal.SIGKILL, group=True)

    def sweep(self) -> list[int]:
        """Kill and reap what is left of the scope below the cockpit once its holder is gone
        (see the module docstring); the pids killed. Cheap when nothing is left."""
        if self.pid is None:
            return []
        me = os.getpid()
        table = process_table()
        killed: list[int] = []
        for pid in below(table, me):
            if pid == self.pid:
                continue  # the holder itself is asyncio's to reap
            _ppid, pgid, sid = table[pid]
            if pgid == self.pid or sid == self.pid or self._marked(pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        adopted = [pid for pid in killed if table[pid][0] == me or _parent(pid) == me]
        _reap(adopted)  # orphans we adopted: nobody else will reap them
        return killed

    def _marked(self, pid: int) -> bool:
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:
            return False
        return f"{MARKER}={self.marker}".encode() in environ.split(b"\0")


def _reap(pids: list[int], seconds: float = 1.0) -> None:
    """Reap killed children, waiting at most about `seconds` for all of them."""
    left = list(pids)
    pause = 0.001
    deadline = time.monotonic() + seconds
    while left:
        for pid in list(left):
            try:
                done, _status = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid  # not ours (any more): nothing to reap
            if done:
                left.remove(pid)
        if not left or time.monotonic() > deadline:
            return
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return int(handle.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


async def start_in_scope(argv: Sequence[str], *, cwd: str | os.PathLike[str],
                         env: Mapping[str, str],
                         **kwargs: Any) -> tuple[asyncio.subprocess.Process, Scope]:
    """Start `argv` in a new scope (its own session and process group, under a holder on
    Linux); `kwargs` go to `asyncio.create_subprocess_exec` (pipes, `limit`). Raises `OSError`
    as starting the program directly would (not found, not executable, bad cwd)."""
    if not argv:
        raise FileNotFoundError(2, "No such file or directory", "")
    scope = Scope()
    if scope.held:
        resolve_program(argv[0], env, cwd)
    become_subreaper()
    proc = await asyncio.create_subprocess_exec(
        *scope.argv(argv), cwd=os.fspath(cwd), env=scope.env(env), start_new_session=True,
        preexec_fn=scope.preexec(), **kwargs)
    scope.pid, scope.proc = proc.pid, proc
    return proc, scope


async def end_scope(scope: Scope, proc: asyncio.subprocess.Process, *,
                    wait: float = 2.0) -> None:
    """Make sure nothing of the scope is left: kill it if it still runs, wait up to `wait`
    seconds for its holder, kill the group if the holder did not go, sweep what escaped."""
    if proc.returncode is None:
        scope.kill()
        try:
            await asyncio.wait_for(asyncio.shield(proc.wait()), wait)
        except TimeoutError:
            scope.kill_group()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(proc.wait()), wait)
    await asyncio.to_thread(scope.sweep)
