"""Where the host's socket, lock and log live: with COCKPIT_HOME, under it; else the runtime
dir; a path too long to bind, or a folder another user owns, is a clear error."""

from __future__ import annotations

import os
import stat

import pytest

from cockpit.host.places import (
    HostPlaceError,
    lock_path,
    log_path,
    private_dir,
    record_dir,
    socket_path,
)


def test_everything_moves_with_cockpit_home(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("COCKPIT_HOME", "/tmp/ckh")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))  # COCKPIT_HOME wins
    assert str(socket_path()) == "/tmp/ckh/run/host.sock"
    assert str(lock_path()) == "/tmp/ckh/run/host.lock"
    assert str(log_path()) == "/tmp/ckh/state/host.log"
    assert str(record_dir()) == "/tmp/ckh/state/host-runs"


def test_without_cockpit_home_the_socket_is_in_the_runtime_dir(monkeypatch) -> None:
    monkeypatch.delenv("COCKPIT_HOME")
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/1000")
    assert str(socket_path()) == "/run/user/1000/cockpit/host.sock"
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert socket_path().parent.name == "run"  # under the state dir
    assert socket_path().parent.parent == log_path().parent


@pytest.mark.parametrize("where", ["COCKPIT_HOME", "XDG_RUNTIME_DIR"])
def test_a_socket_path_too_long_to_bind_says_what_to_do(monkeypatch, where) -> None:
    monkeypatch.delenv("COCKPIT_HOME")
    monkeypatch.setenv(where, "/tmp/" + "x" * 120)
    with pytest.raises(HostPlaceError, match=r"longer than 107 bytes.*set COCKPIT_HOME"):
        socket_path()


def test_a_private_dir_is_made_0700_and_an_open_one_closed(tmp_path) -> None:
    made = private_dir(tmp_path / "a" / "b")
    assert stat.S_IMODE(made.stat().st_mode) == 0o700
    opened = tmp_path / "open"
    opened.mkdir(mode=0o777)
    opened.chmod(0o777)
    private_dir(opened)
    assert stat.S_IMODE(opened.stat().st_mode) == 0o700


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to give a folder away")
def test_a_folder_another_user_owns_is_refused(tmp_path) -> None:
    planted = tmp_path / "planted"
    planted.mkdir()
    os.chown(planted, 65534, 65534)
    with pytest.raises(HostPlaceError, match="belongs to uid 65534"):
        private_dir(planted)
