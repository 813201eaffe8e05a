"""The scope holder: runs one command and, when it ends, ends everything the command started.

Started by `engine_adapter.processes.scopes` as `python -I -S -c SOURCE -- PROGRAM ARGS...` (this
file's text, read once: a command that rewrites the file changes no later holder), already
a child subreaper (Linux `PR_SET_CHILD_SUBREAPER`, set between fork and exec), so every process
below it that loses its parent — a background job, a double fork, a `setsid` daemon — is
re-parented to the holder, never to init. The holder runs the command as its child, hands it
its stdin/stdout/stderr (keeping no copy, so end-of-output means the command's processes closed
theirs), and waits. When the command exits, the holder kills every process still below it
(SIGKILL, again and again until none is left), reaps them, and exits as the command did (same
code, or killed by the same signal).

Signals to the holder: SIGTERM, SIGHUP, SIGINT are passed on to every process below it (a
graceful stop: the command decides); SIGUSR1 kills every process below it at once. The cockpit
also sets SIGUSR1 as the holder's parent-death signal: if the cockpit dies, so does the scope.

The command's environment is the holder's, except that variables that would change how the
holder itself is loaded (`LD_PRELOAD` and the like) arrive renamed `COCKPIT_HELD_<name>` and
are given back their names for the command only.

Standard library only, and no import of the cockpit: it runs in its own small interpreter.
(`engine_adapter.processes.scopes` imports its /proc helpers: one reading of the process table.)
"""

import os
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # typeshed has no stub of the C module; `signal` holds the same names
    import signal
else:
    import _signal as signal  # the C module: `signal` would import enum (~30 ms at start)

_GRACEFUL = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
HELD = "COCKPIT_HELD_"
_asked: list[int] = []  # signals received before the command was started


def process_table() -> dict[int, tuple[int, int, int]]:
    """pid -> (parent pid, process group, session) of every process, from /proc."""
    table: dict[int, tuple[int, int, int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return table
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
            table[int(entry)] = (int(fields[1]), int(fields[2]), int(fields[3]))
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile
    return table


def below(table: dict[int, tuple[int, int, int]], root: int) -> list[int]:
    """Every process of `table` whose chain of parents reaches `root`."""
    children: dict[int, list[int]] = {}
    for pid, (ppid, _pgid, _sid) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: list[int] = []
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            found.append(child)
            stack.append(child)
    return found


def _below(root: int) -> list[int]:
    return below(process_table(), root)


def _kill(pid: int, sig: int) -> bool:
    try:
        os.kill(pid, sig)
    except OSError:  # gone already
        return False
    return True


def _signal_all(sig: int) -> None:
    for pid in _below(os.getpid()):
        _kill(pid, sig)


def _on_graceful(signum: int, _frame: object) -> None:
    _asked.append(signal.SIGTERM)
    _signal_all(signal.SIGTERM)


def _on_kill(signum: int, _frame: object) -> None:
    _asked.append(signal.SIGKILL)
    _signal_all(signal.SIGKILL)


def _exit_like(status: int) -> None:
    """Exit the way the command did: its exit code, or death by its signal."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig != signal.SIGKILL:
            try:
                import resource

                resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file of the holder
                signal.signal(sig, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
            except (OSError, ValueError):
                pass
        _kill(os.getpid(), sig)
        os._exit(128 + sig)  # a signal that does not kill by default
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def main() -> None:
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    if not argv:
        os.write(2, b"holder: no command given\n")
        os._exit(2)
    for sig in _GRACEFUL:
        signal.signal(sig, _on_graceful)
    signal.signal(signal.SIGUSR1, _on_kill)
    command = os.fork()
    if command == 0:
        for sig in (*_GRACEFUL, signal.SIGUSR1):
            signal.signal(sig, signal.SIG_DFL)
        env = {(name[len(HELD):] if name.startswith(HELD) else name): value
               for name, value in os.environ.items()}
        try:
            os.execvpe(argv[0], argv, env)
        except OSError as exc:
            os.write(2, f"cannot run {argv[0]}: {exc.strerror or exc}\n".encode())
        os._exit(127)
    for asked in list(_asked):  # asked to stop before the command existed: stop it now
        _kill(command, asked)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)
    status = None
    while status is None:
        try:
            pid, code = os.waitpid(-1, 0)
        except ChildProcessError:  # cannot happen while the command lives; be safe
            break
        if pid == command:
            status = code
    # The command is gone: nothing it started may stay.
    pause = 0.001
    while True:
        left = _below(os.getpid())
        if not left:
            break
        for pid in left:
            _kill(pid, signal.SIGKILL)
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:  # a killed parent has not handed its child to us yet
            time.sleep(pause)
            pause = min(pause * 2, 0.1)
    _exit_like(status if status is not None else 0)


if __name__ == "__main__":
    main()
