"""The `host_home` fixture: a real host's home, every host in it stopped in teardown."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.host import HostHome


@pytest.fixture
def host_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[HostHome]:
    home = HostHome()
    monkeypatch.setenv("COCKPIT_HOME", str(home.home))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    try:
        yield home
    finally:
        home.cleanup()
