"""The built-in engine's models: the interface a model meets, and the models behind it.

- `base`: the interface (`Model`, `ModelRequest`, the outputs) and how a decision is read.
- `scripted`: `ScriptedModel`, which plays a scenario file (`scenarios/*.toml`) offline; what
  `cockpit demo` and most tests run.
- `openai`: `OpenAIModel`, any OpenAI-compatible Chat Completions server (import it from
  `engine_adapter.engines.builtin.models.openai`: it loads the SDK).
"""

from engine_adapter.engines.builtin.models.base import (
    Decision,
    DecisionFeedback,
    DecisionParseError,
    Model,
    ModelError,
    ModelReply,
    ModelRequest,
    RawDecision,
    Retrying,
    TextDelta,
    ToolResult,
    ToolSpec,
    TranscriptEntry,
    Usage,
    UserMessage,
    parse_decision,
)
from engine_adapter.engines.builtin.models.scripted import (
    Scenario,
    ScenarioError,
    ScriptedModel,
    load_scenario,
    scenario_names,
)

__all__ = [
    "Decision",
    "DecisionFeedback",
    "DecisionParseError",
    "Model",
    "ModelError",
    "ModelReply",
    "ModelRequest",
    "RawDecision",
    "Retrying",
    "Scenario",
    "ScenarioError",
    "ScriptedModel",
    "TextDelta",
    "ToolResult",
    "ToolSpec",
    "TranscriptEntry",
    "Usage",
    "UserMessage",
    "load_scenario",
    "parse_decision",
    "scenario_names",
]
