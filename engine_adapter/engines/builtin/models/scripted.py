"""The scripted model: plays a scenario file, offline, as if it were a real model.

A scenario (TOML, under `scenarios/`) is a list of steps, one model call each: a pause, a
thought and a message streamed in chunks, token counts, and a decision — a tool call, a finish,
or `raw` text sent as is (to show a malformed decision). What the model does next depends on how
its last call went, as a real model's would:

    [[step]]
    id = "run-tests"
    say = "Let me run the tests."
    tool = "shell"
    input = { command = "{python} -m unittest" }
    why = "see what fails"
    tokens = [1420, 58]
    on_denied = { say = "No test run, then: I'll read the tests.", then = "next" }

`on_denied` (default: give up, the run ends `failed`) and `on_failed` (default: go on) say what
to do after that step's call was denied or failed: `then` is "next", "give_up", "retry" or
another step's id, and `say` is streamed at the start of the reply. A decision error is followed
by the next step (the corrected decision). `{python}` in a step's input is the running
interpreter. Pacing (`[pacing]`: `think`, `chunk_delay`, `chunk_words`) is divided by `speed`;
a speed of 0 plays without pauses.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import sys
import tomllib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from engine_adapter.engines.builtin.models.base import (
    DecisionFeedback,
    ModelOutput,
    ModelRequest,
    RawDecision,
    TextDelta,
    ToolResult,
    Usage,
)

__all__ = ["Pacing", "Reaction", "Scenario", "ScenarioError", "ScriptedModel", "Step",
           "load_scenario", "scenario_names"]

_NEXT, _GIVE_UP, _RETRY = "next", "give_up", "retry"


class ScenarioError(ValueError):
    """A scenario file that cannot be played; the message names the step and field."""


@dataclass(frozen=True)
class Reaction:
    """What to do after a step's call was denied or failed."""

    then: str = _NEXT
    say: str = ""


@dataclass(frozen=True)
class Step:
    """One model call of a scenario."""

    id: str
    decision: Any  # a decision dict, or raw text sent as is
    say: str = ""
    thought: str = ""
    think: float | None = None  # seconds of pause before the reply; None: the scenario's pacing
    tokens: tuple[int, int] | None = None  # input, output
    on_denied: Reaction = field(default_factory=lambda: Reaction(_GIVE_UP))
    on_failed: Reaction = field(default_factory=Reaction)


@dataclass(frozen=True)
class Pacing:
    """Seconds at speed 1: a pause before each reply, and between streamed chunks."""

    think: float = 0.6
    chunk_delay: float = 0.05
    chunk_words: int = 3


@dataclass(frozen=True)
class Scenario:
    """A played script: its model name, default task, pacing and steps."""

    name: str
    model: str
    task: str
    pacing: Pacing
    steps: tuple[Step, ...]


def scenario_names() -> list[str]:
    """The scenarios shipped with the engine."""
    folder = resources.files(__package__).joinpath("scenarios")
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def load_scenario(source: str | Path | Mapping[str, Any], *,
                  variables: Mapping[str, str] | None = None) -> Scenario:
    """A scenario from a shipped name (`"fix_failing_test"`), a TOML file path, or a dict.

    `variables` fill `{name}` in the steps' inputs; `{python}` defaults to this interpreter.
    """
    if isinstance(source, Mapping):
        data, name = dict(source), str(source.get("name", "scenario"))
    else:
        path = Path(source)
        if not path.suffix:
            path = Path(str(resources.files(__package__).joinpath("scenarios", f"{source}.toml")))
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            known = ", ".join(scenario_names())
            raise ScenarioError(f"no scenario {str(source)!r} (shipped: {known})") from None
        except tomllib.TOMLDecodeError as exc:
            raise ScenarioError(f"scenario {path}: {exc}") from None
        name = str(data.get("name", path.stem))
    values = {"python": shlex.quote(sys.executable), **(variables or {})}
    pacing = Pacing(**data.get("pacing", {}))
    steps = tuple(_step(i, raw, values) for i, raw in enumerate(data.get("step", []), 1))
    if not steps:
        raise ScenarioError(f"scenario {name!r} has no steps")
    ids = [s.id for s in steps]
    for step in steps:
        for reaction in (step.on_denied, step.on_failed):
            if reaction.then not in (_NEXT, _GIVE_UP, _RETRY) and reaction.then not in ids:
                raise ScenarioError(f"step {step.id!r}: no step {reaction.then!r} to go to")
    return Scenario(name=name, model=str(data.get("model", "scripted")),
                    task=str(data.get("task", "")), pacing=pacing, steps=steps)


def _fill(value: Any, values: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        for key, text in values.items():
            value = value.replace("{" + key + "}", text)
        return value
    if isinstance(value, list):
        return [_fill(v, values) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, values) for k, v in value.items()}
    return value


