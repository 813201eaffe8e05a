"""Fixtures and hooks for every test: no animations, the sandbox setting for this machine, a
COCKPIT_HOME of the test's own, and a steady clock for snapshots.

Helpers the tests import live in `tests/support/` (no test imports this file)."""

from __future__ import annotations

import os

import pytest

from engine_adapter.sandbox import ENV_VARIABLE, Sandbox, SandboxSettings

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")

# Commands run in the sandbox where this machine has one. Where it has none, no command would be
# auto-approved (never a silent downgrade), so the tests that are not about the sandbox say
# "off" for it, once, here — as a user on such a machine would; the sandbox tests (which pass
# their settings explicitly) check the fallback itself, and the ones that need a sandbox skip.
os.environ.pop(ENV_VARIABLE, None)
SANDBOX_HERE = Sandbox(SandboxSettings(), workspace=os.path.dirname(__file__)).check()
if not SANDBOX_HERE.active:
    os.environ[ENV_VARIABLE] = "off"


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two workers a core. Most tests wait on real processes (git, the host, agents,
    ptys, bubblewrap) rather than on a core: with one worker a core they sat at a quarter of
    it. (`-n N` still says exactly how many.)"""
    return 2 * len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        2 * (os.cpu_count() or 1)


class _SteadyTime:
    """Stands in for the `time` module where the Session stamps events: each stamp is 1 ms after
    the last, from a fixed start, so a picture of the run never depends on how busy the machine
    was (an elapsed time, "waited 1.0 s for you")."""

    def __init__(self, start: float = 1_764_547_200.0) -> None:
        self.now = start

    def time(self) -> float:
        self.now += 0.001
        return self.now


@pytest.fixture
def steady_stamps(monkeypatch: pytest.MonkeyPatch) -> _SteadyTime:
    """Events stamped on a steady fake clock (for snapshot tests)."""
    import engine_adapter.session.session as session_module

    clock = _SteadyTime()
    monkeypatch.setattr(session_module, "time", clock)
    return clock


@pytest.fixture(autouse=True)
def _own_cockpit_home(monkeypatch, tmp_path_factory):
    """No test reads or writes the developer's own settings, themes or saved grants (a test
    that needs a particular home sets COCKPIT_HOME itself)."""
    monkeypatch.setenv("COCKPIT_HOME", str(tmp_path_factory.mktemp("cockpit-home")))


@pytest.fixture
def journal_path(tmp_path):
    return tmp_path / "run.jsonl"
