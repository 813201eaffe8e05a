"""`SteeringControls`: the live cockpit's part in talking to the agent while it works — the
message box (queue, send now, the next task), the agent's questions, and a denial's reason.

Mixed into `CockpitApp` (its message handlers go by name, `on_composer_submitted` and so on:
Textual collects `@on` handlers only from the app class itself). Like every control of the live
cockpit, it acts only through the Session's control plane: `cancel` (send now),
`resolve_approval(..., reason=)`, `answer_question`, and a new Session for the next task;
widgets only post messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.widgets import Input

from cockpit.live.steering import PromptQueue
from cockpit.widgets import Composer, QuestionForm, clean, clean_line
from engine_adapter.events import AnswerError
from engine_adapter.view import RunView

if TYPE_CHECKING:
    from cockpit.live.app import CockpitApp

__all__ = ["SteeringControls"]

SEND_NOW_REASON = "stopped by the user to send a new message"


class SteeringControls:
    """The message box, the queue, questions and deny reasons for `CockpitApp`."""

    queue: PromptQueue
    _ended_tasks: int

    # The parts of the screen ---------------------------------------------------------------
    @property
    def composer(self: CockpitApp) -> Composer:
        """The message box."""
        return self.query_one(Composer)

    @property
    def question_form(self: CockpitApp) -> QuestionForm:
        """The form of the agent's open question."""
        return self.display_widget.question_form

    def _steer_changed(self: CockpitApp, view: RunView, parts: int, *, questions: bool,
                       ended: bool) -> None:
        """After a frame: the box, the question form's focus, a finished task's queue."""
        self._show_composer(view)
        if questions:
            self._question_changed(view)
        if self.composer.reason_for is not None and \
                self.composer.reason_for not in view.pending:
            self.composer.drop_reason()
            self.notify("the call was answered before the reason was sent", timeout=4)
        if ended:
            self._after_task(view)

    def _show_composer(self: CockpitApp, view: RunView) -> None:
        self.composer.show(offer=self.next_session is not None and not self._quitting,
                           live=not self.session.done, queued=self.queue.items,
                           held=self.queue.held, commands=view.commands)

    # Keys ---------------------------------------------------------------------------------
    def action_focus_composer(self: CockpitApp) -> None:
        """Put the focus in the message box."""
        self.composer.box.focus()

    def action_start_command(self: CockpitApp) -> None:
        """Start typing one of the agent's commands."""
        box = self.composer.box
        box.value = "/"
        box.cursor_position = 1
        box.focus()

    def steer_key_applies(self: CockpitApp, action: str) -> bool | None:
        """Whether a steering key applies now (None: not a steering key)."""
        if action in ("focus_composer", "start_command"):
            # Typing in a box (the message box, a question's field): these keys are text.
            offered = self.next_session is not None and not isinstance(self.focused, Input)
            return offered and (action == "focus_composer" or bool(self.view.commands))
        if action in ("approve", "deny", "approve_always", "grant_scope") and self.view.questions:
            return False  # the question comes first; its approval waits behind it
        return None

    # The box --------------------------------------------------------------------------------
    def on_composer_submitted(self: CockpitApp, message: Composer.Submitted) -> None:
        if self.next_session is None:
            return
        if not self.session.done:
            if message.text:
                self.queue.add(message.text)
                self.notify(f"queued: {clean_line(message.text, 80)}", timeout=3,
                            markup=False)
            self._show_composer(self.view)
            return
        text = message.text or self.queue.release()
        if text:
            self._start_next(text)
        self._show_composer(self.view)

    def on_composer_send_now(self: CockpitApp, message: Composer.SendNow) -> None:
        if self.next_session is None:
            return
        if self.session.done:
            self._start_next(message.text)
            return
        self.queue.send_now(message.text)
        self.session.cancel(SEND_NOW_REASON)
        self.notify("stopping the turn to send your message…", timeout=3)
        self.pump.flush()
        self._show_composer(self.view)

    def on_composer_unqueue(self: CockpitApp, message: Composer.Unqueue) -> None:
        taken = self.queue.remove(message.index)
        if taken is not None:
            self.notify(f"taken back: {clean_line(taken, 80)}", timeout=3, markup=False)
        self._show_composer(self.view)

    def _after_task(self: CockpitApp, view: RunView) -> None:
        """A task ended: send the next queued message, unless the queue is held."""
        if self._ended_tasks >= len(self.sessions) or not self.session.done:
            return
        self._ended_tasks = len(self.sessions)
        if self.next_session is None or self._quitting:
            return
        text = self.queue.after_task(view.status)
        if text is not None:
            self.call_later(self._start_next, text)
        elif len(self.queue):
            self.notify(f"{len(self.queue)} queued message(s) held: the task {view.status}. "
                        "Enter on an empty message box sends the next.", timeout=8)
        self._show_composer(view)

    def _start_next(self: CockpitApp, task: str) -> bool:
        """Start the next task of the conversation with `task` (False: it could not start)."""
        if self.next_session is None or not self.session.done:
            return False
        try:
            session = self.next_session(task)
        except Exception as exc:  # a factory failure is the user's to see, not a crash
            self.notify(f"could not start the next task: {clean(str(exc), 500)}",
                        severity="error", markup=False)
            return False
        self.sessions.append(session)
        self._task_started()
        self._start(session)
        self._show_composer(self.view)
        return True

    # A denial's reason ------------------------------------------------------------------------
    def ask_deny_reason(self: CockpitApp, approval_id: str) -> None:
        """`n`: ask for the reason in the message box; enter denies."""
        self.composer.ask_reason(approval_id)

    def on_composer_reason(self: CockpitApp, message: Composer.Reason) -> None:
        if message.text is not None:
            self.session.resolve_approval(message.approval_id, allow=False,
                                          reason=message.text or None)
            self.pump.flush()
        self._back_to_transcript()

    # Questions ------------------------------------------------------------------------------
    def _question_changed(self: CockpitApp, view: RunView) -> None:
        form = self.question_form
        if form.question is None:
            if form.has_focus_within:
                self._back_to_transcript()
            return
        box = self.composer.box
        if not (box.has_focus and box.value.strip()) and not form.has_focus_within:
            self.call_after_refresh(form.focus_first)  # its fields are mounted by then

    def on_question_form_answered(self: CockpitApp, message: QuestionForm.Answered) -> None:
        try:
            self.session.answer_question(message.question_id, "accept", message.values)
        except AnswerError as exc:
            self.question_form.show_error(str(exc))
            return
        self.pump.flush()

    def on_question_form_declined(self: CockpitApp, message: QuestionForm.Declined) -> None:
        self.session.answer_question(message.question_id, "decline")
        self.pump.flush()

    def _back_to_transcript(self: CockpitApp) -> None:
        from cockpit.widgets import Transcript

        self.query_one(Transcript).focus()

    def _steer_init(self: Any) -> None:
        self.queue = PromptQueue()
        self._ended_tasks = 0
