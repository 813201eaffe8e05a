"""The `elicitation/create` half of the ACP client: an agent's questions, put to the human.

`ElicitationCalls` answers them for `AcpClient`, whose `create_elicitation` and
`complete_elicitation` (the methods the SDK calls) hand over to it; it numbers the questions.
The client advertises form elicitation in its capabilities, and the connection is made with the
SDK's unstable protocol switched on, without which the SDK answers "method not found".

A form question goes through the run's control plane (`RunContext.ask_question`: the Session
journals it, asks the human or declines at once when none is present, checks the answer against
the fields). What the cockpit does not take is declined at once, and journaled as asked and
declined all the same: a link to open (URL mode: the cockpit opens nothing for an agent), and a
form it cannot show truthfully (see `questions.fields_from_schema`). A question arriving when no
task runs, or after a cancel, is answered `cancel`.
"""

from __future__ import annotations

from collections.abc import Callable

from acp.schema import (
    AcceptElicitationResponse,
    CancelElicitationResponse,
    DeclineElicitationResponse,
    ElicitationFormSessionMode,
    ElicitationMode,
    ElicitationUrlRequestMode,
    ElicitationUrlSessionMode,
)

from engine_adapter.context import RunContext
from engine_adapter.engines.acp.client.questions import UnsupportedForm, fields_from_schema
from engine_adapter.engines.acp.text import clean
from engine_adapter.events import QuestionAnswered, QuestionAsked

__all__ = ["ElicitationCalls"]

MESSAGE_LIMIT = 4_000

Response = AcceptElicitationResponse | DeclineElicitationResponse | CancelElicitationResponse


class ElicitationCalls:
    """`elicitation/*` for one client; `run()` gives the live run's context, or None between
    tasks."""

    def __init__(self, run: Callable[[], RunContext | None]) -> None:
        self._run = run
        self.asked = 0  # questions put so far (they are numbered `q-1`, `q-2`, …)

    def _question_id(self) -> str:
        self.asked += 1
        return f"q-{self.asked}"

    @staticmethod
    def _declined(run: RunContext, question_id: str, message: str, why: str,
                  call_id: str | None) -> Response:
        """Journal a question the cockpit declines without asking anyone."""
        run.emit(QuestionAsked(question_id=question_id, message=message, fields=[],
                               call_id=call_id))
        run.emit(QuestionAnswered(question_id=question_id, action="decline", via="auto",
                                  reason=why))
        return DeclineElicitationResponse(action="decline")

    async def create(self, message: str, mode: ElicitationMode) -> Response:
        """Ask the human the agent's question (form mode); see the module docstring."""
        run = self._run()
        if run is None or not run.live or run.token.cancelled:
            return CancelElicitationResponse(action="cancel")
        question_id = self._question_id()
        text = clean(message, MESSAGE_LIMIT)
        call_id = mode.tool_call_id if isinstance(
            mode, ElicitationFormSessionMode | ElicitationUrlSessionMode) else None
        call_id = clean(call_id, 200) if call_id is not None else None
        if isinstance(mode, ElicitationUrlSessionMode | ElicitationUrlRequestMode):
            url = clean(str(mode.url), 2_000)
            return self._declined(run, question_id, f"{text}\n(link: {url})" if url else text,
                                  "the cockpit does not open links for an agent", call_id)
        try:
            fields, left_out = fields_from_schema(mode.requested_schema)
        except UnsupportedForm as exc:
            return self._declined(run, question_id, text, f"the cockpit cannot show this "
                                  f"form: {exc}", call_id)
        if left_out:
            text += ("\n(optional fields of a kind the cockpit cannot show were left out: "
                     + ", ".join(left_out) + ")")
        answer = await run.ask_question(question_id, text, fields, call_id=call_id)
        if answer.action == "accept":
            return AcceptElicitationResponse(action="accept", content=dict(answer.values or {}))
        if answer.action == "decline":
            return DeclineElicitationResponse(action="decline")
        return CancelElicitationResponse(action="cancel")

    def complete(self, elicitation_id: str) -> None:
        """A link question finished on the agent's side: nothing to do (none are opened)."""
        return None
