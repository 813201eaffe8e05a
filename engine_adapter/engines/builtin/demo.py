"""The demo: the sample project copied into a fresh temporary workspace, and the built-in
engine with the scripted model ready to play the "fix the failing test" scenario in it."""

from __future__ import annotations

import shutil
import tempfile
from importlib import resources
from pathlib import Path

from engine_adapter.engines.builtin.earlier import Earlier
from engine_adapter.engines.builtin.loop import BuiltinRunner
from engine_adapter.engines.builtin.models import ScriptedModel, load_scenario
from engine_adapter.sandbox import Sandbox, SandboxSettings

__all__ = ["DEMO_SCENARIO", "FOLLOWUP_SCENARIO", "demo_runner", "demo_task", "make_workspace"]

DEMO_SCENARIO = "fix_failing_test"
FOLLOWUP_SCENARIO = "followup"  # any later task of the demo's session


def make_workspace(parent: str | Path | None = None) -> Path:
    """Copy the sample project (a tiny Python package with one failing unit test) into a new
    temporary directory, under `parent` if given; returns its path."""
    workspace = Path(tempfile.mkdtemp(prefix="cockpit-demo-", dir=parent))
    sample = resources.files(__package__).joinpath("sample_project")
    with resources.as_file(sample) as source:
        shutil.copytree(source, workspace, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return workspace


def demo_task() -> str:
    """The demo's task text."""
    return load_scenario(DEMO_SCENARIO).task


def demo_runner(workspace: str | Path, *, speed: float = 1.0, scenario: str = DEMO_SCENARIO,
                sandbox: Sandbox | SandboxSettings | None = None,
                earlier: Earlier | None = None) -> BuiltinRunner:
    """The built-in engine with the scripted model playing `scenario` in `workspace` (its
    commands in `sandbox`, by default `workspace-write`; `earlier`: a conversation it
    continues)."""
    return BuiltinRunner(ScriptedModel(load_scenario(scenario), speed=speed), cwd=workspace,
                         sandbox=sandbox, earlier=earlier)
