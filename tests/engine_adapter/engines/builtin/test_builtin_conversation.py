"""The built-in engine carries a conversation on from task to task (`conversation.carried`),
cut at the turn it was rewound to (`SessionState.rewind_to`): real Sessions of the real engine
and scripted model, the transcript read where the engine keeps it (`TaskState.data`)."""

from __future__ import annotations

import asyncio

from support.builtin_runs import runner

from engine_adapter import Session, SessionState, TaskState
from engine_adapter.engines.builtin.conversation import TRANSCRIPT, TURN_STARTS, carried
from engine_adapter.engines.builtin.models import (
    ModelReply,
    RawDecision,
    ToolResult,
    UserMessage,
)

READ = {"tool": "read_file", "input": {"path": "a.txt"}}
LIST = {"tool": "list_dir", "input": {}}


def _task(ws, conversation: SessionState, text: str, steps: list[dict]) -> TaskState:
    state = TaskState(task=text, earlier=tuple(conversation.tasks))
    asyncio.run(Session(runner(ws, steps), state, unattended=True).run())
    conversation.tasks.append(state)
    return state


def _kinds(entries) -> list[str]:
    return [type(e).__name__ if not isinstance(e, ToolResult) else f"result:{e.tool}"
            for e in entries]


def test_the_next_task_carries_the_conversation_on(tmp_path):
    (tmp_path / "a.txt").write_text("one\n")
    conversation = SessionState()
    first = _task(tmp_path, conversation, "look", [READ, LIST, {"finish": "looked"}])
    assert first.data[TURN_STARTS] == [1, 3, 5]
    second = _task(tmp_path, conversation, "again", [{"finish": "done"}])
    entries = second.data[TRANSCRIPT]
    assert entries[0] == UserMessage("look") and UserMessage("again") in entries
    assert _kinds(entries) == ["UserMessage", "ModelReply", "result:read_file", "ModelReply",
                               "result:list_dir", "ModelReply", "UserMessage", "ModelReply"]


def test_a_rewind_cuts_the_conversation_at_that_turn(tmp_path):
    (tmp_path / "a.txt").write_text("one\n")
    conversation = SessionState()
    first = _task(tmp_path, conversation, "look", [READ, LIST, {"finish": "looked"}])
    _task(tmp_path, conversation, "more", [{"finish": "more"}])
    conversation.rewind_to(first, 2)
    assert conversation.tasks == [first] and first.rewound_to == 2
    third = _task(tmp_path, conversation, "after the rewind", [{"finish": "ok"}])
    entries = third.data[TRANSCRIPT]
    assert _kinds(entries) == ["UserMessage", "ModelReply", "result:read_file",
                               "UserMessage", "ModelReply"]
    assert UserMessage("more") not in entries and entries[-2] == UserMessage("after the rewind")


def test_a_rewind_to_the_first_turn_keeps_only_the_task_itself(tmp_path):
    (tmp_path / "a.txt").write_text("one\n")
    conversation = SessionState()
    first = _task(tmp_path, conversation, "look", [READ, {"finish": "looked"}])
    first.rewound_to = 1
    assert carried([first]) == [UserMessage("look")]


def test_a_call_never_answered_is_answered_as_ended():
    """A real model's finishing call has its own id (OpenAI's tool calls): carried on, it gets
    an answer, or a server refuses the messages (a tool call with no tool message)."""
    finish = RawDecision({"action": "finish", "result": "done"}, call_id="call_9")
    read = RawDecision({"action": "tool", "tool": "read_file"}, call_id="call_1")
    task = TaskState(task="t", data={TRANSCRIPT: [
        UserMessage("t"), ModelReply("", None, (read,)),
        ToolResult("x", "read_file", "ok", "one", model_call_id="call_1"),
        ModelReply("", None, (finish,))]})
    entries = carried([task])
    answers = [e for e in entries if isinstance(e, ToolResult)]
    assert [(a.tool, a.model_call_id) for a in answers] == [("read_file", "call_1"),
                                                           ("finish", "call_9")]
    assert entries[-1] is answers[-1]


def test_nothing_is_carried_from_another_engines_task():
    assert carried([TaskState(task="an ACP agent's turn")]) == []
    assert carried([]) == []


def test_rewinding_to_a_task_no_longer_in_the_conversation_brings_it_back(tmp_path):
    (tmp_path / "a.txt").write_text("one\n")
    conversation = SessionState()
    first = _task(tmp_path, conversation, "look", [READ, {"finish": "looked"}])
    second = _task(tmp_path, conversation, "more", [READ, {"finish": "more"}])
    conversation.rewind_to(first, 1)
    conversation.rewind_to(second, 2)  # the workspace may go forward again: so does the talk
    assert conversation.tasks == [first, second] and second.rewound_to == 2
    replies = [e for e in carried(conversation.tasks) if isinstance(e, ModelReply)]
    assert len(replies) == 3  # the first task's two, the second's first
