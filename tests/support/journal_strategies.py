"""Journals drawn by hypothesis for the adversarial replay checks (tasks, streams in tricky shapes,
tools, approvals, junk lines, seq gaps), the slow paths their fast ones are checked against, and
the settings those checks run with."""

from __future__ import annotations

import json
import os

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from engine_adapter import (
    AgentEnd,
    AgentStart,
    ApprovalRequested,
    ApprovalResolved,
    CancellationObserved,
    DecisionError,
    ModelUpdate,
    ModelUsage,
    PhaseChanged,
    TaskEscalated,
    ToolEnd,
    ToolStart,
    TurnEnd,
    TurnStart,
    VerificationEnd,
    VerificationPlanFrozen,
    VerificationStart,
)
from engine_adapter.events import HistoryMessage, QuestionAnswered, QuestionAsked, dump_event
from engine_adapter.journal.line_kinds import parse_line
from engine_adapter.replay import JournalReplay
from engine_adapter.view import RunFold
from support.journals import summary

SETTINGS = settings(max_examples=int(os.environ.get("ADVERSARIAL_EXAMPLES", "120")), deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow,
                                           HealthCheck.data_too_large])


# Texts aimed at the byte counts of the stream check and at the line scanner.
TRICKY = [
    '","channel":"message"}', '","channel":"thought"}', ',"turn":1,"text":"',
    ',"turn":2,"text":"', ',"turn":null,"text":"', ',"turn":3,"text":"', "\\", '"', '\\"',
    "\\n", "\n", "\r\n", "\u2028", "\u2029", "é—✓", "𝄞", "\x00", "\x1b[31m",
    '\n{"type":"agent_end","status":"failed"}', '{"type":"model_update"', '"ok":false',
    '"status":"failed"', "x" * 300,
]


texts = st.one_of(st.text(max_size=8), st.sampled_from(TRICKY))


def stamp(event, seq: int, session: str = "s"):
    return event.model_copy(update={"seq": seq, "ts": 1000.0 + seq, "session_id": session})


CALL_IDS = ["c1", "c2", "c3"]
CHECK_IDS = ["k1", "k2", "k3"]


