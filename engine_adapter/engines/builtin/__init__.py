"""The built-in engine: a small but real agent loop over a pluggable model.

- `loop.BuiltinRunner` — the `AgentRunner`: turns, phases, tiers, approvals, verification.
- `tools` — the tools and their tiers (shell commands' tiers: `engine_adapter.shell`);
  `workspace.Workspace` — path confinement; `process.run_process` — commands, for real.
- `model` — the model interface (`Model`, `ModelRequest`, outputs, `parse_decision`).
- `scripted.ScriptedModel` — the offline model that plays `scenarios/*.toml`.
- `demo` — the sample project (`sample_project/`) in a fresh workspace, ready to run.
"""

from engine_adapter.engines.builtin.demo import demo_runner, demo_task, make_workspace
from engine_adapter.engines.builtin.loop import BuiltinRunner
from engine_adapter.engines.builtin.model import Model, ModelRequest, RawDecision, TextDelta, Usage
from engine_adapter.engines.builtin.scripted import (
    Scenario,
    ScenarioError,
    ScriptedModel,
    load_scenario,
)
from engine_adapter.engines.builtin.workspace import Workspace, WorkspaceError
from engine_adapter.shell import Classification, classify_command

__all__ = [
    "BuiltinRunner",
    "Classification",
    "Model",
    "ModelRequest",
    "RawDecision",
    "Scenario",
    "ScenarioError",
    "ScriptedModel",
    "TextDelta",
    "Usage",
    "Workspace",
    "WorkspaceError",
    "classify_command",
    "demo_runner",
    "demo_task",
    "load_scenario",
    "make_workspace",
]
