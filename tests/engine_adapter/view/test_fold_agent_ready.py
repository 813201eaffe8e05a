"""The fold of an agent run's start: `agent_start` at once (`ready=False`), then `agent_ready`
with what the agent told, folds to the same view as an older journal whose `agent_start` carried
it all; while the agent has not answered, the view says it is starting."""

from __future__ import annotations

from engine_adapter import AgentEnd, AgentInfo, AgentMode, AgentReady, AgentStart, TurnStart
from engine_adapter.view import describe, fold_events

FACTS = {
    "agent": AgentInfo(name="codex", title="Codex", version="2.6"),
    "modes": [AgentMode(id="ask"), AgentMode(id="code")],
    "acp_session_id": "s-1", "new_session": True, "mode": "ask",
    "sandbox": "unavailable", "sandbox_note": "bwrap is missing",
    "agent_sandbox": "off",
}
START = {"task": "fix it", "engine": "acp:codex", "cwd": "/w", "command": "codex-acp"}


def _stamped(*events):
    return [e.model_copy(update={"seq": i, "ts": 100.0 + i, "session_id": "r"})
            for i, e in enumerate(events)]


def _seen(view):
    return (view.task, view.engine, view.agent, view.agent_command, view.phase, view.sandbox,
            view.sandbox_note, view.agent_sandbox, view.status, view.task_index, view.starting,
            view.started_ts)


def _rows(view):
    return [(getattr(i, "kind", type(i).__name__), getattr(i, "level", None)) for i in view.items]


def test_the_new_shape_folds_as_an_older_journal_did():
    old = fold_events(_stamped(AgentStart(**START, **FACTS), TurnStart(turn=1)))
    new = fold_events(_stamped(AgentStart(**START, ready=False), AgentReady(**FACTS),
                               TurnStart(turn=1)))
    assert _seen(new) == _seen(old)
    assert _seen(new)[2:8] == ("Codex 2.6", "codex-acp", "ask", "unavailable",
                               "bwrap is missing", "off")
    # The same rows, and the new shape's "agent ready" line between the task and the warnings.
    assert _rows(old) == [("task", "info"), ("sandbox", "warning"), ("sandbox", "warning")]
    assert _rows(new) == [("task", "info"), ("agent", "info"), ("sandbox", "warning"),
                          ("sandbox", "warning")]


def test_the_view_is_starting_until_the_agent_is_ready_or_the_run_ends():
    events = _stamped(AgentStart(**START, ready=False), AgentReady(**FACTS))
    waiting = fold_events(events[:1])
    assert waiting.starting and waiting.status == "running" and waiting.agent is None
    assert waiting.started_ts == 100.0  # the status line's "starting agent … 00:12" counts from it
    assert not fold_events(events).starting
    failed = fold_events(_stamped(AgentStart(**START, ready=False),
                                  AgentEnd(status="failed", error="cannot start")))
    assert not failed.starting and failed.status == "failed"


def test_an_engine_ready_at_once_never_reads_as_starting():
    for start in (AgentStart(task="t", engine="builtin"),
                  AgentStart(task="t", engine="acp:codex", **FACTS)):  # an older journal
        assert not fold_events(_stamped(start)).starting


def test_agent_ready_names_the_agent_its_session_and_where_it_runs():
    said = describe(AgentReady(**{**FACTS, "sandbox": "workspace-write", "agent_sandbox":
                                  "workspace-write", "resumed": "session/load"}))
    assert said.line.startswith("◆ agent ready: Codex 2.6 · session s-1, reopened by "
                                "session/load · ")
    assert not said.details
    assert describe(AgentReady()).text == "the agent"
    warned = describe(AgentReady(**FACTS))
    assert len(warned.details) == 2 and "no sandbox: bwrap is missing" in warned.details[0]


def test_the_agent_own_name_replaces_the_command_name():
    view = fold_events(_stamped(AgentStart(task="t", engine="acp:python3", ready=False),
                                AgentReady(engine="acp:my-agent")))
    assert view.engine == "acp:my-agent"
    kept = fold_events(_stamped(AgentStart(task="t", engine="acp:codex", ready=False),
                                AgentReady()))
    assert kept.engine == "acp:codex"
