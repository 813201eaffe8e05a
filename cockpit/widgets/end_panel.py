"""`EndPanel`: how a task ended, shown under the transcript once the run is over (the next task
is typed in the `Composer` below it), and `end_text`, what it says: the status and error first
(never the reply in the error's place), the rest of the error and the agent's stderr tail, where
the reply is, the files the task changed (`+added −removed` each), and where the journal is.

The reply is shown in full once, in the transcript (the model's messages, or the task's `■` row
when the engine did not stream it); the panel refers to it. Everything is read through
`engine_adapter.view.task_end`, as the transcript, headless output and the export read it.

It renders from a `RunView` and the journal's path, never from a Session; starting the next task
is the live app's business (the Composer's).

Layout: the outcome sits in a `ScrollBox` of limited height (the panel takes at most ~45% of the
screen), so a 4 KB reply never hides the transcript, the status line or the input; the keys line
below it names the keys as bound.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.events import Resize
from textual.widgets import Static

from cockpit.keys import key_label
from cockpit.styles import Palette, palette_for
from cockpit.widgets.safe_text import clean_line, styled
from cockpit.widgets.scroll_box import ScrollBox
from cockpit.widgets.transcript import warn_style
from engine_adapter.text import cap, cut, plural
from engine_adapter.view import EndItem, RunView, changes_lines, task_changes, task_end_of

__all__ = ["ERROR_LINES", "EndPanel", "end_text"]

ERROR_LINES = 12  # lines of the error and stderr tail in the panel (the ■ row keeps more)
CHANGED_LINES = 12  # files listed in the panel


def _last_end(view: RunView) -> EndItem | None:
    for item in reversed(view.items):
        if isinstance(item, EndItem):
            return item
        if item.kind == "task":
            return None
    return None


def end_text(view: RunView, palette: Palette, *, journal: str | None,
             hint: str | None) -> Text:
    """The panel's text for `view`'s ended task; `hint` is its last line (the keys), if any
    (the live panel shows its keys on a line of their own)."""
    warn = warn_style(palette)
    end = _last_end(view)
    text = Text()
    status_style = palette.status_style(view.status)
    if end is None:  # an end the fold has no row for: say what the view knows
        text.append(view.status, status_style)
        if view.error:
            text.append(": ", status_style)
            text.append_text(styled(cap(view.error, chars=4_000), palette.text,
                                    marker_style=warn))
    else:
        told = task_end_of(view.items, end)
        head, *rest = told.lines
        status, _, error = head.partition(": ")
        text.append(status, status_style)
        if error:
            text.append(": ", status_style)
            piece = cut(error, chars=2_000)
            text.append_text(styled(piece.kept, palette.error_line if status == "failed"
                                    else palette.warning, marker_style=warn))
            if piece.was_cut:
                text.append(" " + piece.note(gone=False, hint="the ■ row has all of it"),
                            palette.dim)
        if rest:
            piece = cut("\n".join(rest), lines=ERROR_LINES, chars=4_000)
            text.append("\n")
            text.append_text(styled(piece.kept, palette.dim, marker_style=warn))
            if piece.was_cut:
                text.append("\n" + piece.note(gone=False, hint="the ■ row in the transcript "
                                              "has more"), palette.dim)
        if told.reply_note:
            text.append(f"\n↑ {told.reply_note} (in the transcript)", palette.dim)
        elif told.reply:
            length = plural(len(told.reply.rstrip("\n").split("\n")), "line")
            which = "partial reply" if told.partial else "reply"
            text.append(f"\n↑ the {which} ({length}) is the transcript's ■ row", palette.dim)
        files = task_changes(view.items, end.task)
        lines = changes_lines(files)
        if len(files) > CHANGED_LINES:  # the first files, how many more, the total
            more = f"… {plural(len(files) - CHANGED_LINES, 'more file')}"
            lines = [*lines[:CHANGED_LINES], more, lines[-1]]
        if lines:
            text.append("\nchanged:", palette.dim)
            for line in lines:
                text.append("\n  ")
                text.append_text(styled(cap(line, chars=300), palette.text, marker_style=warn))
    text.append("\njournal: ", palette.dim)
    text.append(clean_line(journal, 1_000) if journal else "(none: run without a journal)",
                palette.accent if journal else palette.dim)
    if hint:
        text.append("\n" + hint, palette.dim)
    return text


class EndPanel(Vertical):
    """Hidden while the run is live; `show(view, ...)` fills it in once the run has ended."""

    DEFAULT_CSS = """
    EndPanel {
        display: none;
        height: auto;
        background: $panel;
        border-top: thick $primary;
        padding: 0 1;
    }
    EndPanel.-shown { display: block; }
    EndPanel.-failed { border-top: thick $error; }
    EndPanel.-cancelled { border-top: thick $warning; }
    EndPanel #end-keys { height: 1; }
    """

    _offer_next = False  # whether the keys line names the next-task key

    def compose(self) -> ComposeResult:
        yield ScrollBox(Static("", id="end-text"), id="end-body")
        yield Static("", id="end-keys")

    def body_rows(self, offer_next: bool) -> int:
        """Rows the outcome may take: the panel stays within ~45% of the screen with its
        border, the "more below" marker and the keys line, and a row left for the message box
        below it when the next task can be typed."""
        return max(1, self.app.size.height * 45 // 100 - 3 - int(offer_next))

    def on_resize(self, event: Resize) -> None:
        self._fit()
        self._show_keys()

    def _show_keys(self) -> None:
        """The keys line, named as bound; in the short wording when the long one would not fit
        (a cut line would hide the quit key without saying so)."""
        palette = palette_for(self.app)
        room = self.app.size.width - 4  # the panel's padding and the screen's edges
        for next_words, quit_words in ((" (or a click) to type the next task · ", " quits"),
                                       (" next task · ", " quits"), (" next · ", " quit")):
            keys = Text(no_wrap=True, overflow="ellipsis")
            if self._offer_next:
                keys.append(key_label(self.app, "compose"), palette.accent)
                keys.append(next_words, palette.dim)
            keys.append(key_label(self.app, "quit"), palette.accent)
            keys.append(quit_words, palette.dim)
            if keys.cell_len <= room:
                break
        self.query_one("#end-keys", Static).update(keys)

    def _fit(self) -> None:
        self.query_one("#end-body", ScrollBox).max_rows = self.body_rows(self._offer_next)

    def show(self, view: RunView, *, journal: str | None, offer_next: bool) -> None:
        """Show how `view`'s run ended (or hide while it is live); `offer_next` says where the
        next task is typed (the message box is shown, not focused: a `y` pressed a moment too
        late must not start typing a task)."""
        if view.live or view.status == "idle":
            self.hide()
            return
        palette = palette_for(self.app)
        # The keys are the panel's own line, below the box (always in sight), named as bound.
        text = end_text(view, palette, journal=journal, hint=None)
        self.query_one("#end-text", Static).update(text)
        self._offer_next = offer_next
        self._show_keys()
        self.set_class(view.status == "failed", "-failed")
        self.set_class(view.status == "cancelled", "-cancelled")
        self.add_class("-shown")
        self._fit()
        self.query_one("#end-body", ScrollBox).content_changed(to_top=True)

    def hide(self) -> None:
        """Hide the panel (the next task is starting)."""
        self.remove_class("-shown", "-failed", "-cancelled")
