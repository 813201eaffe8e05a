"""The `?` help: generated from `cockpit.keys.KEYS`, with the user's keymap applied, so it
lists exactly the keys the footer and the bindings use — Textual's own (tab, ctrl+p) included,
each key once (see `help_rows`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from cockpit.keys import bindings, help_rows
from cockpit.widgets import clean_line
from engine_adapter.view import CommandView, command_token

__all__ = ["HelpScreen", "command_table", "help_table"]


def command_table(commands: Sequence[CommandView]) -> Table:
    """The slash commands, one row each (an agent's names and words are untrusted: cleaned)."""
    table = Table(box=None, show_header=False, padding=(0, 2), expand=False)
    table.add_column("command", style="bold", no_wrap=True)
    table.add_column("what it does")
    for command in commands:
        hint = f" {clean_line(command.hint, 30)}" if command.hint else ""
        table.add_row(Text(clean_line(command_token(command.name), 40) + hint),
                      Text(clean_line(command.description, 200)))
    return table


def help_table(scopes: Iterable[str] | None = None,
               keymap: Mapping[str, str] | None = None, app: object = None) -> Table:
    """The key table: one row a key, grouped by where it applies; keys shown as `app` shows
    them in its footer."""
    table = Table(box=None, show_header=False, padding=(0, 2), expand=False)
    table.add_column("key", style="bold", no_wrap=True)
    table.add_column("what it does")
    section = None
    for title, key, what in help_rows(scopes, keymap, app):
        if title != section:
            if section is not None:
                table.add_row("", "")
            table.add_row(Text(title, style="bold underline"), "")
            section = title
        table.add_row(Text(key), Text(what))
    return table


class HelpScreen(ModalScreen[None]):
    """Every key, from the same table the bindings come from."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 90;
        max-width: 95%;
        height: auto;
        max-height: 90%;
        background: $panel;
        border: round $primary;
        padding: 1 2;
    }
    """

    BINDINGS = bindings("pager")  # its own keys: close (esc, q)

    def __init__(self, scopes: Iterable[str] | None = None,
                 keymap: Mapping[str, str] | None = None,
                 commands: Sequence[CommandView] = ()) -> None:
        super().__init__()
        self._scopes = list(scopes) if scopes is not None else None
        self._keymap = dict(keymap or {})
        self._commands = tuple(commands)  # the message box's slash commands (live only)

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(Text("Keys", style="bold"))
            yield Static(help_table(self._scopes, self._keymap, self.app))
            if self._commands:
                yield Static(Text("\nCommands (type in the message box)", style="bold"))
                yield Static(command_table(self._commands))
        yield Footer()

    def action_close(self) -> None:
        """Close the help."""
        self.dismiss(None)