def _step(index: int, raw: Mapping[str, Any], values: Mapping[str, str]) -> Step:
    step_id = str(raw.get("id", f"step-{index}"))
    kinds = [k for k in ("tool", "finish", "raw") if k in raw]
    if len(kinds) != 1:
        raise ScenarioError(f"step {step_id!r} needs exactly one of tool, finish, raw")
    if "tool" in raw:
        decision: Any = {"action": "tool", "tool": raw["tool"],
                         "input": _fill(raw.get("input", {}), values)}
        if "why" in raw:
            decision["rationale"] = raw["why"]
    elif "finish" in raw:
        decision = {"action": "finish", "result": raw["finish"],
                    "success": raw.get("success", True)}
    else:
        decision = _fill(raw["raw"], values)
    tokens = raw.get("tokens")
    if tokens is not None and not (isinstance(tokens, list) and len(tokens) == 2
                                   and all(isinstance(t, int) for t in tokens)):
        raise ScenarioError(f"step {step_id!r}: tokens must be [input, output]")
    return Step(
        id=step_id, decision=decision, say=raw.get("say", ""), thought=raw.get("thought", ""),
        think=raw.get("think"), tokens=tuple(tokens) if tokens else None,
        on_denied=_reaction(raw.get("on_denied"), _GIVE_UP),
        on_failed=_reaction(raw.get("on_failed"), _NEXT))


def _reaction(raw: Any, default: str) -> Reaction:
    if raw is None:
        return Reaction(default)
    if isinstance(raw, str):
        return Reaction(raw)
    return Reaction(then=str(raw.get("then", default)), say=str(raw.get("say", "")))


class ScriptedModel:
    """A `Model` that plays a `Scenario`. One instance plays one run."""

    def __init__(self, scenario: Scenario, *, speed: float = 1.0) -> None:
        self.scenario = scenario
        self.name = scenario.model
        self.speed = speed
        self._last: int | None = None  # the step played by the previous call
        self._over = False  # the script has given up or run out: every reply is a finish

    async def respond(self, request: ModelRequest) -> AsyncIterator[ModelOutput]:
        """Stream the next step's thought and message, then its usage and decision."""
        index, preface, decision = self._choose(request)
        step = self.scenario.steps[index] if index is not None else None
        self._last, self._over = index, index is None
        pacing = self.scenario.pacing
        await self._pause(pacing.think if step is None or step.think is None else step.think)
        thought = step.thought if step else ""
        message = " ".join(t for t in (preface, step.say if step else "") if t)
        said: tuple[tuple[str, Literal["message", "thought"]], ...] = (
            (thought, "thought"), (message, "message"))
        for text, channel in said:
            for chunk in _chunks(text, pacing.chunk_words):
                yield TextDelta(chunk, channel)
                await self._pause(pacing.chunk_delay)
        if step is not None and step.tokens is not None:
            yield Usage(step.tokens[0], step.tokens[1], 0.0)
        else:
            yield Usage(_estimate_input(request), _estimate(thought, message, decision), 0.0)
        yield RawDecision(decision)

    def _choose(self, request: ModelRequest) -> tuple[int | None, str, Any]:
        """The step to play (None: a give-up finish), the words that react to the last call,
        and the decision."""
        steps = self.scenario.steps
        if self._over:
            return None, "", {"action": "finish", "result": "That is the end of my script.",
                              "success": False}
        if self._last is None:
            return 0, "", steps[0].decision
        previous = steps[self._last]
        last = request.transcript[-1] if request.transcript else None
        reaction = Reaction()
        if isinstance(last, ToolResult) and last.status == "denied":
            reaction = previous.on_denied
            if reaction.then == _GIVE_UP and not reaction.say:
                reaction = Reaction(_GIVE_UP, f"I can't go on without that {last.tool} call.")
        elif isinstance(last, ToolResult) and last.status == "failed":
            reaction = previous.on_failed
        elif isinstance(last, DecisionFeedback):
            reaction = Reaction(_NEXT)
        if reaction.then == _GIVE_UP:
            return None, reaction.say, {"action": "finish", "result": reaction.say,
                                        "success": False}
        if reaction.then == _RETRY:
            index = self._last
        elif reaction.then == _NEXT:
            index = self._last + 1
        else:
            index = next(i for i, s in enumerate(steps) if s.id == reaction.then)
        if index >= len(steps):
            text = "That is the end of my script."
            return None, reaction.say, {"action": "finish", "result": text, "success": False}
        return index, reaction.say, steps[index].decision

    async def _pause(self, seconds: float) -> None:
        if self.speed > 0 and seconds > 0:
            await asyncio.sleep(seconds / self.speed)


_WORD = re.compile(r"\s*\S+\s*")


def _chunks(text: str, words: int) -> list[str]:
    pieces = _WORD.findall(text)
    size = max(1, words)
    return ["".join(pieces[i:i + size]) for i in range(0, len(pieces), size)]


def _estimate(*parts: Any) -> int:
    """Tokens, roughly: a quarter of the characters."""
    return max(1, sum(len(p if isinstance(p, str) else json.dumps(p)) for p in parts) // 4)


def _estimate_input(request: ModelRequest) -> int:
    return 800 + _estimate(*(repr(entry) for entry in request.transcript))
