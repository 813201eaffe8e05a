"""Talking to the agent while it works: `Steering`, the live cockpit's part in it (the message
box, the messages queued and sent, the next task, the agent's questions and a denial's reason),
and `PromptQueue`, which decides when each queued message is sent.

`Steering` is owned by `CockpitApp`, which forwards the message box's and the question form's
messages to it (Textual collects message handlers from the app class itself). Like every control
of the live cockpit, it acts only through the Session's control plane: `cancel` (send now),
`resolve_approval(..., reason=)`, `answer_question`, and a new task through the app's
`start_next`; the widgets only post messages.

The rules (the live cockpit applies them; this class holds no Textual and is tested alone):

- A message typed while a task runs is queued; queued messages are sent one at a time, each as
  the next task, oldest first, once the running task has ended.
- "Send now" puts the message first and stops the running task (`Session.cancel`); when it has
  ended, that message is sent at once, however the task ended.
- A task that ended otherwise than `completed` (failed, or cancelled by the human) holds the
  queue: nothing is sent behind the human's back into a failed or stopped conversation. An empty
  enter sends the next one; a new message the human sends goes first, and the queue moves on
  again once a task completes.
- Any queued message can be taken back before it is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from textual.app import App
from textual.widgets import Input, TextArea

from cockpit.live.slash import offered_commands
from cockpit.widgets import MESSAGE_LIMIT, Composer, QuestionForm, Transcript, clean_line
from engine_adapter import Session
from engine_adapter.events import AnswerError
from engine_adapter.view import RunView

__all__ = ["SEND_NOW_REASON", "PromptQueue", "Steering"]

SEND_NOW_REASON = "stopped by the user to send a new message"


class Steering:
    """The message box, the queue, the agent's questions and a denial's reason, for one app.

    Args:
        app: The live cockpit (its widgets are found by type, its notices are its own).
        session: The current task's Session.
        view: The folded view as it stands.
        offered: Whether a conversation can go on (the app can start a next task).
        quitting: Whether the app is quitting (nothing more is offered or sent).
        start_next: Starts the next task with a text; False if it could not start.
        flush: Delivers what was folded at once (the pump's flush), so an answer's effect is
            drawn on the next frame.
    """

    def __init__(self, app: App[object], *, session: Callable[[], Session],
                 view: Callable[[], RunView], offered: Callable[[], bool],
                 quitting: Callable[[], bool], start_next: Callable[[str], bool],
                 flush: Callable[[], None]) -> None:
        self.app = app
        self._session, self._view = session, view
        self._offered, self._quitting = offered, quitting
        self._start_next, self._flush = start_next, flush
        self.queue = PromptQueue()
        self._ended_tasks = 0  # tasks whose end was seen (the queue moves on once per task)
        self._asked = False  # a call asked for approval in this task: the box's rows stay

    @property
    def composer(self) -> Composer:
        """The message box."""
        return self.app.query_one(Composer)

    @property
    def question_form(self) -> QuestionForm:
        """The form of the agent's open question."""
        return self.app.query_one(QuestionForm)

    def changed(self, view: RunView, *, questions: bool, ended: bool, tasks: int) -> None:
        """After a frame: the box, the question form's focus, a finished task's queue (`tasks`:
        how many tasks the conversation has had)."""
        self.show(view)
        if questions:
            self._question_changed()
        composer = self.composer
        if composer.reason_for is not None and composer.reason_for not in view.pending:
            composer.drop_reason()
            self.app.notify("the call was answered before the reason was sent", timeout=4)
            if composer.box.has_focus and not composer.box.can_focus:
                self.back_to_transcript()  # (standing by again: the box takes no focus)
        if ended:
            self._after_task(view, tasks)

    def show(self, view: RunView) -> None:
        """The message box as things stand: offered or not, the run live or not, the queue.
        From a task's first approval until it ends the box stands by (its rows reserved even
        when nothing can be sent), so that `n` opens the reason box without a new layout."""
        live = not self._session().done
        self._asked = live and (self._asked or bool(view.pending))
        self.composer.show(offer=self._offered() and not self._quitting(),
                           live=live, queued=self.queue.items, held=self.queue.held,
                           commands=offered_commands(view.commands), standby=self._asked,
                           waiting=bool(view.pending))

    # Keys ---------------------------------------------------------------------------------
    def focus_composer(self) -> None:
        """Put the focus in the message box."""
        self.composer.box.focus()

    def start_command(self) -> None:
        """Start typing one of the agent's commands."""
        box = self.composer.box
        box.value = "/"
        box.cursor_position = 1
        box.focus()

    def key_applies(self, action: str) -> bool | None:
        """Whether a steering key applies now (None: not a steering key)."""
        if action in ("focus_composer", "start_command"):
            # Typing in a box (the message box, a question's field): these keys are text.
            offered = self._offered() and not isinstance(self.app.focused, Input | TextArea)
            return offered  # (the cockpit's own commands are always there: /help)
        if action in ("approve", "deny", "approve_always", "grant_scope") and \
                self._view().questions:
            return False  # the question comes first; its approval waits behind it
        return None

    # The box --------------------------------------------------------------------------------
    def submitted(self, text: str) -> None:
        """Enter in the box: queue `text` while the agent works, else start the next task
        with it (an empty enter: the next queued message)."""
        if not self._offered():
            return
        if not self._session().done:
            if text:
                self.queue.add(text)
                self.app.notify(f"queued: {clean_line(text, 80)}", timeout=3, markup=False)
            self.show(self._view())
            return
        text = text or self.queue.release() or ""
        if text:
            self._start_next(text)
        self.show(self._view())

    def send_now(self, text: str) -> None:
        """Stop the agent's turn and send `text` at once (at once if no turn runs)."""
        if not self._offered():
            return
        session = self._session()
        if session.done:
            self._start_next(text)
            return
        self.queue.send_now(text)
        session.cancel(SEND_NOW_REASON)
        self.app.notify("stopping the turn to send your message…", timeout=3)
        self._flush()
        self.show(self._view())

    def unqueue(self, index: int) -> None:
        """Take back the queued message at `index`."""
        taken = self.queue.remove(index)
        if taken is not None:
            self.app.notify(f"taken back: {clean_line(taken, 80)}", timeout=3, markup=False)
        self.show(self._view())

    def _after_task(self, view: RunView, tasks: int) -> None:
        """A task ended: send the next queued message, unless the queue is held."""
        if self._ended_tasks >= tasks or not self._session().done:
            return
        self._ended_tasks = tasks
        if not self._offered() or self._quitting():
            return
        text = self.queue.after_task(view.status)
        if text is not None:
            self.app.call_later(self._start_next, text)
        elif len(self.queue):
            self.app.notify(f"{len(self.queue)} queued message(s) held: the task "
                            f"{view.status}. Enter on an empty message box sends the next.",
                            timeout=8)
        self.show(view)
        if text is None:
            self._focus_for_next_task()

    def _focus_for_next_task(self) -> None:
        """The task ended: the focus goes to the message box, so typing the next task just
        works (keys on the transcript are hotkeys, and the text would be lost) — unless the
        human is elsewhere on purpose (another screen, a question's field, the queue)."""
        app = self.app
        focused = app.focused
        if len(app.screen_stack) > 1 or not self.composer.display:
            return
        if focused is None or isinstance(focused, Transcript):
            self.composer.box.focus()

    # A denial's reason ------------------------------------------------------------------------
    def ask_deny_reason(self, approval_id: str) -> None:
        """`n`: ask for the reason in the message box; enter denies."""
        self.composer.ask_reason(approval_id)

    def reason(self, approval_id: str, text: str | None) -> None:
        """The reason was given (None: the human went back without denying)."""
        if text is not None:
            self._session().resolve_approval(approval_id, allow=False, reason=text or None)
            self._flush()
        self.back_to_transcript()

    # Questions ------------------------------------------------------------------------------
    def _question_changed(self) -> None:
        form = self.question_form
        if form.question is None:
            if form.has_focus_within:
                self.back_to_transcript()
            return
        box = self.composer.box
        if not (box.has_focus and box.value.strip()) and not form.has_focus_within:
            self.app.call_after_refresh(form.focus_first)  # its fields are mounted by then

    def answered(self, question_id: str, values: dict[str, object]) -> None:
        """The human answered the question; a value the question refuses is shown on it."""
        try:
            self._session().answer_question(question_id, "accept", values)
        except AnswerError as exc:
            self.question_form.show_error(str(exc))
            return
        self._flush()

    def declined(self, question_id: str) -> None:
        """The human declined to answer."""
        self._session().answer_question(question_id, "decline")
        self._flush()

    def back_to_transcript(self) -> None:
        """The focus back on the transcript."""
        self.app.query_one(Transcript).focus()


class PromptQueue:
    """The queued messages of one conversation, oldest first, and the send-now flag."""

    def __init__(self) -> None:
        self._items: list[str] = []
        self.interrupting = False  # the head was sent "now": send it however the task ends
        self.held = False  # the last task did not complete: wait for the human

    @property
    def items(self) -> Sequence[str]:
        """The queued messages, oldest first."""
        return tuple(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def add(self, text: str) -> None:
        """Queue `text` (cut to `MESSAGE_LIMIT` characters) behind the others."""
        self._items.append(text[:MESSAGE_LIMIT])

    def send_now(self, text: str) -> None:
        """Put `text` first; the running task is being stopped for it."""
        self._items.insert(0, text[:MESSAGE_LIMIT])
        self.interrupting = True

    def remove(self, index: int) -> str | None:
        """Take back the message at `index` (None: no such message)."""
        if not 0 <= index < len(self._items):
            return None
        if index == 0:
            self.interrupting = False
        return self._items.pop(index)

    def after_task(self, status: str) -> str | None:
        """The task ended with `status`: the message to send now, or None (queue empty, or
        held because the task did not complete)."""
        if not self._items:
            self.interrupting = self.held = False
            return None
        if status == "completed" or self.interrupting:
            self.interrupting = self.held = False
            return self._items.pop(0)
        self.held = True
        return None

    def release(self) -> str | None:
        """The human asked for the next message of a held queue (an empty enter)."""
        self.held = self.interrupting = False
        return self._items.pop(0) if self._items else None
