"""`RunDisplay`: the whole picture of a run, rendered from a `RunView`.

Status line on top, the transcript beside a side column (the agent's plan while it has one,
verification, grants), the approval bar at the bottom — or, while the agent has a question
open, its form (the approval waits behind it). Two ways in, both from a view and never from a
Session:

- `apply_changes(view, changes)`: the incremental path, once a frame (see `FramePump`);
- `show(view)`: a full redraw from any view (a replay seek can land anywhere).

The live cockpit (`cockpit.live.app.CockpitApp`) adds the keys that control a run; the replay viewer
composes the same `RunDisplay` and calls `show(view)` for the view as of any event.

Layout at any size: below `SIDE_MIN_WIDTH` columns the side column is hidden and summed up in
the status line, and `toggle_side()` shows it over the transcript; when the user has scrolled
up, a marker says new output is arriving below (until `end` follows again).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.events import Resize
from textual.widgets import Static

from cockpit.keys import key_label
from cockpit.widgets.approval import ARM_SECONDS, ApprovalBar
from cockpit.widgets.panels import GrantsPanel, StatusLine, VerificationPanel
from cockpit.widgets.plan_panel import PlanPanel
from cockpit.widgets.question_form import QuestionForm
from cockpit.widgets.transcript import Transcript
from engine_adapter.text import plural
from engine_adapter.view import (
    APPROVALS,
    GRANTS,
    PLAN,
    QUESTIONS,
    RUN,
    USAGE,
    VERIFICATION,
    ChangeSet,
    RunView,
)

__all__ = ["SIDE_MIN_WIDTH", "RunDisplay"]

SIDE_MIN_WIDTH = 110  # columns below which the side column collapses into the status line


class RunDisplay(Vertical):
    """Status line, transcript, verification, grants and approval bar for one run.

    `answerable`: the approval bar's keys answer here (the live cockpit), or not (replay).
    `approval_timeout`: seconds an approval waits before it is denied (counted down in the bar).
    """

    DEFAULT_CSS = """
    RunDisplay { height: 1fr; layers: base overlay; }
    RunDisplay > ApprovalBar { layer: overlay; dock: bottom; }
    RunDisplay > QuestionForm { layer: overlay; dock: bottom; }
    RunDisplay #run-body { height: 1fr; layers: base overlay; }
    RunDisplay #run-side {
        width: 44;
        height: 1fr;
        background: $surface;
        border-left: solid $panel;
    }
    RunDisplay.-narrow #run-side { display: none; }
    RunDisplay.-narrow.-side-shown #run-side {
        display: block;
        layer: overlay;
        dock: right;
        max-width: 90%;
        border-left: thick $primary;
        overflow-y: auto;
    }
    RunDisplay.-narrow.-side-shown #run-side > * { max-height: 100%; }
    RunDisplay #new-below {
        display: none;
        layer: overlay;
        dock: bottom;
        width: auto;
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $warning;
        text-style: bold;
    }
    RunDisplay #new-below.-shown { display: block; }
    """

    def __init__(self, *, clock: Callable[[], float] | None = None,
                 answerable: bool = False, approval_timeout: float | None = None,
                 arm_seconds: float = ARM_SECONDS, arm_clock: Callable[[], float] = time.monotonic,
                 id: str | None = None) -> None:
        super().__init__(id=id)
        self._arming = (arm_seconds, arm_clock)  # the approval bar's (see `KeyArming`)
        self._clock = clock
        self._answerable = answerable  # the live cockpit: approvals and questions take answers
        self._approval_timeout = approval_timeout
        self.view: RunView | None = None
        self.unseen_items = 0  # items added since the transcript stopped following
        self._behind: set[int] = set()  # items changed, left for `catch_up()`
        self._room_behind = False  # the room below the transcript too

    def compose(self) -> ComposeResult:
        # What comes and goes over the rest (the approval bar, the new-output marker) comes
        # first among its siblings: Textual numbers the paint order of siblings from the last
        # one, so a widget shown or hidden after them renumbers them all, and the whole screen
        # is repainted (measured: ~25 ms of each approval's frame); before them, it renumbers
        # none, and only what it covered or uncovers is drawn. It floats on its own layer and
        # docks, so its place among its siblings changes nothing else.
        yield ApprovalBar(answerable=self._answerable, timeout=self._approval_timeout,
                          clock=self._clock, arm_seconds=self._arming[0],
                          arm_clock=self._arming[1], id="approval")
        yield StatusLine(clock=self._clock, id="status")
        with Horizontal(id="run-body"):
            yield Static("", id="new-below")
            yield Transcript(id="transcript")
            with Vertical(id="run-side"):
                yield PlanPanel(id="plan")
                yield VerificationPanel(id="verification")
                yield GrantsPanel(id="grants")
        yield QuestionForm(answerable=self._answerable, id="question")

    @property
    def transcript(self) -> Transcript:
        """The transcript widget."""
        return self.query_one(Transcript)

    @property
    def approval_bar(self) -> ApprovalBar:
        """The approval bar."""
        return self.query_one(ApprovalBar)

    @property
    def status_line(self) -> StatusLine:
        """The status line."""
        return self.query_one(StatusLine)

    @property
    def question_form(self) -> QuestionForm:
        """The form of the agent's open question."""
        return self.query_one(QuestionForm)

    def show(self, view: RunView) -> None:
        """Redraw everything from `view`."""
        self.view = view
        self._behind, self._room_behind = set(), False
        self.status_line.show(view)
        self.query_one(PlanPanel).show(view)
        self.query_one(VerificationPanel).show(view)
        self.query_one(GrantsPanel).show(view)
        self._show_approval(view)
        self.transcript.show(view)

    def apply_changes(self, view: RunView, changes: ChangeSet, *,
                      transcript_later: bool = False) -> None:
        """Redraw only what `changes` touched. `transcript_later`: leave the transcript's part
        (its rows, and the room it keeps below them for the approval bar) for `catch_up()`, so
        this frame draws only the rest (the answer to a key, a new approval) — the rows a flood
        brought would otherwise make that frame several times dearer."""
        self.view = view
        parts = changes.parts
        if parts & (RUN | USAGE | VERIFICATION | GRANTS):
            self.status_line.show(view)  # (it sums up checks and grants when narrow)
        if parts & PLAN:
            self.query_one(PlanPanel).show(view)
        if parts & VERIFICATION:
            self.query_one(VerificationPanel).show(view)
        if parts & GRANTS:
            self.query_one(GrantsPanel).show(view)
        self._behind.update(changes.items)
        if parts & (APPROVALS | QUESTIONS):
            self._show_approval(view, reserve=not transcript_later)
            self._room_behind = transcript_later
        if not transcript_later:
            self.catch_up()

    @property
    def transcript_behind(self) -> bool:
        """Whether the transcript waits for `catch_up()` (see `apply_changes`)."""
        return bool(self._behind) or self._room_behind or (
            self.view is not None and len(self.view.items) != self.transcript.item_count)

    def catch_up(self) -> None:
        """Draw what `apply_changes(..., transcript_later=True)` left: the transcript's changed
        and new rows, and its room below for the approval bar or question form."""
        view = self.view
        if view is None:
            return
        if self._room_behind:
            self._room_behind = False
            self._reserve_room()
        transcript = self.transcript
        changed, self._behind = self._behind, set()
        if changed or len(view.items) != transcript.item_count:
            before = transcript.item_count
            transcript.update_items(view, changed)
            if not transcript.follow and transcript.item_count > before:
                self.unseen_items += transcript.item_count - before
                self._show_new_below()

    def show_approval(self, *, room_later: bool = False) -> None:
        """Redraw the approval bar from the last view (its scope step began or ended).
        `room_later`: the transcript's room below for the bar follows the next frame (a key's
        answer: the bar grew or shrank over the transcript, and making room scrolls — and
        repaints — every row of the transcript; measured at 160x48, about half of the `a`
        key's frame). For that frame the bar covers a few more rows of the transcript."""
        if self.view is None:
            return
        if not room_later:
            self._show_approval(self.view)
            return
        self._show_approval(self.view, reserve=False)
        self._room_behind = True
        self.call_after_refresh(self._room_after_frame)

    def _room_after_frame(self) -> None:
        # Through the queue once more: the key's frame is drawn first (see `AnswerFirst`).
        self.call_later(self._room_now)

    def _room_now(self) -> None:
        if self._room_behind:
            self._room_behind = False
            self._reserve_room()

    def _show_approval(self, view: RunView, *, reserve: bool = True) -> None:
        # The bar floats over the bottom of the transcript (its own layer), so showing it does
        # not resize — and re-render — everything else; the transcript keeps as many blank rows
        # below its last item, so the row awaiting approval stays in sight.
        bar, form = self.approval_bar, self.question_form
        form.show(view)
        bar.set_class(form.question is not None, "-behind-question")  # (before it shows)
        bar.show(view)
        if reserve:
            self._reserve_room()

    def _reserve_room(self) -> None:
        """Keep the transcript's last rows in sight above the bar or form over its bottom."""
        bar, form = self.approval_bar, self.question_form
        if form.question is not None:
            self.transcript.reserve_rows(form.height_shown or 8)
        else:
            self.transcript.reserve_rows(bar.estimated_height if bar.approval_id else 0)
        self._show_new_below()

    def on_approval_bar_resized(self, message: ApprovalBar.Resized) -> None:
        """The bar's real height is known: keep exactly that much room below the items (now,
        or with the rest of the transcript at `catch_up()`)."""
        if self.approval_bar.approval_id is not None and self.question_form.question is None \
                and not self._room_behind:
            self.transcript.reserve_rows(message.height)

    def on_question_form_resized(self, message: QuestionForm.Resized) -> None:
        """The form's real height is known: keep that much room below the items."""
        if self.question_form.question is not None and not self._room_behind:
            self.transcript.reserve_rows(message.height)
            self._show_new_below()

    def refresh_theme(self) -> None:
        """Re-render everything after a theme change (colours are baked into cached rows)."""
        if self.view is not None:
            self.show(self.view)

    # New output below ------------------------------------------------------------------------
    @on(Transcript.FollowChanged)
    def _follow_changed(self, message: Transcript.FollowChanged) -> None:
        message.stop()
        if message.follow:
            self.unseen_items = 0
        self._show_new_below()

    def _show_new_below(self) -> None:
        marker = self.query_one("#new-below", Static)
        shown = bool(self.unseen_items) and not self.transcript.follow
        if shown:
            # An opaque row as wide as the transcript: no transcript text shows through its
            # padding or runs on beside it, as if it were part of the marker.
            marker.update(Text(f"▼ {plural(self.unseen_items, 'new item')} below · "
                               f"{key_label(self.app, 'item-last')} follows", no_wrap=True))
            width = self.transcript.size.width
            marker.styles.width = width if width else "auto"
            bar = self.approval_bar
            # Above the approval bar when it covers the bottom of the transcript.
            marker.styles.offset = (0, -bar.estimated_height if bar.approval_id else 0)
        marker.set_class(shown, "-shown")

    # The side column on a narrow terminal ----------------------------------------------------
    @property
    def narrow(self) -> bool:
        """Whether the side column is collapsed into the status line."""
        return self.has_class("-narrow")

    @property
    def side_shown(self) -> bool:
        """Whether the side column is on screen (beside or over the transcript)."""
        return not self.narrow or self.has_class("-side-shown")

    def toggle_side(self) -> None:
        """Show the collapsed side column over the transcript, or hide it again."""
        if self.narrow:
            self.toggle_class("-side-shown")
            self._tell_status_line()

    def _tell_status_line(self) -> None:
        """The status line sums the side column up while it is folded, and says whether the
        key shows or hides it."""
        self.status_line.side_summary = self.narrow
        self.status_line.side_overlay = self.narrow and self.has_class("-side-shown")
        if self.view is not None:
            self.status_line.show(self.view)

    def on_resize(self, event: Resize) -> None:
        self.approval_bar.room_changed()
        narrow = event.size.width < SIDE_MIN_WIDTH
        if narrow != self.narrow:
            self.set_class(narrow, "-narrow")
            if not narrow:
                self.remove_class("-side-shown")
            self._tell_status_line()
            self.app.refresh_bindings()  # the side-panel key applies only when narrow
