"""`CockpitApp`: the live cockpit over a `Session` — watch the run, steer it by keypress.

The one-way flow: the session's events are folded once (`RunFold`) by a `FramePump`, which hands
`RunDisplay` what changed at most once a frame. Keys go back only through
`Session.resolve_approval` (a denial with the human's reason), `Session.answer_question` and
`Session.cancel`. The widgets never see the Session, so the replay viewer reuses `RunDisplay` as
it is; what is live-only lives here: the approval keys, cancel, quit, the message box (the next
task, messages queued or sent at once while the agent works, the agent's questions: its
`Steering`, in `steering`), the grants screen and panel, the raw-event inspector's lookup into
`Session.history`, and the alerts (`attention`) when an approval is needed, the agent asks a
question, or the run ends or fails.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from textual import events, work
from textual.app import ComposeResult, SystemCommand
from textual.command import SimpleCommand
from textual.notifications import SeverityLevel
from textual.worker import Worker

from cockpit.base_app import EventLookup, ThemedApp
from cockpit.keys import bindings, key_label
from cockpit.live.agent_settings import SettingCommand, change_setting, setting_commands
from cockpit.live.answer_first import AnswerFirst
from cockpit.live.edit_review import review_in_editor
from cockpit.live.mention_files import WorkspaceFiles
from cockpit.live.prompts import PromptKeeper
from cockpit.live.pump import FramePump
from cockpit.live.slash import builtin_command, offered_commands, settings_for, unknown_command
from cockpit.live.steering import Steering
from cockpit.rewinds import ConversationRewinder, Rewinder
from cockpit.screens import (
    DetachScreen,
    GrantsScreen,
    HelpScreen,
    QuitScreen,
    RewindScreen,
    RunScreen,
)
from cockpit.terminate import hurry_if_hung_up
from cockpit.widgets import (
    ARM_SECONDS,
    Composer,
    EndPanel,
    KeyHints,
    QuestionForm,
    RunDisplay,
    ScopeChoice,
    Transcript,
    always_text,
    clean,
    clean_line,
    project_label,
)
from cockpit.widgets.frames import after_next_frame
from engine_adapter import JournalError, Session
from engine_adapter.events import mode_label, next_mode
from engine_adapter.grants import SCOPES, GrantFileError, Scope
from engine_adapter.text import plural
from engine_adapter.view import (
    APPROVALS,
    COMMANDS,
    QUESTIONS,
    RUN,
    ChangeSet,
    Item,
    RunFold,
    RunView,
    ToolCallItem,
)

__all__ = ["CockpitApp"]

CANCEL_WINDOW = 2.0  # seconds within which a second escape confirms the cancel
SEVERITIES: tuple[SeverityLevel, ...] = ("information", "warning", "error")


def grant_scope(name: str) -> Scope:
    """A key's scope parameter (`grant_scope('project')`) as the gate names it (an unknown
    one: this session, the narrowest)."""
    return next((scope for scope in SCOPES if scope == name), "session")


class CockpitApp(ThemedApp):
    """The live cockpit over a `Session` the caller built; starts `session.run()` on mount.

    Args:
        session: The run to watch and steer.
        theme: A theme name (see `cockpit.themes`); `None` = the remembered one.
        next_session: Builds the Session for the next task from its text (same grants, same
            session id); without it, no next-task input is offered. It may return an awaitable
            of the Session (a host's run: the host starts the task), awaited in a worker while
            the keys go on working. Its `aclose()`, if it has one (a `SessionFactory`: its
            agents are closed cleanly), is awaited at quit; its `fresh()`, if it has one, is
            what `/clear` calls (a new conversation).
        earlier: The Sessions of the conversation's tasks before `session`, ended, whose
            `run()` reads their events to their end (an attached host's run of several tasks,
            `RemoteSession.conversation`): shown before `session`'s, as the embedded cockpit
            shows every task of its conversation.
        remember_theme: Whether a theme switch is saved to `config.toml`.
        exporter: What `/export` runs (off the event loop): writes the report of the journal
            it is given and returns where (the CLI hands in `cockpit.export.export_beside`,
            which live may not import); `None`: `/export` says how to export instead.
        clock: What the elapsed time ticks by; `None` shows the time up to the last event
            (snapshot tests use that, so the picture does not depend on the wall clock).
        arm_seconds: How long a newly shown approval ignores its keys (`ARM_SECONDS`).
        arm_clock: The monotonic clock that arming is timed by (tests pass a fake one).
    """

    BINDINGS: ClassVar[list[Any]] = [*bindings("app"), *bindings("steer")]
    TITLE = "cockpit"

    def __init__(self, session: Session, *, theme: str | None = None,
                 next_session: Callable[[str], Session | Awaitable[Session]] | None = None,
                 earlier: Sequence[Session] = (),
                 remember_theme: bool = True,
                 exporter: Callable[[Path], Path] | None = None,
                 clock: Callable[[], float] | None = time.time,
                 arm_seconds: float = ARM_SECONDS,
                 arm_clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(theme=theme, remember_theme=remember_theme)
        self._elapsed_clock = clock
        self._arming = (arm_seconds, arm_clock)
        self.sessions: list[Session] = [*earlier, session]
        self._earlier = len(earlier)  # tasks shown once their events are read (`_start`)
        self.next_session = next_session
        self._next_starting = False  # an awaited next Session is on its way (`_start_next`)
        self.exporter = exporter
        self._unknown_said: str | None = None  # an unknown /word said once: enter again sends it
        self.fold = RunFold(grants=session.gate.entries())
        self.pump = FramePump(self.fold, self._deliver)
        self._cancel_armed_until = 0.0
        self._run_worker: Worker[Any] | None = None
        self._quitting = False
        self._user_cancelled = False  # the human cancelled: its end needs no alert
        self._alerted: set[str] = set()  # approval ids already alerted for
        self._asked: set[str] = set()  # question ids already alerted for (an agent's own ids)
        self._end_alerted = 0  # the last task whose end was alerted for
        self._choosing: str | None = None  # the approval whose grant scope is being chosen
        self._watched_stores: list[object] = []
        self.steering = Steering(self, session=lambda: self.session, view=lambda: self.view,
                                 offered=lambda: self.next_session is not None,
                                 quitting=lambda: self._quitting, start_next=self._start_next,
                                 flush=self.pump.flush)
        self.prompts = PromptKeeper(lambda: self.composer, self._history_note)
        self.workspace_files = WorkspaceFiles(lambda: self.composer, self._history_note)
        self.answer_first = AnswerFirst(lambda: self.display_widget, self._after_frame,
                                        self.call_later)

    # Properties --------------------------------------------------------------------------------
    @property
    def session(self) -> Session:
        """The session of the current task."""
        return self.sessions[-1]

    @property
    def view(self) -> RunView:
        """The folded view of everything so far."""
        return self.fold.view

    @property
    def display_widget(self) -> RunDisplay:
        """The run display."""
        return self.query_one(RunDisplay)

    @property
    def composer(self) -> Composer:
        """The message box."""
        return self.steering.composer

    # Building ----------------------------------------------------------------------------------
    def get_default_screen(self) -> RunScreen:
        """The run's screen: a focus move repaints only the widgets it changes (`RunScreen`)."""
        return RunScreen(id="_default")

    def compose(self) -> ComposeResult:
        yield RunDisplay(clock=self._elapsed_clock, answerable=True,
                         approval_timeout=self.session.approval_timeout,
                         arm_seconds=self._arming[0], arm_clock=self._arming[1], id="run")
        yield EndPanel(id="end-panel")
        yield Composer(id="composer")
        yield KeyHints(id="keys")

    def on_mount(self) -> None:
        if self._elapsed_clock is not None:  # the task at once, until the run's first event
            self.display_widget.status_line.starting = (self.session.state.task,
                                                        self._elapsed_clock())
        self.display_widget.show(self.view)
        self.steering.show(self.view)
        self.query_one(Transcript).focus()
        self._start(self.session, earlier=self.sessions[:self._earlier])
        self.run_worker(self._load_history(), group="history", exit_on_error=False)

    async def _load_history(self) -> None:
        """The project's earlier prompts into the box, then this run's first task after them."""
        await self.prompts.load(self.session)
        await self.prompts.keep(self.sessions[0], self.sessions[0].state.task)

    def _history_note(self, line: str) -> None:
        if self.is_running:
            self.notify(clean(line, 400), severity="warning", markup=False, timeout=8)

    def on_unmount(self) -> None:
        self.pump.close()

    def on_resize(self, event: events.Resize) -> None:
        """A shorter or taller terminal: the message box's label fits again."""
        for composer in self.query(Composer):
            composer.fit_height(event.size.height)  # (the app's own size follows a moment later)

    def _start(self, session: Session, *, earlier: Sequence[Session] = ()) -> None:
        self._watch_grants(session)
        if earlier:  # (its events arrive while the earlier tasks' are read; shown after them)
            self._run_worker = self.run_worker(session.run(), group="run", exit_on_error=False)
            self.run_worker(self._follow_after(earlier, session), group="pump",
                            exit_on_error=False)
            return
        # Subscribe before the run starts so no wake-up is missed; the pump folds from history.
        stream = session.events()
        self.pump.attach(session.history)
        self.run_worker(self.pump.follow(stream), group="pump", exit_on_error=False)
        self._run_worker = self.run_worker(session.run(), group="run", exit_on_error=False)

    async def _follow_after(self, earlier: Sequence[Session], session: Session) -> None:
        """Read the earlier tasks' events (each `run()` follows its ended task to its end),
        fold them, then follow `session` (its history so far is folded from its start)."""
        for task in earlier:
            await task.run()
            lost = getattr(task, "lost", None)
            if lost:  # (what was read is shown; the rest is in the task's journal)
                self._history_note(f"an earlier task could not be read whole: {lost}")
        stream = session.events()  # (a host's run: a stream of its history from the start)
        self.pump.attach(session.history, earlier=[task.history for task in earlier])
        await self.pump.follow(stream)

    def refresh_theme(self) -> None:
        """Re-render the run display in the new theme's colours."""
        if self.query(RunDisplay):
            self.display_widget.refresh_theme()

    # The frame -------------------------------------------------------------------------------
    async def on_event(self, event: events.Event) -> None:
        """A key's answer is drawn first: the stream's deliveries wait while it goes to its
        widget (at most `HOLD_SECONDS`), and are delivered once its binding has run (the key
        comes back here, forwarded, for the app to run it): see `FramePump.answered`. Their
        transcript rows follow the key's frame (`AnswerFirst.key_pressed`, `key_answered`)."""
        key = isinstance(event, events.Key)
        returned = key and event.is_forwarded  # (forwarding marks the event: read it first)
        if key and not returned:
            self.pump.hold()
            self.answer_first.key_pressed()
        await super().on_event(event)
        if returned:
            self.pump.answered()
            self.answer_first.key_answered()

    def _after_frame(self, callback: Callable[[], object]) -> None:
        """Call `callback` once the next frame is drawn (`after_next_frame`)."""
        after_next_frame(self, callback)

    def _key_drawn(self) -> None:
        """A key's answer is on screen: the stream and the transcript go on."""
        self.pump.release()
        self.answer_first.key_drawn()

    def _deliver(self, view: RunView, changes: ChangeSet) -> None:
        if not self.is_running:
            return
        if changes.parts & APPROVALS and self._choosing is not None:
            row = self._oldest_pending()
            if row is None or row.approval is None or row.approval.approval_id != self._choosing:
                self._set_choosing(None)  # answered or gone: the scope step ends with it
        self.answer_first.deliver(view, changes)
        parts = changes.parts
        controls = parts & (APPROVALS | RUN | QUESTIONS | COMMANDS)  # what the keys depend on
        if controls:
            self.refresh_bindings()
        if parts & (APPROVALS | QUESTIONS):
            self._alert_approvals(view)
        if parts & RUN:
            self._show_end(view)
            self._alert_end(view)
        if controls:
            self.steering.changed(view, questions=bool(parts & QUESTIONS),
                                  ended=bool(parts & RUN) and not view.live,
                                  tasks=len(self.sessions))

    # Attention -------------------------------------------------------------------------------
    def _alert_approvals(self, view: RunView) -> None:
        """Alert once for each approval or question that appeared; the title back once none
        is waiting."""
        if not view.pending and not view.questions:
            self.attention.clear()
            return
        new = [row for approval_id, row in view.pending.items()
               if approval_id not in self._alerted]
        asked = [q for question_id, q in view.questions.items()
                 if question_id not in self._asked]
        self._alerted.update(view.pending)
        self._asked.update(view.questions)
        if asked:
            self.attention.alert("question", f"the agent asks: {clean_line(asked[0].message, 80)}",
                                 title="? question · cockpit")
        if new:
            row = new[0]
            more = f" (+{len(new) - 1} more)" if len(new) > 1 else ""
            self.attention.alert("approval", f"approval needed: {clean_line(row.tool, 40)} "
                                 f"(tier {row.tier}){more}", title="⚠ approval · cockpit")

    def _alert_end(self, view: RunView) -> None:
        if view.live or view.status == "idle" or self._end_alerted == view.task_index:
            return
        self._end_alerted = view.task_index
        if view.status == "failed":
            reason = clean_line(view.error or "", 120)
            self.attention.alert("failed", f"run failed{': ' + reason if reason else ''}",
                                 title="✗ failed · cockpit")
        elif view.status == "completed" or not (self._user_cancelled or self._quitting):
            self.attention.alert("done", f"run {view.status}",
                                 title=f"{'✓' if view.status == 'completed' else '⊘'} "
                                       f"{view.status} · cockpit")
        else:
            self.attention.clear()

    def _show_end(self, view: RunView) -> None:
        journal = getattr(self.session.journal, "path", None)
        self.query_one(EndPanel).show(view, journal=str(journal) if journal else None,
                                      offer_next=self.next_session is not None
                                      and not self._quitting)

    # Approvals -------------------------------------------------------------------------------
    # A key answers the request the bar showed in the last frame drawn, once armed (see
    # `KeyArming`), never "the oldest pending one" of a view newer than the screen: two `y`
    # presses arriving together answer one request; the second says why it answered nothing.
    def _oldest_pending(self) -> ToolCallItem | None:
        pending = self.view.pending
        return next(iter(pending.values()), None) if pending else None

    def _on_screen(self, key: str) -> ToolCallItem | None:
        """The pending call a key (by its id in `cockpit.keys`) answers now, or None after
        saying why it answers nothing (a bell and a note on the keys line)."""
        bar = self.display_widget.approval_bar
        target = bar.arming.target()
        row = self.view.pending.get(target.approval_id) if target.approval_id else None
        if row is not None and row.approval is not None:
            return row
        why = target.why or "its request was already answered"
        bar.ignored(f"{key_label(self, key)} ignored: {why}")
        self.bell()
        return None

    def _answer(self, row: ToolCallItem, allow: bool, remember: bool = False,
                scope: Scope = "session", edited: str | None = None) -> None:
        approval = row.approval
        self._set_choosing(None)
        if approval is None:
            return
        # Answer the request the human is looking at (by id): a stale double press is a no-op.
        self.display_widget.approval_bar.arming.answered(approval.approval_id)
        if edited is not None:
            self.session.resolve_approval(approval.approval_id, allow=True, edited=edited)
        else:
            self.session.resolve_approval(approval.approval_id, allow=allow,
                                          remember=remember, scope=scope)
        self.pump.flush()  # its effect is drawn on the next frame, not after the next event
        # The stream's deliveries and the transcript wait for that frame (the key event's own
        # hold may already have ended with a frame drawn before this action ran).
        self.pump.hold()
        self.answer_first.key_pressed()
        self._after_frame(self._key_drawn)

    def _proposal(self, approval_id: str) -> tuple[str, str] | None:
        """The pending edit's (path, proposed text) its engine offered for review, or None."""
        proposal = getattr(self.session, "edit_proposal", None)
        return proposal(approval_id) if proposal is not None else None

    async def action_edit_proposal(self) -> None:
        """Open the proposed edit in $VISUAL/$EDITOR; what the editor saves is accepted (and
        written instead of the proposal, the agent told). Anything else accepts nothing."""
        row = self._on_screen("edit-proposal")
        if row is None or row.approval is None:
            return
        approval_id = row.approval.approval_id
        proposal = self._proposal(approval_id)
        if proposal is None:
            self.notify("this request offers no edit to review in an editor (its engine "
                        "writes the file itself)", severity="warning")
            return
        path, proposed = proposal
        outcome = await review_in_editor(self, path, proposed)
        if outcome.text is None:
            self.notify(clean(outcome.problem or "nothing was accepted", 400),
                        severity="warning", markup=False, timeout=8)
            return
        row = self.view.pending.get(approval_id)
        if row is None or row.approval is None:
            self.notify("that request was answered meanwhile: your version was not used",
                        severity="warning")
            return
        self._answer(row, True, edited=outcome.text)
        self.notify(clean(f"accepted your version of {path}", 400), markup=False, timeout=4)

    def action_approve(self) -> None:
        """Allow the call on screen once."""
        row = self._on_screen("approve")
        if row is not None:
            self._answer(row, True)

    def action_approve_always(self) -> None:
        """Offer the grant's scope (session, project, user); pressed again: this session. On a
        call that cannot be granted, say why (and answer nothing)."""
        row = self._on_screen("approve-always")
        if row is None or row.approval is None:
            return
        if not row.approval.grantable:
            self.notify(f"{always_text(row.approval)} — {self._keys_hint()}",
                        severity="warning", markup=False, timeout=6)
            return
        if self._choosing == row.approval.approval_id:
            self._answer(row, True, remember=True, scope="session")
            return
        self._set_choosing(row.approval.approval_id)

    def action_grant_scope(self, name: str) -> None:
        """Allow the call and keep its grant in `scope` (after `a`)."""
        row = self._on_screen(f"grant-{grant_scope(name)}")
        if row is None or row.approval is None or self._choosing != row.approval.approval_id:
            return
        scope = grant_scope(name)
        why = self.session.gate.unavailable(scope)
        if why is not None:
            self.notify(clean(why, 400), severity="warning", markup=False)
            return
        self._answer(row, True, remember=True, scope=scope)

    def _set_choosing(self, approval_id: str | None) -> None:
        """Start (an approval id) or end (None) the scope step of the approval bar."""
        if approval_id == self._choosing:
            return
        self._choosing = approval_id
        bar = self.display_widget.approval_bar
        gate = self.session.gate
        store = gate.store
        bar.scope_choice = None if approval_id is None else ScopeChoice(
            approval_id, project_label(store.project if store is not None else None),
            {scope: why for scope in ("project", "user")
             if (why := gate.unavailable(scope)) is not None})
        self.display_widget.show_approval(room_later=True)
        self.refresh_bindings()

    def _grant_verdict(self) -> tuple[bool, str]:
        row = self._oldest_pending()
        if row is None or row.approval is None:
            return False, "nothing is waiting for approval"
        return row.approval.grantable, always_text(row.approval)

    def _keys_hint(self) -> str:
        return (f"{key_label(self, 'approve')} allows it once, "
                f"{key_label(self, 'deny')} denies it")

    def action_deny(self) -> None:
        """Deny the call on screen: first ask for a reason (in the message box; enter
        denies, with or without one)."""
        row = self._on_screen("deny")
        if row is not None and row.approval is not None:
            self.steering.ask_deny_reason(row.approval.approval_id)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Approval keys only while one is pending and no question is open (`a` too on a call
        that cannot be granted: pressing it says why; the scope keys only after `a`, dimmed
        where that scope is unavailable); cancel only while the run is live (or to leave the
        scope step); the message box's keys only where a conversation can go on. No approval
        key while the grants screen covers the approval bar: a call is answered only where it
        can be seen."""
        if action in ("approve", "deny", "approve_always", "grant_scope", "scope_back",
                      "cancel_run", "edit_proposal") and isinstance(
                          self.screen, (GrantsScreen, QuitScreen, RewindScreen)):
            return False
        steer = self.steering.key_applies(action)
        if steer is not None:
            return steer
        if action in ("approve", "deny"):
            return self._oldest_pending() is not None
        if action == "cycle_mode":  # a run held by a host is switched where it runs
            return hasattr(self.session, "set_mode")
        if action == "edit_proposal":  # only on an edit its engine offered for review
            pending = self._oldest_pending()
            return pending is not None and pending.approval is not None and \
                self._proposal(pending.approval.approval_id) is not None
        if action == "approve_always":  # on a call that cannot be granted, pressing it says why
            return self._oldest_pending() is not None
        if action == "grant_scope":
            if self._choosing is None:
                return False
            scope = grant_scope(str(parameters[0]) if parameters else "session")
            return self.session.gate.unavailable(scope) is None or None
        if action == "grants":
            return not isinstance(self.screen, GrantsScreen)
        if action == "scope_back":
            return self._choosing is not None
        if action == "cancel_run":
            return self._choosing is None and self.view.live and not self.session.done
        return super().check_action(action, parameters)

    def hint_shown(self, action: str) -> bool:
        """The footer shows `a` only when the call can be granted, and not in the scope step
        (as the approval bar: there the scope keys say where; `a` again is `this session`)."""
        if action == "approve_always":
            return self._choosing is None and self._grant_verdict()[0]
        return True

    # Cancel and quit -------------------------------------------------------------------------
    def action_scope_back(self) -> None:
        """Leave the scope step (after `a`): back to the approval, nothing granted."""
        self._set_choosing(None)

    def action_cancel_run(self) -> None:
        """First escape arms, a second within two seconds cancels the run."""
        if self.session.done:
            return
        now = time.monotonic()
        if now <= self._cancel_armed_until:
            self._cancel_armed_until = 0.0
            self._user_cancelled = True
            self.session.cancel("cancelled by the user")
            self.notify("cancelling the run…", timeout=2)
            self.pump.flush()
            return
        self._cancel_armed_until = now + CANCEL_WINDOW
        self.notify("press escape again to cancel the run", timeout=CANCEL_WINDOW)

    async def action_quit_cockpit(self) -> None:
        """Quit; while the run is live, or messages are queued, ask first (quitting cancels the
        run cleanly; queued messages are never sent)."""
        if isinstance(self.screen, QuitScreen):  # the quit key again: that confirms
            self.screen.confirm()
            return
        if isinstance(self.screen, DetachScreen):  # (again: detach, its default)
            self.screen.action_answer("detach")
            return
        live = not self.session.done and self._run_worker is not None
        queued = len(self.steering.queue)
        if live and self._let_go is not None:  # an attached client: detach, or cancel
            self.push_screen(DetachScreen(), self._detach_answered)
            return
        if live or queued:
            self.push_screen(QuitScreen(live=live, queued=queued,
                                        quit_key=key_label(self, "quit")), self._quit_answered)
            return
        await self._finish()

    def action_help_quit(self) -> None:
        """`ctrl+c` (with no text selected to copy): it neither stops nor quits here, so say
        what does (Textual's own hint names only a binding to its `quit` action)."""
        cancel = key_label(self, "cancel")
        live = self.view.live and not self.session.done
        self.notify((f"{cancel} {cancel} cancels the run · " if live else "")
                    + f"{key_label(self, 'quit')} quits"
                    + (" (asks first)" if live else ""),
                    title="ctrl+c copies selected text here", markup=False, timeout=4)

    def terminated(self, reason: str) -> None:
        """SIGTERM or SIGHUP: quit as the user would, the run cancelled cleanly first (at
        once when the terminal closed: see `hurry_if_hung_up`); an attached client
        detaches: its run goes on in the host."""
        if self._let_go is not None:
            self._leave()
            return
        hurry_if_hung_up(self.session.runner, reason)
        self._quit_and_cancel(reason)

    @property
    def _let_go(self) -> Callable[[], None] | None:
        """How an attached client (`cockpit attach`) lets go of its host's run; None for a
        run of this process."""
        detach = getattr(self.session, "detach", None)
        return detach if callable(detach) else None

    def _detach_answered(self, choice: str | None) -> None:
        if choice == "detach":
            self._leave()
        elif choice == "cancel":
            self._quit_and_cancel()

    @work(group="quit", exclusive=True)
    async def _leave(self) -> None:
        self._quitting = True
        if self._let_go is not None:
            self._let_go()
        await self._finish()

    def _quit_answered(self, quit_: bool | None) -> None:
        if quit_:
            self._quit_and_cancel()

    @work(group="quit", exclusive=True)
    async def _quit_and_cancel(self, reason: str = "quit by the user") -> None:
        self._quitting = True
        self.session.cancel(reason)
        await self._finish()

    async def _finish(self) -> None:
        worker = self._run_worker
        if worker is not None and not worker.is_finished:
            await worker.wait()  # the run ends: cancellation observed, journal closed
        self.pump.flush()
        close = getattr(self.next_session, "aclose", None)
        if close is not None:
            await close()  # in this event loop: an agent is closed, not killed at exit
        self.exit(self.session.state.status)

    # The agent's settings (command palette) ---------------------------------------------------
    def get_system_commands(self, screen: Any) -> Iterable[SystemCommand]:
        """Textual's and the themes' commands, and a switch for each of the agent's settings."""
        yield from super().get_system_commands(screen)
        for command in setting_commands(self.session.runner):
            yield SystemCommand(command.title, command.help,
                                lambda command=command: self._change_setting(command))

    @work(group="settings", exclusive=False)
    async def _change_setting(self, command: SettingCommand) -> None:
        def notify(message: str, severity: str) -> None:
            level: SeverityLevel = next((s for s in SEVERITIES if s == severity), "information")
            self.notify(message, severity=level, markup=False)

        await change_setting(self.session.runner, command, notify)

    # Help, pager, inspector ------------------------------------------------------------------
    def action_help(self) -> None:
        """Show every key, generated from the binding table."""
        self.push_screen(HelpScreen(scopes=["app", "general", "transcript"],
                                    keymap=self.config.keymap,
                                    commands=offered_commands(self.view.commands)))

    def item_events(self, item: Item) -> EventLookup | None:
        """The events behind `item` come from its task's `Session.history`."""
        if not 1 <= item.task <= len(self.sessions):
            return None
        history = self.sessions[item.task - 1].history
        return lambda seq: history[seq] if 0 <= seq < len(history) else None

    # Grants ----------------------------------------------------------------------------------
    def action_cycle_mode(self) -> None:
        """Switch to the next permission mode (journaled by the Session; the status line shows
        it once the fold has it). Between tasks, it is the mode the next task starts in."""
        set_mode = getattr(self.session, "set_mode", None)
        if set_mode is None:
            self.notify("this run's permission mode is set where it runs (its host)",
                        severity="warning")
            return
        mode = next_mode(self.session.mode)
        set_mode(mode, source="human")
        later = " (for the next task)" if self.session.done else ""
        self.notify(f"permission mode: {mode_label(mode)}{later}", timeout=3)

    def action_grants(self) -> None:
        """Show every grant and deny rule in force; revoke from there."""
        self.push_screen(GrantsScreen(self.session.gate, changed=self._grants_changed))

    def _watch_grants(self, session: Session) -> None:
        """Redraw the grants panel whenever saved grants change (a revoke, another cockpit);
        say when a grant the human chose to save was not saved, and, once, what in the saved
        grants is not trusted (a broken file, an ignored grant, saved grants off). A gate
        whose grants live elsewhere (a host's: it has `fetch()`) is asked for them now, off
        the loop, so the panel shows them at once."""
        fetch = getattr(session.gate, "fetch", None)
        if callable(fetch):
            self.run_worker(self._fetch_grants(fetch), group="grants-fetch", exclusive=True,
                            exit_on_error=False)
        loop = asyncio.get_running_loop()
        session.gate.on_problem(lambda line: loop.call_soon_threadsafe(self._grant_problem, line))
        store = session.gate.store
        if store is None or any(s is store for s in self._watched_stores):
            return
        self._watched_stores.append(store)
        store.on_change(lambda: loop.call_soon_threadsafe(self._grants_changed))
        problems = store.problems
        if problems:
            more = f" (and {plural(len(problems) - 1, 'more problem')})" \
                if len(problems) > 1 else ""
            self._grant_problem(f"saved grants: {problems[0]}{more}")

    async def _fetch_grants(self, fetch: Callable[[], object]) -> None:
        try:
            await asyncio.to_thread(fetch)  # (it blocks: the host may be behind ssh)
        except GrantFileError as exc:
            self._grant_problem(f"the host's grants could not be listed: {exc}")
            return
        self._grants_changed()

    def _grant_problem(self, line: str) -> None:
        if self.is_running:
            hint = key_label(self, "grants")
            self.notify(clean(f"{line} · {hint} shows grants" if hint else line, 600),
                        severity="warning", markup=False, timeout=10)

    def _grants_changed(self) -> None:
        if not self.is_running:
            return
        self.pump.flush()
        change = self.fold.set_grants(self.session.gate.entries())
        if change.parts:
            changes = ChangeSet()
            changes.add(change.parts, change.item)
            self.display_widget.apply_changes(self.view, changes)

    # Talking to the agent: the message box's and the question form's messages go to `steering`
    def action_focus_composer(self) -> None:
        """Put the focus in the message box."""
        self.steering.focus_composer()

    def action_start_command(self) -> None:
        """Start typing one of the agent's commands."""
        self.steering.start_command()

    def on_composer_submitted(self, message: Composer.Submitted) -> None:
        if not self._slash(message.text):
            self.steering.submitted(message.text)

    def _slash(self, text: str) -> bool:
        """Whether `text` was a slash command the cockpit took (its own, run here; or one no
        one offers, said and kept in the box: the same text entered again is sent as text)."""
        builtin = builtin_command(text)
        if builtin is not None:
            self._unknown_said = None
            self._run_builtin(*builtin)
            return True
        name = unknown_command(text, self.view.commands)
        if name is None or self._unknown_said == text:
            self._unknown_said = None
            return False
        self._unknown_said = text
        self.composer.box.value = text  # nothing is lost: edit it, or enter again sends it
        self.notify(f"/{clean_line(name, 40)} is not a command of the cockpit or of the agent "
                    "(/help lists them); nothing was sent. Press enter again to send it as "
                    "text", severity="warning", markup=False, timeout=8)
        return True

    def _run_builtin(self, name: str, wanted: str) -> None:
        """One of the cockpit's own slash commands (`cockpit.live.slash`), run here."""
        if name == "help":
            self.action_help()
            return
        if name == "export":
            self._export()
            return
        if name == "clear":
            self._clear()
            return
        found = settings_for(name, setting_commands(self.session.runner), wanted)
        if not found:
            what = f" matching {clean_line(wanted, 60)!r}" if wanted else ""
            self.notify(f"/{name}: the agent offers no {name} to switch to{what} (the command "
                        "palette, ctrl+p, lists every setting it has)", severity="warning",
                        markup=False, timeout=6)
            return
        if wanted and len(found) == 1:
            self._change_setting(found[0])
            return
        self.search_commands([SimpleCommand(c.title, lambda c=c: self._change_setting(c),
                                            c.help)
                              for c in found], placeholder=f"switch the agent's {name}…")

    def _clear(self) -> None:
        """`/clear`: the next task starts a new conversation (`fresh()` of the conversation's
        factory), once no task runs: a running one is never cut short by it."""
        fresh = getattr(self.next_session, "fresh", None)
        if not callable(fresh):
            self.notify("/clear: this cockpit cannot start a new conversation (nothing to "
                        "clear: its next tasks continue this one)", severity="warning",
                        markup=False, timeout=6)
            return
        if not self.session.done:
            self.notify("/clear: a task is running; wait for its end, or cancel it (escape "
                        "twice), then /clear", severity="warning", markup=False, timeout=8)
            return
        fresh()
        self.notify("a new conversation: the next task starts it, without the earlier ones "
                    "(your grants are kept)", title="/clear", markup=False, timeout=8)

    def on_composer_send_now(self, message: Composer.SendNow) -> None:
        if not self._slash(message.text):
            self.steering.send_now(message.text)

    def _export(self) -> None:
        """`/export`: the current task's report written next to its journal, off the loop."""
        journal = getattr(self.session.journal, "path", None)
        if self.exporter is None or journal is None:
            why = "this run writes no journal" if journal is None else \
                "this cockpit was started without an exporter"
            self.notify(f"/export: {why}; `cockpit export JOURNAL` writes a report of a run "
                        "from its journal", severity="warning", markup=False, timeout=8)
            return
        self.run_worker(self._write_export(self.exporter, Path(journal)), group="export",
                        exit_on_error=False)

    async def _write_export(self, exporter: Callable[[Path], Path], journal: Path) -> None:
        try:
            written = await asyncio.to_thread(exporter, journal)
        except (OSError, ValueError, JournalError) as exc:
            self.notify(f"/export failed: {clean_line(str(exc), 300)}", severity="error",
                        markup=False, timeout=10)
            return
        self.notify(f"report written to {written}", title="/export", markup=False, timeout=10)

    def on_composer_files_wanted(self, message: Composer.FilesWanted) -> None:
        """The `@` list opened: list the workspace's files off the loop."""
        self.run_worker(self.workspace_files.refresh(self.session), group="mention-files",
                        exclusive=True, exit_on_error=False)

    def on_composer_unqueue(self, message: Composer.Unqueue) -> None:
        self.steering.unqueue(message.index)

    def on_composer_reason(self, message: Composer.Reason) -> None:
        self.steering.reason(message.approval_id, message.text)

    def on_question_form_answered(self, message: QuestionForm.Answered) -> None:
        self.steering.answered(message.question_id, message.values)

    def on_question_form_declined(self, message: QuestionForm.Declined) -> None:
        self.steering.declined(message.question_id)

    # Rewinding the workspace (the flow is `ThemedApp`'s) ---------------------------------------
    def rewinder(self) -> Rewinder:
        """This conversation's Sessions: refused while a task runs; the rewind's event says
        what it means for the conversation (`SessionFactory.rewind_note`)."""
        note = getattr(self.next_session, "rewind_note", None)
        return ConversationRewinder(lambda: self.sessions,
                                    note if callable(note) else None)

    def rewound(self, task: int, turn: int) -> str:
        """The rewind's event (recorded through the latest Session) into the transcript; the
        conversation goes back too (`SessionFactory.rewound`): what that means, said."""
        self.pump.flush()
        told = getattr(self.next_session, "rewound", None)
        return str(told(task, turn)) if callable(told) else ""

    # The next task ---------------------------------------------------------------------------
    def _start_next(self, task: str) -> bool:
        """Start the next task of the conversation with `task` (False: it could not start; an
        awaited Session, a host's, is on its way: shown once it comes)."""
        if self.next_session is None or not self.session.done:
            return False
        if self._next_starting:
            self.notify("the next task is being started: wait for it", severity="warning")
            return False
        try:
            made = self.next_session(task)
        except Exception as exc:  # a factory failure is the user's to see, not a crash
            self._next_failed(exc)
            return False
        if inspect.isawaitable(made):
            self._next_starting = True
            self.run_worker(self._next_arrives(made, task), group="next-task",
                            exit_on_error=False)
            return True
        self._begin_next(made, task)
        return True

    def _next_failed(self, exc: Exception) -> None:
        self.notify(f"could not start the next task: {clean(str(exc), 500)}",
                    severity="error", markup=False)

    async def _next_arrives(self, made: Awaitable[Session], task: str) -> None:
        """The awaited next Session (the host is asked meanwhile; the keys go on)."""
        try:
            session = await made
        except Exception as exc:  # (the host refused, or could not be reached)
            self._next_failed(exc)
            return
        finally:
            self._next_starting = False
        if not self._quitting:
            self._begin_next(session, task)

    def _begin_next(self, session: Session, task: str) -> None:
        """Show and follow the next task's Session."""
        self.sessions.append(session)
        self.run_worker(self.prompts.keep(session, task), group="history", exit_on_error=False)
        self._task_started()
        self._start(session)
        self.steering.show(self.view)

    def _task_started(self) -> None:
        """A next task was started (from the message box): the end panel goes. The focus stays
        in the box, if it is there (the next message can be typed at once; the approval keys
        still work from the empty box)."""
        self._user_cancelled = False
        self.query_one(EndPanel).hide()
        if not self.composer.box.has_focus:
            self.query_one(Transcript).focus()
