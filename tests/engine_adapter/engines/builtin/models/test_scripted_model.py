"""The scripted model: loading scenario files, reacting to outcomes, pacing."""

from __future__ import annotations

import asyncio
import shlex
import sys

import pytest
from support.builtin_runs import end, of_type, run_steps, scenario
from support.event_loop import run

from engine_adapter.engines.builtin import ScenarioError, ScriptedModel, load_scenario
from engine_adapter.engines.builtin.models import (
    DecisionFeedback,
    ModelRequest,
    RawDecision,
    TextDelta,
    ToolResult,
    Usage,
    UserMessage,
    scenario_names,
)


def test_the_shipped_scenarios_load() -> None:
    assert {"fix_failing_test", "followup"} <= set(scenario_names())
    demo = load_scenario("fix_failing_test")
    assert demo.model == "scripted-demo" and demo.task
    run_tests = next(s for s in demo.steps if s.id == "run-tests")
    assert run_tests.decision["input"]["command"] == f"{shlex.quote(sys.executable)} -m unittest"


@pytest.mark.parametrize(("data", "message"), [
    ({"step": []}, "no steps"),
    ({"step": [{"say": "hi"}]}, "exactly one of"),
    ({"step": [{"tool": "list_dir", "finish": "x"}]}, "exactly one of"),
    ({"step": [{"finish": "x", "tokens": [1]}]}, "tokens"),
    ({"step": [{"tool": "list_dir", "on_denied": {"then": "nowhere"}}]}, "no step 'nowhere'"),
])
def test_bad_scenarios_are_reported(data, message) -> None:
    with pytest.raises(ScenarioError, match=message):
        load_scenario(data)


def test_unknown_and_broken_scenario_files(tmp_path) -> None:
    with pytest.raises(ScenarioError, match="no scenario 'nope'"):
        load_scenario("nope")
    broken = tmp_path / "broken.toml"
    broken.write_text("[[step]\n")
    with pytest.raises(ScenarioError, match=r"broken\.toml"):
        load_scenario(broken)


def collect(model: ScriptedModel, transcript=()) -> list:
    async def main() -> list:
        request = ModelRequest(task="t", turn=1, phase="investigate",
                               transcript=(UserMessage("t"), *transcript), tools=())
        return [out async for out in model.respond(request)]
    return run(main())


def test_a_reply_streams_thought_then_message_then_usage_then_decision() -> None:
    model = ScriptedModel(load_scenario(scenario([
        {"thought": "Hmm, let me see.", "say": "Looking at the layout now.", "tokens": [7, 3],
         "tool": "list_dir", "input": {"path": "."}}],
        pacing={"think": 0, "chunk_delay": 0, "chunk_words": 2})), speed=0)
    outputs = collect(model)
    texts = [(o.channel, o.text) for o in outputs if isinstance(o, TextDelta)]
    assert "".join(t for c, t in texts if c == "thought") == "Hmm, let me see."
    assert "".join(t for c, t in texts if c == "message") == "Looking at the layout now."
    assert len(texts) == 2 + 3  # two words a chunk
    assert isinstance(outputs[-2], Usage) and (outputs[-2].input_tokens,
                                               outputs[-2].output_tokens) == (7, 3)
    assert isinstance(outputs[-1], RawDecision)
    assert outputs[-1].value == {"action": "tool", "tool": "list_dir", "input": {"path": "."}}


def test_pacing_is_divided_by_speed(monkeypatch) -> None:
    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", fake_sleep)
    data = scenario([{"say": "one two", "finish": "x"}],
                    pacing={"think": 1.0, "chunk_delay": 0.5, "chunk_words": 1})
    collect(ScriptedModel(load_scenario(data), speed=2))
    assert slept == [0.5, 0.25, 0.25]
    slept.clear()
    collect(ScriptedModel(load_scenario(data), speed=0))
    assert slept == []


def step_after(model: ScriptedModel, last) -> tuple[str, object]:
    outputs = collect(model, (last,))
    message = "".join(o.text for o in outputs if isinstance(o, TextDelta) and
                      o.channel == "message")
    return message, outputs[-1].value


def test_reactions_to_denials_and_failures() -> None:
    steps = [
        {"id": "a", "say": "A.", "tool": "list_dir",
         "on_denied": {"say": "No listing then.", "then": "c"}, "on_failed": "retry"},
        {"id": "b", "say": "B.", "tool": "list_dir"},
        {"id": "c", "say": "C.", "tool": "list_dir"},
    ]
    model = ScriptedModel(load_scenario(scenario(steps)), speed=0)
    collect(model)  # plays "a"
    message, _ = step_after(model, ToolResult("c1", "list_dir", "denied", error="denied"))
    assert message == "No listing then. C."

    model = ScriptedModel(load_scenario(scenario(steps)), speed=0)
    collect(model)
    message, _ = step_after(model, ToolResult("c1", "list_dir", "failed", error="boom"))
    assert message == "A."  # retried

    model = ScriptedModel(load_scenario(scenario(steps)), speed=0)
    collect(model)
    message, _ = step_after(model, DecisionFeedback("bad"))
    assert message == "B."  # the corrected decision comes next


def test_a_denial_without_a_plan_gives_up() -> None:
    model = ScriptedModel(load_scenario(scenario([{"tool": "shell"}, {"finish": "x"}])), speed=0)
    collect(model)
    message, decision = step_after(model, ToolResult("c1", "shell", "denied"))
    assert decision == {"action": "finish", "result": message, "success": False}
    assert "shell" in message
    # and it stays over: another call finishes again rather than replaying the script
    _, again = step_after(model, ToolResult("c1", "shell", "denied"))
    assert again["action"] == "finish" and again["success"] is False


def test_running_out_of_steps_finishes_failed(tmp_path) -> None:
    session = run_steps(tmp_path, [{"tool": "list_dir", "input": {}}])
    assert end(session).status == "failed"
    assert "end of my script" in end(session).error
    assert len(of_type(session, "turn_start")) == 2
