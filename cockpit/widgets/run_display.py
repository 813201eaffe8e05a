"""`RunDisplay`: the whole picture of a run, rendered from a `RunView`.

Status line on top, the transcript beside a side column (verification, grants), the approval bar
at the bottom — or, while the agent has a question open, its form (the approval waits behind
it). Two ways in, both from a view and never from a Session:

- `apply_changes(view, changes)`: the incremental path, once a frame (see `FramePump`);
- `show(view)`: a full redraw from any view (a replay seek can land anywhere).

The live cockpit (`cockpit.app.CockpitApp`) adds the keys that control a run; the replay viewer
composes the same `RunDisplay` and calls `show(view)` for the view as of any event.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical

from engine_adapter.fold import APPROVALS, GRANTS, QUESTIONS, RUN, USAGE, VERIFICATION, RunView

from ..pump import ChangeSet
from .approval import ApprovalBar
from .panels import GrantsPanel, StatusLine, VerificationPanel
from .question_form import QuestionForm
from .transcript import Transcript

__all__ = ["RunDisplay"]


class RunDisplay(Vertical):
    """Status line, transcript, verification, grants and approval bar for one run."""

    DEFAULT_CSS = """
    RunDisplay { height: 1fr; layers: base overlay; }
    RunDisplay > ApprovalBar { layer: overlay; dock: bottom; }
    RunDisplay > QuestionForm { layer: overlay; dock: bottom; }
    RunDisplay > ApprovalBar.-behind-question { display: none; }
    RunDisplay #run-body { height: 1fr; }
    RunDisplay #run-side {
        width: 44;
        height: 1fr;
        background: $surface;
        border-left: solid $panel;
    }
    """

    def __init__(self, *, clock: Callable[[], float] | None = None, answerable: bool = False,
                 id: str | None = None) -> None:
        super().__init__(id=id)
        self._clock = clock
        self._answerable = answerable  # the live cockpit: an agent's question takes answers
        self.view: RunView | None = None

    def compose(self) -> ComposeResult:
        yield StatusLine(clock=self._clock, id="status")
        with Horizontal(id="run-body"):
            yield Transcript(id="transcript")
            with Vertical(id="run-side"):
                yield VerificationPanel(id="verification")
                yield GrantsPanel(id="grants")
        yield ApprovalBar(id="approval")
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
    def question_form(self) -> QuestionForm:
        """The form of the agent's open question."""
        return self.query_one(QuestionForm)

    def show(self, view: RunView) -> None:
        """Redraw everything from `view`."""
        self.view = view
        self.query_one(StatusLine).show(view)
        self.query_one(VerificationPanel).show(view)
        self.query_one(GrantsPanel).show(view)
        self._show_approval(view)
        self.transcript.show(view)

    def apply_changes(self, view: RunView, changes: ChangeSet) -> None:
        """Redraw only what `changes` touched."""
        self.view = view
        parts = changes.parts
        if parts & (RUN | USAGE):
            self.query_one(StatusLine).show(view)
        if parts & VERIFICATION:
            self.query_one(VerificationPanel).show(view)
        if parts & GRANTS:
            self.query_one(GrantsPanel).show(view)
        if parts & (APPROVALS | QUESTIONS):
            self._show_approval(view)
        if changes.items or len(view.items) != self.transcript.item_count:
            self.transcript.update_items(view, changes.items)

    def show_approval(self) -> None:
        """Redraw the approval bar from the last view (its scope step began or ended)."""
        if self.view is not None:
            self._show_approval(self.view)

    def _show_approval(self, view: RunView) -> None:
        # The bar floats over the bottom of the transcript (its own layer), so showing it does
        # not resize — and re-render — everything else; the transcript keeps as many blank rows
        # below its last item, so the row awaiting approval stays in sight.
        bar, form = self.approval_bar, self.question_form
        form.show(view)
        bar.show(view)
        bar.set_class(form.question is not None, "-behind-question")
        if form.question is not None:
            self.transcript.reserve_rows(form.height_shown or 8)
        else:
            self.transcript.reserve_rows(bar.estimated_height if bar.approval_id else 0)

    def on_approval_bar_resized(self, message: ApprovalBar.Resized) -> None:
        """The bar's real height is known: keep exactly that much room below the items."""
        if self.approval_bar.approval_id is not None and self.question_form.question is None:
            self.transcript.reserve_rows(message.height)

    def on_question_form_resized(self, message: QuestionForm.Resized) -> None:
        """The form's real height is known: keep that much room below the items."""
        if self.question_form.question is not None:
            self.transcript.reserve_rows(message.height)

    def refresh_theme(self) -> None:
        """Re-render everything after a theme change (colours are baked into cached rows)."""
        if self.view is not None:
            self.show(self.view)
