"""The journal picker: recent runs (newest first) to open in the viewer; and how the viewer
asks for a run to be resumed (`request_resume`: the app exits with a `ResumeRequest` once the
resume check it was handed finds no problem).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from cockpit.journals import (
    CRASHED,
    CRASHED_LEGEND,
    JournalSummary,
    describe_length,
    list_journals,
)
from cockpit.keys import PICKER_SCOPE, bindings
from cockpit.paths import journal_dir
from cockpit.widgets import clean_line, styled_line
from engine_adapter.events import format_ts

__all__ = ["PickerScreen", "ResumeCheck", "ResumeRequest", "request_resume"]

ResumeCheck = Callable[[Path], str | None]
"""Why the run of a journal cannot be resumed (one line), or None when it can: what the command
line hands the viewer (`ReplayApp(resume_check=…)`), since resuming starts an agent."""


@dataclass(frozen=True)
class ResumeRequest:
    """What the replay viewer exits with when the human asked to resume the run it shows."""

    journal: Path


class PickerScreen(Screen[Path | None]):
    """A table of recent journals; enter opens one, escape or q leaves."""

    DEFAULT_CSS = """
    PickerScreen #picker-title { height: 1; background: $panel; padding: 0 1; }
    PickerScreen DataTable { height: 1fr; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [*bindings("pager"), *bindings(PICKER_SCOPE)]

    def __init__(self, directory: str | Path | None = None) -> None:
        super().__init__()
        self.directory = Path(directory) if directory is not None else journal_dir()
        self._own = directory is None  # the user's journals: also those written elsewhere
        self.journals: list[JournalSummary] = []
        self.loaded = False  # the folder has been read and the table filled

    def compose(self) -> ComposeResult:
        yield Static("", id="picker-title")
        yield DataTable(cursor_type="row", zebra_stripes=True, id="journals")
        yield Footer()

    def on_mount(self) -> None:
        # Reading the folder (each journal's head and tail, another tool's file recognised)
        # is file I/O: in a thread, never on the event loop.
        self.query_one("#picker-title", Static).update(Text(
            f"Reading the journals in {clean_line(str(self.directory), 200)}…"))
        self.run_worker(self._read, thread=True, exclusive=True, group="picker")

    def _read(self) -> None:
        journals = list_journals(None if self._own else self.directory)
        with contextlib.suppress(RuntimeError):  # the app closed meanwhile: nothing to show
            self.app.call_from_thread(self._show, journals)

    def _show(self, journals: list[JournalSummary]) -> None:
        self.journals = journals
        self.loaded = True
        title = self.query_one("#picker-title", Static)
        table = self.query_one(DataTable)
        if not self.journals:
            title.update(Text(f"No journals in {clean_line(str(self.directory), 200)} yet: run "
                              "`cockpit demo`, or `cockpit replay PATH`. (q quits)"))
            return
        crashed = any(s.status == CRASHED for s in self.journals)
        title.update(Text(f"Recent journals in {clean_line(str(self.directory), 200)} — enter "
                          "opens, q quits" + (f" · {CRASHED_LEGEND}" if crashed else "")))
        table.add_columns("started", "status", "events", "task")
        for i, summary in enumerate(self.journals):
            started = format_ts(summary.started, "%Y-%m-%d %H:%M")
            # Text cells, never str: a DataTable parses str cells as markup.
            table.add_row(Text(started), Text(summary.status), Text(describe_length(summary)),
                          styled_line(summary.task or summary.path.name, limit=100),
                          key=str(i))
        table.focus()

    def on_data_table_row_selected(self, message: DataTable.RowSelected) -> None:
        summary = self.journals[int(message.row_key.value or 0)]
        if summary.foreign is not None:  # not a journal: say what it is and how to view it
            self.app.notify(summary.foreign.message(clean_line(summary.path.name, 100)),
                            severity="warning", markup=False, timeout=12)
            return
        self.dismiss(summary.path)

    def action_close(self) -> None:
        """Leave without opening a journal."""
        self.dismiss(None)

    def action_resume(self) -> None:
        """Continue the selected agent run's conversation (the app closes for the cockpit)."""
        table = self.query_one(DataTable)
        if not self.journals or table.cursor_row is None:
            return
        request_resume(self.app, self.journals[table.cursor_row].path)


NO_RESUME = "resuming needs the command line here: `cockpit resume JOURNAL`"


def request_resume(app: App[object], path: Path) -> None:
    """Close `app` asking for the run of `path` to be resumed, or say why it cannot be (the
    app's `resume_check`; an app that was handed none cannot resume)."""
    check: ResumeCheck | None = getattr(app, "resume_check", None)
    problem = NO_RESUME if check is None else check(path)
    if problem is not None:
        app.notify(problem, severity="warning", markup=False, timeout=8)
        return
    app.exit(ResumeRequest(path))
