"""Demo workspaces are never left behind: one whose demo was killed before it could clean up is
removed by the next demo; a running demo's, a kept one and anything not ours are left alone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine_adapter.engines.builtin import make_workspace, release_workspace

_OWNER = """
import os, sys
from engine_adapter.engines.builtin import make_workspace
workspace = make_workspace(sys.argv[1])
print(workspace, flush=True)
if sys.argv[2] == "die":
    os._exit(9)  # as a kill -9 would: no clean-up ran
sys.stdin.read()  # alive until the test closes our stdin
"""


def _owner(parent: Path, how: str) -> tuple[subprocess.Popen[str], Path]:
    proc = subprocess.Popen([sys.executable, "-c", _OWNER, str(parent), how], text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    return proc, Path(proc.stdout.readline().strip())


def _demo_dirs(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("cockpit-demo-"))


def test_a_killed_demos_workspace_is_removed_by_the_next(tmp_path: Path) -> None:
    proc, dead = _owner(tmp_path, "die")
    assert proc.wait() == 9
    assert dead.is_dir() and Path(f"{dead}.lock").exists()
    mine = make_workspace(tmp_path)
    try:
        assert not dead.exists() and not Path(f"{dead}.lock").exists()
        assert _demo_dirs(tmp_path) == sorted([mine.name, f"{mine.name}.lock"])
    finally:
        release_workspace(mine)
    assert _demo_dirs(tmp_path) == []


def test_a_running_demos_workspace_is_kept(tmp_path: Path) -> None:
    proc, alive = _owner(tmp_path, "wait")
    try:
        mine = make_workspace(tmp_path)
        release_workspace(mine)
        assert (alive / "tests").is_dir()
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()
    make_workspace(tmp_path)  # now its owner is gone: swept
    assert not alive.exists()


def test_a_kept_workspace_is_never_swept(tmp_path: Path) -> None:
    kept = make_workspace(tmp_path)
    release_workspace(kept, remove=False)
    assert not Path(f"{kept}.lock").exists()
    release_workspace(make_workspace(tmp_path))
    assert kept.is_dir()


def test_a_link_planted_beside_a_lease_is_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious").write_text("keep")
    (tmp_path / "cockpit-demo-evil").symlink_to(victim)
    (tmp_path / "cockpit-demo-evil.lock").write_text("")
    (tmp_path / "cockpit-demo-link.lock").symlink_to(tmp_path / "cockpit-demo-evil.lock")
    release_workspace(make_workspace(tmp_path))
    assert (victim / "precious").read_text() == "keep"
    assert (tmp_path / "cockpit-demo-evil").is_symlink()


def test_a_folder_without_a_lease_is_not_ours_to_judge(tmp_path: Path) -> None:
    old = tmp_path / "cockpit-demo-olderversion"
    old.mkdir()
    release_workspace(make_workspace(tmp_path))
    assert old.is_dir()


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_another_users_lease_is_left_alone(tmp_path: Path) -> None:
    theirs = tmp_path / "cockpit-demo-theirs"
    theirs.mkdir()
    lease = tmp_path / "cockpit-demo-theirs.lock"
    lease.write_text("")
    os.chown(lease, 65534, 65534)
    release_workspace(make_workspace(tmp_path))
    assert theirs.is_dir() and lease.exists()
