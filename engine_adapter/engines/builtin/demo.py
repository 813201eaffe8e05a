"""The demo: the sample project copied into a fresh temporary workspace, and the built-in
engine with the scripted model ready to play the "fix the failing test" scenario in it."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
import tempfile
from importlib import resources
from pathlib import Path

from engine_adapter.engines.builtin.loop import BuiltinRunner
from engine_adapter.engines.builtin.models import ScriptedModel, load_scenario
from engine_adapter.sandbox import Sandbox, SandboxSettings

__all__ = ["DEMO_SCENARIO", "FOLLOWUP_SCENARIO", "demo_runner", "demo_task", "make_workspace",
           "release_workspace"]

DEMO_SCENARIO = "fix_failing_test"
FOLLOWUP_SCENARIO = "followup"  # any later task of the demo's session


_PREFIX = "cockpit-demo-"
_LEASES: dict[str, int] = {}  # workspace -> the open, locked descriptor of its lease file


def make_workspace(parent: str | Path | None = None) -> Path:
    """Copy the sample project (a tiny Python package with one failing unit test) into a new
    temporary directory, under `parent` if given; returns its path.

    The process holds a lease on it (an `flock` on `<workspace>.lock` beside it) until
    `release_workspace`. A demo killed before it could clean up (`kill -9`, a power cut) leaves
    its workspace with a lease nobody holds: the next demo under the same parent removes it."""
    _sweep_abandoned(Path(parent) if parent is not None else Path(tempfile.gettempdir()))
    workspace = Path(tempfile.mkdtemp(prefix=_PREFIX, dir=parent))
    _take_lease(workspace)
    sample = resources.files(__package__).joinpath("sample_project")
    with resources.as_file(sample) as source:
        shutil.copytree(source, workspace, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return workspace


def release_workspace(workspace: str | Path, *, remove: bool = True) -> None:
    """The demo is done with `workspace`: removed (`remove`), or kept for the user, and never
    swept later. Its lease is dropped either way; a workspace without one is only removed."""
    path = str(workspace)
    fd = _LEASES.pop(path, None)
    if remove:
        shutil.rmtree(path, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.unlink(path + ".lock")
    if fd is not None:
        os.close(fd)  # closing releases the lock


def _take_lease(workspace: Path) -> None:
    """Lock a new file, then give it its name: a sweeper can never find the lease unlocked."""
    fd, temporary = tempfile.mkstemp(dir=workspace.parent, prefix=f".{workspace.name}.")
    try:
        os.set_inheritable(fd, False)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.replace(temporary, f"{workspace}.lock")
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _LEASES[str(workspace)] = fd


def _sweep_abandoned(parent: Path) -> None:
    """Remove the demo workspaces under `parent` whose lease no process holds. Only this user's,
    only real folders (a link planted beside a lease is never followed), never a workspace
    without a lease (kept with `--keep`, or not ours to judge)."""
    try:
        leases = [entry for entry in os.scandir(parent)
                  if entry.name.startswith(_PREFIX) and entry.name.endswith(".lock")]
    except OSError:
        return
    me = os.getuid()
    for lease in leases[:100]:  # a bounded sweep: start-up stays fast whatever /tmp holds
        with contextlib.suppress(OSError):
            fd = os.open(lease.path, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
            try:
                if os.fstat(fd).st_uid != me:
                    continue
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # its demo is running
                folder = lease.path[: -len(".lock")]
                with contextlib.suppress(FileNotFoundError):
                    info = os.lstat(folder)
                    if stat.S_ISDIR(info.st_mode) and info.st_uid == me:
                        shutil.rmtree(folder, ignore_errors=True)
                os.unlink(lease.path)
            finally:
                os.close(fd)


def demo_task() -> str:
    """The demo's task text."""
    return load_scenario(DEMO_SCENARIO).task


def demo_runner(workspace: str | Path, *, speed: float = 1.0, scenario: str = DEMO_SCENARIO,
                sandbox: Sandbox | SandboxSettings | None = None) -> BuiltinRunner:
    """The built-in engine with the scripted model playing `scenario` in `workspace` (its
    commands in `sandbox`, by default `workspace-write`)."""
    return BuiltinRunner(ScriptedModel(load_scenario(scenario), speed=speed), cwd=workspace,
                         sandbox=sandbox)
