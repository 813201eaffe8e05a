"""The `elicitation/create` half of the ACP client: an agent's questions, put to the human.

`ElicitationCalls` answers them for `AcpClient`, whose `create_elicitation` and
`complete_elicitation` (the methods the SDK calls) hand over to it; it numbers the questions.
The client advertises form and URL elicitation in its capabilities, and the connection is made
with the SDK's unstable protocol switched on, without which the SDK answers "method not found".

A question goes through the run's control plane (`RunContext.ask_question`: the Session
journals it, asks the human or declines at once when none is present, checks the answer against
the fields). A link (URL mode) is asked with its URL as the agent sent it and no fields; the
cockpit shows it escaped and opens it only on the human's key, and the human's accept, decline or
cancel goes back as the answer (an accept carries no content). What the cockpit does not take is
declined at once, and journaled as asked and declined all the same: a link longer than
`URL_LIMIT`, and a form it cannot show truthfully (see `questions.fields_from_schema`). A
question arriving when no task runs, or after a cancel, is answered `cancel`.
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
from engine_adapter.events import Answer, QuestionAnswered, QuestionAsked

__all__ = ["ElicitationCalls"]

MESSAGE_LIMIT = 4_000
URL_LIMIT = 16_384
"""The longest link the cockpit asks about (a longer one is declined: nobody reads it whole)."""

Response = AcceptElicitationResponse | DeclineElicitationResponse | CancelElicitationResponse


def _response(answer: Answer, *, content: bool) -> Response:
    """The human's answer as the agent's: accept (with the form's values when `content`; a
    link's accept carries none), decline, or cancel."""
    if answer.action == "accept":
        return AcceptElicitationResponse(action="accept", content=dict(answer.values or {})
                                         if content else None)
    if answer.action == "decline":
        return DeclineElicitationResponse(action="decline")
    return CancelElicitationResponse(action="cancel")


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
                  call_id: str | None, url: str | None = None) -> Response:
        """Journal a question the cockpit declines without asking anyone."""
        run.emit(QuestionAsked(question_id=question_id, message=message, fields=[],
                               call_id=call_id, url=url))
        run.emit(QuestionAnswered(question_id=question_id, action="decline", via="auto",
                                  reason=why))
        return DeclineElicitationResponse(action="decline")

    async def create(self, message: str, mode: ElicitationMode) -> Response:
        """Ask the human the agent's question (a form, or a link); see the module docstring."""
        run = self._run()
        if run is None or not run.live or run.token.cancelled:
            return CancelElicitationResponse(action="cancel")
        question_id = self._question_id()
        text = clean(message, MESSAGE_LIMIT)
        call_id = mode.tool_call_id if isinstance(
            mode, ElicitationFormSessionMode | ElicitationUrlSessionMode) else None
        call_id = clean(call_id, 200) if call_id is not None else None
        if isinstance(mode, ElicitationUrlSessionMode | ElicitationUrlRequestMode):
            return await self._link(run, question_id, text, str(mode.url), call_id)
        try:
            fields, left_out = fields_from_schema(mode.requested_schema)
        except UnsupportedForm as exc:
            return self._declined(run, question_id, text, f"the cockpit cannot show this "
                                  f"form: {exc}", call_id)
        if left_out:
            text += ("\n(optional fields of a kind the cockpit cannot show were left out: "
                     + ", ".join(left_out) + ")")
        answer = await run.ask_question(question_id, text, fields, call_id=call_id)
        return _response(answer, content=True)

    async def _link(self, run: RunContext, question_id: str, text: str, url: str,
                    call_id: str | None) -> Response:
        """A link to open: the URL is kept as sent (what the human may open is what the
        journal says); every view escapes it."""
        if len(url) > URL_LIMIT:
            return self._declined(run, question_id, text, f"the link is {len(url)} characters "
                                  f"long (at most {URL_LIMIT} are asked about)", call_id,
                                  url=url[:URL_LIMIT])
        answer = await run.ask_question(question_id, text, [], call_id=call_id, url=url)
        return _response(answer, content=False)  # accept: opened, or the human will

    def complete(self, elicitation_id: str) -> None:
        """A link question finished on the agent's side: nothing to do (its answer went back
        when the human gave it)."""
        return None
