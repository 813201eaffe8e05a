"""The grants screen (`g`): every grant and deny rule in force, with its scope and last use.

`delete` revokes the selected one: a session grant leaves the session, a saved one its file (in
a worker thread: a file write never holds the screen). A deny rule is removed only on a second
`delete` (the first says what it would stop blocking): removing one lets through what it
stopped, so one stray key must not do it; a grant goes at once (removing one only asks more).
Problems with the saved files (a broken file, a grant the current rules ignore, saved grants
off for this run) are listed below. The screen reads and revokes through the Session's
`ApprovalGate`, nothing else; in a client attached to a host's run, through its `RemoteGate`
(the same names): there the grants live in the host, so the screen also lists them again with
the gate's `fetch()` when it opens, in a worker thread (the host may be behind ssh), and a
revoke is the host's.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from cockpit.keys import bindings, key_label
from cockpit.styles import palette_for
from cockpit.widgets import clean_line, project_label
from engine_adapter.grants import ApprovalGate, GrantEntry, GrantFileError
from engine_adapter.text import plural

__all__ = ["GrantsScreen"]

_COLUMNS = ("scope", "kind", "tool", "prefix", "max tier", "last used", "id", "note")


def _when(value: datetime | None) -> str:
    return value.astimezone().strftime("%Y-%m-%d %H:%M") if value else "never"


class GrantsScreen(Screen[None]):
    """Lists `gate.entries()`; `delete` revokes the selected entry; `changed()` is called
    after each revoke (the app redraws its grants panel)."""

    DEFAULT_CSS = """
    GrantsScreen #grants-title { height: auto; background: $panel; padding: 0 1; }
    GrantsScreen #grants-table { height: 1fr; }
    GrantsScreen #grants-notes { height: auto; max-height: 40%; padding: 0 1; color: $warning; }
    GrantsScreen #grants-confirm { height: auto; padding: 0 1; background: $error 30%; }
    """

    BINDINGS = bindings("grants")

    def __init__(self, gate: ApprovalGate, *, changed: Callable[[], Any] | None = None) -> None:
        super().__init__()
        self.gate = gate
        self._changed = changed
        self.entries: list[GrantEntry] = []
        self.confirming: str | None = None  # the deny rule a second `delete` would remove
        # A gate whose grants live elsewhere (a host's) lists them again on `fetch()`.
        self._fetch: Callable[[], Any] | None = getattr(gate, "fetch", None)
        self.remote: str | None = "asking the host for its grants…" if self._fetch else None

    def compose(self) -> ComposeResult:
        yield Static("", id="grants-title")
        table: DataTable[Text] = DataTable(id="grants-table", cursor_type="row",
                                           zebra_stripes=True)
        yield table
        yield Static("", id="grants-notes")
        yield Static("", id="grants-confirm")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for column in _COLUMNS:
            table.add_column(column, key=column)
        self.refresh_entries()
        table.focus()
        self._ask(None)
        if self._fetch is not None:
            self._list_again(self._fetch)

    @work(thread=True, group="fetch", exclusive=True)
    def _list_again(self, fetch: Callable[[], Any]) -> None:
        try:
            fetch()
        except GrantFileError as exc:
            self.app.call_from_thread(self._listed, clean_line(str(exc), 400))
            return
        self.app.call_from_thread(self._listed, None)

    def _listed(self, problem: str | None) -> None:
        """The host answered (or could not): show its list, or say why not."""
        self.remote = problem
        if problem is not None:
            self.notify(problem, severity="error", markup=False)
        self.refresh_entries()
        if problem is None and self._changed is not None:
            self._changed()  # (the app's grants panel shows the host's list too)

    def refresh_entries(self) -> None:
        """Read the entries in force again and redraw."""
        palette = palette_for(self.app)
        self.entries = self.gate.entries()
        table: DataTable[Text] = self.query_one(DataTable)
        row = table.cursor_row
        table.clear()
        for entry in self.entries:
            deny = entry.kind == "deny"
            table.add_row(
                Text(entry.scope, palette.warning if entry.scope != "session" else palette.text),
                Text(entry.kind, palette.error if deny else palette.success),
                Text(clean_line(entry.tool, 40)),
                Text(clean_line(entry.prefix, 80), palette.accent),
                Text(str(entry.max_tier) if entry.max_tier is not None else "-"),
                Text(_when(entry.last_used), palette.dim),
                Text(entry.key, palette.dim),
                Text(clean_line(entry.note, 80), palette.dim),
                key=entry.key)
        if self.entries:
            table.move_cursor(row=min(row, len(self.entries) - 1))
        self._show_title()

    def _show_title(self) -> None:
        palette = palette_for(self.app)
        title = Text()
        title.append("Grants in force", "bold")
        denies = sum(1 for e in self.entries if e.kind == "deny")
        grants = len(self.entries) - denies
        counts = [plural(grants, "grant")] + ([plural(denies, "deny rule")] if denies else [])
        title.append("  " + ", ".join(counts), palette.dim)
        store = self.gate.store
        where = Text("\n", palette.dim)
        if self.remote is not None:
            where.append(self.remote)
        elif store is None:
            where.append("saved grants: off (this cockpit was given no grant store)")
        else:
            folder = project_label(str(store.directory)) or str(store.directory)
            project = project_label(store.project) or "none"
            where.append(f"saved in {clean_line(folder, 200)} · project "
                         f"{clean_line(project, 200)}")
        title.append_text(where)
        revoke = key_label(self.app, "revoke")
        title.append(f"\n{revoke} revokes the selected line · session grants end with the "
                     "session, saved ones (project, user) last until revoked", palette.dim)
        self.query_one("#grants-title", Static).update(title)
        notes = list(self.gate.problems) + (store.problems if store is not None else [])
        shown = self.query_one("#grants-notes", Static)
        shown.display = bool(notes)
        shown.update(Text("\n".join(clean_line(n, 400) for n in notes[-12:])))

    def selected(self) -> GrantEntry | None:
        """The entry under the cursor."""
        table = self.query_one(DataTable)
        if not self.entries or not 0 <= table.cursor_row < len(self.entries):
            return None
        return self.entries[table.cursor_row]

    def action_revoke(self) -> None:
        """Revoke the selected grant; a deny rule on the second press (the first asks)."""
        entry = self.selected()
        if entry is None:
            return
        if entry.kind == "deny" and self.confirming != entry.key:
            self._ask(entry)
            return
        self._ask(None)
        self._revoke(entry)

    def _ask(self, entry: GrantEntry | None) -> None:
        """Show (or, None, take away) the question before a deny rule is removed."""
        self.confirming = entry.key if entry is not None else None
        line = self.query_one("#grants-confirm", Static)
        line.display = entry is not None
        if entry is None:
            line.update("")
            return
        revoke = key_label(self.app, "revoke")
        line.update(Text(
            f"Remove the {entry.scope} deny rule {clean_line(entry.tool, 40)} "
            f"`{clean_line(entry.prefix, 80)} …`? It then stops blocking those calls. "
            f"{revoke} again removes it; any other line keeps it."))

    def on_data_table_row_highlighted(self, message: DataTable.RowHighlighted) -> None:
        """Moving to another line keeps the deny rule a `delete` asked about."""
        if self.confirming is not None and message.row_key.value != self.confirming:
            self._ask(None)

    @work(thread=True, group="revoke", exclusive=False)
    def _revoke(self, entry: GrantEntry) -> None:
        try:
            gone = self.gate.revoke(entry)
        except GrantFileError as exc:
            self.app.call_from_thread(self.notify, clean_line(str(exc), 400),
                                      severity="error", markup=False)
            return
        self.app.call_from_thread(self._revoked, gone)

    def _revoked(self, gone: GrantEntry) -> None:
        what = "deny rule" if gone.kind == "deny" else "grant"
        self.notify(f"revoked {gone.scope} {what}: {clean_line(gone.tool, 40)} "
                    f"`{clean_line(gone.prefix, 80)}`", markup=False)
        self.refresh_entries()
        if self._changed is not None:
            self._changed()

    def action_close(self) -> None:
        """Close the grants screen."""
        self.dismiss(None)
