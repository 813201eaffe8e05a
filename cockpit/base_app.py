"""`ThemedApp`: what the live cockpit and the replay viewer share — themes, the user's settings
and keymap, the transcript's pager and raw-event inspector, the keys that work everywhere (the
side panel on a narrow terminal, scrolling a panel that outgrew its room), and the terminal
attention channel (`attention`: bell, notification, title; see `cockpit.notify`).

Both apps subclass it; neither imports the other. What differs between them is only where the
events behind a transcript item come from (a Session's history, or the journal): each says so
in `item_events`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

from textual import events, on, work
from textual.app import App, SystemCommand
from textual.css.query import NoMatches
from textual.driver import Driver
from textual.screen import Screen
from textual.theme import Theme

from cockpit.config import load_config, save_theme
from cockpit.keys import bindings, key_label, unknown_keymap_ids
from cockpit.notify import Attention, TerminalWriter
from cockpit.rewinds import Rewinder, RewindError
from cockpit.screens import PagerScreen, RewindScreen
from cockpit.terminate import on_terminate
from cockpit.themes import DEFAULT_THEME, VARIABLE_DEFAULTS, load_themes
from cockpit.widgets import (
    RunDisplay,
    Transcript,
    clean,
    clean_line,
    item_text,
    raw_events_text,
    scroll_panel_target,
)
from engine_adapter.events import BaseEvent
from engine_adapter.view import Item, ToolCallItem

__all__ = ["EventLookup", "ThemedApp", "item_title", "writer_driver"]

# The event with a given `seq`, or None when it cannot be had.
EventLookup = Callable[[int], BaseEvent | None]


def item_title(item: Item) -> str:
    """How the pager and the inspector name a transcript item."""
    if isinstance(item, ToolCallItem):
        return f"{clean_line(item.tool, 60)} call {clean_line(item.call_id, 60)}"
    return f"{item.kind} #{item.index}"


def writer_driver(base: type[Driver], writer: TerminalWriter) -> type[Driver]:
    """`base` (the driver class Textual chose), whose instances hand their public `write` to
    `writer` when created, and write nothing once `writer.gone` (the terminal hung up: a write
    fails there, and the driver's writer thread, dead of one, would block the next write for
    good, as would joining it at close; a restart on the hang-up's SIGCONT is skipped too)."""

    class WriterDriver(base):  # type: ignore[valid-type, misc]  # a class chosen at run time
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            writer.attach(self.write)

        def write(self, data: str) -> None:
            if not writer.gone:
                super().write(data)

        def flush(self) -> None:
            if not writer.gone:
                super().flush()

        def resume_application_mode(self) -> None:
            if not writer.gone:
                super().resume_application_mode()

        def stop_application_mode(self) -> None:
            if writer.gone:
                self.disable_input()  # (the input thread ends; the terminal needs no reset)
            else:
                super().stop_application_mode()

        def close(self) -> None:
            if not writer.gone:
                super().close()

    WriterDriver.__name__ = WriterDriver.__qualname__ = f"Writer{base.__name__}"
    return WriterDriver


class ThemedApp(App[Any]):
    """An app with the cockpit's themes registered, the chosen one applied and remembered, the
    user's keymap applied, and the transcript's `enter` pager and `i` inspector.

    `theme`: a theme name; else the one remembered in `config.toml`; else `cockpit-dark`.
    An unknown name raises `ValueError` listing the available ones. Broken theme files and a
    broken `config.toml` are reported as notifications once mounted, never fatal.
    """

    BINDINGS = bindings("general")

    def __init__(self, *, theme: str | None = None, remember_theme: bool = True) -> None:
        # Before Textual's __init__: it asks `get_driver_class`, which hands the writer over.
        self.terminal_writer = TerminalWriter()
        super().__init__()
        self.theme_errors: list[str] = []
        self.cockpit_themes = load_themes(self.theme_errors)
        for registered in self.cockpit_themes.values():
            self.register_theme(registered)
        self.config = load_config()
        self._remember_theme = remember_theme
        self._forget_terminate: Callable[[], None] = lambda: None
        self.signalled: str | None = None
        """Why a signal ended the app (SIGTERM, SIGHUP, SIGINT: `terminate`'s reasons), if one
        did: what runs it next must not open another screen on a terminal that is gone."""
        if theme is not None and theme not in self.available_themes:
            names = ", ".join(sorted(self.cockpit_themes))
            raise ValueError(f"unknown theme {theme!r}; available: {names}")
        chosen = theme or self.config.theme
        if chosen not in self.available_themes:
            if chosen:
                self.theme_errors.append(f"remembered theme {chosen!r} is not installed")
            chosen = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
        self.theme = chosen
        self.attention = Attention(self.config.notify, bell=lambda: self.bell(),
                                   write=self.terminal_writer)

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver, handing its public `write` to `terminal_writer` (the way escape
        sequences for the bell, notifications and the title reach the terminal)."""
        return writer_driver(super().get_driver_class(), self.terminal_writer)

    def on_mount(self) -> None:
        if self.config.keymap:
            self.set_keymap(self.config.keymap)
        problems = [*self.theme_errors, *([self.config.error] if self.config.error else []),
                    *(f"config.toml: {problem}" for problem in self.config.problems),
                    *unknown_keymap_ids(self.config.keymap)]
        for problem in problems:
            self.notify(clean(problem, 500), severity="warning", markup=False)
        # Subscribing needs a running app; the initial choice above is not a switch to save.
        self.theme_changed_signal.subscribe(self, self._theme_switched)
        self._forget_terminate = on_terminate(asyncio.get_running_loop(), self._signalled,
                                              gone=self.terminal_writer.hang_up, interrupt=True)

    def _signalled(self, reason: str) -> None:
        self.signalled = reason
        self.terminated(reason)

    def terminated(self, reason: str) -> None:
        """SIGTERM, SIGHUP or SIGINT (`reason` says which): exit, so the terminal is restored rather
        than left in the app's screen mode. The live cockpit cancels its run first."""
        self.exit()

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """Defaults for the cockpit's own variables, so any Textual theme works too."""
        return dict(VARIABLE_DEFAULTS)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """The command palette: Textual's commands plus one entry per cockpit theme."""
        yield from super().get_system_commands(screen)
        for name in sorted(self.cockpit_themes):
            yield SystemCommand(f"Theme: {name}", f"Switch to the {name} theme (remembered)",
                                lambda name=name: setattr(self, "theme", name))

    def _theme_switched(self, theme: Theme) -> None:
        if self._remember_theme:
            error = save_theme(theme.name)
            if error:
                self.notify(error, severity="warning")
        self.refresh_theme()

    def refresh_theme(self) -> None:
        """Redraw what caches colours (each app knows its own widgets)."""

    # Focus reports and the keys that work everywhere ----------------------------------------
    def on_app_focus(self, event: events.AppFocus) -> None:
        """The terminal reported that the window has focus (alerts can be skipped)."""
        self.attention.focus(True)

    def on_app_blur(self, event: events.AppBlur) -> None:
        """The terminal reported that the window lost focus (alerts go out)."""
        self.attention.focus(False)

    def on_unmount(self) -> None:
        self._forget_terminate()
        self.attention.close()

    def _run_display(self) -> RunDisplay | None:
        # `query_one` (cached by Textual while the screen's children stay the same), not
        # `query`: the side-panel key's `check_action` asks on every bindings refresh, and a
        # walk of the screen's whole tree was ~0.5 ms of each key's footer (issue 29).
        try:
            return self.screen.query_one(RunDisplay)
        except NoMatches:
            return None

    def action_toggle_side_panel(self) -> None:
        """Show verification and grants over the transcript (a narrow terminal), or hide them."""
        display = self._run_display()
        if display is not None:
            display.toggle_side()

    def action_scroll_panel(self, direction: int) -> None:
        """Scroll the approval bar or the end panel (whichever outgrew its room)."""
        box = scroll_panel_target(self.screen)
        if box is not None:
            box.scroll_page(direction)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The side-panel key only on a narrow terminal; the panel keys only when a panel has
        more than it shows."""
        if action == "toggle_side_panel":
            display = self._run_display()
            return display is not None and display.narrow
        if action == "scroll_panel":
            return scroll_panel_target(self.screen) is not None
        return True

    # The pager and the inspector -------------------------------------------------------------
    def item_events(self, item: Item) -> EventLookup | None:
        """Where the events behind `item` can be read, by `seq` (None: nowhere)."""
        return None

    def raw_events(self, item: Item) -> str:
        """The events behind `item`, as JSON (what the inspector shows)."""
        lookup = self.item_events(item)
        if lookup is None:
            return "(the events behind this item are not available here)"
        return raw_events_text(item, lookup)

    @on(Transcript.OpenPager)
    def _open_pager(self, message: Transcript.OpenPager) -> None:
        item = message.item
        diff = item.diff if isinstance(item, ToolCallItem) else None
        self.push_screen(PagerScreen(item_title(item), item_text(item), diff=diff))

    @on(Transcript.Inspect)
    def _inspect(self, message: Transcript.Inspect) -> None:
        item = message.item
        self.push_screen(PagerScreen(f"raw events behind {item_title(item)}",
                                     self.raw_events(item)))

    # Rewinding the workspace to a turn's start (the rewind key on a turn's header) ------------
    def rewinder(self) -> Rewinder | None:
        """Where this app's rewinds go (None: it offers none)."""
        return None

    def rewound(self, task: int, turn: int) -> str:
        """A rewind to task `task`'s turn `turn` was done and recorded: show it; returns what
        the notice adds (the live cockpit: what becomes of the conversation)."""
        return ""

    @on(Transcript.Rewind)
    def _rewind_asked(self, message: Transcript.Rewind) -> None:
        item = message.item
        if item.turn is not None:
            self._ask_rewind(item.task, item.turn)

    @work(group="rewind", exclusive=True, exit_on_error=False)
    async def _ask_rewind(self, task: int, turn: int) -> None:
        """Work out the rewind off the loop, show it, ask, and (confirmed) do it off the loop."""
        rewinder = self.rewinder()
        if rewinder is None:
            return
        why = rewinder.refusal(task)
        where = rewinder.where(task, turn)
        if why is not None:
            self.notify(f"cannot rewind to {where}: {why}", severity="warning", markup=False,
                        timeout=6)
            return
        screen = RewindScreen(where, rewind_key=key_label(self, "rewind"))
        answered: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

        def answer(rewind: bool | None) -> None:
            if not answered.done():
                answered.set_result(bool(rewind))

        self.push_screen(screen, answer)
        try:
            shown = await asyncio.to_thread(rewinder.preview, task, turn)
        except RewindError as exc:
            if not answered.done():
                screen.dismiss(False)
            self.notify(f"cannot rewind to {where}: {clean_line(str(exc), 300)}",
                        severity="error", markup=False, timeout=10)
            return
        if not answered.done():  # (escape while it was worked out: nothing to show)
            screen.show(shown.text, diff=shown.diff, empty=shown.empty)
        if not await answered:
            if not shown.empty:
                self.notify("nothing was rewound", timeout=3)
            return
        why = rewinder.refusal(task)  # (a task may have started meanwhile)
        if why is not None:
            self.notify(f"cannot rewind to {where}: {why}", severity="warning", markup=False)
            return
        try:
            outcome = await asyncio.to_thread(rewinder.rewind, task, turn)
        except RewindError as exc:
            self.notify(f"the rewind to {where} failed: {clean_line(str(exc), 300)}",
                        severity="error", markup=False, timeout=10)
            return
        plan = outcome.plan
        said = (f"rewound to {where}: {len(plan.restore)} restored, {len(plan.remove)} "
                f"removed, {len(plan.left_alone)} left alone")
        if outcome.failed:
            said += f", {len(outcome.failed)} failed (see the transcript)"
        more = self.rewound(task, turn)
        self.notify(said + (f"; {more}" if more else ""),
                    severity="warning" if outcome.failed else "information", markup=False,
                    timeout=10)
