"""What the end panel says once a task is over: its status and error first (never the reply in
the error's place), the rest of the error and the agent's stderr tail, where the reply is, the
files the task changed (`+added −removed` each), and where the journal is.

The reply is shown in full once, in the transcript (the model's messages, or the task's `■` row
when the engine did not stream it); the panel refers to it. Everything is read through
`engine_adapter.view.task_end`, as the transcript, headless output and the export read it.
"""

from __future__ import annotations

from rich.text import Text

from cockpit.styles import Palette
from cockpit.widgets.safe_text import clean_line, styled
from cockpit.widgets.transcript import warn_style
from engine_adapter.text import cap, cut, plural
from engine_adapter.view import EndItem, RunView, changes_lines, task_changes, task_end_of

__all__ = ["ERROR_LINES", "end_text"]

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
            lines = plural(len(told.reply.rstrip("\n").split("\n")), "line")
            which = "partial reply" if told.partial else "reply"
            text.append(f"\n↑ the {which} ({lines}) is the transcript's ■ row", palette.dim)
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
