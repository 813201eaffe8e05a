"""The built-in engine: a small but real agent loop over a pluggable model.

- `loop.BuiltinRunner` — the `AgentRunner`: turns, phases, tiers, approvals, verification.
- `tools` — the tools and their tiers (shell commands' tiers: `engine_adapter.shell`);
  `workspace.Workspace` — path confinement; `process.run_process` — commands, for real.
- `models` — the model interface (`Model`, `ModelRequest`, outputs), `ScriptedModel` (the
  offline model that plays `models/scenarios/*.toml`) and `OpenAIModel` (`models/openai`:
  imported on first use here, as the SDK takes a while to load).
- `demo` — the sample project (`sample_project/`) in a fresh workspace, ready to run.
- `conversation` — what a task carries on from the tasks before it (rewound, or resumed from a
  journal: `seed`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine_adapter.engines.builtin.demo import (
    demo_runner,
    demo_task,
    make_workspace,
    release_workspace,
)
from engine_adapter.engines.builtin.loop import BuiltinRunner
from engine_adapter.engines.builtin.models import (
    Model,
    ModelRequest,
    RawDecision,
    Scenario,
    ScenarioError,
    ScriptedModel,
    TextDelta,
    Usage,
    load_scenario,
)
from engine_adapter.engines.builtin.workspace import Workspace, WorkspaceError

if TYPE_CHECKING:
    from engine_adapter.engines.builtin.models.openai import OpenAIModel

__all__ = [
    "BuiltinRunner",
    "Model",
    "ModelRequest",
    "OpenAIModel",
    "RawDecision",
    "Scenario",
    "ScenarioError",
    "ScriptedModel",
    "TextDelta",
    "Usage",
    "Workspace",
    "WorkspaceError",
    "demo_runner",
    "demo_task",
    "load_scenario",
    "make_workspace",
    "release_workspace",
]


def __getattr__(name: str) -> object:
    if name == "OpenAIModel":
        from engine_adapter.engines.builtin.models.openai import OpenAIModel

        return OpenAIModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
