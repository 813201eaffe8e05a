"""`QuestionDesk`: the questions of one Session waiting for the human (the control plane's half of
an agent's questions; `Session.ask_question` and `Session.answer_question` use it).

The rules are the approvals' rules: the question is journaled (`question_asked`) before anyone
sees it; with no human present it is declined at once (`via="auto"`); an attended question waits
for `answer` or the Session's `approval_timeout` (then it is declined); a cancelled run answers
every open question `cancel`. Answering a question already answered, or one never asked, does
nothing (a stale key press must not answer a different question); an answer that does not fit
the question raises `AnswerError` and answers nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from engine_adapter.events import (
    Answer,
    AnswerAction,
    BaseEvent,
    QuestionAnswered,
    QuestionAsked,
    QuestionField,
    check_answer,
)
from engine_adapter.text import cap

__all__ = ["PendingQuestion", "QuestionDesk", "unique_id"]

NO_HUMAN = "no human is present to answer"
TIMED_OUT = "nobody answered in time"
CANCELLED = "the run was cancelled"


def unique_id(wanted: str, used: set[str]) -> str:
    """`wanted`, or `wanted~N` when `used` holds it (an id the run's events already carry), and
    add it to `used`: an engine that reuses an id still gets answers to the right request.
    The Session's approval ids follow the same rule."""
    unique, n = wanted, 1
    while unique in used:
        n += 1
        unique = f"{wanted}~{n}"
    used.add(unique)
    return unique


@dataclass
class PendingQuestion:
    """A question waiting for the human: its id, its fields, and the future its asker awaits."""

    question_id: str
    fields: list[QuestionField]
    future: asyncio.Future[Answer]


class QuestionDesk:
    """Open questions of one run. `emit` journals and publishes an event (the Session's);
    `cancelled()` says whether the run is stopping (asked after each emit: a journal that failed
    to record an event stops the run, and what it could not record must not take effect)."""

    def __init__(self, emit: Callable[[BaseEvent], None],
                 cancelled: Callable[[], bool]) -> None:
        self._emit = emit
        self._cancelled = cancelled
        self._pending: dict[str, PendingQuestion] = {}
        self._used: set[str] = set()

    @property
    def pending(self) -> list[PendingQuestion]:
        """Questions waiting for the human, oldest first."""
        return list(self._pending.values())

    def _auto(self, question_id: str, action: AnswerAction, reason: str) -> Answer:
        self._emit(QuestionAnswered(question_id=question_id, action=action, via="auto",
                                    reason=reason))
        return Answer(action)

    async def ask(self, question_id: str, message: str, fields: list[QuestionField], *,
                  call_id: str | None, attended: bool, timeout: float | None,
                  url: str | None = None) -> Answer:
        """Announce the question and wait for its answer (see the module docstring)."""
        question_id = unique_id(question_id, self._used)
        self._emit(QuestionAsked(question_id=question_id, message=message, fields=fields,
                                 call_id=call_id, url=url))
        if self._cancelled():  # already, or the announcement could not be journaled
            return self._auto(question_id, "cancel", CANCELLED)
        if not attended:
            return self._auto(question_id, "decline", NO_HUMAN)
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self._pending[question_id] = PendingQuestion(question_id, list(fields), future)
        try:
            if timeout is None:
                return await asyncio.shield(future)
            return await asyncio.wait_for(asyncio.shield(future), timeout)
        except TimeoutError:
            if future.done():
                return future.result()
            self._pending.pop(question_id, None)
            return self._auto(question_id, "decline", TIMED_OUT)
        finally:
            pending = self._pending.get(question_id)
            if pending is not None and pending.future is future and not future.done():
                # The asker's task was cancelled mid-wait: nobody waits for the answer.
                self._pending.pop(question_id, None)
                self._auto(question_id, "cancel", CANCELLED)

    def answer(self, question_id: str, action: AnswerAction,
               values: Mapping[str, Any] | None = None) -> bool:
        """Answer an open question; False (nothing done) when it is not open. `values` are
        checked against its fields for `accept` (`AnswerError` if they do not fit)."""
        if action not in ("accept", "decline", "cancel"):
            raise ValueError(f"action must be accept, decline or cancel, not {action!r}")
        pending = self._pending.get(question_id)
        if pending is None:
            return False
        checked = check_answer(pending.fields, values or {}) if action == "accept" else None
        del self._pending[question_id]
        self._emit(QuestionAnswered(question_id=question_id, action=action, values=checked,
                                    via="human"))
        if not pending.future.done():
            # An answer the journal could not record (the run is stopping) is not passed on.
            pending.future.set_result(Answer("cancel") if self._cancelled()
                                      else Answer(action, checked))
        return True

    def cancel_all(self, reason: str = CANCELLED) -> None:
        """Answer every open question `cancel` (the run is being cancelled)."""
        for pending in list(self._pending.values()):
            self._pending.pop(pending.question_id, None)
            self._auto(pending.question_id, "cancel", cap(reason, chars=500))
            if not pending.future.done():
                pending.future.set_result(Answer("cancel"))

    def release(self) -> None:
        """The run is over: wake any asker still waiting (nothing more is emitted)."""
        for pending in list(self._pending.values()):
            self._pending.pop(pending.question_id, None)
            if not pending.future.done():
                pending.future.set_result(Answer("cancel"))