@st.composite
def journals(draw) -> list[bytes]:
    """Raw lines of a journal: tasks (call ids reused), streams in tricky shapes, tools,
    approvals (some never resolved), re-planned checks, junk lines, seq gaps and sessions
    concatenated (seq restarting)."""
    lines: list[bytes] = []
    seq, session, turn = 0, "s1", 1

    def emit(event, *, raw=None):
        nonlocal seq
        lines.append(raw(stamp(event, seq, session)) if raw else dump_event(stamp(event, seq,
                                                                                session)))
        seq += 1

    kinds = ["stream"] * 4 + ["task", "tool", "approval", "pending", "end", "turn", "plan",
                              "check", "misc", "junk", "gap", "question", "history"]
    for _ in range(draw(st.integers(1, 14))):
        kind = draw(st.sampled_from(kinds))
        if kind == "task":
            if draw(st.booleans()):  # another session appended to the same file
                seq, session = draw(st.integers(0, 3)), session + "x"
            emit(AgentStart(task=draw(texts), engine="e", model=draw(st.none() | texts)))
            turn = 1
            emit(TurnStart(turn=turn))
        elif kind == "stream":
            channel = draw(st.sampled_from(["message", "thought"]))
            stream_turn = draw(st.sampled_from([turn, turn, None, turn + 1]))
            shape = draw(st.sampled_from(["pydantic"] * 4 + ["extra", "reordered"]))
            for text in draw(st.lists(texts, min_size=1, max_size=12)):
                event = ModelUpdate(text=text, turn=stream_turn, channel=channel)
                if shape == "extra":  # a newer writer's extra field (no nested event)
                    event = ModelUpdate(text=text, turn=stream_turn, channel=channel,
                                        meta={"n": 1, "s": "x"})
                    emit(event)
                elif shape == "reordered":  # another writer's field order
                    order = draw(st.permutations(["type", "session_id", "seq", "ts", "turn",
                                                  "text", "channel"]))

                    def reorder(e, order=order):
                        data = json.loads(dump_event(e))
                        return json.dumps({k: data[k] for k in order}, separators=(",", ":"),
                                          ensure_ascii=False).encode()
                    emit(event, raw=reorder)
                else:
                    emit(event)
        elif kind == "tool":
            call = draw(st.sampled_from(CALL_IDS))
            emit(ToolStart(call_id=call, tool="shell", tool_input={"command": "ls"}))
            if draw(st.booleans()):
                emit(ToolEnd(call_id=call, tool="shell", ok=draw(st.booleans()),
                             output=draw(texts)))
        elif kind in ("approval", "pending"):
            call = draw(st.sampled_from(CALL_IDS))
            emit(ApprovalRequested(approval_id=call, tool="shell", reason="r",
                                   tool_input={"command": "rm"},
                                   prefix=draw(st.sampled_from(["", "rm"]))))
            if kind == "approval":
                allowed = draw(st.booleans())
                emit(ApprovalResolved(approval_id=call, tool="shell", allowed=allowed,
                                      via=draw(st.sampled_from(["human", "grant", "auto"])),
                                      remember=draw(st.booleans())))
                if allowed and draw(st.booleans()):
                    emit(ToolStart(call_id=call, tool="shell", tool_input={}))
                    emit(ToolEnd(call_id=call, tool="shell", ok=draw(st.booleans())))
        elif kind == "end":
            emit(AgentEnd(status=draw(st.sampled_from(["completed", "failed", "cancelled"])),
                          result=draw(st.none() | texts)))
        elif kind == "turn":
            emit(TurnEnd(turn=turn, stop_reason=draw(st.none() | texts)))
            turn += 1
            emit(TurnStart(turn=turn))
        elif kind == "plan":
            ids = draw(st.lists(st.sampled_from(CHECK_IDS), unique=True, max_size=3))
            emit(VerificationPlanFrozen(checks=[
                {"id": i, "name": i + draw(st.sampled_from(["", "'"])),
                 "command": draw(st.sampled_from([None, "make"]))} for i in ids]))
        elif kind == "check":
            check = draw(st.sampled_from(CHECK_IDS))
            emit(VerificationStart(check_id=check, name=check))
            if draw(st.booleans()):
                emit(VerificationEnd(check_id=check, name=check, passed=draw(st.booleans()),
                                     output=draw(texts)))
        elif kind == "question":  # an agent's question, answered or left open
            question = draw(st.sampled_from(CALL_IDS))
            emit(QuestionAsked(question_id=question, message=draw(texts)))
            if draw(st.booleans()):
                emit(QuestionAnswered(question_id=question,
                                      action=draw(st.sampled_from(["accept", "decline"])),
                                      values={"a": draw(texts)}))
        elif kind == "history":  # a conversation replayed when opened again
            for text in draw(st.lists(texts, min_size=1, max_size=3)):
                emit(HistoryMessage(role=draw(st.sampled_from(["user", "agent"])), text=text))
        elif kind == "misc":
            emit(draw(st.sampled_from([
                PhaseChanged(phase="p", previous="q"), ModelUsage(input_tokens=3, cost_usd=0.5,
                                                                  model="m"),
                DecisionError(error="e", turn=turn), TaskEscalated(reason="r", target="t"),
                CancellationObserved(reason="r", turn=None)])))
        elif kind == "junk":  # not events: never positions, or positions that fold nothing
            lines.append(draw(st.sampled_from([b"", b"  ", b"not json", b'{"a":1}',
                                               b'{"type":"from_the_future","seq":7}',
                                               b'{"type":"tool_end"', b"\xff"])))
        else:
            seq += draw(st.integers(1, 3))
    return lines


def parsed_events(lines: list[bytes]) -> list:
    """For each position, the event the slow path parses there (None: not an event)."""
    return [parse_line(line) for line in lines if line.strip()]


def prefix_summaries(events: list) -> list[tuple]:
    """The summary of the fold before each event and after the last (the slow path)."""
    fold = RunFold()
    out = [summary(fold.view)]
    for event in events:
        if event is not None:
            fold.apply(event)
        out.append(summary(fold.view))
    return out


def stored_views(replay: JournalReplay) -> list:
    """Every view the replay keeps: its checkpoints and its tail's."""
    tail = [replay._tail[1]] if replay._tail is not None else []
    return [*replay._views, *tail]

